// Firmware that goes wrong on purpose, for the fault tests (tests/bad/fw-*.yaml); built three
// times with -DFAULT=n:
//   1: reads a peripheral address where no register is -> the core stops with its pc
//   2: waits for an interrupt nothing will raise -> "the firmware did not finish"
//   3: spins forever -> the scenario's simulated-time limit ends the run
#include "bsp.h"

void irq_handler(void) {}

int main(unsigned core) {
  (void)core;
  printf("fault firmware %d\n", FAULT);
#if FAULT == 1
  return (int)reg_read(SOC_MMIO_BASE + 0xf000);  // nothing is there
#elif FAULT == 2
  for (;;) wfi();
#else
  for (volatile unsigned i = 0;; ++i) {
  }
#endif
}
