// SPDX-License-Identifier: MIT
// Fuzz target: DV assembly text. Any text is assembled or refused with dvp::Error; what
// assembles disassembles to text that assembles back to the same words (dvas / dvdis agree).
#include <cstddef>
#include <cstdint>
#include <string>

#include "aicore/assembler.hpp"
#include "common/error.hpp"

using namespace dvp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  aicore::Image img;
  try {
    img = aicore::assemble(text, "fuzz.s");
  } catch (const Error&) {
    return 0;  // refused, with a message: fine
  }
  const aicore::Image back = aicore::assemble(aicore::disassemble(img), "back.s");
  if (back.code != img.code || back.entry != img.entry) __builtin_trap();
  return 0;
}
