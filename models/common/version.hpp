// SPDX-License-Identifier: MIT
// The build's version (project VERSION) and the git revision it was built from ("unknown"
// outside a git checkout), for `--version` and stats.json.
#pragma once

namespace dvp {
const char* version();
const char* revision();
}  // namespace dvp
