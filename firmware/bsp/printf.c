// SPDX-License-Identifier: MIT
// printf and friends for the firmware: the C conversions d i u o x X c s p % (and f F when the
// firmware is built with FP/SIMD), flags - + space 0 #, width and precision (numbers or *),
// length modifiers hh h l ll z j t. printf streams to this core's UART, so a line of any length
// comes out whole. A conversion it does not know is printed as written and takes no argument.
#include <stddef.h>

#include "bsp.h"

// Where formatted characters go: a buffer (vsnprintf) or the UART (vprintf). `n` counts every
// character produced, written or not: vsnprintf returns it.
struct sink {
  char* buf;
  size_t size;
  size_t n;
  int uart;
};

static void put(struct sink* s, char c) {
  if (s->uart)
    reg_write(SOC_UART_BASE(core_id()) + UART_DATA, (uint8_t)c);
  else if (s->n + 1 < s->size)
    s->buf[s->n] = c;
  ++s->n;
}

static void put_n(struct sink* s, const char* p, size_t len) {
  while (len--) put(s, *p++);
}

static void put_fill(struct sink* s, char c, size_t count) {
  while (count--) put(s, c);
}

// One conversion's parsed specification.
struct spec {
  int left, plus, space, zero, alt;
  int width;      // 0: none
  int precision;  // -1: none
  char length;    // 0, 'H' (hh), 'h', 'l', 'L' (ll), 'z', 'j', 't'
};

// A field as the C standard lays it out: [spaces] prefix [zeros] body [zeros] [tail] [zeros]
// [spaces]. The zeros before the body come from an integer's precision or the '0' flag; the
// others from %f's digits past what the body and the tail hold.
struct field {
  const char* prefix;
  size_t zeros;  // before the body
  const char* body;
  size_t body_len;
  size_t mid_zeros;  // after the body
  const char* tail;
  size_t tail_len;
  size_t tail_zeros;
};

static void put_field(struct sink* s, const struct spec* sp, struct field f) {
  size_t prefix_len = 0;
  while (f.prefix[prefix_len]) ++prefix_len;
  size_t len = prefix_len + f.zeros + f.body_len + f.mid_zeros + f.tail_len + f.tail_zeros;
  const size_t width = (size_t)sp->width;
  // The '0' flag pads with zeros between prefix and body (ignored when left-justified).
  if (sp->zero && !sp->left && width > len) f.zeros += width - len, len = width;
  if (!sp->left && width > len) put_fill(s, ' ', width - len);
  put_n(s, f.prefix, prefix_len);
  put_fill(s, '0', f.zeros);
  put_n(s, f.body, f.body_len);
  put_fill(s, '0', f.mid_zeros);
  put_n(s, f.tail, f.tail_len);
  put_fill(s, '0', f.tail_zeros);
  if (sp->left && width > len) put_fill(s, ' ', width - len);
}

// A field that is one piece of text.
static struct field text(const char* prefix, const char* body, size_t len) {
  const struct field f = {prefix, 0, body, len, 0, "", 0, 0};
  return f;
}

// Digits of v in `base`, written backwards ending before `end`; returns the first digit.
static char* digits(char* end, unsigned long long v, unsigned base, int upper) {
  char* p = end;
  const char* set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  do {
    *--p = set[v % base];
    v /= base;
  } while (v);
  return p;
}

static void put_integer(struct sink* s, const struct spec* in, char conv, unsigned long long v, int negative) {
  struct spec sp = *in;
  const unsigned base = conv == 'o' ? 8 : (conv == 'x' || conv == 'X' || conv == 'p') ? 16 : 10;
  char tmp[24];
  char* end = tmp + sizeof tmp;
  char* first = digits(end, v, base, conv == 'X');
  size_t len = (size_t)(end - first);
  if (sp.precision == 0 && v == 0) len = 0;  // "%.0d" of 0 prints no digits
  size_t zeros = sp.precision > (int)len ? (size_t)sp.precision - len : 0;
  if (sp.precision >= 0) sp.zero = 0;  // a precision turns the '0' flag off
  // '#': octal's first digit is a 0; hex of a non-zero value gets 0x.
  if (sp.alt && conv == 'o' && zeros == 0 && (len == 0 || *first != '0')) zeros = 1;
  const char* prefix = "";
  if (negative)
    prefix = "-";
  else if (conv == 'd' || conv == 'i')
    prefix = sp.plus ? "+" : sp.space ? " " : "";
  else if ((sp.alt && v && conv == 'x') || conv == 'p')
    prefix = "0x";
  else if (sp.alt && v && conv == 'X')
    prefix = "0X";
  struct field f = text(prefix, first, len);
  f.zeros = zeros;
  put_field(s, &sp, f);
}

