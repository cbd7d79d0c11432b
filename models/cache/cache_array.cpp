// SPDX-License-Identifier: MIT
#include "cache_array.hpp"

namespace dvp::cache {

CacheArray::CacheArray(std::uint32_t sets, std::uint32_t ways, std::uint32_t line_bytes,
                       std::unique_ptr<Replacement> policy, bool with_data)
    : ways_(ways),
      line_bytes_(line_bytes),
      policy_(std::move(policy)),
      policy_words_(std::size_t(ways) * policy_->words()),
      set_words_(kHead + 2 * std::size_t(ways) + policy_words_) {
  meta_ = ZeroPages(std::uint64_t(sets) * set_words_ * sizeof(std::uint64_t), "a cache's tags and state",
                    ZeroPages::Pages::Dense);
  if (with_data)
    data_ = ZeroPages(std::uint64_t(sets) * ways * line_bytes, "a cache's data array", ZeroPages::Pages::Dense);
}

int CacheArray::lookup(std::uint32_t set, std::uint64_t line_addr) const {
  const std::uint64_t* t = tags(set);
  const std::uint64_t want = line_addr + 1;
  for (std::uint32_t w = 0; w < ways_; ++w)
    if (t[w] == want) return int(w);
  return -1;
}

int CacheArray::victim(std::uint32_t set) {
  const std::uint64_t* t = tags(set);
  for (std::uint32_t w = 0; w < ways_; ++w)
    if (!t[w]) return int(w);
  const std::uint64_t all = ways_ == 64 ? ~0ull : (1ull << ways_) - 1;
  const std::uint64_t kept = words(set)[kKept];
  return int(policy_->victim(state(set), kept == all ? 0 : kept));
}

void CacheArray::keep(std::uint32_t set, int way, bool on) {
  if (on)
    words(set)[kKept] |= 1ull << way;
  else
    words(set)[kKept] &= ~(1ull << way);
}

unsigned CacheArray::kept(std::uint32_t set) const { return unsigned(__builtin_popcountll(words(set)[kKept])); }

void CacheArray::fill(std::uint32_t set, int way, std::uint64_t line_addr, Tick ready) {
  tags(set)[way] = line_addr + 1;
  readies(set)[way] = ready;
  words(set)[kDirty] &= ~(1ull << way);
  keep(set, way, false);
  policy_->filled(state(set), std::uint32_t(way));
}

void CacheArray::invalidate(std::uint32_t set, int way) {
  tags(set)[way] = 0;
  readies(set)[way] = 0;
  words(set)[kDirty] &= ~(1ull << way);
  keep(set, way, false);
}

}  // namespace dvp::cache
