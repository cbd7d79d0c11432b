// SPDX-License-Identifier: MIT
// Host work that is not simulation, done on a second host thread while the simulation runs: a
// bare-mode kernel's tensors set up before it starts, a check's reference computed while its
// kernel runs (KernelLauncher). Jobs run in the order they are posted. Whoever claims a job
// first does it: the worker, or the simulated thread when it needs a job the worker has not
// begun (it never waits for work nobody has started). Nothing a model or the firmware sees
// depends on the worker: a job reads and writes only host buffers of its own.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

namespace dvp::platform {

class HostJobs {
 public:
  class Job {
   public:
    explicit Job(std::function<void()> work) : work_(std::move(work)), done_(promise_.get_future()) {}
    // The caller now owns a job nobody has begun (true: it may run() it, or drop it).
    bool claim();
    // Runs it here (after claim()); an exception is kept for whoever waits on it.
    void run();
    // Runs it here if nobody has begun it, else waits for it; rethrows what it threw.
    void need();
    // Waits for a job someone else claimed; rethrows what it threw.
    void wait() const { done_.get(); }

   private:
    std::atomic<bool> claimed_{false};
    std::function<void()> work_;
    std::promise<void> promise_;
    std::shared_future<void> done_;
  };

  HostJobs() = default;
  ~HostJobs();  // jobs not begun are dropped; the one running finishes first
  HostJobs(const HostJobs&) = delete;
  HostJobs& operator=(const HostJobs&) = delete;

  // Queues `work` for the worker (started with the first job).
  std::shared_ptr<Job> post(std::function<void()> work);
  // Host seconds the worker spent on jobs.
  double worker_seconds() const { return double(worker_ns_.load()) * 1e-9; }

 private:
  void loop();

  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stop_ = false, no_thread_ = false;
  std::thread worker_;
  std::atomic<std::int64_t> worker_ns_{0};
};

}  // namespace dvp::platform
