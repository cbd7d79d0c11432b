// sc_spawn starts one thread per pipe, each knowing its pipe index.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "aicore.hpp"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <queue>
#include <sstream>
#include <string_view>

#include "common/error.hpp"
#include "common/payload.hpp"
#include "numeric.hpp"

namespace dvp::aicore {

namespace {

// Scalar instructions, resolved from their mnemonics once.
enum SOp : std::uint8_t {
  kNotScalar, kNop, kEnd, kAdd, kSub, kMul, kDiv, kDivu, kRem, kAnd, kOr, kXor, kShl, kShr, kSra, kSlt, kSltu, kMin,
  kMax, kAddi, kMuli, kAndi, kOri, kXori, kShli, kShri, kSrai, kSlti, kLi, kLih, kLdB, kLdBu, kLdH, kLdHu, kLdW, kLdWu,
  kLdD, kStB, kStH, kStW, kStD, kBeq, kBne, kBlt, kBge, kBltu, kBgeu, kJmp, kJal, kJr, kMfspr, kMtspr, kSetmaskn,
  kSetflag, kWaitflag, kBarrier, kLoadUb, kStoreUb
};

const std::array<SOp, 256>& scalar_ops() {
  static const std::array<SOp, 256> table = [] {
    std::array<SOp, 256> t{};
    const std::pair<const char*, SOp> names[] = {
        {"nop", kNop}, {"end", kEnd}, {"add", kAdd}, {"sub", kSub}, {"mul", kMul}, {"div", kDiv}, {"divu", kDivu},
        {"rem", kRem}, {"and", kAnd}, {"or", kOr}, {"xor", kXor}, {"shl", kShl}, {"shr", kShr}, {"sra", kSra},
        {"slt", kSlt}, {"sltu", kSltu}, {"min", kMin}, {"max", kMax}, {"addi", kAddi}, {"muli", kMuli},
        {"andi", kAndi}, {"ori", kOri}, {"xori", kXori}, {"shli", kShli}, {"shri", kShri}, {"srai", kSrai},
        {"slti", kSlti}, {"li", kLi}, {"lih", kLih}, {"ld.b", kLdB}, {"ld.bu", kLdBu}, {"ld.h", kLdH},
        {"ld.hu", kLdHu}, {"ld.w", kLdW}, {"ld.wu", kLdWu}, {"ld.d", kLdD}, {"st.b", kStB}, {"st.h", kStH},
        {"st.w", kStW}, {"st.d", kStD}, {"beq", kBeq}, {"bne", kBne}, {"blt", kBlt}, {"bge", kBge},
        {"bltu", kBltu}, {"bgeu", kBgeu}, {"jmp", kJmp}, {"jal", kJal}, {"jr", kJr}, {"mfspr", kMfspr},
        {"mtspr", kMtspr}, {"setmaskn", kSetmaskn}, {"setflag", kSetflag}, {"waitflag", kWaitflag},
        {"barrier", kBarrier}, {"ld.ub", kLoadUb}, {"st.ub", kStoreUb}};
    for (auto& [m, op] : names) t[*find_opcode(m)] = op;
    return t;
  }();
  return table;
}

}  // namespace

std::string Fault::str() const {
  std::ostringstream os;
  os << "aicore" << core << " pc " << hex(pc);
  if (!instr.empty()) os << " (" << instr << ")";
  os << ": " << reason;
  return os.str();
}

AiCore::AiCore(sc_core::sc_module_name name, const AiCoreConfig& cfg, unsigned id, std::uint32_t line_bytes,
               bool functional)
    : sc_module(name),
      bus("bus"),
      cfg_(cfg),
      id_(id),
      line_bytes_(line_bytes),
      functional_(functional),
      stats_(this->name()),
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
  // The cube's arithmetic runs inside a SystemC thread: BLAS threads would only compete with
  // the simulator for the host's cores.
  static const bool one_thread = (openblas_set_num_threads(1), true);
  (void)one_thread;
  for (int b = 0; b < kBuffers; ++b) buf_[b].assign(cfg.size[b], 0);
  icache_.resize(cfg.icache_bytes / cfg.icache_fill_bytes);
  for (auto& l : icache_) l = CacheLine{~0ull, 0, false, std::vector<std::uint8_t>(cfg.icache_fill_bytes)};
  dcache_.resize(cfg.dcache_bytes / cfg.dcache_line_bytes);
  for (auto& l : dcache_) l = CacheLine{~0ull, 0, false, std::vector<std::uint8_t>(cfg.dcache_line_bytes)};
  const char* lanes[kPipes] = {"SCALAR", "MTE1", "MTE2", "MTE3", "CUBE", "VECTOR", "FIXP"};
  for (int p = 0; p < kPipes; ++p)
    lane_[p] = Tracer::instance().lane("aicore" + std::to_string(id), lanes[p]);
  on_fault_ = [](const Fault& f) { throw Error(f.str()); };
  const char* busy_keys[kPipes] = {"scalar_busy", "mte1_busy", "mte2_busy", "mte3_busy", "cube_busy", "vector_busy",
                                   "fixp_busy"};
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
    busy_ = false;
    finished_ev_.notify(sc_core::SC_ZERO_TIME);
  }
}

