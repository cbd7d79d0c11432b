// SPDX-License-Identifier: MIT
// The whole memory system: data integrity through ring + L2 + DRAM, timing-only runs,
// determinism, and statistics documented in docs/models.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "common/stats.hpp"
#include "helpers.hpp"
#include "reference.hpp"
#include "run.hpp"
#include "soc.hpp"

using namespace dvp;

namespace {

// A small L2 (64 KiB) in front of a random read/write mix over 1 MiB: lines are evicted dirty
// and read back from DRAM many times.
const char* kIntegrity = R"(
name: integrity
platform: {preset: ascend310}
traffic:
  - name: rw
    instances: 2
    pattern: random
    access_bytes: 256
    region_bytes: 1048576
    count: 6000
    read_fraction: 0.5
    outstanding: 8
    verify: true
)";

std::vector<std::string> small_l2() { return {"platform.l2.size_kib=64", "platform.l2.ways=4"}; }

}  // namespace

TEST(Integrity, RandomDataThroughRingL2AndDramReadsBackIdentical) {
  auto s = test::scenario(kIntegrity, small_l2());
  platform::Soc soc("soc", s);
  sc_core::sc_start();
  std::uint64_t wb = 0, verified = 0, errors = 0;
  for (auto& hn : soc.l2_slices()) wb += hn->writebacks();
  for (auto& g : soc.requesters()) {
    errors += g->verify_errors();
    EXPECT_TRUE(g->done());
  }
  auto j = soc.stats().to_json();
  for (auto& g : soc.requesters()) verified += j[g->name()]["verified_bytes"].get<std::uint64_t>();
  EXPECT_GT(wb, 1000u) << "evictions did not happen: the test would not exercise DRAM";
  EXPECT_GT(verified, 100000u);
  EXPECT_EQ(errors, 0u);
}

namespace {
// Overwrites all of DRAM behind the caches' back at `when`.
struct Corrupter : sc_core::sc_module {
  dram::Storage& mem;
  Tick when;
  Corrupter(sc_core::sc_module_name n, dram::Storage& m, Tick w) : sc_module(n), mem(m), when(w) {
    SC_HAS_PROCESS(Corrupter);
    SC_THREAD(run);
  }
  void run() {
    wait(to_sc(when));
    std::memset(mem.data(), 0x5A, 2 << 20);
  }
};
}  // namespace

TEST(Integrity, TheCheckCatchesCorruptedMemory) {
  // Negative control for the test above: the same run with DRAM overwritten half-way must
  // report mismatches.
  auto s = test::scenario(kIntegrity, small_l2());
  platform::Soc soc("soc", s);
  Corrupter c("corrupter", soc.storage(), 20 * 1000 * 1000);  // 20 us
  sc_core::sc_start();
  std::uint64_t errors = 0;
  for (auto& g : soc.requesters()) errors += g->verify_errors();
  EXPECT_GT(errors, 0u);
  EXPECT_NE(soc.requesters()[0]->first_error().find("returned 0x5a"), std::string::npos)
      << soc.requesters()[0]->first_error();
}

TEST(Integrity, TimingOnlyRunTakesTheSameTimeAsAFunctionalOne) {
  // Moving data must not change timing: run functional here and timing-only in a child dvp.
  auto s = test::scenario(kIntegrity, small_l2());
  platform::RunOptions o{std::string(DVP_BIN_DIR) + "/../test-out/integrity-functional", true, ""};
  auto r = platform::run_scenario(s, o);
  EXPECT_EQ(r.exit_code, 0);
  std::string path = test::write_temp("integrity.yaml", kIntegrity);
  std::string out = std::string(DVP_BIN_DIR) + "/../test-out/integrity-timing-only";
  std::string cmd = std::string(DVP_BIN_DIR) + "/dvp run " + path +
                    " --set platform.l2.size_kib=64 --set platform.l2.ways=4 --timing-only --quiet --out " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(out + "/stats.json");
  auto t = nlohmann::json::parse(f);
  EXPECT_EQ(t["summary"]["simulated_ns"], r.stats["summary"]["simulated_ns"]);
  EXPECT_EQ(t["summary"]["dram_bytes_read"], r.stats["summary"]["dram_bytes_read"]);
  EXPECT_EQ(t["summary"]["timing_only"], true);
}

