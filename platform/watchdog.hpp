// SPDX-License-Identifier: MIT
// The run's host-side guard: a wall-clock limit over every phase of a run (loading, building the
// SoC, simulating, checking, writing), and SIGINT / SIGTERM.
//
// While the simulation runs, the guard asks it to stop (stop_requested(), polled by the run loop
// between slices of simulated time), so the run ends with its outputs written and a note of why.
// In any other phase, or when the simulation does not stop within the grace period, there is no
// safe point to stop at: the guard reports the phase and ends the process. A second signal ends
// it at once. The signal handler only records the signal; the guard's thread acts on it, so no
// model code runs inside a handler.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace dvp::platform {

// run.max_wall_seconds when the scenario does not say: long enough for any shipped scenario on a
// loaded machine, short enough that a stuck CI job ends with a message.
constexpr double kDefaultMaxWallSeconds = 3600;
constexpr double kStopGraceSeconds = 30;  // to finish a slice, check and write after a stop

// Ends the process with `code`. A code of 128 + SIGINT or SIGTERM (a run a signal stopped) is
// given the way the shell's convention expects: the signal is raised again with its default
// action, so the parent sees the process killed by it (a script's loop stops at Ctrl-C).
[[noreturn]] void exit_process(int code);

class Watchdog {
 public:
  using Clock = std::chrono::steady_clock;
  // What ends the process when no graceful stop is possible: (message, exit code). The default
  // prints "dvp: error: <message>" and calls _exit; tests give their own.
  using Expire = std::function<void(const std::string&, int)>;

  Watchdog(double limit_seconds, double grace_seconds, Expire expire = {});
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Starts the guard's thread and, with take_signals, installs the SIGINT/SIGTERM handler.
  void start(bool take_signals = true);
  // The limit, in seconds from start(); 0 means none (run.max_wall_seconds, once it is known).
  void set_limit(double seconds);
  // What the run is doing, for the message ("loading the scenario"); `stoppable` when the
  // run loop polls stop_requested().
  void phase(const std::string& what, bool stoppable = false);

  bool stop_requested() const { return stop_.load(std::memory_order_acquire); }
  const std::string& stop_reason() const { return reason_; }  // valid once stop_requested()
  int stop_exit_code() const { return stop_code_; }

  static Watchdog* current();  // the one main() started, or none

 private:
  void loop();
  bool trigger(const std::string& reason, int code);
  bool check(int sig);
  std::string limit_text() const;

  const double grace_;
  Expire expire_;
  Clock::time_point t0_;
  std::thread thread_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  bool quit_ = false;
  bool take_signals_ = true;
  double limit_ = 0;
  std::string phase_ = "starting";
  bool stoppable_ = false;
  std::atomic<bool> stop_{false};
  std::string reason_;
  int stop_code_ = 0;
  Clock::time_point stop_at_{};
};

}  // namespace dvp::platform
