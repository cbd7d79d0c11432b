// SPDX-License-Identifier: MIT
// The pixels of the DVPP engines: each engine's codec is one entry of a table (name, ABI number,
// decode function, output formats), computed by a well-kept library (libjpeg-turbo, libpng).
// A decode returns the picture laid out as the engine writes it in memory (planes at the
// configured stride alignment, enum dvpp_format), or the status and reason it refuses the input.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "dvp_abi.h"
}

namespace dvp::dvpp {

// What an engine accepts and how it lays out its output.
struct Limits {
  std::uint32_t min_side = 1, max_side = 1u << 16;  // width and height, pixels
  std::uint32_t width_align = 1, height_align = 1;  // output stride_w / stride_h
};

struct Picture {
  dvpp_format format = DVPP_FMT_NATIVE;
  std::uint32_t width = 0, height = 0, stride_w = 0, stride_h = 0;
  std::vector<std::uint8_t> bytes;  // as in memory: every plane at its stride (padding zero)
};

struct Decoded {
  dvpp_status status = DVPP_PENDING;  // DVPP_DONE, or why not
  std::string reason;                 // for an error: the library's or the engine's words
  Picture picture;
  std::uint64_t work_pixels = 0;   // what the engine's time scales with (0: the picture's pixels)
  std::uint32_t frames = 1;        // pictures, one after another in `picture.bytes` (VDEC: the stream's)
  std::uint64_t stream_bytes = 0;  // a decoder's bitstream bytes its frames took (0: all of the input)
  // Only these (offset, bytes) of the picture are written (VPC pasting into a canvas it keeps);
  // empty: all of it.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
};

// What an engine is asked: the input's bytes, and the command (its output format; VPC's picture,
// crop and size).
struct Request {
  const std::uint8_t* data;
  std::size_t size;
  const dvpp_cmd& cmd;
  dvpp_format want() const { return dvpp_format(cmd.out_format); }
};
using DecodeFn = Decoded (*)(const Request& r, const Limits& limits);

struct Codec {
  const char* name;  // the config's and the scenario's word: "jpegd"
  dvpp_engine engine;
  DecodeFn decode;
  const char* what;           // one line for docs
  bool picture_out = true;    // writes a picture (laid out at strides), not a bitstream
  bool bitstream_in = false;  // reads a bitstream (a decoder), not a picture
};

// The engines built, in ABI order.
const std::vector<Codec>& codecs();
const Codec* find_codec(const std::string& name);

// The bytes of one picture of `format` at these strides (planes as enum dvpp_format says).
std::uint64_t picture_bytes(dvpp_format format, std::uint32_t stride_w, std::uint32_t stride_h);

// One plane of a picture: where it starts, the bytes from a row to the next, and its visible
// part (rows, bytes of a row); the rest is padding.
struct Plane {
  const char* name;  // "Y", "UV", "VU", "RGB", "RGBA"
  std::uint64_t offset, pitch;
  std::uint32_t rows, row_bytes;
};
std::vector<Plane> planes(const Picture& p);
// Where pixel (x, y) starts in each plane (offsets into the picture's bytes; chroma: its pair's),
// and the planes' pitches. x and y even where chroma pairs pixels.
void plane_offsets(const Picture& p, std::uint32_t x, std::uint32_t y, std::uint64_t at[4], int pitch[4]);

// A 4:2:0 frame given as three planes (Y, U, V at their own pitches) into `p`'s NV12 / NV21
// layout (P010: the planes' samples are 10 bits in 16, little-endian, as libavcodec's
// yuv420p10le), from byte `at` of p.bytes (which must hold it).
void put_yuv420(Picture& p, std::uint64_t at, const std::uint8_t* const yuv[3], const int pitch[3]);
const char* format_name(dvpp_format f);
// -1 when `name` is no format.
int format_by_name(const std::string& name);
const char* status_name(dvpp_status s);

Decoded decode_jpeg(const Request& r, const Limits& limits);
Decoded decode_png(const Request& r, const Limits& limits);
Decoded process_vpc(const Request& r, const Limits& limits);
Decoded decode_video(const Request& r, const Limits& limits);
Decoded encode_jpeg(const Request& r, const Limits& limits);
Decoded encode_video(const Request& r, const Limits& limits);

// The picture a command's in_* fields describe over the input bytes (VPC, JPEGE), or why not.
Decoded read_picture(const Request& r, const Limits& limits, Picture& in);

// An error result.
Decoded refuse(dvpp_status s, std::string reason);
// stride_w / stride_h for a width x height picture under `limits`.
void set_strides(Picture& p, const Limits& limits);

}  // namespace dvp::dvpp
