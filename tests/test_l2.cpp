// SPDX-License-Identifier: MIT
// L2 slice timing and behaviour against a fixed-latency memory, with hand-worked times.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>
#include <string>
#include <tuple>

#include "cache/l2_slice.hpp"
#include "common/payload.hpp"
#include "common/system.hpp"
#include "helpers.hpp"
#include "stimulus.hpp"

using namespace dvp;
using namespace dvp::cache;
using test::FixedMemory;
using test::Stimulus;

namespace {

// One slice of 4 sets x 2 ways x 128 B, 1 GHz, hit 10 cycles, 32 B/cycle port.
L2Config small(const char* replacement = "lru", unsigned mshrs = 4, const char* persist_fraction = "0") {
  cfg::Node p = test::preset_platform(
      "ascend310",
      {"platform.l2.slices=1", "platform.l2.size_kib=1", "platform.l2.ways=2", "platform.l2.line_bytes=128",
       "platform.l2.clock_mhz=1000", "platform.l2.hit_cycles=10", "platform.l2.bytes_per_cycle=32",
       std::string("platform.l2.replacement=") + replacement, "platform.l2.mshrs=" + std::to_string(mshrs),
       "platform.l2.writeback_buffers=2", std::string("platform.l2.persist_fraction=") + persist_fraction});
  return L2Config::from(p.at("l2"));
}

constexpr Tick kNs = 1000;
constexpr Tick kMemLat = 100 * kNs;

struct Bench {
  L2Slice l2;
  FixedMemory mem{"mem", kMemLat};
  Stimulus st{"st"};
  explicit Bench(const L2Config& c, unsigned index = 0, bool functional = true)
      : l2(("hn" + std::to_string(index)).c_str(), c, index, functional) {
    st.socket.bind(l2.target);
    l2.memory.bind(mem.socket);
  }
};

// A read of `len` bytes at addr marked M... (a stash: a preload's request, a stash to persist: a
// prefetch's, a discard, a read that does not allocate), `after` past the stimulus's time;
// returns the delay of its answer. A stash and a discard carry no data: their buf must stay
// untouched.
template <class... M>
Tick marked_read(Stimulus& s, std::uint64_t addr, std::uint8_t* buf, unsigned len = 128, Tick after = 0) {
  static std::tuple<M...> ext;
  tlm::tlm_generic_payload p;
  (p.set_extension(&std::get<M>(ext)), ...);
  prepare(p, false, addr, buf, len);
  sc_core::sc_time d = to_sc(after);
  s.socket->b_transport(p, d);
  EXPECT_EQ(p.get_response_status(), tlm::TLM_OK_RESPONSE);
  (p.clear_extension(&std::get<M>(ext)), ...);
  return to_tick(d);
}

}  // namespace

TEST(L2Slice, HitCostsItsConfiguredLatencyAndMissAddsMemory) {
  L2Config c = small();
  Bench b(c);
  Tick miss = 0, hit = 0;
  std::uint8_t buf[64];
  b.st.body = [&](Stimulus& s) {
    miss = s.access(false, 0x1000, buf, 64);
    hit = s.access(false, 0x1040, buf, 64);  // same line
  };
  sc_core::sc_start();
  // Miss: tag lookup (hit_cycles), line fill from memory, then 64 B over the 32 B/cycle port.
  EXPECT_EQ(miss, 10 * kNs + kMemLat + 2 * kNs);
  // Hit: exactly hit_cycles (the port transfer overlaps the access).
  EXPECT_EQ(hit, 10 * kNs);
  EXPECT_EQ(b.l2.hits(), 1u);
  EXPECT_EQ(b.l2.misses(), 1u);
  EXPECT_EQ(b.mem.reads, 1u);
}

TEST(L2Slice, DirtyEvictionWritesTheLineBackAndDataSurvives) {
  L2Config c = small();
  Bench b(c);
  // Three lines in the same set (4 sets x 128 B: addresses 512 B apart) with 2 ways.
  std::uint8_t w[128], r[128];
  for (int i = 0; i < 128; ++i) w[i] = std::uint8_t(0xA0 ^ i);
  b.st.body = [&](Stimulus& s) {
    s.access(true, 0x0000, w, 128);  // full-line write: allocates without a fill
    s.access(false, 0x0200, r, 64);
    s.access(false, 0x0400, r, 64);   // evicts 0x0000 (LRU), dirty: written back
    s.access(false, 0x0000, r, 128);  // miss again: refilled from memory
  };
  sc_core::sc_start();
  EXPECT_EQ(b.l2.writebacks(), 1u);
  EXPECT_EQ(b.l2.evictions(), 2u);  // 0x0000 by 0x0400, then 0x0200 by 0x0000
  EXPECT_EQ(b.mem.writes, 1u);
  EXPECT_EQ(b.mem.reads, 3u);  // 0x200, 0x400, 0x000 again; none for the full-line write
  EXPECT_EQ(0, std::memcmp(w, r, 128));
  for (int i = 0; i < 128; ++i) EXPECT_EQ(b.mem.bytes[i], w[i]);
}

