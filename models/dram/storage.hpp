// SPDX-License-Identifier: MIT
// The bytes of the whole DRAM space: one anonymous mapping reserved up front and filled by
// the kernel on first touch (common/zero_pages.hpp), so a 32 GiB HBM space costs only the pages
// a run writes, and a timing-only run costs nothing. Reads of never-written memory return zeros,
// as the loaders and checks expect. Small pages: a run's traffic may touch DRAM sparsely (random
// writes over a large region), where huge pages would take 2 MiB of host memory per touch.
// Functional random reads pay a page fault on most accesses for it (random-read: 2.0 s against
// 0.5 s with huge pages on this machine).
#pragma once
#include <cstdint>

#include "common/zero_pages.hpp"

namespace dvp::dram {

class Storage {
 public:
  explicit Storage(std::uint64_t bytes) : bytes_(bytes, "dram: the DRAM contents") {}
  std::uint8_t* data() { return bytes_.data(); }
  // Says that [offset, offset + len) is about to be written through (a tensor placed): its pages
  // are made in one system call rather than a page fault each (half the time on this machine;
  // the same memory). Advice only: a host without it (Linux before 5.14) faults as before.
  void will_write(std::uint64_t offset, std::uint64_t len) { bytes_.populate(offset, len); }
  std::uint64_t size() const { return bytes_.size(); }

 private:
  ZeroPages bytes_;
};

}  // namespace dvp::dram
