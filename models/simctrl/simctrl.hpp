// SPDX-License-Identifier: MIT
// Simulation control for firmware: EXIT ends the run with an exit code, MARKER puts a named
// instant into the trace (and the run log), TIME reads simulated nanoseconds. Register map:
// docs/peripherals.md.
#pragma once
#include <deque>
#include <functional>
#include <optional>

#include "common/trace.hpp"
#include "mmio/mmio.hpp"

namespace dvp::simctrl {

class SimCtrl : public mmio::Device {
 public:
  SimCtrl(sc_core::sc_module_name name, double access_ns);
  std::string device_kind() const override { return "simctrl"; }
  const std::optional<std::uint32_t>& exit_code() const { return exit_; }
  void set_log(std::function<void(const std::string&)> log) { log_ = std::move(log); }

 private:
  std::optional<std::uint32_t> exit_;
  sc_core::sc_event stop_;  // at the EXIT write's own time, not the writer's quantum start
  std::function<void(const std::string&)> log_;
  Tracer::Lane lane_;
  std::deque<std::string> marker_names_;  // the trace keeps their pointers: they live as long as the run
  mmio::Register exit_reg_, marker_, time_lo_, time_hi_;
};

}  // namespace dvp::simctrl
