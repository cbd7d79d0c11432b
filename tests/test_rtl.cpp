// SPDX-License-Identifier: MIT
// RTL co-simulation's test bench: Verilog blocks (tests/rtl, models/vecacc) Verilated into
// plug-ins by the build, behind the bridges. An AXI4 slave memory at 64, 128 (with
// back-pressure), 256 and 512 bits, and a slave that answers reads out of order, takes write
// data before its address and answers SLVERR / DECERR, at 32 bits, against a reference byte
// array under accesses of random length, offset and byte enables; exact cycle times of a burst;
// the 4 KiB split; the vector engine's AXI4 master through the master bridge against a plain
// loop, at two widths and burst styles; the clock stopping when idle; the protocol checker
// stopping deliberately broken blocks; and the task scheduler and DVPP with their queues and
// data in a Verilog memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include "common/payload.hpp"
#include "common/system.hpp"
#include "dvpp/dvpp.hpp"
#include "media_reference.hpp"
#include "rtl/rtl_block.hpp"
#include "stimulus.hpp"
#include "ts/ts.hpp"

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
// Returns how many read bursts a slave with a `reordered` output answered out of order.
std::uint64_t random_traffic(const std::string& name, unsigned seed, std::size_t bytes = 1 << 16) {
  Bench b(mem_config(name));
  std::vector<std::uint8_t> ref(bytes, 0);
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
  const rtl::Pin reordered = b.blk->model().pin("reordered");
  return reordered ? reordered.get() : 0;
}

}  // namespace

TEST(RtlMem, Bus64RandomTraffic) { random_traffic("axi_mem64", 1); }
TEST(RtlMem, Bus128WithBackPressure) { random_traffic("axi_mem128_stall", 2); }
TEST(RtlMem, Bus256) { random_traffic("axi_mem256", 3); }
TEST(RtlMem, Bus512) { random_traffic("axi_mem512", 4); }
// tests/rtl/axi_ooo_mem.v at 32 bits with 1-bit IDs (the bridge's bursts share the two IDs, so
// order is kept per ID and broken across them): reads answered newest first, write data taken
// before its address; below its error regions.
TEST(RtlMem, Bus32OutOfOrderAndDataBeforeAddress) { EXPECT_GT(random_traffic("axi_ooo_mem32", 5, 0xe000), 10u); }

