// SPDX-License-Identifier: MIT
// Test helpers: presets and scenarios from text, run in-process.
#pragma once
#include <string>
#include <vector>

#include "common/system.hpp"
#include "scenario.hpp"

namespace dvp::test {

// Writes `yaml` to a fresh file under the build tree and returns its path.
std::string write_temp(const std::string& name, const std::string& yaml);
// Loads a scenario given as text (with --set overrides).
platform::Scenario scenario(const std::string& yaml, const std::vector<std::string>& sets = {});
// The resolved platform section of a preset, with overrides.
cfg::Node preset_platform(const std::string& preset, const std::vector<std::string>& sets = {});

// The system models built at a test's top level (outside a Soc) belong to (test_main.cpp).
System& bench_system();

}  // namespace dvp::test
