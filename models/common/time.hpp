// SPDX-License-Identifier: MIT
// Simulated time as integer picoseconds. SystemC's default resolution is 1 ps, so a Tick is
// exactly sc_time::value(); all timeline arithmetic stays in integers and is deterministic.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include <systemc>

namespace dvp {

using Tick = std::uint64_t;  // picoseconds
constexpr Tick kTickMax = ~Tick(0);

inline Tick to_tick(const sc_core::sc_time& t) { return t.value(); }
// from_value is a library call, and every transaction converts several times: below 2^52 ps
// (75 simulated minutes) the inline multiply of one picosecond gives the same value exactly
// (t + 0.5 is exact in a double there, and the product rounds down to t).
inline sc_core::sc_time to_sc(Tick t) {
  static const sc_core::sc_time one_ps = sc_core::sc_time::from_value(1);
  return t < (Tick(1) << 52) ? one_ps * double(std::int64_t(t)) : sc_core::sc_time::from_value(t);
}
// sc_time_stamp() returns a reference to the kernel's current time, which lives as long as
// the simulation context; holding it avoids a library call on every timeline access.
inline Tick now_tick() {
  static const sc_core::sc_time& now = sc_core::sc_time_stamp();
  return now.value();
}

// A time in nanoseconds (a configuration value, a trace entry) as a tick: the nearest picosecond.
inline Tick ns_to_tick(double ns) { return Tick(std::llround(ns * 1000.0)); }

// A clock domain: converts cycles to picoseconds. The period is rounded to a whole picosecond
// once, at construction, and every duration is an exact multiple of it; peak-rate figures
// are computed from the same rounded period so achieved never exceeds peak.
class Clock {
 public:
  Clock() = default;
  explicit Clock(double mhz);
  static Clock from_period_ps(Tick period_ps);

  Tick period() const { return period_ps_; }
  double mhz() const { return 1e6 / double(period_ps_); }
  Tick cycles(std::uint64_t n) const { return n * period_ps_; }
  // First clock edge at or after t: its cycle number, and its time.
  std::uint64_t to_cycles_ceil(Tick t) const { return (t + period_ps_ - 1) / period_ps_; }
  Tick align_up(Tick t) const { return to_cycles_ceil(t) * period_ps_; }
  std::uint64_t to_cycles_floor(Tick t) const { return t / period_ps_; }

 private:
  Tick period_ps_ = 1000;
};

std::string format_ns(Tick t);

}  // namespace dvp
