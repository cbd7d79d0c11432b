// SPDX-License-Identifier: MIT
#include "scenario.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "schema.hpp"

namespace dvp::platform {

namespace fs = std::filesystem;

// The data a run reads besides its scenario: <prefix>/share/davinci-vp/{presets,firmware}, with
// <prefix> the executable's directory's parent. An installation has them there; a build tree
// has links there (build/share/davinci-vp/presets to the source's scenarios/presets, .../firmware
// to build/firmware), so no path is baked into a binary.
static std::string data_dir(const char* what) {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return (ec ? fs::path(".") : exe.parent_path().parent_path()).string() + "/share/davinci-vp/" + what;
}

std::string preset_dir() {
  if (const char* e = std::getenv("DVP_PRESETS")) return e;
  return data_dir("presets");
}

std::string firmware_dir() {
  if (const char* e = std::getenv("DVP_FIRMWARE")) return e;
  return data_dir("firmware");
}

std::string rtl_dir() {
  if (const char* e = std::getenv("DVP_RTL")) return e;
  return data_dir("rtl");
}

std::string plot_script() {
  if (const char* e = std::getenv("DVP_PLOT")) return e;
  return data_dir("dvp-plot.py");
}

static const cfg::Node* find_path(const cfg::Node& root, const std::string& dotted) {
  const cfg::Node* n = &root;
  std::size_t start = 0;
  while (n) {
    auto dot = dotted.find('.', start);
    std::string part = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    n = n->is_map() ? n->find(part) : nullptr;
    if (dot == std::string::npos) return n;
    start = dot + 1;
  }
  return nullptr;
}

namespace {

// The preset a scenario names (--preset, then --set platform.preset, then the file), and where
// the name came from; "" when none.
std::pair<std::string, cfg::Origin> chosen_preset(const cfg::Node& scen, const cfg::Node& sets, const Overrides& o) {
  if (!o.preset.empty()) return {o.preset, cfg::Origin{"--preset " + o.preset, 0, 0}};
  const cfg::Node* pn = find_path(sets, "platform.preset");
  if (!pn) pn = find_path(scen, "platform.preset");
  if (pn) return {pn->as_string(), pn->origin()};
  return {"", cfg::Origin{}};
}

// The preset's platform: section, from DVP_PRESETS or the source tree.
cfg::Node load_preset(const std::string& preset, const cfg::Origin& origin, std::string& file) {
  // A preset is a name: letters, digits, '-', '_' and '.', at most 64 (a path, or a name the
  // file system refuses, would make the lookup throw instead of saying what is wrong).
  const bool name_ok = preset.size() <= 64 && preset.find("..") == std::string::npos &&
                       std::all_of(preset.begin(), preset.end(), [](char c) {
                         return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
                       });
  if (!name_ok)
    throw cfg::ConfigError(origin, "platform.preset",
                           "a preset is a name (letters, digits, - _ ., at most 64), not '" + preset.substr(0, 80) +
                               (preset.size() > 80 ? "...'" : "'"));
  file = preset_dir() + "/" + preset + ".yaml";
  std::error_code ec;
  const bool found = fs::exists(file, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)  // there, perhaps, but not readable: say why
    throw cfg::ConfigError(origin, "platform.preset", file + ": " + ec.message());
  if (!found) {
    std::string known;
    if (fs::is_directory(preset_dir(), ec))
      for (auto& e : fs::directory_iterator(preset_dir(), ec))
        if (e.path().extension() == ".yaml") known += (known.empty() ? "" : ", ") + e.path().stem().string();
    throw cfg::ConfigError(origin, "platform.preset",
                           "no preset '" + preset + "' in " + preset_dir() + " (known: " + known + ")");
  }
  cfg::Node p = cfg::load_file(file);
  const cfg::Node* plat = p.is_map() ? p.find("platform") : nullptr;
  if (!plat) throw cfg::ConfigError(p.origin(), "", "a preset file holds one top-level key, platform:");
  return *plat;
}

// A check passes within its bounds: one at least, and none that no value meets.
void check_bounds(const cfg::Node& root) {
  const cfg::Node* checks = root.find("checks");
  if (!checks) return;
  for (const cfg::Node& c : checks->items()) {
    if (!c.has("min") && !c.has("max")) c.fail("a check needs min, max or both: it would pass whatever the value");
    if (c.has("min") && c.has("max") && c.get_double("min") > c.get_double("max"))
      c.at("max").fail("is below min (" + c.at("min").as_string() + "): no value can pass");
  }
}

// --check metric>=value: one more entry of checks:, from the command line.
void add_checks(cfg::Node& root, const std::vector<std::string>& checks) {
  for (const std::string& c : checks) {
    cfg::Origin co{"--check " + c, 0, 0};
    auto ge = c.find(">="), le = c.find("<=");
    auto at = ge != std::string::npos ? ge : le;
    if (at == std::string::npos || at == 0)
      throw cfg::ConfigError(co, "", "expected --check metric>=value or metric<=value");
    cfg::Node entry = cfg::Node::map(co, "");
    entry.set("metric", cfg::Node::scalar(c.substr(0, at), co, ""));
    entry.set(ge != std::string::npos ? "min" : "max", cfg::Node::scalar(c.substr(at + 2), co, ""));
    cfg::Node* list = root.find("checks");
    if (!list || !list->is_seq()) list = &root.set("checks", cfg::Node());
    list->push(entry);
  }
}

}  // namespace

bool sets_an_item(const std::string& assignment) {
  return assignment.substr(0, assignment.find('=')).find('[') != std::string::npos;
}

// The scenario file, its preset under it, --set over both, then --timing-only and --check;
// validated against the schema, defaults filled.
Scenario load_scenario(const std::string& path, const Overrides& o) {
  std::string dir = fs::path(path).parent_path().string();
  Scenario s = load_scenario(cfg::load_file(path), dir.empty() ? "." : dir, o);
  s.file = path;
  return s;
}

Scenario resolve_platform(const std::string& preset, const Overrides& o) {
  const cfg::Origin origin{"the platform of preset " + preset, 0, 0};
  cfg::Node scen = cfg::Node::map(origin, "");
  scen.set("name", cfg::Node::scalar("platform", origin, "name"));
  cfg::Node& plat = scen.set("platform", cfg::Node::map(origin, "platform"));
  plat.set("preset", cfg::Node::scalar(preset, origin, "preset"));
  Overrides platform_only{o.preset, {}, false, {}, ""};  // the --set keys of the platform: section
  for (const std::string& a : o.sets)
    if (a.rfind("platform.", 0) == 0 || a.rfind("platform=", 0) == 0) platform_only.sets.push_back(a);
  return load_scenario(scen, ".", platform_only);
}

Scenario load_scenario(const cfg::Node& scen, const std::string& dir, const Overrides& o) {
  Scenario s;
  s.dir = dir;
  if (!scen.is_map()) throw cfg::ConfigError(scen.origin(), "", "a scenario must be a map of keys");
  // --set applies to the scenario before the preset is chosen, so --set platform.preset=x works;
  // one that names a list's item (traffic[0].count=10) once the lists are in.
  cfg::Node sets = cfg::Node::map(cfg::Origin{"--set", 0, 0}, "");
  std::vector<std::string> item_sets;
  for (auto& a : o.sets)
    if (!sets_an_item(a))
      cfg::set_dotted(sets, a);
    else
      item_sets.push_back(a);
  const auto [preset, preset_origin] = chosen_preset(scen, sets, o);
  cfg::Node root = cfg::Node::map(scen.origin(), "");
  if (!preset.empty()) root.set("platform", load_preset(preset, preset_origin, s.preset_file));
  s.preset = preset;
  std::vector<cfg::Node> checks;  // the compiled model's, then the scenario's
  if (!o.under.empty()) {
    const cfg::Node under = cfg::load_file(o.under);
    cfg::merge(root, under);
    if (const cfg::Node* c = under.find("checks"); c && c->is_seq()) checks = c->items();
  }
  const cfg::Node* own = scen.find("checks");
  if (own && own->is_seq())
    for (const cfg::Node& n : own->items()) checks.push_back(n);
  cfg::merge(root, scen);
  if (!checks.empty() && (!own || own->is_seq())) {  // else the schema names the scenario's checks: key
    cfg::Node& list = root.set("checks", cfg::Node());
    for (const cfg::Node& n : checks) list.push(n);
  }
  cfg::merge(root, sets);
  for (const std::string& a : item_sets) cfg::set_dotted(root, a);
  if (cfg::Node* plat = root.find("platform")) {
    plat->erase("preset");
    if (!preset.empty()) plat->set("preset", cfg::Node::scalar(preset, preset_origin, ""));
  }
  if (o.timing_only) {
    cfg::Node& run =
        root.find("run") ? *root.find("run") : root.set("run", cfg::Node::map(cfg::Origin{"--timing-only", 0, 0}, ""));
    run.set("timing_only", cfg::Node::scalar("true", cfg::Origin{"--timing-only", 0, 0}, ""));
  }
  add_checks(root, o.checks);
  for (const NotBuilt& nb : not_built_parts())
    if (const cfg::Node* n = find_path(root, nb.key))
      throw NotBuiltError(n->origin().str() + ": key '" + nb.key + "' asks for " + nb.part +
                          ", which this build of davinci-vp does not model yet. Remove the key, or run it with a build "
                          "that has that part.");
  cfg::validate_or_throw(scenario_schema(), root);
  check_bounds(root);
  s.root = std::move(root);
  return s;
}

}  // namespace dvp::platform
