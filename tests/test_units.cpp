// SPDX-License-Identifier: MIT
// The units behind the AI Core's pipes on their own, driven through a fake core: values
// against plain loops, times against the config, and the transfers a unit asks of the bus
// interface. No pipe threads, no ring: what a unit does is the unit's alone.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <random>
#include <stdexcept>
#include <thread>

#include "aicore/assembler.hpp"
#include "aicore/cube.hpp"
#include "aicore/fixpipe.hpp"
#include "aicore/mte.hpp"
#include "aicore/numeric.hpp"
#include "aicore/vector.hpp"
#include "common/error.hpp"
#include "common/host_lane.hpp"

using namespace dvp;
using namespace dvp::aicore;

namespace {

// A core with its buffers and a GM of its own, whose bus takes `rate` bytes per cycle and
// returns data `latency` after the request leaves.
class FakeCore : public CoreServices {
 public:
  AiCoreConfig cfg;
  std::array<std::vector<std::uint8_t>, kBuffers> buf;
  std::vector<std::uint8_t> gm = std::vector<std::uint8_t>(1 << 16);
  std::vector<GmTransfer> transfers;
  std::vector<std::string> faults;
  Tick latency = 100'000;  // 100 ns

  FakeCore() {
    cfg.clock = Clock(1000.0);  // 1 ns cycles
    const std::uint64_t sizes[kBuffers] = {1 << 20, 64 << 10, 64 << 10, 256 << 10, 256 << 10};
    for (int b = 0; b < kBuffers; ++b) {
      cfg.size[b] = sizes[b];
      buf[b].assign(sizes[b], 0);
    }
  }
  const AiCoreConfig& config() const override { return cfg; }
  bool functional() const override { return true; }
  std::uint8_t* buffer(Buffer b) override { return buf[b].data(); }
  const std::uint8_t* l0c_settled(std::uint64_t, std::uint64_t) override { return buf[kL0C].data(); }
  std::uint8_t* l0c_for_cube() override { return buf[kL0C].data(); }
  bool local_range(Buffer b, std::uint64_t addr, std::uint64_t len, const Issued&, const char* what) override {
    if (addr % cfg.align[b] == 0 && addr + len <= cfg.size[b]) return true;
    faults.push_back(std::string(what) + " " + buffer_name(b) + " " + hex(addr));
    return false;
  }
  void fault(const Issued&, const std::string& reason) override { faults.push_back(reason); }
  bool stopping() const override { return !faults.empty(); }
  GmTiming gm_access(const GmTransfer& x) override {
    transfers.push_back(x);
    if (x.write)
      std::memcpy(gm.data() + x.addr, x.data, x.len);
    else
      std::memcpy(x.data, gm.data() + x.addr, x.len);
    const Tick issued = std::max(x.start, now_tick()) + cfg.clock.cycles((x.len + x.rate - 1) / x.rate);
    return GmTiming{issued, issued + latency};
  }
};

Issued issued(const std::string& text, std::initializer_list<std::uint64_t> regs) {
  const Image img = assemble(text + "\nend\n", "unit.s");
  Issued e{decode(img.code.at(0)), 0, {}, {~0ull, ~0ull}, 0, 0, {}};
  std::size_t i = 0;
  for (std::uint64_t r : regs) e.v[i++] = r;
  return e;
}

// fp16 values that are small integers over 8: exact, and their products and sums too.
std::vector<double> values(std::size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(-24, 24);
  std::vector<double> v(n);
  for (auto& x : v) x = d(g) / 8.0;
  return v;
}

}  // namespace

