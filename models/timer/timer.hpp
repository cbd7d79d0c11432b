// SPDX-License-Identifier: MIT
// System timer: a 64-bit counter at a fixed frequency from time zero, and one compare channel
// per CPU. An enabled channel whose compare value the counter has reached sets its status bit
// and drives its interrupt line high until software clears the bit. Register map:
// docs/peripherals.md.
#pragma once
#include <memory>
#include <vector>

#include "common/time.hpp"
#include "irq/irq_controller.hpp"
#include "mmio/mmio.hpp"

namespace dvp::timer {

class Timer : public mmio::Device {
 public:
  // Channel c drives interrupt line first_line + c.
  Timer(sc_core::sc_module_name name, const Clock& counter, unsigned channels, irq::IrqController& irq,
        unsigned first_line, double access_ns);
  std::string device_kind() const override { return "timer"; }
  std::uint64_t count_at(const sc_core::sc_time& t) const;  // counter value at time t

 private:
  struct Channel {
    std::unique_ptr<mmio::Register> cmp_lo, cmp_hi, ctrl, status;
    sc_core::sc_event fire;
  };
  void program(unsigned c);  // (re)schedule channel c after a write
  void check(unsigned c);    // at its compare time: fire if still due

  sc_core::sc_time period_;
  irq::IrqController& irq_;
  unsigned first_line_;
  mmio::Register count_lo_, count_hi_;
  std::vector<std::unique_ptr<Channel>> ch_;
};

}  // namespace dvp::timer