TEST(L2Slice, InvalidateDropsTheLinesOfItsRangesDirtyOrNotAndKeepsTheRest) {
  System sys;  // a read of a line still marked discarded would be the system's failure
  System::Scope scope(sys);
  L2Config c = small();
  Bench b(c);
  // Four lines, one per set; 0x080 and 0x180 written whole (dirty).
  std::uint8_t w[128], r[128], r80[128], scratch[128];
  std::memset(w, 0x5A, sizeof w);
  std::uint64_t before_fill = 1, one = 0, scanned = 0, misses_before = 0;
  b.st.body = [&](Stimulus& s) {
    s.pause(marked_read<Discard>(s, 0x280, scratch));  // marks 0x280, never here
    before_fill = b.l2.invalidate({{0x280, 0x300}});   // nothing filled yet: forgets the mark only
    s.access(false, 0x000, r, 64);
    s.access(true, 0x080, w, 128);
    s.access(false, 0x100, r, 64);
    s.access(true, 0x180, w, 128);
    s.pause(marked_read<Discard>(s, 0x300, scratch));  // marks 0x300, never here
    // One line: looked up where it would be (the dirty 0x080). Then [0x0ff, 0x101) rounds out to
    // 0x080 (gone now) and 0x100, and with [0x300, 0x1000) is more lines than the slice holds: a
    // scan of the tags drops 0x100 and forgets 0x300's mark.
    one = b.l2.invalidate({{0x080, 0x081}});
    scanned = b.l2.invalidate({{0x0ff, 0x101}, {0x300, 0x1000}});
    misses_before = b.l2.misses();
    s.access(false, 0x000, r, 128);
    s.access(false, 0x080, r80, 128);
    s.access(false, 0x100, r, 128);
    s.access(false, 0x280, scratch, 128);
    s.access(false, 0x300, scratch, 128);
    s.access(false, 0x180, r, 128);
  };
  sc_core::sc_start();
  EXPECT_EQ(before_fill, 0u);
  EXPECT_EQ(one, 1u);
  EXPECT_EQ(scanned, 1u);
  EXPECT_EQ(sys.failure(), "");                  // 0x280 and 0x300 were read as any line
  EXPECT_EQ(b.l2.misses() - misses_before, 4u);  // 0x080, 0x100 (dropped), 0x280, 0x300
  EXPECT_EQ(b.mem.writes, 0u);                   // the dirty 0x080 was dropped, not written back
  // 0x080 reads memory's bytes now (never written: zeros); 0x180 (still here, dirty) what was
  // written.
  for (int i = 0; i < 128; ++i) EXPECT_EQ(r80[i], 0) << i;
  EXPECT_EQ(0, std::memcmp(w, r, 128));
}

TEST(L2Slice, InvalidateLooksALineUpInItsOwnSliceAmongANonPowerOfTwoCount) {
  // Slice 1 of 3 (4 sets x 2 ways x 128 B each): its lines are those whose line address is 1
  // modulo 3, in set line / 3.
  cfg::Node p =
      test::preset_platform("ascend310", {"platform.l2.slices=3", "platform.l2.size_kib=3", "platform.l2.ways=2",
                                          "platform.l2.line_bytes=128", "platform.l2.clock_mhz=1000",
                                          "platform.l2.hit_cycles=10", "platform.l2.bytes_per_cycle=32"});
  const L2Config c = L2Config::from(p.at("l2"));
  Bench b(c, 1);
  std::uint8_t w[128];
  std::memset(w, 0x5A, sizeof w);
  std::uint64_t own = 0, other = 0, scanned = 0;
  b.st.body = [&](Stimulus& s) {
    for (std::uint64_t line : {1, 4, 7, 10}) s.access(true, line * 128, w, 128);  // sets 0 - 3, dirty
    own = b.l2.invalidate({{4 * 128, 5 * 128}});                                  // one line: looked up, in set 1
    other = b.l2.invalidate({{3 * 128, 4 * 128}});  // one line of slice 0: not this slice's
    scanned = b.l2.invalidate({{0, 12 * 128}});     // twelve lines: a scan finds 1, 7 and 10
  };
  sc_core::sc_start();
  EXPECT_EQ(own, 1u);
  EXPECT_EQ(other, 0u);
  EXPECT_EQ(scanned, 3u);
  EXPECT_EQ(b.mem.writes, 0u);
}

