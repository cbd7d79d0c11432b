// SPDX-License-Identifier: MIT
// Errors that end a run with a clear message and a non-zero exit. Each names what is at
// fault: file and line for configuration, module and address for a bad access.
#pragma once
#include <stdexcept>
#include <string>

namespace dvp {

// Exit codes of `dvp`, documented in docs/outputs.md.
enum ExitCode : int {
  kExitOk = 0,
  kExitCheckFailed = 1,  // the scenario ran but one of its checks failed
  kExitConfig = 2,       // bad config, scenario or command line
  kExitSimError = 3,     // a model stopped the run (bad access, limit reached, ...)
  kExitNotBuilt = 4,     // the scenario asks for a part of the SoC not built yet
  kExitOutput = 5,       // an output file could not be written
};
// A run stopped by SIGINT or SIGTERM exits 128 + the signal's number, as shells expect.

// An error carries the exit code it ends `dvp` with: its kind decides, not its text.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, ExitCode code = kExitSimError) : std::runtime_error(what), code_(code) {}
  ExitCode exit_code() const { return code_; }

 private:
  ExitCode code_;
};

// An output file that could not be written (full disk, read-only directory, a size limit):
// names the file and the reason.
class OutputError : public Error {
 public:
  explicit OutputError(const std::string& what) : Error(what, kExitOutput) {}
};

// A scenario that asks for a part of the SoC this build does not model.
class NotBuiltError : public Error {
 public:
  explicit NotBuiltError(const std::string& what) : Error(what, kExitNotBuilt) {}
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
