// SPDX-License-Identifier: MIT
// FP/SIMD in a firmware built with FP (dvp_firmware(... FP)): the start code enabled it
// (CPACR_EL1.FPEN = 0b11), and an interrupt keeps the interrupted code's FP state. Main fills
// v0-v31 with a pattern and spins while the physical generic timer interrupts it several
// times; the handler overwrites every V register and FPCR's rounding mode. Afterwards the
// pattern and FPCR must be intact. Exits 0 when all hold.
#include "bsp.h"

static volatile unsigned interrupts;

void irq_handler(void) {
  const unsigned core = core_id();
  const uint32_t line = reg_read(SOC_IRQ_BASE + IRQ_ACK(core));
  // What any FP-using handler may do: every V register and the rounding mode changed.
  __asm__ volatile(
      "movi v0.16b, #0xee\n\tmov v1.16b, v0.16b\n\tmov v2.16b, v0.16b\n\tmov v3.16b, v0.16b\n\t"
      "mov v4.16b, v0.16b\n\tmov v5.16b, v0.16b\n\tmov v6.16b, v0.16b\n\tmov v7.16b, v0.16b\n\t"
      "mov v8.16b, v0.16b\n\tmov v9.16b, v0.16b\n\tmov v10.16b, v0.16b\n\tmov v11.16b, v0.16b\n\t"
      "mov v12.16b, v0.16b\n\tmov v13.16b, v0.16b\n\tmov v14.16b, v0.16b\n\tmov v15.16b, v0.16b\n\t"
      "mov v16.16b, v0.16b\n\tmov v17.16b, v0.16b\n\tmov v18.16b, v0.16b\n\tmov v19.16b, v0.16b\n\t"
      "mov v20.16b, v0.16b\n\tmov v21.16b, v0.16b\n\tmov v22.16b, v0.16b\n\tmov v23.16b, v0.16b\n\t"
      "mov v24.16b, v0.16b\n\tmov v25.16b, v0.16b\n\tmov v26.16b, v0.16b\n\tmov v27.16b, v0.16b\n\t"
      "mov v28.16b, v0.16b\n\tmov v29.16b, v0.16b\n\tmov v30.16b, v0.16b\n\tmov v31.16b, v0.16b\n\t"
      "mov x0, #(3 << 22)\n\tmsr fpcr, x0" ::
          : "x0", "memory");
  if (line == 32) {
    ++interrupts;
    __asm__ volatile("msr cntp_tval_el0, %0\n\tisb" ::"r"(interrupts < 5 ? 3000ull : 0ull) : "memory");
    if (interrupts >= 5) __asm__ volatile("msr cntp_ctl_el0, xzr\n\tisb" ::: "memory");  // lowers the line
  }
  reg_write(SOC_IRQ_BASE + IRQ_EOI(core), line);
}

// v<i> = byte i in every lane; spin `n` iterations; store v0-v31 to out (512 bytes). One asm
// block: the compiler has no chance to use the V registers in between.
static void hold_pattern(uint8_t* out, uint64_t n) {
  __asm__ volatile(
      "movi v0.16b, #0\n\tmovi v1.16b, #1\n\tmovi v2.16b, #2\n\tmovi v3.16b, #3\n\t"
      "movi v4.16b, #4\n\tmovi v5.16b, #5\n\tmovi v6.16b, #6\n\tmovi v7.16b, #7\n\t"
      "movi v8.16b, #8\n\tmovi v9.16b, #9\n\tmovi v10.16b, #10\n\tmovi v11.16b, #11\n\t"
      "movi v12.16b, #12\n\tmovi v13.16b, #13\n\tmovi v14.16b, #14\n\tmovi v15.16b, #15\n\t"
      "movi v16.16b, #16\n\tmovi v17.16b, #17\n\tmovi v18.16b, #18\n\tmovi v19.16b, #19\n\t"
      "movi v20.16b, #20\n\tmovi v21.16b, #21\n\tmovi v22.16b, #22\n\tmovi v23.16b, #23\n\t"
      "movi v24.16b, #24\n\tmovi v25.16b, #25\n\tmovi v26.16b, #26\n\tmovi v27.16b, #27\n\t"
      "movi v28.16b, #28\n\tmovi v29.16b, #29\n\tmovi v30.16b, #30\n\tmovi v31.16b, #31\n\t"
      "1: subs %1, %1, #1\n\tb.ne 1b\n\t"
      "st1 {v0.16b, v1.16b, v2.16b, v3.16b}, [%0], #64\n\tst1 {v4.16b, v5.16b, v6.16b, v7.16b}, [%0], #64\n\t"
      "st1 {v8.16b, v9.16b, v10.16b, v11.16b}, [%0], #64\n\tst1 {v12.16b, v13.16b, v14.16b, v15.16b}, [%0], #64\n\t"
      "st1 {v16.16b, v17.16b, v18.16b, v19.16b}, [%0], #64\n\tst1 {v20.16b, v21.16b, v22.16b, v23.16b}, [%0], #64\n\t"
      "st1 {v24.16b, v25.16b, v26.16b, v27.16b}, [%0], #64\n\tst1 {v28.16b, v29.16b, v30.16b, v31.16b}, [%0], #64"
      : "+r"(out), "+r"(n)
      :
      : "memory", "cc", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14",
        "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30",
        "v31");
}

int main(void) {
  uint64_t cpacr, fpcr;
  __asm__ volatile("mrs %0, cpacr_el1" : "=r"(cpacr));
  printf("fpirq: CPACR_EL1.FPEN %lu\n", (unsigned long)((cpacr >> 20) & 3));
  if (((cpacr >> 20) & 3) != 3) return 1;
  static uint8_t regs[512];
  irq_unmask();
  __asm__ volatile("msr cntp_tval_el0, %0\n\tmsr cntp_ctl_el0, %1\n\tisb" ::"r"(3000ull), "r"(1ull) : "memory");
  hold_pattern(regs, 1000000);  // 2 million instructions: longer than five 30 us intervals
  __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
  printf("fpirq: %u interrupts while v0-v31 held a pattern, FPCR %lx\n", interrupts, (unsigned long)fpcr);
  if (interrupts < 5) return 2;
  for (int i = 0; i < 512; ++i)
    if (regs[i] != i / 16) {
      printf("fpirq FAILED: v%d byte %d is %x after the interrupts\n", i / 16, i % 16, regs[i]);
      return 3;
    }
  if (fpcr != 0) return 4;
  printf("fpirq: %.3f, %f passed\n", 2.0 / 3.0, (double)interrupts * 0.5);
  return 0;
}
