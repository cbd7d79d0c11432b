// Fuzz target: traffic trace files (pattern: trace). Any file is read or refused with a
// dvp::Error naming its line; what is read has sizes in range and times that never go back.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "common/error.hpp"
#include "tgen/tgen.hpp"

using namespace dvp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/dvp-fuzz-trace-" + std::to_string(getpid()) + ".txt";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    const auto records = tgen::load_trace(path);
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (records[i].size == 0 || records[i].size > (1u << 20)) __builtin_trap();
      if (i && records[i].time < records[i - 1].time) __builtin_trap();
    }
  } catch (const Error&) {
  }
  return 0;
}

// libsystemc's main() is never used (libFuzzer has its own), but the library still needs one.
extern "C" int sc_main(int, char**) { return 0; }
