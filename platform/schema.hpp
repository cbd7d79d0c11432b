// SPDX-License-Identifier: MIT
// The schema of a scenario file, composed from every model's declared keys.
#pragma once
#include <string>
#include <vector>

#include "common/config.hpp"

namespace dvp::platform {

const cfg::Spec& scenario_schema();

// Parts of the SoC that scenarios may name but that this build does not model yet, with the
// key that asks for them. dvp refuses such a scenario plainly instead of faking the part.
struct NotBuilt {
  const char* key;
  const char* part;
};
const std::vector<NotBuilt>& not_built_parts();

}  // namespace dvp::platform
