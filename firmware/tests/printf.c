// SPDX-License-Identifier: MIT
// The BSP's printf against the C library's: built as firmware (with FP, for %f) and, with
// -DDVP_HOST, for the host, where glibc's printf runs the same calls. The test compares the two
// outputs line by line (tests/firmware-output.sh). What the C standard leaves to the library
// (unknown conversions) the firmware checks itself, and exits non-zero naming what failed.
#ifdef DVP_HOST
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#else
#include "bsp.h"
#endif

// The odd flag combinations are the point here (the '0' flag with '-', ' ' with '+').
#pragma GCC diagnostic ignored "-Wformat"

#define LLONG_MIN_ (-0x7fffffffffffffffll - 1)

static void integers(void) {
  printf("d i u: [%d] [%i] [%u] [%d] [%u]\n", 42, -42, 42u, 0, 4294967295u);
  printf("x X o: [%x] [%X] [%o] [%#x] [%#X] [%#o] [%#x] [%#o]\n", 0xbeefu, 0xbeefu, 8u, 255u, 255u, 8u, 0u, 0u);
  printf("width: [%5d] [%-5d] [%05d] [%-05d] [%5u] [%08x]\n", 42, 42, -42, 42, 7u, 0xabcu);
  printf("flags: [%+d] [%+d] [% d] [% d] [%+ d] [%+5d] [%-+5d] [% 05d]\n", 5, -5, 5, -5, 5, 5, 5, 5);
  printf("precision: [%.3d] [%.3d] [%8.3d] [%-8.3d] [%08.3d] [%.0d] [%.0x] [%5.0d] [%#.0o]\n", 7, -7, 7, 7, 7, 0, 0u, 0,
         0u);
  printf("alt with precision: [%#.5x] [%#10.5x] [%#-10x] [%#010x] [%#.3o]\n", 0x1fu, 0x1fu, 0x1fu, 0x1fu, 8u);
  printf("star: [%*d] [%-*d] [%*d] [%.*d] [%.*d] [%*.*d]\n", 6, 1, 6, 2, -6, 3, 4, 5, -1, 6, 7, 3, 8);
  printf("hh h: [%hhd] [%hhu] [%hhx] [%hd] [%hu] [%hx]\n", 300, 300, -1, 70000, 70000, -1);
  printf("l ll: [%ld] [%lu] [%lx] [%lld] [%llu] [%llX]\n", -1234567890123l, 18446744073709551615ul,
         0xfedcba9876543210ul, LLONG_MIN_, 18446744073709551615ull, 0xfedcba9876543210ull);
  printf("z j t: [%zu] [%zx] [%zd] [%jd] [%ju] [%td] [%tx]\n", (size_t)123456789012, (size_t)0xffff, (ptrdiff_t)-5,
         (intmax_t)-9000000000, (uintmax_t)9000000000u, (ptrdiff_t)-77, (ptrdiff_t)0x40);
}

static void text(void) {
  printf("c: [%c] [%3c] [%-3c] [%c]\n", 'a', 'b', 'c', 0x7e);
  printf("s: [%s] [%8s] [%-8s] [%.3s] [%8.3s] [%-8.3s] [%.0s] [%.*s]\n", "abcde", "abc", "abc", "abcde", "abcde",
         "abcde", "abcde", 2, "abcde");
  const char* volatile none = NULL;  // unknown to the compiler, which would warn
  printf("null: [%s] [%10s] [%-8s|]\n", none, none, none);
  printf("p: [%p] [%p] [%20p] [%-20p|]\n", (void*)0x80001234ul, (void*)0, (void*)0x10ul, (void*)0x10ul);
  printf("percent: [%%] [100%%] [%d%%]\n", 50);
}

