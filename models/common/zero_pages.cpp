// SPDX-License-Identifier: MIT
#include "zero_pages.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "error.hpp"

namespace dvp {

ZeroPages::ZeroPages(std::uint64_t bytes, const std::string& what) : size_(bytes) {
  if (!bytes) return;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw Error(what + ": cannot reserve " + std::to_string(bytes >> 20) +
                " MiB of address space: " + std::strerror(errno));
  data_ = static_cast<std::uint8_t*>(p);
  // Huge pages where the host allows them (transparent_hugepage "madvise" or "always"), for the
  // large ones: the first touch of a page faults once per 4 KiB without this and once per 2 MiB
  // with it. Functional random reads over DRAM faulted on almost every access (random-read: 14 us
  // per transaction, three quarters of it in the page-fault handler). A run's memory then grows
  // in 2 MiB steps. Advice only: a host that refuses it runs as before, and no simulated value or
  // time depends on it.
  constexpr std::uint64_t kHugePage = 2u << 20;
  if (bytes >= kHugePage) madvise(p, bytes, MADV_HUGEPAGE);
}

ZeroPages::~ZeroPages() {
  if (data_) munmap(data_, size_);
}

}  // namespace dvp
