// SPDX-License-Identifier: MIT
// Ring timing: hop costs, contention on shared links, direction choice, and the TLM module.
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "ring/ring.hpp"
#include "stimulus.hpp"

using namespace dvp;
using namespace dvp::ring;

namespace {

// 8 stops, 1 GHz, 32 B/cycle links, 2 cycles per hop, 16 B headers.
RingConfig cfg8(bool bidir = true) {
  cfg::Node p = test::preset_platform(
      "ascend310", {"platform.ring.stops=8", std::string("platform.ring.routing=") + (bidir ? "shortest" : "clockwise"),
                    "platform.ring.clock_mhz=1000", "platform.ring.link_bytes_per_cycle=32",
                    "platform.ring.hop_cycles=2", "platform.ring.header_bytes=16"});
  return RingConfig::from(p.at("ring"));
}
RingConfig fast8() {
  RingConfig c = cfg8();
  c.fidelity = Fidelity::Fast;
  return c;
}
constexpr Tick kNs = 1000;

}  // namespace

TEST(RingTiming, KHopsCostKTimesHopPlusSerialisation) {
  RingTiming r(cfg8());
  // 256 B over 3 hops: 3 x 2 cycles + 256/32 cycles.
  EXPECT_EQ(r.transfer(0, 3, kDat, 256, 0), (3 * 2 + 8) * kNs);
  // 100 B: ceil(100/32) = 4 cycles of serialisation.
  EXPECT_EQ(r.transfer(4, 5, kDat, 100, 1000 * kNs), 1000 * kNs + (2 + 4) * kNs);
  // Same stop: the local port, free.
  EXPECT_EQ(r.transfer(2, 2, kDat, 256, 50 * kNs), 50 * kNs);
}

TEST(RingTiming, TwoRequestersSharingALinkTakeTwiceAsLong) {
  RingTiming r(cfg8());
  const std::uint32_t bytes = 32 * 1024;  // 1024 cycles of serialisation
  Tick one = RingTiming(cfg8()).transfer(0, 1, kDat, bytes, 0);
  // Two transfers over the same link 0->1 at the same time: the second waits for the first.
  Tick a = r.transfer(0, 1, kDat, bytes, 0);
  Tick b = r.transfer(0, 1, kDat, bytes, 0);
  EXPECT_EQ(a, one);
  EXPECT_EQ(b, 2 * one - 2 * kNs);  // the hop latency is paid once per transfer, not queued
  // Both finish together only if they use different links: 0->1 and 2->3 are independent.
  RingTiming r2(cfg8());
  EXPECT_EQ(r2.transfer(0, 1, kDat, bytes, 0), r2.transfer(2, 3, kDat, bytes, 0));
}

TEST(RingTiming, ChannelsDoNotContend) {
  RingTiming r(cfg8());
  Tick d = r.transfer(0, 1, kDat, 32 * 100, 0);
  Tick q = r.transfer(0, 1, kReq, 16, 0);
  EXPECT_EQ(q, (2 + 1) * kNs);  // the request channel is free while data streams
  EXPECT_EQ(d, (2 + 100) * kNs);
}

TEST(RingTiming, ShortestDirectionOnABidirectionalRing) {
  RingTiming bi(cfg8(true));
  EXPECT_EQ(bi.route(0, 7).hops, 1u);
  EXPECT_EQ(bi.route(0, 7).dir, 1u);
  EXPECT_EQ(bi.route(0, 3).hops, 3u);
  EXPECT_EQ(bi.route(0, 3).dir, 0u);
  EXPECT_EQ(bi.route(6, 2).hops, 4u);  // a tie
  RingTiming uni(cfg8(false));
  EXPECT_EQ(uni.route(0, 7).hops, 7u);
  EXPECT_EQ(uni.transfer(0, 7, kDat, 32, 0), (7 * 2 + 1) * kNs);
}

TEST(RingModule, ReadCostsRequestHopsTargetAndDataHops) {
  RingConfig c = cfg8();
  Ring ring("ring", c);
  test::Stimulus st("st");
  test::FixedMemory mem("mem", 50 * kNs);
  ring.connect_initiator(st.socket, 0, "st");
  ring.connect_target(mem.socket, 3, "mem");
  ring.set_router([](std::uint64_t a, unsigned) { return a < 0x10000 ? 0 : -1; });
  std::uint8_t buf[256];
  Tick read = 0, write = 0;
  tlm::tlm_response_status unmapped = tlm::TLM_OK_RESPONSE;
  st.body = [&](test::Stimulus& s) {
    read = s.access(false, 0x100, buf, 256);
    write = s.access(true, 0x100, buf, 256);
    s.post(false, 0x20000, buf, 4, 0, &unmapped);
  };
  sc_core::sc_start();
  // Read: header 3 hops (3x2 + 1), memory 50, data back 3 hops (3x2 + 8).
  EXPECT_EQ(read, (7 + 50 + 14) * kNs);
  // Write: header and data go together (the data is the longer: 3x2 + 8), memory, response 3x2 + 1.
  EXPECT_EQ(write, (14 + 50 + 7) * kNs);
  EXPECT_EQ(unmapped, tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

// The fast fidelity's links (budgets, not timelines) cost the same on an idle ring and when
// transfers asked for at once share a link; a link's busy time is its booked cycles.
TEST(RingTiming, FastFidelityCostsTheSameHopsAndQueues) {
  RingTiming r(fast8());
  EXPECT_EQ(r.transfer(0, 3, kDat, 256, 0), (3 * 2 + 8) * kNs);
  EXPECT_EQ(r.transfer(4, 5, kDat, 100, 1000 * kNs), 1000 * kNs + (2 + 4) * kNs);
  EXPECT_EQ(r.transfer(2, 2, kDat, 256, 50 * kNs), 50 * kNs);
  const std::uint32_t bytes = 32 * 1024;
  RingTiming s(fast8());
  const Tick one = RingTiming(fast8()).transfer(0, 1, kDat, bytes, 0);
  EXPECT_EQ(s.transfer(0, 1, kDat, bytes, 0), one);
  EXPECT_EQ(s.transfer(0, 1, kDat, bytes, 0), 2 * one - 2 * kNs);
  EXPECT_EQ(s.transfer(0, 1, kReq, 16, 0), (2 + 1) * kNs);  // another channel: free
  EXPECT_EQ(s.link_busy(0, kDat), 2 * 1024 * kNs);
}
