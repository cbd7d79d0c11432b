// SPDX-License-Identifier: MIT
// The Arm generic timer of one core, as firmware sees it through system registers: CNTFRQ_EL0,
// the counts CNTPCT_EL0 and CNTVCT_EL0 (CNTVOFF is 0), and the EL1 physical (CNTP_*) and virtual
// (CNTV_*) timers with their CTL / CVAL / TVAL registers. The count is the system counter
// (platform.cpu.timer_mhz, the same one the memory-mapped system timer shows) in simulated time,
// so firmware that times itself measures simulated time, the same on every run. A timer whose
// condition holds (ENABLE, count >= CVAL) and is not masked (IMASK) drives the core's private
// interrupt line (IrqController::kPhysTimerLine / kVirtTimerLine) high.
#pragma once
#include <array>
#include <cstdint>
#include <optional>

#include <systemc>

#include "common/time.hpp"
#include "irq/irq_controller.hpp"

namespace dvp::cpu {

// A system register as MRS / MSR name it (op0, op1, CRn, CRm, op2).
struct SysReg {
  std::uint32_t op0, op1, crn, crm, op2;
};

class ArchTimer {
 public:
  // `counter`: the system counter's clock.
  ArchTimer(const Clock& counter, unsigned cpu, irq::IrqController& irq);

  // At time `t` (the core's local time), a read of `r`: its value, or nothing when `r` is not
  // a generic-timer register (the emulator handles it).
  std::optional<std::uint64_t> read(const SysReg& r, Tick t) const;
  // A write of `v` to `r` at time `t`; false when `r` is not a generic-timer register.
  bool write(const SysReg& r, std::uint64_t v, Tick t);

  std::uint64_t count_at(Tick t) const { return t / counter_.period(); }
  // The earliest time an enabled, unmasked timer's condition will start to hold (kTickMax:
  // none). The core ends its quantum there, so the interrupt is taken at the same instruction
  // whatever the quantum.
  Tick next_interrupt() const;
  // Drives the lines for time t (the core calls it before it looks at its interrupts, so the
  // order of processes at one instant does not matter).
  void sync(Tick t);

 private:
  enum : unsigned { kPhys = 0, kVirt = 1 };
  enum Field { kCtl, kCval, kTval };
  struct Timer {
    std::uint64_t ctl = 0, cval = 0;  // CTL bits: 0 ENABLE, 1 IMASK (ISTATUS is computed)
    sc_core::sc_event due;
  };
  static std::optional<std::pair<unsigned, Field>> decode(const SysReg& r);
  bool condition(unsigned k, Tick t) const;  // ISTATUS at time t
  void update(unsigned k, Tick t);           // drive the line for time t; schedule the next change

  Clock counter_;
  unsigned cpu_;
  irq::IrqController& irq_;
  std::array<Timer, 2> timers_;
};

}  // namespace dvp::cpu
