// SPDX-License-Identifier: MIT
// A study's results: one row per point (its values, status, then the metrics) gathered from the
// point folders into results.csv and results.json; and the comparison of two runs (dvp diff).
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dvp::study {

// Every scalar of a stats.json by its dotted path ("summary.l2_hit_rate", "soc.l2.hn0.hits",
// "soc.periph.ts.task_records.3.end_ns"); the host's own measurements (host seconds, MIPS,
// transactions per host second) are left out: they differ between identical runs.
std::map<std::string, nlohmann::json> flatten(const nlohmann::json& stats);

// The names of `stats` (flattened) closest to `name` in edit distance, best first, at most three:
// what a misspelt metric most likely meant. nearest_text says them for a message, in parentheses
// (or that the name is one of the host's measurements, which flatten leaves out).
std::vector<std::string> nearest_names(const std::string& name, const std::map<std::string, nlohmann::json>& stats);
std::string nearest_text(const std::string& name, const std::map<std::string, nlohmann::json>& stats);

// Reads OUT/study.json and the point folders; writes OUT/results.csv and OUT/results.json.
// Returns the number of points that did not run or failed (a point whose run ended but failed
// one of the scenario's own checks is a result: its status says check_failed).
std::size_t collect(const std::string& out);

struct DiffOptions {
  double threshold = 0;  // hide changes smaller than this fraction (0.01: 1%)
  // Gates: a metric whose relative change passes the limit (up for max_increase, down for
  // max_decrease; 0.05: 5%) makes the comparison fail (exit 1).
  std::map<std::string, double> max_increase, max_decrease;
};

// Prints every stats key that differs between RUN_A and RUN_B (folders with a stats.json): the
// summary's first, then the rest, each sorted by relative change; returns 0, or 1 when a gate
// failed (named).
int diff(const std::string& a, const std::string& b, const DiffOptions& o);

}  // namespace dvp::study
