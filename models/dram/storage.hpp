// SPDX-License-Identifier: MIT
// The bytes of the whole DRAM space: one anonymous mapping reserved up front and filled by
// the kernel on first touch, so a 32 GiB HBM space costs only the pages a run writes, and
// a timing-only run costs nothing. Reads of never-written memory return zeros, as the
// loaders and checks expect.
#pragma once
#include <cstddef>
#include <cstdint>

namespace dvp::dram {

class Storage {
 public:
  explicit Storage(std::uint64_t bytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  std::uint8_t* data() { return data_; }
  std::uint64_t size() const { return size_; }

 private:
  std::uint8_t* data_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace dvp::dram
