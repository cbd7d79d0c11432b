// SPDX-License-Identifier: MIT
// The AI Core model: scalar unit, pipes, flags, deadlock detection, buffer rules, DataCopy
// and vector timing, and the vector unit's values against plain C++ loops.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "aicore/aicore.hpp"
#include "aicore/assembler.hpp"
#include "aicore/numeric.hpp"
#include "helpers.hpp"
#include "stimulus.hpp"

using namespace dvp;
using namespace dvp::aicore;

namespace {

constexpr std::uint64_t kImage = 0x1000, kArgs = 0x8000;
constexpr Tick kMemLat = 100 * 1000;  // 100 ns

AiCoreConfig core_config(const std::vector<std::string>& sets = {}) {
  return AiCoreConfig::from(test::preset_platform("ascend310", sets).at("aicore"));
}

// One core on a fixed-latency memory; runs one assembly program as block 0 of 1.
struct Bench {
  AiCoreConfig cfg;
  test::FixedMemory mem{"mem", kMemLat};
  AiCore core;
  std::optional<Fault> fault;
  bool started = false;
  struct Starter : sc_core::sc_module {
    std::function<void()> body;
    explicit Starter(sc_core::sc_module_name n) : sc_module(n) {
      SC_HAS_PROCESS(Starter);
      SC_THREAD(run);
    }
    void run() { body(); }
  } starter{"starter"};

  explicit Bench(const std::vector<std::string>& sets = {}) : cfg(core_config(sets)), core("core0", cfg, 0, 128, true) {
    core.bus.bind(mem.socket);
    core.set_fault_handler([this](const Fault& f) { fault = f; });
  }
  void poke(std::uint64_t addr, const void* data, std::size_t len) {
    for (std::size_t i = 0; i < len; ++i) mem.bytes[addr + i] = static_cast<const std::uint8_t*>(data)[i];
  }
  // 128 fp16 values 0, 1, ..., 127 at `addr`.
  void poke_f16_ramp(std::uint64_t addr) {
    std::vector<std::uint16_t> x(128);
    for (int i = 0; i < 128; ++i) x[i] = num::to_f16(i);
    poke(addr, x.data(), 256);
  }
  std::uint64_t peek64(std::uint64_t addr) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t(mem.bytes[addr + i]) << (8 * i);
    return v;
  }
  void run(const std::string& program, const std::vector<std::uint64_t>& args = {}) {
    Image img = assemble(program, "test.s");
    auto b = img.bytes();
    poke(kImage, b.data() + 32, b.size() - 32);
    poke(kArgs, args.data(), args.size() * 8);
    Launch l;
    l.image_base = kImage;
    l.code_bytes = b.size() - 32;
    l.entry = img.entry;
    l.arg_base = kArgs;
    fault.reset();
    // The first launch comes from a thread (processes start with the simulation); later ones
    // find the scalar unit waiting for its start event and can be made from here.
    if (!started) {
      starter.body = [this, l] { core.start(l); };
      started = true;
    } else {
      core.start(l);
    }
    sc_core::sc_start();
  }
  std::uint8_t* ub() { return core.buffer(kUB); }
};

}  // namespace

TEST(AiCoreScalar, ArithmeticBranchesLoadsAndStores) {
  Bench b;
  // sum 1..10 in a loop, a few ALU results, and a store through the dCache to GM.
  b.run(R"(
    mfspr x1, argbase
    ld.d  x2, 0(x1)          # where to store
    li    x3, 10
    li    x4, 0
loop:
    add   x4, x4, x3
    addi  x3, x3, -1
    bne   x3, zero, loop
    st.d  x4, 0(x2)          # 55
    li    x5, -7
    li    x6, 2
    div   x7, x5, x6         # -3
    rem   x8, x5, x6         # -1
    srai  x9, x5, 1          # -4
    shri  x10, x5, 60        # 15
    li64  x11, 0x123456789
    st.d  x7, 8(x2)
    st.d  x8, 16(x2)
    st.d  x9, 24(x2)
    st.d  x10, 32(x2)
    st.d  x11, 40(x2)
    li    x12, 77
    st.ub x12, 64(zero)
    ld.ub x13, 64(zero)
    st.d  x13, 48(x2)
    mfspr x14, blockdim
    st.d  x14, 56(x2)
    end
)",
        {0x20000});
  ASSERT_FALSE(b.fault) << b.fault->str();
  EXPECT_EQ(b.peek64(0x20000), 55u);
  EXPECT_EQ(std::int64_t(b.peek64(0x20008)), -3);
  EXPECT_EQ(std::int64_t(b.peek64(0x20010)), -1);
  EXPECT_EQ(std::int64_t(b.peek64(0x20018)), -4);
  EXPECT_EQ(b.peek64(0x20020), 15u);
  EXPECT_EQ(b.peek64(0x20028), 0x123456789u);
  EXPECT_EQ(b.peek64(0x20030), 77u);
  EXPECT_EQ(b.peek64(0x20038), 1u);
  EXPECT_EQ(b.core.blocks_done(), 1u);
  // The program sits in one 2 KiB fill unit: one miss, every other fetch hits (the loop
  // body runs 10 times).
  auto j = test::bench_system().stats().find("core0")->to_json();
  EXPECT_EQ(j["icache_misses"].get<std::uint64_t>(), 1u);
  EXPECT_EQ(j["icache_hits"].get<std::uint64_t>(), j["scalar_instructions"].get<std::uint64_t>() - 1);
  // And the stores went through the dCache: the first store to each 64 B line misses.
  EXPECT_EQ(j["dcache_misses"].get<std::uint64_t>(), 2u);  // argbase line, result line
}

TEST(AiCoreScalar, DivisionByZeroStopsTheCoreWithItsPc) {
  Bench b;
  b.run("li x1, 5\nli x2, 0\ndiv x3, x1, x2\nend\n");
  ASSERT_TRUE(b.fault);
  EXPECT_EQ(b.fault->pc, 16u);
  EXPECT_EQ(b.fault->str(), "aicore0 pc 0x10 (div x3, x1, x2): division by zero");
}

