// SPDX-License-Identifier: MIT
#include "helpers.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace dvp::test {

namespace {
// This process's folder of scenario files, removed with everything in it when the process ends (a
// suite runs each test as a process of its own: otherwise a folder left in /tmp each).
struct TempDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() / ("dvp-test-" + std::to_string(getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};
}  // namespace

std::string write_temp(const std::string& name, const std::string& yaml) {
  static const TempDir dir;
  std::string p = (dir.path / name).string();
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
