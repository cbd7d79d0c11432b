// SPDX-License-Identifier: MIT
#include "l2_slice.hpp"

#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#include "common/payload.hpp"
#include "common/system.hpp"

namespace dvp::cache {

L2Slice::L2Slice(sc_core::sc_module_name name, const L2Config& cfg, unsigned index, bool functional)
    : sc_module(name),
      target("target"),
      memory("memory"),
      cfg_(cfg),
      hash_(cfg.slices, cfg.line_bytes),
      array_(cfg.sets_per_slice(), cfg.ways, cfg.line_bytes, cfg.replacement(Geometry{cfg.ways, cfg.seed + index}),
             functional),
      port_(cfg.clock.period()),
      scratch_(cfg.line_bytes),
      stats_(*this),
      reads_(stats_.counter("reads", "read requests")),
      writes_(stats_.counter("writes", "write requests")),
      hits_(stats_.counter("hits", "requests that found their line")),
      misses_(stats_.counter("misses", "requests that missed and allocated a line")),
      bypasses_(stats_.counter("no_alloc_misses",
                               "reads that missed and do not allocate (NoAllocate): served from memory, not kept")),
      evictions_(stats_.counter("evictions", "valid lines replaced")),
      writebacks_(stats_.counter("writebacks", "dirty lines written to DRAM")),
      fill_wait_(stats_.counter("hits_on_pending_fill", "hits that waited for a fill still in flight")),
      mshr_stall_ps_(stats_.counter("mshr_stall_ps", "time misses waited for a free MSHR, ps")),
      wb_stall_ps_(stats_.counter("writeback_stall_ps", "time misses waited for a free write-back buffer, ps")),
      stashes_(stats_.counter("stashes", "stash requests (preloads), not counted in reads, hits or misses")),
      stash_fills_(stats_.counter("stash_fills", "stashes that brought their line in from memory")),
      kept_(stats_.counter("kept_stashes", "stashes to persist whose line the set kept (until a requester uses it)")),
      discards_(
          stats_.counter("discards", "discard requests (cache maintenance), not counted in reads, hits or misses")),
      discarded_dirty_(stats_.counter("discarded_dirty", "dirty lines dropped by a discard: write-backs saved")),
      invalidated_(stats_.counter("invalidated", "lines set-up dropped as it wrote their memory in DRAM (invalidate)")),
      invalidated_dirty_(stats_.counter("invalidated_dirty", "dirty lines among them: their bytes were overwritten")),
      index_(index) {
  target.register_b_transport(this, &L2Slice::b_transport);
  target.register_transport_dbg(this, &L2Slice::transport_dbg);
  for (std::uint32_t i = 0; i < cfg.mshrs; ++i) mshr_free_.push(0);
  for (std::uint32_t i = 0; i < cfg.writeback_buffers; ++i) wb_free_.push(0);
  stats_.formula("hit_rate", "hits / requests", [this] {
    double n = double(hits_ + misses_ + bypasses_);
    return n ? double(hits_) / n : 0.0;
  });
  stats_.formula("port_busy_fraction", "fraction of time the data port moved data", [this] {
    Tick now = now_tick();
    return now ? double(port_.busy_total()) / double(now) : 0.0;
  });
  mem_req_.set_streaming_width(cfg.line_bytes);
}

Tick L2Slice::memory_access(bool write, std::uint64_t line_addr, std::uint8_t* data, Tick at, bool timing_only) {
  static TimingOnly timing_only_ext;
  mem_req_.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  mem_req_.set_address(line_addr << hash_.line_bits());
  mem_req_.set_data_length(cfg_.line_bytes);
  mem_req_.set_streaming_width(cfg_.line_bytes);
  mem_req_.set_data_ptr(data ? data : scratch_.data());
  mem_req_.set_byte_enable_ptr(nullptr);
  mem_req_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  if (timing_only) mem_req_.set_extension(&timing_only_ext);
  sc_core::sc_time d = to_sc(at - now_tick());
  memory->b_transport(mem_req_, d);
  if (timing_only) mem_req_.clear_extension(&timing_only_ext);
  if (mem_req_.get_response_status() != tlm::TLM_OK_RESPONSE)
    throw Error(std::string(name()) + ": memory " + (write ? "write-back" : "fill") + " of line " +
                hex(line_addr << hash_.line_bits()) + " failed: " + mem_req_.get_response_string());
  const Tick done = now_tick() + to_tick(d);
  last_memory_done_ = std::max(last_memory_done_, done);
  return done;
}

void L2Slice::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  const std::uint64_t addr = p.get_address();
  const unsigned len = p.get_data_length();
  const unsigned offset = unsigned(addr & (cfg_.line_bytes - 1));
  if (len == 0 || offset + len > cfg_.line_bytes) {
    // Requesters split their traffic at line boundaries; a request across lines is a bug.
    p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  const Clock& clk = cfg_.clock;
  Request r{addr >> hash_.line_bits(),
            std::uint32_t(hash_.slice_local_line(addr) & (cfg_.sets_per_slice() - 1)),
            p.is_write(),
            len,
            is_timing_only(p) || !array_.has_data(),
            clk.align_up(now_tick() + to_tick(delay)),
            clk.cycles((len + cfg_.bytes_per_cycle - 1) / cfg_.bytes_per_cycle)};
  if (is_discard(p) && !r.write) {
    delay = to_sc(discard(r) - now_tick());
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (is_stash(p) && !r.write) {
    delay = to_sc(stash(r, is_persist(p)) - now_tick());
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (r.write)
    ++writes_;
  else
    ++reads_;
  int way = array_.lookup(r.set, r.line_addr);
  if (!discarded_.empty()) {
    if (r.write)
      discarded_.erase(r.line_addr);
    else if (way < 0)  // a discarded line is not here
      check_not_discarded(r);
  }
  if (way < 0 && !r.write && is_no_allocate(p)) {
    delay = to_sc(pass_by(r, p, offset) - now_tick());
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  const Tick done = way >= 0 ? hit(r, way) : miss(r, way);
  if (r.write) array_.set_dirty(r.set, way);
  move_data(p, r, way, offset);
  delay = to_sc(done - now_tick());
  p.set_response_status(tlm::TLM_OK_RESPONSE);
}

Tick L2Slice::hit(const Request& r, int way) {
  ++hits_;
  const Clock& clk = cfg_.clock;
  // The data leaves through the port in the last cycles of the hit latency, or as soon as a
  // fill still in flight brings the line.
  const Tick hit_done = r.arrival + clk.cycles(cfg_.hit_cycles);
  Tick data_at = hit_done > r.arrival + r.xfer ? hit_done - r.xfer : r.arrival;
  if (array_.ready(r.set, way) > data_at) {
    ++fill_wait_;
    data_at = array_.ready(r.set, way);
  }
  array_.touch(r.set, way);
  array_.keep(r.set, way, false);  // if kept, its reader came: an ordinary line from now on
  return std::max(port_.reserve(data_at, r.xfer) + r.xfer, hit_done);
}

Tick L2Slice::miss(const Request& r, int& way) {
  ++misses_;
  return port_.reserve(fill(r, way), r.xfer) + r.xfer;
}

// A read miss that does not allocate: an MSHR fetches the line from memory for the requester
// (through the port, as a miss's data), and no line is replaced. Coherent: the line is in no
// way here, and a write-back leaves for memory as the line is evicted.
Tick L2Slice::pass_by(const Request& r, tlm::tlm_generic_payload& p, unsigned offset) {
  ++bypasses_;
  const Tick start = take_mshr(r);
  std::array<std::uint8_t, kMaxLineBytes> line;
  const Tick in = memory_access(false, r.line_addr, r.timing_only ? nullptr : line.data(), start, r.timing_only);
  mshr_free_.push(in);
  if (!r.timing_only)
    std::memcpy(p.get_data_ptr(), line.data() + offset, r.len);
  else if (!is_timing_only(p) && memory->transport_dbg(p) != r.len)  // a slice that holds no bytes
    throw Error(std::string(name()) + ": cannot move data for " + hex(p.get_address()) + " from memory");
  return port_.reserve(in, r.xfer) + r.xfer;
}

// A discard takes no port time: the tag lookup, then the line (if here) is gone, its bytes
// unwritten. A fill still on its way is let land first, so its MSHR's time stands.
Tick L2Slice::discard(const Request& r) {
  ++discards_;
  discarded_.insert(r.line_addr);
  Tick done = r.arrival + cfg_.clock.cycles(cfg_.hit_cycles);
  const int way = array_.lookup(r.set, r.line_addr);
  if (way < 0) return done;
  done = std::max(done, array_.ready(r.set, way));
  if (array_.dirty(r.set, way)) ++discarded_dirty_;
  array_.invalidate(r.set, way);
  return done;
}

// The run stops with the error (System::fail: an exception would unwind a process's stack).
void L2Slice::check_not_discarded(const Request& r) const {
  if (discarded_.contains(r.line_addr))
    system_of(*this).fail(std::string(name()) + ": a read of line " + hex(r.line_addr << hash_.line_bits()) +
                          ", which a discard dropped and nothing wrote since: its bytes are stale (a discard task "
                          "placed before a task that reads that memory)");
}

// A stash takes no port time: its data stays here. One to persist that brings its line in keeps
// it while the set has a way to keep it in. A line already here is not kept: its reader may have
// brought it (a prefetch behind its kernel), and nothing would read it again to release it.
Tick L2Slice::stash(const Request& r, bool persist) {
  ++stashes_;
  const Tick looked_up = r.arrival + cfg_.clock.cycles(cfg_.hit_cycles);
  int way = array_.lookup(r.set, r.line_addr);
  if (way >= 0) {  // in, or on its way: answered once the line is in (a fill may be in flight)
    array_.touch(r.set, way);
    return std::max(looked_up, array_.ready(r.set, way));
  }
  ++stash_fills_;
  check_not_discarded(r);
  const Tick done = fill(r, way);
  if (persist && array_.kept(r.set) < cfg_.persist_ways) {
    array_.keep(r.set, way, true);
    ++kept_;
  }
  return done;
}

// An MSHR tracks a miss from tag lookup to fill: the earliest free one, once the lookup is done;
// returns when the miss goes on. The caller gives it back with the time it frees.
Tick L2Slice::take_mshr(const Request& r) {
  const Tick mshr = mshr_free_.top();
  mshr_free_.pop();
  const Tick looked_up = r.arrival + cfg_.clock.cycles(cfg_.hit_cycles);
  if (mshr <= looked_up) return looked_up;
  mshr_stall_ps_ += mshr - looked_up;
  return mshr;
}

Tick L2Slice::fill(const Request& r, int& way) {
  way = array_.victim(r.set);
  const Tick start = evict(r, way, take_mshr(r));
  Tick filled = start;
  const bool full_line_write = r.write && r.len == cfg_.line_bytes;
  if (!full_line_write) filled = memory_access(false, r.line_addr, array_.data(r.set, way), start, r.timing_only);
  array_.fill(r.set, way, r.line_addr, filled);
  filled_ = true;
  mshr_free_.push(filled);
  return filled;
}

Tick L2Slice::evict(const Request& r, int way, Tick start) {
  if (!array_.valid(r.set, way)) return start;
  ++evictions_;
  if (!array_.dirty(r.set, way)) return start;
  ++writebacks_;
  // The victim moves to a write-back buffer (waiting for one if all are busy) and goes to DRAM
  // as a posted write: the miss does not wait for DRAM, only for the buffer.
  const Tick wb = wb_free_.top();
  wb_free_.pop();
  start = std::max(start, array_.ready(r.set, way));
  if (wb > start) {
    wb_stall_ps_ += wb - start;
    start = wb;
  }
  wb_free_.push(memory_access(true, array_.line_addr(r.set, way), array_.data(r.set, way), start, r.timing_only));
  return start;
}

void L2Slice::move_data(tlm::tlm_generic_payload& p, const Request& r, int way, unsigned offset) {
  if (!is_timing_only(p) && !array_.has_data()) {
    // A slice built for a timing-only run holds no bytes; the few accesses that must carry
    // data even then (instruction fetches, scalar loads) are served from memory.
    if (memory->transport_dbg(p) != r.len)
      throw Error(std::string(name()) + ": cannot move data for " + hex(p.get_address()) + " from memory");
  } else if (!r.timing_only) {
    std::uint8_t* bytes = array_.data(r.set, way) + offset;
    if (r.write)
      std::memcpy(bytes, p.get_data_ptr(), r.len);
    else
      std::memcpy(p.get_data_ptr(), bytes, r.len);
  }
}

std::uint64_t L2Slice::invalidate(const AddressRanges& ranges) {
  const unsigned bits = hash_.line_bits();
  AddressRanges lines;  // [lo, hi) in line addresses, rounded out
  std::uint64_t count = 0;
  for (const auto& [lo, hi] : ranges)
    if (hi > lo) {
      lines.emplace_back(lo >> bits, ((hi - 1) >> bits) + 1);
      count += lines.back().second - lines.back().first;
    }
  const auto in = [&](std::uint64_t line) {
    for (const auto& [lo, hi] : lines)
      if (line >= lo && line < hi) return true;
    return false;
  };
  // Written now: no longer stale (a discard marks a line whether or not it was here).
  discarded_.erase_if(in);
  if (!filled_) return 0;
  const std::uint64_t before = invalidated_;
  const std::uint32_t sets = cfg_.sets_per_slice();
  // A few lines (a small kernel's pages) are each looked up where they would be, this slice's
  // only; more than a quarter of the slice's ways (a hash and a lookup cost about four tag
  // checks) are found by a scan of its tags.
  if (count < std::uint64_t(sets) * cfg_.ways / 4) {
    for (const auto& [lo, hi] : lines)
      for (std::uint64_t line = lo; line < hi; ++line) {
        const std::uint64_t addr = line << bits;
        if (hash_.slice(addr) != index_) continue;
        const auto set = std::uint32_t(hash_.slice_local_line(addr) & (sets - 1));
        if (const int way = array_.lookup(set, line); way >= 0) drop(set, way);
      }
  } else {
    for (std::uint32_t set = 0; set < sets; ++set)
      for (int way = 0; way < int(cfg_.ways); ++way)
        if (array_.valid(set, way) && in(array_.line_addr(set, way))) drop(set, way);
  }
  return invalidated_ - before;
}

void L2Slice::overlay(std::uint64_t lo, std::uint64_t hi, std::uint8_t* out) {
  if (hi <= lo || !filled_ || !array_.has_data()) return;  // a slice without bytes: memory's stand
  const unsigned bits = hash_.line_bits();
  const std::uint32_t sets = cfg_.sets_per_slice();
  // A line the slice hash gives another slice is not found here (the tags hold whole line
  // addresses): no hash needed to skip it.
  for (std::uint64_t line = lo >> bits; line <= (hi - 1) >> bits; ++line) {
    const auto set = std::uint32_t(hash_.slice_local_line(line << bits) & (sets - 1));
    const int way = array_.lookup(set, line);
    if (way < 0) continue;
    const std::uint64_t a = std::max(lo, line << bits), b = std::min(hi, (line + 1) << bits);
    std::memcpy(out + (a - lo), array_.data(set, way) + (a - (line << bits)), b - a);
  }
}

void L2Slice::drop(std::uint32_t set, int way) {
  ++invalidated_;
  if (array_.dirty(set, way)) ++invalidated_dirty_;
  array_.invalidate(set, way);
}

unsigned L2Slice::transport_dbg(tlm::tlm_generic_payload& p) {
  // Debug access sees the coherent value: the cached line if present, else memory.
  const std::uint64_t addr = p.get_address();
  const unsigned len = p.get_data_length();
  const std::uint64_t line_addr = addr >> hash_.line_bits();
  const unsigned offset = unsigned(addr & (cfg_.line_bytes - 1));
  if (offset + len > cfg_.line_bytes || !array_.has_data()) return memory->transport_dbg(p);
  const std::uint32_t set = std::uint32_t(hash_.slice_local_line(addr) & (cfg_.sets_per_slice() - 1));
  int way = array_.lookup(set, line_addr);
  if (way < 0) return memory->transport_dbg(p);
  std::uint8_t* bytes = array_.data(set, way) + offset;
  if (p.is_write()) {
    std::memcpy(bytes, p.get_data_ptr(), len);
    array_.set_dirty(set, way);  // memory is stale now: the line must go back on eviction
  } else
    std::memcpy(p.get_data_ptr(), bytes, len);
  p.set_response_status(tlm::TLM_OK_RESPONSE);
  return len;
}

}  // namespace dvp::cache
