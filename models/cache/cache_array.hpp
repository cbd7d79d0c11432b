// SPDX-License-Identifier: MIT
// Tags, state and (optionally) bytes of one set-associative cache slice. Plain C++.
#pragma once
#include <cstdint>
#include <memory>

#include "common/time.hpp"
#include "common/zero_pages.hpp"
#include "replacement.hpp"

namespace dvp::cache {

class CacheArray {
 public:
  // `policy` chooses the victims (replacement.hpp).
  CacheArray(std::uint32_t sets, std::uint32_t ways, std::uint32_t line_bytes, std::unique_ptr<Replacement> policy,
             bool with_data);

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
  bool kept(std::uint32_t set, int way) const { return words(set)[kKept] >> way & 1; }
  // Installs line_addr into (set, way); the old content must have been written back.
  void fill(std::uint32_t set, int way, std::uint64_t line_addr, Tick ready);
  // Empties (set, way), dirty or not: its bytes are dropped.
  void invalidate(std::uint32_t set, int way);

  // A way's line: held (a valid tag), written since its fill, and when the fill that brought it
  // in completes.
  bool valid(std::uint32_t set, int way) const { return tags(set)[way] != 0; }
  bool dirty(std::uint32_t set, int way) const { return words(set)[kDirty] >> way & 1; }
  void set_dirty(std::uint32_t set, int way) { words(set)[kDirty] |= 1ull << way; }
  Tick ready(std::uint32_t set, int way) const { return readies(set)[way]; }
  // The full line address (addr >> line bits) a valid way holds.
  std::uint64_t line_addr(std::uint32_t set, int way) const { return tags(set)[way] - 1; }
  std::uint8_t* data(std::uint32_t set, int way) {
    return data_.size() ? data_.data() + (std::size_t(set) * ways_ + way) * line_bytes_ : nullptr;
  }
  bool has_data() const { return data_.size() != 0; }

 private:
  // Per set, one run of words: its dirty and kept ways (bit w), the tags (line address + 1, 0 for
  // an invalid way: a lookup reads 8 bytes per way), the fills' ready times, then the policy's
  // words. A request reads and writes them all; in one run they share host cache lines and the
  // host's prefetcher brings the next. Kept apart, each was one more miss per request: on a large
  // L2 (ascend910's 32 MiB, 3.2 MiB of state) a request's time went to those misses.
  static constexpr std::size_t kDirty = 0, kKept = 1, kHead = 2;
  std::uint64_t* words(std::uint32_t set) {
    return reinterpret_cast<std::uint64_t*>(meta_.data()) + std::size_t(set) * set_words_;
  }
  const std::uint64_t* words(std::uint32_t set) const {
    return reinterpret_cast<const std::uint64_t*>(meta_.data()) + std::size_t(set) * set_words_;
  }
  std::uint64_t* tags(std::uint32_t set) { return words(set) + kHead; }
  const std::uint64_t* tags(std::uint32_t set) const { return words(set) + kHead; }
  std::uint64_t* readies(std::uint32_t set) { return tags(set) + ways_; }
  const std::uint64_t* readies(std::uint32_t set) const { return tags(set) + ways_; }
  // The policy's words of the set (none: nullptr, not the next set's words).
  std::uint64_t* state(std::uint32_t set) { return policy_words_ ? readies(set) + ways_ : nullptr; }

  std::uint32_t ways_, line_bytes_;
  std::unique_ptr<Replacement> policy_;
  std::size_t policy_words_, set_words_;
  // The sets' runs, on zero pages (the tags of an empty cache are zero): none is written at
  // construction. (A vector was: ascend910's 16 slices of 200 KiB took 800 page faults, 3 - 4 ms
  // of every run's set-up. Below 2 MiB, as every shipped L2 slice and CPU cache is, they are the
  // heap's zeroed memory, which the heap does not write while it is fresh.)
  ZeroPages meta_;
  ZeroPages data_;  // zero until written: nothing is written at construction
};

}  // namespace dvp::cache
