// SPDX-License-Identifier: MIT
#include "arm_cpu.hpp"

#include <cmath>
#include <cstring>

#include "common/error.hpp"
#include "common/payload.hpp"
#include "common/system.hpp"

namespace dvp::cpu {

namespace {

constexpr std::uint32_t kWfi = 0xd503207f;
constexpr std::uint64_t kNever = ~std::uint64_t(3);  // an end address emulation never reaches

}  // namespace

std::string CpuFault::str() const { return cpu + " pc " + hex(pc) + ": " + reason; }

ArmCpu::ArmCpu(sc_core::sc_module_name name, const CpuConfig& cfg, unsigned index, std::function<std::uint8_t*()> dram,
               std::uint64_t dram_base, std::uint64_t dram_size, irq::IrqController& irq)
    : sc_module(name),
      mmio("mmio"),
      bus("bus"),
      cfg_(cfg),
      cpi_cycles_(cfg.cpi == std::floor(cfg.cpi) ? std::uint64_t(cfg.cpi) : 0),
      index_(index),
      irq_(irq),
      arch_timer_(cfg.counter, index, irq),
      dram_(std::move(dram)),
      dram_base_(dram_base),
      dram_size_(dram_size),
      stats_(*this),
      instructions_(stats_.counter("instructions", "instructions executed")),
      idle_ps_(stats_.counter("idle_ps", "time spent in WFI waiting for an interrupt")),
      irqs_(stats_.counter("interrupts", "interrupts taken (exception entries)")),
      mmio_reads_(stats_.counter("mmio_reads", "peripheral register reads")),
      mmio_writes_(stats_.counter("mmio_writes", "peripheral register writes")),
      lane_(system_of(*this).tracer().lane(this->name(), "CPU")) {
  stats_.formula("idle_fraction", "idle_ps / simulated time", [this] {
    const double t = double(now_tick());
    return t > 0 ? double(idle_ps_) / t : 0.0;
  });
  // Everything from the peripherals' window up to DRAM is MMIO (open()).
  if (cfg.mmio_base >= dram_base) throw Error(std::string(this->name()) + ": mmio_base must lie below DRAM");
  if (cfg.l1.timing) {
    // Loads and stores to DRAM are timed by the caches; MMIO has its own path.
    caches_ = std::make_unique<CoreCaches>(
        cfg.l1, [this](bool w, std::uint64_t a, std::uint32_t n, Tick at) { return line_transfer(w, a, n, at); },
        stats_, CoreCaches::Range{dram_base, dram_size});
    line_buf_.assign(cfg.l1.line_bytes, 0);
    static TimingOnly timing_only;
    line_req_.set_extension(&timing_only);
  }
  SC_HAS_PROCESS(ArmCpu);
  SC_THREAD(run);
}

ArmCpu::~ArmCpu() {
  if (uc_) uc_close(uc_);
}

void ArmCpu::open() {
  auto check = [&](uc_err e, const char* what) {
    if (e != UC_ERR_OK) throw Error(std::string(this->name()) + ": Unicorn " + what + ": " + uc_strerror(e));
  };
  check(uc_open(UC_ARCH_ARM64, UC_MODE_ARM, &uc_), "open");
  check(uc_mem_map_ptr(uc_, dram_base_, dram_size_, UC_PROT_ALL, dram_()), "DRAM map");
  // Everything from the peripherals' window up to DRAM is MMIO: what no device serves is an
  // address error, reported with the pc.
  check(uc_mmio_map(uc_, cfg_.mmio_base, dram_base_ - cfg_.mmio_base, on_mmio_read, this, on_mmio_write, this),
        "MMIO map");
  uc_hook h;
  check(uc_hook_add(uc_, &h, UC_HOOK_BLOCK, reinterpret_cast<void*>(on_block), this, 1, 0), "block hook");
  if (caches_)
    check(uc_hook_add(uc_, &h, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE, reinterpret_cast<void*>(on_memory), this,
                      dram_base_, dram_base_ + dram_size_ - 1),
          "memory timing hook");
  check(uc_hook_add(uc_, &h, UC_HOOK_MEM_INVALID, reinterpret_cast<void*>(on_bad_access), this, 1, 0), "memory hook");
  check(uc_hook_add(uc_, &h, UC_HOOK_INTR, reinterpret_cast<void*>(on_exception), this, 1, 0), "exception hook");
  // The generic timer's system registers read and write simulated time, not the host's.
  check(uc_hook_add(uc_, &h, UC_HOOK_INSN, reinterpret_cast<void*>(on_mrs), this, 1, 0, UC_ARM64_INS_MRS), "MRS hook");
  check(uc_hook_add(uc_, &h, UC_HOOK_INSN, reinterpret_cast<void*>(on_msr), this, 1, 0, UC_ARM64_INS_MSR), "MSR hook");
}

void ArmCpu::start(std::uint64_t entry) {
  if (!uc_) open();
  entry_ = entry;
  started_ = true;
  start_ev_.notify(sc_core::SC_ZERO_TIME);
}

std::uint64_t ArmCpu::pc() const {
  std::uint64_t pc = 0;
  uc_reg_read(uc_, UC_ARM64_REG_PC, &pc);
  return pc;
}

Tick ArmCpu::local_time() const {
  // A whole cpi (the usual case) in integers: the same value, at a fraction of the cost (this
  // runs for every block and every DRAM access).
  if (cpi_cycles_) return executed_ * cpi_cycles_ * cfg_.clock.period() + stall_;
  return cfg_.clock.cycles(std::uint64_t(std::llround(double(executed_) * cfg_.cpi))) + stall_;
}

void ArmCpu::limit_deadline() {
  const Tick due = arch_timer_.next_interrupt(), now = now_tick();
  if (due == kTickMax) return;
  // The quantum ends at the first block boundary at or past `due`; at least one block runs.
  deadline_ = std::min(deadline_, std::max(due > now ? due - now : 0, local_time() + 1));
}

Tick ArmCpu::line_transfer(bool write, std::uint64_t addr, std::uint32_t bytes, Tick at) {
  // Timing-only (line_req_ carries the extension): the data is already where the emulator
  // reads it (DRAM by direct pointer; with firmware the L2 keeps tags only), so only time and
  // traffic are asked for.
  prepare(line_req_, write, addr, line_buf_.data(), bytes);
  const Tick now = now_tick();
  sc_core::sc_time d = to_sc(at - now);
  bus->b_transport(line_req_, d);
  if (line_req_.get_response_status() != tlm::TLM_OK_RESPONSE && !pending_fault_) {
    pending_fault_ = std::string("cache ") + (write ? "write-back" : "fill") + " of " + std::to_string(bytes) +
                     " bytes at " + hex(addr) + " failed: " + line_req_.get_response_string();
    uc_emu_stop(uc_);
  }
  return now + to_tick(d);
}

void ArmCpu::trace_state(bool busy) {
  // Merged lanes: one slice per stretch of running or of waiting for an interrupt.
  const Tick now = now_tick();
  if (busy == state_busy_) return;
  if (now > state_since_) lane_.slice(state_busy_ ? "run" : "wfi", state_since_, now);
  state_busy_ = busy;
  state_since_ = now;
}

void ArmCpu::close_trace() {
  if (!started_ || fault_) return;
  const Tick now = now_tick();
  if (now > state_since_) lane_.slice(state_busy_ ? "run" : "wfi", state_since_, now);
  state_since_ = now;
}

void ArmCpu::run() {
  if (!started_) wait(start_ev_);
  std::uint64_t pc = entry_, x0 = index_;
  uc_reg_write(uc_, UC_ARM64_REG_PC, &pc);
  uc_reg_write(uc_, UC_ARM64_REG_X0, &x0);  // the firmware learns its core number from x0
  state_since_ = now_tick();
  state_busy_ = true;
  window_ = to_tick(tlm::tlm_global_quantum::instance().get());
  for (;;) {
    arch_timer_.sync(now_tick());
    // A pending interrupt is taken when PSTATE.I allows; either way it ends a WFI, as on the
    // hardware (a masked interrupt wakes the core without being taken).
    if (irq_.pending_for(index_)) {
      take_interrupt();
      if (fault_) return;
      halted_ = false;
    }
    if (halted_) {
      trace_state(false);
      const Tick w0 = now_tick();
      wait(irq_.changed());
      idle_ps_ += now_tick() - w0;
      continue;
    }
    trace_state(true);
    executed_ = 0;
    stall_ = 0;
    stop_requested_ = false;
    deadline_ = std::max<Tick>(cfg_.quantum, 1);
    limit_deadline();
    pc = this->pc();
    irq_waiting_ = irq_.pending_for(index_);
    const uc_err e = uc_emu_start(uc_, pc, kNever, 0, 0);
    instructions_ += executed_;
    if (pending_fault_ || e != UC_ERR_OK) {
      raise(this->pc(), pending_fault_ ? *pending_fault_ : std::string("Unicorn: ") + uc_strerror(e));
      return;
    }
    if (!stop_requested_) {
      // Emulation ends by itself only at WFI (QEMU halts the core there).
      std::uint32_t insn = 0;
      const std::uint64_t at = this->pc() - 4;
      if (uc_mem_read(uc_, at, &insn, 4) == UC_ERR_OK && insn == kWfi) {
        halted_ = true;
      } else {
        raise(this->pc(), "emulation stopped for no known reason");
        return;
      }
    }
    wait(to_sc(local_time()));
    if (!deferred_.empty()) {  // synced: the deferred accesses now, and the core waits for them
      executed_ = 0;
      stall_ = 0;
      settle();
      if (pending_fault_) {  // a fill that failed is reported now, not a quantum later
        raise(this->pc(), *pending_fault_);
        return;
      }
      wait(to_sc(stall_));
    }
  }
}

bool ArmCpu::take_interrupt() {
  std::uint64_t pstate = 0, pc = 0, vbar = 0;
  uc_reg_read(uc_, UC_ARM64_REG_PSTATE, &pstate);
  pstate &= 0xffffffff;             // Unicorn 2.0.1 returns garbage above bit 31
  if (pstate & 0x80) return false;  // PSTATE.I: IRQs masked
  uc_reg_read(uc_, UC_ARM64_REG_PC, &pc);
  if ((pstate & 0xf) != 0x5) {
    raise(pc, "an interrupt arrived outside EL1h (PSTATE " + hex(pstate) + "); the firmware must run at EL1 on SP_EL1");
    return false;
  }
  uc_reg_read(uc_, UC_ARM64_REG_VBAR_EL1, &vbar);
  uc_reg_write(uc_, UC_ARM64_REG_ELR_EL1, &pc);
  uc_arm64_cp_reg spsr{4, 0, 3, 0, 0, pstate};  // SPSR_EL1: op0 3, op1 0, CRn 4, CRm 0, op2 0
  uc_reg_write(uc_, UC_ARM64_REG_CP_REG, &spsr);
  std::uint64_t entry_state = (pstate & ~std::uint64_t(0xf)) | 0x3c5;  // EL1h, D A I F masked
  uc_reg_write(uc_, UC_ARM64_REG_PSTATE, &entry_state);
  const std::uint64_t vector = vbar + 0x280;  // current EL with SP_ELx, IRQ
  uc_reg_write(uc_, UC_ARM64_REG_PC, &vector);
  ++irqs_;
  lane_.instant("irq", now_tick());
  return true;
}

void ArmCpu::raise(std::uint64_t pc, const std::string& reason) {
  if (fault_) return;
  fault_ = CpuFault{basename(), pc, reason};
  trace_state(false);
  if (on_fault_) on_fault_(*fault_);
}

// Accesses deferred earlier in this block (the core was too far ahead to send them into the
// ring) are not made here either: they are made after the sync that ends the quantum, in their
// order. A device (or the timer, below) sees this access at the local time without their
// stall, an error bounded by one block's misses; sending them now would put requests into the
// ring, L2 and DRAM further ahead than the quantum allows.
std::uint64_t ArmCpu::mmio_access(bool write, std::uint64_t addr, unsigned size, std::uint64_t value) {
  tlm::tlm_generic_payload p;
  std::uint8_t data[8] = {};
  std::memcpy(data, &value, std::min(size, 8u));
  prepare(p, write, addr, data, size);
  const Tick before = local_time();
  sc_core::sc_time d = to_sc(before);
  mmio->b_transport(p, d);
  stall_ += to_tick(d) - before;
  ++(write ? mmio_writes_ : mmio_reads_);
  if (p.get_response_status() != tlm::TLM_OK_RESPONSE && !pending_fault_) {
    const std::string what = namer_ ? namer_(addr) : "";
    std::string why = p.get_response_status() == tlm::TLM_ADDRESS_ERROR_RESPONSE ? "no device or register there"
                      : p.get_response_status() == tlm::TLM_BURST_ERROR_RESPONSE
                          ? "registers are 32 bits, accessed whole"
                          : "the register refused the write (read-only, or the device is busy)";
    // Unicorn 2.0.1 does not update the pc inside a translated block, so the pc reported is
    // that of the block holding the access; the address and register are exact.
    pending_fault_ = std::string(write ? "write" : "read") + " of " + std::to_string(size) + " bytes at " + hex(addr) +
                     (what.empty() ? "" : " (" + what + ")") + " failed: " + why +
                     " (the access is in the code block starting at this pc)";
    uc_emu_stop(uc_);
  }
  irq_waiting_ = irq_.pending_for(index_);  // an acknowledge, an end of interrupt, a line the access moved
  std::uint64_t v = 0;
  std::memcpy(&v, data, std::min(size, 8u));
  return v;
}

bool ArmCpu::irq_unmasked() const {
  std::uint64_t pstate = 0;
  uc_reg_read(uc_, UC_ARM64_REG_PSTATE, &pstate);
  return (pstate & 0x80) == 0;
}

void ArmCpu::on_block(uc_engine* uc, std::uint64_t addr, std::uint32_t size, void* self) {
  auto* c = static_cast<ArmCpu*>(self);
  // A stop requested here ends emulation before this block runs; it runs (and is counted)
  // in the next quantum. Counting it now as well made counts depend on the quantum.
  if (c->stop_requested_) return;
  // A masked interrupt waits for the block after the unmask (msr daifclr ends its block).
  if (c->local_time() >= c->deadline_ || !c->deferred_.empty() || (c->irq_waiting_ && c->irq_unmasked())) {
    c->stop_requested_ = true;
    uc_emu_stop(uc);
    return;
  }
  if (c->caches_) {  // the block's instructions are fetched before they run
    const Tick at = now_tick() + c->local_time();
    const Tick done = c->caches_->fetch(addr, size, at, !c->ahead());
    if (done == CoreCaches::kNeedsMemory) {  // the fill must wait for the core to sync: run the block then
      c->stop_requested_ = true;
      uc_emu_stop(uc);
      return;
    }
    c->stall_ += done - at;
  }
  c->executed_ += size / 4;
}

void ArmCpu::on_memory(uc_engine*, uc_mem_type type, std::uint64_t addr, int size, std::int64_t, void* self) {
  // Within a block the local time is the block's end (its instructions are counted at entry).
  auto* c = static_cast<ArmCpu*>(self);
  const bool write = type == UC_MEM_WRITE;
  if (!c->deferred_.empty()) return c->deferred_.push_back({write, addr, unsigned(size)});  // keep their order
  const Tick at = now_tick() + c->local_time();
  const Tick done = c->caches_->data(write, addr, unsigned(size), at, !c->ahead());
  // Too far ahead to send the traffic: the access is done (its data moved), its time is taken
  // once the core has synced. The rest of the block runs; the quantum ends before the next one
  // (stopping here would stop inside the block, where Unicorn 2.0.1 keeps no exact pc).
  if (done == CoreCaches::kNeedsMemory) return c->deferred_.push_back({write, addr, unsigned(size)});
  c->stall_ += done - at;
}

void ArmCpu::settle() {
  for (const Deferred& d : deferred_) {
    const Tick at = now_tick() + local_time();
    stall_ += caches_->data(d.write, d.addr, d.size, at) - at;
  }
  deferred_.clear();
}

std::uint32_t ArmCpu::on_mrs(uc_engine* uc, uc_arm64_reg reg, const uc_arm64_cp_reg* cp, void* self) {
  auto* c = static_cast<ArmCpu*>(self);
  const auto v = c->arch_timer_.read({cp->op0, cp->op1, cp->crn, cp->crm, cp->op2}, now_tick() + c->local_time());
  if (!v) return 0;  // not a generic-timer register: the emulator reads it
  std::uint64_t value = *v;
  uc_reg_write(uc, reg, &value);
  return 1;
}

std::uint32_t ArmCpu::on_msr(uc_engine*, uc_arm64_reg, const uc_arm64_cp_reg* cp, void* self) {
  auto* c = static_cast<ArmCpu*>(self);
  if (!c->arch_timer_.write({cp->op0, cp->op1, cp->crn, cp->crm, cp->op2}, cp->val, now_tick() + c->local_time()))
    return 0;
  c->limit_deadline();
  return 1;
}

std::uint64_t ArmCpu::on_mmio_read(uc_engine*, std::uint64_t off, unsigned size, void* self) {
  auto* c = static_cast<ArmCpu*>(self);
  return c->mmio_access(false, c->cfg_.mmio_base + off, size, 0);
}

void ArmCpu::on_mmio_write(uc_engine*, std::uint64_t off, unsigned size, std::uint64_t v, void* self) {
  auto* c = static_cast<ArmCpu*>(self);
  c->mmio_access(true, c->cfg_.mmio_base + off, size, v);
}

bool ArmCpu::on_bad_access(uc_engine*, uc_mem_type type, std::uint64_t addr, int size, std::int64_t, void* self) {
  auto* c = static_cast<ArmCpu*>(self);
  const char* what = type == UC_MEM_FETCH_UNMAPPED || type == UC_MEM_FETCH_PROT   ? "instruction fetch"
                     : type == UC_MEM_WRITE_UNMAPPED || type == UC_MEM_WRITE_PROT ? "write"
                                                                                  : "read";
  if (!c->pending_fault_)
    c->pending_fault_ = std::string(what) + " of " + std::to_string(size) + " bytes at " + hex(addr) +
                        ": no memory or device mapped there";
  return false;
}

void ArmCpu::on_exception(uc_engine* uc, std::uint32_t intno, void* self) {
  auto* c = static_cast<ArmCpu*>(self);
  // QEMU's exception numbers: 1 undefined instruction, 2 SVC, 3 prefetch abort, 4 data
  // abort, 7 breakpoint. The firmware model has no synchronous exception handling.
  const char* what = intno == 1   ? "undefined instruction"
                     : intno == 2 ? "SVC (no system calls)"
                     : intno == 3 ? "prefetch abort"
                     : intno == 4 ? "data abort"
                     : intno == 7 ? "breakpoint"
                                  : nullptr;
  if (!c->pending_fault_) c->pending_fault_ = what ? std::string(what) : "exception " + std::to_string(intno);
  uc_emu_stop(uc);
}

}  // namespace dvp::cpu
