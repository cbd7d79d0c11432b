// SPDX-License-Identifier: MIT
#include "sweep.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/error.hpp"
#include "results.hpp"
#include "scenario.hpp"
#include "watchdog.hpp"

extern char** environ;

namespace dvp::study {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

std::string self_exe() { return fs::read_symlink("/proc/self/exe").string(); }

std::string point_dir(const std::string& out, std::size_t i) {
  char b[24];
  std::snprintf(b, sizeof b, "%04zu", i);
  return (fs::path(out) / "points" / b).string();
}

// Point i's dvp run command line.
std::vector<std::string> run_command(const Study& s, const std::string& out, std::size_t i) {
  std::vector<std::string> a{self_exe(), "run", s.scenario, "--out", point_dir(out, i), "--quiet", "--no-trace"};
  if (s.timing_only) a.emplace_back("--timing-only");
  if (!s.preset.empty()) a.insert(a.end(), {"--preset", s.preset});
  if (s.time_limit_s > 0) a.insert(a.end(), {"--set", "run.max_wall_seconds=" + std::to_string(s.time_limit_s)});
  for (const std::string& x : point_sets(s, i)) a.insert(a.end(), {"--set", x});
  a.insert(a.end(), s.run_args.begin(), s.run_args.end());
  return a;
}

// The run's command without the dvp binary's path and without its --out folder: the same point
// run by another build, on another host, or into the same folder named another way (relative or
// absolute, or the study's folder moved) is the same point.
json command_key(const Study& s, const std::string& out, std::size_t i) {
  const std::vector<std::string> a = run_command(s, out, i);
  std::vector<std::string> key;
  for (std::size_t k = 1; k < a.size(); ++k)
    if (a[k] == "--out")
      ++k;
    else
      key.push_back(a[k]);
  return key;
}

json params(const Study& s, std::size_t i) {
  json p = json::object();
  for (std::size_t k = 0; k < s.keys.size(); ++k) p[s.keys[k]] = s.points[i][k];
  return p;
}

// Written whole or not at all: a reader (collect, --resume) never sees half a file, and runs of
// --point writing the same file at once do not share a temporary one.
void write_json(const fs::path& path, const json& j) {
  const fs::path tmp = path.string() + "." + std::to_string(::getpid()) + ".tmp";
  std::ofstream f(tmp);
  f << j.dump(2) << "\n";
  f.close();
  std::error_code ec;
  if (f) fs::rename(tmp, path, ec);
  if (!f || ec) throw OutputError("cannot write " + path.string() + (ec ? ": " + ec.message() : std::string()));
}

void write_study(const Study& s, const std::string& out) {
  json points = json::array();
  for (std::size_t i = 0; i < s.points.size(); ++i) points.push_back(params(s, i));
  fs::create_directories(fs::path(out) / "points");
  write_json(fs::path(out) / "study.json", json{{"name", s.name},
                                                {"description", s.description},
                                                {"study", fs::absolute(s.file).string()},
                                                {"scenario", s.scenario},
                                                {"preset", s.preset},
                                                {"timing_only", s.timing_only},
                                                {"keys", s.keys},
                                                {"metrics", s.metrics},
                                                {"points", points}});
}

// A child in a process group of its own: a Ctrl-C at the terminal reaches the sweep alone, which
// then stops its runs with SIGTERM (each writes its outputs), not a signal they all get at once.
pid_t spawn(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0].c_str(), &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc) throw Error("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

// What the run said went wrong: its last "dvp: " line.
std::string error_line(const std::string& log) {
  std::ifstream f(log);
  std::string line, last;
  while (std::getline(f, line))
    if (line.rfind("dvp: ", 0) == 0) last = line.substr(5);
  return last;
}

int exit_code(int wstatus) { return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus); }

bool stopped(int code) { return code == 128 + SIGINT || code == 128 + SIGTERM; }

// point.json, once point i's run has ended (not when a signal stopped it: --resume runs it again).
void finish_point(const Study& s, const std::string& out, std::size_t i, int code, double seconds) {
  if (stopped(code)) return;
  json p{{"point", i},
         {"params", params(s, i)},
         {"command", command_key(s, out, i)},
         {"status", code == kExitOk            ? "ok"
                    : code == kExitCheckFailed ? "check_failed"
                                               : "failed"},
         {"exit_code", code},
         {"host_seconds", seconds}};
  if (code) p["error"] = error_line(point_dir(out, i) + "/log.txt");
  write_json(fs::path(point_dir(out, i)) / "point.json", p);
}

