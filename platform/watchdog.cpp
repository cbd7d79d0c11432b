// SPDX-License-Identifier: MIT
#include "watchdog.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "common/error.hpp"

namespace dvp::platform {

namespace {
Watchdog* g_current = nullptr;
std::atomic<int> g_signal{0};  // the last SIGINT/SIGTERM not yet acted on
static_assert(std::atomic<int>::is_always_lock_free, "set from a signal handler");

void expire_process(const std::string& message, int code) {
  // No fflush(stdout): with a reader that stopped reading, a full pipe would block it and the
  // guard would never end the process. What the run printed before is lost; the reason is not.
  const std::string line = "dvp: error: " + message + "\n";
  (void)!write(2, line.data(), line.size());
  exit_process(code);
}

std::string seconds(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f s", s);
  return b;
}
}  // namespace

void exit_process(int code) {
  if (code == 128 + SIGINT || code == 128 + SIGTERM) {
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(code - 128, &sa, nullptr);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, code - 128);
    pthread_sigmask(SIG_UNBLOCK, &unblock, nullptr);
    raise(code - 128);
  }
  _exit(code);
}

Watchdog::Watchdog(double limit_seconds, double grace_seconds, Expire expire)
    : grace_(grace_seconds), expire_(expire ? std::move(expire) : Expire(expire_process)), limit_(limit_seconds) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> l(m_);
    quit_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (g_current == this) g_current = nullptr;
}

Watchdog* Watchdog::current() { return g_current; }

void Watchdog::start(bool take_signals) {
  take_signals_ = take_signals;
  if (take_signals_) {
    // A handler, not a blocked mask: libraries start threads before main (OpenBLAS's pool), and
    // a signal may go to any of them. The handler only records it; the guard's thread acts.
    struct sigaction sa {};
    sa.sa_handler = [](int sig) { g_signal = sig; };
    sa.sa_flags = SA_RESTART;  // a write the signal interrupts goes on
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
  }
  t0_ = Clock::now();
  g_current = this;
  thread_ = std::thread([this] { loop(); });
}

void Watchdog::set_limit(double s) {
  std::lock_guard<std::mutex> l(m_);
  limit_ = s;
}

void Watchdog::phase(const std::string& what, bool stoppable) {
  std::lock_guard<std::mutex> l(m_);
  phase_ = what;
  stoppable_ = stoppable;
}

std::string Watchdog::limit_text() const {
  return "wall-clock limit run.max_wall_seconds (" + seconds(limit_) + ") reached";
}

// Called with m_ held. In a phase that polls, ask it to stop and return true; otherwise end
// the process now (false: a test's expire returned, and the guard's work is over).
bool Watchdog::trigger(const std::string& reason, int code) {
  if (stoppable_) {
    reason_ = reason;
    stop_code_ = code;
    stop_at_ = Clock::now();
    stop_.store(true, std::memory_order_release);
    return true;
  }
  expire_(reason + " while " + phase_ + "; no outputs written", code);
  return false;
}

// One check: false once the process has been ended.
bool Watchdog::check(int sig) {
  if (sig == SIGINT || sig == SIGTERM) {
    const std::string name = sig == SIGINT ? "SIGINT" : "SIGTERM";
    if (!stop_requested()) return trigger("stopped by " + name, 128 + sig);
    expire_(name + " again while " + phase_ + "; stopped at once", 128 + sig);
    return false;
  }
  const double now = std::chrono::duration<double>(Clock::now() - t0_).count();
  if (!stop_requested()) return !(limit_ > 0 && now >= limit_) || trigger(limit_text(), kExitSimError);
  if (std::chrono::duration<double>(Clock::now() - stop_at_).count() < grace_) return true;
  expire_(reason_ + ", and the run did not end within " + seconds(grace_) + " (" + phase_ + ")", stop_code_);
  return false;
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> l(m_);
  for (;;) {
    cv_.wait_for(l, std::chrono::milliseconds(100), [this] { return quit_; });  // ten checks a second
    if (quit_) return;
    const int sig = take_signals_ ? g_signal.exchange(0) : 0;
    if (!check(sig)) return;
  }
}

}  // namespace dvp::platform
