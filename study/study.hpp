// SPDX-License-Identifier: MIT
// What-if studies: a study file names a scenario, a base preset and the parameters to vary; each
// point of the study is one `dvp run` of that scenario with those keys set (--set), in a process
// and a folder of its own (SystemC elaborates once per process). docs/studies.md describes it.
//
//   name: l2-x-scheduler
//   description: ...            what the study asks, and the shape of the answer expected
//   scenario: ../memory/mix.yaml    (relative to the study file)
//   preset: ascend310           optional: the base preset (default: the scenario's)
//   timing_only: true           optional
//   set: [run.max_sim_ns=1e6]   optional: keys every point sets
//   time_limit_s: 600           optional: each point's wall-clock limit (run.max_wall_seconds)
//   run_args: [--batch, '8']    optional: more arguments for dvp run (an ONNX model's)
//   grid:                       the cartesian product of its axes: a list, or {from, to, step}
//     platform.l2.size_kib: [2048, 4096, 8192]
//   zip:                        lists of one length, varied together (point i takes each i-th)
//     platform.ring.clock_mhz: [500, 1000]
//     platform.ring.link_bytes_per_cycle: [128, 64]
//   sample:                     seeded random or Latin-hypercube points in ranges
//     method: lhs               random | lhs
//     points: 16
//     seed: 1
//     ranges: {platform.dram.data_rate_mtps: {min: 2133, max: 4266, integer: true, log: false}}
//   sensitivity:                for --sensitivity: each key times 1/factor and factor, alone
//     factor: 2
//     parameters: [platform.l2.size_kib, platform.aicore.cores]
//     metric: summary.simulated_ns
//   metrics: [summary.simulated_ns, summary.l2_hit_rate]   default: every value of the summary
//   plots: [{y: summary.l2_hit_rate, x: platform.l2.size_kib, kind: line}]   drawn after the sweep
//
// The points are grid x zip x sample (each part optional), in that order, numbered from 0.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/config.hpp"

namespace dvp::study {

struct Sensitivity {
  bool on = false;     // the points are sensitivity_points' (dvp sweep --sensitivity)
  cfg::Origin origin;  // where the section is
  double factor = 2;
  std::vector<std::string> parameters;
  std::string metric = "summary.simulated_ns";
};

// A plot the sweep draws once its table is written (dvp plot DIR --y ... --x ... --hue ... --kind ...).
struct PlotSpec {
  std::string y, x, hue, kind;
};

struct Study {
  std::string file;  // the study file
  std::string name, description;
  std::string scenario;  // its path, absolute
  std::string preset;    // "" : the scenario's
  bool timing_only = false;
  std::vector<std::string> sets;                 // key=value every point sets
  std::vector<std::string> run_args;             // more arguments for dvp run (an ONNX model's --batch 8)
  double time_limit_s = 0;                       // 0: the scenario's run.max_wall_seconds
  std::vector<std::string> keys;                 // the parameters varied, in column order
  std::vector<std::vector<std::string>> points;  // per point, a value per key (YAML text)
  std::vector<cfg::Origin> key_origin;           // where each key is declared
  std::vector<std::string> metrics;              // empty: every value of the summary
  std::vector<PlotSpec> plots;                   // drawn after the sweep
  Sensitivity sensitivity;
};

// Reads and checks a study file; every error names the file and line.
Study load_study(const std::string& path);

// The study's points for --sensitivity: the base (no key set), then for each sensitivity
// parameter its base value / factor and x factor (integers rounded, at least 1), the base values
// read from the scenario's resolved configuration. Replaces keys and points.
void sensitivity_points(Study& s);

// The --set arguments of point i: the study's own, then the point's keys.
std::vector<std::string> point_sets(const Study& s, std::size_t i);

// Checks every point against the configuration schema (the scenario loaded with its --set
// keys), so a wrong key or an out-of-range value stops the study before any run, naming the
// study line that declares it.
void validate_points(const Study& s);

}  // namespace dvp::study
