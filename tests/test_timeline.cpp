// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <random>
#include <systemc>
#include <vector>

#include "common/budget.hpp"
#include "common/error.hpp"
#include "common/timeline.hpp"

using dvp::Timeline;

TEST(Timeline, PlacesInEarliestGap) {
  Timeline t;
  EXPECT_EQ(t.reserve(100, 50), 100u);   // [100,150)
  EXPECT_EQ(t.reserve(300, 50), 300u);   // [300,350)
  EXPECT_EQ(t.reserve(120, 100), 150u);  // fits in [150,300)
  EXPECT_EQ(t.reserve(120, 100), 350u);  // [150,250) taken, 50 left before 300: too small
  EXPECT_EQ(t.reserve(0, 100), 0u);      // before everything
  EXPECT_EQ(t.busy_total(), 400u);
  EXPECT_EQ(t.reserve(0, 1), 250u);  // 0..150 is full; 250..300 is the first hole left
}

TEST(Timeline, BackToBackReservationsQueue) {
  Timeline t;
  for (int i = 0; i < 1000; ++i) t.reserve(0, 10);
  EXPECT_EQ(t.last_end(), 10000u);
  EXPECT_EQ(t.busy_total(), 10000u);
  EXPECT_EQ(t.reserve(0, 1), 10000u);
}

TEST(Timeline, StartsOnAClockEdgeAndGrowsItsWindow) {
  Timeline t(1000);                         // 1 ns cycles
  EXPECT_EQ(t.reserve(1500, 2000), 2000u);  // rounded up to the next edge
  EXPECT_EQ(t.reserve(0, 1000), 0u);        // the gap before it is still free
  EXPECT_EQ(t.reserve(1000, 1000), 1000u);
  EXPECT_EQ(t.reserve(1000, 1000), 4000u);
  // Far beyond the initial window, and then the gaps left behind are still found.
  EXPECT_EQ(t.reserve(100000000, 5000), 100000000u);
  EXPECT_EQ(t.reserve(5000, 3000), 5000u);
  EXPECT_EQ(t.reserve(99999000, 2000), 100005000u);
  EXPECT_EQ(t.busy_total(), 2000u + 1000 + 1000 + 1000 + 5000 + 3000 + 2000);
}

TEST(Timeline, TurnaroundBetweenKinds) {
  Timeline t;
  t.set_turnaround(/*0->1*/ 7, /*1->0*/ 20);
  EXPECT_EQ(t.reserve(0, 10, 0), 0u);
  EXPECT_EQ(t.reserve(0, 10, 1), 17u);  // after the read, plus 7
  EXPECT_EQ(t.reserve(0, 10, 0), 47u);  // after the write (ends 27), plus 20
  EXPECT_EQ(t.reserve(0, 10, 0), 57u);  // same kind: back to back
  // A write may not squeeze into [10,17): it would need 7 after the read at 0..10 and 20 before
  // the read at 47.
  EXPECT_EQ(t.reserve(10, 5, 1), 67u + 7u);
}

// The hot line points at the bits: a copy must book its own, a move take them along (also as a
// vector of timelines grows), and turnarounds come before the first booking.
TEST(Timeline, ACopyKeepsItsOwnBitsAndAMoveTakesThemAlong) {
  Timeline a;
  a.set_turnaround(7, 20);
  EXPECT_EQ(a.reserve(0, 10, 0), 0u);
  EXPECT_EQ(a.reserve(100000, 10, 1), 100000u);  // grows the window
  Timeline b = a;
  EXPECT_EQ(b.reserve(0, 5, 0), 10u);
  EXPECT_EQ(a.reserve(0, 5, 0), 10u);  // b's booking is not a's
  Timeline c = std::move(b);
  EXPECT_EQ(c.reserve(0, 5, 0), 15u);           // b's bookings came along
  EXPECT_EQ(c.reserve(99990, 10, 0), 100030u);  // and its write: 7 after a read, 20 before the next
  std::vector<Timeline> v;
  v.emplace_back(1);
  EXPECT_EQ(v[0].reserve(0, 10), 0u);
  for (int i = 0; i < 100; ++i) v.emplace_back(1);  // reallocations move v[0]
  EXPECT_EQ(v[0].reserve(0, 10), 10u);
  EXPECT_EQ(v[100].reserve(0, 10), 0u);
  Timeline late;
  late.reserve(0, 10);
  EXPECT_THROW(late.set_turnaround(7, 20), dvp::Error);
}

