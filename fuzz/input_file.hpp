// SPDX-License-Identifier: MIT
// The fuzz input as a file, for the readers that take a path (scenarios, traces): written to
// one file per process and kind, rewritten for each input.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace dvp::fuzz {

// The path of the file now holding `data`, or "" when it could not be written.
inline std::string input_file(const std::uint8_t* data, std::size_t size, const char* kind, const char* ext) {
  static const std::string dir = "/tmp/dvp-fuzz-" + std::to_string(getpid()) + "-";
  const std::string path = dir + kind + ext;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return "";
  const bool ok = std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && ok ? path : "";
}

}  // namespace dvp::fuzz
