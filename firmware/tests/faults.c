// SPDX-License-Identifier: MIT
// Firmware that goes wrong on purpose, for the fault tests (tests/bad/fw-*.yaml); built five
// times with -DFAULT=n:
//   1: reads a peripheral address where no register is -> the core stops with its pc
//   2: waits for an interrupt nothing will raise -> "the firmware did not finish"
//   3: spins forever -> the scenario's simulated-time limit ends the run
//   4: takes an interrupt but defines no irq_handler -> the BSP's default reports it (exit 0xe5)
//   5: frees a block twice -> the heap names the pointer (exit 0xf0)
#include "bsp.h"

int main(unsigned core) {
  (void)core;
  printf("fault firmware %d\n", FAULT);
#if FAULT == 1
  return (int)reg_read(SOC_MMIO_BASE + 0xf000);  // nothing is there
#elif FAULT == 2
  for (;;) wfi();
#elif FAULT == 4
  irq_unmask();
  __asm__ volatile("msr cntp_tval_el0, %0\n\tmsr cntp_ctl_el0, %1\n\tisb" ::"r"(100ull), "r"(1ull) : "memory");
  for (;;) wfi();
#elif FAULT == 5
  void* volatile p = malloc(64);  // volatile: the compiler would refuse the double free
  free(p);
  free(p);
  return 0;
#else
  for (volatile unsigned i = 0;; ++i) {}
#endif
}
