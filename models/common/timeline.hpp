// SPDX-License-Identifier: MIT
// The busy time of one shared resource (a ring link channel, a DRAM data bus, an L2 port).
//
// With temporal decoupling, initiators reach a resource out of time order: one may have run
// ahead by a quantum before another asks for an earlier slot. A plain busy-until counter
// would push the earlier request behind the later one; this timeline instead keeps what is
// reserved and places each request in the earliest gap that fits.
//
// Every user is clocked, so time is kept in whole cycles of `unit` picoseconds: one bit per
// cycle in a circular window that starts at global simulated time (nothing can be asked for
// before it) and grows to cover the furthest reservation. Finding a gap is a scan over 64-bit
// words. Two kinds of use (0 and 1, e.g. read and write on a DRAM data bus) may need a
// turnaround gap between them, enforced on both sides of a placed interval.
//
// Host speed (every memory transaction books a few dozen of these): a request that starts after
// everything booked (the common case of a stream) is answered without a scan; the bits that
// fall behind global time are cleared only when the window must reuse their words; the floor is
// recomputed only when global time has moved. What a booking reads lies in one host cache line
// (the class is aligned to one): a line costs a ring transfer a booking per hop, four transfers,
// and each booking touched two or three lines of this object besides its bits (docs/performance.md).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "time.hpp"

namespace dvp {

class alignas(64) Timeline {
 public:
  // `unit`: the resource's clock period; all times passed in must be multiples of it.
  explicit Timeline(Tick unit = 1);
  // A copy has its own bits (the hot line points at them); a move takes them along, and leaves
  // the moved-from timeline pointing at its own (empty) storage, not at the bits it gave away:
  // only assigning to it or destroying it is valid.
  Timeline(const Timeline& o);
  Timeline& operator=(const Timeline& o);
  Timeline(Timeline&& o) noexcept;
  Timeline& operator=(Timeline&& o) noexcept;

  // Gap required between an interval of kind a followed by one of kind b; set before the first
  // booking (the ends per kind are kept only from then on).
  void set_turnaround(Tick zero_to_one, Tick one_to_zero);

  // Earliest start >= earliest where [start, start+duration) fits. Does not reserve.
  Tick find(Tick earliest, Tick duration, std::uint8_t kind = 0) {
    update_floor();
    const Unit s = std::max<Unit>((earliest + unit_ - 1) / unit_, floor_), d = (duration + unit_ - 1) / unit_;
    return (d == 0 ? s : first_fit(s, d, kind)) * unit_;
  }
  // Whether [start, start+duration) fits where it is: find(start, duration, kind) == start,
  // without the search for a later gap when it does not.
  bool fits_at(Tick start, Tick duration, std::uint8_t kind = 0) {
    update_floor();
    const Unit s = start / unit_, d = (duration + unit_ - 1) / unit_;
    if (s * unit_ != start || s < floor_) return false;
    if (d == 0) return true;
    ensure(s + d + keep_ + 1);  // as find() grows the window
    return past_everything(s, kind) || fits(s, d, kind);
  }
  // Whether each of `count` intervals of `duration`, `stride` (>= duration; false otherwise) apart
  // from `start`, fits where it is (fits_at of each, none booked in between), checked at once where
  // they touch. The window does not grow: a caller that finds one not fitting checks them one by
  // one, which grows it as before (its size decides what a later jump of global time forgets, so
  // it must not depend on this short way); one that books them calls reserve_every.
  bool fits_every(Tick start, Tick duration, Tick stride, std::uint32_t count, std::uint8_t kind = 0);
  // Reserves intervals just found free (by fits_every, or by fits_at one by one, at the same global
  // time), growing the window as their checks one by one and their reservations would have.
  void reserve_every(Tick start, Tick duration, Tick stride, std::uint32_t count, std::uint8_t kind = 0);
  // Reserves [start, start+duration); start must come from find() with the same arguments.
  void reserve_at(Tick start, Tick duration, std::uint8_t kind = 0);
  // find + reserve_at, in cycles (reserve_cycles): the L2 port and the DRAM book every line.
  Tick reserve(Tick earliest, Tick duration, std::uint8_t kind = 0) {
    return reserve_cycles((earliest + unit_ - 1) / unit_, (duration + unit_ - 1) / unit_, kind) * unit_;
  }
  // reserve() in whole cycles of `unit`: books [s, s + cycles) at the first start s at or after
  // `earliest` (and the floor) where it fits, and returns s. (A ring transfer books its whole
  // path so, with no division per hop.)
  std::uint64_t reserve_cycles(std::uint64_t earliest, std::uint64_t cycles, std::uint8_t kind = 0) {
    update_floor();
    Unit s = std::max<Unit>(earliest, floor_);
    if (cycles == 0) return s;
    s = first_fit(s, cycles, kind);
    book(s, cycles, kind);
    return s;
  }

  Tick busy_total() const { return busy_units_ * unit_; }
  Tick last_end() const { return last_end_units_ * unit_; }
  Tick unit() const { return unit_; }

