// SPDX-License-Identifier: MIT
#include "ring_timing.hpp"

namespace dvp::ring {

using cfg::Type;

void RingConfig::describe(cfg::Spec& s) {
  s.param("stops", Type::Int, "ring stops; every requester, home node and memory node sits on one").range(1, 256);
  s.param("routing", Type::Enum, "the rings and the way a transfer takes: " + routing_policies().doc())
      .choices(routing_policies().names());
  s.param("clock_mhz", Type::Float, "ring clock").unit("MHz").range(1, 10000);
  s.param("link_bytes_per_cycle", Type::Int, "width of one link, per channel").unit("B/cycle").range(1, 4096);
  s.param("hop_cycles", Type::Int, "latency of one hop (stop to next stop)").unit("cycles").range(1, 1000);
  s.param("header_bytes", Type::Int, "size of a request or response message without data").unit("B").range(1, 256);
  s.param("home_node_stops", Type::IntList, "stop of each L2 slice (home node); empty: spread evenly")
      .defaults("[]")
      .min(0);
  s.param("memory_node_stops", Type::IntList, "stop of each DRAM controller (memory node); empty: spread evenly")
      .defaults("[]")
      .min(0);
}

RingConfig RingConfig::from(const cfg::Node& n) {
  RingConfig c;
  c.stops = std::uint32_t(n.get_uint("stops"));
  c.routing = routing_policies().parse(n.at("routing"));
  c.clock = Clock(n.get_double("clock_mhz"));
  c.link_bytes_per_cycle = std::uint32_t(n.get_uint("link_bytes_per_cycle"));
  c.hop_cycles = std::uint32_t(n.get_uint("hop_cycles"));
  c.header_bytes = std::uint32_t(n.get_uint("header_bytes"));
  for (auto v : n.get_uint_list("home_node_stops")) c.home_node_stops.push_back(std::uint32_t(v));
  for (auto v : n.get_uint_list("memory_node_stops")) c.memory_node_stops.push_back(std::uint32_t(v));
  for (auto* list : {&c.home_node_stops, &c.memory_node_stops})
    for (std::size_t i = 0; i < list->size(); ++i)
      if ((*list)[i] >= c.stops)
        n.at(list == &c.home_node_stops ? "home_node_stops" : "memory_node_stops")
            .items()[i]
            .fail("stop " + std::to_string((*list)[i]) + " does not exist (the ring has " + std::to_string(c.stops) +
                  " stops)");
  return c;
}

RingTiming::RingTiming(const RingConfig& c) : cfg_(c), routing_(c.routing()) {
  const std::size_t n = std::size_t(c.stops) * routing_->directions();
  // assumption (fast fidelity): a window of 16 ring cycles (8 - 16 lines' data on the presets'
  // links), the size that came closest to the detailed mode over the shipped scenarios (16 - 128
  // tried, docs/performance.md). Transfers that enter a link one after another queue (budget.hpp).
  if (fast())
    budgets_.assign(n * kChannels, Budget(16, Budget::Packing::BeforeLatestEnd, c.clock.period()));
  else
    timelines_.assign(n * kChannels, Timeline(c.clock.period()));
  stats_.resize(n);
  routes_.reserve(std::size_t(c.stops) * c.stops);
  for (std::uint32_t src = 0; src < c.stops; ++src)
    for (std::uint32_t dst = 0; dst < c.stops; ++dst) routes_.push_back(routing_->route(src, dst, c.stops));
}

namespace {
// The stop after `stop` in direction `dir` (0 clockwise) on a ring of n stops.
std::uint32_t next_stop(std::uint32_t stop, unsigned dir, std::uint32_t n) {
  if (dir == 0) return stop + 1 == n ? 0 : stop + 1;
  return stop == 0 ? n - 1 : stop - 1;
}
}  // namespace

Tick RingTiming::transfer(std::uint32_t src, std::uint32_t dst, Channel ch, std::uint32_t bytes, Tick t) {
  Route r = route(src, dst);
  if (r.hops == 0) return t;  // same stop: the local port, no link
  const Clock& clk = cfg_.clock;
  // In ring cycles: the links' timelines count them, so the path takes no division per hop.
  const std::uint64_t ser = (bytes + cfg_.link_bytes_per_cycle - 1) / cfg_.link_bytes_per_cycle;
  const std::uint32_t n = cfg_.stops;
  std::uint64_t enter = clk.to_cycles_ceil(t);
  std::uint32_t stop = src;
  for (std::uint32_t i = 0; i < r.hops; ++i) {
    std::size_t link = std::size_t(r.dir) * n + stop;
    const std::size_t at = link * kChannels + ch;
    enter = fast() ? budgets_[at].reserve(enter, ser) : timelines_[at].reserve_cycles(enter, ser);
    stats_[link].bytes[ch] += bytes;
    enter += cfg_.hop_cycles;  // head reaches the next stop
    stop = next_stop(stop, r.dir, n);
  }
  return clk.cycles(enter + ser);  // tail arrives ser after the head
}

}  // namespace dvp::ring
