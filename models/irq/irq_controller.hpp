// SPDX-License-Identifier: MIT
// Interrupt controller: up to 32 level-sensitive shared lines from the peripherals (plus
// software-set pending bits), each enabled or not and routed to one CPU, and per CPU its private
// lines (32: the generic timer's EL1 physical timer, 33: its virtual timer; as a GIC's PPIs,
// always routed to their own CPU, masked at their source). A CPU acknowledges the lowest
// deliverable line (it becomes active and is not delivered again until end-of-interrupt).
// Register map: docs/peripherals.md.
#pragma once
#include <array>
#include <memory>
#include <vector>

#include "mmio/mmio.hpp"

namespace dvp::irq {

class IrqController : public mmio::Device {
 public:
  static constexpr unsigned kLines = 32;
  static constexpr unsigned kPrivateLines = 2;            // per CPU, numbered kLines + k
  static constexpr unsigned kPhysTimerLine = kLines;      // CNTP: EL1 physical timer
  static constexpr unsigned kVirtTimerLine = kLines + 1;  // CNTV: virtual timer
  static constexpr std::uint32_t kNone = 0xffffffff;      // ACK when nothing is deliverable

  IrqController(sc_core::sc_module_name name, unsigned cpus, double access_ns);
  std::string device_kind() const override { return "irq"; }

  // A peripheral drives line `line` high or low.
  void set_line(unsigned line, bool level);
  // CPU `cpu`'s private line `line` (kLines .. kLines + kPrivateLines - 1) driven high or low.
  void set_private_line(unsigned cpu, unsigned line, bool level);
  // Whether CPU `cpu` has a deliverable line (enabled, pending, not active, routed to it).
  bool pending_for(unsigned cpu) const;
  // Notified whenever what is deliverable may have changed.
  sc_core::sc_event& changed() { return changed_ev_; }

 private:
  std::uint32_t deliverable(unsigned cpu) const;
  std::uint32_t acknowledge(unsigned cpu);
  void end_of_interrupt(unsigned cpu, std::uint32_t line);
  void update() { changed_ev_.notify(sc_core::SC_ZERO_TIME); }

  std::uint32_t level_ = 0, soft_ = 0, active_ = 0;
  std::vector<std::uint32_t> private_level_, private_active_;  // per CPU, bit k: line kLines + k
  sc_core::sc_event changed_ev_;
  mmio::Register enable_, pending_, clear_;
  std::vector<std::unique_ptr<mmio::Register>> route_, ack_, eoi_;
};

}  // namespace dvp::irq
