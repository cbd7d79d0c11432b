// SPDX-License-Identifier: MIT
// RTL co-simulation's test bench: Verilog blocks (tests/rtl, models/vecacc) Verilated into
// plug-ins by the build, behind the bridges. An AXI4 slave memory at 64, 128 (with
// back-pressure) and 256 bits against a reference byte array under accesses of random length,
// offset and byte enables; exact cycle times of a burst; the 4 KiB split; the vector engine's
// AXI4 master through the master bridge against a plain loop, at two widths and burst styles;
// the clock stopping when idle; and the protocol checker stopping deliberately broken blocks.
#include <gtest/gtest.h>

#include <random>

#include "common/payload.hpp"
#include "common/system.hpp"
#include "rtl/rtl_block.hpp"
#include "stimulus.hpp"

using namespace dvp;

namespace {

constexpr double kMhz = 500;  // the RTL's clock in these tests: 2 ns
constexpr Tick kPeriod = 2000;

std::string plugin(const std::string& name) { return std::string(DVP_RTL_DIR) + "/" + name + ".so"; }

rtl::RtlConfig mem_config(const std::string& name) {
  rtl::RtlConfig c;
  c.name = "mem", c.plugin = plugin(name), c.clock = Clock(kMhz);
  c.has_target = true, c.target_base = 0, c.target_size = 1 << 16;
  c.target.prefix = "s_axi_";
  return c;
}

rtl::RtlConfig vecacc_config(const std::string& name) {
  rtl::RtlConfig c = mem_config(name);
  c.name = "acc", c.target_size = 256;
  c.has_initiator = true, c.initiator.prefix = "m_axi_";
  return c;
}

struct Bench : System {
  System::Scope scope{*this};
  test::Stimulus stim{"stim"};
  test::FixedMemory mem{"dram", 20000};
  std::unique_ptr<rtl::RtlBlock> blk;
  explicit Bench(const rtl::RtlConfig& c, unsigned line_bytes = 128) {
    blk = std::make_unique<rtl::RtlBlock>("rtl", c, line_bytes);
    blk->set_output_dir(::testing::TempDir());
    stim.socket.bind(blk->target);
    blk->note_binding(false);
    blk->mem.bind(mem.socket);  // unused by a block without an initiator
  }
  double stat(const std::string& key) const { return stats().find("rtl")->to_json().at(key).get<double>(); }
  std::uint32_t reg(std::uint32_t off) {
    std::uint32_t v = 0;
    stim.access(false, off, reinterpret_cast<std::uint8_t*>(&v), 4);
    return v;
  }
  void set(std::uint32_t off, std::uint32_t v) { stim.access(true, off, reinterpret_cast<std::uint8_t*>(&v), 4); }
};

// Random reads and writes of 1 B to 3 KiB at random offsets, a third with byte enables, against
// a reference array; every read compared byte for byte.
void random_traffic(const std::string& name, unsigned seed) {
  Bench b(mem_config(name));
  std::vector<std::uint8_t> ref(1 << 16, 0);
  bool ran = false;
  b.stim.body = [&](test::Stimulus& s) {
    std::mt19937 rng(seed);
    for (int n = 0; n < 200; ++n) {
      const unsigned len = 1 + rng() % (n % 4 == 0 ? 3072 : 100);
      const std::uint64_t addr = rng() % (ref.size() - len);
      std::vector<std::uint8_t> data(len), be;
      if (rng() % 2) {
        for (auto& x : data) x = std::uint8_t(rng());
        tlm::tlm_generic_payload p;
        prepare(p, true, addr, data.data(), len);
        if (rng() % 3 == 0) {
          be.resize(1 + rng() % 8);
          for (auto& e : be) e = rng() % 2 ? 0xff : 0;
          p.set_byte_enable_ptr(be.data()), p.set_byte_enable_length(unsigned(be.size()));
        }
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        s.socket->b_transport(p, d);
        ASSERT_EQ(p.get_response_status(), tlm::TLM_OK_RESPONSE);
        for (unsigned i = 0; i < len; ++i)
          if (be.empty() || be[i % be.size()] == 0xff) ref[addr + i] = data[i];
        s.pause(to_tick(d));
      } else {
        s.access(false, addr, data.data(), len);
        for (unsigned i = 0; i < len; ++i)
          ASSERT_EQ(data[i], ref[addr + i]) << "read of " << len << " B at " << addr << ", byte " << i;
      }
    }
    ran = true;
  };
  sc_core::sc_start();
  EXPECT_TRUE(ran);
  EXPECT_EQ(b.failure(), "");
  EXPECT_GT(b.stat("target.reads"), 100);
}

}  // namespace

TEST(RtlMem, Bus64RandomTraffic) { random_traffic("axi_mem64", 1); }
TEST(RtlMem, Bus128WithBackPressure) { random_traffic("axi_mem128_stall", 2); }
TEST(RtlMem, Bus256ManyIds) { random_traffic("axi_mem256", 3); }

