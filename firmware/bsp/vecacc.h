// SPDX-License-Identifier: MIT
// The driver of vecacc, the worked example of RTL co-simulation (docs/rtl-cosim.md): the same
// calls drive its TLM model and its Verilog. VECACC_BASE and VECACC_IRQ must match
// platform.vecacc.base and .irq (their defaults here are the schema's).
#pragma once
#include "bsp.h"
#include "vecacc_regs.h"

#ifndef VECACC_BASE
#define VECACC_BASE 0x10100000ull
#endif
#ifndef VECACC_IRQ
#define VECACC_IRQ 2
#endif

static inline uint32_t vecacc_read(uint32_t off) { return reg_read(VECACC_BASE + off); }
static inline void vecacc_write(uint32_t off, uint32_t v) { reg_write(VECACC_BASE + off, v); }
static inline int vecacc_present(void) { return vecacc_read(VECACC_ID) == VECACC_ID_VALUE; }

// Routes the done interrupt to `core` and enables it (the caller unmasks IRQs).
static inline void vecacc_route_irq(unsigned core) {
  reg_write(SOC_IRQ_BASE + IRQ_ROUTE(VECACC_IRQ), core);
  reg_write(SOC_IRQ_BASE + IRQ_ENABLE, reg_read(SOC_IRQ_BASE + IRQ_ENABLE) | 1u << VECACC_IRQ);
}

// Starts dst[i] = a[i] + b[i] (op 0) or a[i] * scale (op 1) for `count` int32 elements; the
// addresses must be multiples of the engine's bus width. `irq`: interrupt when done.
static inline void vecacc_start(const void* a, const void* b, void* dst, uint32_t count, uint32_t op, uint32_t scale,
                                int irq) {
  vecacc_write(VECACC_SRC_A_LO, (uint32_t)(uintptr_t)a);
  vecacc_write(VECACC_SRC_A_HI, (uint32_t)((uint64_t)(uintptr_t)a >> 32));
  vecacc_write(VECACC_SRC_B_LO, (uint32_t)(uintptr_t)b);
  vecacc_write(VECACC_SRC_B_HI, (uint32_t)((uint64_t)(uintptr_t)b >> 32));
  vecacc_write(VECACC_DST_LO, (uint32_t)(uintptr_t)dst);
  vecacc_write(VECACC_DST_HI, (uint32_t)((uint64_t)(uintptr_t)dst >> 32));
  vecacc_write(VECACC_COUNT, count);
  vecacc_write(VECACC_OP, op);
  vecacc_write(VECACC_SCALE, scale);
  vecacc_write(VECACC_CTRL, VECACC_START | (irq ? VECACC_IRQ_ENABLE : 0));
}

// Clears done (and so the interrupt); returns the status it had.
static inline uint32_t vecacc_ack(void) {
  const uint32_t s = vecacc_read(VECACC_STATUS);
  vecacc_write(VECACC_STATUS, VECACC_DONE);
  return s;
}
