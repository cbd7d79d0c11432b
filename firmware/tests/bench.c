// SPDX-License-Identifier: MIT
// CPU host-speed benchmark (scripts/bench-cpu), built twice: -DSTORES=0 runs an ALU loop,
// -DSTORES=1 a loop that stores to an array on every iteration (Unicorn 2.0.1's slow path).
#include "bsp.h"

static uint64_t buf[512];

int main(unsigned core) {
  (void)core;
  uint64_t a = 1, b = 3;
  for (unsigned i = 0; i < 20000000u; ++i) {
    a = a * 6364136223846793005ull + b;
    b ^= a >> 7;
#if STORES
    buf[i & 511] = a;
#endif
  }
  printf("result %lx\n", (unsigned long)(a ^ b ^ buf[7]));
  return 0;
}
