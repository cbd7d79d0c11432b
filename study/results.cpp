// SPDX-License-Identifier: MIT
#include "results.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "common/config.hpp"
#include "common/error.hpp"

namespace dvp::study {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Measurements of the host, not of the simulated SoC (scripts/stats-snapshot leaves them out too).
const std::set<std::string> kHost = {"summary.host_seconds", "summary.cpu_mips_host",
                                     "summary.transactions_per_host_second", "summary.rtl_cycles_per_host_second"};

void flatten_into(const json& j, const std::string& path, std::map<std::string, json>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten_into(*it, path.empty() ? it.key() : path + "." + it.key(), out);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) flatten_into(j[i], path + "." + std::to_string(i), out);
  } else if (!kHost.count(path)) {
    out[path] = j;
  }
}

json read_json(const fs::path& p) {
  std::ifstream f(p);
  if (!f) throw Error("cannot read " + p.string(), kExitConfig);
  json j = json::parse(f, nullptr, false);
  if (j.is_discarded()) throw Error(p.string() + " is not valid JSON", kExitConfig);
  return j;
}

std::string cell(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string csv(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// The metric columns: those the study names, or every scalar of the summary any point has
// (a network's per-layer list aside), in name order.
std::vector<std::string> metric_columns(const json& study, const std::vector<std::map<std::string, json>>& stats) {
  std::vector<std::string> m = study.value("metrics", std::vector<std::string>{});
  if (!m.empty()) return m;
  std::set<std::string> all;
  for (const auto& s : stats)
    for (const auto& [k, v] : s)
      if (k.rfind("summary.", 0) == 0 && k.rfind("summary.network.layers.", 0) != 0) all.insert(k);
  return {all.begin(), all.end()};
}

// A metric the study names that no point's results have (a misspelt name) is an error, once the
// table is written: a column left empty would read as a result.
void check_metrics(const json& study, const std::vector<std::map<std::string, json>>& stats) {
  const auto ran = [](const std::map<std::string, json>& s) { return !s.empty(); };
  const auto first = std::find_if(stats.begin(), stats.end(), ran);
  if (first == stats.end()) return;  // no point ran: their errors say why
  for (const std::string& m : study.value("metrics", std::vector<std::string>{}))
    if (std::none_of(stats.begin(), stats.end(), [&](const auto& s) { return s.count(m) > 0; }))
      throw Error("the study's metric " + m + " is in no point's stats.json" + nearest_text(m, *first), kExitConfig);
}

}  // namespace

std::map<std::string, json> flatten(const json& stats) {
  std::map<std::string, json> out;
  for (auto it = stats.begin(); it != stats.end(); ++it)
    if (it.key() != "dvp") flatten_into(*it, it.key(), out);  // "dvp": the build's version
  return out;
}

std::vector<std::string> nearest_names(const std::string& name, const std::map<std::string, json>& stats) {
  // The names closest to it, up to a third of its length away (a typo, a word changed), best first.
  // Names whose lengths alone differ by more are passed over (ascend910's stats flatten to tens
  // of thousands of names).
  const std::size_t cutoff = std::max<std::size_t>(2, name.size() / 3);
  std::vector<std::pair<std::size_t, std::string>> near;
  for (const auto& [k, v] : stats) {
    if (k.size() + cutoff < name.size() || name.size() + cutoff < k.size()) continue;
    const std::size_t d = cfg::edit_distance(name, k);
    if (d <= cutoff) near.emplace_back(d, k);
  }
  std::sort(near.begin(), near.end());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < near.size() && i < 3; ++i) out.push_back(near[i].second);
  return out;
}

std::string nearest_text(const std::string& name, const std::map<std::string, json>& stats) {
  if (kHost.count(name))
    return " (a measurement of the host, which a study's table leaves out: it differs between identical runs)";
  const std::vector<std::string> near = nearest_names(name, stats);
  if (near.empty()) return " (see a point's stats.json for the names)";
  std::string t;
  for (const std::string& n : near) t += (t.empty() ? "" : ", ") + n;
  return " (the nearest names there: " + t + ")";
}

