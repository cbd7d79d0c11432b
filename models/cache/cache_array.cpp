// SPDX-License-Identifier: MIT
#include "cache_array.hpp"

namespace dvp::cache {

CacheArray::CacheArray(std::uint32_t sets, std::uint32_t ways, std::uint32_t line_bytes,
                       std::unique_ptr<Replacement> policy, bool with_data)
    : ways_(ways), line_bytes_(line_bytes), policy_(std::move(policy)) {
  lines_.resize(std::size_t(sets) * ways);
  tags_.assign(std::size_t(sets) * ways, 0);
  if (with_data) data_.assign(std::size_t(sets) * ways * line_bytes, 0);
}

int CacheArray::lookup(std::uint32_t set, std::uint64_t line_addr) const {
  const std::uint64_t* t = &tags_[std::size_t(set) * ways_];
  const std::uint64_t want = line_addr + 1;
  for (std::uint32_t w = 0; w < ways_; ++w)
    if (t[w] == want) return int(w);
  return -1;
}

int CacheArray::victim(std::uint32_t set) {
  const std::uint64_t* t = &tags_[std::size_t(set) * ways_];
  for (std::uint32_t w = 0; w < ways_; ++w)
    if (!t[w]) return int(w);
  return int(policy_->victim(set));
}

void CacheArray::fill(std::uint32_t set, int way, std::uint64_t line_addr, Tick ready) {
  Line& l = line(set, way);
  tags_[std::size_t(set) * ways_ + way] = line_addr + 1;
  l.line_addr = line_addr;
  l.ready = ready;
  l.valid = true;
  l.dirty = false;
  policy_->filled(set, std::uint32_t(way));
}

}  // namespace dvp::cache
