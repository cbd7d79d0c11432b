// SPDX-License-Identifier: MIT
// One Da Vinci AI Core (coupled mode): a scalar unit that fetches DV ISA instructions through
// an instruction cache, executes scalar instructions and issues the others into per-pipe
// in-order queues; one SystemC thread per pipe (MTE1, MTE2, MTE3, M, V, FIX) executes its
// queue through the pipe's unit (mte.hpp, cube.hpp, vector.hpp, fixpipe.hpp); SetFlag / WaitFlag and PipeBarrier order
// the pipes; L1, L0A, L0B, L0C and UB are real byte arrays with the hardware's alignment and range rules. GM traffic
// goes through the `bus` initiator socket (into the ring, L2 and DRAM).
//
// Faults (bad access, double SetFlag, undefined instruction, a deadlock between pipes) stop
// the core with a report naming core, pc, instruction and reason.
#pragma once
#include <array>
#include <deque>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "aicore_config.hpp"
#include "common/stats.hpp"
#include "common/system.hpp"
#include "common/trace.hpp"
#include "common/zero_pages.hpp"
#include "cube.hpp"
#include "fixpipe.hpp"
#include "isa.hpp"
#include "mte.hpp"
#include "pipe_unit.hpp"
#include "vector.hpp"

namespace dvp::aicore {

struct Launch {
  std::uint64_t image_base = 0;  // GM address of the code (the image's code section)
  std::uint64_t code_bytes = 0;
  std::uint32_t entry = 0;  // byte offset of the first instruction
  std::uint32_t block_id = 0, block_dim = 1;
  std::uint64_t arg_base = 0;
};

struct Fault {
  unsigned core = 0;
  std::uint64_t pc = 0;
  std::string instr;
  std::string reason;
  std::string str() const;
};

class AiCore : public sc_core::sc_module, private CoreServices {
 public:
  tlm_utils::simple_initiator_socket<AiCore> bus;

  // `line_bytes`: the largest request the bus takes (the L2 line); `functional`: move data.
  AiCore(sc_core::sc_module_name name, const AiCoreConfig& cfg, unsigned id, std::uint32_t line_bytes, bool functional);

  // Starts a block at the current simulated time; the core must be idle.
  void start(const Launch& l);
  bool busy() const { return busy_; }
  sc_core::sc_event& finished() { return finished_ev_; }
  const std::optional<Fault>& fault() const { return fault_; }
  // Called on a fault; by default the run stops with the report.
  void set_fault_handler(std::function<void(const Fault&)> h) { on_fault_ = std::move(h); }

  unsigned id() const { return id_; }
  const Launch& launched() const { return launch_; }
  // A local buffer. L0C only once the cube's arithmetic for every mmad so far has landed in it.
  std::uint8_t* buffer(Buffer b) override;
  std::uint64_t reg(unsigned r) const { return x_[r]; }
  Tick pipe_busy(Pipe p) const { return pipe_busy_[int(p)]; }
  std::uint64_t blocks_done() const { return blocks_; }
  Tick block_start() const { return start_time_; }  // when the current (or last) block started
  // The time the core has run blocks, up to now (the running block's time so far included).
  Tick occupied() const { return occupied_ + (busy_ && now_tick() > start_time_ ? now_tick() - start_time_ : 0); }
  double cube_flops() const { return cube_.flops(); }
  double cube_int_ops() const { return cube_.int_ops(); }
  // The per-instruction profile: instruction, pc, pipe, count, total cycles.
  std::string instruction_csv() const;

 private:
  enum class PState { Idle, Busy, WaitFlag };
  enum class SState { Stopped, Running, WaitQueue, Draining };

  void scalar_thread();
  void pipe_thread(int p);
  void run_block();
  void reset_block(Tick t);
  void drain_block();
  // Issues an instruction into the queue of its pipe (or does a flag the scalar unit names).
  bool issue(const Instr& in, std::uint64_t pc, Tick& t, Tick& stalled);
  bool scalar_flag(const Instr& in, std::uint64_t pc, Tick& t, Tick& stalled);
  bool fetch(std::uint64_t pc, std::uint64_t& word, Tick& t);
  bool exec_scalar(const Instr& in, std::uint64_t pc, std::uint64_t& next, Tick& t);
  // The scalar unit's handlers (scalar.cpp), one per executor kind of the ISA table.
  struct Step {
    const Instr& in;
    std::uint64_t pc;
    std::uint64_t& next;  // the next pc (a branch changes it)
    Tick& t;              // the scalar unit's time (a dCache miss adds to it)
  };
  using ScalarUnit = bool (AiCore::*)(const Step&);
  static const std::array<ScalarUnit, std::size_t(Exec::Count_)> kScalarUnits;
  void set_reg(unsigned r, std::uint64_t v);
  bool s_nop(const Step& s);
  bool s_alu(const Step& s);
  bool s_load_imm(const Step& s);
  bool s_load(const Step& s);
  bool s_store(const Step& s);
  bool s_ub_access(const Step& s);
  bool s_branch(const Step& s);
  bool s_jump(const Step& s);
  bool s_mfspr(const Step& s);
  bool s_mtspr(const Step& s);
  bool s_set_mask(const Step& s);
  Span exec_issued(const Issued& e);
  // The pipes' units, one entry per executor kind of the ISA table (exec_issued picks by it).
  using PipeUnit = Span (*)(AiCore&, const Issued&);
  static const std::array<PipeUnit, std::size_t(Exec::Count_)> kPipeUnits;
  void raise(std::uint64_t pc, const Instr* in, const std::string& reason);
  bool check_deadlock();
  std::string pipe_report() const;