// Random requests against a plain model of the rule (cell by cell: a free run of `d` cells, and
// no cell of the other kind within the turnaround distance on either side), with and without
// turnarounds: the short way past the last reservation and the scan must both agree with it,
// and so must fits_at.
TEST(Timeline, AgreesWithAPlainModelOnRandomRequests) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 12; ++trial) {
    const bool turns = trial % 2;
    const dvp::Tick t01 = turns ? 1 + rng() % 9 : 0, t10 = turns ? 1 + rng() % 30 : 0;
    Timeline t;
    // The same requests in cycles of 7 ps, booked by reserve_cycles and reserve in turn.
    Timeline t7(7);
    if (turns) t.set_turnaround(t01, t10), t7.set_turnaround(7 * t01, 7 * t10);
    std::vector<int> cell(1 << 18, -1);  // -1 free, else the kind that holds it
    auto other_near = [&](dvp::Tick from, dvp::Tick to, int kind) {
      for (dvp::Tick u = from; u < to; ++u)
        if (cell[u] >= 0 && cell[u] != kind) return true;
      return false;
    };
    for (int i = 0; i < 1500; ++i) {
      // Up to two words and a bit: bookings of exactly 64 units, and across words.
      const dvp::Tick earliest = rng() % (trial < 6 ? 4000 : 60000), d = 1 + rng() % 130;
      const int kind = turns ? int(rng() % 2) : 0;
      const dvp::Tick before = kind ? t01 : t10, after = kind ? t10 : t01;
      dvp::Tick s = earliest;
      for (;; ++s) {
        bool free = true;
        for (dvp::Tick u = s; u < s + d && free; ++u) free = cell[u] < 0;
        if (free && !other_near(s > before ? s - before : 0, s, kind) && !other_near(s + d, s + d + after, kind)) break;
      }
      // fits_at answers whether the request fits where it asks, without a search.
      ASSERT_EQ(t.fits_at(earliest, d, std::uint8_t(kind)), s == earliest) << "trial " << trial << ", request " << i;
      ASSERT_EQ(t.reserve(earliest, d, std::uint8_t(kind)), s) << "trial " << trial << ", request " << i;
      const dvp::Tick s7 = i % 2 ? t7.reserve(7 * earliest, 7 * d, std::uint8_t(kind)) / 7
                                 : t7.reserve_cycles(earliest, d, std::uint8_t(kind));
      ASSERT_EQ(s7, s) << "trial " << trial << ", request " << i << " in cycles of 7 ps";
      for (dvp::Tick u = s; u < s + d; ++u) cell[u] = kind;
    }
  }
}

// fits_every answers what fits_at answers for each interval in turn (none booked in between),
// and reserve_every books what reserve_at books for each: random intervals touching (a DRAM
// run's CAS slots, LPDDR4's data) or with gaps (HBM2's data), both kinds with turnarounds.
TEST(Timeline, FitsEveryAgreesWithFitsAtOneByOne) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 8; ++trial) {
    Timeline every(3), each(3);
    if (trial % 2) every.set_turnaround(3 * 4, 3 * 11), each.set_turnaround(3 * 4, 3 * 11);
    int all = 0;
    for (int i = 0; i < 3000; ++i) {
      const dvp::Tick d = 3 * (1 + rng() % 8), stride = d + (rng() % 2 ? 0 : 3 * (rng() % 6));
      const dvp::Tick start = 3 * (rng() % 20000);
      const std::uint32_t count = 1 + rng() % 8;
      const auto kind = std::uint8_t(trial % 2 ? rng() % 2 : 0);
      bool want = true;
      for (std::uint32_t k = 0; k < count && want; ++k) want = each.fits_at(start + k * stride, d, kind);
      ASSERT_EQ(every.fits_every(start, d, stride, count, kind), want) << "trial " << trial << ", request " << i;
      if (!want) continue;
      ++all;
      every.reserve_every(start, d, stride, count, kind);
      for (std::uint32_t k = 0; k < count; ++k) each.reserve_at(start + k * stride, d, kind);
      ASSERT_EQ(every.busy_total(), each.busy_total());
      ASSERT_EQ(every.last_end(), each.last_end());
    }
    EXPECT_GT(all, 300) << "trial " << trial;  // the short way's bookings, not only its refusals
    for (int i = 0; i < 2000; ++i) {
      const dvp::Tick at = 3 * (rng() % 70000), d = 3 * (1 + rng() % 40);
      const auto kind = std::uint8_t(trial % 2 ? rng() % 2 : 0);
      ASSERT_EQ(every.find(at, d, kind), each.find(at, d, kind)) << "trial " << trial << ", probe " << i;
    }
  }
}

