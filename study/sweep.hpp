// SPDX-License-Identifier: MIT
// Running a study: each point one `dvp run` child process in OUT/points/NNNN, `jobs` at a time,
// with a progress line; or the commands for GNU parallel or a Slurm job array that run the points
// elsewhere (`dvp sweep STUDY --out OUT --point N` each), collected afterwards.
//
// OUT holds study.json (the study as run: its keys, every point's values, the metrics), one
// folder per point (the run's outputs, log.txt with its console, point.json: the point's values,
// status, exit code, error and host seconds), and results.csv / results.json (results.hpp).
#pragma once
#include <string>
#include <vector>

#include "study.hpp"

namespace dvp::study {

struct SweepOptions {
  std::string out;      // the study's folder
  unsigned jobs = 1;    // points run at once
  bool resume = false;  // skip the points OUT already has a point.json for, of the same values
  bool quiet = false;   // no progress line
};

// Runs the study's points; returns 0 when every point ran (a point that failed one of the
// scenario's own checks ran: its status is check_failed), 1 when one failed (its error is in
// results.csv), 130 / 143 when stopped by SIGINT / SIGTERM.
int sweep(const Study& s, const SweepOptions& o);

// Runs point i alone (the body of an emitted command); returns its dvp run's exit code.
int run_point(const Study& s, const std::string& out, std::size_t i);

// Debian's python3 (whose python3-matplotlib setup.sh installs), else the first on PATH.
std::string python3();

// Runs the plotting script (platform::plot_script(), python3-matplotlib) on DIR with `args`;
// prints the files it wrote (unless quiet), or why it did not (a plot that fails does not fail
// the study).
void plot(const std::string& dir, const std::vector<std::string>& args, bool quiet = false);

// After a --sensitivity sweep (sensitivity_points): each parameter's metric at base / factor,
// the base and x factor, its swing over the base, largest first (the tornado), on stdout and in
// OUT/sensitivity.csv.
void print_tornado(const Study& s, const std::string& out);

// Writes OUT/commands.txt (GNU parallel: one `dvp sweep --point` line per point) or
// OUT/sweep.sbatch and OUT/collect.sbatch (a Slurm job array and its collect step), and
// study.json; prints how to submit them.
void emit(const Study& s, const std::string& out, const std::string& kind);

}  // namespace dvp::study
