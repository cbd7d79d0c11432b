// SPDX-License-Identifier: MIT
// Parameters of the L2 / last-level cache (platform.l2) and the slice hash.
#pragma once
#include <cstdint>
#include <string>

#include "common/config.hpp"
#include "common/time.hpp"
#include "replacement.hpp"

namespace dvp::cache {

struct L2Config {
  std::uint32_t slices = 1;
  std::uint64_t size_bytes = 0;  // total over slices
  std::uint32_t ways = 1;
  std::uint32_t line_bytes = 128;
  Clock clock;
  std::uint32_t hit_cycles = 1;
  std::uint32_t bytes_per_cycle = 64;
  std::uint32_t mshrs = 16;
  std::uint32_t writeback_buffers = 16;
  MakeReplacement replacement = nullptr;  // each slice makes its own (replacement.hpp)
  std::uint64_t seed = 1;
  std::uint32_t persist_ways = 0;  // ways of a set that may hold kept stashes (persist_fraction: l2_config.cpp)

  std::uint32_t sets_per_slice() const { return std::uint32_t(size_bytes / slices / ways / line_bytes); }

  static void describe(cfg::Spec& s);
  static L2Config from(const cfg::Node& n);
};

// Which slice (home node) owns an address. Power-of-two slice counts XOR-fold all line-address
// bits so strided streams spread over the slices; other counts take the line address modulo.
// The ring routes with this same function, so a request always reaches the slice that holds
// its line.
class SliceHash {
 public:
  SliceHash() = default;
  SliceHash(std::uint32_t slices, std::uint32_t line_bytes);
  std::uint32_t slice(std::uint64_t addr) const {
    std::uint64_t line = addr >> line_bits_;
    if (!pow2_) return std::uint32_t(line % slices_);
    if (slice_bits_ == 0) return 0;
    std::uint64_t h = 0;
    for (std::uint64_t v = line; v; v >>= slice_bits_) h ^= v;
    return std::uint32_t(h & (slices_ - 1));
  }
  // Line address with the slice-selecting information removed: indexes the slice's sets.
  std::uint64_t slice_local_line(std::uint64_t addr) const {
    std::uint64_t line = addr >> line_bits_;
    return pow2_ ? line >> slice_bits_ : line / slices_;
  }
  unsigned line_bits() const { return line_bits_; }

 private:
  std::uint32_t slices_ = 1;
  unsigned line_bits_ = 7, slice_bits_ = 0;
  bool pow2_ = true;
};

}  // namespace dvp::cache
