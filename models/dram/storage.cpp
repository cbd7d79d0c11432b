// SPDX-License-Identifier: MIT
#include "storage.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "common/error.hpp"

namespace dvp::dram {

Storage::Storage(std::uint64_t bytes) : size_(bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw Error("dram: cannot reserve " + std::to_string(bytes >> 20) +
                " MiB of address space for the DRAM contents: " + std::strerror(errno));
  data_ = static_cast<std::uint8_t*>(p);
  // Huge pages where the host allows them (transparent_hugepage "madvise" or "always"): a read of
  // memory no one wrote maps the kernel's shared zero page, one page fault per 4 KiB without this
  // and one per 2 MiB with it. Functional random reads over a large region faulted on almost every
  // access (random-read: 14 us per transaction, three quarters of it in the page-fault handler).
  // A write then takes a whole zeroed 2 MiB page, so a run's memory grows in 2 MiB steps. Advice
  // only: a host that refuses it runs as before (no simulated value or time depends on it).
  madvise(p, bytes, MADV_HUGEPAGE);
}

Storage::~Storage() {
  if (data_) munmap(data_, size_);
}

}  // namespace dvp::dram
