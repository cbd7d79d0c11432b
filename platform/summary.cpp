// SPDX-License-Identifier: MIT
#include "summary.hpp"

#include <cstdio>
#include <sstream>

namespace dvp::platform {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

namespace {

double per(double x, double y) { return y > 0 ? x / y : 0.0; }

void summarize_dram(nlohmann::json& j, Soc& soc, double ns) {
  std::uint64_t rd = 0, wr = 0, row_hits = 0, bursts = 0, refreshes = 0;
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
  j["dram_type"] = soc.dram_config().type;
  j["dram_bytes_read"] = rd;
  j["dram_bytes_written"] = wr;
  j["dram_achieved_GBps"] = per(double(rd + wr), ns);
  j["dram_peak_GBps"] = soc.dram_config().peak_GBps();
  j["dram_efficiency"] = per(double(rd + wr), ns) / soc.dram_config().peak_GBps();
  j["dram_row_hit_rate"] = per(double(row_hits), double(bursts));
  j["dram_refreshes"] = refreshes;
}

void summarize_l2_ring_requesters(nlohmann::json& j, Soc& soc, double host_seconds) {
  std::uint64_t hits = 0, misses = 0, wbs = 0, evictions = 0;
  for (auto& s : soc.l2_slices()) {
    hits += s->hits();
    misses += s->misses();
    wbs += s->writebacks();
    evictions += s->evictions();
  }
  j["l2_hits"] = hits;
  j["l2_misses"] = misses;
  j["l2_evictions"] = evictions;
  j["l2_writebacks"] = wbs;
  j["l2_hit_rate"] = per(double(hits), double(hits + misses));
  j["ring_max_link_busy"] = soc.ring().max_link_busy_fraction();
  std::uint64_t tx = 0, verify_errors = 0, lat_sum = 0;
  for (auto& g : soc.requesters()) {
    tx += g->transactions();
    verify_errors += g->verify_errors();
    lat_sum += g->latency_ps_total();
  }
  j["requester_transactions"] = tx;
  j["requester_avg_latency_ns"] = per(double(lat_sum), double(tx)) / 1000.0;
  j["transactions_per_host_second"] = per(double(tx), host_seconds);
  j["verify_errors"] = verify_errors;
}

// Pipe busy fractions averaged over the cores, and the cube's achieved vs peak rate.
void summarize_aicores(nlohmann::json& j, Soc& soc, Tick end_ps) {
  const auto& cores = soc.aicores();
  const double end = double(end_ps), ns = end / 1000.0, n = cores.empty() ? 1.0 : double(cores.size());
  double cube = 0, vec = 0, mte2 = 0, flops = 0, int_ops = 0;
  for (auto& c : cores) {
    cube += per(double(c->pipe_busy(aicore::Pipe::M)), end);
    vec += per(double(c->pipe_busy(aicore::Pipe::V)), end);
    mte2 += per(double(c->pipe_busy(aicore::Pipe::MTE2)), end);
    flops += c->cube_flops(), int_ops += c->cube_int_ops();
  }
  j["aicore_cube_busy"] = cube / n;
  j["aicore_vector_busy"] = vec / n;
  j["aicore_mte2_busy"] = mte2 / n;
  const double peak = soc.aicore_config() ? soc.aicore_config()->peak_flops() / 1e12 : 0.0;
  j["achieved_tflops"] = per(flops, ns * 1e-9) / 1e12;
  j["peak_tflops"] = peak;
  // int8 steps cover twice the k of fp16: twice the operations per cycle.
  j["achieved_tops_int8"] = per(int_ops, ns * 1e-9) / 1e12;
  j["peak_tops_int8"] = 2.0 * peak;
  // The fidelity figures: achieved / peak, fp and int8 (0 when the platform has no AI Core).
  j["cube_efficiency"] = per(j["achieved_tflops"].get<double>(), peak);
  j["cube_efficiency_int8"] = per(j["achieved_tops_int8"].get<double>(), 2 * peak);
  j["kernel_checks_failed"] = soc.launcher() ? soc.launcher()->checks_failed() : 0;
  // Of host_seconds: the kernels' tensors written into DRAM at each kernel's start (bare mode;
  // firmware mode writes them before the run, outside host_seconds) and the checks of outputs.
  j["host_setup_seconds"] = soc.launcher() ? soc.launcher()->host_setup_seconds() : 0.0;
  j["host_check_seconds"] = soc.launcher() ? soc.launcher()->host_check_seconds() : 0.0;
  // Beside host_seconds: what a second host thread did while the simulation ran.
  j["host_worker_seconds"] = soc.launcher() ? soc.launcher()->host_worker_seconds() : 0.0;
  // Beside host_seconds too: the functional cube's arithmetic, on the system's host lane.
  j["host_lane_seconds"] = soc.host_lane()->busy_seconds();
  j["host_early_references"] = soc.launcher() ? soc.launcher()->early_references() : 0;
}

// The Arm cores: instructions, host speed, idle time in WFI (mean over the cores that ran).
void summarize_cpus(nlohmann::json& j, Soc& soc, Tick end, double host_seconds) {
  std::uint64_t instr = 0;
  double idle = 0;
  unsigned ran = 0;
  for (auto& c : soc.cpus()) {
    if (!c->instructions()) continue;  // never started
    ++ran;
    instr += c->instructions();
    idle += per(double(c->idle()), double(end));
  }
  j["cpu_instructions"] = instr;
  j["cpu_mips_host"] = per(double(instr), host_seconds) / 1e6;
  j["cpu_idle_fraction"] = ran ? idle / ran : 0.0;
  j["firmware_exit_code"] = soc.simctrl() && soc.simctrl()->exit_code() ? int(*soc.simctrl()->exit_code()) : -1;
}

// Per DVPP engine: frames, errors, the frame rate achieved, its channels' busy fraction.
void summarize_dvpp(nlohmann::json& j, Soc& soc) {
  if (!soc.dvpp()) return;
  for (const dvpp::EngineConfig& e : soc.dvpp()->config().engines) {
    const stats::Group* g = soc.stats().find(std::string(soc.dvpp()->name()) + "." + e.codec->name);
    if (!g) continue;
    const nlohmann::json s = g->to_json();
    j["dvpp"][e.codec->name] = {{"frames", s.value("frames", 0)}, {"errors", s.value("errors", 0)},
                                {"fps", s.value("fps", 0.0)},     {"busy_fraction", s.value("busy_fraction", 0.0)},
                                {"channels", e.channels},         {"fps_1080p_per_channel", e.fps_1080p}};
  }
}

// Per RTL block: the cycles its clock ran and the bursts through each bridge; and the host's rate
// of RTL cycles (all blocks), a host figure like transactions_per_host_second.
void summarize_rtl(nlohmann::json& j, Soc& soc, double host_seconds) {
  double cycles = 0;
  for (const rtl::RtlBlock* b : soc.all_rtl()) {
    const stats::Group* g = soc.stats().find(b->name());
    if (!g) continue;
    const nlohmann::json s = g->to_json();
    auto bursts = [&](const char* p) {
      return s.value(std::string(p) + "reads", 0.0) + s.value(std::string(p) + "writes", 0.0);
    };
    j["rtl"][b->config().name] = {{"cycles", s.value("cycles", 0)},
                                  {"clock_mhz", b->config().clock.mhz()},
                                  {"target_accesses", s.value("target_accesses", 0)},
                                  {"target_bursts", bursts("target.")},
                                  {"initiator_bursts", bursts("initiator.")}};
    cycles += s.value("cycles", 0.0);
  }
  if (!soc.all_rtl().empty()) j["rtl_cycles_per_host_second"] = per(cycles, host_seconds);
}

}  // namespace

nlohmann::json summarize(Soc& soc, double host_seconds) {
  const Tick end = now_tick();
  for (auto& mc : soc.controllers()) mc->finish(end);
  const double ns = double(end) / 1000.0;
  nlohmann::json j;
  j["simulated_ns"] = ns;
  // Every figure that depends on the host names it ("host" in its key): the determinism test,
  // stats-snapshot and the parameter audit drop them by that rule.
  j["host_seconds"] = host_seconds;
  j["timing_only"] = soc.timing_only();
  // A timing-only run leaves tensors unfilled (zeros). Hardware timing never looks at values,
  // but AI CPU kernels are code whose path can (top-k's sort): their time, and so the run's,
  // can then differ from a functional run.
  j["time_depends_on_values"] = soc.timing_only() && soc.launcher() && soc.launcher()->has_aicpu_tasks();
  summarize_dram(j, soc, ns);
  summarize_l2_ring_requesters(j, soc, host_seconds);
  // debug.tlm_checks: transactions the base-protocol checkers saw, and their violations.
  j["tlm_transactions_checked"] = soc.protocol().checked;
  j["tlm_violations"] = soc.protocol().violations;
  summarize_aicores(j, soc, end);
  summarize_cpus(j, soc, end, host_seconds);
  summarize_dvpp(j, soc);
  summarize_rtl(j, soc, host_seconds);
  return j;
}

namespace {

// What bound a layer is measured over its time (Activity::Window::bound: the busiest unit; latency
// when none was busy half of it: start-up, waits and small transfers explain its time). Layers
// of parallel streams share their time, and so their measurements.
nlohmann::json layer_json(const cfg::Node& l, const KernelLauncher::Result& k, double dram, const Activity& a) {
  const double took = double(k.end - k.start);
  const Activity::Window w = a.window(k.start, k.end);
  double share = 0;
  const std::string bound = w.bound(share);
  nlohmann::json busy = {{"dram", w.dram_busy}};
  const char* pipes[] = {"scalar", "mte1", "mte2", "mte3", "cube", "vector", "fixp"};
  for (int p = 0; p < aicore::kPipes; ++p) busy[pipes[p]] = w.pipe[std::size_t(p)];
  nlohmann::json j = {{"kernel", k.name},
                      {"ops", l.get_string("ops")},
                      {"output", l.get_string("output")},
                      {"time_us", took / 1e6},
                      {"start_us", double(k.start) / 1e6},
                      {"bound", bound},
                      {"bound_busy", share},
                      {"busy", busy},
                      {"dram_bytes", w.dram_bytes},
                      {"l2_hit_rate", w.l2_hit_rate}};
  if (k.has_work)
    j.update({{"peak_fraction", per(k.work.compute_ps, took)},
              {"roofline_fraction", per(k.work.bound_ps(dram), took)},
              {"roofline_bound", k.work.bound_kind(dram)},
              {"tensor_bytes", k.work.bytes},
              {"flops", std::string(k.work.unit) == "FLOP" ? k.work.ops : 0.0}});
  return j;
}

}  // namespace

nlohmann::json summarize_network(const Scenario& s, Soc& soc, const Activity& activity) {
  const cfg::Node& net = s.root.at("network");
  nlohmann::json j = {{"model", net.get_string("model")},
                      {"batch", net.get_uint("batch")},
                      {"arena_bytes", net.get_uint("arena_bytes")},
                      {"layers", nlohmann::json::array()}};
  const KernelLauncher* kl = soc.launcher();
  if (!kl || !net.find("layers")) return j;
  Tick first = kTickMax, last = 0;
  double flops = 0;
  for (const cfg::Node& l : net.at("layers").items())
    for (const KernelLauncher::Result& k : kl->results())
      if (k.name == l.get_string("kernel") && k.end > k.start) {
        j["layers"].push_back(layer_json(l, k, kl->dram_peak(), activity));
        first = std::min(first, k.start), last = std::max(last, k.end);
        flops += j["layers"].back().value("flops", 0.0);
      }
  if (last <= first) return j;
  const double latency = double(last - first), peak = soc.aicore_config()->peak_flops();
  j["latency_us"] = latency / 1e6;
  j["images_per_second"] = double(net.get_uint("batch")) / (latency / 1e12);
  j["fp16_peak_fraction"] = flops / (peak * latency / 1e12);
  return j;
}

bool lookup_metric(const nlohmann::json& stats, const std::string& metric, double& value) {
  // Module names contain dots, so try every split point: "<module>.<key>"; the summary's objects
  // are entered key by key ("summary.network.latency_us").
  for (std::size_t dot = metric.rfind('.'); dot != std::string::npos && dot > 0; dot = metric.rfind('.', dot - 1)) {
    std::string group = metric.substr(0, dot), key = metric.substr(dot + 1);
    const nlohmann::json* g = nullptr;
    if (auto it = stats.find(group); it != stats.end()) g = &*it;
    if (!g && group.rfind("summary.", 0) == 0 && stats.contains("summary")) {
      g = &stats["summary"];
      for (std::size_t at = 8, next; g && at <= group.size(); at = next + 1) {
        next = std::min(group.find('.', at), group.size());
        const auto it = g->is_object() ? g->find(group.substr(at, next - at)) : g->end();
        g = g->is_object() && it != g->end() ? &*it : nullptr;
      }
    }
    if (g && g->is_object()) {
      auto v = g->find(key);
      if (v != g->end() && v->is_number()) {
        value = v->get<double>();
        return true;
      }
    }
  }
  return false;
}

// --- summary.txt ------------------------------------------------------------------------------

namespace {

// summary.txt, section by section.
class Text {
 public:
  Text(Soc& soc, const nlohmann::json& sum, const Activity& activity) : soc_(soc), sum_(sum), activity_(activity) {}
  std::ostringstream os;

