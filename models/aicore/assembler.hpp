// SPDX-License-Identifier: MIT
// Kernel images and the DV assembly language: text <-> image (dvas, dvdis).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "isa.hpp"

namespace dvp::aicore {

// A kernel image: 32-byte header then the code.
//   0: magic "DVK1"   4: u32 version (1)   8: u32 entry (byte offset of the first instruction)
//   12: u32 code bytes   16..31: zero      32: code, little-endian 64-bit words
struct Image {
  std::vector<std::uint64_t> code;
  std::uint32_t entry = 0;

  std::vector<std::uint8_t> bytes() const;
  // Throws dvp::Error naming `name` on a malformed image.
  static Image from_bytes(const std::vector<std::uint8_t>& b, const std::string& name);
  static Image load(const std::string& path);
  void save(const std::string& path) const;
};

// Assembles `text`; errors are dvp::Error("file:line: message").
Image assemble(const std::string& text, const std::string& file);
// Text that assembles back into the same image (labels L<offset> at branch targets).
std::string disassemble(const Image& img);

}  // namespace dvp::aicore
