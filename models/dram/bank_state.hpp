// SPDX-License-Identifier: MIT
// The state of a channel's banks and ranks that its timing and its policies (refresh) share.
#pragma once
#include <cstdint>
#include <vector>

#include "common/time.hpp"

namespace dvp::dram {

struct BankState {
  std::int64_t open_row = -1;
  Tick act = 0;        // last ACT
  Tick ready_act = 0;  // earliest next ACT (tRC, tRP, refresh)
  Tick ready_pre = 0;  // earliest PRE (tRAS, tRTP, tWR)
  Tick last_cas = 0;
  bool any_cas = false;
};

struct RankState {
  Tick faw[4] = {0, 0, 0, 0};  // last four ACTs, oldest at faw_idx
  unsigned faw_idx = 0;
  unsigned acts = 0;
  Tick last_act = 0;
  std::vector<Tick> last_act_bg;
  bool any_act = false;
  Tick next_refresh = 0;
};

}  // namespace dvp::dram
