// SPDX-License-Identifier: MIT
// The task scheduler's system DMA engine (SDMA): it serves preload tasks (DVP_TASK_PRELOAD), which
// bring a range of DRAM into the L2 ahead of the kernel that reads it, as a network compiler
// preloads the next layer's weights while this layer computes (Ascend's model compiler keeps
// weights in the L2 buffer; the seeds' multi-core processor has a global DMA that "uses the LLC
// to shorten the average latency of off-chip accesses"). Each line of the range is a stash to its
// home node (common/payload.hpp): the L2 slice fills it from DRAM and answers without data, so
// the ring carries requests and responses only.
//
// It also serves discard tasks (DVP_TASK_DISCARD): cache maintenance that drops the L2's copies of
// a range no task reads again (a network's activations no later layer uses), dirty ones without
// writing them back, so they do not cost DRAM time when the weights streaming through evict them.
// Each whole line of the range is a discard to its home node (common/payload.hpp); a line only
// partly in the range is left alone.
//
// Timing: preloads run one after another in the order given. A preload issues one line per
// line_bytes / bytes_per_cycle cycles of its clock with at most `outstanding` stashes in flight:
// the L2's MSHRs and the DRAM pace it, and it shares them with the kernels' own traffic.
// Prefetch tasks (DVP_TASK_PREFETCH) are preloads at a lower priority: the same thread takes them
// only while no preload is queued, and stops issuing a prefetch's lines as soon as one is (the
// preload waits for the lines in flight, issued up to a quantum ahead), going on with the rest
// once the preloads are done. So a compiler can hand it weights wanted later without delaying the
// next kernels' (assumption: two priority levels, as DMA engines' channel priorities). busy_ps
// counts both; bytes the preloads' only.
// Discards have a queue of their own beside it (assumption: cache maintenance does not wait
// behind the copies), one line a cycle (they carry no data), `outstanding` in flight.
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
  // Queues a prefetch: a preload served only while no preload is queued; returns at once.
  void prefetch(std::uint64_t addr, std::uint64_t len, const std::string& task);
  // Queues a discard of the whole lines in `len` bytes at `addr`; returns at once.
  void discard(std::uint64_t addr, std::uint64_t len, const std::string& task);

 private:
  struct Job {
    std::uint64_t addr, len;
    std::string task;
  };
  struct Queue {  // jobs served one after another by a thread of their own
    std::deque<Job> jobs;
    sc_core::sc_event queued;
  };
  void run_copies();
  void run_upkeep();
  bool serve_front(Queue& q, bool discards);
  bool serve_prefetch();
  void account(const std::string& task, Tick start, bool discards);
  // Streams j's lines; a prefetch (`yields`) stops issuing once a preload is queued. `streamed`:
  // the bytes issued. False when a request failed (the run is stopped).
  bool stream(const Job& j, bool discards, bool yields, std::uint64_t& streamed);

  SdmaConfig cfg_;
  std::uint64_t line_bytes_;
  bool timing_only_;
  std::function<void(const std::string&)> fail_;
  Queue copies_, prefetches_, upkeep_;  // preloads; prefetches (behind them); discards
  std::vector<std::uint8_t> scratch_;   // where a target that ignores the stash puts the line
  std::deque<std::string> slice_names_;
  Tracer::Lane lane_, discard_lane_;  // preloads and prefetches; discards (they overlap)
  stats::Group stats_;
  std::uint64_t &jobs_done_, &bytes_, &busy_ps_, &prefetches_done_, &prefetch_bytes_, &discards_done_, &discard_bytes_;
};

}  // namespace dvp::ts
