// SPDX-License-Identifier: MIT
// Fuzz target: DVPP's codecs on any bytes. The input's magic picks the decoder (JPEG, PNG, else
// an H.264 or H.265 stream by its last byte), the last byte the output format asked for. Every
// input ends in DONE or a refusal with a reason; a picture decoded holds exactly its frames at
// its strides within the engine's limits, and goes on through VPC (a crop and a resize from the
// last byte) and JPEGE, which must hold to the same rules. Never a crash, a hang or a leak.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dvpp/codec.hpp"

using namespace dvp::dvpp;

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

// The rules every result keeps.
void check(const Decoded& d, const Codec& c, const Limits& limits) {
  if (d.status != DVPP_DONE) return require(d.status > DVPP_DONE && !d.reason.empty());
  const Picture& p = d.picture;
  require(d.frames >= 1 && !p.bytes.empty());
  if (!c.picture_out) return;
  require(p.width >= limits.min_side && p.height >= limits.min_side && p.width <= limits.max_side &&
          p.height <= limits.max_side);
  require(p.stride_w >= p.width && p.stride_h >= p.height && p.stride_w % limits.width_align == 0);
  require(p.bytes.size() == picture_bytes(p.format, p.stride_w, p.stride_h) * d.frames);
  for (const auto& [off, len] : d.spans) require(len && off + len <= p.bytes.size());
}

// A command that reads `p` (its first frame) as a picture in memory.
dvpp_cmd picture_cmd(const Picture& p, std::uint8_t sel) {
  dvpp_cmd cmd{};
  cmd.in_format = p.format, cmd.in_width = p.width, cmd.in_height = p.height;
  cmd.in_stride_w = p.stride_w, cmd.in_stride_h = p.stride_h;
  cmd.crop_x = (sel & 1) * 2, cmd.crop_y = (sel & 2);
  cmd.crop_w = p.width > 4 ? p.width - 4 : 0, cmd.crop_h = p.height > 4 ? p.height - 4 : 0;
  cmd.out_width = 16 + sel % 97, cmd.out_height = 16 + sel % 61;
  cmd.out_format = 1 + (sel >> 4) % 7;
  cmd.csc = sel % 3;
  cmd.quality = 1 + sel % 100;
  if (sel & 4) {  // a canvas around the resized crop: filled, or kept (a paste)
    cmd.canvas_w = cmd.out_width + 2 * (sel % 5), cmd.canvas_h = cmd.out_height + 2 * (sel % 7);
    cmd.paste_x = 2 * (sel % 3), cmd.paste_y = 2 * ((sel >> 5) % 4);
    cmd.fill = 0x01020304u * sel, cmd.fill_mode = (sel >> 3) & 1;
  }
  cmd.out_size = ~0ull;
  return cmd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint8_t sel = data[size - 1];
  const bool jpeg = data[0] == 0xff && data[1] == 0xd8, png = size > 8 && !std::memcmp(data, "\x89PNG", 4);
  const Codec& c = *find_codec(jpeg ? "jpegd" : png ? "pngd" : "vdec");
  const Limits limits{16, 2048, 16, 2};
  dvpp_cmd cmd{};
  cmd.out_format = sel % 9;
  cmd.stream = sel & 0x80 ? DVPP_STREAM_H265 : DVPP_STREAM_H264;
  cmd.max_frames = 2;
  cmd.out_size = ~0ull;
  const Decoded d = c.decode(Request{data, size, cmd}, limits);
  check(d, c, limits);
  if (d.status != DVPP_DONE) return 0;
  const Picture& p = d.picture;
  const std::uint64_t frame = picture_bytes(p.format, p.stride_w, p.stride_h);
  std::vector<std::uint8_t> in(p.bytes.begin(), p.bytes.begin() + std::ptrdiff_t(frame));
  in.resize(frame + 64);  // libswscale reads a little past a picture, as DVPP pads its input
  for (const char* next : {"vpc", "jpege"}) {
    const Codec& n = *find_codec(next);
    const dvpp_cmd pc = picture_cmd(p, sel);
    check(n.decode(Request{in.data(), frame, pc}, limits), n, limits);
  }
  return 0;
}

// libsystemc's main() is never used (libFuzzer has its own), but the library still needs one.
extern "C" int sc_main(int, char**) { return 0; }
