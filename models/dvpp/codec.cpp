// SPDX-License-Identifier: MIT
#include "codec.hpp"

#include <algorithm>

namespace dvp::dvpp {

const std::vector<Codec>& codecs() {
  static const std::vector<Codec> v = {
      {"jpegd", DVPP_JPEGD, decode_jpeg,
       "JPEG decode (libjpeg-turbo): baseline Huffman 8-bit, 4:2:0 / 4:2:2 / 4:4:4 / grey, to YUV semi-planar in "
       "the JPEG's own sampling (NV21 for 4:2:0 on request)",
       true, true},
      {"pngd", DVPP_PNGD, decode_png,
       "PNG decode (libpng): 8-bit grey, grey + alpha, RGB, RGBA, palette, interlaced or not, to RGB888 (RGBA8888 "
       "when the PNG has alpha)",
       true, true},
      {"jpege", DVPP_JPEGE, encode_jpeg,
       "JPEG encode (libjpeg-turbo): a YUV semi-planar or grey picture in memory to a baseline JPEG of its own "
       "sampling at the command's quality",
       false},
      {"vdec", DVPP_VDEC, decode_video,
       "video decode (libavcodec): H.264 (baseline, main, high) and H.265 (main) Annex B elementary streams, "
       "8-bit 4:2:0, every frame to NV12 (NV21 on request)",
       true, true},
      {"venc", DVPP_VENC, encode_video,
       "video encode (libavcodec's libx264 / libx265): NV12 or NV21 frames in memory to an H.264 (high) or H.265 "
       "(main) Annex B stream at a constant QP, I and P frames",
       false},
      {"vpc", DVPP_VPC, process_vpc,
       "picture processing (libswscale): a crop of a picture in memory resized (bilinear) and converted between "
       "YUV semi-planar, grey, RGB888 and RGBA8888 (BT.601 full or limited range, BT.709 limited)"},
  };
  return v;
}

const Codec* find_codec(const std::string& name) {
  for (const Codec& c : codecs())
    if (name == c.name) return &c;
  return nullptr;
}

std::uint64_t picture_bytes(dvpp_format format, std::uint32_t stride_w, std::uint32_t stride_h) {
  const std::uint64_t plane = std::uint64_t(stride_w) * stride_h;
  switch (format) {
    case DVPP_FMT_NV12:
    case DVPP_FMT_NV21: return plane + plane / 2;  // stride_h is even (height_align)
    case DVPP_FMT_YUV422SP: return 2 * plane;
    case DVPP_FMT_YUV444SP: return 3 * plane;
    case DVPP_FMT_YUV400: return plane;
    case DVPP_FMT_RGB888: return 3 * plane;
    case DVPP_FMT_RGBA8888: return 4 * plane;
    case DVPP_FMT_P010: return 3 * plane;  // NV12's, two bytes a sample
    default: return 0;
  }
}

std::vector<Plane> planes(const Picture& p) {
  const std::uint64_t luma = std::uint64_t(p.stride_w) * p.stride_h;
  const std::uint32_t half_w = (p.width + 1) / 2, half_h = (p.height + 1) / 2;
  switch (p.format) {
    case DVPP_FMT_NV12: return {{"Y", 0, p.stride_w, p.height, p.width}, {"UV", luma, p.stride_w, half_h, 2 * half_w}};
    case DVPP_FMT_NV21: return {{"Y", 0, p.stride_w, p.height, p.width}, {"VU", luma, p.stride_w, half_h, 2 * half_w}};
    case DVPP_FMT_YUV422SP:
      return {{"Y", 0, p.stride_w, p.height, p.width}, {"UV", luma, p.stride_w, p.height, 2 * half_w}};
    case DVPP_FMT_YUV444SP:
      return {{"Y", 0, p.stride_w, p.height, p.width}, {"UV", luma, 2ull * p.stride_w, p.height, 2 * p.width}};
    case DVPP_FMT_YUV400: return {{"Y", 0, p.stride_w, p.height, p.width}};
    case DVPP_FMT_RGB888: return {{"RGB", 0, 3ull * p.stride_w, p.height, 3 * p.width}};
    case DVPP_FMT_RGBA8888: return {{"RGBA", 0, 4ull * p.stride_w, p.height, 4 * p.width}};
    case DVPP_FMT_P010:
      return {{"Y", 0, 2ull * p.stride_w, p.height, 2 * p.width},
              {"UV", 2 * luma, 2ull * p.stride_w, half_h, 4 * half_w}};
    default: return {};
  }
}

void plane_offsets(const Picture& p, std::uint32_t x, std::uint32_t y, std::uint64_t at[4], int pitch[4]) {
  const std::vector<Plane> pl = planes(p);
  const bool half_rows = p.format == DVPP_FMT_NV12 || p.format == DVPP_FMT_NV21 || p.format == DVPP_FMT_P010;
  const std::uint64_t luma = p.format == DVPP_FMT_RGB888     ? 3
                             : p.format == DVPP_FMT_RGBA8888 ? 4
                             : p.format == DVPP_FMT_P010     ? 2
                                                             : 1;
  // A chroma pair covers two columns (4:4:4: one): its bytes per luma column.
  const std::uint64_t pair = p.format == DVPP_FMT_YUV444SP || p.format == DVPP_FMT_P010 ? 2 : 1;
  for (std::size_t i = 0; i < pl.size(); ++i) {
    const std::uint64_t row = i == 1 && half_rows ? y / 2 : y;
    at[i] = pl[i].offset + row * pl[i].pitch + (i == 1 ? pair : luma) * x;
    pitch[i] = int(pl[i].pitch);
  }
}

void put_p010(Picture& p, std::uint64_t at, const std::uint8_t* const yuv[3], const int pitch[3]) {
  auto sample = [&](int plane, std::uint32_t r, std::uint32_t x) {  // 10 bits, little-endian in 16
    const std::uint8_t* s = yuv[plane] + std::ptrdiff_t(r) * pitch[plane] + 2 * std::ptrdiff_t(x);
    return std::uint16_t((s[0] | s[1] << 8) << 6);
  };
  auto put = [&](std::uint64_t o, std::uint16_t v) {
    p.bytes[o] = std::uint8_t(v), p.bytes[o + 1] = std::uint8_t(v >> 8);
  };
  const std::uint64_t pitch_out = 2ull * p.stride_w, uv = at + pitch_out * p.stride_h;
  for (std::uint32_t r = 0; r < p.height; ++r)
    for (std::uint32_t x = 0; x < p.width; ++x) put(at + r * pitch_out + 2 * x, sample(0, r, x));
  for (std::uint32_t r = 0; r < (p.height + 1) / 2; ++r)
    for (std::uint32_t x = 0; x < (p.width + 1) / 2; ++x) {
      put(uv + r * pitch_out + 4 * x, sample(1, r, x));
      put(uv + r * pitch_out + 4 * x + 2, sample(2, r, x));
    }
}

void put_yuv420(Picture& p, std::uint64_t at, const std::uint8_t* const yuv[3], const int pitch[3]) {
  if (p.format == DVPP_FMT_P010) return put_p010(p, at, yuv, pitch);
  for (std::uint32_t r = 0; r < p.height; ++r)
    std::copy_n(yuv[0] + std::ptrdiff_t(r) * pitch[0], p.width, &p.bytes[at + std::uint64_t(r) * p.stride_w]);
  const std::uint64_t uv = at + std::uint64_t(p.stride_w) * p.stride_h;
  const int u = p.format == DVPP_FMT_NV21 ? 1 : 0;  // NV21: V first
  for (std::uint32_t r = 0; r < (p.height + 1) / 2; ++r)
    for (std::uint32_t x = 0; x < (p.width + 1) / 2; ++x) {
      p.bytes[uv + r * std::uint64_t(p.stride_w) + 2 * x + u] = yuv[1][std::ptrdiff_t(r) * pitch[1] + x];
      p.bytes[uv + r * std::uint64_t(p.stride_w) + 2 * x + 1 - u] = yuv[2][std::ptrdiff_t(r) * pitch[2] + x];
    }
}

namespace {
const char* const kFormats[] = {"native", "nv12",   "nv21",     "yuv422sp", "yuv444sp",
                                "yuv400", "rgb888", "rgba8888", "p010"};
constexpr int kFormatCount = int(sizeof kFormats / sizeof kFormats[0]);
}  // namespace

const char* format_name(dvpp_format f) { return unsigned(f) < unsigned(kFormatCount) ? kFormats[f] : "?"; }

int format_by_name(const std::string& name) {
  for (int i = 0; i < kFormatCount; ++i)
    if (name == kFormats[i]) return i;
  return -1;
}

const char* status_name(dvpp_status s) { return dvpp_status_name(s); }

Decoded refuse(dvpp_status s, std::string reason) {
  Decoded d;
  d.status = s;
  d.reason = std::move(reason);
  return d;
}

void set_strides(Picture& p, const Limits& limits) {
  auto up = [](std::uint32_t v, std::uint32_t a) { return (v + a - 1) / a * a; };
  p.stride_w = up(p.width, limits.width_align);
  p.stride_h = up(p.height, limits.height_align);
  // 4:2:0 chroma rows pair the luma rows, and 4:2:0 / 4:2:2 chroma pairs its columns: a row of
  // U V pairs of an odd width is one byte wider than the width.
  const bool rows = p.format == DVPP_FMT_NV12 || p.format == DVPP_FMT_NV21 || p.format == DVPP_FMT_P010;
  if ((rows || p.format == DVPP_FMT_YUV422SP) && p.stride_w % 2) ++p.stride_w;
  if (rows && p.stride_h % 2) ++p.stride_h;
}

}  // namespace dvp::dvpp