// overlay() is a debug read in bulk: memory's bytes, then the slice's lines over them, must read
// as the last bytes written (0 where none was), dirty lines not yet written back included. Random
// writes (whole lines and parts) and reads over eight times the slice's lines, then ranges from
// one byte to the whole region: short ones take the lookups, long ones the scan of the tags.
void overlay_reads_last_written(unsigned slices) {
  cfg::Node p = test::preset_platform(
      "ascend310", {"platform.l2.slices=" + std::to_string(slices), "platform.l2.size_kib=" + std::to_string(slices),
                    "platform.l2.ways=2", "platform.l2.line_bytes=128", "platform.l2.clock_mhz=1000"});
  const L2Config c = L2Config::from(p.at("l2"));
  const unsigned index = slices == 1 ? 0 : 1;
  Bench b(c, index);
  constexpr std::uint64_t kRegion = 8 * 1024;  // 64 lines; the slice holds 8
  std::vector<std::uint8_t> shadow(kRegion, 0);
  std::mt19937 rng(7 + slices);
  const SliceHash hash(slices, 128);
  const auto own = [&](std::uint64_t addr) { return hash.slice(addr) == index; };
  std::uint8_t buf[128];
  b.st.body = [&](Stimulus& s) {
    for (int n = 0; n < 400; ++n) {
      std::uint64_t line;
      do line = rng() % (kRegion / 128);
      while (!own(line * 128));
      const unsigned off = rng() % 2 ? 0 : rng() % 128, len = off ? 1 + rng() % (128 - off) : 128;
      const std::uint64_t addr = line * 128 + off;
      if (rng() % 3) {
        for (unsigned i = 0; i < len; ++i) buf[i] = shadow[addr + i] = std::uint8_t(rng());
        s.access(true, addr, buf, len);
      } else {
        s.access(false, addr, buf, len);
      }
    }
  };
  sc_core::sc_start();
  EXPECT_GT(b.mem.writes, 0u);  // lines were written back: memory holds some of the bytes
  for (int n = 0; n < 200; ++n) {
    const std::uint64_t lo = n == 0 ? 0 : rng() % kRegion;
    const std::uint64_t hi =
        n == 0 ? kRegion : lo + 1 + rng() % (n % 2 ? std::min<std::uint64_t>(300, kRegion - lo) : kRegion - lo);
    std::vector<std::uint8_t> out(hi - lo + 256, 0xEE);  // 128 guard bytes on each side
    for (std::uint64_t a = lo; a < hi; ++a) out[a - lo + 128] = b.mem.bytes.count(a) ? b.mem.bytes[a] : 0;
    b.l2.overlay(lo, hi, out.data() + 128);
    for (std::uint64_t a = lo; a < hi; ++a)
      ASSERT_EQ(out[a - lo + 128], own(a) ? shadow[a] : 0)
          << slices << " slices, [" << lo << ", " << hi << ") at " << a;
    for (std::uint64_t g = 0; g < 128; ++g) {
      ASSERT_EQ(out[g], 0xEE) << "written before the range";
      ASSERT_EQ(out[out.size() - 1 - g], 0xEE) << "written past the range";
    }
  }
}

TEST(L2Slice, OverlayReadsWhatWasLastWrittenOverMemorysBytes) { overlay_reads_last_written(1); }

// A slice of a non-power-of-two count (1 of 3: line modulo 3) or of four (the XOR hash) is given
// only its own lines, and leaves the others' bytes as memory has them.
TEST(L2Slice, OverlayOfOneSliceAmongThreeWritesOnlyItsOwnLines) { overlay_reads_last_written(3); }
TEST(L2Slice, OverlayOfOneSliceAmongFourWritesOnlyItsOwnLines) { overlay_reads_last_written(4); }

// A slice built for a timing-only run keeps tags but no bytes: its lines are not the data (a debug
// read goes to memory for them), so overlay leaves memory's bytes as they are.
TEST(L2Slice, OverlayOfASliceWithoutBytesLeavesMemorysBytes) {
  Bench b(small(), 0, false);
  std::uint8_t buf[128];
  b.st.body = [&](Stimulus& s) {
    for (std::uint64_t addr : {0x000, 0x080, 0x100}) marked_read<TimingOnly>(s, addr, buf);
  };
  sc_core::sc_start();
  EXPECT_EQ(b.l2.misses(), 3u);  // the lines are in: their tags
  std::vector<std::uint8_t> out(0x180, 0x5A);
  b.l2.overlay(0, 0x180, out.data());
  EXPECT_EQ(out, std::vector<std::uint8_t>(0x180, 0x5A));
}

