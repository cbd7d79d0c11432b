// SPDX-License-Identifier: MIT
// DVPP's test bench: its registers, a frame's exact time from the configured rate, channels
// taking commands in parallel, a bad input failing alone, and the pixels against TurboJPEG's.
// The engine's bus goes to a fixed-latency memory that holds the command queues too: the engine
// reads each command and writes its result there, one memory access each.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "common/system.hpp"
#include "dvpp/dvpp.hpp"
#include "media_reference.hpp"
#include "stimulus.hpp"

using namespace dvp;

namespace {

constexpr std::uint64_t kDramBase = 0x80000000, kQueue = kDramBase + 0x1000;
constexpr std::uint64_t kIn = 0x100000, kOut = 0x200000;  // in the bench memory
constexpr Tick kMemLat = 20 * 1000;
constexpr Tick kFetch = kMemLat, kWriteBack = kMemLat;  // a command's read, its result's write
constexpr std::uint32_t kJpegd = dvpp::Dvpp::kEngineBase + dvpp::Dvpp::kEngineStride * DVPP_JPEGD;
constexpr std::uint32_t kVpc = dvpp::Dvpp::kEngineBase + dvpp::Dvpp::kEngineStride * DVPP_VPC;

std::vector<std::uint8_t> media(const std::string& name) {
  std::ifstream f(std::string(DVP_SOURCE_DIR) + "/scenarios/dvpp/media/" + name, std::ios::binary);
  EXPECT_TRUE(f.good()) << name;
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

dvpp::DvppConfig config(std::uint32_t channels) {
  dvpp::DvppConfig c;
  c.clock = Clock(1000.0);
  c.bus_bytes_per_cycle = 64;
  c.outstanding = 8;
  dvpp::EngineConfig e;
  e.codec = dvpp::find_codec("jpegd");
  e.channels = channels, e.fps_1080p = 128, e.setup_us = 50;
  e.limits = {32, 8192, 16, 2};
  e.addr_align = 128;
  c.engines.push_back(e);
  e.codec = dvpp::find_codec("vpc");
  e.channels = 1, e.fps_1080p = 120, e.setup_us = 20;
  e.limits = {16, 4096, 16, 2};
  c.engines.push_back(e);
  return c;
}

struct Bench : System {
  System::Scope scope{*this};
  test::FixedMemory mem{"mem", kMemLat};
  test::Stimulus stim{"stim"};
  std::unique_ptr<dvpp::Dvpp> dv;

  explicit Bench(std::uint32_t channels) : Bench(config(channels)) {}
  explicit Bench(const dvpp::DvppConfig& cfg) {
    dvpp::Dvpp::Wiring w;
    w.line_bytes = 128;
    dv = std::make_unique<dvpp::Dvpp>("dvpp", cfg, w);
    dv->mem.bind(mem.socket);
    stim.socket.bind(dv->bus);
  }
  void put(std::uint64_t at, const std::vector<std::uint8_t>& b) {
    for (std::size_t i = 0; i < b.size(); ++i) mem.bytes[at + i] = b[i];
  }
  std::uint32_t reg(std::uint32_t off) {
    std::uint32_t v = 0;
    stim.post(false, off, reinterpret_cast<std::uint8_t*>(&v), 4);
    return v;
  }
  void set(std::uint32_t off, std::uint32_t v) { stim.post(true, off, reinterpret_cast<std::uint8_t*>(&v), 4); }
  // Commands into engine `regs`' queue (at `queue`), then the doorbell.
  void submit(const std::vector<dvpp_cmd>& cmds, std::uint32_t regs = kJpegd, std::uint64_t queue = kQueue) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(cmds.data());
    put(queue, std::vector<std::uint8_t>(bytes, bytes + cmds.size() * sizeof(dvpp_cmd)));
    set(regs + 0x0, std::uint32_t(queue));
    set(regs + 0x4, 0);
    set(regs + 0x8, 16);
    set(regs + 0xc, std::uint32_t(cmds.size()));
  }
  dvpp_cmd result(unsigned i, std::uint64_t queue = kQueue) {
    dvpp_cmd c;
    auto* bytes = reinterpret_cast<std::uint8_t*>(&c);
    for (std::size_t k = 0; k < sizeof c; ++k) bytes[k] = mem.bytes[queue + i * sizeof c + k];
    return c;
  }
  void wait_done(std::uint32_t n) {
    while (dv->done(DVPP_JPEGD) < n) sc_core::wait(dv->completion());
  }
};

dvpp_cmd command(std::uint64_t in, std::size_t size, std::uint64_t out) {
  dvpp_cmd c{};
  c.in_addr = in, c.in_size = size, c.out_addr = out, c.out_size = 1 << 20;
  return c;
}

// The configured time of a frame, worked out here: the setup, then the pixels at the rate that
// makes 1920 x 1080 take 1 / 128 s.
Tick frame_time(double pixels) { return Tick(std::llround(50e6 + (1e12 / 128 - 50e6) * pixels / (1920.0 * 1080.0))); }

}  // namespace