std::size_t collect(const std::string& out) {
  const json study = read_json(fs::path(out) / "study.json");
  if (!study.is_object() || !study.contains("keys") || !study["keys"].is_array() || !study.contains("points") ||
      !study["points"].is_array())
    throw Error(out + "/study.json is not a study's (no keys and points): give the folder dvp sweep wrote",
                kExitConfig);
  const std::vector<std::string> keys = study.at("keys").get<std::vector<std::string>>();
  const json& points = study.at("points");
  std::vector<json> rows;
  std::vector<std::map<std::string, json>> stats;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    char dir[24];
    std::snprintf(dir, sizeof dir, "%04zu", i);
    const fs::path p = fs::path(out) / "points" / dir;
    json row{{"point", i}, {"params", points[i]}, {"status", "not_run"}};
    if (fs::exists(p / "point.json")) {
      const json pj = read_json(p / "point.json");
      for (const char* k : {"status", "exit_code", "error", "host_seconds"})
        if (pj.contains(k)) row[k] = pj[k];
      if (pj.value("params", json()) != points[i]) row = {{"point", i}, {"params", points[i]}, {"status", "stale"}};
    }
    // Metrics of a run that ended (a stopped run's or an older point's stats.json says nothing here).
    const bool ran = row["status"] == "ok" || row["status"] == "check_failed";
    stats.push_back(ran && fs::exists(p / "stats.json") ? flatten(read_json(p / "stats.json"))
                                                        : std::map<std::string, json>{});
    bad += row["status"] != "ok" && row["status"] != "check_failed";  // a scenario's check: a result
    rows.push_back(row);
  }
  const std::vector<std::string> metrics = metric_columns(study, stats);
  std::ofstream f(fs::path(out) / "results.csv");
  f << "point";
  for (const std::string& k : keys) f << "," << csv(k);
  f << ",status,exit_code";
  for (const std::string& m : metrics) f << "," << csv(m);
  f << ",error\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    json& r = rows[i];
    r["metrics"] = json::object();
    for (const std::string& m : metrics)
      if (stats[i].count(m)) r["metrics"][m] = stats[i].at(m);
    f << i;
    for (const std::string& k : keys) f << "," << csv(cell(r["params"].value(k, json())));
    f << "," << cell(r["status"]) << "," << cell(r.value("exit_code", json()));
    for (const std::string& m : metrics) f << "," << csv(cell(r["metrics"].value(m, json())));
    f << "," << csv(cell(r.value("error", json()))) << "\n";
  }
  std::ofstream(fs::path(out) / "results.json") << json(rows).dump(2) << "\n";
  if (!f) throw OutputError("cannot write " + out + "/results.csv");
  check_metrics(study, stats);
  return bad;
}

namespace {

struct Change {
  std::string key;
  json a, b;
  double rel;  // (b - a) / |a|; infinite from 0; for text, infinite
};

// Relative change of two values; NaN when equal.
double relative(const json& a, const json& b) {
  if (a == b) return std::nan("");
  if (!a.is_number() || !b.is_number()) return INFINITY;
  const double x = a.get<double>(), y = b.get<double>();
  if (x == y) return std::nan("");
  return x == 0 ? (y > 0 ? INFINITY : -INFINITY) : (y - x) / std::fabs(x);
}

void print_change(const Change& c) {
  std::string ratio = "", sign = c.rel > 0 ? "+" : "-";
  if (c.a.is_number() && c.b.is_number() && c.a.get<double>() != 0) {
    char b[48];
    std::snprintf(b, sizeof b, "x%.4g  %+.2f%%", c.b.get<double>() / c.a.get<double>(), 100 * c.rel);
    ratio = b;
  } else if (!c.a.is_number() || !c.b.is_number()) {
    sign = "~";
  }
  std::printf("  %s %-52s %16s -> %-16s %s\n", sign.c_str(), c.key.c_str(), cell(c.a).c_str(), cell(c.b).c_str(),
              ratio.c_str());
}

}  // namespace

int diff(const std::string& a_dir, const std::string& b_dir, const DiffOptions& o) {
  const auto a = flatten(read_json(fs::path(a_dir) / "stats.json"));
  const auto b = flatten(read_json(fs::path(b_dir) / "stats.json"));
  std::set<std::string> keys;
  for (const auto& m : {a, b})
    for (const auto& [k, v] : m) keys.insert(k);
  std::vector<Change> summary, rest;
  for (const std::string& k : keys) {
    const json x = a.count(k) ? a.at(k) : json(), y = b.count(k) ? b.at(k) : json();
    const double r = relative(x, y);
    if (std::isnan(r) || std::fabs(r) < o.threshold) continue;
    (k.rfind("summary.", 0) == 0 ? summary : rest).push_back({k, x, y, r});
  }
  for (auto* v : {&summary, &rest})
    std::stable_sort(v->begin(), v->end(),
                     [](const Change& p, const Change& q) { return std::fabs(p.rel) > std::fabs(q.rel); });
  std::printf("dvp diff %s -> %s: %zu summary and %zu other keys changed", a_dir.c_str(), b_dir.c_str(), summary.size(),
              rest.size());
  if (o.threshold > 0) std::printf(" by %.3g%% or more", 100 * o.threshold);
  std::printf("\n");
  if (!summary.empty()) std::printf("summary\n");
  for (const Change& c : summary) print_change(c);
  if (!rest.empty()) std::printf("statistics\n");
  for (const Change& c : rest) print_change(c);
  int failed = 0;
  auto gate = [&](const std::map<std::string, double>& limits, int dir) {
    for (const auto& [k, lim] : limits) {
      if (!a.count(k) || !b.count(k)) throw Error("diff: no metric " + k + " in both runs' stats.json", kExitConfig);
      const double r = relative(a.at(k), b.at(k));
      if (std::isnan(r) || r * dir <= lim) continue;
      std::printf("REGRESSION %s: %s -> %s (%+.2f%%, limit %s%.3g%%)\n", k.c_str(), cell(a.at(k)).c_str(),
                  cell(b.at(k)).c_str(), 100 * r, dir > 0 ? "+" : "-", 100 * lim);
      ++failed;
    }
  };
  gate(o.max_increase, 1);
  gate(o.max_decrease, -1);
  return failed ? kExitCheckFailed : kExitOk;
}

}  // namespace dvp::study