TEST(AiCoreSync, AMissingSetFlagIsReportedAsADeadlockWithEveryPipe) {
  Bench b;
  b.run(R"(
    li x1, 0
    li64 x2, 0x0008080801010101
    waitflag mte2, v, 3        # nobody sets it
    vadd.f16 x1, x1, x1, x2
    end
)");
  ASSERT_TRUE(b.fault);
  const std::string r = b.fault->reason;
  EXPECT_NE(r.find("deadlock: no pipe can make progress"), std::string::npos) << r;
  EXPECT_NE(r.find("SCALAR: reached end, waiting for the pipes to drain"), std::string::npos) << r;
  EXPECT_NE(r.find("V: head 0x18 waitflag mte2, v, 3 -- waiting for flag (MTE2 -> V, event 3), which no one will set"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("MTE2: idle, queue empty"), std::string::npos) << r;
}

TEST(AiCoreSync, SettingASetFlagIsAnError) {
  Bench b;
  b.run("setflag mte2, v, 1\nsetflag mte2, v, 1\nend\n");
  ASSERT_TRUE(b.fault);
  EXPECT_EQ(b.fault->pc, 8u);
  EXPECT_NE(b.fault->reason.find("SetFlag on a flag that is already set"), std::string::npos) << b.fault->reason;
}

TEST(AiCoreSync, FlagsOrderPipesAndAFullQueueStallsIssue) {
  Bench b({"platform.aicore.queue_depth=2"});
  // Four vector ops behind a flag that MTE2 sets only after a long copy: the V queue fills
  // and the scalar unit stalls; the copy's data is what the vector ops then see.
  b.poke_f16_ramp(0x30000);
  b.run(R"(
    li x1, 0x30000
    li x2, 0
    li x3, 0x8001              # DataCopyCfg: 1 block of 8 x 32 B = 256 B
    li x4, 256
    li64 x5, 0x0008080801010101   # VecCfg: 1 repeat
    copy.gm2ub x2, x1, x3
    setflag mte2, v, 0
    waitflag mte2, v, 0
    vadd.f16 x4, x2, x2, x5
    vadd.f16 x4, x4, x4, x5
    vadd.f16 x4, x4, x4, x5
    vadd.f16 x4, x4, x4, x5
    end
)");
  ASSERT_FALSE(b.fault) << b.fault->str();
  auto j = test::bench_system().stats().find("core0")->to_json();
  EXPECT_GT(j["issue_stall_ps"].get<std::uint64_t>(), 0u);
  std::uint16_t out[128];
  std::memcpy(out, b.ub() + 256, 256);
  for (int i = 0; i < 128; ++i) ASSERT_EQ(num::f16(out[i]), 16.0 * i) << i;  // x*2, then doubled 3 times
}

TEST(AiCoreBuffers, AMisalignedUbAddressStopsTheCoreWithCorePcAndAddress) {
  Bench b;
  b.run("li x1, 16\nli x2, 0x40000\nli x3, 0x1001\ncopy.gm2ub x1, x2, x3\nend\n");
  ASSERT_TRUE(b.fault);
  EXPECT_EQ(b.fault->str(),
            "aicore0 pc 0x18 (copy.gm2ub x1, x2, x3): destination UB address 0x10 is not aligned to 32 bytes");
}

TEST(AiCoreBuffers, AnAccessPastTheBufferEnd) {
  Bench b;
  b.run("li x1, 0x3ff20\nli x2, 0x40000\nli x3, 0x8001\ncopy.gm2ub x1, x2, x3\nend\n");  // 256 B, 224 fit
  ASSERT_TRUE(b.fault);
  EXPECT_NE(b.fault->reason.find("destination UB range 0x3ff20..0x40020 is outside UB (262144 bytes)"),
            std::string::npos)
      << b.fault->reason;
}

TEST(AiCoreTiming, DataCopyCostsItsRateAndTheMemoryLatency) {
  Bench b;
  // 4096 B from GM: 32 line-sized requests, one every ceil(128 / rate) cycles, all in flight
  // (32 outstanding); the last returns 100 ns after it left.
  b.run("li x1, 0\nli x2, 0x40000\nli x3, 0x80001\ncopy.gm2ub x1, x2, x3\nend\n");
  ASSERT_FALSE(b.fault) << b.fault->str();
  const Tick cyc = b.cfg.clock.period();
  const Tick spacing = (128 + b.cfg.gm_read_bytes_per_cycle - 1) / b.cfg.gm_read_bytes_per_cycle;
  ASSERT_GE(b.cfg.gm_outstanding, 32u);
  EXPECT_EQ(b.core.pipe_busy(Pipe::MTE2), cyc * (b.cfg.mte_startup_cycles + 31 * spacing) + kMemLat);
}

TEST(AiCoreSync, SetFlagIsPostedSoTheNextCopyOverlapsTheFirst) {
  Bench b;
  // Copy 1 (256 B), setflag, copy 2 (256 B): the flag sets when copy 1 completes, and MTE2
  // goes on issuing copy 2 meanwhile, so both copies' memory latencies overlap. The vector
  // op behind the flag sees copy 1's data.
  b.poke_f16_ramp(0x30000);
  b.run(R"(
    li x1, 0x30000
    li x2, 0
    li x3, 0x8001              # 256 B
    li x4, 512
    li x6, 0x31000
    li64 x5, 0x0008080801010101
    copy.gm2ub x2, x1, x3
    setflag mte2, v, 0
    copy.gm2ub x4, x6, x3
    waitflag mte2, v, 0
    vadd.f16 x2, x2, x2, x5
    end
)");
  ASSERT_FALSE(b.fault) << b.fault->str();
  const Tick cyc = b.cfg.clock.period();
  const Tick spacing = (128 + b.cfg.gm_read_bytes_per_cycle - 1) / b.cfg.gm_read_bytes_per_cycle;
  const Tick startup = b.cfg.mte_startup_cycles;
  // Copy 1 frees the pipe after its two requests; copy 2 starts then and completes last.
  EXPECT_EQ(b.core.pipe_busy(Pipe::MTE2), cyc * (2 * startup + 3 * spacing) + kMemLat);
  std::uint16_t out[128];
  std::memcpy(out, b.ub(), 256);
  for (int i = 0; i < 128; ++i) ASSERT_EQ(num::f16(out[i]), 2.0 * i) << i;
}

TEST(AiCoreTiming, GmOutstandingBoundsAnEngineAcrossInstructions) {
  Bench b({"platform.aicore.gm_outstanding=1"});
  // Two one-request copies: the second request waits for the first to complete, though it
  // belongs to another instruction.
  b.run("li x1, 0\nli x2, 0x40000\nli x3, 0x4001\nli x4, 512\ncopy.gm2ub x1, x2, x3\ncopy.gm2ub x4, x2, x3\nend\n");
  ASSERT_FALSE(b.fault) << b.fault->str();
  const Tick cyc = b.cfg.clock.period();
  ASSERT_LT(cyc * (2 * b.cfg.mte_startup_cycles + 1), kMemLat);
  EXPECT_EQ(b.core.pipe_busy(Pipe::MTE2), cyc * b.cfg.mte_startup_cycles + 2 * kMemLat);
}

TEST(AiCoreTiming, VectorCostsStartupPlusCyclesPerRepeat) {
  Bench b;
  b.run("li x1, 0\nli64 x2, 0x000808080101010a\nvadd.f16 x1, x1, x1, x2\nvexp.f16 x1, x1, x2\nend\n");
  ASSERT_FALSE(b.fault) << b.fault->str();
  const Tick cyc = b.cfg.clock.period();
  // 10 repeats each: simple at 1 cycle, exp at 4.
  EXPECT_EQ(b.core.pipe_busy(Pipe::V), cyc * (2 * b.cfg.vector_startup_cycles + 10 * b.cfg.vector_cycles_per_repeat +
                                              10 * b.cfg.vector_complex_cycles_per_repeat));
}

TEST(AiCoreCube, Load3dIsImg2colWithStrideDilationAndPadding) {
  Bench b;
  // A 32-channel (C1 = 2, C0 = 16) 7 x 6 fp16 feature map, 3 x 2 filter, stride 2 x 1,
  // dilation 1 x 2, padding l 1 r 0 t 2 b 1: Ho = (7 + 3 - 3) / 2 + 1 = 4, Wo = (6 + 1 - 3) / 1 + 1 = 5.
  const int H = 7, W = 6, C1 = 2;
  std::uint8_t* l1 = b.core.buffer(kL1);
  for (int c1 = 0; c1 < C1; ++c1)
    for (int h = 0; h < H; ++h)
      for (int w = 0; w < W; ++w)
        for (int c = 0; c < 16; ++c)
          num::store(l1 + (((c1 * H + h) * W + w) * 16 + c) * 2, DType::F16, c1 * 1000 + h * 100 + w * 10 + c % 10);
  Load3dCfg cfg{3, 2, 2, 1, 1, 2, 32, 32, 96, 0, 32};  // kh kw sh sw dh dw C, k 32.. (96 wide), rows 0..31
  Fmatrix f{W, H, 1, 0, 2, 1};
  b.run("li64 x1, " + std::to_string(f.pack()) + "\nmtspr fmatrix, x1\nli x2, " + std::to_string(num::to_f16(-7)) +
        "\nmtspr padvalue, x2\nli x3, 0\nli x4, 0\nli64 x5, " + std::to_string(cfg.pack1()) + "\nli64 x6, " +
        std::to_string(cfg.pack2()) + "\nload3d.l0a.f16 x3, x4, x5, x6\nend\n");
  ASSERT_FALSE(b.fault) << b.fault->str();
  const int Wo = 5, Ho = 4, kf = 96 / 16;
  for (int p = 0; p < 32; ++p)
    for (int kk = 0; kk < 96; ++kk) {
      const int k = 32 + kk, c = k % 16, j = (k / 16) % 2, i = (k / 16 / 2) % 3, c1 = k / 16 / 6;
      const int oh = p / Wo, ow = p % Wo, h = oh * 2 - 2 + i * 1, w = ow * 1 - 1 + j * 2;
      double want;
      if (oh >= Ho)
        want = 0;
      else if (h < 0 || w < 0 || h >= H || w >= W)
        want = -7;
      else
        want = c1 * 1000 + h * 100 + w * 10 + c % 10;
      const double got =
          num::load(b.core.buffer(kL0A) + ((p / 16) * kf + kk / 16) * 512 + (p % 16) * 32 + (kk % 16) * 2, DType::F16);
      ASSERT_EQ(got, want) << "p " << p << " k " << k;
    }
}

TEST(AiCoreCube, Load3dSmallChannelMapPacksPositionsAlongK) {
  Bench b;
  // A 3-channel image stored H x W x 4 (C04: the fourth channel zero), 7 x 7 filter, stride 2,
  // padding 3: K = 4 x 49 = 196 columns, zero from 196 to 207 (the last fractal's rest).
  const int H = 9, W = 11, C0 = 4;
  std::uint8_t* l1 = b.core.buffer(kL1);
  for (int h = 0; h < H; ++h)
    for (int w = 0; w < W; ++w)
      for (int c = 0; c < C0; ++c)
        num::store(l1 + ((h * W + w) * C0 + c) * 2, DType::F16, c < 3 ? h * 100 + w * 10 + c : 0);
  Load3dCfg cfg{7, 7, 2, 2, 1, 1, 4, 0, 208, 3, 32};  // C 4, k 0..207, rows 3..34
  Fmatrix f{W, H, 3, 3, 3, 3};
  b.run("li64 x1, " + std::to_string(f.pack()) + "\nmtspr fmatrix, x1\nli x2, " + std::to_string(num::to_f16(-7)) +
        "\nmtspr padvalue, x2\nli x3, 0\nli x4, 0\nli64 x5, " + std::to_string(cfg.pack1()) + "\nli64 x6, " +
        std::to_string(cfg.pack2()) + "\nload3d.l0a.f16 x3, x4, x5, x6\nend\n");
  ASSERT_FALSE(b.fault) << b.fault->str();
  const int Wo = (W + 6 - 7) / 2 + 1, Ho = (H + 6 - 7) / 2 + 1, kf = 208 / 16;
  for (int r = 0; r < 32; ++r)
    for (int k = 0; k < 208; ++k) {
      const int p = 3 + r, oh = p / Wo, ow = p % Wo, pos = k / 4, c = k % 4, i = pos / 7, j = pos % 7;
      const int h = oh * 2 - 3 + i, w = ow * 2 - 3 + j;
      double want;
      if (oh >= Ho || pos >= 49)
        want = 0;
      else if (h < 0 || w < 0 || h >= H || w >= W)
        want = -7;
      else
        want = c < 3 ? h * 100 + w * 10 + c : 0;
      const double got =
          num::load(b.core.buffer(kL0A) + ((r / 16) * kf + k / 16) * 512 + (r % 16) * 32 + (k % 16) * 2, DType::F16);
      ASSERT_EQ(got, want) << "row " << r << " k " << k;
    }
}

namespace {

// Runs one load3d.l0a.f16 of an 8 x 8 feature map with `cfg`.
void load3d_small(Bench& b, const Load3dCfg& cfg) {
  const Fmatrix f{8, 8, 0, 0, 0, 0};
  b.run("li64 x1, " + std::to_string(f.pack()) + "\nmtspr fmatrix, x1\nli x3, 0\nli x4, 0\nli64 x5, " +
        std::to_string(cfg.pack1()) + "\nli64 x6, " + std::to_string(cfg.pack2()) +
        "\nload3d.l0a.f16 x3, x4, x5, x6\nend\n");
}

}  // namespace

TEST(AiCoreCube, Load3dSmallChannelMapReachesItsLastFractal) {
  Bench b;
  load3d_small(b, Load3dCfg{3, 3, 1, 1, 1, 1, 4, 32, 16, 0, 16});  // K = 36, 48 in fractals
  EXPECT_FALSE(b.fault) << b.fault->str();
}

TEST(AiCoreCube, Load3dRefusesColumnsPastTheSmallChannelMapsLastFractal) {
  Bench b;
  load3d_small(b, Load3dCfg{3, 3, 1, 1, 1, 1, 4, 48, 16, 0, 16});
  ASSERT_TRUE(b.fault);
  EXPECT_NE(b.fault->str().find("48 in whole fractals"), std::string::npos) << b.fault->str();
}

TEST(AiCoreCube, Load3dRefusesAChannelCountThatDoesNotDivideAFractalsColumns) {
  Bench b;
  load3d_small(b, Load3dCfg{3, 3, 1, 1, 1, 1, 3, 0, 16, 0, 16});
  ASSERT_TRUE(b.fault);
  EXPECT_NE(b.fault->str().find("4 or more dividing it"), std::string::npos) << b.fault->str();
}

namespace {

// Runs load3d of a map of `cfg.channels` channels whose every L1 byte differs from its
// neighbours, and compares every byte written with img2col taken element by element from its
// definition (docs/isa.md: column k = ((c1 x kh + i) x kw + j) x C0 + c0, row p = ho x Wo + wo).
void expect_img2col(DType t, const Load3dCfg& cfg, const Fmatrix& f, std::uint32_t padvalue, bool l0b) {
  Bench b;
  const unsigned eb = dtype_bytes(t), k0 = 32 / eb, c0 = std::min(cfg.channels, k0);
  std::uint8_t* l1 = b.core.buffer(kL1);
  const std::uint64_t map_bytes = std::uint64_t(cfg.channels) * f.h * f.w * eb;
  for (std::uint64_t a = 0; a < map_bytes; ++a) l1[a] = std::uint8_t(a * 131 + 7);
  std::memset(b.core.buffer(l0b ? kL0B : kL0A), 0x5A, (cfg.m_ext / 16) * (cfg.k_ext / k0) * 512);  // zeros are written
  const std::string dt = t == DType::S8 ? "s8" : t == DType::F32 ? "f32" : "f16";
  b.run("li64 x1, " + std::to_string(f.pack()) + "\nmtspr fmatrix, x1\nli x2, " + std::to_string(padvalue) +
        "\nmtspr padvalue, x2\nli x3, 0\nli x4, 0\nli64 x5, " + std::to_string(cfg.pack1()) + "\nli64 x6, " +
        std::to_string(cfg.pack2()) + "\nload3d." + (l0b ? "l0b." : "l0a.") + dt + " x3, x4, x5, x6\nend\n");
  ASSERT_FALSE(b.fault) << b.fault->str();
  const int eh = int(cfg.dil_h * (cfg.kh - 1) + 1), ew = int(cfg.dil_w * (cfg.kw - 1) + 1);
  const int Ho = (int(f.h) + int(f.pad_t + f.pad_b) - eh) / int(cfg.stride_h) + 1;
  const int Wo = (int(f.w) + int(f.pad_l + f.pad_r) - ew) / int(cfg.stride_w) + 1;
  const unsigned K = cfg.channels * cfg.kh * cfg.kw, kf = cfg.k_ext / k0;
  const std::uint8_t* out = b.core.buffer(l0b ? kL0B : kL0A);
  for (unsigned r = 0; r < cfg.m_ext; ++r)
    for (unsigned kk = 0; kk < cfg.k_ext; ++kk) {
      const unsigned k = cfg.k_start + kk, cc = k % c0, tap = k / c0;
      const int j = int(tap % cfg.kw), i = int(tap / cfg.kw % cfg.kh), c1 = int(tap / cfg.kw / cfg.kh);
      const int p = int(cfg.m_start + r), oh = p / Wo, ow = p % Wo;
      const int h = oh * int(cfg.stride_h) - int(f.pad_t) + i * int(cfg.dil_h);
      const int w = ow * int(cfg.stride_w) - int(f.pad_l) + j * int(cfg.dil_w);
      for (unsigned byte = 0; byte < eb; ++byte) {
        std::uint8_t want;
        if (oh >= Ho || k >= K)
          want = 0;
        else if (h < 0 || w < 0 || h >= int(f.h) || w >= int(f.w))
          want = std::uint8_t(padvalue >> (8 * byte));
        else
          want = l1[((std::uint64_t(c1) * f.h + h) * f.w + w) * c0 * eb + cc * eb + byte];
        const std::uint8_t got = out[((r / 16) * kf + kk / k0) * 512 + (r % 16) * 32 + (kk % k0) * eb + byte];
        ASSERT_EQ(got, want) << "row " << r << " column " << k << " byte " << byte;
      }
    }
}

}  // namespace

TEST(AiCoreCube, Load3dOfAnInt8MapIsImg2colByteForByte) {
  // int8 (k0 = 32) of 16 channels: two taps in each fractal column group; rows from the middle
  // of an output row to past the last position; columns up to K = 144 and the zeros to 160.
  // Ho = (9 + 3 - 5) / 1 + 1 = 8, Wo = (10 + 2 - 3) / 2 + 1 = 5.
  expect_img2col(DType::S8, Load3dCfg{3, 3, 1, 2, 2, 1, 16, 32, 128, 7, 48}, Fmatrix{10, 9, 2, 0, 1, 2}, 0xFD, true);
}

TEST(AiCoreCube, Load3dOfAFloat32MapIsImg2colByteForByte) {
  // float32 (k0 = 8) of 24 channels, three planes of C0 = 8; a 2 x 3 filter at stride 2.
  expect_img2col(DType::F32, Load3dCfg{2, 3, 2, 2, 1, 1, 24, 8, 128, 3, 32}, Fmatrix{8, 7, 1, 1, 0, 1}, 0xBEEF, false);
}

TEST(AiCoreCube, Load3dOfAnEightChannelFp16MapIsImg2colByteForByte) {
  // fp16 of 8 channels (k0 = 16): two positions in a fractal column group, a dilated 1 x 5 window.
  expect_img2col(DType::F16, Load3dCfg{1, 5, 3, 1, 1, 2, 8, 16, 32, 0, 64}, Fmatrix{12, 5, 4, 3, 0, 0}, 0xC700, false);
}

// --- vector values against plain loops --------------------------------------------------------

namespace {

// Runs one vector instruction on UB contents set up by `init`; UB layout: src0 at 0, src1 at
// 0x8000, dst at 0x10000, selection bits at 0x18000.
void vec(Bench& b, const std::string& instr, std::uint64_t cfg, std::uint64_t scalar = 0, unsigned maskn = 128,
         std::uint64_t mask_lo = 0, std::uint64_t mask_hi = 0) {
  std::string mask = mask_lo || mask_hi ? "li64 x10, " + std::to_string(mask_lo) + "\nmtspr mask0, x10\nli64 x10, " +
                                              std::to_string(mask_hi) + "\nmtspr mask1, x10\n"
                                        : "li x10, " + std::to_string(maskn) + "\nsetmaskn x10\n";
  b.run("li x1, 0x10000\nli x2, 0\nli x3, 0x8000\nli64 x4, " + std::to_string(cfg) + "\nli64 x5, " +
        std::to_string(scalar) + "\nli x6, 0x18000\n" + mask + instr + "\nend\n");
  ASSERT_FALSE(b.fault) << b.fault->str();
}

void fill_f16(std::uint8_t* p, int n, std::uint64_t seed, double lo, double hi) {
  std::mt19937_64 r(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  for (int i = 0; i < n; ++i) num::store(p + 2 * i, DType::F16, d(r));
}

}  // namespace

TEST(AiCoreVector, AddWithPartialMaskAndStridesMatchesALoop) {
  Bench b;
  fill_f16(b.ub(), 8192, 1, -100, 100);
  fill_f16(b.ub() + 0x8000, 8192, 2, -100, 100);
  std::vector<std::uint8_t> before(b.ub() + 0x10000, b.ub() + 0x18000);
  // 3 repeats, mask of the first 37 elements; dst block stride 2, src0 repeat stride 16.
  VecCfg c{3, 2, 1, 1, 20, 16, 8};
  vec(b, "vadd.f16 x1, x2, x3, x4", c.pack(), 0, 37);
  for (unsigned r = 0; r < 3; ++r)
    for (unsigned i = 0; i < 128; ++i) {
      const unsigned blk = i / 16, in = i % 16;
      const std::uint64_t d = 0x10000 + r * 20 * 32 + blk * 2 * 32 + in * 2;
      const std::uint64_t s0 = r * 16 * 32 + blk * 32 + in * 2, s1 = 0x8000 + r * 8 * 32 + blk * 32 + in * 2;
      std::uint16_t got;
      std::memcpy(&got, b.ub() + d, 2);
      if (i < 37) {
        double want = num::f16(*reinterpret_cast<std::uint16_t*>(b.ub() + s0)) +
                      num::f16(*reinterpret_cast<std::uint16_t*>(b.ub() + s1));
        ASSERT_EQ(got, num::to_f16(want)) << r << "," << i;
      } else {
        std::uint16_t old;
        std::memcpy(&old, before.data() + (d - 0x10000), 2);
        ASSERT_EQ(got, old) << "masked-off element " << i << " was written";
      }
    }
}

namespace {

struct Placement {
  std::uint64_t dst;  // the destination's UB address (sources at 0 and 0x8000)
  std::uint32_t blk;  // every operand's block stride
};

// Runs vadd.f16 or vmul.f16 over `repeat` repeats `stride` blocks apart under the mask lo:hi, and
// compares all of UB up to 0x18000 with a loop in element order over the elements on.
void expect_f16_binary_as_loop(Bench& b, bool mul, const Placement& k, unsigned repeat, unsigned stride,
                               std::uint64_t lo, std::uint64_t hi) {
  fill_f16(b.ub(), 4096, 6, -8, 8);
  fill_f16(b.ub() + 0x8000, 4096, 7, -8, 8);
  fill_f16(b.ub() + 0x10000, 4096, 8, -8, 8);
  std::vector<std::uint8_t> want(b.ub(), b.ub() + 0x18000);
  for (unsigned r = 0; r < repeat; ++r)
    for (unsigned i = 0; i < 128; ++i) {
      if (!((i < 64 ? lo >> i : hi >> (i - 64)) & 1)) continue;
      const std::uint64_t at = r * stride * 32 + i / 16 * k.blk * 32 + i % 16 * 2;
      const double x = num::load(&want[at], DType::F16), y = num::load(&want[0x8000 + at], DType::F16);
      num::store(&want[k.dst + at], DType::F16, mul ? x * y : x + y);
    }
  const VecCfg c{repeat, k.blk, k.blk, k.blk, stride, stride, stride};
  vec(b, "li x1, " + std::to_string(k.dst) + (mul ? "\nvmul" : "\nvadd") + ".f16 x1, x2, x3, x4", c.pack(), 0, 0, lo,
      hi);
  EXPECT_EQ(std::memcmp(b.ub(), want.data(), want.size()), 0) << "destination " << k.dst << ", block stride " << k.blk;
}

}  // namespace

// A destination one block past its first source: each element reads what the element 16 before it
// wrote, as element by element does, whether the blocks are adjacent (a repeat's 128 elements one
// run in all three operands, which overlap) or two apart (destination block b is source block b + 1:
// runs of a block, each reading what the run before it wrote); and one in place. The unit takes runs
// of elements at once only where that gives the same.
TEST(AiCoreVector, ADestinationOverlappingItsSourceReadsEarlierResultsAsALoopDoes) {
  Bench b;
  for (const Placement& k : {Placement{32, 1}, Placement{64, 2}, Placement{0, 1}})
    expect_f16_binary_as_loop(b, false, k, 2, 16, ~0ull, ~0ull);
}

// A mask with holes, its stretches on crossing blocks (bits 3 - 20, 40 - 41, 64 - 99, 101 - 127),
// on operands whose repeat is one run (block stride 1) or runs of a block (stride 2), with the
// destination apart from the sources, in place, or overlapping them (one block past the first
// source; with stride 2, destination block b is source block b + 1): each element on as a loop in
// element order gives, each element off untouched.
TEST(AiCoreVector, AMaskWithHolesGivesWhatALoopGivesWhereverTheDestinationLies) {
  std::uint64_t lo = 0, hi = 0;
  for (unsigned i = 0; i < 128; ++i)
    if ((i >= 3 && i <= 20) || i == 40 || i == 41 || (i >= 64 && i != 100)) (i < 64 ? lo : hi) |= 1ull << (i % 64);
  Bench b;
  for (const Placement& k :
       {Placement{0x10000, 1}, Placement{0x10000, 2}, Placement{0, 1}, Placement{32, 1}, Placement{64, 2}})
    expect_f16_binary_as_loop(b, true, k, 3, 24, lo, hi);
}

// A widening conversion with block strides other than 1 (f16 source blocks of 16 elements three
// blocks apart, f32 destination blocks of 8 two apart): each element where the strides put it.
TEST(AiCoreVector, AWideningConversionWithBlockStridesPlacesEveryElement) {
  Bench b;
  fill_f16(b.ub(), 4096, 5, -1000, 1000);
  std::vector<std::uint8_t> want(b.ub() + 0x10000, b.ub() + 0x18000);
  const VecCfg c{2, 2, 3, 1, 16, 24, 8};
  for (unsigned r = 0; r < 2; ++r)
    for (unsigned i = 0; i < 64; ++i) {
      const std::uint64_t s = r * 24 * 32 + i / 16 * 3 * 32 + i % 16 * 2, d = r * 16 * 32 + i / 8 * 2 * 32 + i % 8 * 4;
      num::store(&want[d], DType::F32, num::load(b.ub() + s, DType::F16));
    }
  vec(b, "vconv.f32.f16 x1, x2, x4", c.pack());
  EXPECT_EQ(std::memcmp(b.ub() + 0x10000, want.data(), want.size()), 0);
}

// A widening conversion under a mask with holes (f16 -> f32, 64 elements a repeat, each operand's
// repeat one run): the elements on converted, those off untouched.
TEST(AiCoreVector, AConversionUnderAMaskWithHolesConvertsTheElementsOnOnly) {
  Bench b;
  fill_f16(b.ub(), 4096, 9, -1000, 1000);
  fill_f16(b.ub() + 0x10000, 4096, 10, -8, 8);
  std::vector<std::uint8_t> want(b.ub() + 0x10000, b.ub() + 0x18000);
  std::uint64_t lo = 0;
  for (unsigned i = 0; i < 64; ++i)
    if (i <= 6 || (i >= 9 && i <= 30) || i == 33 || i >= 40) lo |= 1ull << i;
  const VecCfg c{3, 1, 1, 1, 8, 4, 8};
  for (unsigned r = 0; r < 3; ++r)
    for (unsigned i = 0; i < 64; ++i)
      if (lo >> i & 1)
        num::store(&want[r * 8 * 32 + i * 4], DType::F32, num::load(b.ub() + r * 4 * 32 + i * 2, DType::F16));
  vec(b, "vconv.f32.f16 x1, x2, x4", c.pack(), 0, 0, lo, 0);
  EXPECT_EQ(std::memcmp(b.ub() + 0x10000, want.data(), want.size()), 0);
}

TEST(AiCoreVector, BitMaskSelectsScatteredElementsOf32BitTypes) {
  Bench b;
  for (int i = 0; i < 64; ++i) num::store(b.ub() + 4 * i, DType::F32, i * 0.5);
  // f32: 64 elements per repeat; mask0 bits 0, 5 and 63.
  vec(b, "vmuls.f32 x1, x2, x5, x4", VecCfg{}.pack(), num::to_f32(3.0), 0, 1ull | 1ull << 5 | 1ull << 63, 0);
  EXPECT_EQ(num::load(b.ub() + 0x10000 + 0, DType::F32), 0.0);
  EXPECT_EQ(num::load(b.ub() + 0x10000 + 20, DType::F32), 7.5);
  EXPECT_EQ(num::load(b.ub() + 0x10000 + 252, DType::F32), 94.5);
  EXPECT_EQ(num::load(b.ub() + 0x10000 + 4, DType::F32), 0.0);  // element 1 not written (UB starts zeroed)
}

TEST(AiCoreVector, ConversionsInEveryRoundingMode) {
  const char* modes[] = {"rint", "floor", "ceil", "round", "trunc", "odd"};
  Bench b;
  for (int m = 0; m < 6; ++m) {
    std::mt19937 r(m);
    std::uniform_real_distribution<float> d(-1000, 1000);
    for (int i = 0; i < 64; ++i) num::store(b.ub() + 4 * i, DType::F32, d(r));
    // f32 -> f16: a repeat covers 256 B of the wider type (64 elements); f16 dst blocks are
    // 16 elements, so the dst block stride 1 packs them.
    vec(b, std::string("vconv.f16.f32.") + modes[m] + " x1, x2, x4", VecCfg{1, 1, 1, 1, 8, 8, 8}.pack());
    for (int i = 0; i < 64; ++i) {
      const double x = num::load(b.ub() + 4 * i, DType::F32);
      std::uint16_t got;
      std::memcpy(&got, b.ub() + 0x10000 + 2 * i, 2);
      ASSERT_EQ(got, num::to_f16(x, Round(m + 1))) << modes[m] << " " << x;
    }
    // and f32 -> s8, saturating
    for (int i = 0; i < 64; ++i) num::store(b.ub() + 4 * i, DType::F32, (i - 32) * 7.25);
    vec(b, std::string("vconv.s8.f32.") + modes[m] + " x1, x2, x4", VecCfg{}.pack());
    for (int i = 0; i < 64; ++i)
      ASSERT_EQ(std::int8_t(b.ub()[0x10000 + i]), num::to_int((i - 32) * 7.25, Round(m + 1), -128, 127)) << i;
  }
}

TEST(AiCoreVector, CompareThenSelect) {
  Bench b;
  fill_f16(b.ub(), 256, 3, -1, 1);
  fill_f16(b.ub() + 0x8000, 256, 4, -1, 1);
  vec(b, "vcmp.f16.gt x6, x2, x3, x4", VecCfg{2, 1, 1, 1, 8, 8, 8}.pack());
  for (int i = 0; i < 256; ++i) {
    const bool gt = num::load(b.ub() + 2 * i, DType::F16) > num::load(b.ub() + 0x8000 + 2 * i, DType::F16);
    ASSERT_EQ((b.ub()[0x18000 + i / 8] >> (i % 8)) & 1, gt ? 1 : 0) << i;
  }
  // The selection picks the larger of the two: an element-wise max.
  b.run("li x1, 0x10000\nli x2, 0\nli x3, 0x8000\nli x6, 0x18000\nli64 x4, " +
        std::to_string(VecCfg{2, 1, 1, 1, 8, 8, 8}.pack()) + "\nvsel.f16 x1, x2, x3, x6, x4\nend\n");
  for (int i = 0; i < 256; ++i)
    ASSERT_EQ(num::load(b.ub() + 0x10000 + 2 * i, DType::F16),
              std::max(num::load(b.ub() + 2 * i, DType::F16), num::load(b.ub() + 0x8000 + 2 * i, DType::F16)));
}

TEST(AiCoreVector, ReductionsWithinAndAcrossRepeats) {
  Bench b;
  for (int i = 0; i < 192; ++i) num::store(b.ub() + 4 * i, DType::F32, std::sin(i) * 10);
  vec(b, "vcadd.f32 x1, x2, x4", VecCfg{3, 1, 1, 1, 8, 8, 8}.pack());
  for (int r = 0; r < 3; ++r) {
    double s = 0;
    for (int i = 0; i < 64; ++i) s += num::load(b.ub() + 4 * (64 * r + i), DType::F32);
    EXPECT_EQ(num::load(b.ub() + 0x10000 + 4 * r, DType::F32), double(float(s))) << r;
  }
  b.run("li x1, 0x10000\nli x2, 0\nli64 x4, " + std::to_string(VecCfg{3, 1, 1, 1, 8, 8, 8}.pack()) +
        "\nvredmax.f32 x1, x2, x4\nend\n");
  int best = 0;
  for (int i = 1; i < 192; ++i)
    if (num::load(b.ub() + 4 * i, DType::F32) > num::load(b.ub() + 4 * best, DType::F32)) best = i;
  EXPECT_EQ(num::load(b.ub() + 0x10000, DType::F32), num::load(b.ub() + 4 * best, DType::F32));
  std::uint32_t idx;
  std::memcpy(&idx, b.ub() + 0x10004, 4);
  EXPECT_EQ(int(idx), best);
}

TEST(AiCoreVector, UnaryOpsDupAndTranspose) {
  Bench b;
  for (int i = 0; i < 64; ++i) num::store(b.ub() + 4 * i, DType::F32, 0.25 + i);
  vec(b, "vsqrt.f32 x1, x2, x4", VecCfg{}.pack());
  for (int i = 0; i < 64; ++i)
    ASSERT_EQ(num::load(b.ub() + 0x10000 + 4 * i, DType::F32), double(std::sqrt(float(0.25 + i))));
  b.run("li x1, 0x10000\nli x5, 0x4248\nli64 x4, " + std::to_string(VecCfg{}.pack()) + "\nvdup.f16 x1, x5, x4\nend\n");
  for (int i = 0; i < 128; ++i) ASSERT_EQ(num::load(b.ub() + 0x10000 + 2 * i, DType::F16), 3.140625);
  for (int i = 0; i < 256; ++i) num::store(b.ub() + 2 * i, DType::S16, i);
  b.run("li x1, 0x10000\nli x2, 0\nvtranspose.s16 x1, x2\nend\n");
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) ASSERT_EQ(num::load(b.ub() + 0x10000 + 2 * (r * 16 + c), DType::S16), c * 16 + r);
}

TEST(AiCoreVector, IntegerArithmeticWraps) {
  Bench b;
  for (int i = 0; i < 64; ++i) num::store(b.ub() + 4 * i, DType::S32, INT32_MAX - i);
  vec(b, "vadds.s32 x1, x2, x5, x4", VecCfg{}.pack(), 100);
  for (int i = 0; i < 64; ++i)
    ASSERT_EQ(std::int32_t(num::load(b.ub() + 0x10000 + 4 * i, DType::S32)),
              std::int32_t(std::uint32_t(INT32_MAX - i) + 100u))
        << i;
}

TEST(AiCoreVector, IntegerMultiplyWrapsAtTheElementWidth) {
  Bench b;
  // Products past 64 bits too (u32 x u32 of large values); each wraps to 32 bits as a loop does.
  std::mt19937_64 r(7);
  std::vector<std::uint32_t> a(64), c(64);
  for (int i = 0; i < 64; ++i) {
    a[i] = std::uint32_t(r());
    c[i] = std::uint32_t(r()) | 0x80000000u;
    std::memcpy(b.ub() + 4 * i, &a[i], 4);
    std::memcpy(b.ub() + 0x8000 + 4 * i, &c[i], 4);
  }
  vec(b, "vmul.s32 x1, x2, x3, x4", VecCfg{}.pack());
  for (int i = 0; i < 64; ++i) {
    std::uint32_t got;
    std::memcpy(&got, b.ub() + 0x10000 + 4 * i, 4);
    ASSERT_EQ(got, std::uint32_t(a[i] * c[i])) << i;
  }
}

TEST(AiCoreVector, EightBitTypesHaveTwoElementsPerMaskBit) {
  Bench b;
  for (int i = 0; i < 256; ++i) b.ub()[i] = std::uint8_t(i);
  // 256 s8 elements per repeat; mask bits 0, 70 and 127 cover elements 0-1, 140-141, 254-255.
  vec(b, "vadds.s8 x1, x2, x5, x4", VecCfg{}.pack(), 1, 0, 1ull, 1ull << 6 | 1ull << 63);
  for (int i = 0; i < 256; ++i) {
    const bool on = i / 2 == 0 || i / 2 == 70 || i / 2 == 127;
    ASSERT_EQ(b.ub()[0x10000 + i], on ? std::uint8_t(i + 1) : 0) << i;
  }
}

TEST(AiCoreVector, CompareRefusesEightBitTypes) {
  Bench b;
  b.run("li x1, 0\nli64 x4, " + std::to_string(VecCfg{}.pack()) + "\nvcmp.s8.eq x1, x1, x1, x4\nend\n");
  ASSERT_TRUE(b.fault);
  EXPECT_NE(b.fault->str().find("vcmp works on 16- and 32-bit types"), std::string::npos) << b.fault->str();
}

// --- the matrix path ------------------------------------------------------------------------

TEST(AiCoreCube, Nd2NzPlacesFractalsAndPads) {
  Bench b;
  // A 20 x 20 f16 matrix with row stride 24, into Nz with 32 padded rows; pad value 7.
  std::vector<std::uint16_t> m(20 * 24);
  for (int r = 0; r < 20; ++r)
    for (int c = 0; c < 24; ++c) m[r * 24 + c] = num::to_f16(r * 100 + c);
  b.poke(0x40000, m.data(), m.size() * 2);
  Nd2NzCfg cfg{20, 20, 24, 32};
  b.run("li x1, 0\nli x2, 0x40000\nli64 x3, " + std::to_string(cfg.pack()) + "\nli x4, " +
        std::to_string(num::to_f16(7)) + "\nnd2nz.gm2l1.f16 x1, x2, x3, x4\nend\n");
  ASSERT_FALSE(b.fault) << b.fault->str();
  const std::uint8_t* l1 = b.core.buffer(kL1);
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 32; ++c) {
      const double want = (r < 20 && c < 20) ? r * 100 + c : 7;
      ASSERT_EQ(num::load(l1 + ((c / 16) * 32 + r) * 32 + (c % 16) * 2, DType::F16), want) << r << "," << c;
    }
}

