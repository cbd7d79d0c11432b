// SPDX-License-Identifier: MIT
// Timing of a ring of stops joined by links, with separate request, response and data
// channels per link (CHI-like). Plain C++; the TLM Ring module uses it per transaction.
//
// A transfer of B bytes over k hops enters link i at t + i*hop (or later, when that link is
// busy) and occupies it for ceil(B / width) ring cycles; it arrives k*hop + ceil(B/width)
// cycles after it started when no link is contended (cut-through).
#pragma once
#include <cstdint>
#include <vector>

#include "common/budget.hpp"
#include "common/config.hpp"
#include "common/fidelity.hpp"
#include "common/timeline.hpp"
#include "routing.hpp"

namespace dvp::ring {

enum Channel : unsigned { kReq = 0, kRsp = 1, kDat = 2, kChannels = 3 };

struct RingConfig {
  std::uint32_t stops = 2;
  MakeRouting routing = nullptr;  // (routing.hpp)
  Clock clock;
  std::uint32_t link_bytes_per_cycle = 32;
  std::uint32_t hop_cycles = 1;
  std::uint32_t header_bytes = 16;
  std::vector<std::uint32_t> home_node_stops;    // per L2 slice; empty = spread evenly
  std::vector<std::uint32_t> memory_node_stops;  // per DRAM controller; empty = spread evenly
  Fidelity fidelity = Fidelity::Detailed;        // platform.memory.fidelity (the platform sets it)

  static void describe(cfg::Spec& s);
  static RingConfig from(const cfg::Node& n);
};

class RingTiming {
 public:
  explicit RingTiming(const RingConfig& c);

  // The routing policy's answer, looked up: every transfer asks, and the routes never change.
  Route route(std::uint32_t src, std::uint32_t dst) const { return routes_[std::size_t(src) * cfg_.stops + dst]; }
  const Routing& routing() const { return *routing_; }

  // Moves `bytes` from src to dst on a channel starting no earlier than t; returns arrival.
  Tick transfer(std::uint32_t src, std::uint32_t dst, Channel ch, std::uint32_t bytes, Tick t);

  struct LinkStats {
    std::uint64_t bytes[kChannels] = {0, 0, 0};
  };
  std::size_t links() const { return stats_.size(); }
  // Link index = dir * stops + from-stop.
  const LinkStats& link_stats(std::size_t i) const { return stats_[i]; }
  Tick link_busy(std::size_t i, Channel ch) const {
    return fast() ? cfg_.clock.cycles(budgets_[i * kChannels + ch].busy_total())
                  : timelines_[i * kChannels + ch].busy_total();
  }
  const RingConfig& config() const { return cfg_; }

 private:
  RingConfig cfg_;
  std::unique_ptr<Routing> routing_;
  bool fast() const { return cfg_.fidelity == Fidelity::Fast; }
  std::vector<Route> routes_;        // [src][dst]
  std::vector<Timeline> timelines_;  // [link][channel]
  std::vector<Budget> budgets_;      // [link][channel], in the fast fidelity (ring cycles)
  std::vector<LinkStats> stats_;
};

}  // namespace dvp::ring
