// SPDX-License-Identifier: MIT
#include "routing.hpp"

namespace dvp::ring {

namespace {

// Two rings in opposite directions; the shorter way, a tie alternating by source stop so that
// halfway traffic splits evenly.
class Shortest : public Routing {
 public:
  Route route(std::uint32_t src, std::uint32_t dst, std::uint32_t n) const override {
    const std::uint32_t cw = (dst + n - src) % n, ccw = (src + n - dst) % n;
    if (cw < ccw) return Route{cw, 0};
    if (ccw < cw) return Route{ccw, 1};
    return Route{cw, src & 1u};
  }
  unsigned directions() const override { return 2; }
  const char* what() const override { return "bidirectional, shortest way"; }
};

// One ring: every transfer goes clockwise.
class Clockwise : public Routing {
 public:
  Route route(std::uint32_t src, std::uint32_t dst, std::uint32_t n) const override {
    return Route{(dst + n - src) % n, 0};
  }
  unsigned directions() const override { return 1; }
  const char* what() const override { return "unidirectional, clockwise"; }
};

template <typename P>
std::unique_ptr<Routing> make() {
  return std::make_unique<P>();
}

}  // namespace

const cfg::Choices<MakeRouting>& routing_policies() {
  static const cfg::Choices<MakeRouting> table = {
      {"shortest", make<Shortest>,
       "two rings in opposite directions, each transfer the shorter way (a tie alternates by source stop)"},
      {"clockwise", make<Clockwise>, "one ring: every transfer clockwise"},
  };
  return table;
}

}  // namespace dvp::ring