TEST(Dvpp, RegistersSayWhatIsBuilt) {
  Bench b(2);
  b.stim.body = [&](test::Stimulus&) {
    EXPECT_EQ(b.reg(0x0), (1u << DVPP_JPEGD) | (1u << DVPP_VPC));  // BUILT
    EXPECT_EQ(b.reg(kJpegd + 0x20), 2u);                           // JPEGD_CHANNELS
    EXPECT_EQ(b.reg(kJpegd + 0x14), 0u);                           // DONE
    tlm::tlm_response_status st;
    std::uint32_t v = 5;
    b.stim.post(true, kJpegd + 0x10, reinterpret_cast<std::uint8_t*>(&v), 4, 0, &st);  // SQ_HEAD: read-only
    EXPECT_NE(st, tlm::TLM_OK_RESPONSE);
  };
  sc_core::sc_start();
}

// One 333 x 211 JPEG: its time to the picosecond, the fields written back, the pixels.
TEST(Dvpp, FrameTimeAndPixels) {
  Bench b(2);
  const auto file = media("scene-333x211-420.jpg");
  b.put(kIn, file);
  Tick took = 0;
  b.stim.body = [&](test::Stimulus&) {
    b.submit({command(kIn, file.size(), kOut)});
    const Tick t0 = now_tick();
    b.wait_done(1);
    took = now_tick() - t0;
    EXPECT_EQ(b.reg(0x4), 1u << DVPP_JPEGD);  // IRQ_STATUS until acknowledged
    b.set(kJpegd + 0x1c, 1);
    EXPECT_EQ(b.reg(0x4), 0u);
  };
  sc_core::sc_start();
  EXPECT_EQ(took, kFetch + frame_time(333.0 * 211.0) + kWriteBack);
  const dvpp_cmd r = b.result(0);
  EXPECT_EQ(r.status, DVPP_DONE);
  EXPECT_EQ(r.format, DVPP_FMT_NV12);
  EXPECT_EQ(r.width, 333u);
  EXPECT_EQ(r.height, 211u);
  EXPECT_EQ(r.stride_w, 336u);  // 16-aligned
  EXPECT_EQ(r.stride_h, 212u);  // 2-aligned
  EXPECT_EQ(r.out_bytes, 336u * 212u * 3u / 2u);
  dvpp::Picture have;
  have.format = DVPP_FMT_NV12, have.width = 333, have.height = 211, have.stride_w = 336, have.stride_h = 212;
  for (std::uint64_t i = 0; i < r.out_bytes; ++i) have.bytes.push_back(b.mem.bytes[kOut + i]);
  const platform::PixelDiff d = platform::compare_pictures(have, platform::reference_picture(DVPP_JPEGD, file, have));
  EXPECT_EQ(d.differ, 0u) << d.where;
}

