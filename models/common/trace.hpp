// Chrome / Perfetto trace-event writer (trace.json).
//
// Lanes are (process, thread) pairs named as users know them. Slices on a lane with the same
// name that touch or overlap are merged into one slice that counts its parts, so a stream of
// back-to-back DRAM bursts is one slice "read x512" instead of 512 slices; a per-lane event
// cap keeps long runs bounded, and the number of dropped slices is written into the trace
// metadata and the stats.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "time.hpp"

namespace dvp {

class Tracer {
 public:
  using Lane = std::uint32_t;

  static Tracer& instance();

  void configure(bool enabled, std::uint64_t max_slices_per_lane, Tick merge_gap);
  bool enabled() const { return enabled_; }

  // Declares a lane; `process` groups lanes (e.g. "dram", "requesters").
  Lane lane(const std::string& process, const std::string& thread);
  void slice(Lane lane, const char* name, Tick start, Tick end);
  void instant(Lane lane, const char* name, Tick t);

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
  struct LaneData {
    std::uint32_t pid, tid;
    std::string process, thread;
    std::vector<Slice> done;
    Slice open{nullptr, 0, 0, 0};
    std::uint64_t dropped = 0;
  };
  void flush(LaneData& l);

  bool enabled_ = false;
  std::uint64_t cap_ = 100000;
  Tick merge_gap_ = 0;
  std::uint64_t dropped_ = 0;
  std::vector<LaneData> lanes_;
  std::vector<std::string> processes_;
  std::vector<std::pair<Lane, std::pair<const char*, Tick>>> instants_;
};

}  // namespace dvp