TEST(Units, CubeMultipliesAsAPlainLoopDoesInTheConfiguredSteps) {
  FakeCore core;
  core.cfg.cube_k = 32;  // a cube twice as deep as the 310's: half the steps along k
  core.cfg.cube_cycles_per_step = 2;
  core.cfg.cube_startup_cycles = 5;
  auto lane = std::make_shared<HostLane>();
  CubeUnit cube(core, lane);
  // The lane is held until L0A and L0B have been written over, below.
  std::promise<void> go;
  lane->post([f = go.get_future().share()] { f.wait(); });
  const unsigned m = 20, k = 40, n = 24, mf = 2, kf = 3;
  const auto A = values(m * k, 1), B = values(k * n, 2);
  // A as zZ fractals in L0A, B as its transpose's fractals in L0B, zero padded (fractal.hpp).
  for (unsigned r = 0; r < m; ++r)
    for (unsigned c = 0; c < k; ++c) {
      num::store(core.buf[kL0A].data() + ((r / 16) * kf + c / 16) * 512 + (r % 16) * 32 + (c % 16) * 2, DType::F16,
                 A[r * k + c]);
    }
  for (unsigned c = 0; c < k; ++c)
    for (unsigned j = 0; j < n; ++j)
      num::store(core.buf[kL0B].data() + ((j / 16) * kf + c / 16) * 512 + (j % 16) * 32 + (c % 16) * 2, DType::F16,
                 B[c * n + j]);
  MmadCfg c;
  c.m = m, c.k = k, c.n = n;
  const Span s = cube.mmad(issued("mmad.f32.f16 x1, x2, x3, x4", {0, 0, 0, c.pack()}));
  ASSERT_TRUE(core.faults.empty()) << core.faults[0];
  // The arithmetic runs on the lane from copies of A and B: L0A and L0B may be written at once.
  std::fill(core.buf[kL0A].begin(), core.buf[kL0A].end(), 0x7e);
  std::fill(core.buf[kL0B].begin(), core.buf[kL0B].end(), 0xfe);
  go.set_value();
  ASSERT_TRUE(cube.settle());
  for (unsigned r = 0; r < m; ++r)
    for (unsigned j = 0; j < n; ++j) {
      double want = 0;
      for (unsigned x = 0; x < k; ++x) want += A[r * k + x] * B[x * n + j];
      const double got =
          num::load(core.buf[kL0C].data() + ((j / 16) * mf + r / 16) * 1024 + (r % 16) * 64 + (j % 16) * 4, DType::F32);
      ASSERT_EQ(got, want) << r << "," << j;
    }
  // 32 x 48 x 32 in fractals over a 16 x 32 x 16 cube: 2 x 2 x 2 steps of 2 cycles, after 5.
  EXPECT_EQ(s.done, (5 + 8 * 2) * 1000u);
  EXPECT_EQ(s.free, s.done);
  EXPECT_EQ(cube.flops(), 2.0 * m * k * n);
}

TEST(Units, CubeSettlesOnlyForTheMmadsThatWriteTheBytesRead) {
  FakeCore core;
  auto lane = std::make_shared<HostLane>();
  CubeUnit cube(core, lane);
  auto fill = [&](Buffer b, double v) {
    for (unsigned i = 0; i < 512; ++i) num::store(core.buf[b].data() + 2 * i, DType::F16, v);
  };
  auto mmad = [&](std::uint64_t c_at, unsigned m, unsigned n) {
    MmadCfg c;
    c.m = m, c.k = 16, c.n = n;
    cube.mmad(issued("mmad.f32.f16 x1, x2, x3, x4", {c_at, 0, 0, c.pack()}));
  };
  auto ready_soon = [](std::future<bool>& f) {
    return f.wait_for(std::chrono::milliseconds(50)) == std::future_status::ready;
  };
  // X (32 x 32: four fractals) writes L0C 0 .. 4096 with 16 x 1 x 2 = 32.
  std::promise<void> go1, go2, go3;
  lane->post([f = go1.get_future().share()] { f.wait(); });
  fill(kL0A, 1), fill(kL0B, 2);
  mmad(0, 32, 32);
  ASSERT_TRUE(core.faults.empty()) << core.faults[0];
  // Bytes no mmad writes: settled at once, though the lane is held.
  auto none = std::async(std::launch::async, [&] { return cube.settle(4096, 8192); });
  const bool none_at_once = none.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  // X's last fractal: not before X has run.
  auto last = std::async(std::launch::async, [&] { return cube.settle(4000, 4096); });
  const bool last_early = ready_soon(last);
  go1.set_value();
  EXPECT_TRUE(last.get());
  // Then, the lane held again: X' as X, held again, Y (one fractal) over X' at 1024 .. 2048 with
  // 16 x 3 x 2 = 96. Once X' has run, a byte of Y's is still not settled before Y, the newer.
  const HostLane::Ticket held = lane->post([f = go2.get_future().share()] { f.wait(); });
  mmad(0, 32, 32);
  lane->post([f = go3.get_future().share()] { f.wait(); });
  fill(kL0A, 3);  // Y's A; X' has its copy
  mmad(1024, 16, 16);
  go2.set_value();
  lane->wait(held + 1);  // X' has run
  auto both = std::async(std::launch::async, [&] { return cube.settle(1500, 1504); });
  const bool both_early = ready_soon(both);
  go3.set_value();
  EXPECT_TRUE(both.get());
  EXPECT_TRUE(none_at_once);
  EXPECT_TRUE(none.get());
  EXPECT_FALSE(last_early);
  EXPECT_FALSE(both_early);
  for (unsigned i = 0; i < 1024; ++i)
    ASSERT_EQ(num::load(core.buf[kL0C].data() + 4 * i, DType::F32), i / 256 == 1 ? 96.0 : 32.0) << i;
}

