// SPDX-License-Identifier: MIT
// The configuration tree and schema: origins, merging, overrides, errors.
#include <gtest/gtest.h>

#include "aicore/aicore_config.hpp"
#include "common/config.hpp"
#include "helpers.hpp"
#include "schema.hpp"

#include <fstream>

using namespace dvp;
using namespace dvp::cfg;

TEST(ConfigTree, RemembersFileLineAndPath) {
  Node n = from_yaml_text("a:\n  b: 3\n  c: [1, 2]\n", "f.yaml");
  const Node& b = n.at("a").at("b");
  EXPECT_EQ(b.origin().str(), "f.yaml:2:3");  // the key
  EXPECT_EQ(b.path(), "a.b");
  EXPECT_EQ(b.as_int(), 3);
  EXPECT_EQ(n.at("a").get_uint_list("c"), (std::vector<std::uint64_t>{1, 2}));
}

TEST(ConfigTree, NumbersInHexWithUnderscoresAndExponent) {
  Node n = from_yaml_text("a: 0x8000_0000\nb: 1e6\nc: 1.5\n", "f");
  EXPECT_EQ(n.get_uint("a"), 0x80000000u);
  EXPECT_EQ(n.get_uint("b"), 1000000u);
  EXPECT_THROW(n.get_int("c"), ConfigError);
  EXPECT_DOUBLE_EQ(n.get_double("c"), 1.5);
}

TEST(ConfigTree, MergeOverridesLeavesAndKeepsTheRest) {
  Node base = from_yaml_text("x: {a: 1, b: 2}\ny: 5\n", "base.yaml");
  Node over = from_yaml_text("x: {b: 3}\n", "over.yaml");
  merge(base, over);
  EXPECT_EQ(base.at("x").get_int("a"), 1);
  EXPECT_EQ(base.at("x").get_int("b"), 3);
  EXPECT_EQ(base.at("x").at("b").origin().file, "over.yaml");
  EXPECT_EQ(base.at("x").at("b").path(), "x.b");
  EXPECT_EQ(base.get_int("y"), 5);
}

TEST(ConfigTree, SetDottedCreatesAndReplacesWithItsOrigin) {
  Node n = from_yaml_text("p: {q: 1}\n", "f");
  set_dotted(n, "p.q=7");
  set_dotted(n, "p.r.s=[1, 2, 3]");
  EXPECT_EQ(n.at("p").get_int("q"), 7);
  EXPECT_EQ(n.at("p").at("q").origin().file, "--set p.q=7");
  EXPECT_EQ(n.at("p").at("r").get_uint_list("s").size(), 3u);
  EXPECT_THROW(set_dotted(n, "novalue"), ConfigError);
  EXPECT_THROW(set_dotted(n, "p.q.z=1"), ConfigError);  // q is a value, not a section
}

TEST(ConfigTree, DuplicateKeyIsAnError) {
  try {
    from_yaml_text("a: 1\nb: 2\na: 3\n", "dup.yaml");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("dup.yaml:3:1: key 'a': duplicate key"), std::string::npos) << e.what();
  }
}

// The value budget (a million) is checked on the parser's events before any node is built, and
// counts what the builder would: a node per value and item, an alias as its anchor's whole
// subtree, map keys aside. Exactly at the budget the file loads; one value more names the place.
static std::string values_text(std::size_t aliases, std::size_t scalars) {
  std::string t = "m: &m {p: x, q: [y, z]}\nb: [";  // m: 5 values (the map, p, q, y, z)
  for (std::size_t i = 0; i < aliases; ++i) t += i ? ", *m" : "*m";
  t += "]\nc: [";
  for (std::size_t i = 0; i < scalars; ++i) t += i ? ", x" : "x";
  return t + "]\n";
}

TEST(ConfigTree, ValueBudgetCountsAliasesAsTheBuilderDoes) {
  // the root, m, b and c: 1 + 5 + (1 + 5 x 199000) + (1 + 4992) = 1000000
  Node n = from_yaml_text(values_text(199000, 4992), "f.yaml");
  EXPECT_EQ(n.at("c").items().size(), 4992u);
  try {
    from_yaml_text(values_text(199000, 4993), "f.yaml");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("key 'c[4992]': more than 1000000 values"), std::string::npos) << e.what();
  }
}

