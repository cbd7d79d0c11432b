// SPDX-License-Identifier: MIT
#include "timer.hpp"

#include <sysc/kernel/sc_dynamic_processes.h>

#include "common/error.hpp"

namespace dvp::timer {

Timer::Timer(sc_core::sc_module_name name, const Clock& counter, unsigned channels, irq::IrqController& irq,
             unsigned first_line, double access_ns)
    : Device(name, 0x10 + 0x10 * channels, access_ns),
      period_(to_sc(counter.period())),
      irq_(irq),
      first_line_(first_line),
      count_lo_(*this, "COUNT_LO", 0x0, 0, "counter, low 32 bits (the counter runs from time 0)"),
      count_hi_(*this, "COUNT_HI", 0x4, 0, "counter, high 32 bits") {
  if (first_line + channels > irq::IrqController::kLines)
    throw Error(std::string(name) + ": interrupt lines " + std::to_string(first_line) + ".." +
                std::to_string(first_line + channels - 1) + " exceed the controller's 32");
  count_lo_.on_read([this] { return std::uint32_t(count_at(now())); }).read_only();
  count_hi_.on_read([this] { return std::uint32_t(count_at(now()) >> 32); }).read_only();
  for (unsigned c = 0; c < channels; ++c) {
    auto ch = std::make_unique<Channel>();
    const std::string n = std::to_string(c), base = "channel " + n + ": ";
    const std::uint32_t off = 0x10 + 0x10 * c;
    ch->cmp_lo =
        std::make_unique<mmio::Register>(*this, "CMP" + n + "_LO", off, 0, base + "compare value, low 32 bits");
    ch->cmp_hi =
        std::make_unique<mmio::Register>(*this, "CMP" + n + "_HI", off + 4, 0, base + "compare value, high 32 bits");
    ch->ctrl = std::make_unique<mmio::Register>(*this, "CTRL" + n, off + 8, 0, base + "bit 0: enable");
    ch->status = std::make_unique<mmio::Register>(*this, "STATUS" + n, off + 12, 0,
                                                  base + "bit 0: fired (interrupt line high); write 1 to clear");
    for (mmio::Register* r : {ch->cmp_lo.get(), ch->cmp_hi.get(), ch->ctrl.get()})
      r->on_write([this, r, c](std::uint32_t v) {
        r->value = v;
        program(c);
      });
    ch->status.get()->on_write([this, c](std::uint32_t v) {
      if (v & 1) {
        ch_[c]->status->value = 0;
        irq_.set_line(first_line_ + c, false);
        program(c);  // a compare value still reached fires again
      }
    });
    sc_core::sc_spawn_options opt;
    opt.spawn_method();
    opt.dont_initialize();
    opt.set_sensitivity(&ch->fire);
    ch_.push_back(std::move(ch));
    sc_core::sc_spawn([this, c] { check(c); }, ("fire" + n).c_str(), &opt);
  }
}

std::uint64_t Timer::count_at(const sc_core::sc_time& t) const { return t.value() / period_.value(); }

void Timer::program(unsigned c) {
  Channel& ch = *ch_[c];
  ch.fire.cancel();
  if (!(ch.ctrl->value & 1) || (ch.status->value & 1)) return;
  const std::uint64_t cmp = std::uint64_t(ch.cmp_hi->value) << 32 | ch.cmp_lo->value;
  // The first instant at which the counter reads cmp, seen from the access's time.
  const sc_core::sc_time at = sc_core::sc_time::from_value(cmp * period_.value());
  const sc_core::sc_time& base = sc_core::sc_time_stamp();
  ch.fire.notify(at > now() ? at - base : now() - base);
}

void Timer::check(unsigned c) {
  Channel& ch = *ch_[c];
  const std::uint64_t cmp = std::uint64_t(ch.cmp_hi->value) << 32 | ch.cmp_lo->value;
  if ((ch.ctrl->value & 1) && !(ch.status->value & 1) && count_at(sc_core::sc_time_stamp()) >= cmp) {
    ch.status->value = 1;
    irq_.set_line(first_line_ + c, true);
  }
}

}  // namespace dvp::timer
