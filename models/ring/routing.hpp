// SPDX-License-Identifier: MIT
// The way a transfer takes around the ring (platform.ring.routing): an interface with its
// implementations named in one table. Adding one: a class in routing.cpp and a table line.
#pragma once
#include <cstdint>
#include <memory>

#include "common/config.hpp"

namespace dvp::ring {

// Number of hops and direction (0 clockwise = increasing stop index, 1 counter-clockwise).
struct Route {
  std::uint32_t hops;
  unsigned dir;
};

class Routing {
 public:
  virtual ~Routing() = default;
  virtual Route route(std::uint32_t src, std::uint32_t dst, std::uint32_t stops) const = 0;
  virtual unsigned directions() const = 0;  // rings of links: 1 or 2
  virtual const char* what() const = 0;     // for the map and the summary
};
using MakeRouting = std::unique_ptr<Routing> (*)();
const cfg::Choices<MakeRouting>& routing_policies();

}  // namespace dvp::ring