TEST(Integrity, TimingOnlyKernelRunTakesTheSameTime) {
  // The AI Cores skip the arithmetic and the bulk data in a timing-only run; the time must not
  // change, and the run must not pretend to have checked the output.
  std::string scen = std::string(DVP_SOURCE_DIR) + "/scenarios/kernels/gemm-fp16.yaml";
  std::string base = std::string(DVP_BIN_DIR) + "/../test-out/gemm-timing-";
  nlohmann::json runs[2];
  for (int i = 0; i < 2; ++i) {
    std::string cmd = std::string(DVP_BIN_DIR) + "/dvp run " + scen + " --quiet --no-trace --out " + base +
                      std::to_string(i) + (i ? " --timing-only" : "");
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream f(base + std::to_string(i) + "/stats.json");
    runs[i] = nlohmann::json::parse(f);
  }
  EXPECT_EQ(runs[0]["summary"]["simulated_ns"], runs[1]["summary"]["simulated_ns"]);
  EXPECT_EQ(runs[0]["summary"]["achieved_tflops"], runs[1]["summary"]["achieved_tflops"]);
  EXPECT_EQ(runs[0]["soc.launcher"]["kernels"][0]["passed"], true);
  EXPECT_EQ(runs[1]["soc.launcher"]["kernels"][0]["checked"], false);
}

namespace {
platform::Scenario gemm_fp16() {
  return platform::load_scenario(std::string(DVP_SOURCE_DIR) + "/scenarios/kernels/gemm-fp16.yaml",
                                 platform::Overrides{"", {"run.trace=false"}, false, {}, ""});
}
}  // namespace

// A check reads a kernel's memory back in bulk (DRAM's bytes, the L2 slices' dirty lines over
// them): it must read what the ring's debug reads, 128 bytes at a time, answer. After a GEMM on
// ascend310 (several slices, the XOR hash) the output's lines are dirty in the L2, so the bulk
// read differs from DRAM's bytes there (else this test could not see a slice's overlay missing).
TEST(Integrity, ABulkReadBackIsWhatTheRingsDebugReadsAnswer) {
  platform::Soc soc("soc", gemm_fp16());
  sc_core::sc_start();
  platform::KernelLauncher& l = *soc.launcher();
  ASSERT_TRUE(l.done());
  ASSERT_GT(soc.l2_slices().size(), 1u);
  std::uint64_t lo = std::numeric_limits<std::uint64_t>::max(), hi = 0;
  for (const auto& p : l.memory_map()) lo = std::min(lo, p.base), hi = std::max(hi, p.base + p.bytes);
  lo += 24, hi += 72;  // neither end on a line: the ends of a range are pieces of lines
  std::vector<std::uint8_t> bulk(hi - lo), by_ring(hi - lo);
  l.read_back_into(lo, bulk.data(), bulk.size());
  l.set_bulk_read(nullptr);
  l.read_back_into(lo, by_ring.data(), by_ring.size());
  EXPECT_TRUE(bulk == by_ring);
  const std::uint8_t* dram = soc.storage().read_at(lo - soc.dram_base());
  std::uint64_t from_l2 = 0;
  for (std::uint64_t i = 0; i < bulk.size(); ++i) from_l2 += bulk[i] != dram[i];
  EXPECT_GT(from_l2, 100000u) << "the output's lines are not dirty in the L2: the test cannot see the overlay";
}

// The bulk read takes only what is all DRAM; anything else is read through the ring, whose
// failure names the address.
TEST(Integrity, ABulkReadRefusesWhatIsNotAllDramAndTheRingNamesTheAddress) {
  platform::Soc soc("soc", gemm_fp16());
  sc_core::sc_start();
  const std::uint64_t base = soc.dram_base(), end = base + soc.storage().size();
  std::vector<std::uint8_t> buf(256, 0xEE);
  EXPECT_TRUE(soc.bulk_read(end - 64, buf.data(), 64));
  EXPECT_TRUE(soc.bulk_read(end, buf.data(), 0));
  std::fill(buf.begin(), buf.end(), 0xEE);
  EXPECT_FALSE(soc.bulk_read(end - 64, buf.data(), 128));
  EXPECT_FALSE(soc.bulk_read(end, buf.data(), 1));
  EXPECT_FALSE(soc.bulk_read(~std::uint64_t(0) - 8, buf.data(), 64));  // its end past 2^64
  if (base >= 64) {
    EXPECT_FALSE(soc.bulk_read(base - 64, buf.data(), 128));
  }
  EXPECT_TRUE(std::all_of(buf.begin(), buf.end(), [](std::uint8_t b) { return b == 0xEE; }))
      << "a refused bulk read wrote";
  try {
    soc.launcher()->read_back_into(end - 64, buf.data(), 128);
    ADD_FAILURE() << "a read back past the end of DRAM did not fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read back " + hex(end)), std::string::npos) << e.what();
  }
}

