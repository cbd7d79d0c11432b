// SPDX-License-Identifier: MIT
// A core's private L1 caches (instruction and data) as the timing model sees them: tags and
// state only. The data stays where the emulator reads it (DRAM's backing store, by direct
// pointer), so every value is the one in memory; what the caches decide is what an access
// costs: a hit costs nothing beyond the instruction's cycles (cpi), a miss waits for a line
// fill through the ring, L2 and DRAM, and a dirty victim is written back (posted: the core
// does not wait for it). Write-back, write-allocate, LRU replacement.
//
// A next-line prefetcher (`prefetch_lines` > 0), as Arm's small cores have: a demand miss that
// follows a miss on the line before starts a stream, and the cache fetches that many lines
// ahead of it; each first use of a prefetched line fetches one more. A prefetched line that
// is still on its way costs the wait for the rest of its fill. Prefetches stay inside the
// cacheable memory: a speculative fetch past its end is never made (it could only fail).
//
// Plain C++: `memory` carries a fill or write-back to the memory system (the core's ring
// socket in the platform, a fixed latency in the unit tests) and returns when it completes.
// A caller that must not send traffic at this moment (a core too far ahead of the rest of the
// SoC: see ArmCpu) passes may_issue = false: an access that needs none is done as usual, one
// that would need some returns kNeedsMemory and changes nothing, to be made again later.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "cache/cache_array.hpp"
#include "common/stats.hpp"
#include "common/time.hpp"

namespace dvp::cpu {

struct L1Config {
  bool timing = true;  // false: memory costs nothing (the caches are not built)
  std::uint32_t icache_bytes = 32768, icache_ways = 4;
  std::uint32_t dcache_bytes = 32768, dcache_ways = 4;
  std::uint32_t line_bytes = 64;
  std::uint32_t prefetch_lines = 0;
};

struct CacheableRange {
  std::uint64_t base = 0, size = ~std::uint64_t(0);
};

class CoreCaches {
 public:
  // A transfer of one line at time `at`; returns when its data is there (read) or it is
  // accepted (write).
  using Memory = std::function<Tick(bool write, std::uint64_t addr, std::uint32_t bytes, Tick at)>;

  // The memory the caches hold lines of (the DRAM window).
  using Range = CacheableRange;
  // Counters go into `stats` (the core's group).
  CoreCaches(const L1Config& cfg, Memory memory, stats::Group& stats, Range cacheable = {});

  static constexpr Tick kNeedsMemory = kTickMax;
  Tick stall() const { return stall_ps_; }  // time the core waited for fills so far

  // A load or store of `size` bytes at `addr` issued at `at`; returns when the core can go on.
  Tick data(bool write, std::uint64_t addr, unsigned size, Tick at, bool may_issue = true) {
    const std::uint64_t line = addr >> shift_;
    if (((addr + size - 1) >> shift_) == line && d_.is_mru(line, at, write)) {
      ++*d_.hits;
      return at;
    }
    return lines(d_, addr, size, write, at, may_issue);
  }
  // The instructions of a basic block [addr, addr + bytes) fetched at `at`.
  Tick fetch(std::uint64_t addr, std::uint32_t bytes, Tick at, bool may_issue = true) {
    const std::uint64_t first = addr >> shift_, last = (addr + bytes - 1) >> shift_;
    if (i_.is_mru(first, at, false) && (last == first || (last == first + 1 && i_.is_mru(last, at, false)))) {
      *i_.hits += 1 + (last - first);
      return at;
    }
    return lines(i_, addr, bytes, false, at, may_issue);
  }

 private:
  struct Side {
    cache::CacheArray tags;
    std::uint32_t sets, ways;
    std::uint64_t *hits, *misses;
    std::vector<std::uint8_t> prefetched;  // per way: brought in by the prefetcher, not yet used
    // Per set, the line a demand access used last, which is the most recent in its set: using
    // it again changes no replacement order, so it is a hit with nothing to update (a loop's
    // code, a stack frame, a sequential scan). Cleared when anything else in the set is used.
    struct Mru {
      std::uint64_t line = ~0ull;
      Tick ready = 0;
      bool dirty = false;
    };
    std::vector<Mru> mru;
    Side(std::uint32_t bytes, std::uint32_t ways, std::uint32_t line, std::uint64_t& hits, std::uint64_t& misses);
    // `line` is its set's most recent, ready at `at` (and dirty, for a write): a plain hit.
    bool is_mru(std::uint64_t line, Tick at, bool write) const {
      const Mru& m = mru[line & (sets - 1)];
      return m.line == line && at >= m.ready && (m.dirty || !write);
    }
  };
  // Every line of [addr, addr + bytes) on one side.
  Tick lines(Side& s, std::uint64_t addr, std::uint64_t bytes, bool write, Tick at, bool may_issue);
  // Whether accessing `line` would send traffic (a fill, or a prefetch its first use starts).
  bool needs_memory(const Side& s, std::uint64_t line) const;
  // One line's access; returns when its data is there.
  Tick access(Side& s, std::uint64_t line, bool write, Tick at);
  // Brings `line` into its set (a demand fill or a prefetch) at `at`; returns its way.
  int fill(Side& s, std::uint32_t set, std::uint64_t line, Tick at);
  void prefetch(std::uint64_t line, Tick at);

  L1Config cfg_;
  Memory memory_;
  Range cacheable_;
  unsigned shift_;
  std::uint64_t &writebacks_, &prefetches_, &prefetch_hits_, &stall_ps_;
  Side i_, d_;
  std::uint64_t last_miss_ = ~0ull;  // the data side's latest demand miss (stream detection)
};

}  // namespace dvp::cpu
