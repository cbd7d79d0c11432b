// SPDX-License-Identifier: MIT
#include "timeline.hpp"

#include <utility>

#include "error.hpp"

namespace dvp {

namespace {
constexpr std::size_t kInitialUnits = 4096;  // grows as needed
constexpr std::size_t kMaxUnits = std::size_t(1) << 30;
static_assert(kMaxUnits <= std::size_t(1) << 31, "the window's mask and mask + 1 are 32-bit");

// The bits of [from, to) within one 64-bit word, as (word index, mask) steps over a circle.
template <typename F>
void for_words(std::uint64_t from, std::uint64_t to, std::size_t mask, F&& f) {
  while (from < to) {
    const std::size_t pos = from & mask;
    const unsigned bit = pos & 63;
    const std::uint64_t n = std::min<std::uint64_t>(to - from, 64 - bit);
    if (f(pos >> 6, (n == 64 ? ~0ull : ((1ull << n) - 1)) << bit)) return;
    from += n;
  }
}
}  // namespace

Timeline::Timeline(Tick unit) : unit_(unit ? unit : 1) {
  mask_ = kInitialUnits - 1;
  busy_words_.assign(kInitialUnits / 64, 0);
  point_at_words();
}

Timeline::Timeline(const Timeline& o) { *this = o; }
Timeline::Timeline(Timeline&& o) noexcept { *this = std::move(o); }

void Timeline::copy_state(const Timeline& o) {
  now_seen_ = o.now_seen_, floor_ = o.floor_, phys_ = o.phys_, last_end_units_ = o.last_end_units_;
  unit_ = o.unit_, mask_ = o.mask_, keep_ = o.keep_, busy_units_ = o.busy_units_;
  last_end_kind_[0] = o.last_end_kind_[0], last_end_kind_[1] = o.last_end_kind_[1];
  turn01_ = o.turn01_, turn10_ = o.turn10_;
}

Timeline& Timeline::operator=(const Timeline& o) {
  if (this == &o) return *this;
  copy_state(o);
  busy_words_ = o.busy_words_, kind1_words_ = o.kind1_words_;
  point_at_words();
  return *this;
}

Timeline& Timeline::operator=(Timeline&& o) noexcept {
  if (this == &o) return *this;
  copy_state(o);
  busy_words_ = std::move(o.busy_words_), kind1_words_ = std::move(o.kind1_words_);
  o.busy_words_.clear(), o.kind1_words_.clear();
  point_at_words();
  o.point_at_words();
  return *this;
}

void Timeline::set_turnaround(Tick zero_to_one, Tick one_to_zero) {
  // Without turnarounds a booking keeps no end per kind (book()): set after one, the turnaround
  // would not see it.
  if (busy_units_) throw Error("timeline: turnarounds set after a booking");
  turn01_ = (zero_to_one + unit_ - 1) / unit_;
  turn10_ = (one_to_zero + unit_ - 1) / unit_;
  if (std::max(turn01_, turn10_) > kMaxUnits)
    throw Error("timeline: a turnaround of " + std::to_string(std::max(turn01_, turn10_)) + " units");
  keep_ = std::uint32_t(std::max(turn01_, turn10_));
  kind1_words_.assign(busy_words_.size(), 0);
  point_at_words();
}

bool Timeline::any(const std::uint64_t* bits, Unit from, Unit to) const {
  // Below the floor is the past; at or past the window's end nothing is reserved.
  from = std::max(from, floor_);
  to = std::min(to, window_end());
  bool found = false;
  for_words(from, to, mask_, [&](std::size_t w, std::uint64_t m) { return found = (bits[w] & m) != 0; });
  return found;
}

void Timeline::set_across(std::uint64_t* bits, Unit from, Unit to) {
  for_words(from, to, mask_, [&](std::size_t w, std::uint64_t m) {
    bits[w] |= m;
    return false;
  });
}

void Timeline::move_floor(Tick now) {
  // Units before global time can never be asked for again; the turnaround distance before it
  // stays readable. After a jump longer than the window nothing before global time counts.
  now_seen_ = now;
  const Unit n = now / unit_;
  if (n <= floor_) return;
  if (n - floor_ >= mask_ + 1)
    floor_ = n;
  else if (n > floor_ + keep_)
    floor_ = n - keep_;
}

void Timeline::clear_stale() {
  if (floor_ - phys_ >= mask_ + 1) {
    std::fill(busy_words_.begin(), busy_words_.end(), 0);
    std::fill(kind1_words_.begin(), kind1_words_.end(), 0);
  } else {
    for_words(phys_, floor_, mask_, [&](std::size_t w, std::uint64_t m) {
      busy_[w] &= ~m;
      if (kind1_) kind1_[w] &= ~m;
      return false;
    });
  }
  phys_ = floor_;
}

void Timeline::make_room(Unit end) {
  clear_stale();
  if (end > window_end()) grow(end);
}

void Timeline::grow(Unit end) {
  const Unit need = end - floor_;
  std::size_t size = mask_ + 1;
  while (size < need) size *= 2;
  if (size > kMaxUnits)
    throw Error("timeline: a reservation " + std::to_string(need) +
                " cycles ahead of simulated time; a resource is booked unreasonably far into the future");
  // Re-lay the live window [floor_, floor_ + old size) into the larger circle.
  std::vector<std::uint64_t> nb(size / 64, 0), nk(kind1_ ? size / 64 : 0, 0);
  const std::size_t old_mask = mask_;
  for (Unit u = floor_; u < floor_ + old_mask + 1; ++u) {
    const std::size_t op = u & old_mask, np = u & (size - 1);
    if (busy_[op >> 6] >> (op & 63) & 1) nb[np >> 6] |= 1ull << (np & 63);
    if (kind1_ && (kind1_[op >> 6] >> (op & 63) & 1)) nk[np >> 6] |= 1ull << (np & 63);
  }
  busy_words_.swap(nb);
  kind1_words_.swap(nk);
  point_at_words();
  mask_ = std::uint32_t(size - 1);
}

Timeline::Unit Timeline::next_free(Unit from) const {
  // Scans whole words for the first clear bit at or after `from`; past the window all is free.
  const Unit end = window_end();
  while (from < end) {
    const std::size_t pos = from & mask_;
    const unsigned bit = pos & 63;
    const Unit n = std::min<Unit>(64 - bit, end - from);
    const std::uint64_t in_range = n == 64 ? ~0ull : (1ull << n) - 1;
    const std::uint64_t free_bits = ~(busy_[pos >> 6] >> bit) & in_range;
    if (free_bits) return from + Unit(__builtin_ctzll(free_bits));
    from += n;
  }
  return from;
}

Timeline::Unit Timeline::next_busy(Unit from, Unit to) const {
  // As next_free, for a set bit; units before the floor were cleared or are the past, and the
  // callers ask from a free unit at or past it.
  const Unit end = std::min(to, window_end());
  while (from < end) {
    const std::size_t pos = from & mask_;
    const unsigned bit = pos & 63;
    const Unit n = std::min<Unit>(64 - bit, end - from);
    const std::uint64_t in_range = n == 64 ? ~0ull : (1ull << n) - 1;
    const std::uint64_t busy_bits = (busy_[pos >> 6] >> bit) & in_range;
    if (busy_bits) return from + Unit(__builtin_ctzll(busy_bits));
    from += n;
  }
  return to;
}

bool Timeline::fits(Unit s, Unit d, std::uint8_t kind) const {
  return !any(busy_, s, s + d) && turnarounds_clear(s, d, kind);
}

bool Timeline::turnarounds_clear(Unit s, Unit d, std::uint8_t kind) const {
  if (!kind1_) return true;
  // Kind-0 bits are busy & ~kind1; check the turnaround distance on both sides.
  if (kind == 0) {
    if (turn10_ && any(kind1_, s > turn10_ ? s - turn10_ : 0, s)) return false;
    if (turn01_ && any(kind1_, s + d, s + d + turn01_)) return false;
    return true;
  }
  auto any_kind0 = [&](Unit from, Unit to) {
    from = std::max(from, floor_);
    to = std::min(to, window_end());
    for (Unit u = from; u < to; ++u) {
      const std::size_t p = u & mask_;
      if ((busy_[p >> 6] & ~kind1_[p >> 6]) >> (p & 63) & 1) return true;
    }
    return false;
  };
  if (turn01_ && any_kind0(s > turn01_ ? s - turn01_ : 0, s)) return false;
  if (turn10_ && any_kind0(s + d, s + d + turn10_)) return false;
  return true;
}

Timeline::Unit Timeline::find_gap(Unit s, Unit d, std::uint8_t kind) {
  // Every start from s up to the first busy unit within [s, s + d) would cover that unit: the
  // next one to try is the first free unit past it. The window grows to the same end as a try
  // of each start would grow it (the last start tried, the one returned, asks the most).
  for (;;) {
    ensure(s + d + keep_ + 1);
    s = next_free(s);
    ensure(s + d + keep_ + 1);
    const Unit busy = next_busy(s, s + d);
    if (busy < s + d) {
      s = busy + 1;
      continue;
    }
    if (turnarounds_clear(s, d, kind)) return s;
    ++s;
  }
}

bool Timeline::fits_every(Tick start, Tick duration, Tick stride, std::uint32_t count, std::uint8_t kind) {
  update_floor();
  const Unit s = start / unit_, d = (duration + unit_ - 1) / unit_, step = stride / unit_;
  if (count == 0 || d == 0) return true;
  if (s * unit_ != start || step * unit_ != stride || s < floor_ || step < d) return false;
  // Units at or past the window's end are free, so the checks need no room. Intervals that
  // touch are one: the turnaround distances matter only at its two ends.
  const Unit last = s + (count - 1) * step;
  if (step == d) {
    if (!past_everything(s, kind) && !fits(s, last + d - s, kind)) return false;
  } else {
    for (Unit u = s; u <= last; u += step)
      if (!past_everything(u, kind) && !fits(u, d, kind)) return false;
  }
  return true;
}

void Timeline::reserve_every(Tick start, Tick duration, Tick stride, std::uint32_t count, std::uint8_t kind) {
  const Unit s = start / unit_, d = (duration + unit_ - 1) / unit_, step = stride / unit_;
  if (count == 0 || d == 0) return;
  const Unit last = s + (count - 1) * step;
  ensure(last + d + keep_ + 1);
  if (step == d)
    book(s, last + d - s, kind);
  else
    for (Unit u = s; u <= last; u += step) book(u, d, kind);
}

void Timeline::reserve_at(Tick start, Tick duration, std::uint8_t kind) {
  const Unit d = (duration + unit_ - 1) / unit_;
  if (d == 0) return;
  const Unit s = start / unit_;
  ensure(s + d);
  book(s, d, kind);
}

}  // namespace dvp
