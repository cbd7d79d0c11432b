// SPDX-License-Identifier: MIT
// DRAM channel and controller timing, worked out by hand from the ascend310 preset.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <utility>

#include "common/error.hpp"
#include "common/payload.hpp"
#include "common/zero_pages.hpp"
#include "dram/address_map.hpp"
#include "dram/channel.hpp"
#include "dram/controller.hpp"
#include "helpers.hpp"
#include "stimulus.hpp"

using namespace dvp;
using namespace dvp::dram;

namespace {

// Bursts to rank 0, bank group 0 (LPDDR4 has no bank groups), named by what they are.
enum class Close { No, Yes };
Burst read(std::uint32_t bank, std::uint32_t row, Tick at = 0, Close close = Close::No) {
  return Burst{false, 0, 0, bank, row, at, close == Close::Yes};
}
Burst write(std::uint32_t bank, std::uint32_t row, Tick at = 0) { return Burst{true, 0, 0, bank, row, at, false}; }

// The channel's own timing: no bank hashing and no write queue, whatever the preset says.
Config preset_dram(std::vector<std::string> sets = {}) {
  sets.insert(sets.begin(), {"platform.dram.bank_hash=none", "platform.dram.write_queue=0"});
  return Config::from(test::preset_platform("ascend310", sets).at("dram"));
}

}  // namespace

// In both fidelities: with nothing else on the channel, the fast one's budgets cost nothing.
TEST(DramChannel, RowMissHitAndConflictCostTheirTimingSums) {
  for (Fidelity f : {Fidelity::Detailed, Fidelity::Fast}) {
    Config c = preset_dram({"platform.dram.refresh=none"});
    c.fidelity = f;
    const Timing& t = c.t;
    const Tick tck = c.clock.period();
    const Tick burst = tck * (c.geo.burst_length / 2);
    Channel ch(c);
    // Idle bank, no row open: ACT, tRCD, READ, tRL, data.
    auto miss = ch.access(read(0, 5));
    EXPECT_EQ(miss.outcome, RowOutcome::Miss);
    EXPECT_EQ(miss.done, tck * (t.tRCD + t.tRL) + burst);
    // Same row, long after: READ, tRL, data.
    const Tick t1 = tck * 1000;
    auto hit = ch.access(read(0, 5, t1));
    EXPECT_EQ(hit.outcome, RowOutcome::Hit);
    EXPECT_EQ(hit.done - t1, tck * t.tRL + burst);
    // Another row, long after (tRAS and tRTP long satisfied): PRE, tRP, ACT, tRCD, READ, tRL.
    const Tick t2 = tck * 2000;
    auto conflict = ch.access(read(0, 9, t2));
    EXPECT_EQ(conflict.outcome, RowOutcome::Conflict);
    EXPECT_EQ(conflict.done - t2, tck * (t.tRP + t.tRCD + t.tRL) + burst);
    EXPECT_EQ(ch.row_hits, 1u);
    EXPECT_EQ(ch.row_misses, 1u);
    EXPECT_EQ(ch.row_conflicts, 1u);
  }
}

TEST(DramChannel, ConflictRightAfterActivateWaitsForTRAS) {
  Config c = preset_dram({"platform.dram.refresh=none"});
  const Timing& t = c.t;
  const Tick tck = c.clock.period();
  Channel ch(c);
  ch.access(read(0, 1));           // ACT at 0
  auto r = ch.access(read(0, 2));  // PRE no earlier than tRAS
  EXPECT_EQ(r.cas, tck * (t.tRAS + t.tRP + t.tRCD));
}

TEST(DramChannel, BackToBackHitsStreamAtFullBusRate) {
  Config c = preset_dram({"platform.dram.refresh=none"});
  const Tick tck = c.clock.period();
  const Tick burst = tck * (c.geo.burst_length / 2);
  Channel ch(c);
  Tick last = 0;
  for (int i = 0; i < 64; ++i) last = ch.access(read(0, 3)).done;
  // One ACT, then 64 bursts with no gap on the data bus.
  EXPECT_EQ(last, tck * (c.t.tRCD + c.t.tRL) + 64 * burst);
  EXPECT_EQ(ch.data_busy(), 64 * burst);
}

TEST(DramChannel, FourActivateWindow) {
  Config c = preset_dram({"platform.dram.refresh=none"});
  const Timing& t = c.t;
  const Tick tck = c.clock.period();
  Channel ch(c);
  // Five activates to five banks at time 0: tRRD apart, and the fifth no earlier than tFAW
  // after the first.
  Tick cas[5];
  for (unsigned b = 0; b < 5; ++b) cas[b] = ch.access(read(b, 1)).cas;
  for (unsigned b = 1; b < 4; ++b) EXPECT_EQ(cas[b] - cas[b - 1], tck * t.tRRD_S) << "bank " << b;
  EXPECT_EQ(cas[4] - cas[0], tck * std::max<Tick>(t.tFAW, 4 * t.tRRD_S));
}

