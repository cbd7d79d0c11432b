// SPDX-License-Identifier: MIT
#include "trace.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "error.hpp"

namespace dvp {

void Tracer::configure(bool enabled, std::uint64_t max_slices_per_lane, Tick merge_gap) {
  enabled_ = enabled;
  cap_ = max_slices_per_lane;
  merge_gap_ = merge_gap;
}

// Process ids from 1, in the order the processes were first named.
std::uint32_t Tracer::pid_of(const std::string& process) {
  std::uint32_t pid = 0;
  for (; pid < processes_.size(); ++pid)
    if (processes_[pid] == process) break;
  if (pid == processes_.size()) processes_.push_back(process);
  return pid + 1;
}

Tracer::Lane Tracer::lane(const std::string& process, const std::string& thread) {
  LaneData l;
  l.pid = pid_of(process);
  l.process = process;
  l.thread = thread;
  lanes_.push_back(std::move(l));
  return Lane(this, std::uint32_t(lanes_.size() - 1));
}

void Tracer::flush(LaneData& l, Track& t) {
  if (!t.open.name) return;
  if (l.kept < cap_) {
    t.done.push_back(t.open);
    ++l.kept;
  } else {
    ++l.dropped;
    ++dropped_;
  }
  t.open.name = nullptr;
}

Tracer::Track& Tracer::free_track(LaneData& l, Tick start) {
  // A track is free once its last slice has ended; slices may arrive out of start order, so
  // "ended" is against the latest end placed there, which keeps every track free of overlap.
  for (Track& t : l.tracks)
    if (t.free_at <= start) return t;
  l.tracks.emplace_back();
  return l.tracks.back();
}

void Tracer::slice(std::uint32_t lane, const char* name, Tick start, Tick end) {
  if (!enabled_) return;
  LaneData& l = lanes_[lane];
  // Same name pointer (names are string literals or stable strings) and touching: merge. The
  // merged slice is its track's last, so growing it overlaps nothing.
  for (Track& t : l.tracks) {
    Slice& o = t.open;
    if (o.name == name && start >= o.start && start <= o.end + merge_gap_) {
      if (end > o.end) o.end = t.free_at = end;
      ++o.parts;
      return;
    }
  }
  Track& t = free_track(l, start);
  flush(l, t);
  t.open = Slice{name, start, end, 1};
  t.free_at = end;
}

void Tracer::instant(std::uint32_t lane, const char* name, Tick t) {
  if (!enabled_) return;
  instants_.push_back({lane, {name, t}});
}

void Tracer::counter(const std::string& process, const std::string& name, Tick t, double value) {
  if (!enabled_) return;
  counters_.push_back({pid_of(process), name, t, value});
}

std::uint64_t Tracer::slices() const {
  std::uint64_t n = 0;
  for (auto& l : lanes_) {
    n += l.kept;
    for (auto& t : l.tracks) n += t.open.name ? 1 : 0;
  }
  return n;
}

std::string Tracer::track_name(const LaneData& l, std::size_t track) const {
  return l.tracks.size() > 1 ? l.thread + " #" + std::to_string(track) : l.thread;
}

namespace {

using nlohmann::json;

// Timestamps are microseconds; a double holds picoseconds of any run exactly enough.
double us(Tick t) { return double(t) / 1e6; }

// One event per line. Names are the user's (task names, scenario names): nlohmann escapes
// quotes, backslashes and control characters, and replaces bytes that are not UTF-8.
void put_event(std::ostream& f, bool& first, const json& e) {
  f << (first ? "" : ",\n") << e.dump(-1, ' ', false, json::error_handler_t::replace);
  first = false;
}

json slice_event(std::uint32_t pid, std::uint32_t tid, const char* name, Tick start, Tick end, std::uint32_t parts) {
  json e = {{"ph", "X"}, {"pid", pid}, {"tid", tid}, {"ts", us(start)}, {"dur", us(end - start)}};
  if (parts > 1) {
    e["name"] = std::string(name) + " x" + std::to_string(parts);
    e["args"] = {{"merged", parts}};
  } else {
    e["name"] = name;
  }
  return e;
}

json name_event(const char* what, std::uint32_t pid, std::uint32_t tid, const std::string& name) {
  return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

}  // namespace

void Tracer::write(const std::string& path) {
  for (auto& l : lanes_)
    for (auto& t : l.tracks) flush(l, t);
  errno = 0;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw OutputError("cannot write " + path + ": " + std::strerror(errno));
  f << "{\"displayTimeUnit\":\"ns\",\"otherData\":" << json{{"dropped_slices", dropped_}}.dump()
    << ",\n\"traceEvents\":[\n";
  bool first = true;
  for (std::size_t p = 0; p < processes_.size(); ++p)
    put_event(f, first, name_event("process_name", std::uint32_t(p + 1), 0, processes_[p]));
  // Thread ids in lane order, then track order: the same run gives the same file.
  std::vector<std::uint32_t> first_tid;
  std::uint32_t tid = 1;
  for (auto& l : lanes_) {
    first_tid.push_back(tid);
    for (std::size_t k = 0; k < std::max<std::size_t>(1, l.tracks.size()); ++k)
      put_event(f, first, name_event("thread_name", l.pid, tid++, track_name(l, k)));
  }
  for (std::size_t i = 0; i < lanes_.size(); ++i)
    for (std::size_t k = 0; k < lanes_[i].tracks.size(); ++k)
      for (auto& s : lanes_[i].tracks[k].done)
        put_event(f, first,
                  slice_event(lanes_[i].pid, std::uint32_t(first_tid[i] + k), s.name, s.start, s.end, s.parts));
  for (auto& i : instants_)
    put_event(f, first,
              {{"ph", "i"},
               {"s", "t"},
               {"pid", lanes_[i.first].pid},
               {"tid", first_tid[i.first]},
               {"ts", us(i.second.second)},
               {"name", i.second.first}});
  for (auto& c : counters_)
    put_event(f, first,
              {{"ph", "C"}, {"pid", c.pid}, {"ts", us(c.t)}, {"name", c.name}, {"args", {{"value", c.value}}}});
  f << "\n]}\n";
  f.close();
  if (!f) throw OutputError("cannot write " + path + ": " + (errno ? std::strerror(errno) : "write failed"));
}

void Tracer::clear() {
  lanes_.clear();
  processes_.clear();
  instants_.clear();
  counters_.clear();
  dropped_ = 0;
}

}  // namespace dvp
