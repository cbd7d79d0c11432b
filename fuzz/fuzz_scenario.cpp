// Fuzz target: scenario files, through the loader dvp uses (YAML, the preset merge, --set-free
// validation against the whole schema). Any file loads or is refused with dvp::Error (a
// ConfigError names file, line and key); nothing else may escape, crash or hang.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "common/config.hpp"
#include "common/error.hpp"
#include "scenario.hpp"

using namespace dvp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/dvp-fuzz-scenario-" + std::to_string(getpid()) + ".yaml";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    const platform::Scenario s = platform::load_scenario(path, platform::Overrides{});
    (void)cfg::dump(s.root, true);
  } catch (const Error&) {
  }
  return 0;
}

// libsystemc's main() is never used (libFuzzer has its own), but the library still needs one.
extern "C" int sc_main(int, char**) { return 0; }
