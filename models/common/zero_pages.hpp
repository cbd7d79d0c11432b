// SPDX-License-Identifier: MIT
// Bytes that read as zero until written, from an anonymous mapping the kernel fills on first
// touch: a model's memory (DRAM contents, an AI Core's buffers, an L2's data array) costs only
// the pages a run uses, and nothing at construction. A std::vector of the same size is written
// through once when it is made: 32 AI Cores' buffers on ascend910 (53 MiB) took a quarter of a
// memory scenario's host time in page faults and the zeroing.
#pragma once
#include <cstdint>
#include <string>

namespace dvp {

class ZeroPages {
 public:
  ZeroPages() = default;
  // `what` names the memory in the error when the host refuses the address space.
  ZeroPages(std::uint64_t bytes, const std::string& what);
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

 private:
  void swap(ZeroPages& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
  }
  std::uint8_t* data_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace dvp