TEST(L2Slice, LruKeepsTheRecentlyUsedLine) {
  L2Config c = small("lru");
  Bench b(c);
  std::uint8_t r[64];
  b.st.body = [&](Stimulus& s) {
    s.access(false, 0x0000, r, 64);
    s.access(false, 0x0200, r, 64);
    s.access(false, 0x0000, r, 64);  // 0x0000 is now most recent
    s.access(false, 0x0400, r, 64);  // evicts 0x0200
    s.access(false, 0x0000, r, 64);  // still a hit
  };
  sc_core::sc_start();
  EXPECT_EQ(b.l2.hits(), 2u);
  EXPECT_EQ(b.l2.misses(), 3u);
}

TEST(CacheArray, LruAndFifoChooseTheirVictimsPerSet) {
  // The policy's words sit beside each set's tags: a use in one set must move only that set's
  // victim, LRU's and not FIFO's.
  auto victims = [](const char* policy) {
    CacheArray a(4, 4, 128, (*replacement_policies().find(policy))(Geometry{4, 1}), false);
    for (std::uint32_t set = 0; set < 4; ++set)
      for (int w = 0; w < 4; ++w) a.fill(set, a.victim(set), 100 * set + std::uint64_t(w), 0);
    a.touch(2, a.lookup(2, 200));  // set 2's oldest line, used again
    std::vector<int> v;
    for (std::uint32_t set = 0; set < 4; ++set) v.push_back(a.victim(set));
    EXPECT_EQ(a.line_addr(2, 1), 201u);
    return v;
  };
  EXPECT_EQ(victims("lru"), (std::vector<int>{0, 0, 1, 0}));
  EXPECT_EQ(victims("fifo"), (std::vector<int>{0, 0, 0, 0}));
}