// The MTE read tests' core: 7 startup cycles, GM read at 16 B a cycle, GM a known pattern.
static void mte_reads(FakeCore& core) {
  core.cfg.mte_startup_cycles = 7;
  core.cfg.gm_read_bytes_per_cycle = 16;
  for (std::size_t i = 0; i < core.gm.size(); ++i) core.gm[i] = std::uint8_t(i * 7 + 3);
}

TEST(Units, MteCopyIssuesEachBlockOnceTheOneBeforeItHasLeft) {
  FakeCore core;
  mte_reads(core);
  MteUnit mte(core);
  DataCopyCfg c;
  c.block_count = 3, c.block_len = 2, c.src_gap = 1, c.dst_gap = 2;  // 64 B blocks, 32 B and 64 B gaps
  const std::uint64_t src = 0x1000, dst = 0x200;
  const Span s = mte.copy(issued("copy.gm2ub x1, x2, x3", {dst, src, c.pack()}));
  ASSERT_TRUE(core.faults.empty()) << core.faults[0];
  ASSERT_EQ(core.transfers.size(), 3u);
  for (unsigned i = 0; i < 3; ++i) {
    const GmTransfer& x = core.transfers[i];
    EXPECT_FALSE(x.write);
    EXPECT_EQ(x.addr, src + i * 96);
    EXPECT_EQ(x.len, 64u);
    EXPECT_EQ(x.rate, 16u);
    EXPECT_EQ(x.start, (7 + 4 * i) * 1000u);  // 64 B at 16 B per cycle: 4 cycles each
    EXPECT_EQ(0, std::memcmp(core.buf[kUB].data() + dst + i * 128, core.gm.data() + src + i * 96, 64));
  }
  EXPECT_EQ(core.buf[kUB][dst + 64], 0);  // the destination gap is untouched
  EXPECT_EQ(s.free, (7 + 12) * 1000u);    // the last request has left
  EXPECT_EQ(s.done, s.free + core.latency);
}

TEST(Units, MteCopyReadsBlocksThatFollowEachOtherInGmAsOneBurst) {
  // GM -> UB, no gap in GM, 64 B gaps in UB: one transfer of the three 32 B blocks (the bus
  // interface splits it at lines), its bytes scattered to the UB blocks, the gaps untouched.
  FakeCore core;
  mte_reads(core);
  MteUnit mte(core);
  DataCopyCfg c;
  c.block_count = 3, c.block_len = 1, c.src_gap = 0, c.dst_gap = 2;
  const std::uint64_t src = 0x1000, dst = 0x200;
  const Span s = mte.copy(issued("copy.gm2ub x1, x2, x3", {dst, src, c.pack()}));
  ASSERT_TRUE(core.faults.empty()) << core.faults[0];
  ASSERT_EQ(core.transfers.size(), 1u);
  EXPECT_FALSE(core.transfers[0].write);
  EXPECT_EQ(core.transfers[0].addr, src);
  EXPECT_EQ(core.transfers[0].len, 96u);
  EXPECT_EQ(core.transfers[0].start, 7 * 1000u);
  for (unsigned i = 0; i < 3; ++i) {
    EXPECT_EQ(0, std::memcmp(core.buf[kUB].data() + dst + i * 96, core.gm.data() + src + i * 32, 32)) << i;
    EXPECT_EQ(core.buf[kUB][dst + i * 96 + 32], 0);  // the gap after it is untouched
    EXPECT_EQ(core.buf[kUB][dst + i * 96 + 95], 0);
  }
  EXPECT_EQ(s.free, (7 + 6) * 1000u);  // 96 B at 16 B per cycle
  EXPECT_EQ(s.done, s.free + core.latency);
}

