// The busy intervals of one shared resource (a ring link, a DRAM data bus, an L2 port).
//
// With temporal decoupling, initiators reach a resource out of time order: one may have run
// ahead by a quantum before another asks for an earlier slot. A plain busy-until counter
// would push the earlier request behind the later one; this timeline instead keeps the
// reserved intervals and places each request in the earliest gap that fits. Intervals that
// end before global simulated time can never be asked for again and are pruned.
//
// Two kinds of use (0 and 1, e.g. read and write on a DRAM data bus) may need a turnaround
// gap between them; the gap is enforced on both sides of a placed interval.
#pragma once
#include <cstdint>
#include <vector>

#include "time.hpp"

namespace dvp {

class Timeline {
 public:
  struct Interval {
    Tick start;
    Tick end;
    std::uint8_t kind;
  };

  // Gap required between an interval of kind a followed by one of kind b.
  void set_turnaround(Tick zero_to_one, Tick one_to_zero) {
    turn_[0][1] = zero_to_one;
    turn_[1][0] = one_to_zero;
  }

  // Earliest start >= earliest where [start, start+duration) fits. Does not reserve.
  Tick find(Tick earliest, Tick duration, std::uint8_t kind = 0) const;
  // Reserves [start, start+duration); start must come from find() with the same arguments.
  void reserve_at(Tick start, Tick duration, std::uint8_t kind = 0);
  // find + reserve_at.
  Tick reserve(Tick earliest, Tick duration, std::uint8_t kind = 0) {
    Tick s = find(earliest, duration, kind);
    reserve_at(s, duration, kind);
    return s;
  }

  // Drops intervals that end at or before t (no later request can start before t).
  void prune(Tick t);

  Tick busy_total() const { return busy_total_; }
  Tick last_end() const { return last_end_; }
  std::size_t size() const { return busy_.size(); }

 private:
  Tick gap(std::uint8_t a, std::uint8_t b) const { return turn_[a & 1][b & 1]; }
  void maybe_prune();

  std::vector<Interval> busy_;  // sorted by start, non-overlapping
  Tick turn_[2][2] = {{0, 0}, {0, 0}};
  std::size_t prune_at_ = 64;
  Tick busy_total_ = 0;
  Tick last_end_ = 0;
};

}  // namespace dvp