TEST(Schema, ReportsEveryProblemWithItsPlace) {
  Spec s("", Type::Section, "root");
  Spec& sec = s.section("dram", "d");
  sec.param("banks", Type::Int, "").range(1, 16).power_of_two();
  sec.param("policy", Type::Enum, "").choices({"open", "closed"});
  sec.param("rate", Type::Float, "").defaults("2.5");
  Node n = from_yaml_text("dram:\n  banks: 6\n  policy: ajar\n  color: red\n", "x.yaml");
  std::vector<std::string> errors;
  s.validate(n, errors);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_NE(errors[0].find("x.yaml:4:3: key 'dram.color': unknown key 'color'"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("x.yaml:2:3: key 'dram.banks': must be a power of two"), std::string::npos) << errors[1];
  EXPECT_NE(errors[2].find("key 'dram.policy': 'ajar' is not one of: open, closed"), std::string::npos) << errors[2];
  // The default was filled in, marked as such.
  EXPECT_EQ(n.at("dram").at("rate").origin().file, "default");
}

TEST(Scenario, PresetThenScenarioThenCommandLine) {
  auto s = test::scenario("name: t\nplatform:\n  preset: ascend310\n  l2: {ways: 8}\n", {"platform.l2.hit_cycles=99"});
  const Node& l2 = s.root.at("platform").at("l2");
  EXPECT_EQ(l2.get_uint("ways"), 8u);         // scenario
  EXPECT_EQ(l2.get_uint("hit_cycles"), 99u);  // --set
  EXPECT_EQ(l2.get_uint("size_kib"), 8192u);  // preset
  EXPECT_NE(l2.at("size_kib").origin().file.find("ascend310.yaml"), std::string::npos);
  EXPECT_EQ(s.root.at("run").at("timing_only").origin().file, "default");
}

TEST(Scenario, CommandLinePresetWins) {
  auto s = dvp::platform::load_scenario(test::write_temp("p.yaml", "name: t\nplatform: {preset: ascend310}\n"),
                                        dvp::platform::Overrides{"ascend910", {}, false, {}, ""});
  EXPECT_EQ(s.root.at("platform").get_string("name"), "ascend910");
  EXPECT_EQ(s.preset, "ascend910");
}

TEST(Scenario, EveryPresetValueCarriesASourceComment) {
  // hardware-facts.md asks that every preset number say where it came from: a comment on its
  // line, or a comment block right above it.
  for (const char* p : {"ascend310", "ascend910"}) {
    std::ifstream f(std::string(DVP_SOURCE_DIR) + "/scenarios/presets/" + p + ".yaml");
    std::string line;
    bool comment_above = false;
    for (int n = 1; std::getline(f, line); ++n) {
      const std::size_t first = line.find_first_not_of(' ');
      const bool is_comment = first != std::string::npos && line[first] == '#';
      const std::size_t colon = line.find(':');
      const std::size_t value = colon == std::string::npos ? std::string::npos : line.find_first_not_of(' ', colon + 1);
      const bool has_value = !is_comment && value != std::string::npos && line[value] != '#';
      if (has_value && line.find("name:") == std::string::npos) {
        EXPECT_TRUE(line.find('#') != std::string::npos || comment_above)
            << p << ".yaml:" << n << ": value without a source: " << line;
      }
      comment_above = is_comment;
    }
  }
}

TEST(Scenario, NoPresetPeakBeatsItsDataSheet) {
  // The published peaks (../shared/reference/hardware-facts.md, chip level): a simulated chip
  // must never be faster than the one it models. fp16 TFLOPS; int8 TOPS is twice that.
  const std::pair<const char*, double> published[] = {{"ascend310", 8e12}, {"ascend910", 256e12}};
  for (auto [preset, flops] : published) {
    auto s = test::scenario(std::string("name: t\nplatform: {preset: ") + preset + "}\n");
    const auto core = dvp::aicore::AiCoreConfig::from(s.root.at("platform").at("aicore"));
    EXPECT_LE(core.peak_flops(), flops * (1 + 1e-12)) << preset;
    EXPECT_GE(core.peak_flops(), flops * 0.99) << preset << ": more than 1% below the data sheet";
  }
}

TEST(Scenario, ResolvedConfigDumpIsYamlThatReadsBackTheSame) {
  // `dvp config` output can be saved and run as a scenario of its own.
  auto s = dvp::platform::load_scenario(std::string(DVP_SOURCE_DIR) + "/scenarios/memory/mixed.yaml", {});
  std::string once = dump(s.root, false);
  Node again = from_yaml_text(once, "dump.yaml");
  EXPECT_EQ(dump(again, false), once);
  EXPECT_EQ(again.at("traffic").items().size(), 2u);
  EXPECT_EQ(again.at("platform").at("dram").get_string_list("address_mapping").front(), "column:2");
}

// The rule docs/config-reference.md states: a time key says its unit in its name, simulated
// time in ns and host time in seconds; no key is in ps.
static void check_time_units(const Spec& s, const std::string& path) {
  auto ends = [](const std::string& n, const std::string& tail) {
    return n.size() >= tail.size() && n.compare(n.size() - tail.size(), tail.size(), tail) == 0;
  };
  const std::string& n = s.name();
  const std::string& u = s.unit_name();
  EXPECT_FALSE(ends(n, "_ps") || u == "ps") << path << ": no configuration key is in picoseconds";
  if (ends(n, "_ns") || u == "ns") {
    EXPECT_TRUE(ends(n, "_ns") && u == "ns") << path << " (unit '" << u << "')";
  }
  if (ends(n, "_seconds") || u == "s") {
    EXPECT_TRUE(ends(n, "_seconds") && u == "s") << path << " (unit '" << u << "')";
  }
  for (auto& c : s.children()) check_time_units(*c, path + "." + c->name());
}

TEST(Schema, TimeKeysNameTheirUnit) { check_time_units(dvp::platform::scenario_schema(), ""); }
