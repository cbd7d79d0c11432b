// SPDX-License-Identifier: MIT
// 64-bit time read as two 32-bit registers, across the moment the low word wraps: time_ns()
// (simctrl, ns) at 2^32 ns = 4.29 s and timer_count() (system timer, ticks) at 2^32 ticks =
// 42.9 s at the presets' 100 MHz. The core sleeps in WFI (no host time) until just before each
// wrap on the virtual generic timer, then reads in a loop past it: every read must be within
// 2 us of the last one and of the generic timer (CNTVCT_EL0, 64 bits in one register), never
// 2^32 off. Exits 0 when all hold.
#include "bsp.h"

#define WRAP (1ull << 32)

static int fail(int code, const char* what, uint64_t got, uint64_t want) {
  printf("time FAILED: %s: read %lu, expected about %lu\n", what, (unsigned long)got, (unsigned long)want);
  return code;
}

// Sleeps until the generic timer counts `tick` (IRQs stay masked: WFI wakes on the condition).
static void sleep_until(uint64_t tick) {
  __asm__ volatile("msr cntv_cval_el0, %0\n\tmsr cntv_ctl_el0, %1\n\tisb" ::"r"(tick), "r"(1ull) : "memory");
  uint64_t ctl;
  do {
    wfi();
    __asm__ volatile("mrs %0, cntv_ctl_el0" : "=r"(ctl)::"memory");
  } while (!(ctl & 4));
  __asm__ volatile("msr cntv_ctl_el0, xzr\n\tisb" ::: "memory");
}

// Reads `read` until it is `past` units beyond the wrap; `per_tick` converts generic timer
// ticks to its units, `slack` is the most two reads may differ. Returns 0, or a failure code.
static int across_wrap(const char* what, uint64_t (*read)(void), uint64_t per_tick, uint64_t past, uint64_t slack,
                       int code) {
  uint64_t last = read();
  unsigned reads = 0;
  int crossed = 0;
  while (last < WRAP + past) {
    const uint64_t now = read();
    const uint64_t ref = cntvct() * per_tick;
    ++reads;
    if (now < last || now - last > slack) return fail(code, what, now, last);
    if (now > ref + slack || ref > now + slack) return fail(code + 1, what, now, ref);
    crossed |= last < WRAP && now >= WRAP;
    last = now;
  }
  printf("%s: %u reads across 2^32, last %lu\n", what, reads, (unsigned long)last);
  return crossed ? 0 : fail(code + 2, "never saw the wrap", last, WRAP);
}

int main(void) {
  const uint64_t hz = cntfrq();
  if (hz != 100000000ull) return fail(1, "CNTFRQ_EL0 is not the presets' 100 MHz", hz, 100000000ull);
  irq_mask();
  sleep_until(WRAP / 10 - 2000);  // 20 us before time_ns() wraps its low word
  int rc = across_wrap("time_ns", time_ns, 10, 20000, 2000, 10);
  if (rc) return rc;
  sleep_until(WRAP - 2000);  // 20 us before timer_count() does
  rc = across_wrap("timer_count", timer_count, 1, 2000, 200, 20);
  if (rc) return rc;
  printf("time passed\n");
  return 0;
}
