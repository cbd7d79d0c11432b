// SPDX-License-Identifier: MIT
// Fuzz target: traffic trace files (pattern: trace). Any file is read or refused with a
// dvp::Error naming its line; what is read has sizes in range and times that never go back.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "common/error.hpp"
#include "input_file.hpp"
#include "tgen/tgen.hpp"

using namespace dvp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::input_file(data, size, "trace", ".txt");
  if (path.empty()) return 0;
  try {
    const auto records = tgen::load_trace(path);
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (records[i].size == 0 || records[i].size > (1u << 20)) __builtin_trap();
      if (i && records[i].time < records[i - 1].time) __builtin_trap();
    }
  } catch (const Error&) {}
  return 0;
}

// libsystemc's main() is never used (libFuzzer has its own), but the library still needs one.
extern "C" int sc_main(int, char**) { return 0; }