// to_sc is exact: the inline multiply below 2^52 ps, the library's from_value above.
TEST(Time, ToScKeepsEveryPicosecond) {
  std::mt19937_64 rng(3);
  for (dvp::Tick t : {dvp::Tick(0), dvp::Tick(1), (dvp::Tick(1) << 52) - 1, dvp::Tick(1) << 52,
                      (dvp::Tick(1) << 52) + 1, (dvp::Tick(1) << 53) + 1, dvp::kTickMax - 1})
    EXPECT_EQ(dvp::to_sc(t).value(), t);
  for (int i = 0; i < 100000; ++i) {
    const dvp::Tick t = rng() >> (rng() % 64);
    ASSERT_EQ(dvp::to_sc(t).value(), t) << t;
  }
}

// Global time moving on: the floor follows it, keeping the turnaround distance behind it
// readable, so a turnaround still due at the new time is kept; after a jump longer than the
// whole window, everything before global time is forgotten, which loses nothing, as every
// reservation keeps the window a turnaround distance past its end (find and fits_at grow it so).
TEST(Timeline, GlobalTimeMovingOnKeepsTheTurnaroundsStillDue) {
  const dvp::Tick ns = 1000;  // one unit
  Timeline near(ns), far(ns);
  for (Timeline* t : {&near, &far}) t->set_turnaround(2 * ns, 30 * ns);
  near.reserve(5000 * ns, 10 * ns, 1);  // a write ending at 5010: reads only from 5040
  far.reserve(100 * ns, 10 * ns, 1);    // ending at 110, in a window of 4096 units from 0
  sc_core::sc_start(sc_core::sc_time::from_value(5015 * ns));
  EXPECT_EQ(near.fits_at(5015 * ns, 5 * ns, 0), false);
  EXPECT_EQ(near.find(5015 * ns, 5 * ns, 0), 5040 * ns);
  EXPECT_EQ(far.fits_at(5015 * ns, 5 * ns, 0), true);  // the jump: 5015 is past the window
  EXPECT_EQ(far.find(5015 * ns, 5 * ns, 0), 5015 * ns);
  EXPECT_EQ(far.find(0, 5 * ns, 1), 5015 * ns);  // nothing before global time
}

// The fast fidelity's budget (budget.hpp): the behaviour docs/models.md describes, worked out by
// hand, and its throughput against a plain model of a resource that serves in time order.
using Packing = dvp::Budget::Packing;

TEST(Budget, IdleStartsAtOnceAndSimultaneousBookingsQueueBackToBack) {
  dvp::Budget b(32, Packing::BeforeLatestEnd);
  EXPECT_EQ(b.reserve(100, 4), 100u);  // window 3 idle
  EXPECT_EQ(b.reserve(100, 4), 104u);  // overlaps the block [100, 104): after it
  EXPECT_EQ(b.reserve(100, 4), 108u);
  EXPECT_EQ(b.reserve(96, 2), 96u);    // ends before the block: fits in front
  EXPECT_EQ(b.reserve(200, 8), 200u);  // another window
  EXPECT_EQ(b.busy_total(), 22u);
}

TEST(Budget, PackedFromTheEarliestStartABookingWaitsForTheWorkBeforeIt) {
  // One DRAM bank's bursts, 2 clocks each, tCCD_L = 4 apart; another bank's burst asks at 5, and
  // one at 1 - 3 (before all of them: it fits in front).
  dvp::Budget from_start(32, Packing::FromEarliestStart), before_end(32, Packing::BeforeLatestEnd);
  for (std::uint64_t t : {0, 4, 8}) {
    EXPECT_EQ(from_start.reserve(t, 2), t);
    EXPECT_EQ(before_end.reserve(t, 2), t);
  }
  EXPECT_EQ(from_start.reserve(5, 2), 6u);   // after 6 booked clocks from 0: the gaps count
  EXPECT_EQ(before_end.reserve(5, 2), 10u);  // after the block [4, 10)
  dvp::Budget front(32, Packing::BeforeLatestEnd);
  for (std::uint64_t t : {4, 8, 12}) front.reserve(t, 2);
  EXPECT_EQ(front.reserve(1, 2), 1u);  // ends before the block [8, 14): in front
}

