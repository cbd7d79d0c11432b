// SPDX-License-Identifier: MIT
#include "l2_config.hpp"
#include <algorithm>

namespace dvp::cache {

using cfg::Type;

void L2Config::describe(cfg::Spec& s) {
  s.param("slices", Type::Int, "L2 slices; each is a home node on the ring").range(1, 256);
  s.param("size_kib", Type::Int, "total capacity over all slices").unit("KiB").range(1, 1 << 22);
  s.param("ways", Type::Int, "associativity").range(1, 64);
  s.param("line_bytes", Type::Enum, "cache line size").choices({"128", "256", "512"});
  s.param("clock_mhz", Type::Float, "L2 clock").unit("MHz").range(1, 10000);
  s.param("hit_cycles", Type::Int, "tag + data access latency of a hit").unit("cycles").range(1, 1000);
  s.param("bytes_per_cycle", Type::Int, "data port width of one slice").unit("B/cycle").range(1, 4096);
  s.param("mshrs", Type::Int, "outstanding misses per slice").range(1, 4096);
  s.param("writeback_buffers", Type::Int,
          "dirty victims on their way to DRAM per slice; a miss that evicts a dirty line waits for one")
      .range(1, 4096);
  s.param("replacement", Type::Enum, "victim choice within a set: " + replacement_policies().doc())
      .choices(replacement_policies().names())
      .defaults("lru");
  s.param("seed", Type::Int, "seed of the random replacement policy").defaults("1").range(0, 9.0e18);
  s.param("persist_fraction", Type::Float,
          "share of each set's ways that may hold kept lines, rounded down, all but one at most: a stash marked to "
          "persist (the SDMA engine's prefetches) is passed over by the replacement until a requester reads or "
          "writes it (a part of the L2 set aside, as the L2 buffer Ascend's model compiler keeps weights in); 0: "
          "none kept")
      .defaults("0")
      .range(0, 1);
}

L2Config L2Config::from(const cfg::Node& n) {
  L2Config c;
  c.slices = std::uint32_t(n.get_uint("slices"));
  c.size_bytes = n.get_uint("size_kib") * 1024;
  c.ways = std::uint32_t(n.get_uint("ways"));
  c.line_bytes = std::uint32_t(n.get_uint("line_bytes"));
  c.clock = Clock(n.get_double("clock_mhz"));
  c.hit_cycles = std::uint32_t(n.get_uint("hit_cycles"));
  c.bytes_per_cycle = std::uint32_t(n.get_uint("bytes_per_cycle"));
  c.mshrs = std::uint32_t(n.get_uint("mshrs"));
  c.writeback_buffers = std::uint32_t(n.get_uint("writeback_buffers"));
  c.replacement = replacement_policies().parse(n.at("replacement"));
  c.seed = n.get_uint("seed");
  c.persist_ways = std::min(c.ways - 1, std::uint32_t(n.get_double("persist_fraction") * c.ways));
  std::uint64_t per_slice_set = std::uint64_t(c.slices) * c.ways * c.line_bytes;
  if (c.size_bytes % per_slice_set != 0)
    n.at("size_kib")
        .fail("size must be a multiple of slices x ways x line_bytes = " + std::to_string(per_slice_set) + " bytes");
  std::uint32_t sets = c.sets_per_slice();
  if (sets == 0 || (sets & (sets - 1)))
    n.at("size_kib").fail("gives " + std::to_string(sets) + " sets per slice; it must be a power of two");
  return c;
}

SliceHash::SliceHash(std::uint32_t slices, std::uint32_t line_bytes) : slices_(slices) {
  line_bits_ = 0;
  while ((1u << line_bits_) < line_bytes) ++line_bits_;
  pow2_ = (slices & (slices - 1)) == 0;
  slice_bits_ = 0;
  if (pow2_)
    while ((1u << slice_bits_) < slices) ++slice_bits_;
}

}  // namespace dvp::cache