TEST(DramChannel, RefreshBlocksTheRankForTRFC) {
  Config c = preset_dram();
  const Timing& t = c.t;
  const Tick tck = c.clock.period();
  Channel ch(c);
  // A request arriving exactly when the first refresh is due: no row open, so the refresh
  // starts at once and the ACT waits tRFC.
  const Tick due = tck * t.tREFI;
  auto r = ch.access(read(0, 1, due));
  EXPECT_EQ(r.cas, due + tck * (t.tRFC + t.tRCD));
  EXPECT_EQ(ch.refreshes, 1u);
  ch.finish(tck * t.tREFI * 10);
  EXPECT_EQ(ch.refreshes, 10u);
}

TEST(DramChannel, ReadAfterWriteWaitsForTWTR) {
  Config c = preset_dram({"platform.dram.refresh=none"});
  const Timing& t = c.t;
  const Tick tck = c.clock.period();
  const Tick burst = tck * (c.geo.burst_length / 2);
  Channel ch(c);
  auto w = ch.access(write(0, 1));
  EXPECT_EQ(w.done, tck * (t.tRCD + t.tWL) + burst);
  auto r = ch.access(read(0, 1));
  // The READ may issue tWTR after the end of the write data.
  EXPECT_EQ(r.cas, w.done + tck * t.tWTR);
}

TEST(DramChannel, FrFcfsLetsAReadyBankOvertakeAWaitingOne) {
  // Bank 0 has row 1 open; a request for row 2 must wait tRAS + tRP + tRCD. A row hit to bank
  // 1, handed in after it, goes first under frfcfs and after it under fcfs.
  for (const char* policy : {"frfcfs", "fcfs"}) {
    Config c = preset_dram({"platform.dram.refresh=none", std::string("platform.dram.scheduler=") + policy});
    Channel ch(c);
    ch.access(read(0, 1));
    ch.access(read(1, 7));
    auto conflict = ch.access(read(0, 2));
    auto hit = ch.access(read(1, 7));
    EXPECT_EQ(hit.outcome, RowOutcome::Hit);
    if (std::string(policy) == "frfcfs")
      EXPECT_LT(hit.done, conflict.done) << policy;
    else
      EXPECT_GT(hit.done, conflict.done) << policy;
  }
}

TEST(DramChannel, ClosedPagePrechargesAfterEachRequest) {
  Config c = preset_dram({"platform.dram.refresh=none", "platform.dram.page_policy=closed"});
  const Tick tck = c.clock.period();
  Channel ch(c);
  ch.access(read(0, 1, 0, Close::Yes));
  auto again = ch.access(read(0, 1, tck * 1000, Close::Yes));
  EXPECT_EQ(again.outcome, RowOutcome::Miss);  // closed, not a hit and not a conflict
  EXPECT_EQ(again.done - tck * 1000, tck * (c.t.tRCD + c.t.tRL + c.geo.burst_length / 2));
}

TEST(DramAddressMap, FieldsFollowTheConfiguredOrder) {
  Config c = preset_dram();  // [column:2, channel, bank, column, row], 32 B bursts
  AddressMapper m(c.geo, c.mapping);
  EXPECT_EQ(m.burst_bits(), 5u);
  EXPECT_EQ(m.channel_granule_bits(), 7u);  // 4 bursts = 128 B per channel
  DramAddress a = m.decode(0);
  EXPECT_EQ(a.channel, 0u);
  EXPECT_EQ(m.decode(128).channel, 1u);
  EXPECT_EQ(m.decode(96).column, 3u);
  EXPECT_EQ(m.decode(512).bank, 1u);     // after 4 channels x 128 B
  EXPECT_EQ(m.decode(4096).column, 4u);  // after 8 banks: the next column group
  EXPECT_EQ(m.decode(std::uint64_t(64) * 1024).row, 1u);
  for (std::uint64_t off : {0ull, 32ull, 4096ull + 160, 123456789ull * 32})
    EXPECT_EQ(m.encode(m.decode(off)), off & ~std::uint64_t(31)) << off;
}

TEST(DramAddressMap, ChannelHashSpreadsPowerOfTwoStridesAndStaysOneToOne) {
  Config c = preset_dram();  // 4 channels interleaved every 128 B: a 512 B stride hits one channel
  AddressMapper plain(c.geo, c.mapping), hashed(c.geo, c.mapping, nullptr, false, true);
  int per_channel[4] = {0, 0, 0, 0};
  for (std::uint64_t i = 0; i < 256; ++i) {
    EXPECT_EQ(plain.decode(i * 512).channel, 0u);
    ++per_channel[hashed.decode(i * 512).channel];
  }
  for (int ch = 0; ch < 4; ++ch) EXPECT_EQ(per_channel[ch], 64) << ch;
  EXPECT_EQ(hashed.channel_granule_bits(), 7u);  // a 128 B block still lies in one channel
  for (std::uint64_t off = 0; off < (1u << 22); off += 32 * 37)
    ASSERT_EQ(hashed.encode(hashed.decode(off)), off & ~std::uint64_t(31)) << off;
}

