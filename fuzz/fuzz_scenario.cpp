// SPDX-License-Identifier: MIT
// Fuzz target: scenario files, through the loader dvp uses (YAML, the preset merge, --set-free
// validation against the whole schema). Any file loads or is refused with dvp::Error (a
// ConfigError names file, line and key); nothing else may escape, crash or hang.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "common/config.hpp"
#include "common/error.hpp"
#include "input_file.hpp"
#include "scenario.hpp"

using namespace dvp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::input_file(data, size, "scenario", ".yaml");
  if (path.empty()) return 0;
  try {
    const platform::Scenario s = platform::load_scenario(path, platform::Overrides{});
    (void)cfg::dump(s.root, true);
  } catch (const Error&) {}
  return 0;
}

// libsystemc's main() is never used (libFuzzer has its own), but the library still needs one.
extern "C" int sc_main(int, char**) { return 0; }