TEST(Units, MteCopyWritesAStridedUbToGmAsOneBurst) {
  // UB -> GM, 32 B gaps in UB, none in GM: the blocks gathered into one write of 96 B.
  FakeCore core;
  core.cfg.mte_startup_cycles = 5;
  core.cfg.gm_write_bytes_per_cycle = 32;
  MteUnit mte(core);
  for (std::size_t i = 0; i < core.buf[kUB].size(); ++i) core.buf[kUB][i] = std::uint8_t(i * 5 + 1);
  DataCopyCfg c;
  c.block_count = 3, c.block_len = 1, c.src_gap = 1, c.dst_gap = 0;
  const std::uint64_t src = 0x400, dst = 0x2000;
  const Span s = mte.copy(issued("copy.ub2gm x1, x2, x3", {dst, src, c.pack()}));
  ASSERT_TRUE(core.faults.empty()) << core.faults[0];
  ASSERT_EQ(core.transfers.size(), 1u);
  EXPECT_TRUE(core.transfers[0].write);
  EXPECT_EQ(core.transfers[0].addr, dst);
  EXPECT_EQ(core.transfers[0].len, 96u);
  for (unsigned i = 0; i < 3; ++i)
    EXPECT_EQ(0, std::memcmp(core.gm.data() + dst + i * 32, core.buf[kUB].data() + src + i * 64, 32)) << i;
  EXPECT_EQ(core.gm[dst + 96], 0);  // nothing past the three blocks
  EXPECT_EQ(s.free, (5 + 3) * 1000u);
}

TEST(Units, VectorFaultNamesTheOperandAndMovesNothing) {
  FakeCore core;
  VectorUnit v(core);
  VecCfg c;
  c.repeat = 2;
  const std::vector<std::uint8_t> before = core.buf[kUB];
  v.execute(issued("vadd.f16 x1, x2, x3, x4", {0x10, 0x1000, 0x2000, c.pack()}));
  ASSERT_EQ(core.faults.size(), 1u);
  EXPECT_EQ(core.faults[0], "destination UB 0x10");
  EXPECT_EQ(core.buf[kUB], before);
}

TEST(Units, VectorAddsEveryRepeatAsAPlainLoopDoes) {
  FakeCore core;
  core.cfg.vector_startup_cycles = 3;
  core.cfg.vector_cycles_per_repeat = 2;
  VectorUnit v(core);
  const auto a = values(256, 3), b = values(256, 4);
  for (int i = 0; i < 256; ++i) {
    num::store(core.buf[kUB].data() + 0x1000 + 2 * i, DType::F16, a[i]);
    num::store(core.buf[kUB].data() + 0x2000 + 2 * i, DType::F16, b[i]);
  }
  VecCfg c;
  c.repeat = 2;
  const Span s = v.execute(issued("vadd.f16 x1, x2, x3, x4", {0x3000, 0x1000, 0x2000, c.pack()}));
  ASSERT_TRUE(core.faults.empty()) << core.faults[0];
  for (int i = 0; i < 256; ++i) ASSERT_EQ(num::load(core.buf[kUB].data() + 0x3000 + 2 * i, DType::F16), a[i] + b[i]);
  EXPECT_EQ(s.done, (3 + 2 * 2) * 1000u);
}