void AiCore::run_block() {
  const Clock& clk = cfg_.clock;
  Tick t = clk.align_up(now_tick());
  start_time_ = t;
  x_.fill(0);
  mask_[0] = mask_[1] = ~0ull;
  fmatrix_ = padvalue_ = 0;
  for (auto& a : flag_at_)
    for (auto& b : a)
      for (auto& f : b) f = kTickMax;
  stopping_ = false;
  fault_.reset();
  for (auto& l : icache_) l.tag = ~0ull;  // a new kernel may sit where the old one was
  sstate_ = SState::Running;
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
    SOp sop = scalar_ops()[in.op];
    const bool to_queue = info.pipe != Pipe::S || sop == kSetflag || sop == kWaitflag || sop == kBarrier;
    if (sop == kEnd) {
      ++scalar_instrs_;
      t += clk.cycles(cfg_.scalar_cycles);
      break;
    }
    if (!to_queue) {
      ++scalar_instrs_;
      if (!exec_scalar(in, pc, next, t)) break;
    } else {
      // Issue: the pipe named by the instruction, or for sync instructions the pipe it acts in.
      int p = int(info.pipe);
      if (sop == kSetflag) p = in.imm & 15;
      if (sop == kWaitflag) p = (in.imm >> 4) & 15;
      if (sop == kBarrier) p = in.imm & 15;
      if (p >= kPipes) {
        raise(pc, &in, "names a pipe that does not exist");
        break;
      }
      t += clk.cycles(cfg_.issue_cycles);
      if (p == int(Pipe::S)) {
        // A flag the scalar unit sets (src s) or waits for (dst s): no queue, done in order.
        if (t > now_tick()) wait(to_sc(t - now_tick()));
        if (sop == kSetflag) {
          if (!set_flag(in.imm, now_tick(), pc, in)) break;
        } else {
          wait_flag(
              in.imm,
              [&] {
                sstate_ = SState::WaitQueue;
                sstate_pipe_ = -1 - int(in.imm & 0xfff);
              },
              [] {});
          if (stopping_) break;
          sstate_ = SState::Running;
          stalled += now_tick() > t ? now_tick() - t : 0;
          t = std::max(t, now_tick());
        }
      } else {
        Issued e{in, pc, {x_[in.a], x_[in.b], x_[in.c], x_[in.d], x_[in.e]}, {mask_[0], mask_[1]}, fmatrix_, padvalue_};
        if (t > now_tick()) wait(to_sc(t - now_tick()));
        while (q_[p].size() >= cfg_.queue_depth && !stopping_) {
          sstate_ = SState::WaitQueue;
          sstate_pipe_ = p;
          if (check_deadlock()) break;
          Tick w0 = now_tick();
          wait(pop_ev_[p]);
          issue_stall_ps_ += now_tick() - w0;
        }
        if (stopping_) break;
        sstate_ = SState::Running;
        stalled += now_tick() > t ? now_tick() - t : 0;
        t = std::max(t, now_tick());
        q_[p].push_back(e);
        ++issued_instrs_;
        push_ev_[p].notify(sc_core::SC_ZERO_TIME);
      }
    }
    Profile& prof = profile_at(pc);
    ++prof.count;
    prof.op = in.op;
    prof.cycles += clk.to_cycles_floor(t - t0);
    pipe_busy_[int(Pipe::S)] += t - t0 - stalled;
    Tracer::instance().slice(lane_[int(Pipe::S)], info.mnemonic, t0, t);
    pc = next;
    if (t >= now_tick() + quantum) wait(to_sc(t - now_tick()));
  }
  if (t > now_tick()) wait(to_sc(t - now_tick()));
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
    raise(pc, nullptr, "pc " + hex(pc) + " is outside the kernel image (" + std::to_string(launch_.code_bytes) + " bytes)");
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
    t = gm_access(false, tag * cfg_.icache_fill_bytes, line.data.data(), cfg_.icache_fill_bytes, t,
                  cfg_.gm_read_bytes_per_cycle, true, pc, nullptr);
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
      t = gm_access(true, hit->tag * line, hit->data.data(), line, t, cfg_.gm_write_bytes_per_cycle, true, pc, &in);
    hit->tag = tag;
    hit->dirty = false;
    t = gm_access(false, tag * line, hit->data.data(), line, t, cfg_.gm_read_bytes_per_cycle, true, pc, &in);
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
      t = gm_access(true, l.tag * cfg_.dcache_line_bytes, l.data.data(), cfg_.dcache_line_bytes, t,
                    cfg_.gm_write_bytes_per_cycle, true, 0, nullptr);
      l.dirty = false;
    }
  for (auto& l : dcache_) l.tag = ~0ull;
}

