// SPDX-License-Identifier: MIT
// The run guard: the wall-clock limit in a phase that cannot stop ends the process naming the
// phase; in the simulation it asks the run to stop, and ends it if the stop takes too long.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "watchdog.hpp"

using dvp::platform::Watchdog;

namespace {

struct Expired {
  std::mutex m;
  std::string message;
  int code = -1;
  Watchdog::Expire hook() {
    return [this](const std::string& msg, int c) {
      std::lock_guard<std::mutex> l(m);
      message = msg;
      code = c;
    };
  }
  // Polls (the guard checks ten times a second); a loaded machine gets ten seconds.
  bool wait() {
    for (int i = 0; i < 1000; ++i) {
      {
        std::lock_guard<std::mutex> l(m);
        if (code >= 0) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
};

}  // namespace

TEST(Watchdog, TheLimitInAPhaseThatCannotStopEndsTheProcessNamingThePhase) {
  Expired e;
  Watchdog w(0.2, 30, e.hook());
  w.start(false);
  w.phase("loading the scenario");
  ASSERT_TRUE(e.wait());
  EXPECT_EQ(e.message,
            "wall-clock limit run.max_wall_seconds (0.2 s) reached while loading the scenario; no outputs written");
  EXPECT_EQ(e.code, 3);
  EXPECT_FALSE(w.stop_requested());
}

TEST(Watchdog, WhileSimulatingTheRunIsAskedToStopThenEndedAfterTheGrace) {
  Expired e;
  Watchdog w(0.2, 0.3, e.hook());
  w.start(false);
  w.phase("simulating", true);
  for (int i = 0; i < 1000 && !w.stop_requested(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(w.stop_requested());
  EXPECT_EQ(w.stop_reason(), "wall-clock limit run.max_wall_seconds (0.2 s) reached");
  EXPECT_EQ(w.stop_exit_code(), 3);
  // The run does not stop: after the grace period the guard ends it, naming where it was.
  w.phase("writing the outputs");
  ASSERT_TRUE(e.wait());
  EXPECT_EQ(e.message,
            "wall-clock limit run.max_wall_seconds (0.2 s) reached, and the run did not end within 0.3 s (writing the "
            "outputs)");
}

TEST(Watchdog, NoLimitMeansNone) {
  Expired e;
  Watchdog w(0.1, 0.1, e.hook());
  w.set_limit(0);
  w.start(false);
  w.phase("simulating", true);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_FALSE(w.stop_requested());
  std::lock_guard<std::mutex> l(e.m);
  EXPECT_EQ(e.code, -1);
}
