// SPDX-License-Identifier: MIT
// trace.json: valid JSON whatever the names hold, and slices on one track nest.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/trace.hpp"

using dvp::Tracer;
using nlohmann::json;

namespace {

json write_and_parse(Tracer& t, const std::string& file) {
  const std::string path = (std::filesystem::temp_directory_path() / file).string();
  t.write(path);
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::filesystem::remove(path);
  return json::parse(ss.str());  // throws on invalid JSON: the test fails
}

// Names of the thread_name metadata, by tid.
std::map<int, std::string> track_names(const json& j) {
  std::map<int, std::string> names;
  for (auto& e : j["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") names[e["tid"].get<int>()] = e["args"]["name"];
  return names;
}

}  // namespace

TEST(Trace, NamesWithTabQuoteBackslashAndControlCharsStayValidJson) {
  const std::string odd = "task\t\"one\"\\two\x01\x1f end";
  Tracer t;
  t.configure(true, 100, 0);
  Tracer::Lane lane = t.lane("proc " + odd, "lane " + odd);
  lane.slice(odd.c_str(), 1000, 2000);
  lane.instant(odd.c_str(), 1500);
  json j = write_and_parse(t, "dvp-test-trace-names.json");
  bool slice = false, instant = false, process = false, thread = false;
  for (auto& e : j["traceEvents"]) {
    slice |= e["ph"] == "X" && e["name"] == odd;
    instant |= e["ph"] == "i" && e["name"] == odd;
    process |= e["ph"] == "M" && e["args"]["name"] == "proc " + odd;
    thread |= e["ph"] == "M" && e["args"]["name"] == "lane " + odd;
  }
  EXPECT_TRUE(slice && instant && process && thread) << j.dump(1);
}

TEST(Trace, OverlappingSlicesGoToOneTrackPerOutstandingSlot) {
  Tracer t;
  t.configure(true, 100, 0);
  Tracer::Lane lane = t.lane("requesters", "rd0");
  // Three transactions in flight at once, then one after the second has finished.
  lane.slice("read", 0, 100);
  lane.slice("write", 10, 50);
  lane.slice("read", 20, 200);  // same name as the first, which it overlaps: merged
  lane.slice("atomic", 40, 90);
  lane.slice("write", 60, 70);  // slot #1 is free again at 50
  json j = write_and_parse(t, "dvp-test-trace-slots.json");
  auto names = track_names(j);
  std::map<std::string, std::vector<std::pair<double, std::string>>> on;
  for (auto& e : j["traceEvents"])
    if (e["ph"] == "X") on[names[e["tid"].get<int>()]].push_back({e["ts"].get<double>() * 1e6, e["name"]});
  ASSERT_EQ(on.size(), 3u) << j.dump(1);
  EXPECT_EQ(on["rd0 #0"], (std::vector<std::pair<double, std::string>>{{0, "read x2"}}));
  EXPECT_EQ(on["rd0 #1"], (std::vector<std::pair<double, std::string>>{{10, "write"}, {60, "write"}}));
  EXPECT_EQ(on["rd0 #2"], (std::vector<std::pair<double, std::string>>{{40, "atomic"}}));
}

TEST(Trace, ALaneThatNeverOverlapsKeepsItsName) {
  Tracer t;
  t.configure(true, 100, 0);
  Tracer::Lane lane = t.lane("dram", "soc.dram.mc0.ch0");
  lane.slice("read", 0, 100);
  lane.slice("write", 100, 200);
  json j = write_and_parse(t, "dvp-test-trace-one.json");
  auto names = track_names(j);
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names.begin()->second, "soc.dram.mc0.ch0");
}