// next_burst steps the lowest slice by an add when it may: it must agree with a full decode of
// every burst, whichever field the lowest slice is, with and without the hashes, and across
// the carries out of the lowest slice.
TEST(DramAddressMap, NextBurstAgreesWithAFullDecode) {
  Config c = preset_dram();
  const std::vector<std::vector<std::string>> mappings = {
      c.mapping,                                         // the preset's: column:2 lowest
      {"column:3", "channel", "bank", "column", "row"},  // a longer column slice
      {"channel", "column", "bank", "row"},              // the channel lowest: hashed, full decode
      {"bank", "column", "channel", "row"},              // the bank lowest: hashed, full decode
      {"row:1", "column", "channel", "bank", "row"}};    // the row lowest: feeds the bank hash
  for (const auto& mapping : mappings)
    for (int hashes = 0; hashes < 4; ++hashes) {
      AddressMapper m(c.geo, mapping, nullptr, hashes & 1, hashes & 2);
      for (std::uint64_t first : {std::uint64_t(0), std::uint64_t(3), std::uint64_t(12345), std::uint64_t(1) << 20}) {
        DramAddress a = m.decode(first << m.burst_bits());
        for (std::uint64_t b = first + 1; b < first + 300; ++b) {
          a = m.next_burst(a, b);
          const DramAddress want = m.decode(b << m.burst_bits());
          ASSERT_TRUE(a.channel == want.channel && a.rank == want.rank && a.bank_group == want.bank_group &&
                      a.bank == want.bank && a.row == want.row && a.column == want.column)
              << "mapping " << mapping[0] << "..., hashes " << hashes << ", burst " << b;
        }
      }
    }
}

// column_run_end: every burst from b up to it lies in b's row (channel, rank, bank group, bank and
// row as a full decode gives them), with and without the hashes; where the lowest slice is a
// column slice, the run reaches that slice's end (the controller decodes no burst inside it); where
// it is a bank group's slice (ascend910's geometry), the run is one burst.
TEST(DramAddressMap, ColumnRunEndKeepsTheRowToTheEndOfTheLowestColumnSlice) {
  Config c = preset_dram();
  const std::vector<std::vector<std::string>> mappings = {
      c.mapping,                                         // the preset's: column:2 lowest
      {"column:3", "channel", "bank", "column", "row"},  // a longer column slice, then more columns
      {"channel", "column", "bank", "row"},              // the channel lowest: runs of one
      {"bank", "column", "channel", "row"},              // the bank lowest: runs of one
      {"row:1", "column", "channel", "bank", "row"}};
  const unsigned low_column_bits[] = {2, 3, 0, 0, 0};
  for (std::size_t k = 0; k < mappings.size(); ++k)
    for (int hashes = 0; hashes < 4; ++hashes) {
      AddressMapper m(c.geo, mappings[k], nullptr, hashes & 1, hashes & 2);
      for (std::uint64_t b = 12345; b < 12345 + 200; ++b) {
        const std::uint64_t end = m.column_run_end(b);
        const std::uint64_t slice = std::uint64_t(1) << low_column_bits[k];
        ASSERT_EQ(end - b, slice - b % slice) << "mapping " << k << ", hashes " << hashes << ", burst " << b;
        const DramAddress a = m.decode(b << m.burst_bits());
        for (std::uint64_t x = b + 1; x < end; ++x) {
          const DramAddress y = m.decode(x << m.burst_bits());
          ASSERT_TRUE(y.channel == a.channel && y.rank == a.rank && y.bank_group == a.bank_group && y.bank == a.bank &&
                      y.row == a.row)
              << "mapping " << k << ", hashes " << hashes << ", burst " << x << " after " << b;
        }
      }
    }
  // HBM2's bank groups: one lowest is stepped by an add too (next_burst), but each step is another
  // bank, so its runs are one burst; ascend910's own mapping has column:3 lowest.
  const Config hbm = Config::from(test::preset_platform("ascend910").at("dram"));
  const std::vector<std::string> bank_group_lowest = {"bank_group:1", "column:3", "channel", "bank_group",
                                                      "bank",         "column",   "row"};
  for (const auto& mapping : {bank_group_lowest, hbm.mapping}) {
    AddressMapper m(hbm.geo, mapping, nullptr, false, true);
    for (std::uint64_t b = 777; b < 777 + 64; ++b)
      ASSERT_EQ(m.column_run_end(b), mapping == hbm.mapping ? (b | 7) + 1 : b + 1) << mapping[0] << ", burst " << b;
  }
}

TEST(DramAddressMap, ChannelAloneAgreesWithAFullDecode) {
  Config c = preset_dram();
  const std::vector<std::vector<std::string>> mappings = {
      c.mapping,
      {"channel", "column", "bank", "row"},
      {"column:1", "channel:1", "bank", "channel", "column", "row"},  // the channel in two slices
      {"bank", "column", "row", "channel"}};                          // the channel highest: no hash above it
  std::uint64_t x = 88172645463325252ull;
  for (const auto& mapping : mappings)
    for (int hashes = 0; hashes < 4; ++hashes) {
      AddressMapper m(c.geo, mapping, nullptr, hashes & 1, hashes & 2);
      for (int i = 0; i < 20000; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const std::uint64_t off = x % c.geo.capacity();
        ASSERT_EQ(m.channel(off), m.decode(off).channel) << "mapping " << mapping[0] << "..., offset " << off;
      }
    }
}