  void row(const std::string& k, const std::string& v) {
    os << "  " << k << std::string(k.size() < 34 ? 34 - k.size() : 1, ' ') << v << "\n";
  }
  double d(const char* key) const { return sum_[key].get<double>(); }
  std::string u(const char* key) const { return std::to_string(sum_[key].get<std::uint64_t>()); }
  void time();
  void memory();
  void cpus();
  void tasks();
  void network();
  void aicores();
  void kernel_rows(const KernelLauncher::Result& k);
  void busy_row(const KernelLauncher::Result& k);
  void requesters();
  void dvpp();
  void rtl();

 private:
  Soc& soc_;
  const nlohmann::json& sum_;
  const Activity& activity_;
};

void Text::time() {
  os << "time\n";
  row("simulated", fmt("%.3f us", d("simulated_ns") / 1000.0));
  std::string host = fmt("%.3f s", d("host_seconds"));
  if (d("host_check_seconds") > 0 || d("host_setup_seconds") > 0)
    host += fmt(" (checks %.3f s, ", d("host_check_seconds")) + fmt("tensor setup %.3f s)", d("host_setup_seconds"));
  row("host", host);
  if (!soc_.requesters().empty()) row("transactions / host second", fmt("%.0f", d("transactions_per_host_second")));
}

void Text::memory() {
  os << "\nDRAM (" << soc_.dram_config().type << ", " << soc_.dram_config().geo.channels << " channels)\n";
  row("achieved / peak", fmt("%.2f", d("dram_achieved_GBps")) + " / " + fmt("%.2f GB/s", d("dram_peak_GBps")) + "  (" +
                             fmt("%.1f%%", 100.0 * d("dram_efficiency")) + ")");
  row("bytes read / written", u("dram_bytes_read") + " / " + u("dram_bytes_written"));
  row("row-buffer hit rate", fmt("%.1f%%", 100.0 * d("dram_row_hit_rate")));
  row("refreshes", u("dram_refreshes"));
  const cache::L2Config& l2 = soc_.l2_config();
  os << "\nL2 (" << l2.slices << " slices, " << l2.size_bytes / 1024 << " KiB, " << l2.line_bytes << " B lines)\n";
  row("hit rate",
      fmt("%.1f%%", 100.0 * d("l2_hit_rate")) + "  (" + u("l2_hits") + " hits, " + u("l2_misses") + " misses)");
  row("write-backs", u("l2_writebacks"));
  os << "\nring (" << soc_.ring_config().stops << " stops, " << soc_.ring().timing().routing().what() << ")\n";
  row("busiest link channel", fmt("%.1f%% busy", 100.0 * d("ring_max_link_busy")));
}

void Text::cpus() {
  const cpu::CpuConfig* cc = soc_.cpu_config();
  if (!cc) return;
  os << "\nArm CPUs (" << cc->control_cores << " control, " << cc->aicpu_cores << " AI CPU, at "
     << fmt("%.0f MHz", cc->clock.mhz()) << ")\n";
  const double end_ps = d("simulated_ns") * 1000.0;
  auto share = [&](Tick t) { return end_ps > 0 ? 100.0 * double(t) / end_ps : 0.0; };
  for (auto& c : soc_.cpus())
    if (c->instructions())
      row(c->basename(), std::to_string(c->instructions()) + " instructions, " +
                             fmt("%.1f%% idle in WFI, ", share(c->idle())) +
                             fmt("%.1f%% waiting for memory", share(c->memory_stall())));
  row("host speed", fmt("%.1f MIPS", d("cpu_mips_host")));
  const int code = sum_["firmware_exit_code"].get<int>();
  if (code >= 0) row("firmware exit code", std::to_string(code));
}

// The layers of a compiled network, one row each, then the whole network.
void Text::network() {
  if (!sum_.contains("network") || !sum_["network"].contains("latency_us")) return;
  const nlohmann::json& n = sum_["network"];
  os << "\nnetwork " << n["model"].get<std::string>() << " (batch " << n["batch"].get<std::uint64_t>() << ")\n";
  os << "  layer                     ops                                 output              time us  % peak  "
        "% roof  bound (busy)    DRAM MB  tensors MB\n";
  for (const nlohmann::json& l : n["layers"]) {
    char line[360];
    std::string bound = l["bound"].get<std::string>();
    if (bound != "latency") bound += fmt(" %.0f%%", 100 * l["bound_busy"].get<double>());
    std::snprintf(line, sizeof line, "  %-25s %-35s %-17s %10.3f %6.1f%% %6.1f%%  %-14s %8.3f %10.3f\n",
                  l["kernel"].get<std::string>().c_str(), l["ops"].get<std::string>().c_str(),
                  l["output"].get<std::string>().c_str(), l["time_us"].get<double>(),
                  100 * l.value("peak_fraction", 0.0), 100 * l.value("roofline_fraction", 0.0), bound.c_str(),
                  l["dram_bytes"].get<double>() / 1e6, double(l.value("tensor_bytes", 0ull)) / 1e6);
    os << line;
  }
  row("latency",
      fmt("%.3f us", n["latency_us"].get<double>()) + fmt(", %.1f images/s", n["images_per_second"].get<double>()));
  row("fp16 cube peak achieved", fmt("%.1f%%", 100 * n["fp16_peak_fraction"].get<double>()));
  row("peak activation memory",
      fmt("%.0f KiB", double(n["arena_bytes"].get<std::uint64_t>()) / 1024) + " (the activation arena)");
}

void Text::tasks() {
  if (!soc_.ts() || soc_.ts()->records().empty()) return;
  os << "\ntasks (task scheduler)\n";
  os << "  stream  task                      blocks   submit us    start us      end us    time us  result\n";
  for (auto& r : soc_.ts()->records()) {
    char line[256];
    std::snprintf(line, sizeof line, "  %6u  %-24s %7u %11.3f %11.3f %11.3f %10.3f  %s\n", r.stream, r.name.c_str(),
                  r.blocks, double(r.submitted) / 1e6, double(r.start) / 1e6, double(r.end) / 1e6,
                  double(r.end - r.start) / 1e6, r.fault ? ("FAULT " + r.fault_text).c_str() : "ok");
    os << line;
  }
}

// A kernel's time and tiling; a library kernel's roofline bound (the larger of its least
// compute time and its least DRAM time) and the fraction of it achieved.
void Text::kernel_rows(const KernelLauncher::Result& k) {
  const double took = double(k.end - k.start);
  if (k.tiling == "AI CPU") return row("kernel " + k.name, "on an AI CPU core, " + fmt("%.3f us", took / 1e6));
  row("kernel " + k.name, std::to_string(k.blocks) + " blocks on " + std::to_string(k.cores) + " cores, " +
                              fmt("%.3f us", took / 1e6) + (k.tiling.empty() ? "" : ", " + k.tiling));
  if (!k.has_work) return;
  const double dram = soc_.launcher()->dram_peak(), bound = k.work.bound_ps(dram);
  row("  roofline", fmt("%.3f us", bound / 1e6) + " (" + k.work.bound_kind(dram) +
                        " bound: " + fmt("%.4g ", k.work.ops) + k.work.unit + "s, " +
                        fmt("%.4g B", double(k.work.bytes)) + "), achieved " + fmt("%.1f%%", per(100.0 * bound, took)) +
                        (bound <= took             ? ""
                         : k.work.dram_bound(dram) ? " (above the DRAM bound: L2 held part of its traffic)"
                                                   : " (faster than its compute: see the failed check)"));
  busy_row(k);
}

// What the units did over a kernel's time (shared with what ran beside it), and what bound it.
void Text::busy_row(const KernelLauncher::Result& k) {
  const Activity::Window w = activity_.window(k.start, k.end);
  double share = 0;
  const std::string bound = w.bound(share);
  std::string line = fmt("DRAM %.0f%%", 100 * w.dram_busy);
  for (auto [p, name] : Activity::kPipes)
    line += std::string("  ") + name + fmt(" %.0f%%", 100 * w.pipe[std::size_t(p)]);
  row("  busy", line + ": " + (bound == "latency" ? bound : bound + "-bound"));
}

void Text::aicores() {
  const aicore::AiCoreConfig* ac = soc_.launcher() ? soc_.aicore_config() : nullptr;
  if (!ac) return;
  os << "\nAI Cores (" << ac->cores << " at " << fmt("%.0f MHz", ac->clock.mhz()) << ", peak "
     << fmt("%.1f TFLOPS fp16", d("peak_tflops")) << ")\n";
  const char* names[] = {"SCALAR", "MTE1", "MTE2", "MTE3", "CUBE", "VECTOR", "FIXP"};
  const double end = d("simulated_ns") * 1000.0;
  std::string line;
  for (int p = 0; p < aicore::kPipes; ++p) {
    double b = 0;
    for (auto& c : soc_.aicores()) b += double(c->pipe_busy(aicore::Pipe(p)));
    line += std::string(p ? "  " : "") + names[p] + " " +
            fmt("%.1f%%", per(100.0 * b, end * double(soc_.aicores().size())));
  }
  row("pipe busy (mean over cores)", line);
  for (auto& k : soc_.launcher()->results()) kernel_rows(k);
  auto ratio = [&](const char* a, const char* p) {
    return fmt("%.2f", d(a)) + " / " + fmt("%.1f", d(p)) + "  (" + fmt("%.1f%%", per(100.0 * d(a), d(p))) + ")";
  };
  if (d("achieved_tflops") > 0 || d("achieved_tops_int8") == 0)
    row("cube fp: achieved / peak TFLOPS", ratio("achieved_tflops", "peak_tflops"));
  if (d("achieved_tops_int8") > 0)
    row("cube int8: achieved / peak TOPS", ratio("achieved_tops_int8", "peak_tops_int8"));
}

void Text::requesters() {
  if (soc_.requesters().empty()) return;
  os << "\nrequesters\n";
  os << "  name                      transactions     GB/s   avg lat ns   max lat ns   verify\n";
  for (auto& g : soc_.requesters()) {
    const stats::Group* grp = soc_.stats().find(g->name());
    const nlohmann::json gj = grp ? grp->to_json() : nlohmann::json::object();
    char line[200];
    std::snprintf(line, sizeof line, "  %-24s %13llu %8.2f %12.1f %12.1f   %s\n", g->name(),
                  (unsigned long long)g->transactions(), gj.value("achieved_GBps", 0.0),
                  gj.value("avg_latency_ns", 0.0), gj.value("max_latency_ps", 0.0) / 1000.0,
                  !g->verifying() ? "off" : (g->verify_errors() ? "FAIL" : "ok"));
    os << line;
  }
}

void Text::dvpp() {
  if (!soc_.dvpp() || !sum_.contains("dvpp")) return;
  os << "\nDVPP\n";
  for (const auto& [name, e] : sum_["dvpp"].items()) {
    const double fps = e["fps"].get<double>();
    row(name + " (" + std::to_string(e["channels"].get<unsigned>()) + " ch x " +
            fmt("%g", e["fps_1080p_per_channel"].get<double>()) + " fps at 1080p)",
        std::to_string(e["frames"].get<std::uint64_t>()) + " frames, " +
            std::to_string(e["errors"].get<std::uint64_t>()) + " errors, " + fmt("%.1f fps", fps) + ", channels " +
            fmt("%.1f%% busy", 100.0 * e["busy_fraction"].get<double>()));
  }
  if (!soc_.media()) return;
  for (const MediaLauncher::Result& r : soc_.media()->check()) {
    const double took = double(r.end - r.start);
    row("job " + r.name, r.engine + ", " + std::to_string(r.frames) + " frame" + (r.frames == 1 ? "" : "s") + " in " +
                             fmt("%.3f us", took / 1e6) +
                             (r.status == DVPP_DONE ? fmt(", %.1f fps", per(double(r.frames) * 1e12, took))
                                                    : std::string(", ") + dvpp::status_name(r.status)));
  }
}

void Text::rtl() {
  if (!sum_.contains("rtl")) return;
  os << "\nRTL\n";
  const double ns = sum_["simulated_ns"].get<double>();
  for (const auto& [name, e] : sum_["rtl"].items()) {
    const double cycles = e["cycles"].get<double>(), mhz = e["clock_mhz"].get<double>();
    row(name + fmt(" (%g MHz)", mhz), fmt("%.0f cycles", cycles) +
                                          fmt(" (clocked %.1f%% of the run)", 100.0 * per(cycles * 1e3 / mhz, ns)) +
                                          ", " + fmt("%.0f accesses in, ", e["target_accesses"].get<double>()) +
                                          fmt("%.0f bursts out", e["initiator_bursts"].get<double>()));
  }
  row("RTL cycles / host second", fmt("%.0f", sum_["rtl_cycles_per_host_second"].get<double>()));
}

}  // namespace

std::string summary_text(const Scenario& s, Soc& soc, const nlohmann::json& sum, const Activity& activity,
                         const std::vector<std::string>& check_lines, const std::string& status) {
  Text t(soc, sum, activity);
  t.os << "scenario  " << s.root.get_string("name") << "   (" << s.file << ")\n";
  t.os << "platform  " << s.root.at("platform").get_string("name") << (s.preset.empty() ? "" : "   preset " + s.preset)
       << (soc.timing_only() ? "   timing-only" : "") << "\n";
  t.os << "result    " << status << "\n";
  if (sum["time_depends_on_values"].get<bool>())
    t.os << "note      AI CPU kernels ran on unfilled (zero) tensors: where their path depends on values\n"
            "          (a sort), their time differs from a functional run's\n";
  t.os << "\n";
  t.time();
  t.memory();
  t.cpus();
  t.tasks();
  t.network();
  t.aicores();
  t.requesters();
  t.dvpp();
  t.rtl();
  if (!check_lines.empty()) {
    t.os << "\nchecks\n";
    for (auto& l : check_lines) t.os << "  " << l << "\n";
  }
  return t.os.str();
}

}  // namespace dvp::platform
