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

// A way drawn by xorshift64 from the seed: deterministic for a given seed.
class Random : public Replacement {
 public:
  explicit Random(const Geometry& g) : ways_(g.ways), rng_(g.seed * 0x9E3779B97F4A7C15ull + 1) {}
  void used(std::uint64_t*, std::uint32_t) override {}
  void filled(std::uint64_t*, std::uint32_t) override {}
  std::uint32_t victim(const std::uint64_t*, std::uint64_t skip) override {
    for (;;) {  // a way not skipped (there is one): the same draws every run
      rng_ ^= rng_ << 13;
      rng_ ^= rng_ >> 7;
      rng_ ^= rng_ << 17;
      if (const auto w = std::uint32_t(rng_ % ways_); !(skip >> w & 1)) return w;
    }
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