namespace {
// Writes A (m x k) into L0A and B (k x n) into L0B in their fractal layouts (see fractal.hpp).
template <typename T>
void place_ab(std::uint8_t* l0a, std::uint8_t* l0b, const std::vector<T>& A, const std::vector<T>& B, int m, int k,
              int n, int k0, DType t) {
  const int kf = (k + k0 - 1) / k0;
  const unsigned eb = dtype_bytes(t);
  for (int r = 0; r < m; ++r)
    for (int kk = 0; kk < k; ++kk)
      num::store(l0a + ((r / 16) * kf + kk / k0) * 512 + (r % 16) * 32 + (kk % k0) * eb, t, double(A[r * k + kk]));
  for (int kk = 0; kk < k; ++kk)
    for (int c = 0; c < n; ++c)
      num::store(l0b + ((c / 16) * kf + kk / k0) * 512 + (c % 16) * 32 + (kk % k0) * eb, t, double(B[kk * n + c]));
}
double c_at(const std::uint8_t* l0c, int mf, int r, int c, DType t) {
  return num::load(l0c + ((c / 16) * mf + r / 16) * 1024 + (r % 16) * 64 + (c % 16) * 4, t);
}
}  // namespace

TEST(AiCoreCube, MmadF16IntoF32WithPartialFractalsAndAccumulation) {
  Bench b;
  const int m = 20, k = 40, n = 24;
  std::mt19937 r(5);
  std::uniform_int_distribution<int> d(-8, 8);
  std::vector<double> A(m * k), B(k * n);
  for (auto& v : A) v = d(r) * 0.25;
  for (auto& v : B) v = d(r) * 0.5;
  place_ab(b.core.buffer(kL0A), b.core.buffer(kL0B), A, B, m, k, n, 16, DType::F16);
  MmadCfg init{m, k, n, true}, acc{m, k, n, false};
  b.run("li x1, 0\nli64 x4, " + std::to_string(init.pack()) + "\nli64 x5, " + std::to_string(acc.pack()) +
        "\nmmad.f32.f16 x1, x1, x1, x4\nmmad.f32.f16 x1, x1, x1, x5\nend\n");
  ASSERT_FALSE(b.fault) << b.fault->str();
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int kk = 0; kk < k; ++kk) s += A[i * k + kk] * B[kk * n + j];
      ASSERT_EQ(c_at(b.core.buffer(kL0C), 2, i, j, DType::F32), 2 * s) << i << "," << j;  // init, then += once more
    }
  // Timing: 2 x (startup + mf * kf * nf steps), with mf = 2, kf = 3, nf = 2.
  EXPECT_EQ(b.core.pipe_busy(Pipe::M), b.cfg.clock.period() * 2 * (b.cfg.cube_startup_cycles + 2 * 3 * 2));
  EXPECT_EQ(b.core.cube_flops(), 2.0 * 2 * m * k * n);
}

