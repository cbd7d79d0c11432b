// SPDX-License-Identifier: MIT
// Firmware support: register access, the SoC's peripherals, printf on this core's UART, the
// heap, time. docs/firmware-sdk.md describes it all.
#pragma once
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "soc_regs.h"

static inline void reg_write(uint64_t addr, uint32_t v) { *(volatile uint32_t*)addr = v; }
static inline uint32_t reg_read(uint64_t addr) { return *(volatile uint32_t*)addr; }
static inline void irq_unmask(void) { __asm__ volatile("msr daifclr, #2" ::: "memory"); }
static inline void irq_mask(void) { __asm__ volatile("msr daifset, #2" ::: "memory"); }
static inline void wfi(void) { __asm__ volatile("wfi" ::: "memory"); }

// Sleeps until `cond` holds, woken by interrupts; returns with interrupts masked. They are
// masked from each test of cond to the WFI after it (a pending interrupt ends a WFI even when
// masked) and unmasked between, where the handler runs. With interrupts unmasked around the
// test, a handler that makes cond true just after it leaves the WFI asleep for good: the
// interrupt it waits for has been taken already.
#define wfi_until(cond) \
  do {                  \
    irq_mask();         \
    while (!(cond)) {   \
      wfi();            \
      irq_unmask();     \
      irq_mask();       \
    }                   \
  } while (0)

// The Arm generic timer: the system counter in simulated time. CNTFRQ_EL0 is its rate in Hz.
static inline uint64_t cntfrq(void) {
  uint64_t v;
  __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(v));
  return v;
}
static inline uint64_t cntvct(void) {
  uint64_t v;
  __asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v)::"memory");
  return v;
}

unsigned core_id(void);                             // this core's number
uint64_t timer_count(void);                         // system timer counter (64 bits, read without tearing)
uint64_t time_ns(void);                             // simulated time in ns (simctrl; read without tearing)
void soc_marker(uint32_t v);                        // a marker in the trace
void soc_exit(int code) __attribute__((noreturn));  // ends the run with this exit code

// Formatted output (printf.c): d i u o x X c s p %, f F with FP/SIMD, flags - + space 0 #,
// width and precision (or *), lengths hh h l ll z j t. printf goes to this core's UART whole,
// however long; vsnprintf writes at most size - 1 characters, always terminates (size > 0) and
// returns the length the whole output would have. An unknown conversion prints as written.
int printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
int vprintf(const char* fmt, va_list ap);
int snprintf(char* out, size_t size, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
int vsnprintf(char* out, size_t size, const char* fmt, va_list ap);
int putchar(int c);
int puts(const char* s);

// The heap (heap.c), between .bss and the stacks (link.ld). NULL when there is no room. Safe
// from every core and from interrupt handlers. Freeing a pointer malloc did not return, or
// twice, ends the run (exit code 0xf0).
void* malloc(size_t n);
void free(void* p);
void* calloc(size_t count, size_t size);
void* realloc(void* p, size_t n);
size_t heap_free_bytes(void);  // payload bytes in free blocks (the largest malloc may be less)

void* memcpy(void* dst, const void* src, size_t n);
void* memmove(void* dst, const void* src, size_t n);
void* memset(void* dst, int c, size_t n);
int memcmp(const void* a, const void* b, size_t n);
size_t strlen(const char* s);

// Called for each interrupt with IRQs masked. The BSP's default (weak) reports the line and
// ends the run (exit code 0xe5): firmware that unmasks IRQs defines its own.
void irq_handler(void);