TEST(Determinism, SameScenarioSameCyclesAndBytes) {
  std::string scen = std::string(DVP_SOURCE_DIR) + "/scenarios/memory/mixed.yaml";
  std::string base = std::string(DVP_BIN_DIR) + "/../test-out/determinism-";
  nlohmann::json runs[2];
  for (int i = 0; i < 2; ++i) {
    std::string cmd = std::string(DVP_BIN_DIR) + "/dvp run " + scen + " --quiet --out " + base + std::to_string(i);
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream f(base + std::to_string(i) + "/stats.json");
    runs[i] = nlohmann::json::parse(f);
    nlohmann::json& sum = runs[i]["summary"];  // host figures name the host (summary.cpp)
    for (auto it = sum.begin(); it != sum.end();)
      it = it.key().find("host") != std::string::npos ? sum.erase(it) : ++it;
  }
  EXPECT_EQ(runs[0], runs[1]);
  std::ifstream t0(base + "0/trace.json"), t1(base + "1/trace.json");
  std::string a((std::istreambuf_iterator<char>(t0)), {}), b((std::istreambuf_iterator<char>(t1)), {});
  EXPECT_EQ(a, b);
  EXPECT_GT(a.size(), 1000u);
}

// Every counter of a statistics tree (the integers: formulas over the simulated time depend on
// when the whole simulation ends), with the SoC's name taken off the group names.
std::map<std::string, std::uint64_t> counters(const nlohmann::json& stats, const std::string& soc) {
  std::map<std::string, std::uint64_t> c;
  for (auto& [group, entries] : stats.items()) {
    if (group.rfind(soc + ".", 0) != 0 || !entries.is_object()) continue;
    for (auto& [key, v] : entries.items())
      if (v.is_number_unsigned()) c[group.substr(soc.size()) + "." + key] = v.get<std::uint64_t>();
  }
  return c;
}

// One requester doing random reads and writes with verification: a single initiating process,
// so nothing in it depends on the order SystemC runs processes of the same instant.
constexpr const char* kOneRequester = R"(
name: one-requester
platform: {preset: ascend310}
traffic:
  - {name: rw, instances: 1, pattern: random, access_bytes: 64, region_bytes: 16777216, count: 4000,
     outstanding: 16, read_fraction: 0.5, verify: true}
)";

// Runs `scenario` alone with dvp and returns its counters.
std::map<std::string, std::uint64_t> counters_alone(const std::string& scenario, const std::string& preset,
                                                    const std::vector<std::string>& sets, int i) {
  const std::string out = std::string(DVP_BIN_DIR) + "/../test-out/two-socs-" + std::to_string(i);
  std::string cmd = std::string(DVP_BIN_DIR) + "/dvp run " + scenario + " --quiet --preset " + preset + " --out " + out;
  for (auto& st : sets) cmd += " --set " + st;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(out + "/stats.json");
  return counters(nlohmann::json::parse(f), "soc");
}

