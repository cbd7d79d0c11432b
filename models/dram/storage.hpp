// SPDX-License-Identifier: MIT
// The bytes of the whole DRAM space: one anonymous mapping reserved up front and filled by
// the kernel on first touch (common/zero_pages.hpp), so a 32 GiB HBM space costs only the pages
// a run writes, and a timing-only run costs nothing. Reads of never-written memory return zeros,
// as the loaders and checks expect.
#pragma once
#include <cstddef>
#include <cstdint>

#include "common/zero_pages.hpp"

namespace dvp::dram {

class Storage {
 public:
  explicit Storage(std::uint64_t bytes) : bytes_(bytes, "dram: the DRAM contents") {}
  std::uint8_t* data() { return bytes_.data(); }
  std::uint64_t size() const { return bytes_.size(); }

 private:
  ZeroPages bytes_;
};

}  // namespace dvp::dram
