// Running a scenario and writing its outputs: stats.json, summary.txt, trace.json.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "scenario.hpp"
#include "soc.hpp"

namespace dvp::platform {

struct RunResult {
  int exit_code = 0;
  nlohmann::json stats;    // what stats.json holds
  std::string summary;     // what summary.txt holds
};

struct RunOptions {
  std::string out_dir;  // empty: out/<scenario name>
  bool quiet = false;
};

// Elaborates the SoC, runs to completion (or a limit), evaluates checks, writes outputs.
RunResult run_scenario(const Scenario& s, const RunOptions& o);

// Computes the summary object from a finished SoC.
nlohmann::json summarize(Soc& soc, double host_seconds);

// Looks up "summary.key" or "<module>.<key>" in stats.json content; false if absent.
bool lookup_metric(const nlohmann::json& stats, const std::string& metric, double& value);

}  // namespace dvp::platform