// Whether point i has run already, as the study would run it now (its values, and the rest of
// its dvp run command: the scenario, the preset, the study's own keys and arguments).
bool finished(const Study& s, const std::string& out, std::size_t i) {
  std::ifstream f(fs::path(point_dir(out, i)) / "point.json");
  if (!f) return false;
  const json p = json::parse(f, nullptr, false);
  return !p.is_discarded() && p.value("params", json()) == params(s, i) &&
         p.value("command", json()) == command_key(s, out, i);
}

std::string clock_text(double seconds) {
  const long t = std::lround(seconds);
  char b[32];
  std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  return b;
}

struct Progress {
  std::size_t total, skipped;
  bool quiet;
  std::size_t done = 0, failed = 0, checks = 0;
  Clock::time_point t0 = Clock::now();
  bool tty = isatty(2) != 0;
  void count(int code) {
    ++done;
    failed += code != kExitOk && code != kExitCheckFailed;
    checks += code == kExitCheckFailed;
  }
  void show() const {
    if (quiet) return;
    const double el = std::chrono::duration<double>(Clock::now() - t0).count();
    const std::size_t left = total - skipped - done;
    const std::string before = skipped ? " (" + std::to_string(skipped) + " from before)" : "";
    const std::string chk = checks ? std::to_string(checks) + " failed a check of the scenario, " : "";
    std::fprintf(stderr, "%ssweep: %zu/%zu points done%s, %zu failed, %s%s elapsed", tty ? "\r" : "", skipped + done,
                 total, before.c_str(), failed, chk.c_str(), clock_text(el).c_str());
    if (done && left) std::fprintf(stderr, ", ~%s left", clock_text(el / double(done) * double(left)).c_str());
    std::fprintf(stderr, tty && left ? "   " : "\n");
  }
};

// The runs in flight. Whatever ends the sweep (a signal, an error) stops and reaps them.
class Pool {
 public:
  struct Ended {
    std::size_t point = 0;
    int code = 0;
    double seconds = 0;
  };
  Pool() = default;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() { stop(); }
  std::size_t size() const { return running_.size(); }

  // Point i's run, into a folder emptied first (no output of an earlier run of it is left).
  void start(const Study& s, const std::string& out, std::size_t i) {
    fs::remove_all(point_dir(out, i));
    fs::create_directories(point_dir(out, i));
    running_[spawn(run_command(s, out, i), point_dir(out, i) + "/log.txt")] = {i, Clock::now()};
  }

