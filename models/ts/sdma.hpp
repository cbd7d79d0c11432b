// SPDX-License-Identifier: MIT
// The task scheduler's system DMA engine (SDMA): it serves preload tasks (DVP_TASK_PRELOAD), which
// bring a range of DRAM into the L2 ahead of the kernel that reads it, as a network compiler
// preloads the next layer's weights while this layer computes (Ascend's model compiler keeps
// weights in the L2 buffer; the seeds' multi-core processor has a global DMA that "uses the LLC
// to shorten the average latency of off-chip accesses"). Each line of the range is a stash to its
// home node (common/payload.hpp): the L2 slice fills it from DRAM and answers without data, so
// the ring carries requests and responses only.
//
// Timing: jobs run one after another in the order given. A job issues one line per
// line_bytes / bytes_per_cycle cycles of its clock with at most `outstanding` stashes in flight:
// the L2's MSHRs and the DRAM pace it, and it shares them with the kernels' own traffic.
#pragma once
#include <deque>
#include <functional>
#include <string>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "common/config.hpp"
#include "common/stats.hpp"
#include "common/time.hpp"
#include "common/trace.hpp"

namespace dvp::ts {

struct SdmaConfig {
  Clock clock;
  std::uint32_t bytes_per_cycle = 64;  // a line issued every line_bytes / bytes_per_cycle cycles
  std::uint32_t outstanding = 32;      // stashes in flight
  static void describe(cfg::Spec& s);
  static SdmaConfig from(const cfg::Node& n);
};

class Sdma : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Sdma> mem;  // a requester on the ring

  // `fail` stops the run naming what failed (the task scheduler's).
  Sdma(sc_core::sc_module_name name, const SdmaConfig& cfg, std::uint64_t line_bytes, bool timing_only,
       std::function<void(const std::string&)> fail);
  // Queues a preload of `len` bytes at `addr` (the task `task`'s); returns at once.
  void preload(std::uint64_t addr, std::uint64_t len, const std::string& task);
  bool idle() const { return jobs_.empty() && !busy_; }

 private:
  struct Job {
    std::uint64_t addr, len;
    std::string task;
  };
  void run();
  bool stream(const Job& j);  // false when a stash failed (the run is stopped)

  SdmaConfig cfg_;
  std::uint64_t line_bytes_;
  bool timing_only_;
  std::function<void(const std::string&)> fail_;
  std::deque<Job> jobs_;
  bool busy_ = false;
  sc_core::sc_event queued_;
  std::vector<std::uint8_t> scratch_;  // where a target that ignores the stash puts the line
  std::deque<std::string> slice_names_;
  Tracer::Lane lane_;
  stats::Group stats_;
  std::uint64_t &jobs_done_, &bytes_, &busy_ps_;
};

}  // namespace dvp::ts