// No singletons: two SoCs of different presets, built and run together in one process, keep
// their own statistics and traces and compute what they compute alone. The SoC with a single
// requester counts exactly what a dvp run of its scenario counts. The other runs a GEMM on
// two AI Cores: its values are checked and its traffic is the same, but where its own pipes
// and cores reach a resource at the same instant the order SystemC runs them in (which the
// standard leaves open, and which the other SoC's events shift) may move a contended access
// by a cycle, so its times (counters in _ps) are not compared.
TEST(Platform, TwoSocsInOneProcessEachComputeWhatTheyComputeAlone) {
  const std::string one = test::write_temp("one-requester.yaml", kOneRequester);
  const std::string gemm = std::string(DVP_SOURCE_DIR) + "/scenarios/kernels/gemm-fp16.yaml";
  const std::vector<std::string> sets = {"platform.dram.write_queue=0", "run.trace=false"};
  const auto alone_one = counters_alone(one, "ascend910", sets, 0);
  const auto alone_gemm = counters_alone(gemm, "ascend310", sets, 1);
  platform::Scenario s_one = platform::load_scenario(one, platform::Overrides{"ascend910", sets, false, {}, ""});
  platform::Scenario s_gemm = platform::load_scenario(gemm, platform::Overrides{"ascend310", sets, false, {}, ""});
  platform::set_quantum(s_one);
  platform::Soc a("soc", s_one), b("soc_b", s_gemm);
  ASSERT_EQ(platform::simulate(kTickMax), "");
  const Tick drained = std::max(platform::drain(a), platform::drain(b));
  if (drained > now_tick()) sc_core::sc_start(to_sc(drained - now_tick()));

  EXPECT_EQ(a.stats().to_json().count("soc_b.ring"), 0u) << "one SoC's statistics in the other's";
  EXPECT_EQ(counters(a.stats().to_json(), "soc"), alone_one);
  EXPECT_GT(alone_one.size(), 100u);
  EXPECT_EQ(a.requesters().at(0)->verify_errors(), 0u);
  ASSERT_TRUE(b.launcher()->done());
  for (auto& k : b.launcher()->results()) EXPECT_TRUE(k.checked && k.passed) << k.name << ": " << k.detail;
  auto together = counters(b.stats().to_json(), "soc_b");
  std::size_t compared = 0;
  for (auto& [key, v] : alone_gemm)
    if (key.find("_ps") == std::string::npos && key.find("latency") == std::string::npos) {
      EXPECT_EQ(together[key], v) << key;
      ++compared;
    }
  EXPECT_GT(compared, 50u);
}

TEST(Docs, EveryStatisticIsDocumentedInModelsMd) {
  auto s = test::scenario(kIntegrity);
  platform::Soc soc("soc", s);
  std::ifstream f(std::string(DVP_SOURCE_DIR) + "/docs/models.md");
  std::string doc((std::istreambuf_iterator<char>(f)), {});
  ASSERT_FALSE(doc.empty());
  std::set<std::string> missing;
  for (auto* g : soc.stats().groups())
    for (auto& [key, what] : g->describe()) {
      EXPECT_FALSE(what.empty()) << g->name() << "." << key << " has no description";
      if (doc.find("`" + key + "`") == std::string::npos) missing.insert(key);
    }
  for (auto& k : missing) ADD_FAILURE() << "statistic `" << k << "` is not described in docs/models.md";
  // And the summary keys, in docs/outputs.md.
  std::ifstream o(std::string(DVP_SOURCE_DIR) + "/docs/outputs.md");
  std::string out((std::istreambuf_iterator<char>(o)), {});
  auto sum = platform::summarize(soc, 1.0);
  for (auto& [k, v] : sum.items())
    EXPECT_NE(out.find("`" + k + "`"), std::string::npos) << "summary key `" << k << "` not in docs/outputs.md";
}

TEST(Platform, BothPresetsElaborateWithTheirPublishedSizes) {
  {
    auto s = test::scenario("name: t\nplatform: {preset: ascend910}\n");
    platform::Soc soc("soc", s);
    EXPECT_EQ(soc.l2_config().size_bytes, 32ull << 20);        // 32 MB L2
    EXPECT_EQ(soc.dram_config().geo.capacity(), 32ull << 30);  // 32 GB HBM2
    EXPECT_NEAR(soc.dram_config().peak_GBps(), 1228.8, 1.0);   // ~1.2 TB/s
    EXPECT_EQ(soc.dram_config().geo.channels, 64u);
  }
}

// A core's emulator is made when firmware starts the core: on the 910's 16 cores, a run with no
// firmware (or one that starts two cores) makes none for the others.
TEST(Platform, OnlyTheCoresFirmwareStartsMakeAnEmulator) {
  {
    auto s = test::scenario("name: t\nplatform: {preset: ascend910}\n");
    platform::Soc soc("soc", s);
    ASSERT_EQ(soc.cpus().size(), 16u);
    for (auto& c : soc.cpus()) EXPECT_FALSE(c->emulating()) << c->name();
  }
  auto s = test::scenario("name: t\nplatform: {preset: ascend910}\nfirmware: {image: gtimer, cores: [0, 5]}\n");
  platform::Soc soc("soc2", s);
  for (std::size_t i = 0; i < soc.cpus().size(); ++i) EXPECT_EQ(soc.cpus()[i]->emulating(), i == 0 || i == 5) << i;
}

