// SPDX-License-Identifier: MIT
// Fuzz target: tensor files (.npy). Any file is read or refused with a dvp::Error naming it;
// what is read holds exactly its shape's bytes, converts to every platform type, and writes
// back as a .npy of the same shape.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "input_file.hpp"
#include "tensor_file.hpp"

using namespace dvp;
using dvp::aicore::DType;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::input_file(data, size, "npy", ".npy");
  if (path.empty()) return 0;
  try {
    const platform::NpyHeader h = platform::read_npy_header(path);
    if (h.data_offset + h.data_bytes() != size) __builtin_trap();
    const std::uint64_t n = h.elements();
    for (DType t : {DType::F16, DType::BF16, DType::F32, DType::S8, DType::U32}) {
      std::vector<std::uint8_t> out(n * aicore::dtype_bytes(t));
      platform::read_tensor_data(path, &h, t, n, true, out.data());
      const std::string back = path + ".out.npy";
      platform::write_tensor_file(back, t, h.shape, out.data(), n);
      if (!h.shape.empty() && platform::read_npy_header(back).shape != h.shape) __builtin_trap();
    }
  } catch (const Error&) {}
  return 0;
}

// libsystemc's main() is never used (libFuzzer has its own), but the library still needs one.
extern "C" int sc_main(int, char**) { return 0; }
