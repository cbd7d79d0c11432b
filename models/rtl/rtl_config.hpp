// SPDX-License-Identifier: MIT
// One RTL block of platform.rtl, read and checked once: the plug-in, its clock, reset and
// interrupt ports, and the AXI interfaces it has (a target the platform reaches, an initiator
// that reaches the platform).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "axi.hpp"
#include "common/config.hpp"
#include "common/time.hpp"

namespace dvp::rtl {

struct RtlConfig {
  std::string name, plugin;  // plugin: resolved path
  Clock clock;
  std::string clock_port = "auto", reset_port = "auto", busy_port = "auto", irq_port = "irq";
  std::optional<bool> reset_active_low;  // unset: from the port's name
  std::uint32_t reset_cycles = 4;
  bool always_on = false;
  std::uint32_t idle_cycles = 16;
  std::uint64_t timeout_cycles = 1000000;
  std::uint32_t outstanding = 8;
  std::uint32_t stop = 0;
  std::string waves;  // FST path, or ""
  bool has_target = false, has_initiator = false;
  std::uint64_t target_base = 0, target_size = 0;
  AxiBinding target, initiator;
  std::optional<std::uint32_t> irq;

  static void describe(cfg::Spec& s);
  // `dir`: the scenario's directory (a plug-in path is relative to it); `builtin`: the folder of
  // the plug-ins the project builds (a plug-in named without a '/' is <builtin>/<name>.so).
  static RtlConfig from(const cfg::Node& n, const std::string& dir, const std::string& builtin);
  static std::string plugin_path(const std::string& p, const std::string& dir, const std::string& builtin);
};

}  // namespace dvp::rtl
