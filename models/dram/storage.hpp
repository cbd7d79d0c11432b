// SPDX-License-Identifier: MIT
// The bytes of the whole DRAM space: one anonymous mapping reserved up front and filled by
// the kernel on first touch (common/zero_pages.hpp), so a 32 GiB HBM space costs only the pages
// a run writes, and a timing-only run costs nothing. Reads of never-written memory return zeros,
// as the loaders and checks expect. Small pages: a run's traffic may touch DRAM sparsely (random
// writes over a large region), where huge pages would take 2 MiB of host memory per touch.
//
// Which 4 KiB pages were ever written is kept beside the bytes (a bit a page), so that a read of a
// page no one wrote is zeros copied out without touching the page. Touching it costs a page fault
// that maps the kernel's zero page (about 10 us on this project's VMs, against under 1 us for the
// whole transaction's simulation), and random reads over a large region touch a new page nearly
// every time: functional random-read ran 17x slower than timing-only for it. The rule: write only
// within [offset, offset + len) of a pointer from write_at, which marks that range, or through
// data(), the pointer its holder may write through anywhere at any time (a CPU's direct memory
// interface, a test), which marks every page. A pointer from read_at is for reading only.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "common/zero_pages.hpp"

namespace dvp::dram {

class Storage {
 public:
  static constexpr unsigned kPageBits = 12;  // the host's small page

  explicit Storage(std::uint64_t bytes)
      : bytes_(bytes, "dram: the DRAM contents"),
        written_(((bytes >> kPageBits) / 64 + 1) * 8, "dram: the written pages' bits") {}

  // A pointer to all of DRAM that its holder may write through at any time: from now on every
  // page counts as written.
  std::uint8_t* data() {
    everything_written_ = true;
    return bytes_.data();
  }
  // [offset, offset + len) to be written now: its pages count as written.
  std::uint8_t* write_at(std::uint64_t offset, std::uint64_t len) {
    mark(offset, len);
    return bytes_.data() + offset;
  }
  // Bytes to read through as they are (a page never written reads as zeros, and is touched).
  const std::uint8_t* read_at(std::uint64_t offset) const { return bytes_.data() + offset; }
  // Copies [offset, offset + len) to `out`, the pages never written as zeros without touching them.
  void read(std::uint64_t offset, void* out, std::uint64_t len) const {
    auto* to = static_cast<std::uint8_t*>(out);
    if (everything_written_) {
      std::memcpy(to, bytes_.data() + offset, len);
      return;
    }
    for (std::uint64_t end = offset + len; offset < end;) {
      const std::uint64_t piece = std::min(end, ((offset >> kPageBits) + 1) << kPageBits) - offset;
      if (written(offset >> kPageBits))
        std::memcpy(to, bytes_.data() + offset, piece);
      else
        std::memset(to, 0, piece);
      to += piece, offset += piece;
    }
  }
  // Says that [offset, offset + len) is about to be written through (a tensor placed): its pages
  // are made in one system call rather than a page fault each (half the time on this machine;
  // the same memory). Advice only: a host without it (Linux before 5.14) faults as before.
  void will_write(std::uint64_t offset, std::uint64_t len) { bytes_.populate(offset, len); }
  std::uint64_t size() const { return bytes_.size(); }

 private:
  bool written(std::uint64_t page) const {
    return (reinterpret_cast<const std::uint64_t*>(written_.data())[page >> 6] >> (page & 63)) & 1;
  }
  // Pages first .. last: the words between the ends whole (a 1 GiB tensor is 4096 words, not
  // 262,144 bits one by one), the ends' bits masked.
  void mark(std::uint64_t offset, std::uint64_t len) {
    if (everything_written_ || !len) return;
    auto* bits = reinterpret_cast<std::uint64_t*>(written_.data());
    const std::uint64_t first = offset >> kPageBits, last = (offset + len - 1) >> kPageBits;
    const std::uint64_t lo = ~std::uint64_t(0) << (first & 63), hi = ~std::uint64_t(0) >> (63 - (last & 63));
    if (first >> 6 == last >> 6) {
      bits[first >> 6] |= lo & hi;
      return;
    }
    bits[first >> 6] |= lo;
    std::fill(bits + (first >> 6) + 1, bits + (last >> 6), ~std::uint64_t(0));
    bits[last >> 6] |= hi;
  }

  ZeroPages bytes_;
  ZeroPages written_;  // a bit per page, zero until written (a 32 GiB space: 1 MiB, touched as used)
  bool everything_written_ = false;
};

}  // namespace dvp::dram
