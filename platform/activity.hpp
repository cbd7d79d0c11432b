// SPDX-License-Identifier: MIT
// What the SoC's shared units did over time: the cumulative counters of the DRAM channels, the
// L2 slices and the AI Cores' pipes, read between the slices of simulated time the run loop
// advances by (simulate()). It has no process of its own, so nothing simulated depends on it.
// A window of the run (a layer's time) gets its DRAM bytes and the busy share of each unit, by
// which the summary names what bound the layer; trace.json gets counter tracks of them.
#pragma once
#include <array>
#include <utility>
#include <vector>

#include "aicore/isa.hpp"
#include "common/time.hpp"

namespace dvp {
class Tracer;
}

namespace dvp::platform {

class Soc;

class Activity {
 public:
  // The AI Core pipes a window is measured and bound by, with the names the summary gives them.
  static constexpr std::pair<aicore::Pipe, const char*> kPipes[] = {{aicore::Pipe::M, "cube"},
                                                                    {aicore::Pipe::V, "vector"},
                                                                    {aicore::Pipe::MTE2, "MTE2"},
                                                                    {aicore::Pipe::MTE3, "MTE3"},
                                                                    {aicore::Pipe::FIX, "FIXP"}};

  // What the units did over a window, as shares of the time they had in it.
  struct Window {
    double seconds = 0;
    double dram_bytes = 0;                      // read and written
    double dram_busy = 0;                       // the channels' data buses: fraction of their time
    double cores = 0;                           // the AI Cores that ran blocks, on average over the window
    std::array<double, aicore::kPipes> pipe{};  // each pipe's busy time over the time the cores ran blocks
    double l2_requests = 0, l2_hit_rate = 0;    // the L2's requests in the window, and their hit rate
    // What bound the window, and that unit's busy share: the busiest of the cube, vector, MTE3
    // and FIXP pipes and the loads (MTE2), when busy half the time or more, else "latency". Loads
    // name where they waited: "DRAM" when its data buses were busy half the time or more (its
    // share given), else "L2" (the MTE2's).
    const char* bound(double& share) const;
  };

  explicit Activity(const Soc& soc);
  // The simulated time between samples: 1 us, doubled (every other sample dropped) each time a
  // run has taken 4096, so a run keeps a few thousand whatever its length.
  Tick period() const { return period_; }
  // The slices of simulated time the run loop samples between: the period, at most 10 us.
  Tick slice() const;
  void sample();  // the counters now, when a period has passed since the last sample
  void finish();  // the counters at the end of the run, whenever that is
  Window window(Tick from, Tick to) const;
  // Counter tracks on the process "activity": DRAM GB/s and its data buses' busy share, the L2's
  // hit rate, and the mean busy share of the AI Cores' cube, vector and MTE2 pipes per period.
  void trace(Tracer& t) const;

 private:
  struct Totals {
    Tick t = 0;
    double dram_bytes = 0, dram_busy = 0, l2_hits = 0, l2_misses = 0, occupied = 0;
    std::array<double, aicore::kPipes> pipe{};
  };
  Totals read() const;
  Totals at(Tick t) const;  // interpolated between the samples around t
  const Soc& soc_;
  unsigned channels_ = 0, cores_ = 0;
  std::vector<Totals> samples_;
  Tick period_;
};

}  // namespace dvp::platform
