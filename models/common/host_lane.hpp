// SPDX-License-Identifier: MIT
// A host thread that runs a model's deferred arithmetic beside the simulation, in the order it
// was posted (the functional cube's products and their accumulation: aicore/cube.cpp). The
// simulated thread posts a job and goes on; before it reads what a job writes, it waits for the
// job's ticket. Nothing simulated depends on the lane: a job's inputs are copied when it is
// posted, and its outputs are read only after a wait, so values, times and bytes are the same
// as if it had run in place. Unlike platform/HostJobs (set-up and checks, taken by whoever
// needs them first), a lane never lets another thread run a job: jobs that write the same
// memory run one after the other, in order.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace dvp {

class HostLane {
 public:
  using Ticket = std::uint64_t;  // jobs are numbered from 1 in the order posted; 0 is none

  // At most `max_pending` jobs are queued, the one running included (at least 1): a post beyond
  // that waits for the thread (it bounds the memory the jobs' copied inputs take). `thread`
  // false: every job runs where it is posted, as when the host refuses a thread.
  explicit HostLane(std::size_t max_pending = 64, bool thread = true)
      : max_pending_(max_pending ? max_pending : 1), no_thread_(!thread) {}
  ~HostLane();  // runs every job posted, then stops the thread
  HostLane(const HostLane&) = delete;
  HostLane& operator=(const HostLane&) = delete;

  // Queues `job` (the thread starts with the first; without one, the job runs here).
  Ticket post(std::function<void()> job);
  // Returns once job `t` and every job before it have run. False when a job failed (threw):
  // failure() names the first.
  bool wait(Ticket t);
  // The jobs that have run: 1 .. completed(). It only grows.
  Ticket completed() const { return completed_.load(); }
  std::string failure();
  // Host seconds spent on jobs (by the lane's thread, or where they were posted without one).
  double busy_seconds() const { return double(busy_ns_.load()) * 1e-9; }

 private:
  void loop();
  // Runs and frees `job`, timed; what it threw.
  std::exception_ptr run(std::function<void()>& job);

  const std::size_t max_pending_;
  std::mutex m_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<std::function<void()>> queue_;
  Ticket posted_ = 0, done_ = 0;
  std::atomic<Ticket> completed_{0};  // done_, read without the lock
  bool stop_ = false, no_thread_;
  std::string failure_;
  std::atomic<std::int64_t> busy_ns_{0};
  std::thread thread_;
};

}  // namespace dvp
