// SPDX-License-Identifier: MIT
// Tags, state and (optionally) bytes of one set-associative cache slice. Plain C++.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "common/time.hpp"
#include "replacement.hpp"

namespace dvp::cache {

class CacheArray {
 public:
  // `policy` chooses the victims (replacement.hpp).
  CacheArray(std::uint32_t sets, std::uint32_t ways, std::uint32_t line_bytes, std::unique_ptr<Replacement> policy,
             bool with_data);

  struct Line {
    Tick ready = 0;  // when the fill that brought it in completes
    bool valid = false, dirty = false;
  };

  // Index of the way holding `line_addr` in `set`, or -1.
  int lookup(std::uint32_t set, std::uint64_t line_addr) const;
  // Marks a use (a hit), for the replacement policy.
  void touch(std::uint32_t set, int way) { policy_->used(state(set), std::uint32_t(way)); }
  // Chooses the way to fill: an invalid one if any, else by the replacement policy among the
  // ways not kept (among all when every way is).
  int victim(std::uint32_t set);
  // Keeps (set, way)'s line from the replacement, or releases it; a fill or an invalidation
  // releases it too.
  void keep(std::uint32_t set, int way, bool on);
  // The set's kept lines; whether (set, way)'s is one.
  unsigned kept(std::uint32_t set) const;
  bool kept(std::uint32_t set, int way) const { return kept_[set] >> way & 1; }
  // Installs line_addr into (set, way); the old content must have been written back.
  void fill(std::uint32_t set, int way, std::uint64_t line_addr, Tick ready);
  // Empties (set, way), dirty or not: its bytes are dropped.
  void invalidate(std::uint32_t set, int way);

  Line& line(std::uint32_t set, int way) { return lines_[std::size_t(set) * ways_ + way]; }
  // The full line address (addr >> line bits) a valid way holds.
  std::uint64_t line_addr(std::uint32_t set, int way) const { return tags(set)[way] - 1; }
  std::uint8_t* data(std::uint32_t set, int way) {
    return data_.empty() ? nullptr : &data_[(std::size_t(set) * ways_ + way) * line_bytes_];
  }
  bool has_data() const { return !data_.empty(); }

 private:
  std::uint64_t* tags(std::uint32_t set) { return &meta_[std::size_t(set) * set_words_]; }
  const std::uint64_t* tags(std::uint32_t set) const { return &meta_[std::size_t(set) * set_words_]; }
  // The policy's words of the set (none: nullptr, not the next set's tags).
  std::uint64_t* state(std::uint32_t set) { return set_words_ > ways_ ? tags(set) + ways_ : nullptr; }

  std::uint32_t ways_, line_bytes_;
  std::unique_ptr<Replacement> policy_;
  std::vector<Line> lines_;
  std::vector<std::uint64_t> kept_;  // per set, its kept ways (bit w)
  // Per set, one run: the tags (line address + 1, 0 for an invalid way: a lookup reads 8 bytes
  // per way), then the policy's words. A miss reads both; they share host cache lines.
  std::size_t set_words_;
  std::vector<std::uint64_t> meta_;
  std::vector<std::uint8_t> data_;
};

}  // namespace dvp::cache
