// SPDX-License-Identifier: MIT
#include "aicore_config.hpp"

namespace dvp::aicore {

using cfg::Type;

void AiCoreConfig::describe(cfg::Spec& s) {
  s.param("cores", Type::Int, "AI Cores on the SoC").range(1, 256);
  s.param("clock_mhz", Type::Float, "AI Core clock").unit("MHz").range(1, 10000);
  s.param("stops", Type::IntList, "ring stop of each core (cycled if shorter); empty: spread over the ring")
      .defaults("[]")
      .min(0);
  s.param("queue_depth", Type::Int, "entries of each pipe's instruction queue; a full queue stalls issue")
      .range(1, 4096);
  s.param("l1_kib", Type::Int, "L1 buffer").unit("KiB").range(1, 1 << 16);
  s.param("l0a_kib", Type::Int, "L0A buffer (cube input A)").unit("KiB").range(1, 1 << 16);
  s.param("l0b_kib", Type::Int, "L0B buffer (cube input B)").unit("KiB").range(1, 1 << 16);
  s.param("l0c_kib", Type::Int, "L0C buffer (cube accumulator)").unit("KiB").range(1, 1 << 16);
  s.param("ub_kib", Type::Int, "Unified Buffer (vector operands)").unit("KiB").range(1, 1 << 16);
  s.param("icache_kib", Type::Int, "instruction cache").unit("KiB").range(1, 1024);
  s.param("icache_fill_bytes", Type::Int, "instruction cache fill unit").unit("B").range(64, 65536).power_of_two();
  s.param("dcache_kib", Type::Int, "scalar data cache").unit("KiB").range(1, 1024);
  s.param("dcache_line_bytes", Type::Int, "scalar data cache line").unit("B").range(8, 4096).power_of_two();
  s.param("scalar_cycles", Type::Int, "cycles of one scalar instruction").unit("cycles").range(1, 1000);
  s.param("issue_cycles", Type::Int, "cycles to issue one instruction into a pipe queue").unit("cycles").range(1, 1000);
  s.param("vector_cycles_per_repeat", Type::Int, "vector unit: cycles per repeat (256 B) of a simple op")
      .unit("cycles")
      .range(1, 1000);
  s.param("vector_complex_cycles_per_repeat", Type::Int,
          "vector unit: cycles per repeat of exp, ln, sqrt, rsqrt, reciprocal, division")
      .unit("cycles")
      .range(1, 1000);
  s.param("vector_startup_cycles", Type::Int, "vector unit: fixed cycles per instruction")
      .unit("cycles")
      .range(0, 10000);
  s.param("mte_startup_cycles", Type::Int, "memory transfer engines: fixed cycles per instruction")
      .unit("cycles")
      .range(0, 10000);
  s.param("gm_read_bytes_per_cycle", Type::Int, "MTE2 GM -> local rate at the bus interface")
      .unit("B/cycle")
      .range(1, 4096);
  s.param("gm_write_bytes_per_cycle", Type::Int, "MTE3 UB -> GM rate at the bus interface")
      .unit("B/cycle")
      .range(1, 4096);
  s.param("l1_to_ub_bytes_per_cycle", Type::Int, "MTE1 L1 -> UB rate").unit("B/cycle").range(1, 4096);
  s.param("ub_to_l1_bytes_per_cycle", Type::Int, "MTE3 UB -> L1 rate").unit("B/cycle").range(1, 4096);
  s.param("aipp_pixels_per_cycle", Type::Int,
          "MTE2's AIPP (aipp.gm2l1): pixels converted and written to L1 per cycle, alongside the picture's reads")
      .unit("pixels/cycle")
      .range(1, 1024);
  s.param("gm_outstanding", Type::Int, "bus requests one MTE keeps in flight").range(1, 4096);
  s.param("cube_m", Type::Int, "cube: rows of A per step; an mmad takes ceil(m padded to 16 / cube_m) x ... steps")
      .range(1, 256);
  s.param("cube_k", Type::Int, "cube: fp16 elements of k per step (int8 twice, f32 half as many)").range(1, 256);
  s.param("cube_n", Type::Int, "cube: columns of B per step").range(1, 256);
  s.param("cube_cycles_per_step", Type::Int,
          "cube: cycles per step of cube_m x cube_k x cube_n multiply-adds (310 / 910: fp16 16x16x16, int8 16x32x16)")
      .unit("cycles")
      .range(1, 1000);
  s.param("cube_startup_cycles", Type::Int, "cube: fixed cycles per mmad").unit("cycles").range(0, 10000);
  s.param("l1_to_l0a_bytes_per_cycle", Type::Int, "MTE1 L1 -> L0A rate").unit("B/cycle").range(1, 4096);
  s.param("l1_to_l0b_bytes_per_cycle", Type::Int, "MTE1 L1 -> L0B rate").unit("B/cycle").range(1, 4096);
  s.param("fixp_bytes_per_cycle", Type::Int, "FixPipe: L0C bytes read and converted per cycle")
      .unit("B/cycle")
      .range(1, 4096);
}

AiCoreConfig AiCoreConfig::from(const cfg::Node& n) {
  AiCoreConfig c;
  auto u32 = [&](const char* k) { return std::uint32_t(n.get_uint(k)); };
  c.cores = u32("cores");
  c.clock = Clock(n.get_double("clock_mhz"));
  c.stops = n.get_uint_list("stops");
  c.queue_depth = u32("queue_depth");
  const char* kib[kBuffers] = {"l1_kib", "l0a_kib", "l0b_kib", "l0c_kib", "ub_kib"};
  for (int b = 0; b < kBuffers; ++b) c.size[b] = n.get_uint(kib[b]) * 1024;
  c.icache_bytes = u32("icache_kib") * 1024;
  c.icache_fill_bytes = u32("icache_fill_bytes");
  c.dcache_bytes = u32("dcache_kib") * 1024;
  c.dcache_line_bytes = u32("dcache_line_bytes");
  c.scalar_cycles = u32("scalar_cycles");
  c.issue_cycles = u32("issue_cycles");
  c.vector_cycles_per_repeat = u32("vector_cycles_per_repeat");
  c.vector_complex_cycles_per_repeat = u32("vector_complex_cycles_per_repeat");
  c.vector_startup_cycles = u32("vector_startup_cycles");
  c.mte_startup_cycles = u32("mte_startup_cycles");
  c.gm_read_bytes_per_cycle = u32("gm_read_bytes_per_cycle");
  c.gm_write_bytes_per_cycle = u32("gm_write_bytes_per_cycle");
  c.l1_to_ub_bytes_per_cycle = u32("l1_to_ub_bytes_per_cycle");
  c.ub_to_l1_bytes_per_cycle = u32("ub_to_l1_bytes_per_cycle");
  c.aipp_pixels_per_cycle = u32("aipp_pixels_per_cycle");
  c.gm_outstanding = u32("gm_outstanding");
  c.cube_m = u32("cube_m");
  c.cube_k = u32("cube_k");
  c.cube_n = u32("cube_n");
  c.cube_cycles_per_step = u32("cube_cycles_per_step");
  c.cube_startup_cycles = u32("cube_startup_cycles");
  c.l1_to_l0a_bytes_per_cycle = u32("l1_to_l0a_bytes_per_cycle");
  c.l1_to_l0b_bytes_per_cycle = u32("l1_to_l0b_bytes_per_cycle");
  c.fixp_bytes_per_cycle = u32("fixp_bytes_per_cycle");
  if (c.icache_bytes < c.icache_fill_bytes)
    n.at("icache_kib")
        .fail("the instruction cache must hold at least one fill unit (" + std::to_string(c.icache_fill_bytes) + " B)");
  if (c.dcache_bytes < c.dcache_line_bytes) n.at("dcache_kib").fail("the data cache must hold at least one line");
  return c;
}

}  // namespace dvp::aicore