TEST(Platform, Ascend310Sizes) {
  auto s = test::scenario("name: t\nplatform: {preset: ascend310}\n");
  platform::Soc soc("soc", s);
  EXPECT_EQ(soc.l2_config().size_bytes, 8ull << 20);  // 8 MiB L2
  EXPECT_NEAR(soc.dram_config().peak_GBps(), 34.1, 0.1);
}

namespace {
// A GEMM on both AI Cores while a requester streams through DRAM: every unit the activity reads
// is busy at some time.
const char* kBusySoc = R"(
name: busy-soc
platform: {preset: ascend310}
kernels:
  - name: gemm
    library: gemm
    shape: {m: 512, k: 1024, n: 512, out: f16}
    tensors:
      - {name: a, dtype: f16, elements: 524288, init: random}
      - {name: b, dtype: f16, elements: 524288, init: random}
      - {name: c, dtype: f16, elements: 262144}
    args: [a, b, c]
traffic:
  - {name: rd, instances: 1, pattern: sequential, access_bytes: 128, region_bytes: 4194304, count: 20000,
     outstanding: 16, read_fraction: 1.0}
)";
}  // namespace

// The activity's windows against the units' own counters: over the whole run they are the
// counters' totals over the time the units had (channels or cores x the run); a window split in
// two adds up to it.
TEST(Activity, WindowsAddUpToTheUnitsOwnCounters) {
  auto s = test::scenario(kBusySoc, {});
  platform::Soc soc("soc", s);
  platform::Activity a(soc);
  EXPECT_EQ(platform::simulate(kTickMax, "", &a), "");
  a.finish();
  const Tick end = now_tick();
  double bytes = 0, bus = 0, cube = 0, mte2 = 0, occupied = 0;
  unsigned channels = 0;
  for (auto& mc : soc.controllers()) {
    bytes += double(mc->bytes_read() + mc->bytes_written());
    for (unsigned c = 0; c < soc.dram_config().channels_per_controller; ++c, ++channels)
      bus += double(mc->channel(c).data_busy());
  }
  for (auto& core : soc.aicores()) {
    cube += double(core->pipe_busy(aicore::Pipe::M)), mte2 += double(core->pipe_busy(aicore::Pipe::MTE2));
    occupied += double(core->occupied());
    EXPECT_EQ(core->blocks_done(), 1u);
  }
  const platform::Activity::Window w = a.window(0, end);
  EXPECT_GT(bytes, 2e6);
  EXPECT_EQ(w.dram_bytes, bytes);
  EXPECT_NEAR(w.dram_busy, bus / (double(end) * channels), 1e-12);
  // The pipes' shares are of the time the cores ran their blocks, which is less than the run.
  EXPECT_GT(occupied, 0.5 * double(end));
  EXPECT_LT(occupied, 2.0 * double(end));
  EXPECT_NEAR(w.cores, occupied / double(end), 1e-12);
  EXPECT_NEAR(w.pipe[std::size_t(aicore::Pipe::M)], cube / occupied, 1e-12);
  EXPECT_NEAR(w.pipe[std::size_t(aicore::Pipe::MTE2)], mte2 / occupied, 1e-12);
  EXPECT_GT(w.pipe[std::size_t(aicore::Pipe::M)], 0.05);
  const Tick mid = end / 3 + 12345;  // between samples: interpolated
  const platform::Activity::Window x = a.window(0, mid), y = a.window(mid, end);
  EXPECT_NEAR(x.dram_bytes + y.dram_bytes, bytes, 1e-6 * bytes);
  EXPECT_GT(x.dram_bytes, 0);
  EXPECT_GT(y.dram_bytes, 0);
}

// A kernel of one block on a chip of two cores is measured on the core that ran it: its pipes'
// shares are of that core's time, not halved by the idle one.
TEST(Activity, AKernelOnFewerCoresIsMeasuredOnThem) {
  std::string text = kBusySoc;
  text.replace(text.find("    library: gemm"), 0, "    blocks: 1\n");
  auto s = test::scenario(text, {});
  platform::Soc soc("soc", s);
  platform::Activity a(soc);
  EXPECT_EQ(platform::simulate(kTickMax, "", &a), "");
  a.finish();
  const auto& core = *soc.aicores()[0];
  ASSERT_EQ(core.blocks_done(), 1u);
  EXPECT_EQ(soc.aicores()[1]->blocks_done(), 0u);
  const platform::Activity::Window w = a.window(core.block_start(), core.block_start() + core.occupied());
  EXPECT_NEAR(w.cores, 1.0, 0.01);
  EXPECT_NEAR(w.pipe[std::size_t(aicore::Pipe::M)], double(core.pipe_busy(aicore::Pipe::M)) / double(core.occupied()),
              0.01);
}

