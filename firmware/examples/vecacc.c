// SPDX-License-Identifier: MIT
// The worked example's firmware (scenarios/rtl/vecacc.yaml): on the control CPU, fills two
// int32 vectors, has vecacc add them and then scale the first, sleeping in WFI until its
// interrupt each time, and checks every element against the CPU's own loop. It prints each
// operation's time and a checksum of its output (the same for the TLM model and the Verilog
// when they agree) and exits 0 when every element is right.
#include "vecacc.h"
#include "bsp.h"

#define N 4099  // not a multiple of any bus width: the tail goes out with byte strobes
#define SCALE 0x10003u

static int32_t a[N] __attribute__((aligned(64)));
static int32_t b[N] __attribute__((aligned(64)));
static int32_t sum[N + 16] __attribute__((aligned(64)));
static int32_t scaled[N + 16] __attribute__((aligned(64)));
static volatile int done;

void irq_handler(void) {
  const unsigned core = core_id();
  const uint32_t line = reg_read(SOC_IRQ_BASE + IRQ_ACK(core));
  if (line == VECACC_IRQ) {
    vecacc_ack();
    done = 1;
  }
  reg_write(SOC_IRQ_BASE + IRQ_EOI(core), line);
}

static uint32_t fnv1a(const void* p, uint32_t n) {
  const uint8_t* s = (const uint8_t*)p;
  uint32_t h = 2166136261u;
  for (uint32_t i = 0; i < n; ++i) h = (h ^ s[i]) * 16777619u;
  return h;
}

// One operation on n elements, start to interrupt; returns its time in ns.
static uint64_t run(void* dst, uint32_t op, uint32_t n) {
  done = 0;
  const uint64_t t0 = time_ns();
  vecacc_start(a, b, dst, n, op, SCALE, 1);
  wfi_until(done);
  irq_unmask();
  return time_ns() - t0;
}

int main(unsigned core) {
  if (!vecacc_present()) {
    printf("vecacc: no engine at 0x%lx\n", (unsigned long)VECACC_BASE);
    return 2;
  }
  uint32_t x = 12345;
  for (int i = 0; i < N; ++i) {
    x = x * 1103515245u + 12345u, a[i] = (int32_t)x;
    x = x * 1103515245u + 12345u, b[i] = (int32_t)x;
  }
  for (int i = N; i < N + 16; ++i) sum[i] = scaled[i] = 0x5a5a5a5a;  // past the end: must stay
  vecacc_route_irq(core);
  irq_unmask();
  // A short operation first brings this loop's code into the instruction cache, so the timed ones
  // have the memory to themselves and their cycles are the engine's alone: the same for the TLM
  // model and the Verilog. (A fetch that meets the engine's reads in the L2 is served in the order
  // the simulation runs them, which the TLM model and the clocked Verilog need not share.)
  run(sum, 0, 16);
  const uint64_t add_ns = run(sum, 0, N);
  const uint32_t add_cycles = vecacc_read(VECACC_CYCLES);
  const uint64_t scale_ns = run(scaled, 1, N);
  const uint32_t scale_cycles = vecacc_read(VECACC_CYCLES);
  int bad = 0;
  for (int i = 0; i < N; ++i) {
    bad += sum[i] != (int32_t)((uint32_t)a[i] + (uint32_t)b[i]);
    bad += scaled[i] != (int32_t)((uint32_t)a[i] * SCALE);
  }
  for (int i = N; i < N + 16; ++i) bad += sum[i] != 0x5a5a5a5a || scaled[i] != 0x5a5a5a5a;
  printf("vecacc: add %d elements in %lu ns (%u cycles), checksum %08x\n", N, (unsigned long)add_ns, add_cycles,
         fnv1a(sum, sizeof sum));
  printf("vecacc: scale %d elements in %lu ns (%u cycles), checksum %08x\n", N, (unsigned long)scale_ns, scale_cycles,
         fnv1a(scaled, sizeof scaled));
  printf("vecacc: %d wrong elements\n", bad);
  return bad ? 1 : 0;
}
