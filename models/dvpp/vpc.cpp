// SPDX-License-Identifier: MIT
// VPC's pixels: a crop of a picture in memory, resized and converted to another format by
// libswscale (bilinear, accurate rounding, bit-exact mode: the same bytes on every host), into a
// picture laid out as the other engines lay theirs. Semi-planar YUV 4:2:0 / 4:2:2 / 4:4:4, grey,
// RGB888 and RGBA8888 in and out; YUV meets RGB through enum dvpp_csc's matrix and range. The
// engine's limits: each side of the input and of the output in min_side .. max_side, a crop
// inside the picture (on even offsets where chroma pairs pixels), a scale of 1/32 .. 16 each way
// (assumption: the runtime's VPC limits).
#include <algorithm>
#include <cstring>
#include <memory>

#include "codec.hpp"

extern "C" {
#include <libavutil/pixfmt.h>
#include <libswscale/swscale.h>
}

namespace dvp::dvpp {

namespace {

AVPixelFormat av_format(dvpp_format f) {
  switch (f) {
    case DVPP_FMT_NV12: return AV_PIX_FMT_NV12;
    case DVPP_FMT_NV21: return AV_PIX_FMT_NV21;
    case DVPP_FMT_YUV422SP: return AV_PIX_FMT_YUV422P;  // libswscale has no NV16: through planes (Planar422)
    case DVPP_FMT_YUV444SP: return AV_PIX_FMT_NV24;
    case DVPP_FMT_YUV400: return AV_PIX_FMT_GRAY8;
    case DVPP_FMT_RGB888: return AV_PIX_FMT_RGB24;
    case DVPP_FMT_RGBA8888: return AV_PIX_FMT_RGBA;
    case DVPP_FMT_P010: return AV_PIX_FMT_P010LE;
    default: return AV_PIX_FMT_NONE;
  }
}

bool chroma_pairs_rows(dvpp_format f) { return f == DVPP_FMT_NV12 || f == DVPP_FMT_NV21 || f == DVPP_FMT_P010; }
bool chroma_pairs_columns(dvpp_format f) { return chroma_pairs_rows(f) || f == DVPP_FMT_YUV422SP; }

struct Crop {
  std::uint32_t x, y, w, h, ow, oh;
};

std::string side(std::uint32_t w, std::uint32_t h) { return std::to_string(w) + " x " + std::to_string(h); }

}  // namespace

Decoded read_picture(const Request& r, const Limits& limits, Picture& in) {
  const dvpp_cmd& c = r.cmd;
  if (av_format(dvpp_format(c.in_format)) == AV_PIX_FMT_NONE)
    return refuse(DVPP_ERR_FORMAT, "input format " + std::to_string(c.in_format) + " is no picture format");
  in.format = dvpp_format(c.in_format), in.width = c.in_width, in.height = c.in_height;
  in.stride_w = c.in_stride_w, in.stride_h = c.in_stride_h;
  if (in.width < limits.min_side || in.height < limits.min_side || in.width > limits.max_side ||
      in.height > limits.max_side)
    return refuse(DVPP_ERR_SIZE, "input " + side(in.width, in.height) + " pixels, outside " +
                                     std::to_string(limits.min_side) + " .. " + std::to_string(limits.max_side) +
                                     " a side");
  // Strides past 4 x max_side are no layout a decoder writes (and would overflow the sizes below).
  const std::uint64_t most = 4ull * limits.max_side + 4096;
  if (in.stride_w < in.width || in.stride_h < in.height || in.stride_w > most || in.stride_h > most ||
      (chroma_pairs_columns(in.format) && in.stride_w % 2) || (chroma_pairs_rows(in.format) && in.stride_h % 2))
    return refuse(DVPP_ERR_SIZE, "input strides " + side(in.stride_w, in.stride_h) + " do not hold a " +
                                     side(in.width, in.height) + " " + format_name(in.format) + " picture");
  const std::uint64_t need = picture_bytes(in.format, in.stride_w, in.stride_h);
  if (r.size < need)
    return refuse(DVPP_ERR_SIZE, "the input (" + std::to_string(r.size) + " B) is smaller than its picture (" +
                                     std::to_string(need) + " B)");
  Decoded ok;
  ok.status = DVPP_DONE;
  return ok;
}

namespace {

// The crop and output size, or why not.
Decoded crop_of(const dvpp_cmd& c, const Picture& in, const Limits& limits, Crop& k) {
  k = {c.crop_x, c.crop_y, c.crop_w, c.crop_h, c.out_width, c.out_height};
  if (!k.w || !k.h) k = {0, 0, in.width, in.height, k.ow, k.oh};
  if (!k.ow || !k.oh) k.ow = k.w, k.oh = k.h;
  if (std::uint64_t(k.x) + k.w > in.width || std::uint64_t(k.y) + k.h > in.height)
    return refuse(DVPP_ERR_SIZE, "crop " + side(k.w, k.h) + " at (" + std::to_string(k.x) + ", " + std::to_string(k.y) +
                                     ") is not inside the " + side(in.width, in.height) + " picture");
  if ((chroma_pairs_columns(in.format) && k.x % 2) || (chroma_pairs_rows(in.format) && k.y % 2))
    return refuse(DVPP_ERR_SIZE, std::string("crop offsets on ") + format_name(in.format) + " must be even");
  if (k.ow < limits.min_side || k.oh < limits.min_side || k.ow > limits.max_side || k.oh > limits.max_side)
    return refuse(DVPP_ERR_SIZE, "output " + side(k.ow, k.oh) + " pixels, outside " + std::to_string(limits.min_side) +
                                     " .. " + std::to_string(limits.max_side) + " a side");
  auto ratio_ok = [](std::uint32_t from, std::uint32_t to) { return to * 32ull >= from && to <= 16ull * from; };
  if (!ratio_ok(k.w, k.ow) || !ratio_ok(k.h, k.oh))
    return refuse(DVPP_ERR_SIZE,
                  "resizing " + side(k.w, k.h) + " to " + side(k.ow, k.oh) + " is outside 1/32 .. 16 times each way");
  Decoded ok;
  ok.status = DVPP_DONE;
  return ok;
}

void plane_pointers(const Picture& p, std::uint8_t* base, std::uint32_t x, std::uint32_t y, std::uint8_t* ptr[4],
                    int pitch[4]) {
  std::uint64_t at[4] = {};
  plane_offsets(p, x, y, at, pitch);
  for (std::size_t i = 0; i < planes(p).size(); ++i) ptr[i] = base + at[i];
}

// YUV422SP through libswscale, which takes and makes no NV16: the chroma pairs split into U and V
// planes (the crop's, for an input), or joined from them (an output).
struct Planar422 {
  std::vector<std::uint8_t> u, v;
  int pitch = 0;

