// SPDX-License-Identifier: MIT
#include "version.hpp"

#include "dvp_version.h"  // generated at build time (cmake/version.cmake)

namespace dvp {
const char* version() { return DVP_VERSION_STRING; }
const char* revision() { return DVP_REVISION_STRING; }
}  // namespace dvp
