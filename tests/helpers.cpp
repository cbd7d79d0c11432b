// SPDX-License-Identifier: MIT
#include "helpers.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace dvp::test {

std::string write_temp(const std::string& name, const std::string& yaml) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("dvp-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string p = (dir / name).string();
  std::ofstream(p) << yaml;
  return p;
}

platform::Scenario scenario(const std::string& yaml, const std::vector<std::string>& sets) {
  return platform::load_scenario(write_temp("scenario.yaml", yaml), platform::Overrides{"", sets, false, {}, ""});
}

cfg::Node preset_platform(const std::string& preset, const std::vector<std::string>& sets) {
  return scenario("name: t\nplatform: {preset: " + preset + "}\n", sets).root.at("platform");
}

}  // namespace dvp::test