static void put_string(struct sink* s, const struct spec* in, const char* str) {
  struct spec sp = *in;
  sp.zero = 0;
  if (!str) str = sp.precision < 0 || sp.precision >= 6 ? "(null)" : "";
  size_t len = 0;  // at most `precision` characters, and none read past them
  while ((sp.precision < 0 || len < (size_t)sp.precision) && str[len]) ++len;
  put_field(s, &sp, text("", str, len));
}

#ifdef __ARM_FP
// %f: the integer part exact below 2^64, the fraction rounded to `precision` digits (half to
// even on the scaled value; digits past the 18th are zeros). Larger values print their first
// 20 digits, then zeros.
static void put_fixed(struct sink* s, const struct spec* in, char conv, double v) {
  struct spec sp = *in;
  const int negative = __builtin_signbit(v) != 0;  // also -0.0 and -nan
  if (negative) v = -v;
  const char* prefix = negative ? "-" : sp.plus ? "+" : sp.space ? " " : "";
  if (v != v || v - v != 0) {  // NaN, or infinity
    sp.zero = 0;
    const int upper = conv == 'F';
    const char* name = v != v ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
    put_field(s, &sp, text(prefix, name, 3));
    return;
  }
  const int precision = sp.precision < 0 ? 6 : sp.precision;
  const int frac_digits = precision > 18 ? 18 : precision;
  size_t int_zeros = 0;  // decimal places the integer part was scaled down by
  while (v >= 18446744073709551616.0) v /= 10, ++int_zeros;
  unsigned long long ip = (unsigned long long)v;
  double scale = 1;
  for (int i = 0; i < frac_digits; ++i) scale *= 10;
  const double scaled = (v - (double)ip) * scale;
  unsigned long long frac = (unsigned long long)scaled;
  const double rest = scaled - (double)frac;
  const int odd = frac_digits ? (int)(frac & 1) : (int)(ip & 1);  // the last digit printed
  if (rest > 0.5 || (rest == 0.5 && odd)) ++frac;
  if ((double)frac >= scale) frac = 0, ++ip;  // rounding carried into the integer part
  char int_tmp[24], frac_tmp[24];
  char* int_end = int_tmp + sizeof int_tmp;
  char* first = digits(int_end, ip, 10, 0);
  char* frac_end = frac_tmp + sizeof frac_tmp;
  char* p = frac_end;
  if (precision > 0 || sp.alt) {
    for (int i = 0; i < frac_digits; ++i) *--p = (char)('0' + frac % 10), frac /= 10;
    *--p = '.';
  }
  struct field f = text(prefix, first, (size_t)(int_end - first));
  f.mid_zeros = int_zeros;
  f.tail = p, f.tail_len = (size_t)(frac_end - p);
  f.tail_zeros = (size_t)(precision - frac_digits);
  put_field(s, &sp, f);
}
#endif

// A width or precision written in the format; past NUMBER_MAX it stays there (no int overflow).
#define NUMBER_MAX 100000000
static int number(const char** f) {
  int v = 0;
  for (; **f >= '0' && **f <= '9'; ++*f)
    if (v < NUMBER_MAX) v = v * 10 + (**f - '0');
  return v;
}

// Parses flags, width, precision and length after a '%'; returns the conversion character's
// position.
static const char* parse_spec(const char* f, struct spec* sp, va_list* ap) {
  for (;; ++f) {
    if (*f == '-')
      sp->left = 1;
    else if (*f == '+')
      sp->plus = 1;
    else if (*f == ' ')
      sp->space = 1;
    else if (*f == '0')
      sp->zero = 1;
    else if (*f == '#')
      sp->alt = 1;
    else
      break;
  }
  if (*f == '*') {
    const int w = va_arg(*ap, int);
    if (w < 0) sp->left = 1;  // a negative width is the '-' flag and its magnitude
    sp->width = w < 0 ? (w < -NUMBER_MAX ? NUMBER_MAX : -w) : w;
    ++f;
  } else {
    sp->width = number(&f);
  }
  if (*f == '.') {
    ++f;
    if (*f == '*') {
      const int p = va_arg(*ap, int);
      sp->precision = p < 0 ? -1 : p;  // a negative precision is taken as none
      ++f;
    } else {
      sp->precision = number(&f);
    }
  }
  if (*f == 'h')
    sp->length = f[1] == 'h' ? (++f, 'H') : 'h', ++f;
  else if (*f == 'l')
    sp->length = f[1] == 'l' ? (++f, 'L') : 'l', ++f;
  else if (*f == 'z' || *f == 'j' || *f == 't')
    sp->length = *f++;
  return f;
}

