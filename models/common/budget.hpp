// SPDX-License-Identifier: MIT
// The bandwidth of one shared resource in the fast memory fidelity (platform.memory.fidelity:
// fast): the stand-in for a Timeline (timeline.hpp) when the exact placement of every interval is
// not wanted, only the resource's throughput and the queueing a busy resource causes.
//
// Time is cut into windows of `window` units (a resource's cycles). Each window keeps how many of
// its units are booked (never more than the window) and where the latest booking holding some of
// them ends. A booking of `d` units asked for at `t` takes its units from t's window, or from the
// first one after it with room; what does not fit spills into the next ones, so a saturated
// resource moves exactly `window` units of work per window. Where in the window it starts depends
// on how the window's booked units are taken to lie (Packing): back to back, from the earliest
// start of a booking in it (FromEarliestStart) or up to the latest end of one (BeforeLatestEnd). A
// booking that would overlap them starts where they end; one that ends before them fits in front.
// - FromEarliestStart: a booking waits only for as much work as is booked from the first one on:
//   right where the resource's users leave gaps that others fill (a DRAM bank's bursts tCCD_L
//   apart, with other banks' bursts between them on the bus).
// - BeforeLatestEnd: a booking waits for the latest end when it would overlap: right where users
//   that come later in time also come later in host order and queue (transfers that follow each
//   other into a ring link).
// Bookings may come in any time order (temporal decoupling): a late one finds its window's count
// and end, not the intervals, so each costs a few operations and never a search.
//
// The windows are a ring of `slots`. A booking further back than the ring reaches (a window whose
// slot a later window took) is not queued: it starts when it asks, and its units are counted.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace dvp {

class Budget {
 public:
  enum class Packing { FromEarliestStart, BeforeLatestEnd };

  // `window`: units per window (>= 1); `slots`: windows kept (a power of two).
  explicit Budget(std::uint64_t window = 32, Packing packing = Packing::FromEarliestStart, std::uint32_t slots = 256)
      : window_(std::max<std::uint64_t>(window, 1)), packing_(packing), mask_(slots - 1), ring_(slots) {}

  // Books `d` units asked for at `t`; returns when the booking starts.
  std::uint64_t reserve(std::uint64_t t, std::uint64_t d) {
    busy_ += d;
    std::uint64_t w = t / window_;
    Slot* s = &slot(w);
    while (s->used >= window_) s = &slot(++w);  // saturated: the first window with room
    std::uint64_t start = std::max(t, w * window_);
    if (s->used) {  // the window's units: [begin, begin + used) or [end - used, end)
      const std::uint64_t lo = packing_ == Packing::FromEarliestStart ? s->begin : s->end - s->used;
      if (start + d > lo && start < lo + s->used) start = lo + s->used;
    }
    const std::uint64_t end = start + d;
    for (std::uint64_t left = d;;) {
      const std::uint64_t take = std::min(left, window_ - s->used);
      s->begin = s->used ? std::min(s->begin, start) : std::max(start, w * window_);
      s->used += take;
      s->end = std::max(s->end, end);
      left -= take;
      if (!left) break;
      s = &slot(++w);
    }
    return start;
  }
  // Units booked in all.
  std::uint64_t busy_total() const { return busy_; }

 private:
  struct Slot {
    std::uint64_t index = 0;  // the window it holds
    std::uint64_t used = 0;   // its booked units, at most the window
    std::uint64_t begin = 0;  // the earliest start of a booking holding some of them (when used)
    std::uint64_t end = 0;    // the latest end of one
  };
  // The slot of window w, emptied first when it held an older window. A window older than its
  // slot's has no slot any more: it gets a scratch one that queues nothing.
  Slot& slot(std::uint64_t w) {
    Slot& s = ring_[w & mask_];
    if (s.index == w) return s;
    if (s.index > w) {
      scratch_ = Slot{w, 0, 0, 0};
      return scratch_;
    }
    s = Slot{w, 0, 0, 0};
    return s;
  }

  std::uint64_t window_;
  Packing packing_;
  std::uint64_t mask_;
  std::vector<Slot> ring_;
  Slot scratch_;
  std::uint64_t busy_ = 0;
};

}  // namespace dvp