  // Waits for the next run to end; false when the guard asks the sweep to stop (the runs are
  // stopped then).
  bool next(Ended& e, const platform::Watchdog* guard) {
    for (;;) {
      int wstatus = 0;
      const pid_t pid = ::waitpid(-1, &wstatus, WNOHANG);
      if (pid > 0 && running_.count(pid)) {
        const auto r = running_.at(pid);
        running_.erase(pid);
        e = {r.first, exit_code(wstatus), std::chrono::duration<double>(Clock::now() - r.second).count()};
        return true;
      }
      if (pid > 0) continue;
      if (guard && guard->stop_requested()) {
        stop();
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  // SIGTERM to each run (it writes its outputs and ends), then waits for all.
  void stop() {
    for (const auto& [pid, r] : running_) ::kill(pid, SIGTERM);
    for (const auto& [pid, r] : running_)
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
    running_.clear();
  }

 private:
  std::map<pid_t, std::pair<std::size_t, Clock::time_point>> running_;
};

bool stop_requested(const platform::Watchdog* guard) { return guard && guard->stop_requested(); }

// Once the first point has run: a metric the study names that its stats.json lacks is said now,
// with the names nearest to it there, rather than only when the table is written after the last
// point (a misspelt name in a study of hours). A warning, not an error: a metric may be in some
// points only (a statistic of the eighth core, in a study of core counts).
void warn_missing_metrics(const Study& s, const std::string& out, std::size_t i) {
  if (s.metrics.empty()) return;
  std::ifstream f(fs::path(point_dir(out, i)) / "stats.json");
  const nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  if (j.is_discarded()) return;
  const auto stats = flatten(j);
  for (const std::string& m : s.metrics)
    if (!stats.count(m))
      std::fprintf(stderr,
                   "%ssweep: warning: the study's metric %s is not in point %zu's stats.json%s; the study fails "
                   "once its table is written if no point has it (Ctrl-C stops it, --resume keeps the points run)\n",
                   isatty(2) ? "\n" : "", m.c_str(), i, nearest_text(m, stats).c_str());
}

int stopped_by(const platform::Watchdog& guard) {
  std::fprintf(stderr, "\nsweep: stopped (%s); --resume goes on from here\n", guard.stop_reason().c_str());
  return guard.stop_exit_code();
}

}  // namespace

int sweep(const Study& s, const SweepOptions& o) {
  write_study(s, o.out);
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < s.points.size(); ++i)
    if (!(o.resume && finished(s, o.out, i))) pending.push_back(i);
  Progress pr{s.points.size(), s.points.size() - pending.size(), o.quiet};
  pr.show();
  const platform::Watchdog* guard = platform::Watchdog::current();
  Pool pool;
  bool metrics_seen = false;
  for (std::size_t next = 0; next < pending.size() || pool.size();) {
    for (; pool.size() < std::max(1u, o.jobs) && next < pending.size() && !stop_requested(guard); ++next)
      pool.start(s, o.out, pending[next]);
    Pool::Ended e;
    if (!pool.next(e, guard)) return stopped_by(*guard);
    finish_point(s, o.out, e.point, e.code, e.seconds);
    if (stopped(e.code)) continue;  // stopped by a signal of its own: not a result, run again on --resume
    if (!metrics_seen && (e.code == kExitOk || e.code == kExitCheckFailed)) {
      metrics_seen = true;
      warn_missing_metrics(s, o.out, e.point);
    }
    pr.count(e.code);
    pr.show();
  }
  const std::size_t bad = collect(o.out);
  if (!o.quiet) std::fprintf(stderr, "sweep: results in %s/results.csv\n", o.out.c_str());
  for (const PlotSpec& p : s.plots) {
    std::vector<std::string> args{"--y", p.y, "--kind", p.kind};
    if (!p.x.empty()) args.insert(args.end(), {"--x", p.x});
    if (!p.hue.empty()) args.insert(args.end(), {"--hue", p.hue});
    plot(o.out, args, o.quiet);
  }
  return bad ? kExitCheckFailed : kExitOk;
}

void plot(const std::string& dir, const std::vector<std::string>& args, bool quiet) {
  std::vector<std::string> argv{python3(), platform::plot_script(), dir};
  argv.insert(argv.end(), args.begin(), args.end());
  const fs::path log = fs::path(dir) / "plots.log";
  pid_t pid = 0;
  try {
    pid = spawn(argv, log.string());
  } catch (const Error& e) {
    std::fprintf(stderr, "sweep: the plot (%s) was not drawn: %s\n", args[1].c_str(), e.what());
    return;
  }
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {}
  std::ifstream f(log);
  std::string line;
  while (std::getline(f, line) && (!quiet || exit_code(wstatus)))
    std::fprintf(stderr, "%s%s\n", exit_code(wstatus) ? "" : "plot: ", line.c_str());
  if (exit_code(wstatus)) std::fprintf(stderr, "sweep: the plot (%s) was not drawn\n", args[1].c_str());
}

std::string python3() { return ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

int run_point(const Study& s, const std::string& out, std::size_t i) {
  if (i >= s.points.size())
    throw Error(s.file + " has " + std::to_string(s.points.size()) + " points (0 to " +
                    std::to_string(s.points.size() - 1) + "), not " + std::to_string(i),
                kExitConfig);
  if (!fs::exists(fs::path(out) / "study.json")) write_study(s, out);
  const platform::Watchdog* guard = platform::Watchdog::current();
  Pool pool;
  pool.start(s, out, i);
  Pool::Ended e;
  if (!pool.next(e, guard)) return stopped_by(*guard);
  finish_point(s, out, i, e.code, e.seconds);
  // A point that ran but failed one of the scenario's own checks is a result, as in a local
  // sweep: its job succeeded (GNU parallel and Slurm then count only real failures).
  return e.code == kExitCheckFailed ? kExitOk : e.code;
}

void print_tornado(const Study& s, const std::string& out) {
  const std::string& m = s.sensitivity.metric;
  auto value = [&](std::size_t i) {
    std::ifstream f(fs::path(point_dir(out, i)) / "stats.json");
    const json j = f ? json::parse(f, nullptr, false) : json();
    const auto flat = j.is_object() ? flatten(j) : std::map<std::string, json>{};
    const auto it = flat.find(m);
    return it != flat.end() && it->second.is_number() ? it->second.get<double>() : std::nan("");
  };
  const double base = value(0);
  if (std::isnan(base))
    throw Error("sensitivity: the base run (" + point_dir(out, 0) + ") has no number " + m + " in its stats.json",
                kExitConfig);
  struct Bar {
    std::string key, lo, hi;
    double at_lo, at_hi, swing;
  };
  std::vector<Bar> bars;
  for (std::size_t k = 0; k < s.keys.size(); ++k) {
    const double lo = value(2 * k + 1), hi = value(2 * k + 2), swing = std::fabs(hi - lo) / std::fabs(base);
    bars.push_back({s.keys[k], s.points[2 * k + 1][k], s.points[2 * k + 2][k], lo, hi, std::isnan(swing) ? -1 : swing});
  }
  std::stable_sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) { return a.swing > b.swing; });
  std::ofstream f(fs::path(out) / "sensitivity.csv");
  f << "parameter,low,high,metric,metric_low,metric_base,metric_high,swing\n";
  std::printf("sensitivity of %s (base %.6g), each parameter / and x %g alone, largest swing first\n", m.c_str(), base,
              s.sensitivity.factor);
  for (const Bar& b : bars) {
    std::printf("  %-40s %10s: %-12.6g %10s: %-12.6g swing %6.2f%%\n", b.key.c_str(), b.lo.c_str(), b.at_lo,
                b.hi.c_str(), b.at_hi, 100 * b.swing);
    f << b.key << "," << b.lo << "," << b.hi << "," << m << "," << json(b.at_lo).dump() << "," << json(base).dump()
      << "," << json(b.at_hi).dump() << "," << json(b.swing).dump() << "\n";
  }
}

