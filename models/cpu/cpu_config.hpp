// SPDX-License-Identifier: MIT
// Parameters of the Arm CPU clusters (platform.cpu), read once and validated.
#pragma once
#include <cstdint>

#include "common/config.hpp"
#include "common/time.hpp"
#include "core_caches.hpp"

namespace dvp::cpu {

struct CpuConfig {
  unsigned control_cores = 1, aicpu_cores = 0;
  Clock clock;
  double cpi = 1.0;             // cycles per instruction
  Tick quantum = 0;             // how far a CPU runs ahead of SystemC time
  double mmio_access_ns = 0;    // one peripheral register access
  double timer_mhz = 0;         // system counter frequency (system timer and generic timer)
  Clock counter;                // the system counter's clock (from timer_mhz)
  std::uint64_t mmio_base = 0;  // the peripherals' window
  std::uint32_t stop = 0;       // the ring stop the cluster's memory traffic enters at
  L1Config l1;                  // each core's private L1 caches
  unsigned cores() const { return control_cores + aicpu_cores; }

  static void describe(cfg::Spec& s);
  static CpuConfig from(const cfg::Node& n);
};

}  // namespace dvp::cpu
