// SPDX-License-Identifier: MIT
// sc_spawn starts one thread per pipe, each knowing its pipe index.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "aicore.hpp"

#include <algorithm>
#include <cstring>
#include <queue>
#include <sstream>
#include <string_view>

#include "common/error.hpp"
#include "common/payload.hpp"
#include "common/system.hpp"
#include "numeric.hpp"

namespace dvp::aicore {

std::string Fault::str() const {
  std::ostringstream os;
  os << "aicore" << core << " pc " << hex(pc);
  if (!instr.empty()) os << " (" << instr << ")";
  os << ": " << reason;
  return os.str();
}

std::uint8_t* AiCore::buffer(Buffer b) {
  if (b == kL0C && !cube_.settle()) cube_failed();
  return buf_[b].data();
}

const std::uint8_t* AiCore::l0c_settled(std::uint64_t addr, std::uint64_t len) {
  if (!cube_.settle(addr, addr + len)) cube_failed();
  return buf_[kL0C].data();
}

void AiCore::cube_failed() {
  const std::string what = std::string(name()) + ": an mmad's arithmetic failed on the host: " + cube_.failure();
  // Inside a SystemC process the run stops with it; outside (a test bench reading L0C), an error.
  if (!sc_core::sc_get_current_process_handle().valid()) throw Error(what);
  system_of(*this).fail(what);
}

AiCore::AiCore(sc_core::sc_module_name name, const AiCoreConfig& cfg, unsigned id, std::uint32_t line_bytes,
               bool functional)
    : sc_module(name),
      bus("bus"),
      cfg_(cfg),
      id_(id),
      line_bytes_(line_bytes),
      functional_(functional),
      stats_(*this),
      blocks_(stats_.counter("blocks", "task blocks run to completion")),
      scalar_instrs_(stats_.counter("scalar_instructions", "instructions executed by the scalar unit")),
      issued_instrs_(stats_.counter("issued_instructions", "instructions issued into pipe queues")),
      icache_misses_(stats_.counter("icache_misses", "instruction fetches that filled a line from GM")),
      icache_hits_(stats_.counter("icache_hits", "instruction fetches served by the iCache")),
      dcache_misses_(stats_.counter("dcache_misses", "scalar loads and stores that went to GM")),
      dcache_hits_(stats_.counter("dcache_hits", "scalar loads and stores served by the dCache")),
      gm_bytes_read_(stats_.counter("gm_bytes_read", "bytes read from GM (MTE2, fetch, dCache)")),
      gm_bytes_written_(stats_.counter("gm_bytes_written", "bytes written to GM (MTE3, dCache)")),
      issue_stall_ps_(stats_.counter("issue_stall_ps", "time the scalar unit waited for a full pipe queue, ps")) {
  for (int b = 0; b < kBuffers; ++b) buf_[b] = ZeroPages(cfg.size[b], std::string(this->name()) + ": a local buffer");
  icache_.resize(cfg.icache_bytes / cfg.icache_fill_bytes);
  for (auto& l : icache_) l = CacheLine{~0ull, 0, false, std::vector<std::uint8_t>(cfg.icache_fill_bytes)};
  dcache_.resize(cfg.dcache_bytes / cfg.dcache_line_bytes);
  for (auto& l : dcache_) l = CacheLine{~0ull, 0, false, std::vector<std::uint8_t>(cfg.dcache_line_bytes)};
  const char* lanes[kPipes] = {"SCALAR", "MTE1", "MTE2", "MTE3", "CUBE", "VECTOR", "FIXP"};
  for (int p = 0; p < kPipes; ++p) lane_[p] = system_of(*this).tracer().lane("aicore" + std::to_string(id), lanes[p]);
  on_fault_ = [this](const Fault& f) { system_of(*this).fail(f.str()); };
  const char* busy_keys[kPipes] = {"scalar_busy", "mte1_busy",   "mte2_busy", "mte3_busy",
                                   "cube_busy",   "vector_busy", "fixp_busy"};
  for (int p = 0; p < kPipes; ++p)
    stats_.formula(busy_keys[p], "fraction of simulated time this pipe executed instructions", [this, p] {
      Tick now = now_tick();
      return now ? double(pipe_busy_[p]) / double(now) : 0.0;
    });
  SC_HAS_PROCESS(AiCore);
  SC_THREAD(scalar_thread);
  // One thread per pipe; sc_spawn keeps the pipe index with each.
  for (int p = 1; p < kPipes; ++p)
    sc_core::sc_spawn([this, p] { pipe_thread(p); }, (std::string("pipe_") + pipe_name(Pipe(p))).c_str());
}

void AiCore::start(const Launch& l) {
  if (busy_) throw Error(std::string(name()) + ": start while a block is still running");
  launch_ = l;
  busy_ = true;
  start_ev_.notify(sc_core::SC_ZERO_TIME);
}

void AiCore::raise(std::uint64_t pc, const Instr* in, const std::string& reason) {
  if (fault_) return;
  Fault f{id_, pc, in ? format_instr(*in, pc) : "", reason};
  fault_ = f;
  stopping_ = true;
  for (int p = 0; p < kPipes; ++p) push_ev_[p].notify(sc_core::SC_ZERO_TIME);
  flag_ev_.notify(sc_core::SC_ZERO_TIME);
  stop_ev_.notify(sc_core::SC_ZERO_TIME);
  on_fault_(f);
}

// --- scalar unit ------------------------------------------------------------------------------

void AiCore::scalar_thread() {
  for (;;) {
    wait(start_ev_);
    run_block();
    occupied_ += now_tick() - start_time_;
    busy_ = false;
    finished_ev_.notify(sc_core::SC_ZERO_TIME);
  }
}

void AiCore::reset_block(Tick t) {
  start_time_ = t;
  x_.fill(0);
  mask_[0] = mask_[1] = ~0ull;
  fmatrix_ = padvalue_ = 0;
  aipp_.fill(0);
  for (auto& a : flag_at_)
    for (auto& b : a)
      for (auto& f : b) f = kTickMax;
  stopping_ = false;
  fault_.reset();
  for (auto& l : icache_) l.tag = ~0ull;  // a new kernel may sit where the old one was
  sstate_ = SState::Running;
}

void AiCore::run_block() {
  const Clock& clk = cfg_.clock;
  Tick t = clk.align_up(now_tick());
  reset_block(t);
  const Tick quantum = to_tick(tlm::tlm_global_quantum::instance().get());
  std::uint64_t pc = launch_.entry;
  while (!stopping_) {
    pc_ = pc;
    std::uint64_t word;
    if (!fetch(pc, word, t)) break;
    Instr in;
    try {
      in = decode(word);
    } catch (const Error& e) {
      raise(pc, nullptr, e.what());
      break;
    }
    const OpInfo& info = in.info();
    const Tick t0 = t;
    Tick stalled = 0;  // waiting for a queue slot or a flag: not the scalar unit's own work
    std::uint64_t next = pc + 8;
    if (info.exec == Exec::End) {
      ++scalar_instrs_;
      t += clk.cycles(cfg_.scalar_cycles);
      break;
    }
    if (info.pipe == Pipe::S && !is_sync(info.exec)) {
      ++scalar_instrs_;
      if (!exec_scalar(in, pc, next, t)) break;
    } else if (!issue(in, pc, t, stalled)) {
      break;
    }
    Profile& prof = profile_at(pc);
    ++prof.count;
    prof.op = in.op;
    prof.cycles += clk.to_cycles_floor(t - t0);
    pipe_busy_[int(Pipe::S)] += t - t0 - stalled;
    lane_[int(Pipe::S)].slice(info.mnemonic, t0, t);
    pc = next;
    if (t >= now_tick() + quantum) wait(to_sc(t - now_tick()));
  }
  if (t > now_tick()) wait(to_sc(t - now_tick()));
  drain_block();
}

// The pipe a synchronisation instruction acts in: setflag in its source, waitflag in its
// destination, barrier in the one it names; any other issued instruction in its own.
static int issue_pipe(const Instr& in) {
  switch (in.info().exec) {
    case Exec::SetFlag: return in.imm & 15;
    case Exec::WaitFlag: return (in.imm >> 4) & 15;
    case Exec::Barrier: return in.imm & 15;
    default: return int(in.info().pipe);
  }
}

bool AiCore::issue(const Instr& in, std::uint64_t pc, Tick& t, Tick& stalled) {
  const int p = issue_pipe(in);
  if (p >= kPipes) {
    raise(pc, &in, "names a pipe that does not exist");
    return false;
  }
  t += cfg_.clock.cycles(cfg_.issue_cycles);
  if (t > now_tick()) wait(to_sc(t - now_tick()));
  if (p == int(Pipe::S)) return scalar_flag(in, pc, t, stalled);
  Issued e{in, pc, {x_[in.a], x_[in.b], x_[in.c], x_[in.d], x_[in.e]}, {mask_[0], mask_[1]}, fmatrix_, padvalue_, {}};
  if (in.info().exec == Exec::Aipp) e.aipp = aipp_;  // only AIPP reads its registers
  while (q_[p].size() >= cfg_.queue_depth && !stopping_) {
    sstate_ = SState::WaitQueue;
    sstate_pipe_ = p;
    if (check_deadlock()) break;
    const Tick w0 = now_tick();
    wait(pop_ev_[p]);
    issue_stall_ps_ += now_tick() - w0;
  }
  if (stopping_) return false;
  sstate_ = SState::Running;
  stalled += now_tick() > t ? now_tick() - t : 0;
  t = std::max(t, now_tick());
  q_[p].push_back(e);
  ++issued_instrs_;
  push_ev_[p].notify(sc_core::SC_ZERO_TIME);
  return true;
}

bool AiCore::scalar_flag(const Instr& in, std::uint64_t pc, Tick& t, Tick& stalled) {
  // A flag the scalar unit sets (src s) or waits for (dst s): no queue, done in order.
  if (in.info().exec == Exec::SetFlag) return set_flag(in.imm, now_tick(), pc, in);
  wait_flag(
      in.imm,
      [&] {
        sstate_ = SState::WaitQueue;
        sstate_pipe_ = -1 - int(in.imm & 0xfff);
      },
      [] {});
  if (stopping_) return false;
  sstate_ = SState::Running;
  stalled += now_tick() > t ? now_tick() - t : 0;
  t = std::max(t, now_tick());
  return true;
}

void AiCore::drain_block() {
  // End: wait until every pipe has drained, then write back the dCache.
  sstate_ = SState::Draining;
  for (;;) {
    bool idle = true;
    for (int p = 1; p < kPipes; ++p) idle &= q_[p].empty() && pstate_[p] == PState::Idle;
    if (idle || stopping_) break;
    if (check_deadlock()) break;
    wait(idle_ev_ | stop_ev_);
  }
  if (!stopping_) {
    Tick tf = now_tick();
    for (int p = 1; p < kPipes; ++p) tf = std::max(tf, pending_[p]);  // transfers still landing
    dcache_flush(tf);
    if (tf > now_tick()) wait(to_sc(tf - now_tick()));
    ++blocks_;
  }
  for (int p = 1; p < kPipes; ++p) q_[p].clear();
  sstate_ = SState::Stopped;
}

bool AiCore::fetch(std::uint64_t pc, std::uint64_t& word, Tick& t) {
  if (pc % 8 || pc >= launch_.code_bytes) {
    raise(pc, nullptr,
          "pc " + hex(pc) + " is outside the kernel image (" + std::to_string(launch_.code_bytes) + " bytes)");
    return false;
  }
  const std::uint64_t addr = launch_.image_base + pc;
  const std::uint64_t tag = addr / cfg_.icache_fill_bytes;
  bool hit;
  CacheLine& line = lru_line(icache_, tag, hit);
  if (hit) {
    ++icache_hits_;
  } else {
    ++icache_misses_;
    line.tag = tag;
    // Instructions are always fetched with their bytes, even in a timing-only run.
    t = scalar_gm(false, tag * cfg_.icache_fill_bytes, line.data.data(), cfg_.icache_fill_bytes, t, pc, nullptr);
    if (stopping_) return false;
  }
  std::memcpy(&word, line.data.data() + (addr % cfg_.icache_fill_bytes), 8);
  return true;
}

AiCore::CacheLine& AiCore::lru_line(std::vector<CacheLine>& cache, std::uint64_t tag, bool& hit) {
  CacheLine* l = nullptr;
  for (auto& c : cache)
    if (c.tag == tag) l = &c;
  hit = l != nullptr;
  if (!hit) {
    l = &*std::min_element(cache.begin(), cache.end(),
                           [](const CacheLine& a, const CacheLine& b) { return a.stamp < b.stamp; });
  }
  l->stamp = ++cache_clock_;
  return *l;
}

bool AiCore::dcache(bool write, std::uint64_t addr, unsigned size, std::uint64_t& value, Tick& t, std::uint64_t pc,
                    const Instr& in) {
  if (addr % size) {
    raise(pc, &in, "GM address " + hex(addr) + " is not aligned to " + std::to_string(size) + " bytes");
    return false;
  }
  const std::uint64_t line = cfg_.dcache_line_bytes;
  const std::uint64_t tag = addr / line;
  bool was_hit;
  CacheLine* hit = &lru_line(dcache_, tag, was_hit);
  if (was_hit) {
    ++dcache_hits_;
  } else {
    ++dcache_misses_;
    // Scalar data is always real, even in a timing-only run: control flow depends on it.
    if (hit->dirty && hit->tag != ~0ull)
      t = scalar_gm(true, hit->tag * line, hit->data.data(), std::uint32_t(line), t, pc, &in);
    hit->tag = tag;
    hit->dirty = false;
    t = scalar_gm(false, tag * line, hit->data.data(), std::uint32_t(line), t, pc, &in);
    if (stopping_) return false;
  }
  std::uint8_t* p = hit->data.data() + addr % line;
  if (write) {
    std::memcpy(p, &value, size);
    hit->dirty = true;
  } else {
    value = 0;
    std::memcpy(&value, p, size);
  }
  return true;
}

void AiCore::dcache_flush(Tick& t) {
  for (auto& l : dcache_)
    if (l.dirty) {
      t = scalar_gm(true, l.tag * cfg_.dcache_line_bytes, l.data.data(), cfg_.dcache_line_bytes, t, 0, nullptr);
      l.dirty = false;
    }
  for (auto& l : dcache_) l.tag = ~0ull;
}

// --- pipes ------------------------------------------------------------------------------------

void AiCore::pipe_thread(int p) {
  for (;;) {
    while (q_[p].empty()) {
      pstate_[p] = PState::Idle;
      idle_ev_.notify(sc_core::SC_ZERO_TIME);
      check_deadlock();
      wait(push_ev_[p]);
    }
    if (stopping_) {
      q_[p].clear();
      continue;
    }
    pstate_[p] = PState::Busy;
    const Issued e = q_[p].front();
    const Tick t0 = now_tick();
    const Exec x = e.in.info().exec;
    Tick done = t0;
    if (x == Exec::Barrier && pending_[p] > now_tick()) {
      // Every earlier transfer of this pipe must have completed.
      wait(to_sc(pending_[p] - now_tick()));
      done = now_tick();
    }
    if (x == Exec::SetFlag) {
      set_flag(e.in.imm, std::max(now_tick(), pending_[p]), e.pc, e.in);
    } else if (x == Exec::WaitFlag) {
      wait_flag(
          e.in.imm, [&] { pstate_[p] = PState::WaitFlag; }, [&] { pstate_[p] = PState::Busy; });
      done = now_tick();
    } else if (x == Exec::Barrier) {
      // Everything before it has completed (waited for above).
    } else {
      const Span sp = exec_issued(e);
      done = sp.done;
      pending_[p] = std::max(pending_[p], sp.done);
      if (sp.free > now_tick()) wait(to_sc(sp.free - now_tick()));
    }
    if (stopping_) {
      q_[p].clear();
      continue;
    }
    // Busy: the union of instructions' start-to-completion spans (transfers overlap); waiting
    // for a flag is not work.
    if (x != Exec::WaitFlag && done > std::max(t0, busy_until_[p])) {
      pipe_busy_[p] += done - std::max(t0, busy_until_[p]);
      busy_until_[p] = done;
    }
    Profile& prof = profile_at(e.pc);
    ++prof.count;
    prof.op = e.in.op;
    prof.cycles += cfg_.clock.to_cycles_floor(done - t0);
    lane_[p].slice(e.in.info().mnemonic, t0, done);
    q_[p].pop_front();
    pop_ev_[p].notify(sc_core::SC_ZERO_TIME);
  }
}

// Indexed by executor kind; the scalar unit's kinds and the synchronisation ones are null.
const std::array<AiCore::PipeUnit, std::size_t(Exec::Count_)> AiCore::kPipeUnits = [] {
  std::array<PipeUnit, std::size_t(Exec::Count_)> u{};
  u[int(Exec::Copy)] = [](AiCore& c, const Issued& e) { return c.mte_.copy(e); };
  u[int(Exec::Nd2Nz)] = [](AiCore& c, const Issued& e) { return c.mte_.nd2nz(e); };
  u[int(Exec::Load2d)] = [](AiCore& c, const Issued& e) { return c.mte_.load2d(e); };
  u[int(Exec::Load3d)] = [](AiCore& c, const Issued& e) { return c.mte_.load3d(e); };
  u[int(Exec::Mmad)] = [](AiCore& c, const Issued& e) { return c.cube_.mmad(e); };
  u[int(Exec::Fixp)] = [](AiCore& c, const Issued& e) { return c.fixpipe_.fixp(e); };
  u[int(Exec::Vector)] = [](AiCore& c, const Issued& e) { return c.vector_.execute(e); };
  u[int(Exec::Aipp)] = [](AiCore& c, const Issued& e) { return c.mte_.aipp(e); };
  return u;
}();

Span AiCore::exec_issued(const Issued& e) {
  const PipeUnit unit = kPipeUnits[std::size_t(e.in.info().exec)];
  if (unit) return unit(*this, e);
  raise(e.pc, &e.in, std::string(e.in.info().mnemonic) + " has no model");
  return Span::at(now_tick());
}

bool AiCore::set_flag(std::int64_t code, Tick when, std::uint64_t pc, const Instr& in) {
  Tick& f = flag_at(code);
  if (f != kTickMax) {
    raise(pc, &in, "SetFlag on a flag that is already set");
    return false;
  }
  f = when;
  flag_ev_.notify(sc_core::SC_ZERO_TIME);
  return true;
}

void AiCore::wait_flag(std::int64_t code, const std::function<void()>& blocked,
                       const std::function<void()>& unblocked) {
  for (;;) {
    if (stopping_) return;
    const Tick f = flag_at(code);
    if (f <= now_tick()) break;
    blocked();
    if (f != kTickMax) {
      wait(to_sc(f - now_tick()));  // posted: set once its pipe's transfers complete
      continue;
    }
    if (check_deadlock()) return;
    wait(flag_ev_);
  }
  flag_at(code) = kTickMax;
  unblocked();
}

bool AiCore::check_deadlock() {
  // Exact, not a timeout: every party is blocked on a condition that is false right now and
  // no pipe is executing, so nothing can ever change.
  // A flag that is pending (set at a future time) will wake its waiter: not a deadlock.
  auto flag_of = [&](int code) -> bool { return flag_at(code) != kTickMax; };
  bool scalar_blocked = false;
  switch (sstate_) {
    case SState::Running: return false;
    case SState::Stopped: return false;
    case SState::Draining: scalar_blocked = true; break;
    case SState::WaitQueue:
      scalar_blocked = sstate_pipe_ >= 0 ? q_[sstate_pipe_].size() >= cfg_.queue_depth : !flag_of(-1 - sstate_pipe_);
      break;
  }
  if (!scalar_blocked) return false;
  bool waiting = sstate_ == SState::WaitQueue && sstate_pipe_ < 0;
  for (int p = 1; p < kPipes; ++p) {
    switch (pstate_[p]) {
      case PState::Busy: return false;
      case PState::Idle:
        if (!q_[p].empty()) return false;
        break;
      case PState::WaitFlag: {
        if (flag_of(int(q_[p].front().in.imm))) return false;
        waiting = true;
        break;
      }
    }
  }
  if (!waiting) return false;
  raise(pc_, nullptr, "deadlock: no pipe can make progress\n" + pipe_report());
  return true;
}

std::string AiCore::pipe_report() const {
  std::ostringstream os;
  auto flag = [](int code) {
    std::string s = pipe_name(Pipe(code & 15));
    return "flag (" + s + " -> " + pipe_name(Pipe((code >> 4) & 15)) + ", event " + std::to_string((code >> 8) & 15) +
           ")";
  };
  os << "    SCALAR: ";
  switch (sstate_) {
    case SState::Draining: os << "reached end, waiting for the pipes to drain"; break;
    case SState::WaitQueue:
      if (sstate_pipe_ >= 0)
        os << "waiting to issue into the full " << pipe_name(Pipe(sstate_pipe_)) << " queue";
      else
        os << "waitflag: waiting for " << flag(-1 - sstate_pipe_);
      break;
    default: os << "running"; break;
  }
  os << "\n";
  for (int p = 1; p < kPipes; ++p) {
    os << "    " << pipe_name(Pipe(p)) << ": ";
    if (q_[p].empty()) {
      os << "idle, queue empty\n";
      continue;
    }
    const Issued& h = q_[p].front();
    os << "head " << hex(h.pc) << " " << format_instr(h.in, h.pc);
    if (pstate_[p] == PState::WaitFlag) os << " -- waiting for " << flag(h.in.imm) << ", which no one will set";
    os << " (" << q_[p].size() << " queued)\n";
  }
  return os.str();
}

// --- the bus interface to GM -------------------------------------------------------------------

GmTiming AiCore::gm_access(const GmTransfer& x) {
  static TimingOnly timing_only_ext;
  static NoAllocate no_allocate_ext;
  const Clock& clk = cfg_.clock;
  const Tick quantum = to_tick(tlm::tlm_global_quantum::instance().get());
  // The engine's requests in flight, across its instructions: gm_outstanding bounds them, so a
  // pipe that runs ahead of the memory system is held back by its completions.
  const int pipe = x.in ? int(x.in->info().pipe) : int(Pipe::S);
  auto& in_flight = in_flight_[pipe];
  Tick issue = std::max(x.start, now_tick()), done = issue;
  // The pipe's own payload: the scalar unit and the pipes call this concurrently (it may wait),
  // each pipe from its one thread, a call at a time. Kept from call to call (a payload made per
  // call cost a heap allocation and its free); only the requester sets its extensions.
  tlm::tlm_generic_payload& p = gm_payload_[pipe];
  p.set_extension(x.functional ? nullptr : &timing_only_ext);
  p.set_extension(x.no_alloc ? &no_allocate_ext : nullptr);
  for (std::uint64_t off = 0; off < x.len;) {
    const std::uint64_t a = x.addr + off;
    const std::uint32_t piece = std::uint32_t(std::min<std::uint64_t>(x.len - off, line_bytes_ - a % line_bytes_));
    if (in_flight.size() >= cfg_.gm_outstanding) {
      issue = std::max(issue, in_flight.top());
      in_flight.pop();
    }
    if (issue >= now_tick() + quantum) wait(to_sc(issue - now_tick()));
    prepare(p, x.write, a, x.data + off, piece);
    sc_core::sc_time d = to_sc(issue - now_tick());
    bus->b_transport(p, d);
    if (p.get_response_status() != tlm::TLM_OK_RESPONSE) {
      raise(x.pc, x.in,
            std::string("GM ") + (x.write ? "write" : "read") + " of " + std::to_string(piece) + " bytes at " + hex(a) +
                " failed: " + p.get_response_string() +
                (p.get_response_status() == tlm::TLM_ADDRESS_ERROR_RESPONSE ? " (no memory or device mapped there)"
                                                                            : ""));
      return GmTiming{now_tick(), now_tick()};
    }
    const Tick c = now_tick() + to_tick(d);
    in_flight.push(c);
    done = std::max(done, c);
    issue += clk.cycles((piece + x.rate - 1) / x.rate);
    off += piece;
  }
  (x.write ? gm_bytes_written_ : gm_bytes_read_) += x.len;
  return GmTiming{issue, std::max(done, issue)};
}

Tick AiCore::scalar_gm(bool write, std::uint64_t addr, std::uint8_t* data, std::uint32_t len, Tick t, std::uint64_t pc,
                       const Instr* in) {
  const std::uint32_t rate = write ? cfg_.gm_write_bytes_per_cycle : cfg_.gm_read_bytes_per_cycle;
  return gm_access(GmTransfer{write, addr, data, len, t, rate, true, pc, in}).done;
}

bool AiCore::local_range(Buffer b, std::uint64_t addr, std::uint64_t len, const Issued& e, const char* what) {
  if (addr % cfg_.align[b]) {
    raise(e.pc, &e.in,
          std::string(what) + " " + buffer_name(b) + " address " + hex(addr) + " is not aligned to " +
              std::to_string(cfg_.align[b]) + " bytes");
    return false;
  }
  if (addr + len > cfg_.size[b] || addr + len < addr) {
    raise(e.pc, &e.in,
          std::string(what) + " " + buffer_name(b) + " range " + hex(addr) + ".." + hex(addr + len) + " is outside " +
              buffer_name(b) + " (" + std::to_string(cfg_.size[b]) + " bytes)");
    return false;
  }
  return true;
}

std::string AiCore::instruction_csv() const {
  std::ostringstream os;
  os << "instruction,pc,pipe,count,total_cycles\n";
  for (std::size_t i = 0; i < profile_.size(); ++i) {
    const Profile& pr = profile_[i];
    if (!pr.count) continue;
    const std::uint64_t pc = std::uint64_t(i) * 8;
    const OpInfo& info = op_table()[pr.op];
    const char* pipe = is_sync(info.exec) ? "SYNC" : pipe_name(info.pipe);
    os << info.mnemonic << "," << hex(pc) << "," << pipe << "," << pr.count << "," << pr.cycles << "\n";
  }
  return os.str();
}

}  // namespace dvp::aicore
