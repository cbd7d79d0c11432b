// SPDX-License-Identifier: MIT
// The Arm cores' L1 caches (models/cpu/core_caches): hits, misses, replacement, write-backs and
// the prefetcher, with a memory of fixed latency, so every time is worked out by hand; and the
// hit / miss / write-back counts against a plain LRU model written here for random traffic.
#include <gtest/gtest.h>

#include <list>
#include <random>

#include "cpu/core_caches.hpp"

namespace dvp::cpu {
namespace {

constexpr Tick kLatency = 100000;  // 100 ns per line transfer

struct Transfer {
  bool write;
  std::uint64_t addr;
  Tick at;
  bool operator==(const Transfer& o) const { return write == o.write && addr == o.addr && at == o.at; }
};

struct Bench {
  stats::Registry registry;
  stats::Group group{registry, "test.caches"};
  std::vector<Transfer> log;
  CoreCaches caches;
  explicit Bench(const L1Config& cfg, CoreCaches::Range cacheable = {})
      : caches(
            cfg,
            [this](bool w, std::uint64_t a, std::uint32_t, Tick at) {
              log.push_back({w, a, at});
              return at + kLatency;
            },
            group, cacheable) {}
  std::uint64_t count(const std::string& key) { return group.to_json().at(key).get<std::uint64_t>(); }
};

L1Config small(std::uint32_t prefetch = 0) {
  L1Config c;
  c.icache_bytes = c.dcache_bytes = 1024;  // 4 sets of 4 ways of 64 B
  c.icache_ways = c.dcache_ways = 4;
  c.line_bytes = 64;
  c.prefetch_lines = prefetch;
  return c;
}

TEST(CpuCaches, MissWaitsForTheFillAndAHitCostsNothing) {
  Bench b(small());
  EXPECT_EQ(b.caches.data(false, 0x1008, 8, 5000), 5000 + kLatency);
  EXPECT_EQ(b.log, (std::vector<Transfer>{{false, 0x1000, 5000}}));
  EXPECT_EQ(b.caches.data(false, 0x1030, 8, 200000), 200000u);  // same line, later
  EXPECT_EQ(b.caches.data(true, 0x1000, 4, 300000), 300000u);   // a store to a present line
  EXPECT_EQ(b.count("l1d_misses"), 1u);
  EXPECT_EQ(b.count("l1d_hits"), 2u);
  EXPECT_EQ(b.count("memory_stall_ps"), kLatency);
}

TEST(CpuCaches, AnAccessAcrossTwoLinesFillsBoth) {
  Bench b(small());
  EXPECT_EQ(b.caches.data(false, 0x103c, 8, 0), kLatency);  // 0x103c..0x1043
  EXPECT_EQ(b.log, (std::vector<Transfer>{{false, 0x1000, 0}, {false, 0x1040, 0}}));
  EXPECT_EQ(b.count("l1d_misses"), 2u);
  // A basic block across two lines fetches both.
  EXPECT_EQ(b.caches.fetch(0x2030, 32, 0), kLatency);
  EXPECT_EQ(b.count("l1i_misses"), 2u);
  EXPECT_EQ(b.caches.fetch(0x2030, 32, kLatency), kLatency);
  EXPECT_EQ(b.count("l1i_hits"), 2u);
}

TEST(CpuCaches, LeastRecentlyUsedLineIsEvictedAndDirtyVictimsWrittenBack) {
  Bench b(small());
  // Lines 0, 4, 8, 12, 16 (addresses 256 B apart) all map to set 0 of 4 ways.
  Tick t = 0;
  auto step = [&](bool w, std::uint64_t a) { t = b.caches.data(w, a, 8, t) + 1000; };
  step(true, 0x000);   // A, dirty
  step(false, 0x100);  // B
  step(false, 0x200);  // C
  step(false, 0x300);  // D: the set is full
  step(false, 0x000);  // A again: now B is the least recently used
  b.log.clear();
  const Tick at = t;
  step(false, 0x400);  // E evicts B (clean: no write-back)
  EXPECT_EQ(b.log, (std::vector<Transfer>{{false, 0x400, at}}));
  step(false, 0x200);  // C still there
  EXPECT_EQ(b.log.size(), 1u);
  b.log.clear();
  const Tick at2 = t;
  step(false, 0x100);  // B back: evicts D (LRU after C was used)
  step(false, 0x500);  // F evicts A, which is dirty: written back, posted
  ASSERT_EQ(b.log.size(), 3u);
  EXPECT_EQ(b.log[0], (Transfer{false, 0x100, at2}));
  EXPECT_TRUE(b.log[1].write);
  EXPECT_EQ(b.log[1].addr, 0x000u);
  EXPECT_EQ(b.log[2].addr, 0x500u);
  EXPECT_EQ(b.count("l1d_writebacks"), 1u);
  // The write-back did not delay the load: the core waited for the fill alone.
  EXPECT_EQ(b.count("memory_stall_ps"), 7 * kLatency);  // A B C D E B F
}

TEST(CpuCaches, PrefetcherRunsAheadOfASequentialStream) {
  Bench b(small(2));
  b.caches.data(false, 10 * 64, 4, 0);  // a miss: no stream yet
  EXPECT_EQ(b.log.size(), 1u);
  b.caches.data(false, 11 * 64, 4, 1000);  // the next line misses: a stream, lines 12 and 13 fetched
  EXPECT_EQ(b.log,
            (std::vector<Transfer>{{false, 640, 0}, {false, 704, 1000}, {false, 768, 1000}, {false, 832, 1000}}));
  // Line 12 is on its way: the load waits for the rest of its fill, and the prefetcher moves on to 14.
  EXPECT_EQ(b.caches.data(false, 12 * 64 + 8, 4, 50000), 1000 + kLatency);
  EXPECT_EQ(b.log.back(), (Transfer{false, 14 * 64, 50000}));
  // Line 13 arrived: a plain hit, and line 15 is fetched.
  EXPECT_EQ(b.caches.data(false, 13 * 64, 4, 200000), 200000u);
  EXPECT_EQ(b.log.back(), (Transfer{false, 15 * 64, 200000}));
  EXPECT_EQ(b.count("l1d_prefetches"), 4u);
  EXPECT_EQ(b.count("l1d_prefetch_hits"), 2u);
  EXPECT_EQ(b.count("l1d_misses"), 2u);
}

TEST(CpuCaches, PrefetcherStopsAtTheEndOfTheCacheableMemory) {
  // 1 KiB of memory at 0x8000 (lines 0x200..0x20f): a stream at its last lines prefetches only
  // what lies inside; a fetch past the end would fail in the ring and stop the core.
  Bench b(small(2), CoreCaches::Range{0x8000, 1024});
  b.caches.data(false, 0x8000 + 13 * 64, 4, 0);
  b.caches.data(false, 0x8000 + 14 * 64, 4, 1000);  // a stream: lines 15 and 16 wanted, 15 exists
  EXPECT_EQ(b.log,
            (std::vector<Transfer>{
                {false, 0x8000 + 13 * 64, 0}, {false, 0x8000 + 14 * 64, 1000}, {false, 0x8000 + 15 * 64, 1000}}));
  EXPECT_EQ(b.count("l1d_prefetches"), 1u);
}

TEST(CpuCaches, AccessThatMayNotIssueChangesNothingWhenItNeedsMemory) {
  Bench b(small(1));
  EXPECT_EQ(b.caches.data(false, 0x40, 4, 0, false), CoreCaches::kNeedsMemory);
  EXPECT_EQ(b.caches.fetch(0x80, 16, 0, false), CoreCaches::kNeedsMemory);
  EXPECT_TRUE(b.log.empty());
  EXPECT_EQ(b.count("l1d_misses") + b.count("l1d_hits") + b.count("l1i_misses"), 0u);
  EXPECT_EQ(b.caches.data(false, 0x40, 4, 0), kLatency);                // made again, allowed
  EXPECT_EQ(b.caches.data(false, 0x44, 4, kLatency, false), kLatency);  // a hit needs no memory
  // A prefetched line's first use would start a prefetch: that too waits.
  b.caches.data(false, 0x80, 4, kLatency);  // lines 1, 2 miss in a row: line 3 prefetched
  EXPECT_EQ(b.log.back().addr, 0xc0u);
  EXPECT_EQ(b.caches.data(false, 0xc0, 4, 10 * kLatency, false), CoreCaches::kNeedsMemory);
}

// An independent model: each set a list, most recent first.
struct ReferenceLru {
  std::uint32_t sets, ways;
  std::vector<std::list<std::pair<std::uint64_t, bool>>> lru;  // line, dirty
  std::uint64_t hits = 0, misses = 0, writebacks = 0;
  ReferenceLru(std::uint32_t s, std::uint32_t w) : sets(s), ways(w), lru(s) {}
  void access(std::uint64_t line, bool write) {
    auto& l = lru[line % sets];
    for (auto it = l.begin(); it != l.end(); ++it)
      if (it->first == line) {
        ++hits;
        const bool dirty = it->second || write;
        l.erase(it);
        l.push_front({line, dirty});
        return;
      }
    ++misses;
    if (l.size() == ways) {
      writebacks += l.back().second;
      l.pop_back();
    }
    l.push_front({line, write});
  }
};

TEST(CpuCaches, CountsMatchAPlainLruModelOnRandomTraffic) {
  for (std::uint32_t ways : {1u, 2u, 4u, 8u}) {
    L1Config c = small();
    c.dcache_bytes = 4096;
    c.dcache_ways = ways;
    Bench b(c);
    ReferenceLru ref(4096 / 64 / ways, ways);
    std::mt19937_64 rng(ways);
    Tick t = 0;
    std::uint64_t accesses_that_missed = 0;
    for (int i = 0; i < 20000; ++i) {
      // A mix of a hot region (hits), a wider one (conflicts) and sequential runs.
      const std::uint64_t addr = i % 7 == 0   ? (rng() % 64) * 8
                                 : i % 3 == 0 ? rng() % 32768
                                              : 0x10000 + std::uint64_t(i) * 12;
      const unsigned size = 1u << (rng() % 4);
      const bool write = rng() % 4 == 0;
      const std::uint64_t before = ref.misses;
      for (std::uint64_t line = addr / 64; line <= (addr + size - 1) / 64; ++line) ref.access(line, write);
      accesses_that_missed += ref.misses != before;
      t = b.caches.data(write, addr, size, t) + 500;
    }
    EXPECT_EQ(b.count("l1d_hits"), ref.hits) << ways << " ways";
    EXPECT_EQ(b.count("l1d_misses"), ref.misses) << ways << " ways";
    EXPECT_EQ(b.count("l1d_writebacks"), ref.writebacks) << ways << " ways";
    // An access waits for its fills, issued together: one latency per access that missed.
    EXPECT_EQ(b.count("memory_stall_ps"), accesses_that_missed * kLatency) << ways << " ways";
  }
}

}  // namespace
}  // namespace dvp::cpu
