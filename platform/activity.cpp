// SPDX-License-Identifier: MIT
#include "activity.hpp"

#include <algorithm>
#include <iterator>

#include "common/trace.hpp"
#include "soc.hpp"

namespace dvp::platform {

namespace {

constexpr Tick kMicrosecond = 1'000'000;
constexpr std::size_t kMaxSamples = 4096;

}  // namespace

const char* Activity::Window::bound(double& share) const {
  std::size_t busiest = 0;
  for (std::size_t u = 1; u < std::size(kPipes); ++u)
    if (pipe[std::size_t(kPipes[u].first)] > pipe[std::size_t(kPipes[busiest].first)]) busiest = u;
  const aicore::Pipe p = kPipes[busiest].first;
  share = pipe[std::size_t(p)];
  if (share < 0.5) return "latency";
  if (p != aicore::Pipe::MTE2) return kPipes[busiest].second;
  if (dram_busy >= 0.5) return share = dram_busy, "DRAM";  // the loads, named by where they waited
  return "L2";
}

// Before the run nothing has happened: the first sample is zeros at time 0 (what the units do at
// time 0 counts in the first period).
Activity::Activity(const Soc& soc) : soc_(soc), samples_(1), period_(kMicrosecond) {
  channels_ = unsigned(soc.controllers().size()) * soc.dram_config().channels_per_controller;
  cores_ = unsigned(soc.aicores().size());
}

Activity::Totals Activity::read() const {
  Totals s;
  s.t = now_tick();
  for (auto& mc : soc_.controllers()) {
    s.dram_bytes += double(mc->bytes_read() + mc->bytes_written());
    for (unsigned c = 0; c < soc_.dram_config().channels_per_controller; ++c)
      s.dram_busy += double(mc->channel(c).data_busy());
  }
  for (auto& hn : soc_.l2_slices()) s.l2_hits += double(hn->hits()), s.l2_misses += double(hn->misses());
  for (auto& core : soc_.aicores()) {
    s.occupied += double(core->occupied());
    for (int p = 0; p < aicore::kPipes; ++p) s.pipe[std::size_t(p)] += double(core->pipe_busy(aicore::Pipe(p)));
  }
  return s;
}

Tick Activity::slice() const { return std::min(period_, 10 * kMicrosecond); }

void Activity::sample() {
  if (now_tick() < samples_.back().t + period_) return;
  samples_.push_back(read());
  if (samples_.size() < kMaxSamples) return;
  // Counters are cumulative: dropping every other sample loses no total, only resolution.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < samples_.size(); i += 2) samples_[kept++] = samples_[i];
  if (samples_.size() % 2 == 0) samples_[kept++] = samples_.back();  // keep the newest
  samples_.resize(kept);
  period_ *= 2;
}

void Activity::finish() {
  Totals s = read();
  if (s.t > samples_.back().t)
    samples_.push_back(s);
  else if (samples_.size() > 1)
    samples_.back() = s;  // the same instant as the last sample
}

Activity::Totals Activity::at(Tick t) const {
  auto hi = std::lower_bound(samples_.begin(), samples_.end(), t, [](const Totals& s, Tick v) { return s.t < v; });
  if (hi == samples_.begin()) return samples_.front();
  if (hi == samples_.end()) return samples_.back();
  const Totals& a = *(hi - 1);
  const Totals& b = *hi;
  const double f = double(t - a.t) / double(b.t - a.t);
  auto mix = [f](double x, double y) { return x + (y - x) * f; };
  Totals r{t,
           mix(a.dram_bytes, b.dram_bytes),
           mix(a.dram_busy, b.dram_busy),
           mix(a.l2_hits, b.l2_hits),
           mix(a.l2_misses, b.l2_misses),
           mix(a.occupied, b.occupied)};
  for (std::size_t p = 0; p < r.pipe.size(); ++p) r.pipe[p] = mix(a.pipe[p], b.pipe[p]);
  return r;
}

Activity::Window Activity::window(Tick from, Tick to) const {
  Window w;
  if (to <= from) return w;
  const Totals a = at(from), b = at(to);
  const double span = double(to - from);
  w.seconds = span / 1e12;
  w.dram_bytes = b.dram_bytes - a.dram_bytes;
  // Busy time is counted when a unit takes work on (an instruction's whole time at its start, a
  // burst's when it is booked), so a short window can hold a little of the next one's: a share
  // is at most the whole of it.
  w.dram_busy = channels_ ? std::min(1.0, (b.dram_busy - a.dram_busy) / (span * channels_)) : 0;
  // A pipe's share is of the time the cores ran blocks: a layer of one block on a chip of 32
  // cores is measured on its core.
  const double occupied = b.occupied - a.occupied;
  w.cores = occupied / span;
  for (std::size_t p = 0; p < w.pipe.size(); ++p)
    w.pipe[p] = occupied > 0 ? std::min(1.0, (b.pipe[p] - a.pipe[p]) / occupied) : 0;
  w.l2_requests = (b.l2_hits - a.l2_hits) + (b.l2_misses - a.l2_misses);
  w.l2_hit_rate = w.l2_requests > 0 ? (b.l2_hits - a.l2_hits) / w.l2_requests : 0;
  return w;
}

void Activity::trace(Tracer& t) const {
  if (!t.enabled()) return;
  // Each track steps only where its value changes, so idle stretches cost one event. A busy
  // track carries what a period holds past its whole time into the next (busy time is counted
  // when work is taken on: see window()).
  struct Track {
    const char* name;
    double last = -1, carry = 0;
  };
  Track tracks[] = {{"DRAM GB/s"},   {"DRAM data buses busy %"}, {"L2 hit rate %"},
                    {"cube busy %"}, {"vector busy %"},          {"MTE2 busy %"}};
  auto put = [&](Track& k, Tick at, double v) {
    if (v == k.last) return;
    t.counter("activity", k.name, at, v);
    k.last = v;
  };
  auto busy = [&](Track& k, Tick at, double time, double capacity) {
    const double all = time + k.carry, used = std::min(all, capacity);
    k.carry = all - used;
    put(k, at, capacity > 0 ? 100 * used / capacity : 0);
  };
  constexpr aicore::Pipe kPipesShown[] = {aicore::Pipe::M, aicore::Pipe::V, aicore::Pipe::MTE2};
  for (std::size_t i = 1; i < samples_.size(); ++i) {
    const Totals& a = samples_[i - 1];
    const Totals& b = samples_[i];
    const double span = double(b.t - a.t), requests = b.l2_hits - a.l2_hits + b.l2_misses - a.l2_misses;
    put(tracks[0], a.t, (b.dram_bytes - a.dram_bytes) / span * 1000);  // bytes per ps -> GB/s
    busy(tracks[1], a.t, b.dram_busy - a.dram_busy, span * channels_);
    if (requests > 0) put(tracks[2], a.t, 100 * (b.l2_hits - a.l2_hits) / requests);  // no requests: no rate
    for (std::size_t k = 0; k < 3; ++k) {
      const std::size_t p = std::size_t(kPipesShown[k]);
      busy(tracks[3 + k], a.t, b.pipe[p] - a.pipe[p], span * cores_);
    }
  }
}

}  // namespace dvp::platform