// Three frames on two channels: two at once, the third when a channel frees.
TEST(Dvpp, ChannelsWorkInParallel) {
  Bench b(2);
  const auto file = media("scene-333x211-420.jpg");
  b.put(kIn, file);
  b.stim.body = [&](test::Stimulus&) {
    b.submit({command(kIn, file.size(), kOut), command(kIn, file.size(), kOut), command(kIn, file.size(), kOut)});
    b.wait_done(3);
  };
  sc_core::sc_start();
  const Tick t = frame_time(333.0 * 211.0);
  EXPECT_EQ(b.result(0).end_ns, (kFetch + t) / 1000);
  EXPECT_EQ(b.result(1).end_ns, (kFetch + t) / 1000);
  EXPECT_NE(b.result(0).channel, b.result(1).channel);
  // The freed channel writes its result back, then fetches the third command.
  EXPECT_EQ(b.result(2).start_ns, (kFetch + t + kWriteBack + kFetch) / 1000);
  EXPECT_EQ(b.result(2).end_ns, (2 * kFetch + 2 * t + kWriteBack) / 1000);
}

// A truncated JPEG fails on its channel with the reason; the good one beside it is decoded.
TEST(Dvpp, BadInputFailsAlone) {
  Bench b(2);
  const auto bad = media("truncated.jpg"), good = media("scene-333x211-420.jpg");
  b.put(kIn, bad);
  b.put(kIn + 0x10000, good);
  b.stim.body = [&](test::Stimulus&) {
    b.submit({command(kIn, bad.size(), kOut), command(kIn + 0x10000, good.size(), kOut + 0x40000),
              command(kIn + 3, good.size(), kOut)});
    b.wait_done(3);
    EXPECT_EQ(b.reg(kJpegd + 0x18), 2u);  // ERRORS
  };
  sc_core::sc_start();
  EXPECT_EQ(b.result(0).status, DVPP_ERR_CORRUPT);
  EXPECT_EQ(b.result(1).status, DVPP_DONE);
  EXPECT_EQ(b.result(2).status, DVPP_ERR_ALIGN);
  EXPECT_EQ(b.result(1).end_ns, (kFetch + frame_time(333.0 * 211.0)) / 1000);
  ASSERT_EQ(b.dv->frames().size(), 3u);
  for (const auto& f : b.dv->frames()) {
    if (f.status == DVPP_ERR_CORRUPT) {
      EXPECT_NE(f.reason.find("Premature end"), std::string::npos) << f.reason;
    }
  }
}

// VPC on JPEGD's output: a 333 x 211 NV12 picture enlarged twice takes the setup and the output's
// pixels (the larger) at 120 fps of 1080p; the output is laid out at the engine's strides.
TEST(Dvpp, VpcTimeFollowsTheLargerPicture) {
  Bench b(1);
  const auto file = media("scene-333x211-420.jpg");
  b.put(kIn, file);
  Tick took = 0;
  b.stim.body = [&](test::Stimulus&) {
    b.submit({command(kIn, file.size(), kOut)});
    b.wait_done(1);
    dvpp_cmd v = command(kOut, 336 * 212 * 3 / 2, kOut + 0x80000);
    v.in_format = DVPP_FMT_NV12, v.in_width = 333, v.in_height = 211, v.in_stride_w = 336, v.in_stride_h = 212;
    v.out_width = 666, v.out_height = 422, v.out_format = DVPP_FMT_RGB888;
    const Tick t0 = now_tick();
    b.submit({v}, kVpc, kQueue + 0x1000);
    while (b.dv->done(DVPP_VPC) < 1) sc_core::wait(b.dv->completion());
    took = now_tick() - t0;
  };
  sc_core::sc_start();
  const dvpp_cmd r = b.result(0, kQueue + 0x1000);
  EXPECT_EQ(r.status, DVPP_DONE);
  EXPECT_EQ(r.width, 666u);
  EXPECT_EQ(r.stride_w, 672u);
  EXPECT_EQ(r.out_bytes, 672u * 422u * 3u);
  EXPECT_EQ(took,
            kFetch + Tick(std::llround(20e6 + (1e12 / 120 - 20e6) * 666.0 * 422.0 / (1920.0 * 1080.0))) + kWriteBack);
}