TEST(DramAddressMap, RejectsAMappingThatDoesNotCoverEveryField) {
  Config c = preset_dram();
  EXPECT_THROW(AddressMapper(c.geo, {"column", "channel", "row"}), Error);
  EXPECT_THROW(AddressMapper(c.geo, {"column:9", "channel", "bank", "row"}), Error);
  EXPECT_THROW(AddressMapper(c.geo, {"column", "channel", "bank", "row", "lane"}), Error);
}

// --- The controller as a TLM target, driven by a stimulus module (exact simulated times).

namespace {
// One controller with its backing store and a stimulus that issues on DRAM clock edges.
struct ControllerBench {
  Config c;
  AddressMapper map;
  Storage mem;
  Controller mc;
  test::Stimulus st;
  static constexpr std::uint64_t base = 0x80000000;
  explicit ControllerBench(const std::vector<std::string>& sets)
      : c(preset_dram(sets)), map(c.geo, c.mapping), mem(c.geo.capacity()), mc("mc0", c, map, mem, base, 0), st("st") {
    st.socket.bind(mc.socket);
    st.align = c.clock.period();
  }
};
}  // namespace

TEST(DramController, LineReadCostsFrontEndPlusMissPlusFourBursts) {
  ControllerBench b({"platform.dram.refresh=none"});
  // References, not a structured binding: C++17 lambdas cannot capture those.
  Config& c = b.c;
  Controller& mc = b.mc;
  test::Stimulus& st = b.st;
  Storage& mem = b.mem;
  const std::uint64_t base = b.base;
  const Tick tck = c.clock.period();
  const Tick burst = tck * (c.geo.burst_length / 2);
  std::vector<std::uint8_t> w(128), r(128);
  for (int i = 0; i < 128; ++i) w[i] = std::uint8_t(i * 7 + 1);
  Tick write_lat = 0, miss_lat = 0, hit_lat = 0;
  st.body = [&](test::Stimulus& s) {
    write_lat = s.access(true, base + 0x1000, w.data(), 128);
    s.pause(1000 * 1000);
    hit_lat = s.access(false, base + 0x1000, r.data(), 128);
    s.pause(1000 * 1000);
    miss_lat = s.access(false, base + 0x1000 + std::uint64_t(64) * 1024 * 2, r.data(), 128);  // bank 0, row 2
  };
  sc_core::sc_start();
  // 128 B = 4 bursts in one channel and row: front end, ACT, tRCD, WRITE, tWL, 4 bursts.
  EXPECT_EQ(write_lat, tck * (c.frontend_cycles + c.t.tRCD + c.t.tWL) + 4 * burst);
  EXPECT_EQ(hit_lat, tck * (c.frontend_cycles + c.t.tRL) + 4 * burst);
  EXPECT_EQ(miss_lat, tck * (c.frontend_cycles + c.t.tRP + c.t.tRCD + c.t.tRL) + 4 * burst);
  EXPECT_EQ(w, std::vector<std::uint8_t>(mem.read_at(0x1000), mem.read_at(0x1000) + 128));
  EXPECT_EQ(mc.bytes_written(), 128u);
  EXPECT_EQ(mc.bytes_read(), 256u);
}

TEST(DramController, QueuedWritesAreAcknowledgedAtOnceAndDrainedByRow) {
  ControllerBench b({"platform.dram.refresh=none", "platform.dram.write_queue=8"});
  // References, not a structured binding: C++17 lambdas cannot capture those.
  Config& c = b.c;
  Controller& mc = b.mc;
  test::Stimulus& st = b.st;
  Storage& mem = b.mem;
  const std::uint64_t base = b.base;
  const Tick tck = c.clock.period();
  std::vector<std::uint8_t> w(32, 0xAB);
  Tick first = 0;
  Tick drained = 0;
  st.body = [&](test::Stimulus& s) {
    // Seven one-burst writes alternating between two rows of bank 0: queued, acknowledged
    // after the front end; the eighth fills the queue and drains it.
    for (int i = 0; i < 8; ++i) {
      const std::uint64_t off = (i % 2) * std::uint64_t(64) * 1024 * 8 + std::uint64_t(i / 2) * 4096;
      Tick lat = s.access(true, base + off, w.data(), 32);
      if (i == 0) first = lat;
    }
    drained = mc.drain_writes(now_tick());
  };
  sc_core::sc_start();
  EXPECT_EQ(first, tck * c.frontend_cycles);
  // The drain groups by row: one miss and three hits per row, not eight conflicts.
  EXPECT_EQ(mc.channel(0).row_conflicts, 1u);
  EXPECT_EQ(mc.channel(0).writes, 8u);
  EXPECT_GT(drained, now_tick());  // the drain the eighth write started is still writing
  // Queue entries come back as the drained writes leave: write 9 waits for write 1.
  EXPECT_EQ(std::vector<std::uint8_t>(mem.read_at(4096), mem.read_at(4096) + 32), w);
}