bool AiCore::exec_scalar(const Instr& in, std::uint64_t pc, std::uint64_t& next, Tick& t) {
  const Clock& clk = cfg_.clock;
  t += clk.cycles(cfg_.scalar_cycles);
  const std::uint64_t a = x_[in.b], b = x_[in.c];
  const std::int64_t sa = std::int64_t(a), sb = std::int64_t(b);
  const std::int64_t imm = in.imm;
  const std::uint64_t uimm = std::uint32_t(in.imm);
  std::uint64_t r = 0;
  bool write = true;
  auto branch = [&](bool taken) {
    write = false;
    if (taken) next = std::uint64_t(std::int64_t(pc) + imm * 8);
  };
  auto div_zero = [&]() {
    raise(pc, &in, "division by zero");
    return false;
  };
  auto load = [&](unsigned size, bool sign) {
    std::uint64_t v;
    if (!dcache(false, a + std::uint64_t(imm), size, v, t, pc, in)) return false;
    if (sign) {
      const unsigned sh = 64 - 8 * size;
      v = std::uint64_t(std::int64_t(v << sh) >> sh);
    }
    r = v;
    return true;
  };
  auto store = [&](unsigned size) {
    write = false;
    std::uint64_t v = b;
    return dcache(true, a + std::uint64_t(imm), size, v, t, pc, in);
  };
  switch (scalar_ops()[in.op]) {
    case kNop: write = false; break;
    case kAdd: r = a + b; break;
    case kSub: r = a - b; break;
    case kMul: r = a * b; break;
    case kDiv: if (!b) return div_zero(); r = (sa == INT64_MIN && sb == -1) ? a : std::uint64_t(sa / sb); break;
    case kDivu: if (!b) return div_zero(); r = a / b; break;
    case kRem: if (!b) return div_zero(); r = (sb == -1) ? 0 : std::uint64_t(sa % sb); break;
    case kAnd: r = a & b; break;
    case kOr: r = a | b; break;
    case kXor: r = a ^ b; break;
    case kShl: r = a << (b & 63); break;
    case kShr: r = a >> (b & 63); break;
    case kSra: r = std::uint64_t(sa >> (b & 63)); break;
    case kSlt: r = sa < sb; break;
    case kSltu: r = a < b; break;
    case kMin: r = std::uint64_t(std::min(sa, sb)); break;
    case kMax: r = std::uint64_t(std::max(sa, sb)); break;
    case kAddi: r = a + std::uint64_t(imm); break;
    case kMuli: r = a * std::uint64_t(imm); break;
    case kAndi: r = a & std::uint64_t(imm); break;
    case kOri: r = a | uimm; break;
    case kXori: r = a ^ uimm; break;
    case kShli: r = a << (imm & 63); break;
    case kShri: r = a >> (imm & 63); break;
    case kSrai: r = std::uint64_t(sa >> (imm & 63)); break;
    case kSlti: r = sa < imm; break;
    case kLi: r = std::uint64_t(imm); break;
    case kLih: r = (x_[in.a] & 0xffffffffull) | (uimm << 32); break;
    case kLdB: if (!load(1, true)) return false; break;
    case kLdBu: if (!load(1, false)) return false; break;
    case kLdH: if (!load(2, true)) return false; break;
    case kLdHu: if (!load(2, false)) return false; break;
    case kLdW: if (!load(4, true)) return false; break;
    case kLdWu: if (!load(4, false)) return false; break;
    case kLdD: if (!load(8, false)) return false; break;
    case kStB: if (!store(1)) return false; break;
    case kStH: if (!store(2)) return false; break;
    case kStW: if (!store(4)) return false; break;
    case kStD: if (!store(8)) return false; break;
    case kLoadUb:
    case kStoreUb: {
      const std::uint64_t addr = a + std::uint64_t(imm);
      if (addr % 8 || addr + 8 > cfg_.size[kUB]) {
        raise(pc, &in, "UB address " + hex(addr) + (addr % 8 ? " is not 8-byte aligned" : " is outside UB (" +
                                                       std::to_string(cfg_.size[kUB]) + " bytes)"));
        return false;
      }
      if (scalar_ops()[in.op] == kLoadUb) {
        std::memcpy(&r, buf_[kUB].data() + addr, 8);
      } else {
        write = false;
        std::memcpy(buf_[kUB].data() + addr, &b, 8);
      }
      break;
    }
    case kBeq: branch(a == b); break;
    case kBne: branch(a != b); break;
    case kBlt: branch(sa < sb); break;
    case kBge: branch(sa >= sb); break;
    case kBltu: branch(a < b); break;
    case kBgeu: branch(a >= b); break;
    case kJmp: branch(true); break;
    case kJal: r = pc + 8; next = std::uint64_t(std::int64_t(pc) + imm * 8); break;
    case kJr: write = false; next = a; break;
    case kMfspr:
      switch (Spr(in.imm)) {
        case Spr::CoreId: r = id_; break;
        case Spr::BlockId: r = launch_.block_id; break;
        case Spr::BlockDim: r = launch_.block_dim; break;
        case Spr::ArgBase: r = launch_.arg_base; break;
        case Spr::Mask0: r = mask_[0]; break;
        case Spr::Mask1: r = mask_[1]; break;
        case Spr::Fmatrix: r = fmatrix_; break;
        case Spr::PadValue: r = padvalue_; break;
        case Spr::Cycle: r = clk.to_cycles_floor(t - start_time_); break;
        default: r = 0; break;
      }
      break;
    case kMtspr:
      write = false;
      switch (Spr(in.imm)) {
        case Spr::Mask0: mask_[0] = a; break;
        case Spr::Mask1: mask_[1] = a; break;
        case Spr::Fmatrix: fmatrix_ = a; break;
        case Spr::PadValue: padvalue_ = a; break;
        case Spr::Ctrl: break;
        default:
          raise(pc, &in, std::string("special register ") + spr_name(Spr(in.imm)) + " is read-only");
          return false;
      }
      break;
    case kSetmaskn:
      write = false;
      if (a < 1 || a > 128) {
        raise(pc, &in, "continuous mask of " + std::to_string(a) + " elements (must be 1..128)");
        return false;
      }
      mask_[0] = a >= 64 ? ~0ull : (1ull << a) - 1;
      mask_[1] = a <= 64 ? 0 : a == 128 ? ~0ull : (1ull << (a - 64)) - 1;
      break;
    default:
      raise(pc, &in, "is not a scalar instruction");
      return false;
  }
  if (write && in.a) x_[in.a] = r;
  return true;
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
    const SOp sop = scalar_ops()[e.in.op];
    Tick done = t0;
    if (sop == kBarrier && pending_[p] > now_tick()) {
      // Every earlier transfer of this pipe must have completed.
      wait(to_sc(pending_[p] - now_tick()));
      done = now_tick();
    }
    if (sop == kSetflag) {
      set_flag(e.in.imm, std::max(now_tick(), pending_[p]), e.pc, e.in);
    } else if (sop == kWaitflag) {
      wait_flag(
          e.in.imm, [&] { pstate_[p] = PState::WaitFlag; }, [&] { pstate_[p] = PState::Busy; });
      done = now_tick();
    } else if (sop == kBarrier) {
      // Everything before it has completed (waited for above).
    } else {
      const Span sp = exec_issued(p, e);
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
    if (sop != kWaitflag && done > std::max(t0, busy_until_[p])) {
      pipe_busy_[p] += done - std::max(t0, busy_until_[p]);
      busy_until_[p] = done;
    }
    Profile& prof = profile_at(e.pc);
    ++prof.count;
    prof.op = e.in.op;
    prof.cycles += cfg_.clock.to_cycles_floor(done - t0);
    Tracer::instance().slice(lane_[p], e.in.info().mnemonic, t0, done);
    q_[p].pop_front();
    pop_ev_[p].notify(sc_core::SC_ZERO_TIME);
  }
}