// VDEC's shared pixel rate: four 352 x 288 streams of 4 frames on four channels at 30 fps each
// (max_fps), with the engine's rate set to 2 frames of 1080p a second: each frame reserves
// 352 x 288 / (1920 x 1080) / 2 s of it in turn, so the four streams end when 16 frames' shares
// have passed, later than 4 frames at 30 fps would.
TEST(Dvpp, VdecChannelsShareThePixelRate) {
  dvpp::DvppConfig c = config(1);
  dvpp::EngineConfig v;
  v.codec = dvpp::find_codec("vdec");
  v.channels = 4, v.fps_1080p = 30, v.max_fps = 30, v.total_fps_1080p = 2, v.setup_us = 0;
  v.limits = {128, 4096, 16, 2};
  v.addr_align = 128, v.max_input_bytes = 1 << 20;
  c.engines = {v};
  Bench b(c);
  const auto file = media("pattern-352x288-baseline.h264");
  b.put(kIn, file);
  constexpr std::uint32_t kVdec = dvpp::Dvpp::kEngineBase + dvpp::Dvpp::kEngineStride * DVPP_VDEC;
  Tick took = 0;
  b.stim.body = [&](test::Stimulus&) {
    std::vector<dvpp_cmd> cmds;
    for (std::uint64_t i = 0; i < 4; ++i) {
      dvpp_cmd d = command(kIn, file.size(), kOut + i * 0x100000);
      d.stream = DVPP_STREAM_H264;
      cmds.push_back(d);
    }
    b.submit(cmds, kVdec);
    const Tick t0 = now_tick();
    while (b.dv->done(DVPP_VDEC) < 4) sc_core::wait(b.dv->completion());
    took = now_tick() - t0;
  };
  sc_core::sc_start();
  const Tick share = Tick(std::llround(1e12 / 2 * (352.0 * 288.0) / (1920.0 * 1080.0)));  // one frame's
  EXPECT_EQ(took, kFetch + 16 * share + kWriteBack);
  EXPECT_GT(took, Tick(4 * 1e12 / 30));  // the shared rate, not the channels, set the time
  const dvpp_cmd r = b.result(0);
  EXPECT_EQ(r.status, DVPP_DONE);
  EXPECT_EQ(r.frames, 4u);
}

namespace {

// One engine of `codec` on its own: `channels`, a 1080p rate, a setup, a bitstream rate.
dvpp::DvppConfig one_engine(const char* codec, double fps_1080p, double setup_us, double max_mbps) {
  dvpp::DvppConfig c = config(1);
  dvpp::EngineConfig e;
  e.codec = dvpp::find_codec(codec);
  e.channels = 1, e.fps_1080p = fps_1080p, e.setup_us = setup_us, e.max_mbps = max_mbps;
  e.limits = {128, 4096, 16, 2};
  e.addr_align = 128, e.max_input_bytes = 1 << 20;
  c.engines = {e};
  return c;
}

// Runs `cmd` on `engine`'s queue; returns the time from the doorbell to its completion, less the
// command's fetch and write-back.
Tick run_one(Bench& b, dvpp_engine engine, const dvpp_cmd& cmd) {
  const std::uint32_t regs = dvpp::Dvpp::kEngineBase + dvpp::Dvpp::kEngineStride * engine;
  Tick took = 0;
  b.stim.body = [&](test::Stimulus&) {
    b.submit({cmd}, regs);
    const Tick t0 = now_tick();
    while (b.dv->done(engine) < 1) sc_core::wait(b.dv->completion());
    took = now_tick() - t0 - kFetch - kWriteBack;
  };
  sc_core::sc_start();
  return took;
}

// Two raw 128 x 128 NV12 frames (a user's file) as an H.264 command.
dvpp_cmd venc_command(std::size_t size) {
  dvpp_cmd v = command(kIn, size, kOut);
  v.in_format = DVPP_FMT_NV12, v.in_width = 128, v.in_height = 128, v.in_stride_w = 128, v.in_stride_h = 128;
  v.stream = DVPP_STREAM_H264, v.qp = 28, v.gop = 0;
  return v;
}

}  // namespace