// SLVERR and DECERR become TLM errors (generic, address) and are counted; an access fails when
// any of its bursts does.
TEST(RtlMem, ErrorResponsesFailTheAccess) {
  Bench b(mem_config("axi_ooo_mem32"));
  b.stim.body = [&](test::Stimulus& s) {
    std::vector<std::uint8_t> buf(64, 0xab);
    auto status = [&](bool write, std::uint64_t addr) {
      tlm::tlm_generic_payload p;
      prepare(p, write, addr, buf.data(), unsigned(buf.size()));
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      s.socket->b_transport(p, d);
      s.pause(to_tick(d));
      return p.get_response_status();
    };
    EXPECT_EQ(status(false, 0xf000), tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(status(true, 0xe100), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(status(false, 0xdfe0), tlm::TLM_ADDRESS_ERROR_RESPONSE);  // its second burst is at 0xe000
    EXPECT_EQ(status(true, 0x100), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(status(false, 0x100), tlm::TLM_OK_RESPONSE);
  };
  sc_core::sc_start();
  EXPECT_EQ(b.failure(), "");
  EXPECT_EQ(b.stat("target.error_responses"), 3);
}

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

// The master bridge driven pin by pin by a master written here, on a 64-bit bus: narrow,
// unaligned, WRAP and FIXED bursts, a long one, two reads outstanding. The expected bytes come
// from the AXI4 specification's own formulas (A3.4.1), written out again here: every strobed
// byte lands where the formulas put it, and reads give it back on the same lanes.
namespace {

struct PinBench {
  static constexpr unsigned kBus = 8;
  std::uint8_t v[rtl::kSigs] = {};   // 1-bit pins
  std::uint64_t w[rtl::kSigs] = {};  // wider pins (8 bytes of storage each)
  std::vector<dvp_rtl_port> ports;
  rtl::AxiPort port;
  PinBench() {
    ports.reserve(rtl::kSigs);
    for (unsigned i = 0; i < rtl::kSigs; ++i) {
      const std::string n = rtl::sig_name(rtl::Sig(i));
      const bool one = n.find("valid") != std::string::npos || n.find("ready") != std::string::npos ||
                       n.find("last") != std::string::npos;
      const unsigned bits = one                                   ? 1
                            : n.find("data") != std::string::npos ? 64
                            : n.find("strb") != std::string::npos ? 8
                            : n.find("len") != std::string::npos  ? 8
                            : n.find("size") != std::string::npos ? 3
                            : n.find("addr") != std::string::npos ? 32
                            : n.find("id") != std::string::npos   ? 4
                                                                  : 2;
      ports.push_back({rtl::sig_name(rtl::Sig(i)), DVP_RTL_OUT, bits, one ? 1u : 8u,
                       one ? static_cast<void*>(&v[i]) : static_cast<void*>(&w[i])});
      port.pin[i] = rtl::Pin(&ports.back());
    }
    port.where = "bench", port.role = rtl::Role::Master, port.data_bytes = kBus, port.id_bits = 4;
  }
};

// AXI4 A3.4.1, as the specification writes it: the address and the byte lanes of beat n (1-based).
void spec_beat(std::uint64_t start, unsigned size, unsigned len, unsigned burst, unsigned n, std::uint64_t& addr,
               unsigned& lower, unsigned& upper) {
  const std::uint64_t nb = 1ull << size, bl = len + 1, dbb = PinBench::kBus;
  const std::uint64_t aligned = (start / nb) * nb, wrap_boundary = (start / (nb * bl)) * (nb * bl);
  if (burst == rtl::kFixed || n == 1) {
    addr = start;
    lower = unsigned(start - (start / dbb) * dbb), upper = unsigned(aligned + (nb - 1) - (start / dbb) * dbb);
    return;
  }
  addr = aligned + (n - 1) * nb;
  if (burst == rtl::kWrap && addr >= wrap_boundary + nb * bl) addr -= nb * bl;
  lower = unsigned(addr - (addr / dbb) * dbb), upper = lower + unsigned(nb) - 1;
}

struct Burst {
  bool write;
  std::uint64_t addr;
  unsigned size, len, burst, id;
};

}  // namespace

TEST(RtlMasterBridge, NarrowUnalignedWrapAndFixedBursts) {
  System sys;
  System::Scope scope(sys);
  PinBench pb;
  stats::Group g(sys.stats(), "bench");
  std::vector<std::string> violations;
  rtl::AxiChecker check(pb.port, g, "", [&](const std::string& s) { violations.push_back(s); });
  rtl::PortStats ps(g, "");
  std::vector<std::uint8_t> mem(1 << 16, 0), want(1 << 16, 0);
  const Clock clk(500.0);
  rtl::MasterBridge bridge(pb.port, check, ps, clk, 2, 64,
                           [&](bool wr, std::uint64_t a, std::uint8_t* d, unsigned n, Tick at, unsigned& resp) {
                             if (wr)
                               std::memcpy(&mem[a], d, n);
                             else
                               std::memcpy(d, &mem[a], n);
                             resp = rtl::kOkay;
                             return at + 7 * kPeriod;  // the memory's answer, some cycles later
                           });
  const std::vector<Burst> bursts = {{true, 0x1006, 2, 5, rtl::kIncr, 1},    {true, 0x2010, 3, 3, rtl::kWrap, 2},
                                     {true, 0x3014, 2, 7, rtl::kWrap, 3},    {true, 0x4008, 3, 3, rtl::kFixed, 4},
                                     {true, 0x5003, 0, 9, rtl::kIncr, 5},    {true, 0x6000, 3, 255, rtl::kIncr, 6},
                                     {false, 0x1006, 2, 5, rtl::kIncr, 7},   {false, 0x3014, 2, 7, rtl::kWrap, 8},
                                     {false, 0x2010, 3, 3, rtl::kWrap, 9},   {false, 0x5003, 0, 9, rtl::kIncr, 10},
                                     {false, 0x6000, 3, 255, rtl::kIncr, 11}};
  auto byte_of = [](unsigned b, unsigned beat, unsigned lane) { return std::uint8_t(b * 37 + beat * 11 + lane + 1); };
  Tick edge = 0;
  bool fired[rtl::kSigs] = {};  // VALID and READY both high at the last edge, by VALID signal
  std::uint8_t r_data[8] = {};
  bool r_last = false;
  unsigned r_id = 0;
  auto cycle = [&] {
    edge += kPeriod;
    ASSERT_LT(edge, Tick(100000) * kPeriod) << "the bridge stopped answering";
    for (auto [v, r] : {std::pair{rtl::AWVALID, rtl::AWREADY},
                        {rtl::WVALID, rtl::WREADY},
                        {rtl::BVALID, rtl::BREADY},
                        {rtl::ARVALID, rtl::ARREADY},
                        {rtl::RVALID, rtl::RREADY}})
      fired[v] = pb.v[v] && pb.v[r];
    std::memcpy(r_data, &pb.w[rtl::RDATA], 8), r_last = pb.v[rtl::RLAST], r_id = unsigned(pb.w[rtl::RID]);
    check.sample(edge);
    bridge.sample(edge);
    bridge.drive(edge + kPeriod);
  };
  using S = rtl::Sig;
  auto fire = [&](S valid, S) { return fired[valid]; };
  std::vector<std::size_t> reads;  // read bursts in flight, in issue order
  unsigned r_beat = 0, checked = 0;
  for (std::size_t i = 0; i < bursts.size() || !reads.empty();) {
    const bool issuing = i < bursts.size();
    const Burst& b = bursts[std::min(i, bursts.size() - 1)];
    // The address channel of burst i (a read may go while earlier reads are outstanding).
    const S av = b.write ? rtl::AWVALID : rtl::ARVALID;
    if (issuing) {
      pb.v[av] = 1;
      pb.w[b.write ? rtl::AWADDR : rtl::ARADDR] = b.addr, pb.w[b.write ? rtl::AWLEN : rtl::ARLEN] = b.len;
      pb.w[b.write ? rtl::AWSIZE : rtl::ARSIZE] = b.size, pb.w[b.write ? rtl::AWBURST : rtl::ARBURST] = b.burst;
      pb.w[b.write ? rtl::AWID : rtl::ARID] = b.id;
    }
    pb.v[rtl::RREADY] = 1, pb.v[rtl::BREADY] = 1;
    if (issuing && b.write) {  // its W beats, then its response, before the next burst
      do cycle();
      while (!fire(rtl::AWVALID, rtl::AWREADY) && !HasFatalFailure());
      pb.v[rtl::AWVALID] = 0;
      for (unsigned n = 1; n <= b.len + 1; ++n) {
        std::uint64_t a;
        unsigned lo, hi;
        spec_beat(b.addr, b.size, b.len, b.burst, n, a, lo, hi);
        std::uint8_t data[8], strb = 0;
        for (unsigned l = 0; l < 8; ++l) data[l] = byte_of(unsigned(i), n, l);
        for (unsigned l = lo; l <= hi; ++l) strb |= std::uint8_t(1u << l), want[a - a % 8 + l] = data[l];
        std::memcpy(&pb.w[rtl::WDATA], data, 8);
        pb.w[rtl::WSTRB] = strb, pb.v[rtl::WVALID] = 1, pb.v[rtl::WLAST] = n == b.len + 1;
        do cycle();
        while (!fire(rtl::WVALID, rtl::WREADY) && !HasFatalFailure());
      }
      pb.v[rtl::WVALID] = 0;
      do cycle();
      while (!fire(rtl::BVALID, rtl::BREADY) && !HasFatalFailure());
      EXPECT_EQ(pb.w[rtl::BID], b.id);
      ASSERT_FALSE(HasFatalFailure());
      ++i;
      continue;
    }
    cycle();
    ASSERT_FALSE(HasFatalFailure());
    if (fire(rtl::ARVALID, rtl::ARREADY)) reads.push_back(i++), pb.v[rtl::ARVALID] = 0;
    if (fire(rtl::RVALID, rtl::RREADY)) {  // a beat of the oldest read: its lanes hold what was written
      ASSERT_FALSE(reads.empty());
      const Burst& r = bursts[reads.front()];
      EXPECT_EQ(r_id, r.id);
      std::uint64_t a;
      unsigned lo, hi;
      spec_beat(r.addr, r.size, r.len, r.burst, ++r_beat, a, lo, hi);
      for (unsigned l = lo; l <= hi; ++l, ++checked)
        ASSERT_EQ(r_data[l], want[a - a % 8 + l]) << "read " << r.addr << " beat " << r_beat;
      EXPECT_EQ(r_last, r_beat == r.len + 1);
      if (r_beat == r.len + 1) reads.erase(reads.begin()), r_beat = 0;
    }
  }
  EXPECT_EQ(mem, want);
  EXPECT_TRUE(violations.empty()) << violations.front();
  EXPECT_GT(checked, 2000u);
  EXPECT_EQ(g.to_json().at("writes").get<int>(), 6);
  EXPECT_EQ(g.to_json().at("reads").get<int>(), 5);
}

namespace {

// The rest of the platform on its sockets: a model an RTL block could stand in for reaches
// memory only through its socket, so a Verilog memory placed where its queues are sees every
// access. tests/rtl/axi_mem.v (64 bits) at kRtlBase behind the slave bridge, on a bus with the
// model's registers and the stimulus, which fills and reads the memory through the bridge too.
constexpr std::uint64_t kRtlBase = 0x80000000, kRegs = 0x10000000, kIrqRegs = 0x20000000;

struct SocketBench : System {
  System::Scope scope{*this};
  mmio::MmioBus bus{"bus"};
  test::Stimulus stim{"stim"};
  test::FixedMemory unused{"unused", 0};
  irq::IrqController irq{"irq", 1, 0};
  std::unique_ptr<rtl::RtlBlock> blk;
  SocketBench() {
    rtl::RtlConfig c = mem_config("axi_mem64");
    c.name = "rtl", c.target_base = kRtlBase;
    blk = std::make_unique<rtl::RtlBlock>("rtl", c, 128);
    blk->set_output_dir(::testing::TempDir());
    bus.attach(blk->target, "rtl", "rtl", kRtlBase, c.target_size, 0);
    blk->note_binding(false);
    blk->mem.bind(unused.socket);
    bus.attach(irq, kIrqRegs);
    bus.connect_cpu(stim.socket, "stim");
  }
  double stat(const std::string& key) const { return stats().find("rtl")->to_json().at(key).get<double>(); }
  template <class T>
  void write(std::uint64_t addr, const T& v) {
    T copy = v;
    stim.access(true, addr, reinterpret_cast<std::uint8_t*>(&copy), sizeof copy);
  }
  template <class T>
  T read(std::uint64_t addr) {
    T v{};
    stim.access(false, addr, reinterpret_cast<std::uint8_t*>(&v), sizeof v);
    return v;
  }
};

// TLM accesses of `len` bytes at `addr` cut at `line` bytes.
unsigned pieces(std::uint64_t addr, std::uint64_t len, std::uint64_t line) {
  return unsigned((addr + len - 1) / line - addr / line + 1);
}

}  // namespace

// The task scheduler's submission and completion queues in the Verilog memory: two streams,
// an event between them. Every task entry it reads and every completion it writes are AXI
// bursts there (counted), the completions read back through the bridge are right and in
// order, and a task's fetch takes the RTL's cycles: a 72-byte entry is 9 beats, 10 cycles.
TEST(RtlReplacesMemory, TaskSchedulerQueues) {
  SocketBench b;
  ts::TsConfig cfg;
  cfg.dispatch_ns = 100, cfg.completion_ns = 50;
  ts::TaskScheduler::Wiring w;
  w.irq = &b.irq, w.line_bytes = 128;
  ts::TaskScheduler sched("ts", cfg, w);
  b.bus.attach(sched, kRegs);
  b.bus.connect_cpu(sched.ctrl, "ts.ctrl");  // no AI Cores, no DVPP: unused
  b.bus.connect_cpu(sched.mem, "ts.mem");
  const std::uint64_t sq0 = kRtlBase + 0x1000, sq1 = kRtlBase + 0x2000, cq = kRtlBase + 0x3000;
  auto task = [](std::uint32_t type, std::uint32_t stream, std::uint32_t id, std::uint32_t event) {
    dvp_task t{};
    t.type = type, t.stream = stream, t.id = id, t.event = event;
    return t;
  };
  std::vector<dvp_completion> done;
  double before = 0, after = 0;
  b.stim.body = [&](test::Stimulus& s) {
    b.write(sq0, task(DVP_TASK_RECORD, 0, 0, 3));
    b.write(sq0 + sizeof(dvp_task), task(DVP_TASK_RECORD, 0, 1, 4));
    b.write(sq1, task(DVP_TASK_WAIT, 1, 100, 3));
    for (const auto& [off, v] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{{0x0, std::uint32_t(cq)},
                                                                                     {0x4, 0},
                                                                                     {0x8, 16},
                                                                                     {0x100, std::uint32_t(sq0)},
                                                                                     {0x104, 0},
                                                                                     {0x108, 16},
                                                                                     {0x140, std::uint32_t(sq1)},
                                                                                     {0x144, 0},
                                                                                     {0x148, 16}})
      b.write(kRegs + off, v);
    before = b.stat("target_accesses");
    b.write(kRegs + 0x14c, std::uint32_t(1));  // stream 1 first: it waits for stream 0's record
    b.write(kRegs + 0x10c, std::uint32_t(2));
    while (b.read<std::uint32_t>(kRegs + 0xc) < 3) s.pause(1000000);  // CQ_TAIL
    after = b.stat("target_accesses");
    for (unsigned i = 0; i < 3; ++i) done.push_back(b.read<dvp_completion>(cq + i * sizeof(dvp_completion)));
  };
  sc_core::sc_start();
  ASSERT_EQ(b.failure(), "");
  ASSERT_EQ(sched.error(), "");
  const unsigned reads = pieces(sq0, sizeof(dvp_task), 128) + pieces(sq0 + sizeof(dvp_task), sizeof(dvp_task), 128) +
                         pieces(sq1, sizeof(dvp_task), 128);
  const unsigned writes = 3 * pieces(cq, sizeof(dvp_completion), 128);
  EXPECT_EQ(reads, 4u);  // the second entry crosses a line
  EXPECT_EQ(after - before, reads + writes);
  std::vector<std::uint32_t> ids;
  for (const dvp_completion& c : done) {
    EXPECT_EQ(c.status, std::uint32_t(DVP_OK));
    ids.push_back(c.id);
  }
  EXPECT_EQ(ids[0], 0u);  // the wait (100) ends after the record (0)
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::uint32_t>{0, 1, 100}));
  ASSERT_EQ(sched.records().size(), 3u);
  // Each stream's first task (records are in completion order, a stream's in its order): the
  // entry's read, then the dispatch. Stream 1's, rung first, has the memory to itself: up to a
  // cycle to the RTL's next edge and 10 cycles; stream 0's queues behind it in the Verilog.
  auto fetch = [&](unsigned stream) {
    for (const auto& r : sched.records())
      if (r.stream == stream) return r.start - r.submitted - 100000;
    return Tick(0);
  };
  EXPECT_GE(fetch(1), 10 * kPeriod);
  EXPECT_LE(fetch(1), 11 * kPeriod);
  EXPECT_GE(fetch(0), fetch(1) + 9 * kPeriod);
}

// DVPP with its command queue, its input JPEG and its output picture all in the Verilog memory:
// the command, the file and the picture cross the bridge as bursts, and the pixels read back
// through it equal TurboJPEG's.
TEST(RtlReplacesMemory, DvppQueueInputAndOutput) {
  SocketBench b;
  dvpp::DvppConfig cfg;
  cfg.clock = Clock(1000.0), cfg.bus_bytes_per_cycle = 64, cfg.outstanding = 8;
  dvpp::EngineConfig e;
  e.codec = dvpp::find_codec("jpegd");
  e.channels = 1, e.fps_1080p = 128, e.setup_us = 5, e.limits = {8, 8192, 16, 2}, e.addr_align = 128;
  e.max_input_bytes = 1 << 20;
  cfg.engines.push_back(e);
  dvpp::Dvpp::Wiring w;
  w.line_bytes = 128;
  dvpp::Dvpp dv("dvpp", cfg, w);
  b.bus.attach(dv, kRegs);
  b.bus.connect_cpu(dv.mem, "dvpp.mem");
  std::ifstream f(std::string(DVP_SOURCE_DIR) + "/scenarios/dvpp/media/tiny-16x16.jpg", std::ios::binary);
  const std::vector<std::uint8_t> file{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  ASSERT_FALSE(file.empty());
  const std::uint64_t queue = kRtlBase + 0x1000, in = kRtlBase + 0x4000, out = kRtlBase + 0x8000;
  dvpp_cmd result{};
  std::vector<std::uint8_t> pixels;
  double before = 0, after = 0;
  b.stim.body = [&](test::Stimulus& s) {
    std::vector<std::uint8_t> bytes = file;
    s.access(true, in, bytes.data(), unsigned(bytes.size()));
    dvpp_cmd c{};
    c.in_addr = in, c.in_size = file.size(), c.out_addr = out, c.out_size = 4096, c.out_format = DVPP_FMT_NV12;
    b.write(queue, c);
    const std::uint32_t regs = kRegs + dvpp::Dvpp::kEngineBase + dvpp::Dvpp::kEngineStride * DVPP_JPEGD;
    b.write(regs + 0x0, std::uint32_t(queue)), b.write(regs + 0x4, std::uint32_t(0));
    b.write(regs + 0x8, std::uint32_t(4));
    before = b.stat("target_accesses");
    b.write(regs + 0xc, std::uint32_t(1));
    while (dv.done(DVPP_JPEGD) < 1) sc_core::wait(dv.completion());
    after = b.stat("target_accesses");
    result = b.read<dvpp_cmd>(queue);
    pixels.resize(result.out_bytes);
    s.access(false, out, pixels.data(), unsigned(pixels.size()));
  };
  sc_core::sc_start();
  ASSERT_EQ(b.failure(), "");
  ASSERT_EQ(dv.error(), "");
  ASSERT_EQ(result.status, DVPP_DONE);
  EXPECT_EQ(result.width, 16u);
  EXPECT_EQ(result.height, 16u);
  const unsigned cmd = pieces(queue, sizeof(dvpp_cmd), 128);
  // The command read and written back, the file in line pieces, the picture in line pieces.
  EXPECT_EQ(after - before, 2 * cmd + pieces(in, file.size(), 128) + pieces(out, result.out_bytes, 128));
  dvpp::Picture have;
  have.format = DVPP_FMT_NV12, have.width = result.width, have.height = result.height;
  have.stride_w = result.stride_w, have.stride_h = result.stride_h, have.bytes = pixels;
  const platform::PixelDiff d = platform::compare_pictures(have, platform::reference_picture(DVPP_JPEGD, file, have));
  EXPECT_EQ(d.differ, 0u) << d.where;
}