namespace {
// One mmad of m = 40, k = 64, n = 48 (padded to 48 x 64 x 48 in fractals) in fp16, then in int8,
// on a cube set by `set`; expects the given steps for each (worked out by hand per test: rows
// 48 / cube_m, k 64 / (cube_k x 16 / k0), columns 48 / cube_n, each rounded up; int8 has k0 = 32,
// twice the k per step).
void expect_cube_steps(const std::string& set, std::uint64_t f16_steps, std::uint64_t s8_steps) {
  Bench b({set});
  const MmadCfg mm{40, 64, 48, true};
  Tick busy = 0;
  for (bool int8 : {false, true}) {
    b.run("li x1, 0\nli64 x4, " + std::to_string(mm.pack()) + (int8 ? "\nmmad.s32.s8" : "\nmmad.f32.f16") +
          " x1, x1, x1, x4\nend\n");
    ASSERT_FALSE(b.fault) << b.fault->str();
    const std::uint64_t steps = int8 ? s8_steps : f16_steps;
    EXPECT_EQ(b.core.pipe_busy(Pipe::M) - busy,
              b.cfg.clock.period() * (b.cfg.cube_startup_cycles + steps * b.cfg.cube_cycles_per_step))
        << set << (int8 ? " int8" : " fp16");
    busy = b.core.pipe_busy(Pipe::M);
  }
}
}  // namespace

