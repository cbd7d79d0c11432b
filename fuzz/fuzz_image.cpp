// SPDX-License-Identifier: MIT
// Fuzz target: kernel images (dvas output, or any bytes given as an image). An image is loaded
// or refused with dvp::Error; every word of a loaded image decodes or is refused naming its
// field; a word that decodes encodes back to itself, and a loaded image round-trips through
// dvdis and dvas to the same words (branch targets outside the image included).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "aicore/assembler.hpp"
#include "common/error.hpp"

using namespace dvp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  aicore::Image img;
  try {
    img = aicore::Image::from_bytes(std::vector<std::uint8_t>(data, data + size), "fuzz.bin");
  } catch (const Error&) {
    return 0;
  }
  bool all_decode = true;
  for (std::uint64_t w : img.code) {
    try {
      if (aicore::encode(aicore::decode(w)) != w) __builtin_trap();
    } catch (const Error&) {
      all_decode = false;
    }
  }
  std::string text;
  try {
    text = aicore::disassemble(img);  // refuses an image holding an undecodable word
  } catch (const Error&) {
    return 0;
  }
  if (!all_decode) __builtin_trap();                            // disassembled what does not decode
  const aicore::Image back = aicore::assemble(text, "back.s");  // an error here escapes: a crash
  if (back.code != img.code || back.entry != img.entry) __builtin_trap();
  return 0;
}
