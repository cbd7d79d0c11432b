// Firmware support library: console, time, exit, a small printf (d i u x X c s p, l / ll,
// width, '-' and '0' flags), and the handler of unexpected exceptions.
#include "bsp.h"

// Each core keeps its number in TPIDR_EL1 (start.S): memory is shared by all cores.
unsigned core_id(void) {
  uint64_t core;
  __asm__ volatile("mrs %0, tpidr_el1" : "=r"(core));
  return (unsigned)core;
}

static void putc_uart(char c) { reg_write(SOC_UART_BASE(core_id()) + UART_DATA, (uint8_t)c); }

uint64_t timer_count(void) {
  uint32_t hi, lo;
  do {
    hi = reg_read(SOC_TIMER_BASE + TIMER_COUNT_HI);
    lo = reg_read(SOC_TIMER_BASE + TIMER_COUNT_LO);
  } while (hi != reg_read(SOC_TIMER_BASE + TIMER_COUNT_HI));
  return (uint64_t)hi << 32 | lo;
}

uint64_t time_ns(void) {
  const uint32_t lo = reg_read(SOC_SIMCTRL_BASE + SIMCTRL_TIME_LO);
  return (uint64_t)reg_read(SOC_SIMCTRL_BASE + SIMCTRL_TIME_HI) << 32 | lo;
}

void soc_marker(uint32_t v) { reg_write(SOC_SIMCTRL_BASE + SIMCTRL_MARKER, v); }

void soc_exit(int code) {
  reg_write(SOC_SIMCTRL_BASE + SIMCTRL_EXIT, (uint32_t)code);
  for (;;) wfi();
}

static unsigned put_num(char* out, unsigned long size, unsigned n, unsigned long long v, unsigned base, int upper,
                        int width, char pad) {
  char tmp[24];
  int len = 0;
  do {
    const unsigned d = (unsigned)(v % base);
    tmp[len++] = (char)(d < 10 ? '0' + d : (upper ? 'A' : 'a') + d - 10);
    v /= base;
  } while (v);
  while (len < width) tmp[len++] = pad;
  while (len--) {
    if (n + 1 < size) out[n] = tmp[len];
    ++n;
  }
  return n;
}

int vsnprintf(char* out, unsigned long size, const char* f, va_list ap) {
  unsigned n = 0;
  for (; *f; ++f) {
    if (*f != '%') {
      if (n + 1 < size) out[n] = *f;
      ++n;
      continue;
    }
    ++f;
    char pad = ' ';
    int width = 0, longs = 0, left = 0;
    const unsigned start = n;
    if (*f == '-') left = 1, ++f;
    if (*f == '0') pad = '0', ++f;
    while (*f >= '0' && *f <= '9') width = width * 10 + (*f++ - '0');
    while (*f == 'l') ++longs, ++f;
    const int num_width = left ? 0 : width;  // left-justified: padded after the field instead
    unsigned long long u;
    switch (*f) {
      case 'd':
      case 'i': {
        long long v = longs ? va_arg(ap, long long) : va_arg(ap, int);
        if (v < 0) {
          if (n + 1 < size) out[n] = '-';
          ++n;
          u = (unsigned long long)(-v);
        } else {
          u = (unsigned long long)v;
        }
        n = put_num(out, size, n, u, 10, 0, num_width, pad);
        break;
      }
      case 'u':
      case 'x':
      case 'X':
        u = longs ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned);
        n = put_num(out, size, n, u, *f == 'u' ? 10 : 16, *f == 'X', num_width, pad);
        break;
      case 'p':
        n = put_num(out, size, n, (unsigned long long)(uintptr_t)va_arg(ap, void*), 16, 0, num_width, pad);
        break;
      case 'c':
        if (n + 1 < size) out[n] = (char)va_arg(ap, int);
        ++n;
        break;
      case 's': {
        const char* s = va_arg(ap, const char*);
        for (; *s; ++s) {
          if (n + 1 < size) out[n] = *s;
          ++n;
        }
        break;
      }
      case '%':
        if (n + 1 < size) out[n] = '%';
        ++n;
        break;
      default:
        return -1;
    }
    // Left-justified: spaces after the field up to its width.
    if (left)
      for (unsigned len = n - start; (int)len < width; ++len) {
        if (n + 1 < size) out[n] = ' ';
        ++n;
      }
  }
  if (size) out[n < size ? n : size - 1] = 0;
  return (int)n;
}

int printf(const char* fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  for (const char* p = buf; *p; ++p) putc_uart(*p);
  return n;
}

// Vectors other than "IRQ at EL1h" come here with their number.
void unexpected_exception(uint64_t vector) {
  uint64_t esr, elr;
  __asm__ volatile("mrs %0, esr_el1" : "=r"(esr));
  __asm__ volatile("mrs %0, elr_el1" : "=r"(elr));
  printf("unexpected exception: vector %u, ESR %x, ELR %lx\n", (unsigned)vector, (unsigned)esr, (unsigned long)elr);
  soc_exit(0xe0 + (int)vector);
}

// The C library functions a freestanding compiler may still call (struct copies, zeroing).
void* memcpy(void* dst, const void* src, unsigned long n) {
  unsigned char* d = dst;
  const unsigned char* s = src;
  while (n--) *d++ = *s++;
  return dst;
}

void* memset(void* dst, int c, unsigned long n) {
  unsigned char* d = dst;
  while (n--) *d++ = (unsigned char)c;
  return dst;
}
