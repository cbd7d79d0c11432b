// SPDX-License-Identifier: MIT
// The Arm generic timer follows simulated time: CNTVCT_EL0 equals the system timer's COUNT at
// the same instant, a WFI until the virtual timer's compare value wakes at that count, both EL1
// timers interrupt through the core's private lines (32 physical, 33 virtual), and a loop of a
// known instruction count takes its time. The test runs this at several quanta and compares the
// output and the counts: they must not depend on the quantum.
#include "bsp.h"

static volatile uint32_t fired_line = 0xffffffff;
static volatile uint64_t fired_count;

#define SYSREG_RW(name)                                     \
  static inline uint64_t read_##name(void) {                \
    uint64_t v;                                             \
    __asm__ volatile("mrs %0, " #name : "=r"(v)::"memory"); \
    return v;                                               \
  }                                                         \
  static inline void write_##name(uint64_t v) { __asm__ volatile("msr " #name ", %0; isb" ::"r"(v) : "memory"); }
SYSREG_RW(cntv_ctl_el0)
SYSREG_RW(cntv_cval_el0)
SYSREG_RW(cntv_tval_el0)
SYSREG_RW(cntp_ctl_el0)
SYSREG_RW(cntp_tval_el0)

void irq_handler(void) {
  const unsigned core = core_id();
  const uint32_t line = reg_read(SOC_IRQ_BASE + IRQ_ACK(core));
  fired_count = cntvct();
  fired_line = line;
  if (line == 32) write_cntp_ctl_el0(0);  // disable: lowers the line
  if (line == 33) write_cntv_ctl_el0(0);
  reg_write(SOC_IRQ_BASE + IRQ_EOI(core), line);
}

static int fail(int code, const char* what) {
  printf("gtimer FAILED: %s\n", what);
  return code;
}

// Reads CNTVCT and the system timer's COUNT_LO in one basic block: the same instant.
static void read_both(uint64_t* vct, uint32_t* count) {
  __asm__ volatile("isb\n\tmrs %0, cntvct_el0\n\tldr %w1, [%2]"
                   : "=&r"(*vct), "=&r"(*count)
                   : "r"(SOC_TIMER_BASE + TIMER_COUNT_LO)
                   : "memory");
}

// A loop of exactly 2 * n instructions (subs, b.ne).
static void spin(uint64_t n) { __asm__ volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n)::"cc"); }

int main(unsigned core) {
  const uint64_t hz = cntfrq();
  printf("gtimer on cpu%u: CNTFRQ_EL0 %lu Hz\n", core, (unsigned long)hz);
  if (hz != 100000000ull) return fail(1, "CNTFRQ_EL0 is not the presets' 100 MHz system counter");

  uint64_t vct;
  uint32_t count;
  read_both(&vct, &count);
  printf("same instant: CNTVCT %lu, system timer COUNT %u\n", (unsigned long)vct, count);
  if ((uint32_t)vct != count) return fail(2, "CNTVCT_EL0 differs from the system timer's count");

  const uint64_t t0 = cntvct();
  spin(100000);
  const uint64_t t1 = cntvct();
  printf("loop of 200000 instructions: %lu ticks\n", (unsigned long)(t1 - t0));

  // The virtual timer 1000 ticks ahead, IRQs masked at the core: WFI wakes at the compare value.
  irq_mask();
  write_cntv_tval_el0(1000);
  const uint64_t cval = read_cntv_cval_el0();
  write_cntv_ctl_el0(1);
  if (read_cntv_ctl_el0() & 4) return fail(3, "CNTV_CTL_EL0.ISTATUS set before the compare value");
  while (!(read_cntv_ctl_el0() & 4)) wfi();
  const uint64_t woke = cntvct();
  printf("virtual timer: CVAL %lu, woke at %lu (+%lu)\n", (unsigned long)cval, (unsigned long)woke,
         (unsigned long)(woke - cval));
  if (woke < cval || woke > cval + 1) return fail(4, "WFI did not wake at the virtual timer's compare value");
  if ((int64_t)(int32_t)read_cntv_tval_el0() > 0) return fail(5, "CNTV_TVAL_EL0 not negative after the compare value");

  // Unmasked: the pending virtual timer interrupt is taken, on private line 33.
  irq_unmask();
  while (fired_line == 0xffffffff) {}
  if (fired_line != 33) return fail(6, "the virtual timer did not interrupt on line 33");

  // The physical timer, with its interrupt taken from WFI.
  fired_line = 0xffffffff;
  write_cntp_tval_el0(2500);
  const uint64_t due = cntvct() + 2500;
  write_cntp_ctl_el0(1);
  wfi_until(fired_line != 0xffffffff);
  irq_unmask();
  printf("physical timer: interrupt on line %u at %lu (due %lu, +%lu)\n", (unsigned)fired_line,
         (unsigned long)fired_count, (unsigned long)due, (unsigned long)(fired_count - due));
  if (fired_line != 32) return fail(7, "the physical timer did not interrupt on line 32");
  // The handler reads the count after an interrupt-controller access (20 ns) and a few instructions.
  if (fired_count < due || fired_count > due + 4) return fail(8, "the physical timer interrupt came late");

  // IMASK holds the line low although the condition holds.
  fired_line = 0xffffffff;
  write_cntv_tval_el0(10);
  write_cntv_ctl_el0(3);
  spin(10000);
  if (!(read_cntv_ctl_el0() & 4)) return fail(9, "ISTATUS not set with IMASK");
  if (fired_line != 0xffffffff) return fail(10, "a masked (IMASK) virtual timer interrupted");
  write_cntv_ctl_el0(0);
  printf("gtimer passed\n");
  return 0;
}
