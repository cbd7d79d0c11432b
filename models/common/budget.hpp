// SPDX-License-Identifier: MIT
// The bandwidth of one shared resource in the fast memory fidelity (platform.memory.fidelity:
// fast): the stand-in for a Timeline (timeline.hpp) when the exact placement of every interval is
// not wanted, only the resource's throughput and the queueing a busy resource causes.
//
// Time is cut into windows of `window` units (a resource's cycles). Each window keeps how many of
// its units are booked (never more than the window) and where they begin and end. A booking of
// `d` units asked for at `t` looks at t's window, or the first one after it with room, and starts
// at t (or that window's start), unless that would overlap the window's booked units as they are
// taken to lie (Packing); then it starts where they end. Its units are counted in the windows the
// booking covers, each taking what it has room for; what a full window cannot take goes to the
// next ones, so a saturated resource moves exactly `window` units of work per window.
// - FromEarliestStart: a window's units lie back to back from its earliest booking's start, so a
//   booking waits only for as much work as is booked from there on: right where the resource's
//   users leave gaps that others fill (a DRAM bank's bursts tCCD_L apart, with other banks' bursts
//   between them on the bus).
// - BeforeLatestEnd: they lie back to back up to the latest end, so a booking that would overlap
//   them waits for that end: right where users that come later in time also come later in host
//   order and queue (transfers that follow each other into a ring link).
// No search: a booking costs a few operations per window it covers or finds full before it.
// Bookings may come out of time order (temporal decoupling): a late one for an earlier time sees
// its window's count and ends, not the intervals, so what it gets is an estimate, not the exact gap
// a timeline would find.
//
// The windows are a ring of slots indexed by window number. Windows before global simulated time
// (nothing is asked for there any more) are forgotten as their slots are needed; a window that is
// not yet past is not: the ring doubles instead, up to 2^15 windows (2^20 cycles: a backlog or a
// run-ahead of about a millisecond), so a backlog keeps queueing.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "time.hpp"

namespace dvp {

class Budget {
 public:
  enum class Packing { FromEarliestStart, BeforeLatestEnd };

  // `window`: units per window (a power of two; another is rounded down to one); `unit`:
  // picoseconds per unit (to know which windows are past); `slots`: windows kept at first (a power
  // of two; the ring doubles when it must).
  explicit Budget(std::uint64_t window = 32, Packing packing = Packing::FromEarliestStart, Tick unit = 1,
                  std::uint32_t slots = 256)
      : shift_(log2_of(window)),
        window_(std::uint64_t(1) << shift_),
        unit_(std::max<Tick>(unit, 1)),
        packing_(packing),
        ring_(slots) {}

  // Books `d` units asked for at `t`; returns when the booking starts.
  std::uint64_t reserve(std::uint64_t t, std::uint64_t d) {
    if (d == 0) return t;
    busy_ += d;
    std::uint64_t w = t >> shift_, start = t;
    Slot* s;
    for (;;) {  // until the start lies in a window with room whose booked units it does not overlap
      s = &slot(w);
      if (s->used >= window_) {  // saturated: the next window
        start = std::max(start, ++w * window_);
        continue;
      }
      if (s->used) {  // the window's units: [begin, begin + used) or [end - used, end)
        const std::uint64_t lo = packing_ == Packing::FromEarliestStart ? s->begin : s->end - s->used;
        if (start + d > lo && start < lo + s->used) start = lo + s->used;
      }
      if (start < (w + 1) * window_) break;
      w = start >> shift_;  // pushed past this window: check the one it lands in
    }
    if (start + d <= (w + 1) * window_ && s->used + d <= window_)
      place(*s, start, d);  // the common case: all of it in this window
    else
      count(start, d);
    return start;
  }
  // Units booked in all.
  std::uint64_t busy_total() const { return busy_; }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t(0);
  static constexpr std::size_t kMaxSlots = std::size_t(1) << 15;  // 1 MiB of slots, 2^20 cycles
  struct Slot {
    std::uint64_t index = kEmpty;  // the window it holds
    std::uint64_t used = 0;        // its booked units, at most the window
    std::uint64_t begin = 0;       // where they begin and end (when used)
    std::uint64_t end = 0;
  };

  // Counts [start, start + d) in the windows it covers, each taking what it has room for; what a
  // full window cannot take goes to the windows after the booking's end, taken to lie from their
  // starts.
  void count(std::uint64_t start, std::uint64_t d) {
    const std::uint64_t end = start + d;
    std::uint64_t over = 0, w = start >> shift_;
    for (; w * window_ < end; ++w) {
      Slot& s = slot(w);
      const std::uint64_t from = std::max(start, w * window_), to = std::min(end, (w + 1) * window_);
      const std::uint64_t take = std::min(to - from, window_ - s.used);
      over += to - from - take;
      place(s, from, take);
    }
    for (; over; ++w) {
      Slot& s = slot(w);
      const std::uint64_t take = std::min(over, window_ - s.used);
      place(s, w * window_, take);
      over -= take;
    }
  }
  static void place(Slot& s, std::uint64_t lo, std::uint64_t n) {
    if (!n) return;
    s.begin = s.used ? std::min(s.begin, lo) : lo;
    s.end = std::max(s.end, lo + n);
    s.used += n;
  }

  // The slot of window w. A slot holding a past window is reused (claim); one holding a window
  // still to come makes the ring double.
  Slot& slot(std::uint64_t w) {
    Slot& s = ring_[w & (ring_.size() - 1)];
    return s.index == w ? s : claim(w);
  }
  Slot& claim(std::uint64_t w) {
    for (;;) {
      Slot& s = ring_[w & (ring_.size() - 1)];
      if (s.index == w) return s;
      // The ring stops doubling at kMaxSlots: a window that far from another still to come (a
      // quantum of a millisecond and more) takes its slot, an estimate rather than unbounded memory.
      if (s.index == kEmpty || s.index < floor() || ring_.size() >= kMaxSlots) {
        s = Slot{w, 0, 0, 0};
        return s;
      }
      grow();
    }
  }
  std::uint64_t floor() const { return now_tick() / (unit_ * window_); }
  void grow() {
    std::vector<Slot> old(ring_.size() * 2);
    old.swap(ring_);
    const std::uint64_t past = floor();
    for (const Slot& s : old)
      if (s.index != kEmpty && s.index >= past) ring_[s.index & (ring_.size() - 1)] = s;
  }

  // A window is a power of two of units, so a time's window is a shift, not a 64-bit division:
  // there is a booking per ring hop and per DRAM burst (4% of a fast stream-read's host time).
  static unsigned log2_of(std::uint64_t window) {
    unsigned s = 0;
    while (s < 63 && (std::uint64_t(2) << s) <= window) ++s;
    return s;
  }

  unsigned shift_;
  std::uint64_t window_;
  Tick unit_;
  Packing packing_;
  std::vector<Slot> ring_;
  std::uint64_t busy_ = 0;
};

}  // namespace dvp
