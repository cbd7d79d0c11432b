// SPDX-License-Identifier: MIT
#include "study.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <unistd.h>

#include "scenario.hpp"

namespace dvp::study {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxPoints = 1000000;

const std::set<std::string> kTopKeys = {"name",        "description",  "scenario", "preset", "timing_only",
                                        "set",         "time_limit_s", "grid",     "zip",    "sample",
                                        "sensitivity", "metrics",      "run_args", "plots"};

// A number as YAML reads it back: an integer without a point, anything else in 12 digits.
std::string number_text(double v, bool integer) {
  if (integer) return std::to_string(std::llround(v));
  char b[40];
  std::snprintf(b, sizeof b, "%.12g", v);
  return b;
}

bool integer_text(const std::string& t) {
  if (t.empty()) return false;
  std::size_t i = t[0] == '-' ? 1 : 0;
  return i < t.size() && std::all_of(t.begin() + long(i), t.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A value as --set takes it, on one line: a scalar's text (quoted when YAML would read it
// otherwise), a map or a list in flow style ({type: lpddr4, controllers: 8}).
std::string flow_text(const cfg::Node& n) {
  if (n.is_scalar()) {
    const std::string& t = n.text();
    if (!t.empty() && t.find_first_of(",:{}[]#&*!|>'\"%@`") == std::string::npos && t.front() != ' ' && t.back() != ' ')
      return t;
    std::string q = "\"";
    for (char c : t) q += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
  }
  std::string out = n.is_map() ? "{" : "[";
  if (n.is_map())
    for (const auto& [k, x] : n.entries()) out += (out.size() > 1 ? ", " : "") + k + ": " + flow_text(x);
  else
    for (const cfg::Node& x : n.items()) out += (out.size() > 1 ? ", " : "") + flow_text(x);
  return out + (n.is_map() ? "}" : "]");
}

// The values of one axis: a list of values (a value may be a map, merged into the key's section
// as --set merges it), or a range {from, to, step} (both ends included).
std::vector<std::string> axis(const cfg::Node& n) {
  std::vector<std::string> v;
  if (n.is_seq()) {
    for (const cfg::Node& x : n.items()) {
      if (x.is_null()) x.fail("an empty value");
      v.push_back(flow_text(x));
    }
    if (v.empty()) n.fail("an axis needs at least one value");
    return v;
  }
  if (!n.is_map()) n.fail("give a list of values or a range {from: A, to: B, step: S}");
  for (const auto& [k, x] : n.entries())
    if (k != "from" && k != "to" && k != "step") x.fail("a range takes from, to and step, not '" + k + "'");
  const double from = n.get_double("from"), to = n.get_double("to"), step = n.get_double("step");
  if (!(step > 0)) n.at("step").fail("the step must be positive");
  if (to < from) n.at("to").fail("the range ends before it starts");
  const double count = std::floor((to - from) / step * (1 + 1e-12)) + 1;
  if (count > 100000) n.fail("a range of " + number_text(count, true) + " values: at most 100000");
  const bool integer = integer_text(n.at("from").text()) && integer_text(n.at("step").text());
  for (long i = 0; i < long(count); ++i) v.push_back(number_text(from + double(i) * step, integer));
  return v;
}

// splitmix64: a small generator whose sequence is fixed by its definition, the same on every
// host and library (the standard distributions are not).
struct Rng {
  std::uint64_t x;
  std::uint64_t next() {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double unit() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::size_t below(std::size_t n) { return std::size_t(next() % n); }
};

struct Range {
  double min, max;
  bool integer, log;
};

Range read_range(const cfg::Node& n) {
  if (!n.is_map()) n.fail("give {min: A, max: B} (and integer: true, log: true if wanted)");
  for (const auto& [k, x] : n.entries())
    if (k != "min" && k != "max" && k != "integer" && k != "log") x.fail("a range takes min, max, integer, log");
  Range r{n.get_double("min"), n.get_double("max"), n.has("integer") && n.get_bool("integer"),
          n.has("log") && n.get_bool("log")};
  if (!(r.max >= r.min)) n.at("max").fail("max is below min");
  if (r.log && !(r.min > 0)) n.at("min").fail("a log range needs min > 0");
  if (r.integer && std::ceil(r.min) > std::floor(r.max)) n.fail("no integer between min and max");
  return r;
}

std::string sample_value(const Range& r, double u) {
  double v = r.log ? std::exp(std::log(r.min) + u * (std::log(r.max) - std::log(r.min))) : r.min + u * (r.max - r.min);
  if (r.integer) v = std::min(std::max(std::round(v), std::ceil(r.min)), std::floor(r.max));
  return number_text(v, r.integer);
}

// sample: `points` rows over its ranges; lhs puts one point in each of `points` equal strata of
// every range (the strata matched at random), random draws each value alone.
std::vector<std::vector<std::string>> samples(const cfg::Node& n, std::vector<std::string>& keys,
                                              std::vector<cfg::Origin>& origins) {
  for (const auto& [k, x] : n.entries())
    if (k != "method" && k != "points" && k != "seed" && k != "ranges")
      x.fail("sample takes method, points, seed and ranges, not '" + k + "'");
  const std::string method = n.get_string("method");
  if (method != "random" && method != "lhs") n.at("method").fail("method is random or lhs");
  const std::uint64_t count = n.get_uint("points");
  if (count < 1 || count > 100000) n.at("points").fail("1 to 100000 points");
  Rng rng{n.has("seed") ? n.get_uint("seed") : 1};
  const cfg::Node& ranges = n.at("ranges");
  if (!ranges.is_map() || ranges.entries().empty()) ranges.fail("ranges maps each key to {min, max}");
  std::vector<std::vector<std::string>> rows(count);
  for (const auto& [k, x] : ranges.entries()) {
    keys.push_back(k), origins.push_back(x.origin());
    const Range r = read_range(x);
    std::vector<std::size_t> strata(count);
    for (std::size_t i = 0; i < count; ++i) strata[i] = i;
    for (std::size_t i = count; i > 1; --i) std::swap(strata[i - 1], strata[rng.below(i)]);  // Fisher-Yates
    for (std::size_t i = 0; i < count; ++i) {
      const double u = method == "lhs" ? (double(strata[i]) + rng.unit()) / double(count) : rng.unit();
      rows[i].push_back(sample_value(r, u));
    }
  }
  return rows;
}

// The zip part: lists of one length; row i takes each list's i-th value.
std::vector<std::vector<std::string>> zipped(const cfg::Node& n, std::vector<std::string>& keys,
                                             std::vector<cfg::Origin>& origins) {
  if (!n.is_map() || n.entries().empty()) n.fail("zip maps each key to a list of values");
  std::vector<std::vector<std::string>> rows;
  for (const auto& [k, x] : n.entries()) {
    keys.push_back(k), origins.push_back(x.origin());
    const std::vector<std::string> v = axis(x);
    if (rows.empty()) rows.resize(v.size());
    if (v.size() != rows.size())
      x.fail(std::to_string(v.size()) + " values; the zip's first list has " + std::to_string(rows.size()));
    for (std::size_t i = 0; i < v.size(); ++i) rows[i].push_back(v[i]);
  }
  return rows;
}

// The grid part: the cartesian product of its axes, the first axis varying slowest.
std::vector<std::vector<std::string>> grid(const cfg::Node& n, std::vector<std::string>& keys,
                                           std::vector<cfg::Origin>& origins) {
  if (!n.is_map() || n.entries().empty()) n.fail("grid maps each key to a list of values or a range");
  std::vector<std::vector<std::string>> rows{{}};
  for (const auto& [k, x] : n.entries()) {
    keys.push_back(k), origins.push_back(x.origin());
    const std::vector<std::string> values = axis(x);
    if (rows.size() * values.size() > kMaxPoints) x.fail("the grid has more than a million points");
    std::vector<std::vector<std::string>> next;
    for (const auto& r : rows)
      for (const std::string& v : values) {
        next.push_back(r);
        next.back().push_back(v);
      }
    rows = std::move(next);
  }
  return rows;
}

// Rows of a product: each row of `a` followed by each row of `b`.
std::vector<std::vector<std::string>> product(const std::vector<std::vector<std::string>>& a,
                                              const std::vector<std::vector<std::string>>& b, const cfg::Node& n) {
  if (a.size() * b.size() > kMaxPoints) n.fail("the study has more than a million points");
  std::vector<std::vector<std::string>> out;
  for (const auto& x : a)
    for (const auto& y : b) {
      out.push_back(x);
      out.back().insert(out.back().end(), y.begin(), y.end());
    }
  return out;
}

void read_sensitivity(const cfg::Node& n, Sensitivity& s) {
  s.origin = n.origin();
  for (const auto& [k, x] : n.entries())
    if (k != "factor" && k != "parameters" && k != "metric")
      x.fail("sensitivity takes factor, parameters and metric, not '" + k + "'");
  if (n.has("factor")) s.factor = n.get_double("factor");
  if (!(s.factor > 1)) n.at("factor").fail("the factor must be above 1 (each key is divided and multiplied by it)");
  s.parameters = n.get_string_list("parameters");
  if (s.parameters.empty()) n.at("parameters").fail("name at least one parameter");
  if (n.has("metric")) s.metric = n.get_string("metric");
}

void read_plots(const cfg::Node& n, std::vector<PlotSpec>& plots) {
  if (!n.is_seq()) n.fail("plots is a list of {y: METRIC, x: KEY, hue: KEY, kind: line|bar|heatmap}");
  for (const cfg::Node& p : n.items()) {
    if (!p.is_map()) p.fail("a plot is {y: METRIC, x: KEY, hue: KEY, kind: line|bar|heatmap}");
    for (const auto& [k, x] : p.entries())
      if (k != "y" && k != "x" && k != "hue" && k != "kind") x.fail("a plot takes y, x, hue and kind, not '" + k + "'");
    PlotSpec ps{p.get_string("y"), p.has("x") ? p.get_string("x") : "", p.has("hue") ? p.get_string("hue") : "",
                p.has("kind") ? p.get_string("kind") : "line"};
    if (ps.kind != "line" && ps.kind != "bar" && ps.kind != "heatmap") p.at("kind").fail("line, bar or heatmap");
    plots.push_back(ps);
  }
}

void read_points(const cfg::Node& root, Study& s) {
  std::vector<std::vector<std::string>> rows{{}};
  if (const cfg::Node* g = root.find("grid")) rows = product(rows, grid(*g, s.keys, s.key_origin), *g);
  if (const cfg::Node* z = root.find("zip")) rows = product(rows, zipped(*z, s.keys, s.key_origin), *z);
  if (const cfg::Node* m = root.find("sample")) rows = product(rows, samples(*m, s.keys, s.key_origin), *m);
  for (std::size_t i = 0; i < s.keys.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (s.keys[i] == s.keys[j])
        throw cfg::ConfigError(s.key_origin[i], s.keys[i],
                               "varied twice (also at line " + std::to_string(s.key_origin[j].line) + ")");
  s.points = std::move(rows);
}

}  // namespace

Study load_study(const std::string& path) {
  const cfg::Node root = cfg::load_file(path);
  if (!root.is_map()) root.fail("a study is a map (name, scenario, grid, ...)");
  for (const auto& [k, x] : root.entries())
    if (!kTopKeys.count(k)) x.fail("unknown key '" + k + "' in a study");
  Study s;
  s.file = path;
  s.name = root.has("name") ? root.get_string("name") : fs::path(path).stem().string();
  if (root.has("description")) s.description = root.get_string("description");
  const fs::path scen = root.get_string("scenario");
  s.scenario = fs::absolute(scen.is_relative() ? fs::path(path).parent_path() / scen : scen).lexically_normal();
  if (!fs::exists(s.scenario)) root.at("scenario").fail("no such file: " + s.scenario);
  if (root.has("preset")) s.preset = root.get_string("preset");
  if (root.has("timing_only")) s.timing_only = root.get_bool("timing_only");
  if (root.has("set")) s.sets = root.get_string_list("set");
  if (root.has("run_args")) s.run_args = root.get_string_list("run_args");
  if (root.has("time_limit_s")) s.time_limit_s = root.get_double("time_limit_s");
  if (s.time_limit_s < 0) root.at("time_limit_s").fail("a limit in seconds, 0 for the scenario's own");
  if (root.has("metrics")) s.metrics = root.get_string_list("metrics");
  if (const cfg::Node* n = root.find("sensitivity")) read_sensitivity(*n, s.sensitivity);
  if (const cfg::Node* n = root.find("plots")) read_plots(*n, s.plots);
  read_points(root, s);
  return s;
}

std::vector<std::string> point_sets(const Study& s, std::size_t i) {
  std::vector<std::string> sets = s.sets;
  for (std::size_t k = 0; k < s.keys.size(); ++k) sets.push_back(s.keys[k] + "=" + s.points.at(i)[k]);
  return sets;
}

namespace {

bool is_onnx(const std::string& p) { return fs::path(p).extension() == ".onnx"; }

// The configuration a point runs with; an ONNX model's is its preset's (the compiled scenario
// adds no platform key), loaded through a scenario of the platform alone.
platform::Scenario resolve(const Study& s, const std::vector<std::string>& sets) {
  platform::Overrides ov{s.preset, sets, s.timing_only, {}, ""};
  if (!is_onnx(s.scenario)) return platform::load_scenario(s.scenario, ov);
  const fs::path tmp = fs::temp_directory_path() / ("dvp-study-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(tmp) << "name: " << fs::path(s.scenario).stem().string()
                     << "\nplatform: {preset: " << (s.preset.empty() ? "ascend310" : s.preset) << "}\n";
  try {
    platform::Scenario r = platform::load_scenario(tmp.string(), ov);
    fs::remove(tmp);
    return r;
  } catch (...) {
    fs::remove(tmp);
    throw;
  }
}

}  // namespace

void validate_points(const Study& s) {
  // Each value of each key once (with the other keys as at the first point that has it): a wrong
  // key or value is found without loading the scenario once per point.
  std::set<std::pair<std::size_t, std::string>> seen;
  for (std::size_t i = 0; i < s.points.size(); ++i)
    for (std::size_t k = 0; k < s.keys.size(); ++k) {
      if (!seen.insert({k, s.points[i][k]}).second) continue;
      try {
        resolve(s, point_sets(s, i));
      } catch (const Error& e) {
        throw cfg::ConfigError(
            s.key_origin[k], s.keys[k],
            "point " + std::to_string(i) + " (" + s.keys[k] + "=" + s.points[i][k] + ") does not load: " + e.what());
      }
    }
  if (s.keys.empty()) resolve(s, s.sets);
}

void sensitivity_points(Study& s) {
  const Sensitivity& v = s.sensitivity;
  if (v.parameters.empty()) throw Error(s.file + ": --sensitivity needs a sensitivity: section", kExitConfig);
  s.sensitivity.on = true;
  const platform::Scenario base = resolve(s, s.sets);
  std::vector<std::string> values;
  for (const std::string& key : v.parameters) {
    const cfg::Node* n = cfg::find_dotted(base.root, key, v.origin);  // traffic[0].count as --set names it
    if (!n || !n->is_scalar())
      throw cfg::ConfigError(v.origin, "sensitivity.parameters",
                             key + " is not a value of the scenario's resolved configuration");
    values.push_back(n->text());
  }
  s.keys = v.parameters;
  s.key_origin.assign(s.keys.size(), v.origin);
  s.points = {values};
  for (std::size_t k = 0; k < values.size(); ++k) {
    char* end = nullptr;
    const double x = std::strtod(values[k].c_str(), &end);
    if (end == values[k].c_str() || *end)
      throw cfg::ConfigError(v.origin, "sensitivity.parameters",
                             v.parameters[k] + " is '" + values[k] + "', not a number to scale");
    const bool integer = integer_text(values[k]);
    for (double f : {1 / v.factor, v.factor}) {
      s.points.push_back(values);
      s.points.back()[k] = number_text(integer ? std::max(1.0, std::round(x * f)) : x * f, integer);
    }
  }
}

}  // namespace dvp::study
