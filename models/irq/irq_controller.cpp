// SPDX-License-Identifier: MIT
#include "irq_controller.hpp"

#include "common/error.hpp"

namespace dvp::irq {

IrqController::IrqController(sc_core::sc_module_name name, unsigned cpus, double access_ns)
    : Device(name, 0x100 + 0x10 * cpus, access_ns),
      private_level_(cpus, 0),
      private_active_(cpus, 0),
      enable_(*this, "ENABLE", 0x0, 0, "bit n: line n may be delivered"),
      pending_(*this, "PENDING", 0x4, 0, "read: lines pending (driven high or set); write: bits set software pending"),
      clear_(*this, "CLEAR", 0x8, 0, "write: bits clear software pending") {
  if (cpus == 0 || cpus > 16) throw Error(std::string(name) + ": 1..16 CPUs");
  enable_.on_write([this](std::uint32_t v) {
    enable_.value = v;
    update();
  });
  pending_.on_read([this] { return level_ | soft_; }).on_write([this](std::uint32_t v) {
    soft_ |= v;
    update();
  });
  clear_.on_read([] { return 0u; }).on_write([this](std::uint32_t v) {
    soft_ &= ~v;
    update();
  });
  for (unsigned l = 0; l < kLines; ++l) {
    route_.push_back(std::make_unique<mmio::Register>(*this, "ROUTE" + std::to_string(l), 0x20 + 4 * l, 0,
                                                      "the CPU that line " + std::to_string(l) + " goes to"));
    mmio::Register& r = *route_.back();
    r.on_write([this, &r](std::uint32_t v) {
      r.value = v;
      update();
    });
  }
  for (unsigned c = 0; c < cpus; ++c) {
    const std::string n = std::to_string(c);
    ack_.push_back(std::make_unique<mmio::Register>(*this, "ACK" + n, 0x100 + 0x10 * c, 0,
                                                    "CPU " + n +
                                                        " reads the lowest deliverable line and makes it "
                                                        "active: 0-31 shared, 32 / 33 its generic timer's "
                                                        "physical / virtual timer (0xffffffff: none)"));
    eoi_.push_back(std::make_unique<mmio::Register>(*this, "EOI" + n, 0x104 + 0x10 * c, 0,
                                                    "CPU " + n + " writes a line it acknowledged: end of interrupt"));
    ack_.back()->on_read([this, c] { return acknowledge(c); }).read_only();
    eoi_.back()->on_read([] { return 0u; }).on_write([this, c](std::uint32_t line) { end_of_interrupt(c, line); });
  }
}

void IrqController::set_line(unsigned line, bool level) {
  const std::uint32_t bit = 1u << line;
  const std::uint32_t before = level_;
  level_ = level ? level_ | bit : level_ & ~bit;
  if (level_ != before) update();
}

void IrqController::set_private_line(unsigned cpu, unsigned line, bool level) {
  std::uint32_t& l = private_level_.at(cpu);
  const std::uint32_t bit = 1u << (line - kLines), before = l;
  l = level ? l | bit : l & ~bit;
  if (l != before) update();
}

std::uint32_t IrqController::acknowledge(unsigned cpu) {
  const std::uint32_t d = deliverable(cpu);
  if (d) {
    const unsigned line = unsigned(__builtin_ctz(d));
    active_ |= 1u << line;
    soft_ &= ~(1u << line);  // a software-set line is consumed by its acknowledge
    update();
    return line;
  }
  const std::uint32_t p = private_level_[cpu] & ~private_active_[cpu];
  if (!p) return kNone;
  const unsigned k = unsigned(__builtin_ctz(p));
  private_active_[cpu] |= 1u << k;
  update();
  return kLines + k;
}

void IrqController::end_of_interrupt(unsigned cpu, std::uint32_t line) {
  if (line < kLines)
    active_ &= ~(1u << line);
  else if (line < kLines + kPrivateLines)
    private_active_[cpu] &= ~(1u << (line - kLines));
  update();
}

std::uint32_t IrqController::deliverable(unsigned cpu) const {
  std::uint32_t d = (level_ | soft_) & enable_.value & ~active_;
  for (unsigned l = 0; l < kLines; ++l)
    if (route_[l]->value != cpu) d &= ~(1u << l);
  return d;
}

bool IrqController::pending_for(unsigned cpu) const {
  return deliverable(cpu) != 0 || (private_level_[cpu] & ~private_active_[cpu]) != 0;
}

}  // namespace dvp::irq
