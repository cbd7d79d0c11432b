// SPDX-License-Identifier: MIT
// How the memory path (ring links, DRAM channels) is timed: platform.memory.fidelity. Read once
// by the platform and handed to the models that have a fast way.
#pragma once
#include "config.hpp"

namespace dvp {

enum class Fidelity { Detailed, Fast };

inline const cfg::Choices<Fidelity>& memory_fidelities() {
  static const cfg::Choices<Fidelity> table = {
      {"detailed", Fidelity::Detailed,
       "every ring transfer and DRAM burst placed in the gaps of its link's or bus's timeline, with every bank, "
       "rank and bus constraint (the reference)"},
      {"fast", Fidelity::Fast,
       "for studies: ring links and DRAM data buses are bandwidth budgets of 32-cycle windows, with no search "
       "(docs/models.md#memory-fidelity); DRAM banks keep their rows and timing bounds; the same values, simulated "
       "times within 4% of detailed's on every shipped scenario (scripts/fidelity-error)"},
  };
  return table;
}

}  // namespace dvp
