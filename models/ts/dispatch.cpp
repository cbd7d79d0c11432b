// SPDX-License-Identifier: MIT
#include "dispatch.hpp"

namespace dvp::ts {

namespace {

// The first free core after the last one used: blocks spread over the cores.
class RoundRobin : public Dispatch {
 public:
  int pick(const std::vector<bool>& taken) override {
    const unsigned n = unsigned(taken.size());
    for (unsigned i = 0; i < n; ++i) {
      const unsigned c = (next_ + i) % n;
      if (!taken[c]) {
        next_ = (c + 1) % n;
        return int(c);
      }
    }
    return -1;
  }

 private:
  unsigned next_ = 0;
};

// The lowest-numbered free core: work packs onto the first cores.
class FirstFree : public Dispatch {
 public:
  int pick(const std::vector<bool>& taken) override {
    for (unsigned c = 0; c < taken.size(); ++c)
      if (!taken[c]) return int(c);
    return -1;
  }
};

template <typename P>
std::unique_ptr<Dispatch> make() {
  return std::make_unique<P>();
}

}  // namespace

const cfg::Choices<MakeDispatch>& dispatch_policies() {
  static const cfg::Choices<MakeDispatch> table = {
      {"round_robin", make<RoundRobin>, "the next free core after the last one used"},
      {"first_free", make<FirstFree>, "the lowest-numbered free core"},
  };
  return table;
}

}  // namespace dvp::ts