#ifdef __ARM_FP
#define HAVE_FP 1
#elif defined(DVP_HOST)
#define HAVE_FP 1
#endif
#ifdef HAVE_FP
static void floats(void) {
  printf("f: [%f] [%f] [%f] [%f] [%f]\n", 3.14159265, -2.5, 0.0, -0.0, 1e-7);
  printf("f precision: [%.3f] [%.0f] [%.0f] [%.0f] [%.0f] [%.1f] [%.2f] [%.10f]\n", 3.14159265, 2.5, 3.5, -0.5, 0.4,
         0.25, 1.005, 1.0 / 3);
  printf("f width flags: [%10.2f] [%-10.2f] [%010.2f] [%+.2f] [% .2f] [%#.0f] [%*.*f]\n", 123.456, 123.456, -123.456,
         1.5, 1.5, 7.0, 9, 3, 2.71828);
  printf("f large: [%f] [%.1f] [%.0f] [%f]\n", 1e10, 4294967296.75, 9007199254740993.0, 1e20);
  printf("f carry: [%.2f] [%.0f] [%.3f] [%F]\n", 9.999, 99.5, 0.9995, 12.5);
  printf("f special: [%f] [%F] [%f] [%5f] [%-6f|] [%+f]\n", __builtin_inf(), -__builtin_inf(), __builtin_nan(""),
         __builtin_inf(), __builtin_inf(), __builtin_inf());
}
#endif

static int snprintf_checked(char* buf, size_t size, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(buf, size, fmt, ap);
  va_end(ap);
  return n;
}

// vsnprintf: returns the whole length, writes at most size - 1 characters and a terminator.
static void bounded(void) {
  char buf[16];
  memset(buf, '#', sizeof buf);
  int n = snprintf_checked(buf, 8, "%s-%d", "hello world", 12345);
  printf("snprintf 8: %d [%s] [%c]\n", n, buf, buf[8]);
  memset(buf, '#', sizeof buf);
  n = snprintf_checked(buf, 1, "%d", 123);
  printf("snprintf 1: %d [%s] [%c]\n", n, buf, buf[1]);
  memset(buf, '#', sizeof buf);
  n = snprintf_checked(buf, 0, "%d", 123);
  printf("snprintf 0: %d [%c]\n", n, buf[0]);
  n = snprintf_checked(NULL, 0, "%0*d|%s", 300, 1, "tail");
  printf("snprintf NULL: %d\n", n);
  n = snprintf_checked(buf, sizeof buf, "%-4s|%4s", "ab", "cd");
  printf("snprintf fits: %d [%s]\n", n, buf);
}

// One line of 1100 characters: printf must not cut it.
static void long_line(void) {
  char chunk[101];
  for (int i = 0; i < 100; ++i) chunk[i] = (char)('a' + i % 26);
  chunk[100] = 0;
  const int n = printf("long: %s%s%s%s%s %0*d|%-300s|\n", chunk, chunk, chunk, chunk, chunk, 280, 7, "end");
  printf("long line length %d\n", n);
}

#ifndef DVP_HOST
// What this printf does where the C standard leaves it open: an unknown conversion prints as
// written and takes no argument, not even its '*'.
static int check(const char* want, int want_n, const char* fmt, ...) {
  char buf[64];
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n == want_n && !memcmp(buf, want, strlen(want) + 1)) return 0;
  printf("printf FAILED: format \"%s\" gave \"%s\" (%d), expected \"%s\" (%d)\n", fmt, buf, n, want, want_n);
  return 1;
}

static int unknown_conversions(void) {
  const char* formats[] = {"%y|%d", "%-08.3y|%d", "%*y|%d", "abc%", "%Lf|%d", "%lly|%d"};
  int bad = check("%y|5", 4, formats[0], 5);
  bad += check("%-08.3y|5", 9, formats[1], 5);
  bad += check("%*y|9", 5, formats[2], 9);
  bad += check("abc%", 4, formats[3]);
  bad += check("%Lf|3", 5, formats[4], 3);
  bad += check("%lly|4", 6, formats[5], 4);
#ifndef __ARM_FP
  const char* fixed = "%f|%d";  // no FP registers: %f is unknown
  bad += check("%f|6", 4, fixed, 6);
#endif
  return bad;
}
#endif

int main(void) {
  integers();
  text();
#ifdef HAVE_FP
  floats();
#endif
  bounded();
  long_line();
#ifndef DVP_HOST
  if (unknown_conversions()) return 1;
#endif
  return 0;
}