// A read of 8 beats: ARREADY at the first edge, RVALID a cycle after the slave took the address,
// then a beat an edge: (beats + 1) cycles. A write: AW at the first edge, W from the next edge,
// B one edge after the last W: (beats + 1) cycles too, plus one: it comes at the edge that
// answered the read, whose handshake is over, so its AWVALID is first seen an edge later.
TEST(RtlMem, BurstTimesAreExactCycles) {
  Bench b(mem_config("axi_mem64"));
  b.stim.body = [&](test::Stimulus& s) {
    s.align = kPeriod;
    s.pause(1000000);
    std::uint8_t buf[64] = {};
    EXPECT_EQ(s.access(false, 0x100, buf, 64), 9 * kPeriod);
    EXPECT_EQ(s.access(true, 0x100, buf, 64), 10 * kPeriod);
    EXPECT_EQ(s.access(false, 0x100, buf, 8), 3 * kPeriod);
    s.pause(100 * kPeriod);
    EXPECT_EQ(s.access(false, 0x100, buf, 8), 2 * kPeriod);
  };
  sc_core::sc_start();
  EXPECT_EQ(b.stat("target.reads"), 3);
  EXPECT_EQ(b.stat("target.writes"), 1);
  EXPECT_EQ(b.stat("target.latency_cycles_max"), 9);
}

// 8 KiB from 0xf80 on a 64-bit bus: 16 beats to the 4 KiB boundary, then bursts of 256 beats
// (2 KiB, the AXI4 limit) and the rest: 16 + 256 + 256 + 256 + 240 beats.
TEST(RtlMem, BurstsSplitAt4KiBAnd256Beats) {
  Bench b(mem_config("axi_mem64"));
  b.stim.body = [&](test::Stimulus& s) {
    std::vector<std::uint8_t> w(8192), r(8192);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = std::uint8_t(i * 7 + 3);
    s.access(true, 0xf80, w.data(), 8192);
    s.access(false, 0xf80, r.data(), 8192);
    EXPECT_EQ(r, w);
  };
  sc_core::sc_start();
  EXPECT_EQ(b.stat("target.writes"), 5);
  EXPECT_EQ(b.stat("target.reads"), 5);
  EXPECT_EQ(b.stat("target.beats"), 2 * 1024);
}

namespace {

void expect_violation(const std::string& plugin_name, bool vecacc, const std::string& what) {
  Bench b(vecacc ? vecacc_config(plugin_name) : mem_config(plugin_name));
  b.stim.body = [&](test::Stimulus& s) {
    std::uint8_t buf[64] = {};
    tlm::tlm_response_status st;
    if (!vecacc) return void(s.post(false, 0x40, buf, 32, 0, &st));
    b.set(0x08, 0x1000), b.set(0x10, 0x2000), b.set(0x18, 0x2ff0), b.set(0x20, 64);
    b.set(0x00, 1);
    s.pause(10000000);
  };
  sc_core::sc_start();
  EXPECT_NE(b.failure().find(what), std::string::npos) << b.failure();
  EXPECT_NE(b.failure().find("AXI protocol violation at"), std::string::npos) << b.failure();
}

}  // namespace

TEST(RtlChecker, RlastOnTheWrongBeat) {
  expect_violation("axi_mem_rlast", false, "signal s_axi_rlast (rlast): RLAST high before the burst's last beat");
}
TEST(RtlChecker, ResponseToAnIdWithNothingOutstanding) {
  expect_violation("axi_mem_rid", false, "signal s_axi_rid (rid): response to ID 1, which has no burst outstanding");
}
TEST(RtlChecker, WlastOnTheWrongBeat) {
  expect_violation("vecacc_wlast", true, "signal m_axi_wlast (wlast): WLAST high before the burst's last beat");
}
TEST(RtlChecker, BurstAcross4KiB) {
  expect_violation("vecacc_4k", true, "signal m_axi_awaddr (awaddr): burst crosses a 4 KiB boundary");
}

