// SPDX-License-Identifier: MIT
// Firmware support library: core number, time, exit, markers, the handlers of unexpected
// exceptions and interrupts, and the C library functions a compiler may call on its own.
// printf is in printf.c, the heap in heap.c.
#include "bsp.h"

// Each core keeps its number in TPIDR_EL1 (start.S): memory is shared by all cores.
unsigned core_id(void) {
  uint64_t core;
  __asm__ volatile("mrs %0, tpidr_el1" : "=r"(core));
  return (unsigned)core;
}

// A 64-bit counter read as two 32-bit registers: the high word again after the low one, and
// the pair again if the low word wrapped in between (else the result is 2^32 off).
static uint64_t read_split(uint64_t lo_reg, uint64_t hi_reg) {
  uint32_t hi, lo;
  do {
    hi = reg_read(hi_reg);
    lo = reg_read(lo_reg);
  } while (hi != reg_read(hi_reg));
  return (uint64_t)hi << 32 | lo;
}

uint64_t timer_count(void) { return read_split(SOC_TIMER_BASE + TIMER_COUNT_LO, SOC_TIMER_BASE + TIMER_COUNT_HI); }

uint64_t time_ns(void) { return read_split(SOC_SIMCTRL_BASE + SIMCTRL_TIME_LO, SOC_SIMCTRL_BASE + SIMCTRL_TIME_HI); }

void soc_marker(uint32_t v) { reg_write(SOC_SIMCTRL_BASE + SIMCTRL_MARKER, v); }

void soc_exit(int code) {
  reg_write(SOC_SIMCTRL_BASE + SIMCTRL_EXIT, (uint32_t)code);
  for (;;) wfi();
}

// Vectors other than "IRQ at EL1h" come here with their number.
void unexpected_exception(uint64_t vector) {
  uint64_t esr, elr;
  __asm__ volatile("mrs %0, esr_el1" : "=r"(esr));
  __asm__ volatile("mrs %0, elr_el1" : "=r"(elr));
  printf("unexpected exception: vector %u, ESR %x, ELR %lx\n", (unsigned)vector, (unsigned)esr, (unsigned long)elr);
  soc_exit(0xe0 + (int)vector);
}

// Firmware that takes interrupts defines its own irq_handler; this one only runs when a
// firmware without one unmasked IRQs and a line reached it: a bug, reported like a stray
// exception (exit code 0xe5, the IRQ vector's number).
__attribute__((weak)) void irq_handler(void) {
  const unsigned core = core_id();
  const uint32_t line = reg_read(SOC_IRQ_BASE + IRQ_ACK(core));
  printf("unexpected interrupt: line %u on core %u, and the firmware defines no irq_handler\n", (unsigned)line, core);
  soc_exit(0xe5);
}

// The C library functions a freestanding compiler may still call (struct copies, zeroing).
void* memcpy(void* dst, const void* src, size_t n) {
  unsigned char* d = dst;
  const unsigned char* s = src;
  while (n--) *d++ = *s++;
  return dst;
}

void* memmove(void* dst, const void* src, size_t n) {
  unsigned char* d = dst;
  const unsigned char* s = src;
  if (d <= s || d >= s + n) return memcpy(dst, src, n);
  while (n--) d[n] = s[n];  // overlapping, destination above: copy from the end
  return dst;
}

void* memset(void* dst, int c, size_t n) {
  unsigned char* d = dst;
  while (n--) *d++ = (unsigned char)c;
  return dst;
}

int memcmp(const void* a, const void* b, size_t n) {
  const unsigned char* x = a;
  const unsigned char* y = b;
  for (; n--; ++x, ++y)
    if (*x != *y) return *x < *y ? -1 : 1;
  return 0;
}

size_t strlen(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}

// Addresses start.S uses before there is a stack (and so before any C).
const uint64_t bsp_uart0_data = SOC_UART_BASE(0) + UART_DATA;
const uint64_t bsp_simctrl_exit = SOC_SIMCTRL_BASE + SIMCTRL_EXIT;
