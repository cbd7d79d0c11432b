// SPDX-License-Identifier: MIT
#include "run.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/error.hpp"
#include "common/stats.hpp"
#include "common/trace.hpp"
#include "common/version.hpp"
#include "tlmcheck/checker.hpp"
#include "watchdog.hpp"

namespace dvp::platform {

namespace fs = std::filesystem;

// The output directory exists and takes files before anything is simulated: a bad --out is an
// error in a second, not after an hour's run. Named as the user gave it (--out or the default).
static void prepare_out_dir(const std::string& out, bool from_option) {
  const cfg::Origin where{from_option ? "--out " + out : "output directory " + out, 0, 0};
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw cfg::ConfigError(where, "", "cannot create the directory: " + ec.message());
  if (!fs::is_directory(out, ec)) throw cfg::ConfigError(where, "", "exists and is not a directory");
  const std::string probe = out + "/.dvp-write-probe";
  errno = 0;
  const bool writable = std::ofstream(probe).good();
  const int why = errno;  // before remove() sets its own
  std::remove(probe.c_str());
  if (!writable)
    throw cfg::ConfigError(where, "",
                           std::string("cannot write in the directory: ") + (why ? std::strerror(why) : "open failed"));
}

// An output file written whole and checked: a full disk or a size limit is an error naming it.
static void write_output(const std::string& path, const std::string& text) {
  errno = 0;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (f) f << text;
  if (f) f.close();
  if (!f) throw OutputError("cannot write " + path + ": " + (errno ? std::strerror(errno) : "write failed"));
}

// The phase the watchdog names if the wall-clock limit or a signal comes now.
static void phase(const char* what, bool stoppable = false) {
  if (Watchdog* w = Watchdog::current()) w->phase(what, stoppable);
}

// The simulated-time limit: run.max_sim_ns; for a compiled network without one, a bound from
// its work, so a firmware that hangs (an interrupt storm keeps simulated time moving) ends in a
// named error. 10x the sum of the layers' roofline bounds, plus 200 us per kernel for the ones
// latency bounds (a transformer block takes 5x its bounds) and 1 ms for the firmware's start:
// ResNet-50 and the transformer block finish in under 1/8 of it on both presets; a what-if preset
// that slows the memory or the cores moves the bounds with it.
// Returns the limit, and in `origin` where it came from when it was derived.
static Tick sim_limit(const Scenario& s, Soc& soc, std::string& origin) {
  const cfg::Node& run = s.root.at("run");
  if (run.has("max_sim_ns")) return ns_to_tick(run.get_double("max_sim_ns"));
  const KernelLauncher* l = soc.launcher();
  if (!s.root.find("network") || !l) return kTickMax;
  origin = "derived from the network's work: 10x its " + std::to_string(l->kernel_count()) +
           " kernels' roofline bounds + 200 us each + 1 ms; set run.max_sim_ns to change it";
  return Tick(10 * l->work_bound_ps()) + Tick(l->kernel_count()) * 200'000'000 + 1'000'000'000;
}

std::string simulate(Tick max_sim, const std::string& origin, Activity* activity) {
  Watchdog* guard = Watchdog::current();
  // Run in slices of simulated time so the limits are checked without a host thread, and the
  // activity is sampled, without a process, at its period. Each slice reaches at least the next
  // pending event, so the loop always makes progress.
  sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaborate and start every process
  while (sc_core::sc_pending_activity() && sc_core::sc_get_status() != sc_core::SC_STOPPED) {
    const Tick slice = activity ? activity->slice() : 10 * 1000 * 1000;  // 10 us
    const Tick next = now_tick() + to_tick(sc_core::sc_time_to_pending_activity());
    if (next > max_sim)
      return "simulated-time limit run.max_sim_ns (" + format_ns(max_sim) + ") reached" +
             (origin.empty() ? "" : " (" + origin + ")");
    const Tick until = std::min(max_sim, std::max(now_tick() + slice, next));
    sc_core::sc_start(to_sc(until - now_tick()), sc_core::SC_EXIT_ON_STARVATION);
    if (activity) activity->sample();
    if (guard && guard->stop_requested()) break;  // the wall-clock limit, SIGINT or SIGTERM
  }
  // A stop that came as the last slice ended is still this run's reason.
  if (guard && guard->stop_requested()) return guard->stop_reason() + " at simulated " + format_ns(now_tick());
  return "";
}

// Why the simulation did not end as it should, or "": a protocol violation first (what comes
// after it proves nothing), then faults, then a firmware or a requester that did not finish.
static std::string end_problem(Soc& soc) {
  if (!soc.protocol().first.empty()) return soc.protocol().first;
  if (!soc.failure().empty()) return soc.failure();
  if (soc.launcher() && !soc.launcher()->fault().empty()) return "AI Core fault: " + soc.launcher()->fault();
  if (!soc.cpu_fault().empty()) return "CPU fault: " + soc.cpu_fault();
  if (soc.ts() && !soc.ts()->error().empty()) return soc.ts()->error();
  if (soc.dvpp() && !soc.dvpp()->error().empty()) return soc.dvpp()->error();
  bool firmware_started = false;
  for (auto& c : soc.cpus()) firmware_started |= c->instructions() > 0;
  if (firmware_started && !(soc.simctrl() && soc.simctrl()->exit_code())) {
    // Nothing left to happen and no exit written: every core waits for an interrupt that
    // nothing will raise.
    std::string where;
    for (auto& c : soc.cpus())
      if (c->instructions())
        where += std::string(where.empty() ? "" : ", ") + c->basename() + " at pc " + hex(c->pc()) +
                 (c->waiting_for_interrupt() ? " (WFI)" : "");
    return "the firmware did not finish: no exit code written to simctrl.EXIT and nothing left to run (" + where + ")";
  }
  for (auto& g : soc.requesters())
    if (!g->done()) return std::string(g->name()) + " did not finish";
  if (soc.launcher() && !soc.launcher()->done()) return "the kernels did not finish";
  if (soc.media() && !soc.media()->done()) return "the media jobs (dvpp:) did not finish";
  return "";
}

Tick drain(Soc& soc) {
  // Posted write-backs may still be on their way to DRAM: the run ends when they land.
  Tick drained = now_tick();
  for (auto& hn : soc.l2_slices()) drained = std::max(drained, hn->last_memory_done());
  for (auto& mc : soc.controllers()) drained = std::max(drained, mc->drain_writes(drained));
  return drained;
}

// A metric GROUP.KEY whose counter counts data values (see stats::Group::Counts).
static bool counts_data(const Soc& soc, const std::string& metric) {
  const std::size_t dot = metric.rfind('.');
  const stats::Group* g = dot == std::string::npos ? nullptr : soc.stats().find(metric.substr(0, dot));
  return g && g->counts_data(metric.substr(dot + 1));
}

// The scenario's checks (checks:, requesters' data, kernels, tasks, the firmware's exit code),
// one line each; `failed` when one fails.
static std::vector<std::string> check_results(const Scenario& s, Soc& soc, const nlohmann::json& stats, bool& failed) {
  std::vector<std::string> lines;
  auto line = [&](bool ok, const std::string& what) {
    failed |= !ok;
    lines.push_back(std::string(ok ? "ok   " : "FAIL ") + what);
  };
  for (auto& g : soc.requesters())
    if (g->verify_errors())
      line(false, "data: " + std::to_string(g->verify_errors()) + " bytes differ; first: " + g->first_error());
  if (const cfg::Node* checks = s.root.find("checks"); checks && checks->is_seq())
    for (auto& c : checks->items()) {
      const std::string& m = c.get_string("metric");
      double v;
      if (!lookup_metric(stats, m, v))
        c.at("metric").fail(
            "no metric '" + m +
            "' in the results, or not a number (a check compares numbers; see stats.json for the names)");
      if (soc.timing_only() && counts_data(soc, m)) {
        lines.push_back("n/a  " + m + ": counts data values, which a timing-only run does not move");
        continue;
      }
      bool ok = true;
      std::string bounds;
      if (c.has("min")) ok &= v >= c.get_double("min"), bounds += fmt(">= %g", c.get_double("min"));
      if (c.has("max"))
        ok &= v <= c.get_double("max"),
            bounds += std::string(bounds.empty() ? "" : ", ") + fmt("<= %g", c.get_double("max"));
      line(ok, m + " = " + fmt("%.6g", v) + "  (want " + bounds + ")");
    }
  if (KernelLauncher* l = soc.launcher())
    for (auto& k : l->results()) {
      if (k.checked)
        line(k.passed, "kernel " + k.name + ": " + k.detail);
      else if (!k.detail.empty())
        lines.push_back("n/a  kernel " + k.name + ": " + k.detail);
    }
  if (MediaLauncher* m = soc.media(); m && m->done())
    for (auto& r : m->check()) {
      if (r.checked)
        line(r.passed, "dvpp " + r.name + ": " + r.detail);
      else
        lines.push_back("n/a  dvpp " + r.name + ": " + r.detail);
    }
  if (soc.ts())
    for (auto& r : soc.ts()->records())
      if (r.fault) line(false, "task " + r.name + " (stream " + std::to_string(r.stream) + "): " + r.fault_text);
  if (soc.simctrl() && soc.simctrl()->exit_code() && *soc.simctrl()->exit_code() != 0)
    line(false, "firmware exit code " + std::to_string(*soc.simctrl()->exit_code()));
  return lines;
}

// stats.json, summary.txt, trace.json, the AI Cores' instruction profiles, the UART files.
// The tensors the scenario asks to save (save:, run.save_tensors), once the run is over.
static void save_tensors(const std::string& out, Soc& soc, const cfg::Node& run, const RunOptions& o) {
  if (MediaLauncher* m = soc.media(); m && m->done()) {
    const unsigned n = m->save(out);
    if (n && !o.quiet) std::cout << n << " media output" << (n == 1 ? "" : "s") << " written\n";
  }
  KernelLauncher* l = soc.launcher();
  const std::string all = !o.save_tensors.empty()   ? o.save_tensors
                          : run.has("save_tensors") ? run.get_string("save_tensors")
                                                    : "";
  if (!l || !l->saves_tensors(all)) return;
  if (soc.timing_only()) {
    std::cerr << "dvp: note: no tensor saved: a timing-only run moves no data\n";
    return;
  }
  const unsigned n = l->save_tensors(out, all);
  if (!o.quiet) std::cout << n << " tensor file" << (n == 1 ? "" : "s") << " written\n";
}

static void write_outputs(const std::string& out, Soc& soc, const RunResult& r, bool trace) {
  write_output(out + "/stats.json", r.stats.dump(1) + "\n");
  write_output(out + "/summary.txt", r.summary);
  if (trace) soc.tracer().write(out + "/trace.json");
  for (auto& c : soc.aicores())
    if (c->blocks_done())
      write_output(out + "/aicore" + std::to_string(c->id()) + "-instructions.csv", c->instruction_csv());
  for (auto& u : soc.uarts()) u->finish();
}

// Load is the caller's (load_scenario); then build, simulate, check, write.
RunResult run_scenario(const Scenario& s, const RunOptions& o) {
  const cfg::Node& run = s.root.at("run");
  const std::string out = o.out_dir.empty() ? "out/" + s.root.get_string("name") : o.out_dir;
  const bool trace = run.get_bool("trace");
  set_quantum(s);
  prepare_out_dir(out, !o.out_dir.empty());
  phase("building the SoC");
  Soc soc("soc", s);
  soc.set_output_dir(out);
  soc.tracer().configure(trace, run.get_uint("trace_max_slices_per_lane"), 0);
  for (auto& u : soc.uarts())
    u->connect(out, [quiet = o.quiet](const std::string& line) {
      if (!quiet) std::cout << line << "\n" << std::flush;
    });

  phase("simulating", true);
  const auto t0 = std::chrono::steady_clock::now();
  std::string origin;
  const Tick max_sim = sim_limit(s, soc, origin);
  Activity activity(soc);
  std::string limit_error = simulate(max_sim, origin, &activity);
  // After the simulation a limit or a signal ends nothing at once: checking and writing get
  // the grace period, so an hour's run keeps its outputs.
  phase("checking the results", true);
  if (KernelLauncher* l = soc.launcher(); l && l->firmware_mode() && soc.ts()) {
    // The firmware ran the kernels: check their outputs now, timed by their tasks.
    std::vector<std::pair<std::string, std::pair<Tick, Tick>>> times;
    for (auto& r : soc.ts()->records()) times.push_back({r.name, {r.start, r.end}});
    l->check_after_firmware(times);
  }
  const std::string problem = end_problem(soc);  // a protocol violation overrides a limit
  if (!soc.protocol().first.empty() || limit_error.empty()) limit_error = problem;
  const Tick drained = drain(soc);
  if (limit_error.empty() && drained > now_tick() && sc_core::sc_get_status() != sc_core::SC_STOPPED)
    sc_core::sc_start(to_sc(drained - now_tick()));
  activity.finish();
  activity.trace(soc.tracer());
  for (auto& c : soc.cpus()) c->close_trace();
  const double host = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  RunResult r;
  nlohmann::json sum = summarize(soc, host);
  if (s.root.find("network")) sum["network"] = summarize_network(s, soc, activity);
  r.stats = soc.stats().to_json();
  r.stats["summary"] = sum;
  r.stats["trace_dropped_slices"] = soc.tracer().dropped();
  r.stats["dvp"] = {{"version", version()}, {"revision", revision()}};  // the build that ran it
  bool failed = false;
  const std::vector<std::string> check_lines = check_results(s, soc, r.stats, failed);
  r.summary = summary_text(s, soc, sum, activity, check_lines,
                           !limit_error.empty() ? "STOPPED: " + limit_error
                           : failed             ? "FAILED"
                                                : "passed");
  r.exit_code = !limit_error.empty() ? kExitSimError : failed ? kExitCheckFailed : kExitOk;
  Watchdog* guard = Watchdog::current();
  if (guard && guard->stop_requested()) r.exit_code = guard->stop_exit_code();

  phase("writing the outputs", true);
  write_outputs(out, soc, r, trace);
  if (!o.quiet) std::cout << r.summary << "\noutputs in " << out << "/\n";
  save_tensors(out, soc, run, o);
  if (!limit_error.empty())
    std::cerr << "dvp: error: " << limit_error << "\n";
  else
    for (auto& l : check_lines)
      if (l.rfind("FAIL task ", 0) == 0) std::cerr << "dvp: " << l << "\n";
  return r;
}

void set_quantum(const Scenario& s) {
  const double ns = s.root.at("platform").at("sim").get_double("quantum_ns");
  tlm::tlm_global_quantum::instance().set(sc_core::sc_time::from_value(ns_to_tick(ns)));
}

}  // namespace dvp::platform
