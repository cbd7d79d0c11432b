// SPDX-License-Identifier: MIT
// Which free AI Core takes a task's next block (platform.ts.policy): an interface with its
// implementations named in one table. Adding one: a class in dispatch.cpp and a table line.
#pragma once
#include <memory>
#include <vector>

#include "common/config.hpp"

namespace dvp::ts {

class Dispatch {
 public:
  virtual ~Dispatch() = default;
  // A core whose entry in `taken` is false, or -1 when every core is busy.
  virtual int pick(const std::vector<bool>& taken) = 0;
};
using MakeDispatch = std::unique_ptr<Dispatch> (*)();
const cfg::Choices<MakeDispatch>& dispatch_policies();

}  // namespace dvp::ts
