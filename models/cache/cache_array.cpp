#include "cache_array.hpp"

namespace dvp::cache {

CacheArray::CacheArray(std::uint32_t sets, std::uint32_t ways, std::uint32_t line_bytes, Replacement policy,
                       std::uint64_t seed, bool with_data)
    : sets_(sets), ways_(ways), line_bytes_(line_bytes), policy_(policy), rng_(seed * 0x9E3779B97F4A7C15ull + 1) {
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

void CacheArray::touch(std::uint32_t set, int way) {
  if (policy_ == Replacement::Lru) line(set, way).stamp = ++clock_;
}

int CacheArray::victim(std::uint32_t set) {
  const std::uint64_t* t = &tags_[std::size_t(set) * ways_];
  for (std::uint32_t w = 0; w < ways_; ++w)
    if (!t[w]) return int(w);
  const Line* l = &lines_[std::size_t(set) * ways_];
  if (policy_ == Replacement::Random) {
    // xorshift64: deterministic for a given seed.
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return int(rng_ % ways_);
  }
  int best = 0;  // LRU and FIFO both evict the smallest stamp
  for (std::uint32_t w = 1; w < ways_; ++w)
    if (l[w].stamp < l[best].stamp) best = int(w);
  return best;
}

void CacheArray::fill(std::uint32_t set, int way, std::uint64_t line_addr, Tick ready) {
  Line& l = line(set, way);
  tags_[std::size_t(set) * ways_ + way] = line_addr + 1;
  l.line_addr = line_addr;
  l.ready = ready;
  l.valid = true;
  l.dirty = false;
  l.stamp = ++clock_;
}

}  // namespace dvp::cache
