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
}

Storage::~Storage() {
  if (data_) munmap(data_, size_);
}

}  // namespace dvp::dram