// The argument of an integer conversion, converted to its length's type.
static unsigned long long int_arg(va_list* ap, char length, int is_signed, int* negative) {
  long long v;
  if (length == 'L' || length == 'l' || length == 'z' || length == 'j' || length == 't')
    v = va_arg(*ap, long long);  // all 64 bits on AArch64
  else
    v = va_arg(*ap, int);
  if (!is_signed) {
    *negative = 0;
    if (length == 'H') return (unsigned char)v;
    if (length == 'h') return (unsigned short)v;
    if (length == 0) return (unsigned)v;
    return (unsigned long long)v;
  }
  if (length == 'H') v = (signed char)v;
  if (length == 'h') v = (short)v;
  *negative = v < 0;
  return v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
}

// One conversion; returns 0 when `conv` is not one this printf knows (nothing consumed).
static int convert(struct sink* s, const struct spec* sp, char conv, va_list* ap) {
  int negative = 0;
  switch (conv) {
    case 'd':
    case 'i':
    case 'u':
    case 'o':
    case 'x':
    case 'X': {
      const unsigned long long v = int_arg(ap, sp->length, conv == 'd' || conv == 'i', &negative);
      put_integer(s, sp, conv, v, negative);
      return 1;
    }
    case 'p': {
      const void* p = va_arg(*ap, void*);
      if (!p) {
        struct spec none = *sp;
        none.precision = -1;
        put_string(s, &none, "(nil)");
      } else {
        put_integer(s, sp, 'p', (uintptr_t)p, 0);
      }
      return 1;
    }
    case 'c': {
      const char c = (char)va_arg(*ap, int);
      struct spec one = *sp;
      one.precision = -1, one.zero = 0;
      put_field(s, &one, text("", &c, 1));
      return 1;
    }
    case 's': put_string(s, sp, va_arg(*ap, const char*)); return 1;
#ifdef __ARM_FP
    case 'f':
    case 'F': put_fixed(s, sp, conv, va_arg(*ap, double)); return 1;
#endif
  }
  return 0;
}

static void format(struct sink* s, const char* f, va_list ap) {
  va_list args;
  va_copy(args, ap);
  while (*f) {
    if (*f != '%') {
      put(s, *f++);
      continue;
    }
    const char* start = f++;
    if (*f == '%') {
      put(s, '%');
      ++f;
      continue;
    }
    struct spec sp = {0, 0, 0, 0, 0, 0, -1, 0};
    va_list before;  // an unknown conversion takes no argument, not even its '*'s
    va_copy(before, args);
    f = parse_spec(f, &sp, &args);
    if (*f && convert(s, &sp, *f, &args)) {
      va_end(before);
      ++f;
      continue;
    }
    // Unknown (or a '%' at the end): the specification as written.
    va_end(args);
    va_copy(args, before);
    va_end(before);
    if (*f) ++f;
    put_n(s, start, (size_t)(f - start));
  }
  va_end(args);
}

int vsnprintf(char* out, size_t size, const char* fmt, va_list ap) {
  struct sink s = {out, size, 0, 0};
  format(&s, fmt, ap);
  if (size) out[s.n < size ? s.n : size - 1] = 0;
  return s.n > 0x7fffffff ? -1 : (int)s.n;
}

int snprintf(char* out, size_t size, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(out, size, fmt, ap);
  va_end(ap);
  return n;
}

int vprintf(const char* fmt, va_list ap) {
  struct sink s = {0, 0, 0, 1};
  format(&s, fmt, ap);
  return s.n > 0x7fffffff ? -1 : (int)s.n;
}

int printf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int n = vprintf(fmt, ap);
  va_end(ap);
  return n;
}

int putchar(int c) {
  struct sink s = {0, 0, 0, 1};
  put(&s, (char)c);
  return (unsigned char)c;
}

int puts(const char* str) {
  struct sink s = {0, 0, 0, 1};
  while (*str) put(&s, *str++);
  put(&s, '\n');
  return 1;
}