TEST(AiCoreCube, The16x16x16CubeTakesOneStepPerFractalTriple) {
  expect_cube_steps("platform.aicore.cube_m=16", 3 * 4 * 3, 3 * 2 * 3);
}
TEST(AiCoreCube, ACubeOfOneRowTakesAStepPerRow) {
  expect_cube_steps("platform.aicore.cube_m=1", 48 * 4 * 3, 48 * 2 * 3);
}
TEST(AiCoreCube, ADeeperCubeTakesFewerStepsOfK) {
  expect_cube_steps("platform.aicore.cube_k=32", 3 * 2 * 3, 3 * 1 * 3);
}
TEST(AiCoreCube, AWiderCubeTakesFewerStepsOfN) { expect_cube_steps("platform.aicore.cube_n=32", 3 * 4 * 2, 3 * 2 * 2); }
TEST(AiCoreCube, ACubeKThatDoesNotDivideKRoundsUp) {
  expect_cube_steps("platform.aicore.cube_k=5", 3 * 13 * 3, 3 * 7 * 3);
}

TEST(AiCoreCube, MmadInt8IntoInt32) {
  Bench b;
  const int m = 16, k = 64, n = 16;  // k0 = 32 for int8: two fractals of k
  std::mt19937 r(6);
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<int> A(m * k), B(k * n);
  for (auto& v : A) v = d(r);
  for (auto& v : B) v = d(r);
  place_ab(b.core.buffer(kL0A), b.core.buffer(kL0B), A, B, m, k, n, 32, DType::S8);
  b.run("li x1, 0\nli64 x4, " + std::to_string(MmadCfg{m, k, n, true}.pack()) + "\nmmad.s32.s8 x1, x1, x1, x4\nend\n");
  ASSERT_FALSE(b.fault) << b.fault->str();
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      std::int64_t s = 0;
      for (int kk = 0; kk < k; ++kk) s += A[i * k + kk] * B[kk * n + j];
      ASSERT_EQ(c_at(b.core.buffer(kL0C), 1, i, j, DType::S32), double(s));
    }
}