// VENC: two 128 x 128 frames take two frames' time at 30 fps of 1080p (after a 100 us setup
// each); the stream in memory is the host encoder's, byte for byte, and libavformat + libavcodec
// (not the engine's parser) decode it to two frames within 35 dB of the file's.
TEST(Dvpp, VencTimeAndStream) {
  Bench b(one_engine("venc", 30, 100, 0));
  const auto file = media("pattern-128x128-nv12.yuv");
  b.put(kIn, file);
  const dvpp_cmd cmd = venc_command(file.size());
  const Tick took = run_one(b, DVPP_VENC, cmd);
  EXPECT_EQ(took, 2 * Tick(std::llround(100e6 + (1e12 / 30 - 100e6) * 128.0 * 128.0 / (1920.0 * 1080.0))));
  const dvpp_cmd r = b.result(0);
  ASSERT_EQ(r.status, DVPP_DONE);
  EXPECT_EQ(r.frames, 2u);
  std::vector<std::uint8_t> have;
  for (std::uint64_t i = 0; i < r.out_bytes; ++i) have.push_back(b.mem.bytes[kOut + i]);
  const dvpp::Decoded host = dvpp::encode_video(dvpp::Request{file.data(), file.size(), cmd}, dvpp::Limits{});
  EXPECT_EQ(have, host.picture.bytes);
  dvpp::Picture src;
  src.format = DVPP_FMT_NV12, src.width = src.height = src.stride_w = src.stride_h = 128, src.bytes = file;
  const dvpp::Picture decoded = platform::video_reference(have, DVPP_STREAM_H264, src, 2);
  ASSERT_EQ(decoded.bytes.size(), file.size());
  EXPECT_GE(platform::psnr(decoded, src, 2), 35.0);
}

// A bitstream bound: at 0.05 Mbit/s a frame's share of the stream (its bytes x 8 / 2 frames)
// takes longer than its pixels, so the stream's bits set the time (VENC: written; VDEC: read).
TEST(Dvpp, BitstreamRateBoundsTheFrameTime) {
  const auto file = media("pattern-128x128-nv12.yuv");
  Bench e(one_engine("venc", 30, 100, 0.05));
  e.put(kIn, file);
  const Tick venc = run_one(e, DVPP_VENC, venc_command(file.size()));
  const std::uint64_t bytes = e.result(0).out_bytes;
  EXPECT_EQ(venc, 2 * Tick(std::llround(double(bytes / 2) * 8 / 0.05 * 1e6)));
  EXPECT_GT(venc, Tick(2 * 1e12 / 30));  // longer than the pixels alone
}

TEST(Dvpp, VdecBitstreamRate) {
  const auto stream = media("pattern-352x288-baseline.h264");
  Bench d(one_engine("vdec", 1000, 0, 0.1));
  d.put(kIn, stream);
  dvpp_cmd c = command(kIn, stream.size(), kOut);
  c.stream = DVPP_STREAM_H264;
  const Tick vdec = run_one(d, DVPP_VDEC, c);
  EXPECT_EQ(d.result(0).frames, 4u);
  EXPECT_EQ(vdec, 4 * Tick(std::llround(double(stream.size() / 4) * 8 / 0.1 * 1e6)));
}