// What bound a window: the busiest pipe when busy half the time or more; loads by where they waited.
TEST(Activity, TheBoundIsTheBusiestUnitAndLoadsNameWhereTheyWaited) {
  platform::Activity::Window w;
  double share = 0;
  w.pipe[std::size_t(aicore::Pipe::M)] = 0.8, w.pipe[std::size_t(aicore::Pipe::V)] = 0.3;
  EXPECT_STREQ(w.bound(share), "cube");
  EXPECT_DOUBLE_EQ(share, 0.8);
  w.pipe[std::size_t(aicore::Pipe::MTE2)] = 0.9, w.dram_busy = 0.7;
  EXPECT_STREQ(w.bound(share), "DRAM");
  EXPECT_DOUBLE_EQ(share, 0.7);
  w.dram_busy = 0.2;
  EXPECT_STREQ(w.bound(share), "L2");
  EXPECT_DOUBLE_EQ(share, 0.9);
  w = platform::Activity::Window{};
  w.pipe[std::size_t(aicore::Pipe::V)] = 0.45, w.dram_busy = 0.49;
  EXPECT_STREQ(w.bound(share), "latency");
}

// The reference loops (platform/reference.cpp) against the plainest loops written here from
// their definitions: the same sums in the same order, so equal bit for bit. The references run
// several output elements' sums at once for host speed; these catch a wrong index or order.
namespace {

using dvp::platform::Reference;
using dvp::platform::TensorView;

std::vector<double> random_values(std::size_t n, std::uint64_t seed) {
  std::vector<double> v(n);
  for (auto& x : v) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x = double(std::int64_t(seed >> 40) - (1 << 23)) / double(1 << 20);  // 24 bits: sums round in double
  }
  return v;
}

TensorView view(const std::vector<double>& v) {
  return TensorView{nullptr, dvp::aicore::DType::F32, v.size(), v.data()};
}

const dvp::platform::RefCheck* ref_op(const char* name) { return *dvp::platform::reference_checks().find(name); }

}  // namespace

TEST(ReferenceLoops, GemmEqualsThePlainLoop) {
  for (bool transposed : {false, true})
    for (std::uint64_t n : {1u, 8u, 21u}) {
      Reference R;
      R.op = ref_op("gemm");
      R.m = 3, R.k = 37, R.n = n, R.b_transposed = transposed, R.bias = true, R.relu = true;
      const auto a = random_values(R.m * R.k, 1), b = random_values(R.k * n, 2), bias = random_values(n, 3);
      const std::vector<double> got = R.compute({view(a), view(b), view(bias)}, R.m * n);
      for (std::uint64_t r = 0; r < R.m; ++r)
        for (std::uint64_t c = 0; c < n; ++c) {
          double v = bias[c];
          for (std::uint64_t k = 0; k < R.k; ++k) v += a[r * R.k + k] * b[transposed ? c * R.k + k : k * n + c];
          ASSERT_EQ(got[r * n + c], std::max(v, 0.0)) << "n " << n << " row " << r << " column " << c;
        }
    }
}

