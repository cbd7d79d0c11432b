// SPDX-License-Identifier: MIT
#include "replacement.hpp"

#include <vector>

namespace dvp::cache {

namespace {

// Evicts the way with the smallest stamp; LRU stamps every use, FIFO only fills.
class Stamped : public Replacement {
 public:
  Stamped(const Geometry& g, bool on_use) : ways_(g.ways), on_use_(on_use) {}
  unsigned words() const override { return 1; }
  void used(std::uint64_t* stamps, std::uint32_t way) override {
    if (on_use_) stamps[way] = ++clock_;
  }
  void filled(std::uint64_t* stamps, std::uint32_t way) override { stamps[way] = ++clock_; }
  std::uint32_t victim(const std::uint64_t* stamps, std::uint64_t skip) override {
    std::uint32_t best = ways_;
    for (std::uint32_t w = 0; w < ways_; ++w)
      if (!(skip >> w & 1) && (best == ways_ || stamps[w] < stamps[best])) best = w;
    return best;
  }

 private:
  std::uint32_t ways_;
  bool on_use_;
  std::uint64_t clock_ = 0;
};

class Lru : public Stamped {
 public:
  explicit Lru(const Geometry& g) : Stamped(g, true) {}
};

class Fifo : public Stamped {
 public:
  explicit Fifo(const Geometry& g) : Stamped(g, false) {}
};

// A way drawn by xorshift64 from the seed: deterministic for a given seed. One draw per victim,
// the k-th way not skipped: without kept ways, the way drawn is rng % ways as before them.
class Random : public Replacement {
 public:
  explicit Random(const Geometry& g) : ways_(g.ways), rng_(g.seed * 0x9E3779B97F4A7C15ull + 1) {
    if (!rng_) rng_ = 1;  // xorshift stays at 0: the one seed that gives it would draw way 0 forever
  }
  void used(std::uint64_t*, std::uint32_t) override {}
  void filled(std::uint64_t*, std::uint32_t) override {}
  std::uint32_t victim(const std::uint64_t*, std::uint64_t skip) override {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    std::uint64_t open = ~skip & (ways_ == 64 ? ~0ull : (1ull << ways_) - 1);  // never none
    for (auto k = rng_ % std::uint64_t(__builtin_popcountll(open)); k > 0; --k) open &= open - 1;
    return std::uint32_t(__builtin_ctzll(open));
  }

 private:
  std::uint32_t ways_;
  std::uint64_t rng_;
};

template <typename P>
std::unique_ptr<Replacement> make(const Geometry& g) {
  return std::make_unique<P>(g);
}

}  // namespace

const cfg::Choices<MakeReplacement>& replacement_policies() {
  static const cfg::Choices<MakeReplacement> table = {
      {"lru", make<Lru>, "the least recently used way"},
      {"fifo", make<Fifo>, "the way filled longest ago"},
      {"random", make<Random>, "a way drawn at random (xorshift from `seed`: the same every run)"},
  };
  return table;
}

std::unique_ptr<Replacement> make_lru(const Geometry& g) { return make<Lru>(g); }

}  // namespace dvp::cache
