// SPDX-License-Identifier: MIT
// DVPP's parameters (platform.dvpp), read and checked once: the bus interface it shares, and per
// engine its channels, its published (or assumed) rate and its limits. Every rate is a key, so a
// what-if can change it; the presets say where each value comes from.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "codec.hpp"
#include "common/config.hpp"
#include "common/time.hpp"

namespace dvp::dvpp {

struct EngineConfig {
  const Codec* codec = nullptr;
  std::uint32_t channels = 1;  // hardware instances working in parallel
  double fps_1080p = 30;       // frames per second of one channel on 1920 x 1080 pictures
  double setup_us = 0;         // per frame: the command, headers and tables (within 1 / fps_1080p)
  double max_fps = 0;          // one channel's most frames per second at any size (0: no limit)
  double total_fps_1080p = 0;  // the engine's pixel rate shared by its channels, in 1080p frames (0: none)
  double max_mbps = 0;         // one channel's bitstream rate, read or written, Mbit/s (0: no bound)
  Limits limits;
  std::uint32_t addr_align = 1;                 // input and output buffer addresses, bytes
  std::uint64_t max_input_bytes = 64ull << 20;  // the largest input a command may name

  // Picoseconds one channel takes for a picture of `pixels` pixels: the setup, then the pixels
  // at the rate that makes a 1080p frame take exactly 1 / fps_1080p; at least max_fps's frame
  // time, and at least its `stream_bytes` of bitstream at max_mbps.
  Tick frame_ps(std::uint64_t pixels, std::uint64_t stream_bytes = 0) const;
  // Picoseconds of the shared pixel rate a picture takes (0 without one).
  Tick shared_ps(std::uint64_t pixels) const;
};

struct DvppConfig {
  std::uint32_t stop = 0;  // ring stop of its bus interface
  Clock clock;             // the bus interface's
  std::uint32_t bus_bytes_per_cycle = 64;
  std::uint32_t outstanding = 16;  // requests in flight per channel
  std::vector<EngineConfig> engines;

  static void describe(cfg::Spec& s);
  static DvppConfig from(const cfg::Node& n);
  const EngineConfig* engine(dvpp_engine e) const;
};

}  // namespace dvp::dvpp