TEST(ReferenceLoops, ConvEqualsThePlainLoop) {
  // x in NC1HWC0 and the weights in img2col order (the layouts' definitions), a logical
  // x[c][h][w] and w[co][ci][i][j] behind them; strided, padded, dilated and grouped.
  struct Case {
    std::uint32_t c, cout, groups, stride, dil, pad;
  };
  for (const Case& cs : {Case{20, 24, 1, 2, 1, 1}, Case{32, 48, 2, 1, 2, 2}, Case{16, 16, 16, 1, 1, 1}}) {
    dvp::kernels::ConvShape cv;
    cv.h = 7, cv.w = 9, cv.c = cs.c, cv.cout = cs.cout, cv.groups = cs.groups, cv.kh = 3, cv.kw = 2;
    cv.stride_h = cv.stride_w = cs.stride, cv.dil_h = cv.dil_w = cs.dil;
    cv.pad_t = cv.pad_b = cv.pad_l = cv.pad_r = cs.pad;
    cv.relu = true;
    const std::uint32_t c0 = 16, cin_g = cv.cin_g();
    const auto x = random_values(std::size_t(cv.c) * cv.h * cv.w, 4);
    const auto w = random_values(std::size_t(cv.cout) * cin_g * cv.kh * cv.kw, 5);
    std::vector<double> x5(std::size_t(cv.c1()) * cv.h * cv.w * c0), wk(std::size_t(cv.cout) * cv.k());
    for (std::uint32_t ch = 0; ch < cv.c; ++ch)
      for (std::uint32_t hw = 0; hw < cv.h * cv.w; ++hw)
        x5[(ch / c0 * cv.h * cv.w + hw) * c0 + ch % c0] = x[ch * cv.h * cv.w + hw];
    for (std::uint32_t co = 0; co < cv.cout; ++co)
      for (std::uint32_t ci = 0; ci < cin_g; ++ci)
        for (std::uint32_t i = 0; i < cv.kh; ++i)
          for (std::uint32_t j = 0; j < cv.kw; ++j) {
            const std::uint32_t e = co / cv.cout_g() % cv.ext() * cin_g + ci;
            wk[co * cv.k() + ((e / c0 * cv.kh + i) * cv.kw + j) * c0 + e % c0] =
                w[((co * cin_g + ci) * cv.kh + i) * cv.kw + j];
          }
    Reference R;
    R.op = ref_op("conv2d");
    R.conv = cv;
    const std::uint32_t ho = cv.ho(), wo = cv.wo();
    const std::vector<double> got = R.compute({view(x5), view(wk)}, std::uint64_t(ho) * wo * cv.cout);
    for (std::uint32_t oh = 0; oh < ho; ++oh)
      for (std::uint32_t ow = 0; ow < wo; ++ow)
        for (std::uint32_t co = 0; co < cv.cout; ++co) {
          double v = 0;
          for (std::uint32_t ci = 0; ci < cin_g; ++ci)
            for (std::uint32_t i = 0; i < cv.kh; ++i)
              for (std::uint32_t j = 0; j < cv.kw; ++j) {
                const int h = int(oh * cv.stride_h + i * cv.dil_h) - int(cv.pad_t);
                const int ww = int(ow * cv.stride_w + j * cv.dil_w) - int(cv.pad_l);
                if (h < 0 || ww < 0 || h >= int(cv.h) || ww >= int(cv.w)) continue;
                const std::uint32_t ch = co / cv.cout_g() * cin_g + ci;
                v += x[(ch * cv.h + std::uint32_t(h)) * cv.w + std::uint32_t(ww)] *
                     w[((co * cin_g + ci) * cv.kh + i) * cv.kw + j];
              }
          ASSERT_EQ(got[(oh * wo + ow) * cv.cout + co], std::max(v, 0.0))
              << "groups " << cs.groups << " at (" << oh << ", " << ow << ") channel " << co;
        }
  }
}

TEST(ReferenceLoops, TopKIsAStableSortsFirst) {
  // Values from a small set, so most rows have ties: they go to the lower index.
  const std::uint64_t rows = 50, cols = 37;
  auto x = random_values(rows * cols, 6);
  for (auto& v : x) v = std::floor(v);
  for (std::uint64_t k : {1u, 5u, 37u}) {
    Reference R;
    R.op = ref_op(k == 1 ? "argmax" : "topk");
    R.cols = cols, R.k = k;
    const std::vector<double> got = R.compute({view(x)}, rows * k);
    for (std::uint64_t r = 0; r < rows; ++r) {
      std::vector<std::uint64_t> idx(cols);
      for (std::uint64_t j = 0; j < cols; ++j) idx[j] = j;
      std::stable_sort(idx.begin(), idx.end(), [&](auto a, auto b) { return x[r * cols + a] > x[r * cols + b]; });
      for (std::uint64_t m = 0; m < k; ++m) ASSERT_EQ(got[r * k + m], double(idx[m])) << "k " << k << " row " << r;
    }
  }
  // The AI CPU kernels' order (IEEE's total order): +NaN, +inf, 1, +0, -0, -inf, -NaN.
  const std::vector<double> special = {1.0, NAN, -NAN, -0.0, 0.0, INFINITY, -INFINITY};
  Reference R;
  R.op = ref_op("topk");
  R.cols = R.k = special.size();
  const std::vector<double> got = R.compute({view(special)}, special.size());
  EXPECT_EQ(got, (std::vector<double>{1, 5, 0, 4, 3, 6, 2}));
}
