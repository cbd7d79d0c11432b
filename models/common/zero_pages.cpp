// SPDX-License-Identifier: MIT
#include "zero_pages.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "error.hpp"

namespace dvp {

namespace {
constexpr std::uint64_t kPage = 4096, kHugePage = 2u << 20;  // the host's small and huge pages (x86-64)
}  // namespace

ZeroPages::ZeroPages(std::uint64_t bytes, const std::string& what, Pages pages) : size_(bytes) {
  if (!bytes) return;
  const auto refused = [&] {
    return Error(what + ": cannot reserve " + std::to_string(bytes) + " bytes: " + std::strerror(errno));
  };
  if (pages == Pages::Dense && bytes < kHugePage) {
    data_ = static_cast<std::uint8_t*>(std::calloc(bytes, 1));
    if (!data_) throw refused();
    heap_ = true;
    return;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw refused();
  data_ = static_cast<std::uint8_t*>(p);
  // Advice only: a host that refuses it runs as before, and no simulated value or time depends on
  // it. Small pages are asked for too: a host whose transparent huge pages are "always" would
  // otherwise give 2 MiB to the first touch of each 2 MiB region (and khugepaged would merge a
  // region with one page touched into one), which is what sparse memory must not get.
  if (bytes >= kHugePage) madvise(p, bytes, pages == Pages::Dense ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
}

bool ZeroPages::populate(std::uint64_t offset, std::uint64_t len) {
  if (heap_ || !data_ || offset >= size_ || !len) return false;
  const std::uint64_t end = len > size_ - offset ? size_ : offset + len;
  // Huge pages for the whole 2 MiB pages the range covers (all of each is written: none is taken
  // for a few bytes), small ones at its edges.
  const std::uint64_t base = std::uint64_t(reinterpret_cast<std::uintptr_t>(data_));
  const std::uint64_t in_lo = (base + offset + kHugePage - 1) & ~(kHugePage - 1),
                      in_hi = (base + end) & ~(kHugePage - 1);
  if (in_hi > in_lo) madvise(data_ + (in_lo - base), in_hi - in_lo, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
  const std::uint64_t lo = (base + offset) & ~(kPage - 1);
  return madvise(data_ + (lo - base), base + end - lo, MADV_POPULATE_WRITE) == 0;
#else
  return false;
#endif
}

void make_pages(void* p, std::uint64_t len) {
#ifdef MADV_POPULATE_WRITE
  // Only the whole pages inside the range: a page it shares with other memory is that memory's
  // too, and is likely there already.
  const std::uint64_t a = std::uint64_t(reinterpret_cast<std::uintptr_t>(p));
  const std::uint64_t lo = (a + kPage - 1) & ~(kPage - 1), hi = (a + len) & ~(kPage - 1);
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE);
#else
  (void)p, (void)len;
#endif
}

ZeroPages::~ZeroPages() {
  if (heap_)
    std::free(data_);
  else if (data_)
    munmap(data_, size_);
}

}  // namespace dvp