TEST(AiCoreCube, TransposingLoad2dAndFixpipeQuantReluToGm) {
  Bench b;
  // A 16 x 16 f16 fractal in L1, loaded transposed into L0B.
  for (int i = 0; i < 256; ++i) num::store(b.core.buffer(kL1) + 2 * i, DType::F16, i);
  // L0C: a 16 x 32 s32 tile (two fractals) for FixPipe: scale 0.5, relu, to s8 in GM.
  std::uint8_t* l0c = b.core.buffer(kL0C);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 32; ++c)
      num::store(l0c + ((c / 16) * 1 + r / 16) * 1024 + (r % 16) * 64 + (c % 16) * 4, DType::S32, (r - 8) * 40 + c);
  const float half = 0.5f;
  std::uint32_t half_bits;
  std::memcpy(&half_bits, &half, 4);
  b.run(
      "li x1, 0\nli x2, 0\nli x3, 0x101\nload2d.l0b.f16.t x1, x2, x3\n"
      "li x4, 0x50000\nli64 x5, " +
      std::to_string(FixpCfg{16, 32, 40}.pack()) + "\nli x6, " + std::to_string(half_bits) +
      "\nfixp.l0c2gm.s8.s32.relu.round x4, x2, x5, x6\nend\n");
  ASSERT_FALSE(b.fault) << b.fault->str();
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) ASSERT_EQ(num::load(b.core.buffer(kL0B) + 2 * (c * 16 + r), DType::F16), r * 16 + c);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 32; ++c) {
      const double v = std::max(0.0, ((r - 8) * 40 + c) * 0.5);
      ASSERT_EQ(std::int8_t(b.mem.bytes[0x50000 + r * 40 + c]), num::to_int(v, Round::Round, -128, 127))
          << r << "," << c;
    }
}

