// SPDX-License-Identifier: MIT
// Chrome / Perfetto trace-event writer (trace.json).
//
// Lanes are (process, thread) pairs named as users know them. Slices on a lane with the same
// name that touch or overlap are merged into one slice that counts its parts, so a stream of
// back-to-back DRAM bursts is one slice "read x512" instead of 512 slices; a per-lane event
// cap keeps long runs bounded, and the number of dropped slices is written into the trace
// metadata and the stats.
//
// Work that overlaps on one lane (a requester with many transactions outstanding, a pipe whose
// transfers overlap) is what the hardware does, but a trace viewer draws a thread's slices as a
// stack that must nest. So a lane is split into sub-tracks, one per outstanding slot: each
// slice goes to the lowest-numbered sub-track free at its start ("rd0 #0", "rd0 #1", ...); a lane
// that never overlaps keeps one track under its own name.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "time.hpp"

namespace dvp {

class Tracer {
 public:
  // A lane of one tracer: what a model keeps to add its slices.
  class Lane {
   public:
    Lane() = default;
    void slice(const char* name, Tick start, Tick end) const {
      if (tracer_) tracer_->slice(index_, name, start, end);
    }
    void instant(const char* name, Tick t) const {
      if (tracer_) tracer_->instant(index_, name, t);
    }

   private:
    friend class Tracer;
    Lane(Tracer* t, std::uint32_t i) : tracer_(t), index_(i) {}
    Tracer* tracer_ = nullptr;
    std::uint32_t index_ = 0;
  };

  Tracer() = default;
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  void configure(bool enabled, std::uint64_t max_slices_per_lane, Tick merge_gap);
  bool enabled() const { return enabled_; }

  // Declares a lane; `process` groups lanes (e.g. "dram", "requesters").
  Lane lane(const std::string& process, const std::string& thread);
  void slice(std::uint32_t lane, const char* name, Tick start, Tick end);
  void instant(std::uint32_t lane, const char* name, Tick t);
  // A counter track `name` of `process` steps to `value` at t (Perfetto draws it as a graph).
  void counter(const std::string& process, const std::string& name, Tick t, double value);

  std::uint64_t dropped() const { return dropped_; }
  std::uint64_t slices() const;
  void write(const std::string& path);
  void clear();

 private:
  struct Slice {
    const char* name;
    Tick start, end;
    std::uint32_t parts;
  };
  // One outstanding slot of a lane: its slices follow one another without overlapping.
  struct Track {
    std::vector<Slice> done;
    Slice open{nullptr, 0, 0, 0};  // the last slice, still growing by merges
    Tick free_at = 0;              // where the last slice ends
  };
  struct LaneData {
    std::uint32_t pid;
    std::string process, thread;
    std::vector<Track> tracks;
    std::uint64_t kept = 0, dropped = 0;
  };
  void flush(LaneData& l, Track& t);
  struct Counter {
    std::uint32_t pid;
    std::string name;
    Tick t;
    double value;
  };
  Track& free_track(LaneData& l, Tick start);
  std::uint32_t pid_of(const std::string& process);
  std::string track_name(const LaneData& l, std::size_t track) const;

  bool enabled_ = false;
  std::uint64_t cap_ = 100000;
  Tick merge_gap_ = 0;
  std::uint64_t dropped_ = 0;
  std::vector<LaneData> lanes_;
  std::vector<std::string> processes_;
  std::vector<std::pair<std::uint32_t, std::pair<const char*, Tick>>> instants_;
  std::vector<Counter> counters_;
};

}  // namespace dvp