TEST(Budget, ASaturatedResourceMovesOneWindowOfWorkPerWindow) {
  for (Packing p : {Packing::FromEarliestStart, Packing::BeforeLatestEnd}) {
    dvp::Budget b(32, p);
    // 100 bookings of 12 units asked for at 0: back to back, spilling over the windows.
    std::uint64_t last = 0;
    for (int i = 0; i < 100; ++i) last = b.reserve(0, 12);
    EXPECT_EQ(last, 99u * 12);
    // A booking longer than a window fills the windows it spans; the next one comes after it.
    dvp::Budget l(32, p);
    EXPECT_EQ(l.reserve(0, 100), 0u);
    EXPECT_EQ(l.reserve(0, 8), 100u);
  }
}

TEST(Budget, ALateBookingForAnEarlierIdleTimeIsNotHeldBack) {
  dvp::Budget b(32, Packing::BeforeLatestEnd);
  EXPECT_EQ(b.reserve(640, 16), 640u);  // a requester a quantum ahead
  EXPECT_EQ(b.reserve(64, 16), 64u);    // another, behind it in time, asks later: not queued behind it
}

TEST(Budget, BookingsSpanningWindowsAndLongBacklogsStillQueue) {
  for (Packing p : {Packing::FromEarliestStart, Packing::BeforeLatestEnd}) {
    // A booking across a window's end counts in both windows: the next one does not overlap it,
    // asked for in either window.
    dvp::Budget a(32, p);
    EXPECT_EQ(a.reserve(28, 8), 28u);
    EXPECT_EQ(a.reserve(33, 8), 36u);
    dvp::Budget a2(32, p);
    EXPECT_EQ(a2.reserve(28, 8), 28u);
    EXPECT_EQ(a2.reserve(30, 8), 36u);
    // Bookings pushed to a window's end queue in the next one too.
    dvp::Budget e2(32, p);
    for (std::uint64_t want : {28, 32, 36, 40, 44, 48}) EXPECT_EQ(e2.reserve(28, 4), want);
    // A backlog of more windows than the ring starts with (256): the ring grows, nothing is lost.
    dvp::Budget q(32, p);
    std::uint64_t last = 0;
    for (int i = 0; i < 300; ++i) last = q.reserve(0, 32);
    EXPECT_EQ(last, 299u * 32);
    // One booking far ahead does not take the present window's place.
    dvp::Budget f(32, p);
    f.reserve(0, 32);
    f.reserve(256 * 32, 1);
    EXPECT_EQ(f.reserve(0, 32), 32u);
    // A booking of nothing takes nothing.
    EXPECT_EQ(f.reserve(5, 0), 5u);
  }
  dvp::Budget e(32, Packing::FromEarliestStart);
  EXPECT_EQ(e.reserve(62, 15), 62u);
  EXPECT_EQ(e.reserve(74, 26), 77u);
}

TEST(Budget, ThroughputUnderRandomLoadMatchesAServerInTimeOrder) {
  // Random bookings in time order at about full load: the budget's last end is within two windows of a
  // plain first-come server's (which the timeline would match: nothing to fill in a time-ordered
  // stream), and never before the work could have been done.
  for (Packing p : {Packing::FromEarliestStart, Packing::BeforeLatestEnd}) {
    std::mt19937_64 rng(7);
    dvp::Budget b(32, p);
    std::uint64_t t = 0, server = 0, end = 0, work = 0, early = 0, wait = 0, server_wait = 0;
    for (int i = 0; i < 20000; ++i) {
      const std::uint64_t d = 1 + rng() % 8;
      t += rng() % 10;
      const std::uint64_t start = b.reserve(t, d);
      early += start < std::max(server, t);  // before a first-come server would start it
      wait += start - t;
      server_wait += std::max(server, t) - t;
      server = std::max(server, t) + d;
      end = std::max(end, start + d);
      work += d;
    }
    EXPECT_GE(end, work);
    EXPECT_LE(end, server + 64);
    EXPECT_GE(end + 64, server);
    // In time order, the ring's packing queues exactly as the server does; the bus's lets each
    // booking a little into the gaps it takes the earlier ones to have left, and waits about as
    // long in all.
    if (p == Packing::BeforeLatestEnd) {
      EXPECT_EQ(early, 0u);
      EXPECT_EQ(wait, server_wait);
    } else {
      EXPECT_GT(double(wait), 0.95 * double(server_wait));
      EXPECT_LE(wait, server_wait);
    }
  }
}