TEST(AiCoreCube, FixpipeToUbWritesNdRowsAtTheStride) {
  Bench b;
  // L0C: a 32 x 16 f32 tile (two fractals down) -> UB as f16 rows 48 elements apart, at 0x100.
  std::uint8_t* l0c = b.core.buffer(kL0C);
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 16; ++c) num::store(l0c + (r / 16) * 1024 + (r % 16) * 64 + c * 4, DType::F32, r * 0.25 - c);
  b.run("li x1, 0x100\nli x2, 0\nli64 x3, " + std::to_string(FixpCfg{32, 16, 48}.pack()) +
        "\nfixp.l0c2ub.f16.f32 x1, x2, x3, x0\nend\n");
  ASSERT_FALSE(b.fault) << b.fault->str();
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 16; ++c)
      ASSERT_EQ(num::load(b.ub() + 0x100 + (r * 48 + c) * 2, DType::F16), r * 0.25 - c) << r << "," << c;
  // A misaligned UB destination is refused like any other UB access.
  b.run("li x1, 0x110\nli x2, 0\nli64 x3, " + std::to_string(FixpCfg{16, 16, 16}.pack()) +
        "\nfixp.l0c2ub.f32.f32 x1, x2, x3, x0\nend\n");
  ASSERT_TRUE(b.fault);
  EXPECT_NE(b.fault->reason.find("destination UB address 0x110 is not aligned to 32 bytes"), std::string::npos)
      << b.fault->reason;
}

TEST(AiCoreCube, MmadOfManyRowsRoundsEachSumOnceWithNaNAndInfinity) {
  // m = 100: seven rows of fractals, the last partial. Values with few bits make every sum exact
  // in a double, in any order, so the reference is the plain loop's sum rounded once to f32: B's
  // rows of k are scaled by 2^-4 .. 2^3 in turn, so a sum spans up to about 32 bits, more than an
  // f32 keeps (most sums are rounded) and far fewer than a double's 53. Row 3 holds a NaN; row 70
  // an infinity (times 0: NaN; times +-1: +-inf); row 95 inf and -inf, which meet as NaN where
  // their rows of B have one sign or a zero (column 3 among others) and as +-inf elsewhere. A
  // second mmad, of A by B with its rows of k reversed, accumulates onto the first: f32(its sum +
  // the first's f32) with the addition in a double, which differs from adding the sum rounded to
  // f32 first for some elements (counted).
  Bench b;
  const int m = 100, k = 40, n = 24;
  std::mt19937 r(11);
  std::uniform_int_distribution<int> d(-1024, 1024);
  std::vector<double> A(m * k), B(k * n);
  for (auto& v : A) v = d(r) / 64.0;
  for (int kk = 0; kk < k; ++kk)
    for (int j = 0; j < n; ++j) B[kk * n + j] = std::ldexp(d(r) / 32.0, kk % 8 - 4);
  const double inf = std::numeric_limits<double>::infinity();
  A[3 * k + 5] = std::nan("");
  A[70 * k + 0] = inf;
  B[0 * n + 0] = 0, B[0 * n + 1] = 1, B[0 * n + 2] = -1;
  A[95 * k + 1] = inf, A[95 * k + 2] = -inf;
  B[1 * n + 3] = 1, B[2 * n + 3] = 1;
  place_ab(b.core.buffer(kL0A), b.core.buffer(kL0B), A, B, m, k, n, 16, DType::F16);
  auto f32_bits = [](double v) {
    const float f = float(v);
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return v != v ? 0x7fc00000u : u;
  };
  auto c_bits = [&](int i, int j) {
    std::uint32_t u;
    std::memcpy(&u, b.core.buffer(kL0C) + ((j / 16) * 7 + i / 16) * 1024 + (i % 16) * 64 + (j % 16) * 4, 4);
    return u;
  };
  std::vector<double> B2(B.size());  // the second mmad's B: B's rows of k reversed
  for (int kk = 0; kk < k; ++kk)
    for (int j = 0; j < n; ++j) B2[kk * n + j] = B[(k - 1 - kk) * n + j];
  std::vector<float> first(std::size_t(m) * n);
  for (bool init : {true, false}) {
    if (!init) place_ab(b.core.buffer(kL0A), b.core.buffer(kL0B), A, B2, m, k, n, 16, DType::F16);
    const std::vector<double>& Bp = init ? B : B2;
    b.run("li x1, 0\nli64 x4, " + std::to_string(MmadCfg{m, k, n, init}.pack()) +
          "\nmmad.f32.f16 x1, x1, x1, x4\nend\n");
    ASSERT_FALSE(b.fault) << b.fault->str();
    int nans = 0, infs = 0, rounded = 0, rounded_twice_differs = 0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int kk = 0; kk < k; ++kk) s += A[i * k + kk] * Bp[kk * n + j];
        const double prev = double(first[std::size_t(i) * n + j]);
        const std::uint32_t want = init ? f32_bits(s) : f32_bits(s + prev);
        ASSERT_EQ(c_bits(i, j), want) << (init ? "init " : "accumulate ") << i << "," << j;
        nans += want == 0x7fc00000u;
        infs += (want & 0x7fffffffu) == 0x7f800000u;
        rounded += !std::isnan(s) && double(float(s)) != s;
        rounded_twice_differs += !init && want != f32_bits(double(float(s)) + prev);
        if (init) std::memcpy(&first[std::size_t(i) * n + j], &want, 4);
      }
    if (init) {
      EXPECT_GE(nans, n + 2);  // row 3, column 0 of row 70, column 3 of row 95
      EXPECT_GE(infs, n - 1);  // row 70 but column 0, and row 95's columns of mixed signs
    } else {
      EXPECT_GT(rounded_twice_differs, 0);  // rounding the sum to f32 before the addition would be seen
    }
    EXPECT_GT(rounded, m * n / 2);  // the f32 rounding is exercised
  }
}

TEST(AiCoreCube, MmadBf16AndF32IntoF32) {
  // bf16 (k0 16) and f32 (k0 8) inputs; values exact in both formats, so the plain loop's
  // double result is the reference.
  Bench b;
  for (DType t : {DType::BF16, DType::F32}) {
    const Tick busy_before = b.core.pipe_busy(Pipe::M);
    const int m = 32, k = 24, n = 16, k0 = 32 / int(dtype_bytes(t));
    std::mt19937 r(7);
    std::uniform_int_distribution<int> d(-16, 16);
    std::vector<double> A(m * k), B(k * n);
    for (auto& v : A) v = d(r) / 8.0;
    for (auto& v : B) v = d(r) / 4.0;
    place_ab(b.core.buffer(kL0A), b.core.buffer(kL0B), A, B, m, k, n, k0, t);
    b.run("li x1, 0\nli64 x4, " + std::to_string(MmadCfg{m, k, n, true}.pack()) + "\nmmad.f32." + dtype_name(t) +
          " x1, x1, x1, x4\nend\n");
    ASSERT_FALSE(b.fault) << b.fault->str();
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int kk = 0; kk < k; ++kk) s += A[i * k + kk] * B[kk * n + j];
        ASSERT_EQ(c_at(b.core.buffer(kL0C), 2, i, j, DType::F32), s) << dtype_name(t) << " " << i << "," << j;
      }
    // f32 steps cover 8 of k: kf = 3 (f32) or 2 (bf16), mf = 2, nf = 1.
    const Tick steps = 2 * ((k + k0 - 1) / k0) * 1;
    EXPECT_EQ(b.core.pipe_busy(Pipe::M) - busy_before, b.cfg.clock.period() * (b.cfg.cube_startup_cycles + steps))
        << dtype_name(t);
  }
}

