// SPDX-License-Identifier: MIT
// Loading a scenario: preset, then the scenario's own keys, then --preset / --set from the
// command line; validated against the schema with every error naming its file and line.
#pragma once
#include <string>
#include <vector>

#include "common/config.hpp"

namespace dvp::platform {

struct Overrides {
  std::string preset;               // --preset NAME (wins over the scenario's)
  std::vector<std::string> sets;    // --set a.b=c, in order
  bool timing_only = false;         // --timing-only
  std::vector<std::string> checks;  // --check metric>=value / metric<=value
  // A scenario merged under this one, over its preset (a compiled model's, for a model: key);
  // its checks come before the scenario's own.
  std::string under;
};

struct Scenario {
  cfg::Node root;      // resolved and validated
  std::string file;    // scenario path
  std::string dir;     // its directory (for relative paths inside)
  std::string preset;  // preset name used
  std::string preset_file;
};

// Where presets live: $DVP_PRESETS if set, else share/davinci-vp/presets beside the executable's
// bin/ (installed; in a build tree a link to the source's scenarios/presets).
std::string preset_dir();
// Where the project's firmware images are: $DVP_FIRMWARE, else share/davinci-vp/firmware
// beside bin/ (installed; in a build tree a link to build/firmware).
std::string firmware_dir();
// Where the project's RTL plug-ins are (a platform.rtl plugin named without a '/'): $DVP_RTL, else
// share/davinci-vp/rtl beside bin/ (in a build tree a link to build/rtl).
std::string rtl_dir();
// The plotting script dvp plot runs (python3-matplotlib): $DVP_PLOT, else
// share/davinci-vp/dvp-plot.py beside bin/ (in a build tree a link to the source's study/).
std::string plot_script();
Scenario load_scenario(const std::string& path, const Overrides& o);
// Whether a --set names a list's item (traffic[0].count=10): set once the scenario's lists are in.
bool sets_an_item(const std::string& assignment);
// The same from a scenario already read (`dir`: where its files are named from).
Scenario load_scenario(const cfg::Node& scen, const std::string& dir, const Overrides& o);
// A scenario of `platform: {preset: preset}` under o's --preset and its --set keys of the
// platform: section: the platform (and the preset chosen) a model is compiled for before its
// scenario exists (dvp run model.onnx, dvp compile).
Scenario resolve_platform(const std::string& preset, const Overrides& o);

}  // namespace dvp::platform
