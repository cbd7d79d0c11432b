// SPDX-License-Identifier: MIT
#include "simctrl.hpp"

#include <sysc/kernel/sc_dynamic_processes.h>

#include "common/system.hpp"

namespace dvp::simctrl {

SimCtrl::SimCtrl(sc_core::sc_module_name name, double access_ns)
    : Device(name, 0x10, access_ns),
      lane_(system_of(*this).tracer().lane("firmware", "markers")),
      exit_reg_(*this, "EXIT", 0x0, 0, "write: end the run with this exit code (0: success)"),
      marker_(*this, "MARKER", 0x4, 0, "write: a marker named after the value, in the trace and the run log"),
      time_lo_(*this, "TIME_LO", 0x8, 0, "simulated time in ns, low 32 bits"),
      time_hi_(*this, "TIME_HI", 0xc, 0, "simulated time in ns, high 32 bits") {
  exit_reg_.on_write([this](std::uint32_t v) {
    if (exit_) return;
    exit_ = v;
    // The run ends at the write's time (the core's local time): ending it at the core's
    // quantum start made the run's length depend on the quantum.
    stop_.notify(now() - sc_core::sc_time_stamp());
  });
  sc_core::sc_spawn_options opt;
  opt.spawn_method();
  opt.dont_initialize();
  opt.set_sensitivity(&stop_);
  sc_core::sc_spawn([] { sc_core::sc_stop(); }, "stop", &opt);
  marker_.on_write([this](std::uint32_t v) {
    marker_names_.push_back("marker " + std::to_string(v));
    lane_.instant(marker_names_.back().c_str(), to_tick(now()));
    if (log_) log_("[marker] " + std::to_string(v) + " at " + std::to_string(now().value() / 1000) + " ns");
  });
  time_lo_.on_read([this] { return std::uint32_t(now().value() / 1000); }).read_only();
  time_hi_.on_read([this] { return std::uint32_t((now().value() / 1000) >> 32); }).read_only();
}

}  // namespace dvp::simctrl