namespace {
// Whether the host has the page of `p` (mincore): a page never touched is not there.
bool resident(const std::uint8_t* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t(4095);
  unsigned char v = 0;
  EXPECT_EQ(mincore(reinterpret_cast<void*>(a), 4096, &v), 0);
  return v & 1;
}
}  // namespace

// A read of pages no one wrote is zeros copied out, and leaves those pages untouched (a page fault
// each, on most of a random read's accesses); a write marks its pages, across a page's end too,
// and a read spanning written and unwritten pages gets each page's own bytes. A pointer handed
// out to write through at will (data(): a CPU's DMI) makes every page count as written.
TEST(DramStorage, ReadsOfPagesNoOneWroteAreZerosAndTouchNothing) {
  Storage mem(std::uint64_t(64) << 20);
  std::vector<std::uint8_t> out(3 * 4096, 0xEE);
  mem.read(5 * 4096 + 100, out.data(), 3 * 4096);  // pages 5 to 8
  EXPECT_EQ(out, std::vector<std::uint8_t>(3 * 4096, 0));
  for (int page = 5; page <= 8; ++page) EXPECT_FALSE(resident(mem.read_at(page * 4096))) << page;
  const std::vector<std::uint8_t> w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::memcpy(mem.write_at(2 * 4096 - 5, w.size()), w.data(), w.size());  // pages 1 and 2
  out.assign(3 * 4096, 0xEE);
  mem.read(4096 - 100, out.data(), 3 * 4096);  // pages 0 to 3: the written bytes and zeros
  std::vector<std::uint8_t> want(3 * 4096, 0);
  std::copy(w.begin(), w.end(), want.begin() + 4096 + 95);
  EXPECT_EQ(out, want);
  EXPECT_FALSE(resident(mem.read_at(0)));
  EXPECT_FALSE(resident(mem.read_at(3 * 4096)));
  EXPECT_TRUE(resident(mem.read_at(4096)));
  // A range over several words of the bits (pages 60 to 200): every page of it read as written,
  // the pages either side still untouched zeros.
  const std::uint64_t from = 60 * 4096 + 8, to = 200 * 4096 + 16;
  std::memset(mem.write_at(from, to - from), 0x11, to - from);
  std::vector<std::uint8_t> span(to - from + 2 * 4096, 0xEE);
  mem.read(from - 4096, span.data(), span.size());
  std::vector<std::uint8_t> want_span(span.size(), 0);
  std::fill(want_span.begin() + 4096, want_span.begin() + 4096 + std::ptrdiff_t(to - from), 0x11);
  EXPECT_EQ(span, want_span);
  EXPECT_FALSE(resident(mem.read_at(59 * 4096)));
  EXPECT_FALSE(resident(mem.read_at(201 * 4096)));
  // A page written through the direct pointer, which the storage cannot see: read as written.
  mem.data()[20 * 4096 + 7] = 0x5A;
  std::uint8_t b[16];
  std::memset(b, 0xEE, sizeof b);
  mem.read(20 * 4096, b, sizeof b);
  EXPECT_EQ(b[7], 0x5A);
  EXPECT_EQ(b[0], 0);
}

// Through the controller: a read of a line no one wrote answers zeros without touching its page;
// the written line answers its bytes, by TLM and by the debug path.
TEST(DramController, ReadsOfLinesNoOneWroteAreZerosAndWrittenOnesTheirBytes) {
  ControllerBench b({"platform.dram.refresh=none"});
  Storage& mem = b.mem;
  const std::uint64_t base = b.base;
  std::vector<std::uint8_t> w(128), fresh(128, 0xEE), back(128, 0xEE), dbg(128, 0xEE);
  for (int i = 0; i < 128; ++i) w[std::size_t(i)] = std::uint8_t(i * 3 + 7);
  b.st.body = [&](test::Stimulus& s) {
    s.access(false, base + 0x300000, fresh.data(), 128);
    s.access(true, base + 0x2000, w.data(), 128);
    s.access(false, base + 0x2000, back.data(), 128);
  };
  sc_core::sc_start();
  EXPECT_EQ(fresh, std::vector<std::uint8_t>(128, 0));
  EXPECT_FALSE(resident(mem.read_at(0x300000)));
  EXPECT_EQ(back, w);
  tlm::tlm_generic_payload p;
  prepare(p, false, base + 0x2000, dbg.data(), 128);
  EXPECT_EQ(b.st.socket->transport_dbg(p), 128u);
  EXPECT_EQ(dbg, w);
}

