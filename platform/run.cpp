#include "run.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/error.hpp"
#include "common/stats.hpp"
#include "common/trace.hpp"
#include "tlmcheck/checker.hpp"
#include "watchdog.hpp"

namespace dvp::platform {

namespace fs = std::filesystem;

nlohmann::json summarize(Soc& soc, double host_seconds) {
  const Tick end = now_tick();
  for (auto& mc : soc.controllers()) mc->finish(end);
  std::uint64_t rd = 0, wr = 0, hits = 0, misses = 0, wbs = 0, evictions = 0, row_hits = 0, bursts = 0, refreshes = 0;
  for (auto& mc : soc.controllers()) {
    rd += mc->bytes_read();
    wr += mc->bytes_written();
    for (unsigned c = 0; c < mc->config().channels_per_controller; ++c) {
      auto& ch = mc->channel(c);
      row_hits += ch.row_hits;
      bursts += ch.reads + ch.writes;
      refreshes += ch.refreshes;
    }
  }
  for (auto& s : soc.l2_slices()) {
    hits += s->hits();
    misses += s->misses();
    wbs += s->writebacks();
    evictions += s->evictions();
  }
  std::uint64_t tx = 0, verify_errors = 0, lat_sum = 0;
  for (auto& g : soc.requesters()) {
    tx += g->transactions();
    verify_errors += g->verify_errors();
    lat_sum += g->latency_ps_total();
  }
  const double ns = double(end) / 1000.0;
  nlohmann::json j;
  j["simulated_ns"] = ns;
  j["host_seconds"] = host_seconds;
  j["timing_only"] = soc.timing_only();
  j["dram_type"] = soc.dram_config().type;
  j["dram_bytes_read"] = rd;
  j["dram_bytes_written"] = wr;
  j["dram_achieved_GBps"] = ns > 0 ? double(rd + wr) / ns : 0.0;
  j["dram_peak_GBps"] = soc.dram_config().peak_GBps();
  j["dram_efficiency"] = ns > 0 ? double(rd + wr) / ns / soc.dram_config().peak_GBps() : 0.0;
  j["dram_row_hit_rate"] = bursts ? double(row_hits) / double(bursts) : 0.0;
  j["dram_refreshes"] = refreshes;
  j["l2_hits"] = hits;
  j["l2_misses"] = misses;
  j["l2_evictions"] = evictions;
  j["l2_writebacks"] = wbs;
  j["l2_hit_rate"] = (hits + misses) ? double(hits) / double(hits + misses) : 0.0;
  j["ring_max_link_busy"] = soc.ring().max_link_busy_fraction();
  j["requester_transactions"] = tx;
  j["requester_avg_latency_ns"] = tx ? double(lat_sum) / double(tx) / 1000.0 : 0.0;
  j["transactions_per_host_second"] = host_seconds > 0 ? double(tx) / host_seconds : 0.0;
  j["verify_errors"] = verify_errors;
  // debug.tlm_checks: transactions the base-protocol checkers saw, and their violations.
  j["tlm_transactions_checked"] = tlmcheck::Checker::transactions_checked();
  j["tlm_violations"] = tlmcheck::Checker::violations();
  // AI Cores: pipe busy fractions averaged over cores, and the cube's achieved vs peak rate.
  const auto& cores = soc.aicores();
  double cube = 0, vec = 0, mte2 = 0;
  for (auto& c : cores) {
    cube += ns > 0 ? double(c->pipe_busy(aicore::Pipe::M)) / double(end) : 0.0;
    vec += ns > 0 ? double(c->pipe_busy(aicore::Pipe::V)) / double(end) : 0.0;
    mte2 += ns > 0 ? double(c->pipe_busy(aicore::Pipe::MTE2)) / double(end) : 0.0;
  }
  const double n = cores.empty() ? 1.0 : double(cores.size());
  j["aicore_cube_busy"] = cube / n;
  j["aicore_vector_busy"] = vec / n;
  j["aicore_mte2_busy"] = mte2 / n;
  double flops = 0, int_ops = 0;
  for (auto& c : cores) flops += c->cube_flops(), int_ops += c->cube_int_ops();
  j["achieved_tflops"] = ns > 0 ? flops / (ns * 1e-9) / 1e12 : 0.0;
  j["peak_tflops"] = soc.aicore_config() ? soc.aicore_config()->peak_flops() / 1e12 : 0.0;
  // int8 steps cover twice the k of fp16: twice the operations per cycle.
  j["achieved_tops_int8"] = ns > 0 ? int_ops / (ns * 1e-9) / 1e12 : 0.0;
  j["peak_tops_int8"] = 2.0 * j["peak_tflops"].get<double>();
  // The fidelity figures: achieved / peak, fp and int8 (0 when the platform has no AI Core).
  const double peak = j["peak_tflops"].get<double>();
  j["cube_efficiency"] = peak > 0 ? j["achieved_tflops"].get<double>() / peak : 0.0;
  j["cube_efficiency_int8"] = peak > 0 ? j["achieved_tops_int8"].get<double>() / (2 * peak) : 0.0;
  j["kernel_checks_failed"] = soc.launcher() ? soc.launcher()->checks_failed() : 0;
  // The Arm cores: instructions, host speed, idle time in WFI.
  std::uint64_t instr = 0;
  double idle = 0;
  unsigned ran = 0;
  for (auto& c : soc.cpus()) {
    if (!c->instructions()) continue;  // never started
    ++ran;
    instr += c->instructions();
    idle += ns > 0 ? double(c->idle()) / double(end) : 0.0;
  }
  j["cpu_instructions"] = instr;
  j["cpu_mips_host"] = host_seconds > 0 ? double(instr) / host_seconds / 1e6 : 0.0;
  j["cpu_idle_fraction"] = ran ? idle / ran : 0.0;  // mean over the cores that ran
  j["firmware_exit_code"] = soc.simctrl() && soc.simctrl()->exit_code() ? int(*soc.simctrl()->exit_code()) : -1;
  return j;
}

bool lookup_metric(const nlohmann::json& stats, const std::string& metric, double& value) {
  // Module names contain dots, so try every split point: "<module>.<key>".
  for (std::size_t dot = metric.rfind('.'); dot != std::string::npos && dot > 0;
       dot = metric.rfind('.', dot - 1)) {
    std::string group = metric.substr(0, dot), key = metric.substr(dot + 1);
    auto g = stats.find(group);
    if (g != stats.end() && g->is_object()) {
      auto v = g->find(key);
      if (v != g->end() && v->is_number()) {
        value = v->get<double>();
        return true;
      }
    }
  }
  return false;
}

static std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

static std::string summary_text(const Scenario& s, Soc& soc, const nlohmann::json& sum,
                                 const std::vector<std::string>& check_lines, const std::string& status) {
  std::ostringstream os;
  auto row = [&](const std::string& k, const std::string& v) {
    os << "  " << k << std::string(k.size() < 34 ? 34 - k.size() : 1, ' ') << v << "\n";
  };
  os << "scenario  " << s.root.get_string("name") << "   (" << s.file << ")\n";
  os << "platform  " << s.root.at("platform").get_string("name")
     << (s.preset.empty() ? "" : "   preset " + s.preset) << (soc.timing_only() ? "   timing-only" : "") << "\n";
  os << "result    " << status << "\n\n";
  os << "time\n";
  row("simulated", fmt("%.3f us", sum["simulated_ns"].get<double>() / 1000.0));
  row("host", fmt("%.3f s", sum["host_seconds"].get<double>()));
  if (!soc.requesters().empty())
    row("transactions / host second", fmt("%.0f", sum["transactions_per_host_second"].get<double>()));
  os << "\nDRAM (" << soc.dram_config().type << ", " << soc.dram_config().geo.channels << " channels)\n";
  row("achieved / peak", fmt("%.2f", sum["dram_achieved_GBps"].get<double>()) + " / " +
                             fmt("%.2f GB/s", sum["dram_peak_GBps"].get<double>()) + "  (" +
                             fmt("%.1f%%", 100.0 * sum["dram_efficiency"].get<double>()) + ")");
  row("bytes read / written", std::to_string(sum["dram_bytes_read"].get<std::uint64_t>()) + " / " +
                                  std::to_string(sum["dram_bytes_written"].get<std::uint64_t>()));
  row("row-buffer hit rate", fmt("%.1f%%", 100.0 * sum["dram_row_hit_rate"].get<double>()));
  row("refreshes", std::to_string(sum["dram_refreshes"].get<std::uint64_t>()));
  os << "\nL2 (" << soc.l2_config().slices << " slices, " << soc.l2_config().size_bytes / 1024 << " KiB, "
     << soc.l2_config().line_bytes << " B lines)\n";
  row("hit rate", fmt("%.1f%%", 100.0 * sum["l2_hit_rate"].get<double>()) + "  (" +
                      std::to_string(sum["l2_hits"].get<std::uint64_t>()) + " hits, " +
                      std::to_string(sum["l2_misses"].get<std::uint64_t>()) + " misses)");
  row("write-backs", std::to_string(sum["l2_writebacks"].get<std::uint64_t>()));
  os << "\nring (" << soc.ring_config().stops << " stops" << (soc.ring_config().bidirectional ? ", bidirectional" : "")
     << ")\n";
  row("busiest link channel", fmt("%.1f%% busy", 100.0 * sum["ring_max_link_busy"].get<double>()));
  if (const cpu::CpuConfig* cc = soc.cpu_config()) {
    os << "\nArm CPUs (" << cc->control_cores << " control, " << cc->aicpu_cores << " AI CPU, at "
       << fmt("%.0f MHz", cc->clock.mhz()) << ")\n";
    for (auto& c : soc.cpus())
      if (c->instructions())
        row(c->basename(), std::to_string(c->instructions()) + " instructions, " +
                               fmt("%.1f%% idle in WFI", sum["simulated_ns"].get<double>() > 0
                                                             ? 100.0 * double(c->idle()) /
                                                                   (sum["simulated_ns"].get<double>() * 1000.0)
                                                             : 0.0));
    row("host speed", fmt("%.1f MIPS", sum["cpu_mips_host"].get<double>()));
    if (sum["firmware_exit_code"].get<int>() >= 0) row("firmware exit code", std::to_string(sum["firmware_exit_code"].get<int>()));
  }
  if (soc.ts() && !soc.ts()->records().empty()) {
    os << "\ntasks (task scheduler)\n";
    os << "  stream  task                      blocks   submit us    start us      end us    time us  result\n";
    for (auto& r : soc.ts()->records()) {
      char line[256];
      std::snprintf(line, sizeof line, "  %6u  %-24s %7u %11.3f %11.3f %11.3f %10.3f  %s\n", r.stream, r.name.c_str(),
                    r.blocks, double(r.submitted) / 1e6, double(r.start) / 1e6, double(r.end) / 1e6,
                    double(r.end - r.start) / 1e6, r.fault ? ("FAULT " + r.fault_text).c_str() : "ok");
      os << line;
    }
  }
  const aicore::AiCoreConfig* ac = soc.launcher() ? soc.aicore_config() : nullptr;
  if (ac) {
    os << "\nAI Cores (" << ac->cores << " at " << fmt("%.0f MHz", ac->clock.mhz()) << ", peak "
       << fmt("%.1f TFLOPS fp16", sum["peak_tflops"].get<double>()) << ")\n";
    const char* names[] = {"SCALAR", "MTE1", "MTE2", "MTE3", "CUBE", "VECTOR", "FIXP"};
    std::string line;
    for (int p = 0; p < aicore::kPipes; ++p) {
      double b = 0;
      for (auto& c : soc.aicores()) b += double(c->pipe_busy(aicore::Pipe(p)));
      const double end = sum["simulated_ns"].get<double>() * 1000.0;
      line += std::string(p ? "  " : "") + names[p] + " " +
              fmt("%.1f%%", end > 0 ? 100.0 * b / end / double(soc.aicores().size()) : 0.0);
    }
    row("pipe busy (mean over cores)", line);
    if (KernelLauncher* l = soc.launcher())
      for (auto& k : l->results())
        row("kernel " + k.name, k.tiling == "AI CPU"
                                    ? "on an AI CPU core, " + fmt("%.3f us", double(k.end - k.start) / 1e6)
                                    : std::to_string(k.blocks) + " blocks on " + std::to_string(k.cores) + " cores, " +
                                          fmt("%.3f us", double(k.end - k.start) / 1e6) +
                                          (k.tiling.empty() ? "" : ", " + k.tiling));
    auto ratio = [&](const char* a, const char* p) {
      const double peak = sum[p].get<double>();
      return fmt("%.2f", sum[a].get<double>()) + " / " + fmt("%.1f", peak) + "  (" +
             fmt("%.1f%%", peak > 0 ? 100.0 * sum[a].get<double>() / peak : 0.0) + ")";
    };
    if (sum["achieved_tflops"].get<double>() > 0 || sum["achieved_tops_int8"].get<double>() == 0)
      row("cube fp: achieved / peak TFLOPS", ratio("achieved_tflops", "peak_tflops"));
    if (sum["achieved_tops_int8"].get<double>() > 0)
      row("cube int8: achieved / peak TOPS", ratio("achieved_tops_int8", "peak_tops_int8"));
  }
  if (!soc.requesters().empty()) {
  os << "\nrequesters\n";
  os << "  name                      transactions     GB/s   avg lat ns   max lat ns   verify\n";
  for (auto& g : soc.requesters()) {
    const stats::Group* grp = stats::Registry::instance().find(g->name());
    nlohmann::json gj = grp ? grp->to_json() : nlohmann::json::object();
    char line[200];
    std::snprintf(line, sizeof line, "  %-24s %13llu %8.2f %12.1f %12.1f   %s\n", g->name(),
                  (unsigned long long)g->transactions(), gj.value("achieved_GBps", 0.0),
                  gj.value("avg_latency_ns", 0.0), gj.value("max_latency_ps", 0.0) / 1000.0,
                  !g->verifying() ? "off" : (g->verify_errors() ? "FAIL" : "ok"));
    os << line;
  }
  }
  if (!check_lines.empty()) {
    os << "\nchecks\n";
    for (auto& l : check_lines) os << "  " << l << "\n";
  }
  return os.str();
}

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
    throw cfg::ConfigError(where, "", std::string("cannot write in the directory: ") + (why ? std::strerror(why) : "open failed"));
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

RunResult run_scenario(const Scenario& s, const RunOptions& o) {
  using clock = std::chrono::steady_clock;
  const cfg::Node& run = s.root.at("run");
  const cfg::Node& plat = s.root.at("platform");
  const std::string out = o.out_dir.empty() ? "out/" + s.root.get_string("name") : o.out_dir;
  const bool trace = run.get_bool("trace");
  Tracer::instance().configure(trace, run.get_uint("trace_max_slices_per_lane"), 0);
  tlm::tlm_global_quantum::instance().set(
      sc_core::sc_time::from_value(Tick(plat.at("sim").get_double("quantum_ns") * 1000.0 + 0.5)));

  prepare_out_dir(out, !o.out_dir.empty());
  phase("building the SoC");
  Soc soc("soc", s);
  for (auto& u : soc.uarts())
    u->connect(out, [quiet = o.quiet](const std::string& line) {
      if (!quiet) std::cout << line << "\n" << std::flush;
    });
  const auto t0 = clock::now();
  Watchdog* guard = Watchdog::current();
  const Tick max_sim = run.has("max_sim_ns") ? Tick(run.get_double("max_sim_ns") * 1000.0) : kTickMax;
  std::string limit_error;
  // Run in slices of simulated time so the limits are checked without a host thread. Each
  // slice reaches at least the next pending event, so the loop always makes progress.
  const Tick slice = 10 * 1000 * 1000;  // 10 us
  phase("simulating", true);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaborate and start every process
  while (sc_core::sc_pending_activity() && sc_core::sc_get_status() != sc_core::SC_STOPPED) {
    const Tick next = now_tick() + to_tick(sc_core::sc_time_to_pending_activity());
    if (next > max_sim) {
      limit_error = "simulated-time limit run.max_sim_ns (" + format_ns(max_sim) + ") reached";
      break;
    }
    const Tick until = std::min(max_sim, std::max(now_tick() + slice, next));
    sc_core::sc_start(to_sc(until - now_tick()), sc_core::SC_EXIT_ON_STARVATION);
    if (guard && guard->stop_requested()) {  // the wall-clock limit, SIGINT or SIGTERM
      limit_error = guard->stop_reason() + " at simulated " + format_ns(now_tick());
      break;
    }
  }
  // A stop that came as the last slice ended is still this run's reason.
  if (guard && guard->stop_requested() && limit_error.empty())
    limit_error = guard->stop_reason() + " at simulated " + format_ns(now_tick());
  // After the simulation a limit or a signal ends nothing at once: checking and writing get
  // the grace period, so an hour's run keeps its outputs.
  phase("checking the results", true);
  // A protocol violation comes first: the faults and results after it prove nothing.
  if (!tlmcheck::Checker::first_violation().empty()) limit_error = tlmcheck::Checker::first_violation();
  if (limit_error.empty() && soc.launcher() && !soc.launcher()->fault().empty())
    limit_error = "AI Core fault: " + soc.launcher()->fault();
  if (limit_error.empty() && !soc.cpu_fault().empty()) limit_error = "CPU fault: " + soc.cpu_fault();
  if (limit_error.empty() && soc.ts() && !soc.ts()->error().empty()) limit_error = soc.ts()->error();
  if (KernelLauncher* l = soc.launcher(); l && l->firmware_mode() && soc.ts()) {
    // The firmware ran the kernels: check their outputs now, timed by their tasks.
    std::vector<std::pair<std::string, std::pair<Tick, Tick>>> times;
    for (auto& r : soc.ts()->records()) times.push_back({r.name, {r.start, r.end}});
    l->check_after_firmware(times);
  }
  bool firmware_started = false;
  for (auto& c : soc.cpus()) firmware_started |= c->instructions() > 0;
  if (limit_error.empty() && firmware_started && !(soc.simctrl() && soc.simctrl()->exit_code())) {
    // Nothing left to happen and no exit written: every core waits for an interrupt that
    // nothing will raise.
    std::string where;
    for (auto& c : soc.cpus())
      if (c->instructions())
        where += std::string(where.empty() ? "" : ", ") + c->basename() + " at pc " + hex(c->pc()) +
                 (c->waiting_for_interrupt() ? " (WFI)" : "");
    limit_error = "the firmware did not finish: no exit code written to simctrl.EXIT and nothing left to run (" +
                  where + ")";
  }
  if (limit_error.empty()) {
    for (auto& g : soc.requesters())
      if (!g->done()) limit_error = std::string(g->name()) + " did not finish";
    if (soc.launcher() && !soc.launcher()->done()) limit_error = "the kernels did not finish";
  }
  // Posted write-backs may still be on their way to DRAM: the run ends when they land.
  Tick drained = now_tick();
  for (auto& hn : soc.l2_slices()) drained = std::max(drained, hn->last_memory_done());
  for (auto& mc : soc.controllers()) drained = std::max(drained, mc->drain_writes(drained));
  if (limit_error.empty() && drained > now_tick() && sc_core::sc_get_status() != sc_core::SC_STOPPED)
    sc_core::sc_start(to_sc(drained - now_tick()));
  for (auto& c : soc.cpus()) c->close_trace();
  const double host = std::chrono::duration<double>(clock::now() - t0).count();

  RunResult r;
  nlohmann::json sum = summarize(soc, host);
  r.stats = stats::Registry::instance().to_json();
  r.stats["summary"] = sum;
  r.stats["trace_dropped_slices"] = Tracer::instance().dropped();

  std::vector<std::string> check_lines;
  bool failed = false;
  for (auto& g : soc.requesters())
    if (g->verify_errors()) {
      failed = true;
      check_lines.push_back("FAIL data: " + std::to_string(g->verify_errors()) + " bytes differ; first: " + g->first_error());
    }
  if (const cfg::Node* checks = s.root.find("checks"); checks && checks->is_seq()) {
    for (auto& c : checks->items()) {
      const std::string& m = c.get_string("metric");
      double v;
      if (!lookup_metric(r.stats, m, v))
        c.at("metric").fail("no metric '" + m + "' in the results (see stats.json for names)");
      bool ok = true;
      std::string bounds;
      if (c.has("min")) {
        ok &= v >= c.get_double("min");
        bounds += fmt(">= %g", c.get_double("min"));
      }
      if (c.has("max")) {
        ok &= v <= c.get_double("max");
        bounds += std::string(bounds.empty() ? "" : ", ") + fmt("<= %g", c.get_double("max"));
      }
      failed |= !ok;
      check_lines.push_back(std::string(ok ? "ok   " : "FAIL ") + m + " = " + fmt("%.6g", v) + "  (want " + bounds + ")");
    }
  }
  if (KernelLauncher* l = soc.launcher()) {
    for (auto& k : l->results()) {
      if (k.checked) {
        failed |= !k.passed;
        check_lines.push_back(std::string(k.passed ? "ok   " : "FAIL ") + "kernel " + k.name + ": " + k.detail);
      } else if (!k.detail.empty()) {
        check_lines.push_back("n/a  kernel " + k.name + ": " + k.detail);
      }
    }
  }
  if (soc.ts())
    for (auto& r : soc.ts()->records())
      if (r.fault) {
        failed = true;
        check_lines.push_back("FAIL task " + r.name + " (stream " + std::to_string(r.stream) + "): " + r.fault_text);
      }
  if (soc.simctrl() && soc.simctrl()->exit_code() && *soc.simctrl()->exit_code() != 0) {
    failed = true;
    check_lines.push_back("FAIL firmware exit code " + std::to_string(*soc.simctrl()->exit_code()));
  }
  std::string status = !limit_error.empty() ? "STOPPED: " + limit_error : failed ? "FAILED" : "passed";
  r.summary = summary_text(s, soc, sum, check_lines, status);
  r.exit_code = !limit_error.empty() ? kExitSimError : failed ? kExitCheckFailed : kExitOk;
  if (guard && guard->stop_requested()) r.exit_code = guard->stop_exit_code();

  phase("writing the outputs", true);
  write_output(out + "/stats.json", r.stats.dump(1) + "\n");
  write_output(out + "/summary.txt", r.summary);
  if (trace) Tracer::instance().write(out + "/trace.json");
  for (auto& c : soc.aicores())
    if (c->blocks_done()) write_output(out + "/aicore" + std::to_string(c->id()) + "-instructions.csv", c->instruction_csv());
  for (auto& u : soc.uarts()) u->finish();
  if (!o.quiet) std::cout << r.summary << "\noutputs in " << out << "/\n";
  if (!limit_error.empty()) std::cerr << "dvp: error: " << limit_error << "\n";
  else
    for (auto& l : check_lines)
      if (l.rfind("FAIL task ", 0) == 0) std::cerr << "dvp: " << l << "\n";
  return r;
}

}  // namespace dvp::platform
