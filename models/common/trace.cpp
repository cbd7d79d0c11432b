#include "trace.hpp"

#include <cinttypes>
#include <cstdio>
#include <stdexcept>

namespace dvp {

Tracer& Tracer::instance() {
  static Tracer t;
  return t;
}

void Tracer::configure(bool enabled, std::uint64_t max_slices_per_lane, Tick merge_gap) {
  enabled_ = enabled;
  cap_ = max_slices_per_lane;
  merge_gap_ = merge_gap;
}

Tracer::Lane Tracer::lane(const std::string& process, const std::string& thread) {
  std::uint32_t pid = 0;
  for (; pid < processes_.size(); ++pid)
    if (processes_[pid] == process) break;
  if (pid == processes_.size()) processes_.push_back(process);
  LaneData l;
  l.pid = pid + 1;
  l.tid = std::uint32_t(lanes_.size() + 1);
  l.process = process;
  l.thread = thread;
  lanes_.push_back(std::move(l));
  return Lane(lanes_.size() - 1);
}

void Tracer::flush(LaneData& l) {
  if (!l.open.name) return;
  if (l.done.size() < cap_) {
    l.done.push_back(l.open);
  } else {
    ++l.dropped;
    ++dropped_;
  }
  l.open.name = nullptr;
}

void Tracer::slice(Lane lane, const char* name, Tick start, Tick end) {
  if (!enabled_) return;
  LaneData& l = lanes_[lane];
  Slice& o = l.open;
  // Same name pointer (names are string literals or stable strings) and touching: merge.
  if (o.name == name && start >= o.start && start <= o.end + merge_gap_) {
    if (end > o.end) o.end = end;
    ++o.parts;
    return;
  }
  flush(l);
  l.open = Slice{name, start, end, 1};
}

void Tracer::instant(Lane lane, const char* name, Tick t) {
  if (!enabled_) return;
  instants_.push_back({lane, {name, t}});
}

std::uint64_t Tracer::slices() const {
  std::uint64_t n = 0;
  for (auto& l : lanes_) n += l.done.size() + (l.open.name ? 1 : 0);
  return n;
}

static void put_json_string(std::FILE* f, const std::string& s) {
  std::fputc('"', f);
  for (char c : s) {
    if (c == '"' || c == '\\') std::fputc('\\', f);
    std::fputc(c, f);
  }
  std::fputc('"', f);
}

void Tracer::write(const std::string& path) {
  for (auto& l : lanes_) flush(l);
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + path);
  std::fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"dropped_slices\":%" PRIu64 "},\n\"traceEvents\":[\n",
               dropped_);
  bool first = true;
  auto sep = [&]() {
    if (!first) std::fputs(",\n", f);
    first = false;
  };
  for (std::size_t p = 0; p < processes_.size(); ++p) {
    sep();
    std::fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%zu,\"tid\":0,\"args\":{\"name\":", p + 1);
    put_json_string(f, processes_[p]);
    std::fputs("}}", f);
  }
  for (auto& l : lanes_) {
    sep();
    std::fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":", l.pid, l.tid);
    put_json_string(f, l.thread);
    std::fputs("}}", f);
  }
  // Timestamps are microseconds; picosecond resolution needs six decimals.
  for (auto& l : lanes_) {
    for (auto& s : l.done) {
      sep();
      std::fprintf(f, "{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%.6f,\"dur\":%.6f,\"name\":", l.pid, l.tid,
                   double(s.start) / 1e6, double(s.end - s.start) / 1e6);
      if (s.parts > 1) {
        put_json_string(f, std::string(s.name) + " x" + std::to_string(s.parts));
        std::fprintf(f, ",\"args\":{\"merged\":%u}}", s.parts);
      } else {
        put_json_string(f, s.name);
        std::fputc('}', f);
      }
    }
  }
  for (auto& i : instants_) {
    const LaneData& l = lanes_[i.first];
    sep();
    std::fprintf(f, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":%u,\"tid\":%u,\"ts\":%.6f,\"name\":", l.pid, l.tid,
                 double(i.second.second) / 1e6);
    put_json_string(f, i.second.first);
    std::fputc('}', f);
  }
  std::fputs("\n]}\n", f);
  std::fclose(f);
}

void Tracer::clear() {
  lanes_.clear();
  processes_.clear();
  instants_.clear();
  dropped_ = 0;
}

}  // namespace dvp