 private:
  using Unit = std::uint64_t;
  bool any(const std::uint64_t* bits, Unit from, Unit to) const;  // a set bit in [from, to)
  void set(std::uint64_t* bits, Unit from, Unit to) {
    // Most bookings (a flit, a burst) fall within one word: the window's size is a multiple of
    // 64 units, so such a range never wraps around the circle.
    const unsigned bit = from & 63;
    const Unit n = to - from;
    if (bit + n <= 64)
      bits[(from & mask_) >> 6] |= (n == 64 ? ~0ull : (1ull << n) - 1) << bit;
    else
      set_across(bits, from, to);
  }
  void set_across(std::uint64_t* bits, Unit from, Unit to);
  void update_floor() {  // moves the floor up to global time (less the turnaround distance)
    const Tick now = now_tick();
    if (now != now_seen_) move_floor(now);
  }
  void move_floor(Tick now);
  Unit window_end() const { return phys_ + mask_ + 1; }  // units at or past it hold no reservation
  void ensure(Unit end) {                                // makes the window hold [floor_, end)
    if (end > window_end()) make_room(end);
  }
  void make_room(Unit end);  // clears the stale bits, then grows the window if still needed
  void clear_stale();        // clears the bits of [phys_, floor_): their words are about to be reused
  void grow(Unit end);
  // The first start >= s (at or past the floor) where d > 0 units fit. Past every reservation,
  // and the turnaround distance past the other kind's, nothing can be in the way. The window
  // grows as a scan would have grown it: its size decides what a later jump of global time
  // forgets (move_floor), so it must not depend on the short way.
  Unit first_fit(Unit s, Unit d, std::uint8_t kind) {
    if (!past_everything(s, kind)) return free_in_word(s, d, kind) ? s : find_gap(s, d, kind);
    ensure(s + d + keep_ + 1);
    return s;
  }
  // find_gap's first try answered in place, the common case among other requesters' bookings: the
  // request is free where it asks, within one word, no turnaround blocks it and the window already
  // holds what the search would make it hold.
  bool free_in_word(Unit s, Unit d, std::uint8_t kind) const {
    const unsigned bit = s & 63;
    if (bit + d > 64 || s + d + keep_ + 1 > window_end()) return false;
    const std::uint64_t m = (d == 64 ? ~0ull : (1ull << d) - 1) << bit;
    return (busy_[(s & mask_) >> 6] & m) == 0 && (!kind1_ || turnarounds_clear(s, d, kind));
  }
  Unit find_gap(Unit s, Unit d, std::uint8_t kind);  // first_fit's search
  bool fits(Unit s, Unit d, std::uint8_t kind) const;
  // fits() once [s, s + d) is known free: no other kind's interval within the turnaround distance.
  bool turnarounds_clear(Unit s, Unit d, std::uint8_t kind) const;
  // Whether a request of `kind` at unit s starts past every reservation, and the turnaround
  // distance past the other kind's: then nothing can be in its way (no scan needed). Without
  // turnarounds the ends per kind are not kept (nor needed).
  bool past_everything(Unit s, std::uint8_t kind) const {
    if (s < last_end_units_) return false;
    return !kind1_ || s >= last_end_kind_[(kind & 1) ^ 1] + (kind ? turn01_ : turn10_);
  }
  Unit next_free(Unit from) const;                // first unit >= from that is not busy
  Unit next_busy(Unit from, Unit to) const;       // first busy unit in [from, to); to if none
  void book(Unit s, Unit d, std::uint8_t kind) {  // reserve_at in units; the window holds [s, s + d)
    set(busy_, s, s + d);
    busy_units_ += d;
    last_end_units_ = std::max(last_end_units_, s + d);
    if (!kind1_) return;
    const bool k1 = kind == 1;
    if (k1) set(kind1_, s, s + d);
    last_end_kind_[k1] = std::max(last_end_kind_[k1], s + d);
  }
  void copy_state(const Timeline& o);  // every field but the words' storage
  void point_at_words() {              // busy_ and kind1_ at the words' storage, after it was made or moved
    busy_ = busy_words_.data();
    kind1_ = kind1_words_.empty() ? nullptr : kind1_words_.data();
  }

  // The first host cache line: what a booking reads.
  Tick now_seen_ = kTickMax;  // the global time floor_ was last computed for
  // Units before floor_ can never be asked for again (global time less the turnaround distance);
  // the bits of [phys_, floor_) are stale but not yet cleared.
  Unit floor_ = 0, phys_ = 0;
  Unit last_end_units_ = 0;
  std::uint64_t* busy_ = nullptr;   // any kind: busy_words_'s
  std::uint64_t* kind1_ = nullptr;  // kind 1 only: kind1_words_'s, null without turnarounds
  Tick unit_;
  std::uint32_t mask_ = 0;  // window size in units - 1 (a power of two, at most kMaxUnits)
  std::uint32_t keep_ = 0;  // the larger turnaround
  // Written by a booking, or read with turnarounds only.
  Unit busy_units_ = 0;
  Unit last_end_kind_[2] = {0, 0};  // the end of the last reservation of each kind (with turnarounds)
  Unit turn01_ = 0, turn10_ = 0;
  std::vector<std::uint64_t> busy_words_, kind1_words_;  // the circles' storage
};

}  // namespace dvp