// A run of bursts to one row booked by access_run (in one step where the slots allow) answers
// exactly what the same bursts answer booked one by one, and leaves the channel in the same
// state: random runs (lengths 1 to 8, reads and writes, a few banks and rows, arrivals that go
// back in time as decoupled initiators' do) on LPDDR4, whose bursts fill tCCD, and on HBM2,
// whose bank groups space a bank's bursts tCCD_L apart with gaps on the bus between; both
// schedulers, both page policies, with refresh.
TEST(DramChannel, ARunBookedInOneStepAgreesWithBurstsOneByOne) {
  std::mt19937 rng(11);
  for (const char* preset : {"ascend310", "ascend910"})
    for (const char* policy : {"frfcfs", "fcfs"})
      for (const char* page : {"open", "closed"}) {
        const std::vector<std::string> sets = {"platform.dram.bank_hash=none", "platform.dram.write_queue=0",
                                               std::string("platform.dram.scheduler=") + policy,
                                               std::string("platform.dram.page_policy=") + page};
        const Config c = Config::from(test::preset_platform(preset, sets).at("dram"));
        Channel runs(c), one_by_one(c);
        const Tick tck = c.clock.period();
        Tick at = 0;
        std::vector<Channel::Result> got(8);
        for (int req = 0; req < 4000; ++req) {
          at += tck * (rng() % 40);
          const Tick arrival = at > tck * 200 && rng() % 4 == 0 ? at - tck * (rng() % 200) : at;
          const Burst b{rng() % 3 == 0,
                        std::uint32_t(rng() % c.geo.ranks),
                        std::uint32_t(rng() % c.geo.bank_groups),
                        std::uint32_t(rng() % std::min<std::uint32_t>(3, c.geo.banks_per_group)),
                        std::uint32_t(rng() % 3),
                        arrival,
                        rng() % 2 == 0};
          const std::uint32_t n = 1 + rng() % 8;
          runs.access_run(b, n, got.data());
          for (std::uint32_t i = 0; i < n; ++i) {
            Burst each = b;
            each.close_row = b.close_row && i == n - 1;
            const Channel::Result want = one_by_one.access(each);
            ASSERT_EQ(got[i].cas, want.cas) << preset << " " << policy << " " << page << ", request " << req;
            ASSERT_EQ(got[i].data_start, want.data_start)
                << preset << " " << policy << " " << page << ", request " << req;
            ASSERT_EQ(got[i].done, want.done) << preset << " " << policy << " " << page << ", request " << req;
            ASSERT_EQ(got[i].outcome, want.outcome) << preset << " " << policy << " " << page << ", request " << req;
          }
        }
        // The short way is taken; under frfcfs, where later bursts take gaps before earlier ones',
        // not always (under fcfs each burst comes after every one before it: always).
        EXPECT_GT(runs.booked_in_one_step, 0u) << preset << " " << policy << " " << page;
        if (std::string(policy) == "frfcfs") {
          EXPECT_LT(runs.booked_in_one_step, runs.reads + runs.writes - 4000) << preset << " " << policy << " " << page;
        } else {
          EXPECT_EQ(runs.booked_in_one_step, runs.reads + runs.writes - 4000) << preset << " " << policy << " " << page;
        }
        EXPECT_EQ(runs.data_busy(), one_by_one.data_busy());
        EXPECT_EQ(runs.row_hits, one_by_one.row_hits);
        EXPECT_EQ(runs.row_misses, one_by_one.row_misses);
        EXPECT_EQ(runs.row_conflicts, one_by_one.row_conflicts);
        EXPECT_EQ(runs.refreshes, one_by_one.refreshes);
        EXPECT_EQ(runs.reads, one_by_one.reads);
        EXPECT_EQ(runs.writes, one_by_one.writes);
        for (std::size_t k = 0; k < runs.bank_counters().size(); ++k) {
          EXPECT_EQ(runs.bank_counters()[k].hits, one_by_one.bank_counters()[k].hits) << "bank " << k;
          EXPECT_EQ(runs.bank_counters()[k].misses, one_by_one.bank_counters()[k].misses) << "bank " << k;
          EXPECT_EQ(runs.bank_counters()[k].conflicts, one_by_one.bank_counters()[k].conflicts) << "bank " << k;
        }
      }
}

