// Errors that end a run with a clear message and a non-zero exit. Each names what is at
// fault: file and line for configuration, module and address for a bad access.
#pragma once
#include <stdexcept>
#include <string>

namespace dvp {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Exit codes of `dvp`, documented in docs/outputs.md.
enum ExitCode : int {
  kExitOk = 0,
  kExitCheckFailed = 1,   // the scenario ran but one of its checks failed
  kExitConfig = 2,        // bad config, scenario or command line
  kExitSimError = 3,      // a model stopped the run (bad access, limit reached, ...)
  kExitNotBuilt = 4,      // the scenario asks for a part of the SoC not built yet
};

}  // namespace dvp

#include <cstdint>
#include <cstdio>

namespace dvp {
inline std::string hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}
}  // namespace dvp
