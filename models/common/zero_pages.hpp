// SPDX-License-Identifier: MIT
// Bytes that read as zero until written, from an anonymous mapping the kernel fills on first
// touch: a model's memory (DRAM contents, an AI Core's buffers, a cache's tags and data) costs only
// the pages a run uses, and nothing at construction. A std::vector of the same size is written
// through once when it is made: 32 AI Cores' buffers on ascend910 (52 MiB) took over a quarter
// of a memory scenario's wall time in page faults and the zeroing.
//
// Pages::Dense is for memory a run uses all of (an L2's data array: its fills spread over all of
// it). From 2 MiB it asks for huge pages (transparent huge pages, where the host allows them):
// one page fault per 2 MiB instead of per 4 KiB. Below that it takes zeroed heap memory, which
// the heap reuses: a mapping of its own would cost two system calls and a fault per 4 KiB (a
// reviewer's figures: 68 us against 1.6 us for 16 KiB).
//
// Pages::Small (the default) is for memory used sparsely, where every first touch of a huge page
// would take a whole zeroed 2 MiB (1000 random one-byte writes over 1 GiB: 54 ms and 7 MiB with
// small pages, 1.6 s and 889 MiB with huge ones). It asks for small pages, also on a host whose
// transparent huge pages are "always".
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dvp {

class ZeroPages {
 public:
  ZeroPages() = default;
  enum class Pages { Small, Dense };
  // `what` names the memory in the error when the host refuses the address space.
  ZeroPages(std::uint64_t bytes, const std::string& what, Pages pages = Pages::Small);
  ~ZeroPages();
  ZeroPages(ZeroPages&& o) noexcept { swap(o); }
  ZeroPages& operator=(ZeroPages&& o) noexcept {
    swap(o);
    return *this;
  }
  ZeroPages(const ZeroPages&) = delete;
  ZeroPages& operator=(const ZeroPages&) = delete;

  std::uint8_t* data() { return data_; }
  const std::uint8_t* data() const { return data_; }
  std::uint64_t size() const { return size_; }
  // Says [offset, offset + len) is about to be written through: huge pages for the whole 2 MiB
  // pages inside it (all of each is written), then all its pages made now (MADV_POPULATE_WRITE)
  // rather than a fault each. Advice, ignored where the host cannot (returns whether it made
  // them); the bytes stay as they are.
  bool populate(std::uint64_t offset, std::uint64_t len);

 private:
  void swap(ZeroPages& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(heap_, o.heap_);
  }
  std::uint8_t* data_ = nullptr;
  std::uint64_t size_ = 0;
  bool heap_ = false;  // from the heap (small and dense), not a mapping
};

// The pages of [p, p + len) made now, in one system call (MADV_POPULATE_WRITE), rather than by a
// fault at the first write of each 4 KiB: for host buffers about to be written through (a
// tensor read back, a reference's values). Pages already there are left as they are, their
// bytes too (the call still walks them: about 0.1 us a page). Advice: a host without it faults
// as before. On this project's VMs a fault costs about 10 us, a fresh page made in the call 1 -
// 1.5 us (docs/performance.md).
void make_pages(void* p, std::uint64_t len);

// A vector of n value-initialised elements whose memory is made by make_pages before it is
// written: the heap's fresh pages (it grows for the largest buffers a run holds at once) cost
// one call, not a fault each.
template <class T>
std::vector<T> made_vector(std::size_t n) {
  std::vector<T> v;
  v.reserve(n);
  make_pages(v.data(), n * sizeof(T));
  v.resize(n);
  return v;
}

}  // namespace dvp