TEST(CacheArray, EachWayKeepsItsOwnReadyTimeDirtyAndKeptBitsBesideItsSetsNeighbours) {
  // A set's state is one run of words (dirty and kept bits, tags, ready times, the policy's): a
  // write to one way of one set must show in that way alone, with 64 ways (every bit of a mask)
  // and with a policy of no words (random) as well as one of one word per way (lru).
  for (const char* policy : {"lru", "random"}) {
    for (std::uint32_t ways : {3u, 64u}) {
      SCOPED_TRACE(std::string(policy) + ", " + std::to_string(ways) + " ways");
      CacheArray a(3, ways, 64, (*replacement_policies().find(policy))(Geometry{ways, 1}), false);
      auto ready = [&](std::uint32_t set, int w) { return Tick(1000 * set + std::uint64_t(w) + 1); };
      for (std::uint32_t set = 0; set < 3; ++set)
        for (int w = 0; w < int(ways); ++w) a.fill(set, w, 10'000 * set + std::uint64_t(w), ready(set, w));
      a.set_dirty(1, 0), a.set_dirty(1, int(ways) - 1), a.keep(1, int(ways) - 1, true);
      for (std::uint32_t set = 0; set < 3; ++set)
        for (int w = 0; w < int(ways); ++w) {
          EXPECT_TRUE(a.valid(set, w));
          EXPECT_EQ(a.ready(set, w), ready(set, w));
          EXPECT_EQ(a.line_addr(set, w), 10'000 * set + std::uint64_t(w));
          EXPECT_EQ(a.lookup(set, 10'000 * set + std::uint64_t(w)), w);
          const bool marked = set == 1 && (w == 0 || w == int(ways) - 1);
          EXPECT_EQ(a.dirty(set, w), marked) << "set " << set << " way " << w;
          EXPECT_EQ(a.kept(set, w), set == 1 && w == int(ways) - 1) << "set " << set << " way " << w;
        }
      EXPECT_EQ(a.kept(1), 1u);
      a.invalidate(1, int(ways) - 1);  // gone: not valid, not dirty, not kept, not ready
      EXPECT_FALSE(a.valid(1, int(ways) - 1));
      EXPECT_FALSE(a.dirty(1, int(ways) - 1));
      EXPECT_EQ(a.kept(1), 0u);
      EXPECT_EQ(a.ready(1, int(ways) - 1), 0u);
      EXPECT_TRUE(a.dirty(1, 0));
      a.fill(1, 0, 7, 5);  // a fill starts clean
      EXPECT_FALSE(a.dirty(1, 0));
      EXPECT_EQ(a.ready(1, 0), 5u);
    }
  }
}

TEST(L2Slice, RandomReplacementIsDeterministicForASeed) {
  // Same seed, same sequence of victims: the hit count of a thrashing pattern repeats.
  auto run = [] {
    CacheArray a(1, 4, 128, (*replacement_policies().find("random"))(Geometry{4, 7}), false);
    std::vector<int> victims;
    for (int i = 0; i < 4; ++i) a.fill(0, a.victim(0), i, 0);
    for (int i = 0; i < 32; ++i) victims.push_back(a.victim(0));
    return victims;
  };
  auto v1 = run(), v2 = run();
  EXPECT_EQ(v1, v2);
  std::set<int> distinct(v1.begin(), v1.end());
  EXPECT_GT(distinct.size(), 1u);  // not always the same way
}

TEST(L2Slice, MissesBeyondTheMshrCountWait) {
  L2Config c = small("lru", 2);
  Bench b(c);
  std::uint8_t r[3][64];
  Tick done[3];
  b.st.body = [&](Stimulus& s) {
    // Three misses to different sets issued at once: the third needs an MSHR, and the first
    // frees at its fill (10 ns tag + 100 ns memory).
    for (int i = 0; i < 3; ++i) done[i] = s.post(false, 0x80 * i, r[i], 64);
  };
  sc_core::sc_start();
  EXPECT_EQ(done[0], 10 * kNs + kMemLat + 2 * kNs);
  EXPECT_EQ(done[2], (10 * kNs + kMemLat) + kMemLat + 2 * kNs);
}

TEST(L2Slice, AHitOnALineStillBeingFilledWaitsForTheFill) {
  L2Config c = small();
  Bench b(c);
  std::uint8_t r[64];
  Tick first = 0, second = 0;
  b.st.body = [&](Stimulus& s) {
    first = s.post(false, 0x1000, r, 64);
    second = s.post(false, 0x1040, r, 64, 5 * kNs);
  };
  sc_core::sc_start();
  EXPECT_EQ(b.mem.reads, 1u);
  // The fill lands once; the second request takes its data from it right after the first,
  // through the same port (64 B at 32 B/cycle).
  EXPECT_EQ(second, first + 2 * kNs);
}

TEST(L2Slice, AStashFillsTheLineWithoutDataAndALaterReadHits) {
  L2Config c = small();
  Bench b(c);
  std::uint8_t scratch[128], r[64];
  std::memset(scratch, 0x55, sizeof scratch);
  b.mem.bytes[0x1000] = 0x7e;
  Tick stashed = 0, again = 0, hit = 0;
  b.st.body = [&](Stimulus& s) {
    stashed = marked_read<Stash>(s, 0x1000, scratch);
    s.pause(stashed);
    again = marked_read<Stash>(s, 0x1000, scratch);  // the line is in: the stash answers at the lookup
    s.pause(again);
    hit = s.access(false, 0x1000, r, 64);
  };
  sc_core::sc_start();
  // The stash: tag lookup (10 cycles), then the fill from memory; no port time, no data back.
  EXPECT_EQ(stashed, 10 * kNs + kMemLat);
  EXPECT_EQ(again, 10 * kNs);
  EXPECT_EQ(hit, 10 * kNs);
  EXPECT_EQ(scratch[0], 0x55);  // the stash's buffer is untouched: the data stays in the L2
  EXPECT_EQ(r[0], 0x7e);        // the read has the filled line's data
  EXPECT_EQ(b.mem.reads, 1u);
  EXPECT_EQ(b.l2.hits(), 1u);  // stashes are not requests: the read's hit alone
  EXPECT_EQ(b.l2.misses(), 0u);
}

TEST(L2Slice, AStashToPersistKeepsItsLineUntilARequesterUsesIt) {
  // persist_fraction 0.5: 1 way of the 2; 0x0000, stashed to persist, outlives two newer lines of its set;
  // a second such stash in the set (0x0200) is not kept; once 0x0000 is read, LRU takes it again.
  Bench b(small("lru", 4, "0.5"));
  std::uint8_t scratch[128], r[64];
  auto stash = [&](Stimulus& s, std::uint64_t addr) { s.pause(marked_read<Stash, Persist>(s, addr, scratch)); };
  std::vector<std::uint64_t> hits;  // the slice's hit count after each step
  b.st.body = [&](Stimulus& s) {
    auto read = [&](std::uint64_t a) {
      s.pause(s.access(false, a, r, 64));
      hits.push_back(b.l2.hits());
    };
    stash(s, 0x0000);
    stash(s, 0x0200);  // the set keeps one line: this one is an ordinary line
    read(0x0400);      // evicts 0x0200, the oldest line not kept
    read(0x0600);      // evicts 0x0400
    read(0x0000);      // a hit: it was kept; now an ordinary line, the most recent
    read(0x0400);      // evicts 0x0600
    read(0x0600);      // evicts 0x0000 (LRU again)
    read(0x0000);      // a miss
  };
  sc_core::sc_start();
  EXPECT_EQ(hits, (std::vector<std::uint64_t>{0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(b.l2.misses(), 5u);
  EXPECT_EQ(b.l2.kept_stashes(), 1u);
}

TEST(L2Slice, AStashToPersistOfALineAlreadyHereIsNotKeptAndAWriteReleasesAKeptOne) {
  Bench b(small("lru", 4, "0.5"));
  std::uint8_t scratch[128], r[64] = {};
  std::vector<std::uint64_t> hits;  // the slice's hit count after each read
  b.st.body = [&](Stimulus& s) {
    auto read = [&](std::uint64_t a) {
      s.pause(s.access(false, a, r, 64));
      hits.push_back(b.l2.hits());
    };
    auto stash = [&](std::uint64_t a) { s.pause(marked_read<Stash, Persist>(s, a, scratch)); };
    // Set 0: its reader brought 0x0000 in before the prefetch came: not kept, LRU takes it.
    read(0x0000);
    stash(0x0000);
    read(0x0400);
    read(0x0600);  // evicts 0x0000, the least recent
    read(0x0000);  // a miss
    // Set 1: 0x0080 kept, then written: an ordinary line again, the least recent one.
    stash(0x0080);
    s.pause(s.access(true, 0x0080, r, 64));  // a hit
    read(0x0280);
    read(0x0480);  // evicts 0x0080 (written back)
    read(0x0080);  // a miss
    // Set 2: a discard of the kept 0x0100 frees the set's one way to keep: 0x0300 is kept.
    stash(0x0100);
    (void)marked_read<Discard>(s, 0x0100, scratch);
    stash(0x0300);
  };
  sc_core::sc_start();
  EXPECT_EQ(hits, (std::vector<std::uint64_t>{0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(b.l2.kept_stashes(), 3u);
}

TEST(L2Config, PersistFractionIsWaysRoundedDownLeavingOneForOtherLines) {
  const auto ways = [](const char* ways, const char* fraction) {
    cfg::Node p = test::preset_platform("ascend310", {std::string("platform.l2.ways=") + ways,
                                                      std::string("platform.l2.persist_fraction=") + fraction});
    return L2Config::from(p.at("l2")).persist_ways;
  };
  EXPECT_EQ(ways("16", "0.5"), 8u);
  EXPECT_EQ(ways("16", "0.3"), 4u);  // 4.8
  EXPECT_EQ(ways("16", "1"), 15u);
  EXPECT_EQ(ways("2", "0.5"), 1u);
  EXPECT_EQ(ways("1", "0.5"), 0u);
  EXPECT_EQ(ways("16", "0"), 0u);
}

TEST(CacheArray, TheReplacementPassesOverKeptWaysUnlessAllAre) {
  for (const char* policy : {"lru", "fifo", "random"}) {
    CacheArray a(1, 4, 128, (*replacement_policies().find(policy))(Geometry{4, 3}), false);
    for (int w = 0; w < 4; ++w) a.fill(0, a.victim(0), std::uint64_t(w), 0);
    a.keep(0, 0, true), a.keep(0, 2, true), a.keep(0, 3, true);
    EXPECT_EQ(a.kept(0), 3u);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(a.victim(0), 1) << policy;
    a.keep(0, 1, true);  // every way kept: the policy chooses among all (lru, fifo: the oldest)
    std::set<int> seen;
    for (int i = 0; i < 32; ++i) seen.insert(a.victim(0));
    if (std::string(policy) == "random")
      EXPECT_GT(seen.size(), 1u);
    else
      EXPECT_EQ(seen, std::set<int>{0}) << policy;
    a.fill(0, 2, 9, 0);  // a fill releases the way
    EXPECT_EQ(a.kept(0), 3u);
    EXPECT_FALSE(a.kept(0, 2));
  }
}

TEST(CacheArray, TheRandomPolicyDrawsFromEverySeedOneDrawPerVictim) {
  // The seed whose start state is 0 (xorshift stays there): before, way 0 for ever; with way 0
  // kept, no way at all.
  const std::uint64_t zero = 1018231460777725123ull;
  ASSERT_EQ(zero * 0x9E3779B97F4A7C15ull + 1, 0u);
  CacheArray a(1, 4, 128, (*replacement_policies().find("random"))(Geometry{4, zero}), false);
  for (int w = 0; w < 4; ++w) a.fill(0, a.victim(0), std::uint64_t(w), 0);
  a.keep(0, 0, true);
  std::set<int> seen;
  for (int i = 0; i < 64; ++i) seen.insert(a.victim(0));
  EXPECT_EQ(seen, (std::set<int>{1, 2, 3}));
  // One xorshift64 draw per victim: the (draw mod the ways not kept)-th of them, against the
  // generator written out here.
  CacheArray kept(1, 4, 128, (*replacement_policies().find("random"))(Geometry{4, 7}), false);
  for (int w = 0; w < 4; ++w) kept.fill(0, w, std::uint64_t(w), 0);
  kept.keep(0, 1, true);
  const int open[] = {0, 2, 3};
  std::uint64_t x = 7 * 0x9E3779B97F4A7C15ull + 1;
  for (int i = 0; i < 64; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    EXPECT_EQ(kept.victim(0), open[x % 3]) << i;
  }
}

TEST(L2Slice, ANoAllocateMissReadsMemoryAndKeepsTheSetAsItWas) {
  L2Config c = small();
  Bench b(c);
  // Two dirty lines fill set 0 (2 ways); the no-allocate reads of a third line in that set
  // must evict neither, and bring the requester the bytes from memory.
  std::uint8_t w[128], r[64], again[32];
  std::memset(w, 0x11, sizeof w);
  for (int i = 0; i < 128; ++i) b.mem.bytes[0x0400 + i] = std::uint8_t(0xC0 ^ i);
  Tick first = 0, second = 0;
  b.st.body = [&](Stimulus& s) {
    s.access(true, 0x0000, w, 128);
    s.access(true, 0x0200, w, 128);
    first = marked_read<NoAllocate>(s, 0x0440, r, 64);  // the line's second half
    s.pause(first);
    second = marked_read<NoAllocate>(s, 0x0400, again, 32);  // still not here: memory again
    s.pause(second);
    s.access(false, 0x0000, w, 128);  // both dirty lines still hit
    s.access(false, 0x0200, w, 128);
  };
  sc_core::sc_start();
  // As a miss: tag lookup, the line from memory, then 64 B over the 32 B/cycle port.
  EXPECT_EQ(first, 10 * kNs + kMemLat + 2 * kNs);
  EXPECT_EQ(second, 10 * kNs + kMemLat + 1 * kNs);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(r[i], std::uint8_t(0xC0 ^ (64 + i)));
  for (int i = 0; i < 32; ++i) EXPECT_EQ(again[i], std::uint8_t(0xC0 ^ i));
  EXPECT_EQ(b.l2.evictions(), 0u);
  EXPECT_EQ(b.l2.writebacks(), 0u);
  EXPECT_EQ(b.mem.writes, 0u);
  EXPECT_EQ(b.mem.reads, 2u);
  EXPECT_EQ(b.l2.hits(), 2u);
  EXPECT_EQ(b.l2.misses(), 4u);  // the two full-line writes (allocating, no fill) and the two reads
}

TEST(L2Slice, ANoAllocateReadOfALineHereIsAHit) {
  L2Config c = small();
  Bench b(c);
  std::uint8_t w[128], r[128];
  for (int i = 0; i < 128; ++i) w[i] = std::uint8_t(i * 3);
  Tick hit = 0;
  b.st.body = [&](Stimulus& s) {
    s.access(true, 0x0600, w, 128);  // dirty here, not in memory
    hit = marked_read<NoAllocate>(s, 0x0600, r, 128);
  };
  sc_core::sc_start();
  EXPECT_EQ(hit, 10 * kNs);
  EXPECT_EQ(0, std::memcmp(w, r, 128));  // the L2's copy, not memory's stale bytes
  EXPECT_EQ(b.mem.reads, 0u);
}

TEST(L2Slice, ADiscardDropsADirtyLineUnwrittenAndFreesItsWay) {
  System sys;  // a read of a dropped line is the system's failure
  System::Scope scope(sys);
  L2Config c = small();
  Bench b(c);
  std::uint8_t w[128], r[128], scratch[128];
  std::memset(w, 0x5a, sizeof w);
  std::memset(scratch, 0x33, sizeof scratch);
  Tick dropped = 0, absent = 0;
  std::uint64_t writes = 1, writebacks = 1;
  std::uint8_t left = 0;
  b.st.body = [&](Stimulus& s) {
    s.access(true, 0x0000, w, 128);  // dirty here
    s.access(true, 0x0200, w, 128);  // the set's other way, dirty
    dropped = marked_read<Discard>(s, 0x0000, scratch);
    s.pause(dropped);
    absent = marked_read<Discard>(s, 0x0600, scratch);  // not here: the lookup alone
    s.pause(absent);
    s.access(false, 0x0400, r, 128);  // takes the freed way: 0x0200 stays
    s.access(false, 0x0200, r, 128);
    s.access(true, 0x0600, w, 128);  // written again (evicts 0x0400, clean): read as any line
    s.access(false, 0x0600, r, 128);
    writes = b.mem.writes, writebacks = b.l2.writebacks(), left = scratch[0];
    s.access(false, 0x0000, scratch, 128);  // gone, and its bytes in memory are stale: named
  };
  sc_core::sc_start();
  EXPECT_EQ(dropped, 10 * kNs);  // the tag lookup; no port time, no memory
  EXPECT_EQ(absent, 10 * kNs);
  EXPECT_EQ(left, 0x33);  // no data comes back from a discard
  EXPECT_EQ(0, std::memcmp(w, r, 128));
  EXPECT_EQ(writes, 0u);  // the discarded line never written back
  EXPECT_EQ(writebacks, 0u);
  EXPECT_NE(sys.failure().find("hn0: a read of line 0x0, which a discard dropped"), std::string::npos) << sys.failure();
}

TEST(LineSet, HoldsExactlyTheLinesInsertedAndNotErasedInsideAndAtTheEndsOfItsRange) {
  LineSet s;
  EXPECT_TRUE(s.empty());
  EXPECT_FALSE(s.contains(0));
  EXPECT_FALSE(s.contains(1));
  for (std::uint64_t line : {20, 10, 30}) s.insert(line);
  for (std::uint64_t line = 0; line < 40; ++line)
    EXPECT_EQ(s.contains(line), line == 10 || line == 20 || line == 30) << line;
  s.erase(30);
  s.erase(5);  // outside: nothing
  EXPECT_FALSE(s.contains(30));
  EXPECT_TRUE(s.contains(10) && s.contains(20));
  s.erase_if([](std::uint64_t line) { return line < 15; });
  EXPECT_FALSE(s.contains(10));
  EXPECT_TRUE(s.contains(20));
  s.erase(20);
  EXPECT_TRUE(s.empty());
  s.insert(100);  // a new range once empty
  EXPECT_TRUE(s.contains(100));
  EXPECT_FALSE(s.contains(20));
  s.insert(0);
  EXPECT_TRUE(s.contains(0) && s.contains(100));
  EXPECT_FALSE(s.contains(50));
}

TEST(L2Slice, AStashOfALineStillBeingFilledAnswersWhenTheFillLands) {
  L2Config c = small();
  Bench b(c);
  std::uint8_t scratch[128];
  Tick first = 0, second = 0;
  b.st.body = [&](Stimulus& s) {
    first = marked_read<Stash>(s, 0x1000, scratch);
    second = marked_read<Stash>(s, 0x1000, scratch, 128, 5 * kNs);  // while the first one's fill is in flight
  };
  sc_core::sc_start();
  EXPECT_EQ(first, 10 * kNs + kMemLat);
  // Its lookup ends at 15 ns, but the line is in only when the first stash's fill lands.
  EXPECT_EQ(second, first);
  EXPECT_EQ(b.mem.reads, 1u);
}

TEST(L2Slice, ARequestAcrossLinesIsABurstError) {
  L2Config c = small();
  Bench b(c);
  std::uint8_t r[64];
  tlm::tlm_response_status st = tlm::TLM_OK_RESPONSE;
  b.st.body = [&](Stimulus& s) { s.post(false, 0x1060, r, 64, 0, &st); };
  sc_core::sc_start();
  EXPECT_EQ(st, tlm::TLM_BURST_ERROR_RESPONSE);
}

TEST(SliceHash, SpreadsAStreamEvenlyAndIsStable) {
  SliceHash h(4, 128);
  unsigned count[4] = {0, 0, 0, 0};
  for (std::uint64_t a = 0; a < 4096 * 128; a += 128) ++count[h.slice(a)];
  for (unsigned c : count) EXPECT_EQ(c, 1024u);
  SliceHash h3(3, 256);
  EXPECT_EQ(h3.slice(0), 0u);
  EXPECT_EQ(h3.slice(256), 1u);
  EXPECT_EQ(h3.slice(512), 2u);
  EXPECT_EQ(h3.slice(768), 0u);
}
