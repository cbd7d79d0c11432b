// SPDX-License-Identifier: MIT
// Which way of a full set a fill evicts (platform.l2.replacement), as a small interface with its
// implementations named in one table. A cache array tells its policy of every use and fill;
// the policy asks for words of state per line (words()), which the array keeps beside the
// set's tags (one lookup and its victim choice then touch one run of memory: the 910's 32 MB
// L2 has a million lines, far past the host's caches), and passes it the set's words. Adding
// one: a class in replacement.cpp and a line in its table.
#pragma once
#include <cstdint>
#include <memory>

#include "common/config.hpp"

namespace dvp::cache {

class Replacement {
 public:
  virtual ~Replacement() = default;
  virtual unsigned words() const { return 0; }  // state words per line
  // `state`: the set's words, words() per way, way after way (nullptr when words() is 0).
  virtual void used(std::uint64_t* state, std::uint32_t way) = 0;    // a hit
  virtual void filled(std::uint64_t* state, std::uint32_t way) = 0;  // a new line
  // Every way valid; `skip`: ways (bit w) not to choose, never all of them.
  virtual std::uint32_t victim(const std::uint64_t* state, std::uint64_t skip) = 0;
};

// What a policy is made for: its state per set lives in the cache array, so it needs no set count.
struct Geometry {
  std::uint32_t ways;
  std::uint64_t seed;  // for the policies that draw at random
};
using MakeReplacement = std::unique_ptr<Replacement> (*)(const Geometry&);
const cfg::Choices<MakeReplacement>& replacement_policies();
// The least recently used way: the policy of caches that do not choose (the Arm cores' L1).
std::unique_ptr<Replacement> make_lru(const Geometry& g);

}  // namespace dvp::cache
