// SPDX-License-Identifier: MIT
#include "sdma.hpp"

#include <algorithm>
#include <queue>

#include "common/error.hpp"
#include "common/payload.hpp"
#include "common/system.hpp"

namespace dvp::ts {

using cfg::Type;

void SdmaConfig::describe(cfg::Spec& s) {
  s.param("clock_mhz", Type::Float, "clock of the engine's bus interface").unit("MHz").range(1, 10000);
  s.param("bytes_per_cycle", Type::Int,
          "bytes the engine requests per cycle (a preload: one L2 line every line / this cycles; a discard, which "
          "carries no data: one a cycle)")
      .unit("B/cycle")
      .range(1, 4096);
  s.param("outstanding", Type::Int, "requests in flight per queue: the preloads' stashes, the discards").range(1, 1024);
}

SdmaConfig SdmaConfig::from(const cfg::Node& n) {
  SdmaConfig c;
  c.clock = Clock(n.get_double("clock_mhz"));
  c.bytes_per_cycle = std::uint32_t(n.get_uint("bytes_per_cycle"));
  c.outstanding = std::uint32_t(n.get_uint("outstanding"));
  return c;
}

Sdma::Sdma(sc_core::sc_module_name name, const SdmaConfig& cfg, std::uint64_t line_bytes, bool timing_only,
           std::function<void(const std::string&)> fail)
    : sc_module(name),
      mem("mem"),
      cfg_(cfg),
      line_bytes_(line_bytes),
      timing_only_(timing_only),
      fail_(std::move(fail)),
      scratch_(line_bytes),
      lane_(system_of(*this).tracer().lane("ts", "sdma")),
      discard_lane_(system_of(*this).tracer().lane("ts", "sdma discards")),
      stats_(*this),
      jobs_done_(stats_.counter("preloads", "preload jobs done")),
      bytes_(stats_.counter("bytes", "bytes preloaded into the L2 (stashed)")),
      busy_ps_(stats_.counter("busy_ps", "time a preload or prefetch was running, ps")),
      prefetches_done_(stats_.counter("prefetches", "prefetch jobs done")),
      prefetch_bytes_(stats_.counter("prefetch_bytes", "bytes prefetched into the L2 (stashed; not in bytes)")),
      discards_done_(stats_.counter("discards", "discard jobs done")),
      discard_bytes_(stats_.counter("discard_bytes", "bytes of whole lines discarded from the L2")) {
  SC_HAS_PROCESS(Sdma);
  SC_THREAD(run_copies);
  SC_THREAD(run_upkeep);
}

void Sdma::preload(std::uint64_t addr, std::uint64_t len, const std::string& task) {
  copies_.jobs.push_back(Job{addr, len, task});
  copies_.queued.notify(sc_core::SC_ZERO_TIME);
}

void Sdma::prefetch(std::uint64_t addr, std::uint64_t len, const std::string& task) {
  prefetches_.jobs.push_back(Job{addr, len, task});
  prefetches_.queued.notify(sc_core::SC_ZERO_TIME);
}

void Sdma::discard(std::uint64_t addr, std::uint64_t len, const std::string& task) {
  // Whole lines only: the rest of a line partly in the range may be another tensor's.
  const std::uint64_t first = (addr + line_bytes_ - 1) / line_bytes_ * line_bytes_,
                      end = (addr + len) / line_bytes_ * line_bytes_;
  if (end <= first) return;
  upkeep_.jobs.push_back(Job{first, end - first, task});
  upkeep_.queued.notify(sc_core::SC_ZERO_TIME);
}

void Sdma::run_upkeep() {
  for (;;) {
    while (upkeep_.jobs.empty()) wait(upkeep_.queued);
    if (!serve_front(upkeep_, true)) return;
  }
}

// The copy thread: the preloads in order; the prefetches while none is queued.
void Sdma::run_copies() {
  for (;;) {
    while (copies_.jobs.empty() && prefetches_.jobs.empty()) wait(copies_.queued | prefetches_.queued);
    if (!(copies_.jobs.empty() ? serve_prefetch() : serve_front(copies_, false))) return;
  }
}

// The queue's first job, whole. False when a request failed (the run is stopped).
bool Sdma::serve_front(Queue& q, bool discards) {
  const Job j = q.jobs.front();
  const Tick start = now_tick();
  std::uint64_t streamed = 0;
  if (!stream(j, discards, false, streamed)) return false;
  if (discards) {
    discard_bytes_ += j.len;
    ++discards_done_;
  } else {
    bytes_ += j.len;
    ++jobs_done_;
  }
  account(j.task, start, discards);
  q.jobs.pop_front();
  return true;
}

// The first prefetch, until it is done or a preload is queued; the rest stays at the front.
bool Sdma::serve_prefetch() {
  Job& j = prefetches_.jobs.front();  // a deque's push_back keeps references
  const Tick start = now_tick();
  std::uint64_t streamed = 0;
  if (!stream(j, false, true, streamed)) return false;
  prefetch_bytes_ += streamed;
  if (streamed) account(j.task, start, false);
  j.addr += streamed;
  j.len -= streamed;
  if (!j.len) {
    ++prefetches_done_;
    prefetches_.jobs.pop_front();
  }
  return true;
}

// A job (or a prefetch's piece) done: its time, and its slice in the trace.
void Sdma::account(const std::string& task, Tick start, bool discards) {
  if (!discards) busy_ps_ += now_tick() - start;
  slice_names_.push_back(task);  // the trace keeps the name's pointer
  (discards ? discard_lane_ : lane_).slice(slice_names_.back().c_str(), start, now_tick());
}

// The job's lines, stashed (or discarded) `outstanding` at a time; it ends when the last is
// answered: in the L2, or gone from it.
bool Sdma::stream(const Job& j, bool discards, bool yields, std::uint64_t& streamed) {
  static Stash stash;
  static Discard discard;
  static TimingOnly timing_only;
  tlm::tlm_generic_payload p;
  if (discards)
    p.set_extension(&discard);
  else
    p.set_extension(&stash);
  static Persist persist;
  if (timing_only_) p.set_extension(&timing_only);
  if (yields) p.set_extension(&persist);  // a prefetch's lines wait in the L2 for their kernel
  std::priority_queue<Tick, std::vector<Tick>, std::greater<>> in_flight;
  const Tick quantum = to_tick(tlm::tlm_global_quantum::instance().get());
  const Tick gap = cfg_.clock.cycles(discards ? 1 : (line_bytes_ + cfg_.bytes_per_cycle - 1) / cfg_.bytes_per_cycle);
  Tick issue = now_tick(), done = issue;
  bool ok = true;
  const auto preempted = [&] { return yields && !copies_.jobs.empty(); };  // a preload came
  std::uint64_t off = 0;
  for (; off < j.len && ok && !preempted();) {
    const std::uint64_t a = j.addr + off;
    const auto piece = std::uint32_t(std::min<std::uint64_t>(j.len - off, line_bytes_ - a % line_bytes_));
    if (in_flight.size() >= cfg_.outstanding) {
      issue = std::max(issue, in_flight.top());
      in_flight.pop();
    }
    if (issue >= now_tick() + quantum) {
      wait(to_sc(issue - now_tick()));
      if (preempted()) break;  // while it waited
    }
    prepare(p, false, a, scratch_.data(), piece);
    sc_core::sc_time d = to_sc(issue - now_tick());
    mem->b_transport(p, d);
    ok = p.get_response_status() == tlm::TLM_OK_RESPONSE;
    if (!ok)
      fail_(std::string(discards ? "discard"
                        : yields ? "prefetch"
                                 : "preload") +
            " '" + j.task + "': the " + (discards ? "discard" : "stash") + " of " + std::to_string(piece) +
            " bytes at " + hex(a) + " failed: " + p.get_response_string());
    const Tick c = now_tick() + to_tick(d);
    in_flight.push(c);
    done = std::max(done, c);
    issue += gap;
    off += piece;
  }
  if (discards)
    p.clear_extension(&discard);
  else
    p.clear_extension(&stash);
  if (timing_only_) p.clear_extension(&timing_only);
  if (yields) p.clear_extension(&persist);
  if (ok && done > now_tick()) wait(to_sc(done - now_tick()));
  streamed = off;
  return ok;
}

}  // namespace dvp::ts
