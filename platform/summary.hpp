// SPDX-License-Identifier: MIT
// What a run reports: the summary object of stats.json (summarize) and summary.txt, both read
// from a finished SoC.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "activity.hpp"
#include "scenario.hpp"
#include "soc.hpp"

namespace dvp::platform {

// The summary object: simulated and host time, DRAM, L2, ring, AI Cores, Arm cores.
nlohmann::json summarize(Soc& soc, double host_seconds);

// A compiled network's (network: in the scenario) layers as an architect reads them: per layer its
// ops, output, time, fraction of its engine's peak and of its roofline bound, the bytes of its
// tensors, and, measured over its time (`activity`), the DRAM bytes moved, the busy share of the
// DRAM and of each AI Core pipe and what bound it (the busiest); the network's latency, images
// per second and fraction of the fp16 peak.
nlohmann::json summarize_network(const Scenario& s, Soc& soc, const Activity& activity);

// summary.txt: the run at a glance (each kernel's units measured over its time by `activity`), then
// the checks' lines; `status` is the result line.
std::string summary_text(const Scenario& s, Soc& soc, const nlohmann::json& sum, const Activity& activity,
                         const std::vector<std::string>& check_lines, const std::string& status);

// Looks up "summary.key" or "<module>.<key>" in stats.json content; false if absent.
bool lookup_metric(const nlohmann::json& stats, const std::string& metric, double& value);

std::string fmt(const char* f, double v);  // printf of one number

}  // namespace dvp::platform