  // CoreServices, for the units.
  const AiCoreConfig& config() const override { return cfg_; }
  bool functional() const override { return functional_; }
  bool local_range(Buffer b, std::uint64_t addr, std::uint64_t len, const Issued& e, const char* what) override;
  void fault(const Issued& e, const std::string& reason) override { raise(e.pc, &e.in, reason); }
  bool stopping() const override { return stopping_; }
  const std::uint8_t* l0c_settled(std::uint64_t addr, std::uint64_t len) override;
  std::uint8_t* l0c_for_cube() override { return buf_[kL0C].data(); }
  // Reports that an mmad's arithmetic failed on the host, where L0C is read.
  void cube_failed();
  // GM access through the bus, in line-sized pieces, `rate` bytes per cycle at most and
  // gm_outstanding in flight per engine. Syncs with SystemC time so other initiators keep up.
  GmTiming gm_access(const GmTransfer& x) override;
  // The same for the scalar unit's caches (always with data): returns when the data has moved.
  Tick scalar_gm(bool write, std::uint64_t addr, std::uint8_t* data, std::uint32_t len, Tick t, std::uint64_t pc,
                 const Instr* in);

  // dCache for scalar loads and stores (write-back, fully associative LRU).
  bool dcache(bool write, std::uint64_t addr, unsigned size, std::uint64_t& value, Tick& t, std::uint64_t pc,
              const Instr& in);
  void dcache_flush(Tick& t);

  AiCoreConfig cfg_;
  unsigned id_;
  std::uint32_t line_bytes_;
  const bool functional_;
  std::array<ZeroPages, kBuffers> buf_;  // zero until written, no page touched before
  MteUnit mte_{*this};
  CubeUnit cube_{*this, system_of(*this).host_lane()};
  VectorUnit vector_{*this};
  FixPipe fixpipe_{*this};

  // Architectural state.
  std::array<std::uint64_t, 32> x_{};
  std::uint64_t mask_[2] = {~0ull, ~0ull};
  std::uint64_t fmatrix_ = 0, padvalue_ = 0;
  std::array<std::uint64_t, kAippSprs> aipp_{};  // aipp_src .. aipp_var
  Launch launch_;
  std::uint64_t pc_ = 0;  // the scalar unit's pc, for reports
  // Flags: when each is (or will be) set, kTickMax while clear. A SetFlag in a pipe is posted:
  // the flag sets when the pipe's earlier transfers have completed, and the pipe goes on
  // issuing younger transfers meanwhile, as a DMA engine tracks completion.
  Tick flag_at_[kPipes][kPipes][8];
  Tick& flag_at(std::int64_t code) { return flag_at_[code & 15][(code >> 4) & 15][(code >> 8) & 15]; }
  Tick flag_at(std::int64_t code) const { return flag_at_[code & 15][(code >> 4) & 15][(code >> 8) & 15]; }
  // SetFlag at time `when`: false (after raising) if the flag is already set or pending.
  bool set_flag(std::int64_t code, Tick when, std::uint64_t pc, const Instr& in);
  // WaitFlag: returns once the flag is set and clears it; `state` is the waiter's report state.
  void wait_flag(std::int64_t code, const std::function<void()>& blocked, const std::function<void()>& unblocked);

  // Pipes.
  std::deque<Issued> q_[kPipes];
  PState pstate_[kPipes] = {};
  SState sstate_ = SState::Stopped;
  int sstate_pipe_ = 0;
  sc_core::sc_event push_ev_[kPipes], pop_ev_[kPipes], flag_ev_, idle_ev_, start_ev_, stop_ev_, finished_ev_;
  // Per engine (the scalar unit's caches and each pipe): completion times of GM requests in flight.
  std::priority_queue<Tick, std::vector<Tick>, std::greater<Tick>> in_flight_[kPipes];
  tlm::tlm_generic_payload gm_payload_[kPipes];  // gm_access's, per pipe
  bool busy_ = false, stopping_ = false;
  std::optional<Fault> fault_;
  std::function<void(const Fault&)> on_fault_;
  Tick start_time_ = 0;
  Tick occupied_ = 0;  // the finished blocks' time

  // Caches.
  struct CacheLine {
    std::uint64_t tag;
    std::uint64_t stamp;
    bool dirty;
    std::vector<std::uint8_t> data;
  };
  std::vector<CacheLine> icache_, dcache_;
  // The line holding `tag` (hit), or the least recently used one (miss: the caller writes the
  // victim back if it must, then refills and retags it).
  CacheLine& lru_line(std::vector<CacheLine>& cache, std::uint64_t tag, bool& hit);
  std::uint64_t cache_clock_ = 0;

  // Statistics and trace.
  Tick pipe_busy_[kPipes] = {};
  Tick busy_until_[kPipes] = {};  // end of the pipe's counted busy time (overlapping instructions)
  Tick pending_[kPipes] = {};     // when the pipe's issued transfers have all completed
  struct Profile {
    std::uint64_t count = 0, cycles = 0;
    std::uint8_t op = 0;
  };
  // Indexed by pc / 8 (instructions are 8 bytes): one lookup per instruction in the hot path.
  std::vector<Profile> profile_;
  Profile& profile_at(std::uint64_t pc) {
    const std::size_t i = pc / 8;
    if (i >= profile_.size()) profile_.resize(i + 1);
    return profile_[i];
  }
  Tracer::Lane lane_[kPipes];
  stats::Group stats_;
  std::uint64_t &blocks_, &scalar_instrs_, &issued_instrs_, &icache_misses_, &icache_hits_, &dcache_misses_,
      &dcache_hits_, &gm_bytes_read_, &gm_bytes_written_, &issue_stall_ps_;
};

}  // namespace dvp::aicore
