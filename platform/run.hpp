// SPDX-License-Identifier: MIT
// Running a scenario and writing its outputs: stats.json, summary.txt, trace.json.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "activity.hpp"
#include "scenario.hpp"
#include "soc.hpp"
#include "summary.hpp"

namespace dvp::platform {

struct RunResult {
  int exit_code = 0;
  nlohmann::json stats;  // what stats.json holds
  std::string summary;   // what summary.txt holds
};

struct RunOptions {
  std::string out_dir;  // empty: out/<scenario name>
  bool quiet = false;
  std::string save_tensors;  // every kernel's tensors go here after the run (overrides run.save_tensors)
};

// Elaborates the SoC, runs to completion (or a limit), evaluates checks, writes outputs.
RunResult run_scenario(const Scenario& s, const RunOptions& o);

// The steps of a run, for those who drive SoCs themselves (the two-SoC test):
// the scenario's temporal-decoupling quantum (platform.sim.quantum_ns) for the whole simulation
// (TLM-2.0's global quantum is one per process: SoCs simulated together share the last one set);
void set_quantum(const Scenario& s);
// runs every SoC built to completion, or to `max_sim` (ps), or until the watchdog asks to stop;
// returns why it stopped early, or "" (`origin`: where a limit not set by run.max_sim_ns came from;
// `activity`: sampled between slices of simulated time, at its period);
std::string simulate(Tick max_sim, const std::string& origin = "", Activity* activity = nullptr);
// when the posted write-backs of `soc` have landed in DRAM (run the simulation to there).
Tick drain(Soc& soc);

}  // namespace dvp::platform
