// SPDX-License-Identifier: MIT
// Which way of a full set a fill evicts (platform.l2.replacement), as a small interface with its
// implementations named in one table. A cache array tells its policy of every use and fill;
// the policy keeps whatever state it needs per line. Adding one: a class in replacement.cpp
// and a line in its table.
#pragma once
#include <cstdint>
#include <memory>

#include "common/config.hpp"

namespace dvp::cache {

class Replacement {
 public:
  virtual ~Replacement() = default;
  virtual void used(std::uint32_t set, std::uint32_t way) = 0;    // a hit
  virtual void filled(std::uint32_t set, std::uint32_t way) = 0;  // a new line
  virtual std::uint32_t victim(std::uint32_t set) = 0;            // every way valid
};

struct Geometry {
  std::uint32_t sets, ways;
  std::uint64_t seed;  // for the policies that draw at random
};
using MakeReplacement = std::unique_ptr<Replacement> (*)(const Geometry&);
const cfg::Choices<MakeReplacement>& replacement_policies();
// The least recently used way: the policy of caches that do not choose (the Arm cores' L1).
std::unique_ptr<Replacement> make_lru(const Geometry& g);

}  // namespace dvp::cache