  // The input's crop: src[1], src[2] become planes of its U and V.
  void split(std::uint8_t* src[4], int src_pitch[4], std::uint32_t w, std::uint32_t h) {
    pitch = int((w + 1) / 2);
    u.resize(std::size_t(pitch) * h), v.resize(std::size_t(pitch) * h);
    for (std::uint32_t r = 0; r < h; ++r)
      for (int x = 0; x < pitch; ++x) {
        u[r * std::size_t(pitch) + std::size_t(x)] = src[1][std::ptrdiff_t(r) * src_pitch[1] + 2 * x];
        v[r * std::size_t(pitch) + std::size_t(x)] = src[1][std::ptrdiff_t(r) * src_pitch[1] + 2 * x + 1];
      }
    src[1] = u.data(), src[2] = v.data(), src_pitch[1] = src_pitch[2] = pitch;
  }
  // The output's: dst[1], dst[2] become planes, joined into `chroma` by join().
  void make(std::uint8_t* dst[4], int dst_pitch[4], std::uint32_t w, std::uint32_t h) {
    pitch = int((w + 1) / 2);
    u.resize(std::size_t(pitch) * h), v.resize(std::size_t(pitch) * h);
    dst[1] = u.data(), dst[2] = v.data(), dst_pitch[1] = dst_pitch[2] = pitch;
  }
  void join(std::uint8_t* chroma, int chroma_pitch, std::uint32_t h) const {
    for (std::uint32_t r = 0; r < h; ++r)
      for (int x = 0; x < pitch; ++x) {
        chroma[std::ptrdiff_t(r) * chroma_pitch + 2 * x] = u[r * std::size_t(pitch) + std::size_t(x)];
        chroma[std::ptrdiff_t(r) * chroma_pitch + 2 * x + 1] = v[r * std::size_t(pitch) + std::size_t(x)];
      }
  }
};

}  // namespace

namespace {

// Where the resized crop goes: the canvas (its own size unless the command gives one) and the
// paste offset; or why not.
struct Canvas {
  std::uint32_t w, h, x, y;
};
Decoded canvas_of(const dvpp_cmd& c, const Crop& k, dvpp_format f, const Limits& limits, Canvas& v) {
  v = {c.canvas_w ? c.canvas_w : k.ow, c.canvas_h ? c.canvas_h : k.oh, c.paste_x, c.paste_y};
  if (!c.canvas_w != !c.canvas_h) return refuse(DVPP_ERR_SIZE, "give the canvas both sides, or neither");
  if (c.fill_mode > 1)
    return refuse(DVPP_ERR_FORMAT, "fill_mode " + std::to_string(c.fill_mode) + " is 0 (fill) or 1 (keep)");
  if (std::uint64_t(v.x) + k.ow > v.w || std::uint64_t(v.y) + k.oh > v.h)
    return refuse(DVPP_ERR_SIZE, "the resized crop (" + side(k.ow, k.oh) + " at " + std::to_string(v.x) + ", " +
                                     std::to_string(v.y) + ") is not inside the " + side(v.w, v.h) + " canvas");
  if (v.w > limits.max_side || v.h > limits.max_side)
    return refuse(DVPP_ERR_SIZE,
                  "canvas " + side(v.w, v.h) + " pixels, over " + std::to_string(limits.max_side) + " a side");
  if ((chroma_pairs_columns(f) && v.x % 2) || (chroma_pairs_rows(f) && v.y % 2))
    return refuse(DVPP_ERR_SIZE, std::string("paste offsets on ") + format_name(f) + " must be even");
  Decoded ok;
  ok.status = DVPP_DONE;
  return ok;
}

// Every sample of `p` set to the fill's channel bytes (Y U V; R G B A).
void fill_picture(Picture& p, std::uint32_t fill) {
  const std::uint8_t ch[4] = {std::uint8_t(fill), std::uint8_t(fill >> 8), std::uint8_t(fill >> 16),
                              std::uint8_t(fill >> 24)};
  const std::vector<Plane> pl = planes(p);
  for (std::size_t i = 0; i < pl.size(); ++i) {
    // The plane's repeating group: Y; U V (V U for NV21); R G B (A).
    std::vector<std::uint8_t> unit = {ch[0]};
    if (i == 1)
      unit =
          p.format == DVPP_FMT_NV21 ? std::vector<std::uint8_t>{ch[2], ch[1]} : std::vector<std::uint8_t>{ch[1], ch[2]};
    if (p.format == DVPP_FMT_RGB888) unit = {ch[0], ch[1], ch[2]};
    if (p.format == DVPP_FMT_RGBA8888) unit = {ch[0], ch[1], ch[2], ch[3]};
    for (std::uint32_t r = 0; r < pl[i].rows; ++r)
      for (std::uint32_t b = 0; b < pl[i].row_bytes; ++b)
        p.bytes[pl[i].offset + r * pl[i].pitch + b] = unit[b % unit.size()];
  }
}

// The bytes of the canvas `p` the w x h picture at (x, y) covers, plane by plane, row by row.
std::vector<std::pair<std::uint64_t, std::uint64_t>> region_spans(const Picture& p, const Canvas& v, std::uint32_t w,
                                                                  std::uint32_t h) {
  Picture sub;
  sub.format = p.format, sub.width = w, sub.height = h, sub.stride_w = p.stride_w, sub.stride_h = p.stride_h;
  const std::vector<Plane> whole = planes(sub);
  std::uint64_t at[4] = {};
  int pitch[4] = {};
  plane_offsets(p, v.x, v.y, at, pitch);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
  for (std::size_t i = 0; i < whole.size(); ++i)
    for (std::uint32_t r = 0; r < whole[i].rows; ++r)
      spans.emplace_back(at[i] + std::uint64_t(r) * std::uint64_t(pitch[i]), whole[i].row_bytes);
  return spans;
}

}  // namespace

Decoded process_vpc(const Request& r, const Limits& limits) {
  Picture in;
  if (Decoded d = read_picture(r, limits, in); d.status != DVPP_DONE) return d;
  Crop k{};
  if (Decoded d = crop_of(r.cmd, in, limits, k); d.status != DVPP_DONE) return d;
  Decoded out;
  Picture& p = out.picture;
  p.format = r.want() == DVPP_FMT_NATIVE ? in.format : r.want();
  if (p.format == DVPP_FMT_P010)
    return refuse(DVPP_ERR_FORMAT, "VPC writes 8-bit formats: it takes p010 in, and writes nv12 or another");
  if (r.cmd.csc > DVPP_CSC_BT709_LIMITED)
    return refuse(DVPP_ERR_FORMAT, "colour conversion " + std::to_string(r.cmd.csc) + " is no enum dvpp_csc");
  Canvas v{};
  if (Decoded d = canvas_of(r.cmd, k, p.format, limits, v); d.status != DVPP_DONE) return d;
  p.width = v.w, p.height = v.h;
  set_strides(p, limits);
  p.bytes.assign(picture_bytes(p.format, p.stride_w, p.stride_h), 0);
  if (r.cmd.fill_mode == 0) fill_picture(p, r.cmd.fill);
  std::unique_ptr<SwsContext, void (*)(SwsContext*)> ctx(
      sws_getContext(int(k.w), int(k.h), av_format(in.format), int(k.ow), int(k.oh), av_format(p.format),
                     SWS_BILINEAR | SWS_ACCURATE_RND | SWS_BITEXACT | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP, nullptr,
                     nullptr, nullptr),
      sws_freeContext);
  if (!ctx) return refuse(DVPP_ERR_FORMAT, "libswscale has no conversion for this pair of formats and sizes");
  const int space = r.cmd.csc == DVPP_CSC_BT709_LIMITED ? SWS_CS_ITU709 : SWS_CS_ITU601;
  const int full = r.cmd.csc == DVPP_CSC_BT601_FULL ? 1 : 0;  // the YUV side's range; RGB is full
  sws_setColorspaceDetails(ctx.get(), sws_getCoefficients(space), full, sws_getCoefficients(space), full, 0, 1 << 16,
                           1 << 16);
  std::uint8_t* src[4] = {};
  std::uint8_t* dst[4] = {};
  int src_pitch[4] = {}, dst_pitch[4] = {};
  plane_pointers(in, const_cast<std::uint8_t*>(r.data), k.x, k.y, src, src_pitch);
  plane_pointers(p, p.bytes.data(), v.x, v.y, dst, dst_pitch);
  Planar422 in422, out422;
  if (in.format == DVPP_FMT_YUV422SP) in422.split(src, src_pitch, k.w, k.h);
  std::uint8_t* chroma = dst[1];
  const int chroma_pitch = dst_pitch[1];
  if (p.format == DVPP_FMT_YUV422SP) out422.make(dst, dst_pitch, k.ow, k.oh);
  sws_scale(ctx.get(), src, src_pitch, 0, int(k.h), dst, dst_pitch);
  if (p.format == DVPP_FMT_YUV422SP) out422.join(chroma, chroma_pitch, k.oh);
  if (r.cmd.fill_mode == 1) out.spans = region_spans(p, v, k.ow, k.oh);
  out.status = DVPP_DONE;
  // Its time: the larger of the crop's and the resized pixels, or the canvas's when it fills it.
  const std::uint64_t filled = r.cmd.fill_mode == 0 ? std::uint64_t(v.w) * v.h : 0;
  out.work_pixels = std::max({std::uint64_t(k.w) * k.h, std::uint64_t(k.ow) * k.oh, filled});
  return out;
}

}  // namespace dvp::dvpp
