// SPDX-License-Identifier: MIT
#include "host_jobs.hpp"

#include <chrono>
#include <system_error>

namespace dvp::platform {

bool HostJobs::Job::claim() {
  bool was = false;
  return claimed_.compare_exchange_strong(was, true);
}

void HostJobs::Job::run() {
  try {
    work_();
    promise_.set_value();
  } catch (...) {
    promise_.set_exception(std::current_exception());
  }
}

void HostJobs::Job::need() {
  if (claim()) run();
  wait();
}

std::shared_ptr<HostJobs::Job> HostJobs::post(std::function<void()> work) {
  auto job = std::make_shared<Job>(std::move(work));
  {
    const std::lock_guard<std::mutex> lock(m_);
    queue_.push_back(job);
    // Without a thread (the host refuses one), the jobs stay queued: whoever needs one does it.
    if (!worker_.joinable() && !no_thread_) try {
        worker_ = std::thread([this] { loop(); });
      } catch (const std::system_error&) {
        no_thread_ = true;
      }
  }
  cv_.notify_one();
  return job;
}

void HostJobs::loop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(m_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    if (!job->claim()) continue;  // the simulated thread took it
    const auto t0 = std::chrono::steady_clock::now();
    job->run();
    worker_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  }
}

HostJobs::~HostJobs() {
  {
    const std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  cv_.notify_one();
  if (worker_.joinable()) worker_.join();
}

}  // namespace dvp::platform
