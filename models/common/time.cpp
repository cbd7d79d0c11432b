// SPDX-License-Identifier: MIT
#include "time.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace dvp {

Clock::Clock(double mhz) {
  if (!(mhz > 0.0)) throw std::invalid_argument("clock frequency must be positive");
  period_ps_ = Tick(std::llround(1e6 / mhz));
  if (period_ps_ == 0) throw std::invalid_argument("clock frequency above 1 THz");
}

Clock Clock::from_period_ps(Tick period_ps) {
  Clock c;
  c.period_ps_ = period_ps ? period_ps : 1;
  return c;
}

std::string format_ns(Tick t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f ns", double(t) / 1000.0);
  return buf;
}

}  // namespace dvp
