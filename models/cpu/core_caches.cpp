// SPDX-License-Identifier: MIT
#include "core_caches.hpp"

#include <algorithm>

namespace dvp::cpu {

namespace {

unsigned log2_of(std::uint32_t v) {
  unsigned s = 0;
  while ((1u << s) < v) ++s;
  return s;
}

}  // namespace

CoreCaches::Side::Side(std::uint32_t bytes, std::uint32_t ways_, std::uint32_t line, std::uint64_t& h, std::uint64_t& m)
    : tags(bytes / line / ways_, ways_, line, cache::make_lru(cache::Geometry{ways_, 0}), false),
      sets(bytes / line / ways_),
      ways(ways_),
      hits(&h),
      misses(&m),
      prefetched(std::size_t(bytes / line), 0),
      mru(bytes / line / ways_) {}

CoreCaches::CoreCaches(const L1Config& cfg, Memory memory, stats::Group& st, Range cacheable)
    : cfg_(cfg),
      memory_(std::move(memory)),
      cacheable_(cacheable),
      shift_(log2_of(cfg.line_bytes)),
      writebacks_(st.counter("l1d_writebacks", "dirty L1 data lines written back (posted: the core does not wait)")),
      prefetches_(st.counter("l1d_prefetches", "lines the L1 data prefetcher fetched")),
      prefetch_hits_(st.counter("l1d_prefetch_hits", "prefetched lines a load or store then used")),
      stall_ps_(st.counter("memory_stall_ps", "time the core waited for L1 fills (instruction and data), ps")),
      i_(cfg.icache_bytes, cfg.icache_ways, cfg.line_bytes,
         st.counter("l1i_hits",
                    "instruction fetches (one per line of a basic block) that hit the L1 instruction cache"),
         st.counter("l1i_misses", "instruction fetches that filled a line through the ring")),
      d_(cfg.dcache_bytes, cfg.dcache_ways, cfg.line_bytes,
         st.counter("l1d_hits", "DRAM loads and stores (per line touched) that hit the L1 data cache"),
         st.counter("l1d_misses", "DRAM loads and stores that filled a line through the ring")) {}

Tick CoreCaches::lines(Side& s, std::uint64_t addr, std::uint64_t bytes, bool write, Tick at, bool may_issue) {
  const std::uint64_t first = addr >> shift_, last = (addr + std::max<std::uint64_t>(bytes, 1) - 1) >> shift_;
  if (!may_issue)
    for (std::uint64_t line = first; line <= last; ++line)
      if (needs_memory(s, line)) return kNeedsMemory;
  Tick done = at;
  for (std::uint64_t line = first; line <= last; ++line) done = std::max(done, access(s, line, write, at));
  stall_ps_ += done - at;
  return done;
}

bool CoreCaches::needs_memory(const Side& s, std::uint64_t line) const {
  const std::uint32_t set = std::uint32_t(line & (s.sets - 1));
  const int way = s.tags.lookup(set, line);
  return way < 0 || (cfg_.prefetch_lines && s.prefetched[std::size_t(set) * s.ways + way]);
}

Tick CoreCaches::access(Side& s, std::uint64_t line, bool write, Tick at) {
  const std::uint32_t set = std::uint32_t(line & (s.sets - 1));
  int way = s.tags.lookup(set, line);
  std::uint64_t prefetch_from = 0, prefetch_to = 0;  // lines to prefetch afterwards: [from, to)
  if (way >= 0) {
    ++*s.hits;
    s.tags.touch(set, way);
    std::uint8_t& pf = s.prefetched[std::size_t(set) * s.ways + way];
    if (pf) {  // the stream reached a prefetched line: keep `prefetch_lines` ahead of it
      pf = 0;
      ++prefetch_hits_;
      prefetch_from = line + cfg_.prefetch_lines;
      prefetch_to = prefetch_from + 1;
    }
  } else {
    ++*s.misses;
    if (&s == &d_) {
      if (line == last_miss_ + 1) prefetch_from = line + 1, prefetch_to = line + 1 + cfg_.prefetch_lines;
      last_miss_ = line;
    }
    way = fill(s, set, line, at);
  }
  if (write) s.tags.set_dirty(set, way);
  s.mru[set] = {line, s.tags.ready(set, way), s.tags.dirty(set, way)};
  const Tick ready = std::max(at, s.tags.ready(set, way));
  // After the demand access: a prefetch may evict a line (even this one, in a small cache).
  for (std::uint64_t p = prefetch_from; p < prefetch_to; ++p) prefetch(p, at);
  return ready;
}

int CoreCaches::fill(Side& s, std::uint32_t set, std::uint64_t line, Tick at) {
  const int way = s.tags.victim(set);
  if (s.tags.valid(set, way) && s.tags.dirty(set, way)) {
    memory_(true, s.tags.line_addr(set, way) << shift_, cfg_.line_bytes, at);
    ++writebacks_;
  }
  s.mru[set] = {};  // the filled line is now the set's most recent; a demand access records it
  const Tick ready = memory_(false, line << shift_, cfg_.line_bytes, at);
  s.tags.fill(set, way, line, ready);
  s.prefetched[std::size_t(set) * s.ways + way] = 0;
  return way;
}

void CoreCaches::prefetch(std::uint64_t line, Tick at) {
  const std::uint64_t addr = line << shift_;
  if (addr < cacheable_.base || addr - cacheable_.base + cfg_.line_bytes > cacheable_.size) return;
  const std::uint32_t set = std::uint32_t(line & (d_.sets - 1));
  if (d_.tags.lookup(set, line) >= 0) return;
  const int way = fill(d_, set, line, at);
  d_.prefetched[std::size_t(set) * d_.ways + way] = 1;
  ++prefetches_;
}

}  // namespace dvp::cpu