namespace {

std::string quoted(const std::string& a) {
  std::string q = "'";
  for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string point_command(const Study& s, const std::string& out, const std::string& index) {
  return quoted(self_exe()) + " sweep " + quoted(fs::absolute(s.file).string()) + " --out " + quoted(out) +
         (s.sensitivity.on ? " --sensitivity" : "") + " --point " + index;
}

void write_text(const fs::path& p, const std::string& text, bool executable) {
  std::ofstream f(p);
  f << text;
  if (!f) throw OutputError("cannot write " + p.string());
  f.close();
  if (executable) fs::permissions(p, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
}

void emit_slurm(const Study& s, const std::string& out) {
  std::string limit;
  if (s.time_limit_s > 0) limit = "#SBATCH --time=" + clock_text(s.time_limit_s + 60) + "\n";
  write_text(fs::path(out) / "sweep.sbatch",
             "#!/bin/bash\n# Generated by dvp sweep --emit slurm from " + s.file + ": one point per array task.\n" +
                 "#SBATCH --job-name=" + s.name + "\n#SBATCH --array=0-" + std::to_string(s.points.size() - 1) +
                 "\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n#SBATCH --output=" + out +
                 "/points/slurm-%A_%a.log\n" + limit + "set -eu\n" +
                 point_command(s, out, "\"${SLURM_ARRAY_TASK_ID:?run by sbatch, or set it}\"") + "\n",
             true);
  write_text(fs::path(out) / "collect.sbatch",
             "#!/bin/bash\n# The study's table, once the array is done: sbatch --dependency=afterany:JOB this.\n"
             "#SBATCH --job-name=" +
                 s.name + "-collect\n#SBATCH --ntasks=1\n#SBATCH --output=" + out + "/collect.log\nset -eu\n" +
                 quoted(self_exe()) + " collect " + quoted(out) + "\n",
             true);
  std::printf(
      "wrote %s/sweep.sbatch (array 0-%zu) and %s/collect.sbatch; submit them with\n"
      "  job=$(sbatch --parsable %s/sweep.sbatch)\n  sbatch --dependency=afterany:$job %s/collect.sbatch\n",
      out.c_str(), s.points.size() - 1, out.c_str(), out.c_str(), out.c_str());
}

}  // namespace

void emit(const Study& s, const std::string& out_dir, const std::string& kind) {
  const std::string out = fs::absolute(out_dir).lexically_normal().string();
  if (kind != "parallel" && kind != "slurm") throw Error("--emit parallel or --emit slurm, not " + kind, kExitConfig);
  write_study(s, out);
  if (kind == "slurm") return emit_slurm(s, out);
  std::string lines;
  for (std::size_t i = 0; i < s.points.size(); ++i) lines += point_command(s, out, std::to_string(i)) + "\n";
  write_text(fs::path(out) / "commands.txt", lines, false);
  std::printf(
      "wrote %s/commands.txt (%zu points); run them with\n  parallel -j N < %s/commands.txt\n"
      "(or parallel --sshlogin HOSTS ... over a shared folder), then\n  dvp collect %s\n",
      out.c_str(), s.points.size(), out.c_str(), out.c_str());
}

}  // namespace dvp::study
