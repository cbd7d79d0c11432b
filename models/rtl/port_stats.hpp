// SPDX-License-Identifier: MIT
// What one bridge port counts: transactions, beats, bytes, and the latency of a burst in RTL
// clock cycles (min / mean / max). Declared once here for both bridge directions; the
// checker adds the stall cycles of each channel.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "common/stats.hpp"

namespace dvp::rtl {

struct PortStats {
  PortStats(stats::Group& g, const std::string& p)
      : reads(g.counter(p + "reads", "read bursts")),
        writes(g.counter(p + "writes", "write bursts")),
        beats(g.counter(p + "beats", "data beats (R and W)")),
        bytes(g.counter(p + "bytes", "bytes moved (strobed bytes for writes)")),
        errors(g.counter(p + "error_responses", "bursts answered SLVERR or DECERR")),
        latency_sum(g.counter(p + "latency_cycles_sum", "sum over bursts of address handshake to last beat / B")),
        latency_max(g.counter(p + "latency_cycles_max", "longest burst, address handshake to last beat / B")) {
    g.formula(p + "latency_cycles_min", "shortest burst, address handshake to last beat / B",
              [this] { return reads + writes ? double(latency_min) : 0.0; });
    g.formula(p + "latency_cycles_mean", "mean burst latency, address handshake to last beat / B",
              [this] { return reads + writes ? double(latency_sum) / double(reads + writes) : 0.0; });
  }
  void burst_done(std::uint64_t cycles) {
    latency_sum += cycles;
    latency_max = std::max(latency_max, cycles);
    latency_min = std::min(latency_min, cycles);
  }
  std::uint64_t &reads, &writes, &beats, &bytes, &errors, &latency_sum, &latency_max;
  std::uint64_t latency_min = std::numeric_limits<std::uint64_t>::max();
};

}  // namespace dvp::rtl
