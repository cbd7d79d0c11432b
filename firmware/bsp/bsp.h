// Firmware support: register access, the SoC's peripherals, printf on this core's UART.
#pragma once
#include <stdarg.h>
#include <stdint.h>

#include "soc_regs.h"

static inline void reg_write(uint64_t addr, uint32_t v) { *(volatile uint32_t*)addr = v; }
static inline uint32_t reg_read(uint64_t addr) { return *(volatile uint32_t*)addr; }
static inline void irq_unmask(void) { __asm__ volatile("msr daifclr, #2" ::: "memory"); }
static inline void irq_mask(void) { __asm__ volatile("msr daifset, #2" ::: "memory"); }
static inline void wfi(void) { __asm__ volatile("wfi" ::: "memory"); }

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

unsigned core_id(void);                 // this core's number
uint64_t timer_count(void);             // system timer counter
uint64_t time_ns(void);                 // simulated time (simctrl)
void soc_marker(uint32_t v);            // a marker in the trace
void soc_exit(int code) __attribute__((noreturn));
int printf(const char* fmt, ...);
int vsnprintf(char* out, unsigned long size, const char* fmt, va_list ap);

// Provided by the firmware: called for each interrupt with IRQs masked.
void irq_handler(void);
