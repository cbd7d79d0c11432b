// SPDX-License-Identifier: MIT
// Parameters of the AI Cores (platform.aicore), read once and validated.
#pragma once
#include <cstdint>
#include <vector>

#include "common/config.hpp"
#include "common/time.hpp"
#include "isa.hpp"

namespace dvp::aicore {

struct AiCoreConfig {
  std::uint32_t cores = 1;
  Clock clock;
  std::vector<std::uint64_t> stops;  // ring stop per core; empty: spread
  std::uint32_t queue_depth = 16;
  std::uint64_t size[kBuffers] = {0, 0, 0, 0, 0};  // bytes
  std::uint32_t align[kBuffers] = {32, 512, 512, 64, 32};
  std::uint32_t icache_bytes = 0, icache_fill_bytes = 2048;
  std::uint32_t dcache_bytes = 0, dcache_line_bytes = 64;
  std::uint32_t scalar_cycles = 1;
  std::uint32_t issue_cycles = 1;
  std::uint32_t vector_cycles_per_repeat = 1;
  std::uint32_t vector_complex_cycles_per_repeat = 4;
  std::uint32_t vector_startup_cycles = 0;
  std::uint32_t mte_startup_cycles = 0;
  std::uint32_t gm_read_bytes_per_cycle = 64;   // MTE2 GM -> local
  std::uint32_t gm_write_bytes_per_cycle = 64;  // MTE3 UB -> GM
  std::uint32_t l1_to_ub_bytes_per_cycle = 128;
  std::uint32_t ub_to_l1_bytes_per_cycle = 128;
  std::uint32_t aipp_pixels_per_cycle = 8;              // MTE2's AIPP: pixels converted per cycle
  std::uint32_t gm_outstanding = 16;                    // bus requests in flight per MTE
  std::uint32_t cube_m = 16, cube_k = 16, cube_n = 16;  // one step: cube_m x cube_k x cube_n fp16 MACs
  std::uint32_t cube_cycles_per_step = 1;
  std::uint32_t cube_startup_cycles = 0;
  std::uint32_t l1_to_l0a_bytes_per_cycle = 512;
  std::uint32_t l1_to_l0b_bytes_per_cycle = 256;
  std::uint32_t fixp_bytes_per_cycle = 256;  // L0C read side of FixPipe
  // Not a parameter of the core: the SoC's L2 capacity, set by the platform so that the kernel
  // library can order its tiles for it (0: no L2 to plan for).
  std::uint64_t l2_bytes = 0;

  // Peak fp16 throughput of all cores, in FLOP per second (2 per multiply-add).
  double peak_flops() const {
    return 2.0 * cores * cube_m * cube_k * cube_n / cube_cycles_per_step * (1e12 / double(clock.period()));
  }

  static void describe(cfg::Spec& s);
  static AiCoreConfig from(const cfg::Node& n);
};

}  // namespace dvp::aicore
