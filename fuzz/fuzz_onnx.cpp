// SPDX-License-Identifier: MIT
// Fuzz target: ONNX models. Any file is compiled onto the platform (load_model: parsed, checked,
// its shapes inferred; compile_model: lowered, its weights converted, the host reference run,
// the compiled model written) or refused with a dvp::Error naming it: never a crash or a hang.
// Models with a tensor of more than 2^14 elements are loaded but not compiled: a conv's host
// reference takes outputs x weights per output steps, and one input must take well under the
// fuzzer's 10 s under the sanitizers (the platform takes up to 2^31 elements; test_onnx and the
// network tests cover large models).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "compiler.hpp"
#include "input_file.hpp"
#include "onnx_model.hpp"

using namespace dvp;

namespace {

// Whether every tensor whose shape is known holds at most 2^14 elements.
bool small(const network::Model& m) {
  bool fits = true;
  network::each_known_shape(m, [&](const std::string&, const std::vector<std::int64_t>& dims, bool) {
    double n = 1;
    for (std::int64_t d : dims) n *= double(d);
    fits = fits && n <= double(1 << 14);
  });
  return fits;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::input_file(data, size, "onnx", ".onnx");
  if (path.empty()) return 0;
  static const std::string dir = "/tmp/dvp-fuzz-" + std::to_string(getpid()) + "-compiled";
  try {
    const network::Model m = network::load_model(path);
    if (!small(m)) return 0;
    network::CompileOptions o;
    o.dir = dir;
    network::compile_model(m, o);
  } catch (const Error&) {}
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}

// libsystemc's main() is never used (libFuzzer has its own), but the library still needs one.
extern "C" int sc_main(int, char**) { return 0; }
