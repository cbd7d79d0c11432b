// SPDX-License-Identifier: MIT
// One AArch64 core run by Unicorn, as a TLM initiator. DRAM is mapped into the emulator by
// direct pointer (DMI: values move with no host call); its time is the L1 caches' (CoreCaches):
// loads, stores and instruction fetches are timed against the caches' tags, and misses and
// write-backs are timing-only transactions through the `bus` socket into the ring, L2 and
// DRAM, so CPU traffic costs time and contends with the rest of the SoC. The memory system
// keeps DRAM bank state in the order requests arrive, so a core sends traffic only while it is
// at most the global quantum (platform.sim.quantum_ns) ahead of SystemC time: an access that
// needs traffic further ahead is deferred, the core stops at the end of its basic block,
// catches up, and makes the access then, at the same simulated time. The MMIO window goes
// through `mmio`'s b_transport with the core's local time as the annotated delay. The core
// runs in quanta of simulated time (instructions counted with a block hook, each costing cpi
// cycles, plus the time it waited for memory), syncs, and at each quantum boundary takes a
// pending interrupt by exception entry (ELR_EL1, SPSR_EL1, PSTATE to EL1h with DAIF masked,
// pc = VBAR_EL1 + 0x280). WFI idles the core until the interrupt controller has something for
// it: idle time costs no host time. The emulator is made when the core is started: a core no
// firmware starts costs no Unicorn instance (its translator's set-up took 4 - 8 ms of host
// time per core, on every run of a platform with 16 cores).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <unicorn/unicorn.h>
#include <systemc>
#include <tlm>

#include "arch_timer.hpp"
#include "common/stats.hpp"
#include "common/trace.hpp"
#include "core_caches.hpp"
#include "cpu_config.hpp"
#include "irq/irq_controller.hpp"

namespace dvp::cpu {

struct CpuFault {
  std::string cpu;
  std::uint64_t pc = 0;
  std::string reason;
  std::string str() const;
};

class ArmCpu : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<ArmCpu> mmio;
  tlm_utils::simple_initiator_socket<ArmCpu> bus;  // cache fills and write-backs, to the ring

  // `index`: the core's number (its interrupt controller interface; x0 at entry);
  // `dram` gives the host memory of `dram_size` bytes that appears at `dram_base`, asked for when
  // the core starts (a pointer written through counts every page as written: dram/storage.hpp).
  ArmCpu(sc_core::sc_module_name name, const CpuConfig& cfg, unsigned index, std::function<std::uint8_t*()> dram,
         std::uint64_t dram_base, std::uint64_t dram_size, irq::IrqController& irq);
  ~ArmCpu() override;

  // Starts executing at `entry` (EL1h, MMU off, interrupts masked, x0 = the core's index)
  // when the simulation runs. Makes the emulator (before the simulation runs: it throws Error
  // if Unicorn refuses).
  void start(std::uint64_t entry);
  bool emulating() const { return uc_ != nullptr; }  // started: the emulator is made
  void set_fault_handler(std::function<void(const CpuFault&)> h) { on_fault_ = std::move(h); }
  // Names an MMIO address for fault reports ("timer.CMP0_LO").
  void set_mmio_namer(std::function<std::string(std::uint64_t)> f) { namer_ = std::move(f); }

  std::uint64_t instructions() const { return instructions_; }
  Tick idle() const { return idle_ps_; }
  Tick memory_stall() const { return caches_ ? caches_->stall() : 0; }  // waiting for L1 fills
  bool waiting_for_interrupt() const { return halted_; }
  std::uint64_t pc() const;
  const std::optional<CpuFault>& fault() const { return fault_; }
  // Ends the trace lane's open slice at the current time (at the end of the run).
  void close_trace();

 private:
  void run();
  bool take_interrupt();
  void raise(std::uint64_t pc, const std::string& reason);
  std::uint64_t mmio_access(bool write, std::uint64_t addr, unsigned size, std::uint64_t value);
  Tick local_time() const;  // time spent in the current quantum so far
  void limit_deadline();    // end the quantum where the generic timer will interrupt
  // One cache line's transfer through `bus` at `at`; returns when it completes.
  Tick line_transfer(bool write, std::uint64_t addr, std::uint32_t bytes, Tick at);
  void trace_state(bool busy);

  static void on_block(uc_engine* uc, std::uint64_t addr, std::uint32_t size, void* self);
  bool irq_unmasked() const;                             // PSTATE.I clear
  bool ahead() const { return local_time() > window_; }  // too far ahead to send traffic
  void settle();                                         // makes the deferred accesses, once the core has synced
  static void on_memory(uc_engine* uc, uc_mem_type type, std::uint64_t addr, int size, std::int64_t v, void* self);
  static std::uint64_t on_mmio_read(uc_engine* uc, std::uint64_t off, unsigned size, void* self);
  static void on_mmio_write(uc_engine* uc, std::uint64_t off, unsigned size, std::uint64_t v, void* self);
  static bool on_bad_access(uc_engine* uc, uc_mem_type type, std::uint64_t addr, int size, std::int64_t v, void* self);
  static void on_exception(uc_engine* uc, std::uint32_t intno, void* self);
  static std::uint32_t on_mrs(uc_engine* uc, uc_arm64_reg reg, const uc_arm64_cp_reg* cp, void* self);
  static std::uint32_t on_msr(uc_engine* uc, uc_arm64_reg reg, const uc_arm64_cp_reg* cp, void* self);

  CpuConfig cfg_;
  std::uint64_t cpi_cycles_;  // cpi when it is a whole number of cycles, else 0
  unsigned index_;
  irq::IrqController& irq_;
  ArchTimer arch_timer_;
  void open();               // makes uc_: DRAM and MMIO mapped, the hooks added
  uc_engine* uc_ = nullptr;  // null until the core is started
  std::function<std::uint8_t*()> dram_;
  std::uint64_t dram_base_, dram_size_;
  std::uint64_t entry_ = 0;
  bool started_ = false, halted_ = false;
  sc_core::sc_event start_ev_;

  // The current quantum: instructions executed and time waited (memory, MMIO) so far; it ends
  // at the first block boundary at or past `deadline_` (local time).
  std::uint64_t executed_ = 0;
  Tick stall_ = 0, deadline_ = 0;
  bool stop_requested_ = false;
  // An interrupt is pending for this core (PSTATE.I masks it): the quantum ends at the first block
  // that runs with it unmasked, so it is taken there, as the hardware takes it once unmasked.
  bool irq_waiting_ = false;
  std::optional<std::string> pending_fault_;  // set in a callback, reported after the quantum

  std::optional<CpuFault> fault_;
  std::function<void(const CpuFault&)> on_fault_;
  std::function<std::string(std::uint64_t)> namer_;

  stats::Group stats_;
  std::unique_ptr<CoreCaches> caches_;  // null without memory timing (platform.cpu.l1.timing)
  tlm::tlm_generic_payload line_req_;
  std::vector<std::uint8_t> line_buf_;  // never written: the fills are timing-only
  struct Deferred {
    bool write;
    std::uint64_t addr;
    unsigned size;
  };
  std::vector<Deferred> deferred_;  // accesses of this block waiting for the core to sync
  Tick window_ = 0;                 // how far ahead traffic may be sent (the global quantum)
  std::uint64_t& instructions_;
  std::uint64_t& idle_ps_;
  std::uint64_t& irqs_;
  std::uint64_t& mmio_reads_;
  std::uint64_t& mmio_writes_;
  Tracer::Lane lane_;
  Tick state_since_ = 0;
  bool state_busy_ = false;
};

}  // namespace dvp::cpu