// The fast fidelity (common/fidelity.hpp) on a channel nothing else uses: bursts at the bus's full
// rate, a change of direction that pays its turnaround, a run's bursts tCCD_L apart.
TEST(DramChannel, FastFidelityKeepsTheBusRateAndItsTurnarounds) {
  Config c = preset_dram({"platform.dram.refresh=none"});
  c.fidelity = Fidelity::Fast;
  const Timing& t = c.t;
  const Tick tck = c.clock.period();
  const Tick burst = tck * (c.geo.burst_length / 2);
  // A miss, then 63 hits, all asked for at once: back to back at the bus's rate.
  Channel s(c);
  Tick last = 0;
  for (int i = 0; i < 64; ++i) last = s.access(read(0, 3)).done;
  EXPECT_EQ(last, tck * (t.tRCD + t.tRL) + 64 * burst);
  EXPECT_EQ(s.data_busy(), 64 * burst);
  // A write after them: the bus turns round (tRTW) after the reads' data.
  auto w = s.access(write(0, 3));
  EXPECT_EQ(w.data_start, last + tck * t.tRTW);
  EXPECT_EQ(s.data_busy(), 65 * burst);  // data only, not the turnaround
  // A run of four bursts to one row: tCCD_L (or a burst, when longer) apart.
  Channel r(c);
  std::vector<Channel::Result> out(4);
  r.access_run(read(1, 7), 4, out.data());
  const Tick step = std::max(tck * t.tCCD_L, tck * std::max<Tick>(c.geo.burst_length / 2, t.tCCD_S));
  for (int i = 1; i < 4; ++i) EXPECT_EQ(out[i].data_start - out[i - 1].data_start, step);
  EXPECT_EQ(r.row_misses, 1u);
  EXPECT_EQ(r.row_hits, 3u);
  // No turnaround on a bus that has long turned idle, nor for a read asked for before the write
  // that came first in host order (a decoupled initiator's); the busy time counts data only.
  Channel x(c);
  x.access(write(2, 1));
  const Tick later = tck * 100000;
  EXPECT_EQ(x.access(read(3, 1, later)).data_start, later + tck * (t.tRCD + t.tRL));
  EXPECT_EQ(x.data_busy(), 2 * burst);
  Channel y(c);  // both rows open first: the read is a hit (an ACT would wait for the write's: tRRD)
  y.access(read(3, 1));
  y.access(write(2, 1));
  y.access(write(2, 1, tck * 10000));
  EXPECT_EQ(y.access(read(3, 1, tck * 1000)).data_start, tck * (1000 + t.tRL));
}

// On random traffic (runs of 1 - 8 bursts to a few banks and rows, as the controller hands them in
// time order), the fast channel finishes near the detailed one and its requests take about as
// long, on LPDDR4 and HBM2, saturated and not, reads alone and with a third writes.
TEST(DramChannel, FastFidelityFinishesNearTheDetailedChannel) {
  for (const char* preset : {"ascend310", "ascend910"})
    for (int load : {10, 40})
      for (int writes : {0, 3})
        for (bool decoupled : {false, true}) {
          const std::vector<std::string> sets = {"platform.dram.bank_hash=none", "platform.dram.write_queue=0"};
          Config c = Config::from(test::preset_platform(preset, sets).at("dram"));
          Channel detailed(c);
          c.fidelity = Fidelity::Fast;
          Channel fast(c);
          std::mt19937 rng(5);
          const Tick tck = c.clock.period();
          Tick at = 0, end[2] = {0, 0}, latency[2] = {0, 0};
          std::vector<Channel::Result> got(8);
          for (int req = 0; req < 20000; ++req) {
            at += tck * (rng() % load);
            // A decoupled initiator's request may come after one for a later time.
            const Tick arrival = decoupled && at > tck * 200 && rng() % 4 == 0 ? at - tck * (rng() % 200) : at;
            const Burst b{writes && rng() % writes == 0,
                          std::uint32_t(rng() % c.geo.ranks),
                          std::uint32_t(rng() % c.geo.bank_groups),
                          std::uint32_t(rng() % c.geo.banks_per_group),
                          std::uint32_t(rng() % 4),
                          arrival,
                          false};
            const std::uint32_t n = 1 + rng() % 8;
            int k = 0;
            for (Channel* ch : {&detailed, &fast}) {
              ch->access_run(b, n, got.data());
              end[k] = std::max(end[k], got[n - 1].done);
              latency[k++] += got[n - 1].done - arrival;
            }
          }
          const double end_error = (double(end[1]) - double(end[0])) / double(end[0]);
          const double latency_error = (double(latency[1]) - double(latency[0])) / double(latency[0]);
          const std::string what = std::string(preset) + ", load " + std::to_string(load) + ", writes " +
                                   std::to_string(writes) + (decoupled ? ", decoupled" : "") + ": end " +
                                   std::to_string(end_error) + ", latency " + std::to_string(latency_error);
          // Measured: reads alone within 2.5% (end and latency), decoupled or not; with writes the
          // fast bus's turnarounds (only right after the other direction's last run) make it 5 - 11%
          // early (latency up to 14%), and on HBM2 at half load the detailed channel holds some
          // writes back far behind reads (FR-FCFS, no write queue here), which the budget does not:
          // the mean latency is not compared there.
          EXPECT_LT(std::abs(end_error), writes ? 0.12 : 0.03) << what;
          if (!writes || std::string(preset) == "ascend310" || load == 10) {
            EXPECT_LT(std::abs(latency_error), writes ? 0.15 : 0.04) << what;
          }
          EXPECT_EQ(fast.reads, detailed.reads);
          EXPECT_EQ(fast.writes, detailed.writes);
        }
}