// The handshake rules on pins driven by hand: VALID dropped while READY was low, and the payload
// changed while VALID waited.
TEST(RtlChecker, ValidAndPayloadHoldUntilReady) {
  System sys;
  System::Scope scope(sys);
  std::uint8_t valid = 0, ready = 0, last = 0;
  std::uint32_t data = 0;
  std::vector<dvp_rtl_port> ports = {{"r_valid", DVP_RTL_OUT, 1, 1, &valid},
                                     {"r_ready", DVP_RTL_IN, 1, 1, &ready},
                                     {"r_data", DVP_RTL_OUT, 32, 4, &data},
                                     {"r_last", DVP_RTL_OUT, 1, 1, &last}};
  rtl::AxiPort port;
  port.where = "bench", port.role = rtl::Role::Slave;
  port.pin[rtl::RVALID] = rtl::Pin(&ports[0]), port.pin[rtl::RREADY] = rtl::Pin(&ports[1]);
  port.pin[rtl::RDATA] = rtl::Pin(&ports[2]), port.pin[rtl::RLAST] = rtl::Pin(&ports[3]);
  stats::Group g(sys.stats(), "bench");
  std::vector<std::string> seen;
  rtl::AxiChecker check(port, g, "", [&](const std::string& w) { seen.push_back(w); });
  valid = 1, data = 5, check.sample(1000);
  data = 5, check.sample(2000);  // still waiting, unchanged: fine
  EXPECT_TRUE(seen.empty());
  data = 6, check.sample(3000);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NE(seen[0].find("signal r_data (rdata): payload changed while VALID and not READY"), std::string::npos);
  valid = 0, check.sample(4000);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_NE(seen[1].find("at 4.000 ns, signal r_valid (rvalid): VALID dropped before READY"), std::string::npos)
      << seen[1];
  valid = 1, ready = 1, check.sample(5000);
  valid = 0, check.sample(6000);  // taken at 5 ns: may drop
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_EQ(g.to_json().at("r_stall_cycles").get<int>(), 3);
}

namespace {

// The vector engine: program it through AXI4-Lite, poll STATUS, compare with a plain loop.
void run_vecacc(const std::string& name, std::uint32_t op, std::uint32_t count, std::uint64_t a, std::uint64_t bsrc,
                std::uint64_t dst) {
  Bench b(vecacc_config(name));
  std::vector<std::int32_t> va(count), vb(count);
  std::mt19937 rng(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    va[i] = std::int32_t(rng()), vb[i] = std::int32_t(rng());
    for (int k = 0; k < 4; ++k) {
      b.mem.bytes[a + 4 * i + k] = std::uint8_t(std::uint32_t(va[i]) >> (8 * k));
      b.mem.bytes[bsrc + 4 * i + k] = std::uint8_t(std::uint32_t(vb[i]) >> (8 * k));
    }
  }
  const std::uint32_t scale = 0x10003;
  std::uint32_t status = 0, cycles = 0;
  b.stim.body = [&](test::Stimulus& s) {
    s.pause(100000);
    EXPECT_EQ(b.reg(0x30), 0x7ecacc01u);
    b.set(0x08, std::uint32_t(a)), b.set(0x0c, std::uint32_t(a >> 32));
    b.set(0x10, std::uint32_t(bsrc)), b.set(0x18, std::uint32_t(dst)), b.set(0x20, count);
    b.set(0x24, op), b.set(0x28, scale), b.set(0x00, 1);
    while ((status = b.reg(0x04)) & 1) s.pause(1000000);
    cycles = b.reg(0x2c);
  };
  sc_core::sc_start();
  ASSERT_EQ(b.failure(), "");
  EXPECT_EQ(status, 2u);  // done, no error
  EXPECT_GT(cycles, count / 8);
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t got = 0;
    for (int k = 0; k < 4; ++k) got |= std::uint32_t(b.mem.bytes[dst + 4 * i + k]) << (8 * k);
    const std::uint32_t want = op == 0 ? std::uint32_t(va[i]) + std::uint32_t(vb[i]) : std::uint32_t(va[i]) * scale;
    ASSERT_EQ(got, want) << "element " << i;
  }
  EXPECT_EQ(b.mem.bytes.count(dst + 4 * count), 0u);  // the tail's strobes held the next word
  EXPECT_EQ(b.stat("initiator.error_responses"), 0);
}

}  // namespace

TEST(RtlVecacc, AddsAcrossPagesAt128Bits) { run_vecacc("vecacc", 0, 1501, 0x10000ff0, 0x20003000, 0x30000770); }
TEST(RtlVecacc, ScalesAt64BitsWithLongBursts) { run_vecacc("vecacc64", 1, 3001, 0x10000008, 0, 0x30001ff8); }

// Between two operations 1 ms apart the clock stops: the block runs its cycles, not the 500,000
// of the idle millisecond.
TEST(RtlVecacc, ClockStopsWhileIdle) {
  Bench b(vecacc_config("vecacc"));
  b.stim.body = [&](test::Stimulus& s) {
    b.set(0x20, 64), b.set(0x18, 0x1000), b.set(0x00, 1);
    s.pause(1000000000);
    while (b.reg(0x04) & 1) s.pause(100000);
    b.set(0x00, 1);
    while (b.reg(0x04) & 1) s.pause(100000);
  };
  sc_core::sc_start();
  ASSERT_EQ(b.failure(), "");
  EXPECT_LT(b.blk->cycles(), 2000u);
  EXPECT_GE(b.stat("wakeups"), 2);
}