TEST(AiCoreVector, ConversionsBetweenEveryTypePair) {
  // Each pair, on values chosen to exercise rounding, saturation and sign; the reference is
  // the element converted by itself (num::store, checked against GCC in test_numeric).
  const DType types[] = {DType::F16, DType::BF16, DType::F32, DType::S8, DType::U8, DType::S16, DType::U16, DType::S32};
  Bench b;
  for (DType from : types)
    for (DType to : types) {
      if (from == to) continue;
      const unsigned wide = std::max(dtype_bytes(from), dtype_bytes(to)), elems = 256 / wide;
      std::vector<double> src(elems);
      for (unsigned i = 0; i < elems; ++i) {
        src[i] = (double(i) - elems / 2.0) * 3.37;
        num::store(b.ub() + i * dtype_bytes(from), from, src[i], Round::Trunc);
      }
      // Block strides of 1 on both sides pack each operand's elements: 32 B blocks of its own type.
      b.run("li x1, 0x10000\nli x2, 0\nli64 x4, " + std::to_string(VecCfg{1, 1, 1, 1, 8, 8, 8}.pack()) + "\nli x10, " +
            std::to_string(std::min(elems, 128u)) + "\nsetmaskn x10\nvconv." + dtype_name(to) + "." + dtype_name(from) +
            ".round x1, x2, x4\nend\n");
      ASSERT_FALSE(b.fault) << b.fault->str();
      for (unsigned i = 0; i < elems; ++i) {
        std::uint8_t want[4] = {};
        num::store(want, to, num::load(b.ub() + i * dtype_bytes(from), from), Round::Round);
        ASSERT_EQ(0, std::memcmp(want, b.ub() + 0x10000 + i * dtype_bytes(to), dtype_bytes(to)))
            << dtype_name(from) << " -> " << dtype_name(to) << " element " << i;
      }
    }
}

TEST(AiCoreVector, TheMaskIsReadAtIssue) {
  // Two adds behind a flag that MTE2 sets late: the mask changes between their issues, while
  // both still wait in the V queue. Each must use the mask it was issued with.
  Bench b;
  for (int i = 0; i < 128; ++i) num::store(b.ub() + 2 * i, DType::F16, 1.0);
  b.run(R"(
    li x1, 0x10000
    li x2, 0
    li64 x4, 0x0008080801010101
    li x5, 0x40000
    li x6, 0x1000
    li x7, 0x200001
    copy.gm2ub x6, x5, x7          # a slow copy (16 KiB) before the flag
    setflag mte2, v, 0
    waitflag mte2, v, 0
    li x10, 3
    setmaskn x10
    vadd.f16 x1, x2, x2, x4        # elements 0..2: 2.0
    li x10, 5
    setmaskn x10
    li x1, 0x10100
    vadd.f16 x1, x2, x2, x4        # elements 0..4 of the second output
    end
)");
  ASSERT_FALSE(b.fault) << b.fault->str();
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(num::load(b.ub() + 0x10000 + 2 * i, DType::F16), i < 3 ? 2.0 : 0.0) << i;
    EXPECT_EQ(num::load(b.ub() + 0x10100 + 2 * i, DType::F16), i < 5 ? 2.0 : 0.0) << i;
  }
}

namespace {
// The assembly that sets AIPP's registers (BT.601 full-range YUV -> RGB, mean 0, min 0, var 1)
// for a w x h NV12 picture at 0x40000 (pitch w), then converts all of it into L1 at 0.
std::string aipp_program(std::uint32_t w, std::uint32_t h, std::uint32_t c0) {
  AippCsc m;
  const std::int16_t mat[3][3] = {{256, 0, 359}, {256, -88, -183}, {256, 454, 0}};
  std::memcpy(m.m, mat, sizeof mat);
  m.in_bias[1] = m.in_bias[2] = 128;
  std::uint64_t csc[3];
  m.pack(csc);
  const std::uint64_t one = 0x3c00ull | 0x3c00ull << 16 | 0x3c00ull << 32;  // f16 1.0 each
  const std::uint64_t regs[7] = {AippSrc{w, h, 1, true, c0}.pack(), csc[0], csc[1], csc[2], 0, 0, one};
  const char* names[7] = {"aipp_src", "aipp_csc0", "aipp_csc1", "aipp_csc2", "aipp_mean", "aipp_min", "aipp_var"};
  std::string s;
  for (int i = 0; i < 7; ++i) s += "li64 x5, " + std::to_string(regs[i]) + "\nmtspr " + names[i] + ", x5\n";
  return s + "li x1, 0\nli x2, 0x40000\nli64 x3, " + std::to_string(AippCfg{0, 0, w, h}.pack()) +
         "\naipp.gm2l1 x1, x2, x3\nend\n";
}
}  // namespace

// AIPP: an 8 x 4 NV12 picture to RGB in f16 NC1HWC0 (C0 16), each value as the definition
// computes it in a plain loop (the chroma of a 2 x 2 block shared, the Q8 matrix floored), the
// channels past RGB zero; its time is the startup and the six row reads (4 Y rows, 2 UV rows of
// 8 B, a cycle each) and the memory's latency.
TEST(AiCoreAipp, Nv12ToRgbValuesAndTime) {
  Bench b;
  std::uint8_t pic[8 * 4 + 8 * 2];
  for (int i = 0; i < 32; ++i) pic[i] = std::uint8_t(16 + 7 * i);                              // Y
  for (int i = 0; i < 16; ++i) pic[32 + i] = std::uint8_t(i % 2 ? 200 - 9 * i : 60 + 11 * i);  // U V pairs
  b.poke(0x40000, pic, sizeof pic);
  b.run(aipp_program(8, 4, 16));
  ASSERT_FALSE(b.fault) << b.fault->str();
  const std::uint8_t* l1 = b.core.buffer(kL1);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 8; ++x) {
      const int Y = pic[y * 8 + x], U = pic[32 + (y / 2) * 8 + (x / 2) * 2] - 128,
                V = pic[32 + (y / 2) * 8 + (x / 2) * 2 + 1] - 128;
      const int rgb[3] = {(256 * Y + 359 * V) >> 8, (256 * Y - 88 * U - 183 * V) >> 8, (256 * Y + 454 * U) >> 8};
      for (int c = 0; c < 16; ++c) {
        const double want = c < 3 ? std::clamp(rgb[c], 0, 255) : 0;
        ASSERT_EQ(num::load(l1 + ((y * 8 + x) * 16 + c) * 2, DType::F16), want) << x << "," << y << " ch " << c;
      }
    }
  const Tick cyc = b.cfg.clock.period();
  EXPECT_EQ(b.core.pipe_busy(Pipe::MTE2), cyc * (b.cfg.mte_startup_cycles + 5) + kMemLat);
}

// When AIPP's conversion rate, not the reads, is the bound: 128 pixels at 1 a cycle.
TEST(AiCoreAipp, TheConversionRateBoundsItsTime) {
  Bench b({"platform.aicore.aipp_pixels_per_cycle=1"});
  b.run(aipp_program(64, 2, 4));
  ASSERT_FALSE(b.fault) << b.fault->str();
  const Tick cyc = b.cfg.clock.period();
  ASSERT_LT(3 * cyc + kMemLat, 128 * cyc);  // the reads end first
  EXPECT_EQ(b.core.pipe_busy(Pipe::MTE2), cyc * (b.cfg.mte_startup_cycles + 128));
}

// A crop outside the picture stops the core, naming the instruction's reason.
TEST(AiCoreAipp, ACropOutsideThePictureIsAFault) {
  Bench b;
  std::string p = aipp_program(8, 4, 16);
  p.replace(p.find("aipp.gm2l1"), 0, "li64 x3, " + std::to_string(AippCfg{4, 0, 8, 4}.pack()) + "\n");
  b.run(p);
  ASSERT_TRUE(b.fault);
  EXPECT_NE(b.fault->str().find("is not inside the picture"), std::string::npos) << b.fault->str();
}
