// SPDX-License-Identifier: MIT
// A set of line addresses asked about on every miss (a slice's discarded lines), with the range
// of all it ever held in front: most lines asked about (a network's weights) lie outside the
// activations it holds and are answered without a hash lookup, each of which costs the host a
// few cache misses in a set of thousands.
#pragma once
#include <algorithm>
#include <cstdint>
#include <unordered_set>

namespace dvp::cache {

class LineSet {
 public:
  bool empty() const { return lines_.empty(); }
  bool contains(std::uint64_t line) const { return line >= lo_ && line <= hi_ && lines_.count(line); }
  void insert(std::uint64_t line) {
    if (lines_.empty()) lo_ = hi_ = line;
    lo_ = std::min(lo_, line);
    hi_ = std::max(hi_, line);
    lines_.insert(line);
  }
  // The range is left as it is: it bounds the lines held, which is all contains() needs.
  void erase(std::uint64_t line) {
    if (line >= lo_ && line <= hi_) lines_.erase(line);
  }
  template <typename Pred>
  void erase_if(Pred&& pred) {
    for (auto it = lines_.begin(); it != lines_.end();) it = pred(*it) ? lines_.erase(it) : std::next(it);
  }

 private:
  std::unordered_set<std::uint64_t> lines_;
  std::uint64_t lo_ = 1, hi_ = 0;  // [lo_, hi_] holds every line held; empty at first
};

}  // namespace dvp::cache
