// SPDX-License-Identifier: MIT
#include "host_lane.hpp"

#include <chrono>
#include <exception>
#include <system_error>

namespace dvp {

namespace {
std::string what_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}
}  // namespace

HostLane::Ticket HostLane::post(std::function<void()> job) {
  std::unique_lock<std::mutex> lock(m_);
  if (!thread_.joinable() && !no_thread_) try {
      thread_ = std::thread([this] { loop(); });
    } catch (const std::system_error&) {
      no_thread_ = true;  // the host refuses a thread: every job runs where it is posted
    }
  if (no_thread_) {
    lock.unlock();
    const std::exception_ptr e = run(job);
    lock.lock();
    if (e && failure_.empty()) failure_ = what_of(e);
    completed_ = done_ = ++posted_;
    return posted_;
  }
  done_cv_.wait(lock, [this] { return queue_.size() < max_pending_; });
  queue_.push_back(std::move(job));
  work_cv_.notify_one();
  return ++posted_;
}

bool HostLane::wait(Ticket t) {
  std::unique_lock<std::mutex> lock(m_);
  done_cv_.wait(lock, [&] { return done_ >= t; });
  return failure_.empty();
}

std::string HostLane::failure() {
  const std::lock_guard<std::mutex> lock(m_);
  return failure_;
}

std::exception_ptr HostLane::run(std::function<void()>& job) {
  const auto t0 = std::chrono::steady_clock::now();
  std::exception_ptr e;
  try {
    job();
  } catch (...) {
    e = std::current_exception();
  }
  job = nullptr;  // what it holds is freed here, outside the lock
  busy_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  return e;
}

void HostLane::loop() {
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and every job has run
    std::function<void()> job = std::move(queue_.front());
    lock.unlock();
    const std::exception_ptr e = run(job);
    lock.lock();
    queue_.pop_front();
    if (e && failure_.empty()) failure_ = what_of(e);
    completed_ = ++done_;
    done_cv_.notify_all();
  }
}

HostLane::~HostLane() {
  {
    const std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  work_cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

}  // namespace dvp