TEST(ZeroPages, ReadsZeroUntilWrittenMovesAndNamesARefusedReservation) {
  // A mapping of small pages; of huge pages (over one 2 MiB page and into the next); from the heap.
  for (auto [pages, bytes] : {std::pair{ZeroPages::Pages::Small, 3u << 20},
                              {ZeroPages::Pages::Dense, 3u << 20},
                              {ZeroPages::Pages::Dense, 1u << 20}}) {
    SCOPED_TRACE(bytes);
    ZeroPages z(bytes, "test memory", pages);
    ASSERT_NE(z.data(), nullptr);
    ASSERT_EQ(z.size(), bytes);
    std::uint64_t sum = 0;
    for (std::uint64_t i = 0; i < z.size(); i += 4093) sum += z.data()[i];
    EXPECT_EQ(sum, 0u);
    const std::uint64_t at = bytes - 11;
    z.data()[at] = 0xa5;
    ZeroPages moved = std::move(z);  // construction takes the bytes
    EXPECT_EQ(z.data(), nullptr);    // NOLINT(bugprone-use-after-move): the moved-from state is tested
    EXPECT_EQ(z.size(), 0u);         // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(moved.data()[at], 0xa5);
    EXPECT_EQ(moved.data()[at - 1], 0);
    ZeroPages other(4096, "other memory");
    other.data()[7] = 1;
    other = std::move(moved);  // assignment takes them too (the models' members are assigned)
    ASSERT_EQ(other.size(), bytes);
    EXPECT_EQ(other.data()[at], 0xa5);
    EXPECT_EQ(other.data()[7], 0);
  }
  EXPECT_EQ(ZeroPages(0, "none").data(), nullptr);
  // Populating (an advice: huge pages for the whole 2 MiB pages inside, the rest made now) makes
  // the range's pages and no others, and keeps the bytes: zero where unwritten, written ones as
  // written; ranges past the end are cut.
  ZeroPages p(5u << 20, "test memory");
  p.data()[(2u << 20) + 1] = 7;
  auto resident = [&](std::uint64_t page) {  // whether the mapping's 4 KiB page `page` is made
    unsigned char v = 0;
    return mincore(p.data() + page * 4096, 4096, &v) == 0 && (v & 1);
  };
  if (p.populate(4097, 8191)) {  // pages 1 and 2, to their last byte (a host without MADV_POPULATE_WRITE says no)
    EXPECT_FALSE(resident(0));
    EXPECT_TRUE(resident(1));
    EXPECT_TRUE(resident(2));
    EXPECT_FALSE(resident(3));
    EXPECT_FALSE(resident(300));
  }
  EXPECT_FALSE(p.populate(6u << 20, 1));  // past the end: nothing
  p.populate(4u << 20, ~0ull);            // to the end, whatever the length
  p.populate(4097, 4u << 20);
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < p.size(); ++i) sum += p.data()[i];
  EXPECT_EQ(sum, 7u);
  EXPECT_EQ(p.data()[(2u << 20) + 1], 7);
  p.data()[p.size() - 1] = 9;
  EXPECT_EQ(p.data()[p.size() - 1], 9);
  for (auto pages : {ZeroPages::Pages::Small, ZeroPages::Pages::Dense}) {
    try {
      ZeroPages huge(1ull << 62, "test memory", pages);  // beyond any host's address space
      ADD_FAILURE() << "a reservation of 4 EiB was granted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("test memory: cannot reserve 4611686018427387904 bytes"), std::string::npos)
          << e.what();
    }
  }
}

TEST(ZeroPages, MakePagesMakesTheWholePagesInsideARangeAndKeepsTheirBytes) {
  constexpr std::size_t kPage = 4096, kPages = 16;
  void* m = mmap(nullptr, kPages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  // Small pages only: a huge or multi-page folio (THP "always", mTHP) would bring the pages at the
  // range's edges in with their neighbours, and the mapping is not merged with another.
  madvise(m, kPages * kPage, MADV_NOHUGEPAGE);
  auto* b = static_cast<std::uint8_t*>(m);
  b[3 * kPage + 5] = 0x5a;  // a page already there, with a byte that must stay
  // From inside page 1 to inside page 12: pages 2 - 11 are whole inside it, 1 and 12 are not.
  make_pages(b + kPage + 100, 11 * kPage);
  std::vector<unsigned char> there(kPages);
  ASSERT_EQ(mincore(m, kPages * kPage, there.data()), 0);
#ifdef MADV_POPULATE_WRITE
  if (madvise(b + 14 * kPage, kPage, MADV_POPULATE_WRITE) == 0) {  // the host has it: the test means something
    for (std::size_t i = 2; i <= 11; ++i) EXPECT_TRUE(there[i] & 1) << "page " << i;
    EXPECT_FALSE(there[1] & 1);  // shared with memory outside the range: left to fault
    EXPECT_FALSE(there[12] & 1);
    EXPECT_FALSE(there[13] & 1);
  }
#endif
  EXPECT_EQ(b[3 * kPage + 5], 0x5a);
  EXPECT_EQ(b[3 * kPage + 4], 0);
  EXPECT_EQ(b[7 * kPage], 0);
  munmap(m, kPages * kPage);
  const std::vector<double> v = made_vector<double>(100000);
  ASSERT_EQ(v.size(), 100000u);
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](double x) { return x == 0.0; }));
  EXPECT_TRUE(made_vector<std::uint8_t>(0).empty());
}
