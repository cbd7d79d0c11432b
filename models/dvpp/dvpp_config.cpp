// SPDX-License-Identifier: MIT
#include "dvpp_config.hpp"

#include <algorithm>
#include <cmath>

namespace dvp::dvpp {

using cfg::Type;

namespace {

// The output's layout: a picture's strides (an encoder, writing a bitstream, has none).
void describe_layout(cfg::Spec& e) {
  e.param("width_align", Type::Int, "the output's row stride, in pixels, is the width rounded up to this")
      .unit("pixels")
      .defaults("16")
      .range(1, 4096);
  e.param("height_align", Type::Int, "the output's plane height is the height rounded up to this")
      .unit("rows")
      .defaults("2")
      .range(1, 4096);
}

void describe_engine(cfg::Spec& e, const Codec& c) {
  e.param("channels", Type::Int, "hardware instances of the engine, each taking the next command").range(1, 64);
  e.param("fps_1080p", Type::Float,
          "frames per second of one channel on 1920 x 1080 pictures; other sizes take time in proportion to "
          "their pixels (after the setup)")
      .unit("1/s")
      .range(0.01, 1e6);
  e.param("setup_us", Type::Float, "per frame, before its pixels: the command, the headers, the tables")
      .unit("us")
      .defaults("0")
      .range(0, 1e6);
  e.param("max_fps", Type::Float, "one channel's most frames per second at any size (0: no limit)")
      .unit("1/s")
      .defaults("0")
      .range(0, 1e6);
  e.param("total_fps_1080p", Type::Float,
          "the engine's pixel rate, shared by its channels, in 1920 x 1080 frames per second (0: none)")
      .unit("1/s")
      .defaults("0")
      .range(0, 1e6);
  if (!c.picture_out || c.bitstream_in)  // VPC has pictures on both sides
    e.param("max_mbps", Type::Float,
            "one channel's bitstream rate, in (decoders) or out (encoders): a frame takes at least its share of the "
            "stream's bits at this rate (0: no bound; pictures alone set the time)")
        .unit("Mbit/s")
        .defaults("0")
        .range(0, 1e6);
  e.param("min_side", Type::Int, "least width and height accepted").unit("pixels").defaults("1").range(1, 65535);
  e.param("max_side", Type::Int, "greatest width and height accepted").unit("pixels").defaults("8192").range(1, 65535);
  if (c.picture_out) describe_layout(e);
  e.param("max_input_kib", Type::Int,
          "the largest input a command may name (larger ones are refused before any byte is read)")
      .unit("KiB")
      .defaults("65536")
      .range(1, 1 << 20);
  e.param("addr_align", Type::Int, "input and output buffer addresses must be multiples of this")
      .unit("B")
      .defaults("1")
      .range(1, 65536);
}

EngineConfig read_engine(const cfg::Node& n, const Codec& c) {
  EngineConfig e;
  e.codec = &c;
  e.channels = std::uint32_t(n.get_uint("channels"));
  e.fps_1080p = n.get_double("fps_1080p");
  e.setup_us = n.get_double("setup_us");
  e.max_fps = n.get_double("max_fps");
  e.total_fps_1080p = n.get_double("total_fps_1080p");
  if (!c.picture_out || c.bitstream_in) e.max_mbps = n.get_double("max_mbps");
  e.limits.min_side = std::uint32_t(n.get_uint("min_side"));
  e.limits.max_side = std::uint32_t(n.get_uint("max_side"));
  if (c.picture_out) {
    e.limits.width_align = std::uint32_t(n.get_uint("width_align"));
    e.limits.height_align = std::uint32_t(n.get_uint("height_align"));
  }
  e.addr_align = std::uint32_t(n.get_uint("addr_align"));
  e.max_input_bytes = n.get_uint("max_input_kib") * 1024;
  if (e.limits.min_side > e.limits.max_side) n.at("min_side").fail("is greater than max_side");
  if (e.setup_us * 1e-6 >= 1.0 / e.fps_1080p)
    n.at("setup_us")
        .fail("is not less than one 1080p frame's time (1 / fps_1080p = " + std::to_string(1e6 / e.fps_1080p) + " us)");
  return e;
}

}  // namespace

Tick EngineConfig::frame_ps(std::uint64_t pixels, std::uint64_t stream_bytes) const {
  const double setup = setup_us * 1e6, per_pixel = (1e12 / fps_1080p - setup) / (1920.0 * 1080.0);
  double t = setup + per_pixel * double(pixels);
  if (max_fps > 0) t = std::max(t, 1e12 / max_fps);
  if (max_mbps > 0) t = std::max(t, double(stream_bytes) * 8 / max_mbps * 1e6);  // ps: bits / (Mbit/s) x 1e6
  return Tick(std::llround(t));
}

Tick EngineConfig::shared_ps(std::uint64_t pixels) const {
  return total_fps_1080p > 0 ? Tick(std::llround(1e12 / total_fps_1080p * double(pixels) / (1920.0 * 1080.0))) : 0;
}

void DvppConfig::describe(cfg::Spec& s) {
  s.param("stop", Type::Int, "ring stop of DVPP's bus interface").min(0);
  s.param("clock_mhz", Type::Float, "clock of the bus interface").unit("MHz").range(1, 10000);
  s.param("bus_bytes_per_cycle", Type::Int, "bytes a channel moves per cycle, read or write").unit("B").range(1, 4096);
  s.param("outstanding", Type::Int, "memory requests one channel keeps in flight").range(1, 1024);
  for (const Codec& c : codecs()) describe_engine(s.section(c.name, c.what).optional(), c);
}

DvppConfig DvppConfig::from(const cfg::Node& n) {
  DvppConfig d;
  d.stop = std::uint32_t(n.get_uint("stop"));
  d.clock = Clock(n.get_double("clock_mhz"));
  d.bus_bytes_per_cycle = std::uint32_t(n.get_uint("bus_bytes_per_cycle"));
  d.outstanding = std::uint32_t(n.get_uint("outstanding"));
  for (const Codec& c : codecs())
    if (const cfg::Node* e = n.find(c.name)) d.engines.push_back(read_engine(*e, c));
  return d;
}

const EngineConfig* DvppConfig::engine(dvpp_engine e) const {
  for (const EngineConfig& c : engines)
    if (c.codec->engine == e) return &c;
  return nullptr;
}

}  // namespace dvp::dvpp