TEST(Units, FixPipeDequantisesClampsAndWritesEachRowToGm) {
  FakeCore core;
  core.cfg.mte_startup_cycles = 2;
  core.cfg.fixp_bytes_per_cycle = 32;
  core.cfg.gm_write_bytes_per_cycle = 8;
  FixPipe fix(core);
  const unsigned m = 3, n = 20, mf = 1;
  for (unsigned r = 0; r < m; ++r)
    for (unsigned j = 0; j < n; ++j) {
      const std::int32_t v = std::int32_t(r * 100 + j) - 30;
      std::memcpy(core.buf[kL0C].data() + ((j / 16) * mf + r / 16) * 1024 + (r % 16) * 64 + (j % 16) * 4, &v, 4);
    }
  FixpCfg c;
  c.m = m, c.n = n, c.dst_stride = 32;
  const float scale = 0.25f;
  std::uint32_t scale_bits;
  std::memcpy(&scale_bits, &scale, 4);
  const std::uint64_t out = 0x4000;
  const Span s = fix.fixp(issued("fixp.l0c2gm.f16.s32.relu x1, x2, x3, x4", {out, 0, c.pack(), scale_bits}));
  ASSERT_TRUE(core.faults.empty()) << core.faults[0];
  for (unsigned r = 0; r < m; ++r)
    for (unsigned j = 0; j < n; ++j) {
      const double want = std::max(0.0, (double(r * 100 + j) - 30) * 0.25);
      ASSERT_EQ(num::load(core.gm.data() + out + (r * 32 + j) * 2, DType::F16), want) << r << "," << j;
    }
  ASSERT_EQ(core.transfers.size(), m);
  // Each row: 80 B of L0C read at 32 B per cycle (3 cycles), then 40 B written at 8 B per cycle
  // (5 cycles); the next row's read overlaps nothing here, as FixPipe converts then sends.
  for (unsigned r = 0; r < m; ++r) EXPECT_EQ(core.transfers[r].start, (2 + 3 * (r + 1) + 5 * r) * 1000u) << r;
  EXPECT_EQ(s.free, (2 + 3 * 3 + 5 * 3) * 1000u);
  EXPECT_EQ(s.done, s.free + core.latency);
}

TEST(HostLane, RunsJobsInTheOrderPostedAndWaitsForATicket) {
  // Each job writes its number in the next slot; the slots are read once the lane is done.
  std::array<int, 4> ran{};
  std::atomic<int> next{0}, after_t2{-1};
  std::atomic<bool> third_posted{false};
  auto job = [&](int n) { return [&, n] { ran[std::size_t(next++)] = n; }; };
  std::promise<void> go;
  HostLane::Ticket t3 = 0;
  {
    HostLane lane(2);  // two jobs queued at most (the running one included): a third post waits
    const auto t1 = lane.post([f = go.get_future().share(), j = job(1)] { f.wait(), j(); });
    const auto t2 = lane.post(job(2));
    EXPECT_EQ(t1, 1u);
    EXPECT_EQ(t2, 2u);
    std::thread poster([&] { t3 = lane.post(job(3)), third_posted = true; });
    // The first job holds the lane, so the third post cannot have returned (a poster that is
    // slow to start only makes this check weaker, never wrong).
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(third_posted);
    go.set_value();
    ASSERT_TRUE(lane.wait(t2));
    after_t2 = next.load();
    poster.join();
    EXPECT_GE(lane.completed(), 2u);
    lane.post(job(4));
    // Destroyed with a job perhaps not run: it runs first.
  }
  EXPECT_GE(after_t2, 2);
  EXPECT_EQ(t3, 3u);
  EXPECT_EQ(ran, (std::array<int, 4>{1, 2, 3, 4}));
}

TEST(HostLane, WithoutAThreadEveryJobRunsWhereItIsPosted) {
  HostLane lane(4, false);
  int ran = 0;
  const auto caller = std::this_thread::get_id();
  std::thread::id where;
  const auto t = lane.post([&] { ++ran, where = std::this_thread::get_id(); });
  EXPECT_EQ(ran, 1);  // before post returned
  EXPECT_EQ(where, caller);
  EXPECT_EQ(lane.completed(), t);
  EXPECT_FALSE(lane.wait(lane.post([] { throw std::runtime_error("no scratch"); })));
  EXPECT_EQ(lane.failure(), "no scratch");
}

TEST(HostLane, AJobThatThrowsIsReportedByTheWaitAndTheRestStillRun) {
  HostLane lane;
  int after = 0;
  const auto bad = lane.post([] { throw std::runtime_error("out of scratch"); });
  const auto good = lane.post([&after] { after = 7; });
  EXPECT_FALSE(lane.wait(bad));
  EXPECT_FALSE(lane.wait(good));
  EXPECT_EQ(after, 7);
  EXPECT_EQ(lane.failure(), "out of scratch");
}
