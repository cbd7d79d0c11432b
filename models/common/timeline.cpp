#include "timeline.hpp"

#include <algorithm>

namespace dvp {

Tick Timeline::find(Tick earliest, Tick duration, std::uint8_t kind) const {
  // First interval that ends after `earliest` (all before it cannot collide, except for the
  // turnaround to the one just before).
  auto it = std::upper_bound(busy_.begin(), busy_.end(), earliest,
                             [](Tick t, const Interval& iv) { return t < iv.end; });
  Tick start = earliest;
  if (it != busy_.begin()) {
    const Interval& prev = *(it - 1);
    start = std::max(start, prev.end + gap(prev.kind, kind));
  }
  for (; it != busy_.end(); ++it) {
    // Candidate [start, start+duration) must end, plus turnaround, before *it starts.
    if (start + duration + gap(kind, it->kind) <= it->start) return start;
    start = std::max(start, it->end + gap(it->kind, kind));
  }
  return start;
}

void Timeline::reserve_at(Tick start, Tick duration, std::uint8_t kind) {
  if (duration == 0) return;
  Tick end = start + duration;
  busy_total_ += duration;
  last_end_ = std::max(last_end_, end);
  auto it = std::upper_bound(busy_.begin(), busy_.end(), start,
                             [](Tick t, const Interval& iv) { return t < iv.start; });
  // Merge with a touching neighbour of the same kind to keep the vector short: a stream of
  // back-to-back bursts stays one interval.
  if (it != busy_.begin()) {
    Interval& prev = *(it - 1);
    if (prev.end == start && prev.kind == kind) {
      prev.end = end;
      if (it != busy_.end() && it->start == end && it->kind == kind) {
        prev.end = it->end;
        busy_.erase(it);
      }
      return;
    }
  }
  if (it != busy_.end() && it->start == end && it->kind == kind) {
    it->start = start;
    return;
  }
  busy_.insert(it, Interval{start, end, kind});
  maybe_prune();
}

void Timeline::maybe_prune() {
  // Amortised: prune only when the vector has doubled since the last prune. A resource booked
  // far into the future keeps many live intervals, and pruning on every insert would shift
  // them all each time.
  if (busy_.size() < prune_at_) return;
  prune(now_tick());
  prune_at_ = std::max<std::size_t>(64, 2 * busy_.size());
}

void Timeline::prune(Tick t) {
  // Keep the last interval ending before t: its turnaround may still constrain a start at t.
  auto it = std::upper_bound(busy_.begin(), busy_.end(), t,
                             [](Tick tt, const Interval& iv) { return tt < iv.end; });
  if (it - busy_.begin() > 1) busy_.erase(busy_.begin(), it - 1);
}

}  // namespace dvp