AiCore::Span AiCore::exec_issued(int p, const Issued& e) {
  const std::string_view m = e.in.info().mnemonic;
  auto whole = [](Tick t) { return Span{t, t}; };
  if (m.rfind("copy.", 0) == 0) return mte_copy(e);
  if (Pipe(p) == Pipe::V) return whole(vector_op(e));
  if (m == "nd2nz.gm2l1") return nd2nz_op(e);
  if (m.rfind("load2d.", 0) == 0) return whole(load2d_op(e));
  if (m.rfind("load3d.", 0) == 0) return whole(load3d_op(e));
  if (m == "mmad") return whole(mmad_op(e));
  if (m.rfind("fixp.", 0) == 0) return fixp_op(e);
  raise(e.pc, &e.in, std::string(e.in.info().mnemonic) + " has no model");
  return whole(now_tick());
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

void AiCore::wait_flag(std::int64_t code, const std::function<void()>& blocked, const std::function<void()>& unblocked) {
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
    return "flag (" + s + " -> " + pipe_name(Pipe((code >> 4) & 15)) + ", event " + std::to_string((code >> 8) & 15) + ")";
  };
  os << "    SCALAR: ";
  switch (sstate_) {
    case SState::Draining: os << "reached end, waiting for the pipes to drain"; break;
    case SState::WaitQueue:
      if (sstate_pipe_ >= 0) os << "waiting to issue into the full " << pipe_name(Pipe(sstate_pipe_)) << " queue";
      else os << "waitflag: waiting for " << flag(-1 - sstate_pipe_);
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

// --- memory transfer engines ------------------------------------------------------------------

Tick AiCore::gm_access(bool write, std::uint64_t addr, std::uint8_t* data, std::uint64_t len, Tick t,
                       std::uint32_t rate, bool functional, std::uint64_t pc, const Instr* in, Tick* issued) {
  static TimingOnly timing_only_ext;
  const Clock& clk = cfg_.clock;
  const Tick quantum = to_tick(tlm::tlm_global_quantum::instance().get());
  // The engine's requests in flight, across its instructions: gm_outstanding bounds them, so a
  // pipe that runs ahead of the memory system is held back by its completions.
  auto& in_flight = in_flight_[in ? int(in->info().pipe) : int(Pipe::S)];
  Tick issue = std::max(t, now_tick()), done = issue;
  // Its own payload: the scalar unit and the pipes call this concurrently (it may wait).
  tlm::tlm_generic_payload p;
  if (!functional) p.set_extension(&timing_only_ext);
  for (std::uint64_t off = 0; off < len;) {
    const std::uint64_t a = addr + off;
    const std::uint32_t piece = std::uint32_t(std::min<std::uint64_t>(len - off, line_bytes_ - a % line_bytes_));
    if (in_flight.size() >= cfg_.gm_outstanding) {
      issue = std::max(issue, in_flight.top());
      in_flight.pop();
    }
    if (issue >= now_tick() + quantum) wait(to_sc(issue - now_tick()));
    prepare(p, write, a, data + off, piece);
    sc_core::sc_time d = to_sc(issue - now_tick());
    bus->b_transport(p, d);
    if (p.get_response_status() != tlm::TLM_OK_RESPONSE) {
      raise(pc, in, std::string("GM ") + (write ? "write" : "read") + " of " + std::to_string(piece) +
                            " bytes at " + hex(a) + " failed: " + p.get_response_string() +
                            (p.get_response_status() == tlm::TLM_ADDRESS_ERROR_RESPONSE
                                 ? " (no memory or device mapped there)"
                                 : ""));
      return now_tick();
    }
    const Tick c = now_tick() + to_tick(d);
    in_flight.push(c);
    done = std::max(done, c);
    issue += clk.cycles((piece + rate - 1) / rate);
    off += piece;
  }
  (write ? gm_bytes_written_ : gm_bytes_read_) += len;
  if (issued) *issued = issue;
  return std::max(done, issue);
}

bool AiCore::local_range(Buffer b, std::uint64_t addr, std::uint64_t len, const Issued& e, const char* what) {
  if (addr % cfg_.align[b]) {
    raise(e.pc, &e.in, std::string(what) + " " + buffer_name(b) + " address " + hex(addr) + " is not aligned to " +
                           std::to_string(cfg_.align[b]) + " bytes");
    return false;
  }
  if (addr + len > cfg_.size[b] || addr + len < addr) {
    raise(e.pc, &e.in, std::string(what) + " " + buffer_name(b) + " range " + hex(addr) + ".." + hex(addr + len) +
                           " is outside " + buffer_name(b) + " (" + std::to_string(cfg_.size[b]) + " bytes)");
    return false;
  }
  return true;
}

AiCore::Span AiCore::mte_copy(const Issued& e) {
  // DataCopy: block_count blocks of block_len x 32 bytes; gaps between blocks on each side.
  const std::string_view m = e.in.info().mnemonic;
  const DataCopyCfg c = DataCopyCfg::unpack(e.v[2]);
  if (c.block_count < 1 || c.block_len < 1) {
    raise(e.pc, &e.in, "DataCopy with block_count " + std::to_string(c.block_count) + " and block_len " +
                           std::to_string(c.block_len) + " (both must be at least 1)");
    return Span{now_tick(), now_tick()};
  }
  struct Path {
    const char* name;
    int src, dst;  // buffer, or -1 for GM
  };
  static const Path paths[] = {{"copy.gm2l1", -1, kL1},  {"copy.gm2ub", -1, kUB}, {"copy.gm2l0a", -1, kL0A},
                               {"copy.gm2l0b", -1, kL0B}, {"copy.l12ub", kL1, kUB}, {"copy.ub2gm", kUB, -1},
                               {"copy.ub2l1", kUB, kL1}};
  const Path* path = nullptr;
  for (auto& p : paths)
    if (m == p.name) path = &p;
  const std::uint64_t block = std::uint64_t(c.block_len) * 32;
  const std::uint64_t src_step = block + std::uint64_t(c.src_gap) * 32, dst_step = block + std::uint64_t(c.dst_gap) * 32;
  const std::uint64_t dst = e.v[0], src = e.v[1], n = c.block_count;
  const std::uint64_t src_span = (n - 1) * src_step + block, dst_span = (n - 1) * dst_step + block;
  if (path->src >= 0 && !local_range(Buffer(path->src), src, src_span, e, "source")) return Span{now_tick(), now_tick()};
  if (path->dst >= 0 && !local_range(Buffer(path->dst), dst, dst_span, e, "destination")) return Span{now_tick(), now_tick()};
  const Clock& clk = cfg_.clock;
  Tick t = now_tick() + clk.cycles(cfg_.mte_startup_cycles);
  if (path->src < 0 || path->dst < 0) {
    // One side is GM: the blocks go through the bus interface back to back.
    const bool write = path->dst < 0;
    const std::uint32_t rate = write ? cfg_.gm_write_bytes_per_cycle : cfg_.gm_read_bytes_per_cycle;
    Tick end = t;
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint8_t* local = write ? buf_[path->src].data() + src + i * src_step : buf_[path->dst].data() + dst + i * dst_step;
      const std::uint64_t gm = write ? dst + i * dst_step : src + i * src_step;
      Tick issued = t;
      end = std::max(end, gm_access(write, gm, local, block, t, rate, functional_, e.pc, &e.in, &issued));
      if (stopping_) return Span{now_tick(), now_tick()};
      t = issued;  // the next block issues once this one has been sent
    }
    return Span{t, end};
  }
  // Local to local.
  const std::uint32_t rate = path->src == kL1 ? cfg_.l1_to_ub_bytes_per_cycle : cfg_.ub_to_l1_bytes_per_cycle;
  if (functional_)
    for (std::uint64_t i = 0; i < n; ++i)
      std::memmove(buf_[path->dst].data() + dst + i * dst_step, buf_[path->src].data() + src + i * src_step, block);
  const Tick done = t + clk.cycles((n * block + rate - 1) / rate);
  return Span{done, done};
}

std::string AiCore::instruction_csv() const {
  std::ostringstream os;
  os << "instruction,pc,pipe,count,total_cycles\n";
  for (std::size_t i = 0; i < profile_.size(); ++i) {
    const Profile& pr = profile_[i];
    if (!pr.count) continue;
    const std::uint64_t pc = std::uint64_t(i) * 8;
    const OpInfo& info = op_table()[pr.op];
    const SOp s = scalar_ops()[pr.op];
    const char* pipe = (s == kSetflag || s == kWaitflag || s == kBarrier) ? "SYNC" : pipe_name(info.pipe);
    os << info.mnemonic << "," << hex(pc) << "," << pipe << "," << pr.count << "," << pr.cycles << "\n";
  }
  return os.str();
}

}  // namespace dvp::aicore
