// SPDX-License-Identifier: MIT
#include "media_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include <png.h>
#include <turbojpeg.h>

#include "common/error.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/mem.h>
}

namespace dvp::platform {

namespace {

using dvpp::Picture;

// The picture laid out as `like`, zero padding, for filling plane by plane.
Picture empty_like(const Picture& like) {
  Picture p;
  p.format = like.format, p.width = like.width, p.height = like.height;
  p.stride_w = like.stride_w, p.stride_h = like.stride_h;
  p.bytes.assign(like.bytes.size(), 0);
  return p;
}

// TurboJPEG's planes (Y, Cb, Cr at their own widths), interleaved as the engine writes them.
Picture jpeg_reference(const std::vector<std::uint8_t>& file, const Picture& like) {
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitDecompress(), tjDestroy);
  int w = 0, h = 0, samp = 0, space = 0;
  auto* buf = const_cast<unsigned char*>(file.data());
  if (!tj || tjDecompressHeader3(tj.get(), buf, file.size(), &w, &h, &samp, &space) != 0)
    throw Error(std::string("TurboJPEG: ") + tjGetErrorStr2(tj.get()));
  const int comps = samp == TJSAMP_GRAY ? 1 : 3;
  std::vector<std::uint8_t> plane[3];
  unsigned char* ptr[3] = {};
  int strides[3] = {};
  for (int c = 0; c < comps; ++c) {
    strides[c] = tjPlaneWidth(c, w, samp);
    plane[c].resize(std::size_t(tjPlaneSizeYUV(c, w, strides[c], h, samp)));
    ptr[c] = plane[c].data();
  }
  if (tjDecompressToYUVPlanes(tj.get(), buf, file.size(), ptr, w, strides, h, 0) != 0)
    throw Error(std::string("TurboJPEG: ") + tjGetErrorStr2(tj.get()));
  Picture p = empty_like(like);
  const std::vector<dvpp::Plane> pl = dvpp::planes(p);
  for (std::uint32_t r = 0; r < pl[0].rows; ++r)
    std::memcpy(&p.bytes[pl[0].offset + r * pl[0].pitch], &plane[0][std::size_t(r) * strides[0]], pl[0].row_bytes);
  if (pl.size() < 2) return p;
  const bool vu = p.format == DVPP_FMT_NV21;
  for (std::uint32_t r = 0; r < pl[1].rows; ++r)
    for (std::uint32_t x = 0; x < pl[1].row_bytes / 2; ++x) {
      std::uint8_t* d = &p.bytes[pl[1].offset + r * pl[1].pitch + 2 * x];
      d[vu ? 1 : 0] = plane[1][std::size_t(r) * strides[1] + x];
      d[vu ? 0 : 1] = plane[2][std::size_t(r) * strides[2] + x];
    }
  return p;
}

// libpng's simplified API to RGBA (straight alpha, no compositing), alpha dropped for RGB888.
Picture png_reference(const std::vector<std::uint8_t>& file, const Picture& like) {
  png_image img;
  std::memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&img, file.data(), file.size()))
    throw Error(std::string("libpng: ") + img.message);
  img.format = PNG_FORMAT_RGBA;
  std::vector<std::uint8_t> rgba(PNG_IMAGE_SIZE(img));
  if (!png_image_finish_read(&img, nullptr, rgba.data(), 0, nullptr))
    throw Error(std::string("libpng: ") + img.message);
  Picture p = empty_like(like);
  const dvpp::Plane pl = dvpp::planes(p).at(0);
  const unsigned px = p.format == DVPP_FMT_RGBA8888 ? 4 : 3;
  for (std::uint32_t r = 0; r < pl.rows; ++r)
    for (std::uint32_t x = 0; x < p.width; ++x)
      std::memcpy(&p.bytes[pl.offset + r * pl.pitch + x * px], &rgba[(std::size_t(r) * img.width + x) * 4], px);
  return p;
}

}  // namespace

Picture reference_picture(dvpp_engine engine, const std::vector<std::uint8_t>& file, const Picture& like) {
  switch (engine) {
    case DVPP_JPEGD: return jpeg_reference(file, like);
    case DVPP_PNGD: return png_reference(file, like);
    default: throw Error("no host reference for this engine");
  }
}

const char* reference_name(dvpp_engine engine) {
  return engine == DVPP_JPEGD  ? "libjpeg-turbo's TurboJPEG YUV planes"
         : engine == DVPP_VDEC ? "libavformat's demuxer and libavcodec's threaded decode"
                               : "libpng's simplified API";
}

namespace {

// The file's bytes as libavformat's input.
struct MemoryInput {
  const std::vector<std::uint8_t>& file;
  std::size_t at = 0;
  static int read(void* self, std::uint8_t* buf, int size) {
    auto* m = static_cast<MemoryInput*>(self);
    const std::size_t n = std::min<std::size_t>(std::size_t(size), m->file.size() - m->at);
    if (!n) return AVERROR_EOF;
    std::memcpy(buf, m->file.data() + m->at, n);
    m->at += n;
    return int(n);
  }
};

struct AvFree {
  void operator()(AVFormatContext* f) const { avformat_close_input(&f); }
  void operator()(AVIOContext* io) const {
    av_freep(&io->buffer);
    avio_context_free(&io);
  }
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
  void operator()(AVPacket* p) const { av_packet_free(&p); }
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
template <typename T>
using AvPtr = std::unique_ptr<T, AvFree>;

// One decoded frame appended to `p` as NV12 / NV21 at its strides.
void append_frame(Picture& p, const AVFrame& f, std::uint64_t frame_bytes) {
  const std::uint64_t at = p.bytes.size();
  p.bytes.resize(at + frame_bytes, 0);
  const std::uint8_t* const planes[3] = {f.data[0], f.data[1], f.data[2]};
  dvpp::put_yuv420(p, at, planes, f.linesize);
}

}  // namespace

Picture video_reference(const std::vector<std::uint8_t>& file, dvpp_stream stream, const Picture& like,
                        std::uint32_t frames) {
  MemoryInput in{file};
  auto* buffer = static_cast<std::uint8_t*>(av_malloc(4096));
  AvPtr<AVIOContext> io(avio_alloc_context(buffer, 4096, 0, &in, MemoryInput::read, nullptr, nullptr));
  AVFormatContext* raw = avformat_alloc_context();
  if (!io || !raw) throw Error("libavformat: out of memory");
  raw->pb = io.get();
  const AVInputFormat* demuxer = av_find_input_format(stream == DVPP_STREAM_H265 ? "hevc" : "h264");
  if (avformat_open_input(&raw, nullptr, demuxer, nullptr) < 0) throw Error("libavformat: cannot open the stream");
  AvPtr<AVFormatContext> fmt(raw);
  if (avformat_find_stream_info(fmt.get(), nullptr) < 0 || fmt->nb_streams < 1)
    throw Error("libavformat: no stream found");
  const AVCodec* codec = avcodec_find_decoder(fmt->streams[0]->codecpar->codec_id);
  AvPtr<AVCodecContext> ctx(avcodec_alloc_context3(codec));
  AvPtr<AVPacket> pkt(av_packet_alloc());
  AvPtr<AVFrame> frame(av_frame_alloc());
  if (!ctx || avcodec_parameters_to_context(ctx.get(), fmt->streams[0]->codecpar) < 0 ||
      avcodec_open2(ctx.get(), codec, nullptr) < 0)
    throw Error("libavcodec: the decoder did not open");
  Picture p = empty_like(like);
  p.bytes.clear();
  const std::uint64_t frame_bytes = dvpp::picture_bytes(p.format, p.stride_w, p.stride_h);
  std::uint32_t got = 0;
  auto drain = [&] {
    while (avcodec_receive_frame(ctx.get(), frame.get()) == 0)
      if (!frames || got < frames) append_frame(p, *frame, frame_bytes), ++got;
  };
  while (av_read_frame(fmt.get(), pkt.get()) >= 0) {
    avcodec_send_packet(ctx.get(), pkt.get());
    av_packet_unref(pkt.get());
    drain();
  }
  avcodec_send_packet(ctx.get(), nullptr);
  drain();
  return p;
}

PixelDiff compare_pictures(const Picture& have, const Picture& want) {
  PixelDiff d;
  const std::vector<dvpp::Plane> pl = dvpp::planes(want);
  const std::uint64_t frame = dvpp::picture_bytes(want.format, want.stride_w, want.stride_h);
  const std::uint64_t frames = frame ? std::max<std::uint64_t>(1, want.bytes.size() / frame) : 1;
  if (have.bytes.size() != want.bytes.size()) d.differ = 1, d.where = "the size";
  for (std::uint64_t f = 0; f < frames; ++f)
    for (const dvpp::Plane& p : pl)
      for (std::uint32_t r = 0; r < p.rows; ++r)
        for (std::uint32_t b = 0; b < p.row_bytes; ++b) {
          const std::uint64_t at = f * frame + p.offset + r * p.pitch + b;
          ++d.compared;
          if (at < have.bytes.size() && at < want.bytes.size() && have.bytes[at] == want.bytes[at]) continue;
          if (!d.differ++)
            d.first = at, d.where = (frames > 1 ? "frame " + std::to_string(f) + ", " : std::string()) + p.name +
                                    " row " + std::to_string(r) + ", byte " + std::to_string(b);
        }
  return d;
}

}  // namespace dvp::platform

namespace dvp::platform {

namespace {

using dvpp::Picture;

bool is_rgb(dvpp_format f) { return f == DVPP_FMT_RGB888 || f == DVPP_FMT_RGBA8888; }

// Bilinear samples of one picture: channel c (Y U V, or R G B A) at (u, v) in luma pixels,
// clamped to the crop [x0, x1] x [y0, y1].
struct Sampler {
  const Picture& p;
  double x0, y0, x1, y1;

  // Chroma's scale against luma, and where a sample sits (centred between the luma it covers).
  bool chroma(int c) const { return !is_rgb(p.format) && c > 0; }
  int sub_x(int c) const { return chroma(c) && p.format != DVPP_FMT_YUV444SP ? 2 : 1; }
  int sub_y(int c) const {
    return chroma(c) && (p.format == DVPP_FMT_NV12 || p.format == DVPP_FMT_NV21 || p.format == DVPP_FMT_P010) ? 2 : 1;
  }
  double at(int c, long x, long y) const {
    if (p.format == DVPP_FMT_YUV400 && c > 0) return 128.0;
    const std::vector<dvpp::Plane> pl = dvpp::planes(p);
    if (p.format == DVPP_FMT_P010) {  // 16-bit samples, on the 8-bit scale (10 bits / 4)
      const std::uint64_t o = c == 0
                                  ? pl[0].offset + std::uint64_t(y) * pl[0].pitch + 2 * std::uint64_t(x)
                                  : pl[1].offset + std::uint64_t(y) * pl[1].pitch + 4 * std::uint64_t(x) + 2 * (c - 1);
      return (p.bytes[o] | p.bytes[o + 1] << 8) / 256.0;
    }
    if (is_rgb(p.format)) {
      const unsigned px = p.format == DVPP_FMT_RGBA8888 ? 4 : 3;
      if (c == 3 && px == 3) return 255.0;
      return p.bytes[pl[0].offset + std::uint64_t(y) * pl[0].pitch + std::uint64_t(x) * px + c];
    }
    if (c == 0) return p.bytes[pl[0].offset + std::uint64_t(y) * pl[0].pitch + std::uint64_t(x)];
    const bool vu = p.format == DVPP_FMT_NV21;
    return p.bytes[pl[1].offset + std::uint64_t(y) * pl[1].pitch + 2 * std::uint64_t(x) + ((c == 2) != vu ? 1 : 0)];
  }
  // Channel c at (u, v) in luma pixels, output samples `step_x` x `step_y` luma pixels apart: a
  // tent filter over the plane's samples, one sample wide when enlarging (bilinear) and one
  // output step wide when shrinking (each source sample counts), clamped to the crop.
  double sample(int c, double u, double v, double step_x, double step_y) const {
    const int sx = sub_x(c), sy = sub_y(c);
    const double cu = (u + 0.5) / sx - 0.5, cv = (v + 0.5) / sy - 0.5;
    const double rx = std::max(1.0, step_x / sx), ry = std::max(1.0, step_y / sy);
    const long lo_x = long(std::floor(x0 / sx)), hi_x = long(std::floor(x1 / sx));
    const long lo_y = long(std::floor(y0 / sy)), hi_y = long(std::floor(y1 / sy));
    double sum = 0, weights = 0;
    for (long y = long(std::ceil(cv - ry)); y <= long(std::floor(cv + ry)); ++y) {
      const double wy = 1 - std::abs(double(y) - cv) / ry;
      if (wy <= 0) continue;
      for (long x = long(std::ceil(cu - rx)); x <= long(std::floor(cu + rx)); ++x) {
        const double wx = 1 - std::abs(double(x) - cu) / rx;
        if (wx <= 0) continue;
        sum += wx * wy * at(c, std::clamp(x, lo_x, hi_x), std::clamp(y, lo_y, hi_y));
        weights += wx * wy;
      }
    }
    return sum / weights;
  }
};

// YUV <-> RGB in floating point, by enum dvpp_csc: Kr, Kb and the YUV side's range.
struct Csc {
  double kr, kb;
  bool full;
  void to_rgb(const double yuv[3], double rgb[3]) const {
    const double y = full ? yuv[0] : (yuv[0] - 16) * 255 / 219;
    const double pb = full ? yuv[1] - 128 : (yuv[1] - 128) * 255 / 224;
    const double pr = full ? yuv[2] - 128 : (yuv[2] - 128) * 255 / 224;
    rgb[0] = y + 2 * (1 - kr) * pr;
    rgb[2] = y + 2 * (1 - kb) * pb;
    rgb[1] = (y - kr * rgb[0] - kb * rgb[2]) / (1 - kr - kb);
  }
  void to_yuv(const double rgb[3], double yuv[3]) const {
    const double y = kr * rgb[0] + (1 - kr - kb) * rgb[1] + kb * rgb[2];
    const double pb = (rgb[2] - y) / (2 * (1 - kb)), pr = (rgb[0] - y) / (2 * (1 - kr));
    yuv[0] = full ? y : 16 + y * 219 / 255;
    yuv[1] = 128 + (full ? pb : pb * 224 / 255);
    yuv[2] = 128 + (full ? pr : pr * 224 / 255);
  }
};

std::uint8_t byte(double v) { return std::uint8_t(std::clamp(std::lround(v), 0L, 255L)); }

}  // namespace

namespace {

// The crop of `src` resized to p's size (p allocated, its layout set), as vpc_reference says.
void resized_reference(const Picture& src, const dvpp_cmd& cmd, Picture& p) {
  std::uint32_t cx = cmd.crop_x, cy = cmd.crop_y, cw = cmd.crop_w, ch = cmd.crop_h;
  if (!cw || !ch) cx = 0, cy = 0, cw = src.width, ch = src.height;
  const Sampler s{src, double(cx), double(cy), double(cx + cw - 1), double(cy + ch - 1)};
  const Csc csc{cmd.csc == DVPP_CSC_BT709_LIMITED ? 0.2126 : 0.299, cmd.csc == DVPP_CSC_BT709_LIMITED ? 0.0722 : 0.114,
                cmd.csc == DVPP_CSC_BT601_FULL};
  const bool in_rgb = is_rgb(src.format), out_rgb = is_rgb(p.format);
  const std::vector<dvpp::Plane> pl = dvpp::planes(p);
  // Each output sample of channel c at (x, y) of its own plane: the source there, converted.
  const double sx = double(cw) / p.width, sy = double(ch) / p.height;
  int fx = 1, fy = 1;  // the output plane's step, in output pixels
  auto value = [&](int c, double u, double v) {
    const double ax = sx * fx, ay = sy * fy;
    double in[4] = {s.sample(0, u, v, ax, ay), s.sample(1, u, v, ax, ay), s.sample(2, u, v, ax, ay),
                    in_rgb ? s.sample(3, u, v, ax, ay) : 255.0};
    double out[4] = {in[0], in[1], in[2], in[3]};
    if (in_rgb && !out_rgb) csc.to_yuv(in, out);
    if (!in_rgb && out_rgb) csc.to_rgb(in, out);
    return out[c];
  };
  if (out_rgb) {
    const unsigned px = p.format == DVPP_FMT_RGBA8888 ? 4 : 3;
    for (std::uint32_t y = 0; y < p.height; ++y)
      for (std::uint32_t x = 0; x < p.width; ++x)
        for (unsigned c = 0; c < px; ++c)
          p.bytes[pl[0].offset + y * pl[0].pitch + x * px + c] =
              byte(value(int(c), cx + (x + 0.5) * sx - 0.5, cy + (y + 0.5) * sy - 0.5));
    return;
  }
  for (std::uint32_t y = 0; y < p.height; ++y)
    for (std::uint32_t x = 0; x < p.width; ++x)
      p.bytes[y * pl[0].pitch + x] = byte(value(0, cx + (x + 0.5) * sx - 0.5, cy + (y + 0.5) * sy - 0.5));
  if (pl.size() < 2) return;
  fx = p.format == DVPP_FMT_YUV444SP ? 1 : 2, fy = p.format == DVPP_FMT_NV12 || p.format == DVPP_FMT_NV21 ? 2 : 1;
  const bool vu = p.format == DVPP_FMT_NV21;
  for (std::uint32_t y = 0; y < pl[1].rows; ++y)
    for (std::uint32_t x = 0; x < pl[1].row_bytes / 2; ++x) {
      const double u = cx + ((x + 0.5) * fx) * sx - 0.5, v = cy + ((y + 0.5) * fy) * sy - 0.5;
      p.bytes[pl[1].offset + y * pl[1].pitch + 2 * x + (vu ? 1 : 0)] = byte(value(1, u, v));
      p.bytes[pl[1].offset + y * pl[1].pitch + 2 * x + (vu ? 0 : 1)] = byte(value(2, u, v));
    }
}

// Every pixel of `p` the fill's channels (Y U V from the low byte; R G B A).
void fill_reference(Picture& p, std::uint32_t fill) {
  auto ch = [fill](unsigned c) { return std::uint8_t(fill >> (8 * c)); };
  const std::vector<dvpp::Plane> pl = dvpp::planes(p);
  if (is_rgb(p.format)) {
    const unsigned px = p.format == DVPP_FMT_RGBA8888 ? 4 : 3;
    for (std::uint32_t y = 0; y < p.height; ++y)
      for (std::uint32_t x = 0; x < p.width; ++x)
        for (unsigned c = 0; c < px; ++c) p.bytes[pl[0].offset + y * pl[0].pitch + x * px + c] = ch(c);
    return;
  }
  for (std::uint32_t y = 0; y < pl[0].rows; ++y)
    std::fill_n(p.bytes.begin() + std::ptrdiff_t(pl[0].offset + y * pl[0].pitch), pl[0].row_bytes, ch(0));
  const bool vu = p.format == DVPP_FMT_NV21;
  for (std::size_t i = 1; i < pl.size(); ++i)
    for (std::uint32_t y = 0; y < pl[i].rows; ++y)
      for (std::uint32_t b = 0; b < pl[i].row_bytes; ++b)
        p.bytes[pl[i].offset + y * pl[i].pitch + b] = ch((b % 2 == 0) != vu ? 1 : 2);
}

// `sub` copied into `canvas` with its top left at (x, y), plane by plane.
void paste_reference(Picture& canvas, const Picture& sub, std::uint32_t x, std::uint32_t y) {
  std::uint64_t at[4] = {};
  int pitch[4] = {};
  dvpp::plane_offsets(canvas, x, y, at, pitch);
  const std::vector<dvpp::Plane> pl = dvpp::planes(sub);
  for (std::size_t i = 0; i < pl.size(); ++i) {
    const std::uint64_t end =
        at[i] + (pl[i].rows ? std::uint64_t(pl[i].rows - 1) * std::uint64_t(pitch[i]) : 0) + pl[i].row_bytes;
    if (sub.format != canvas.format || end > canvas.bytes.size())
      throw Error("the reference's " + std::to_string(sub.width) + " x " + std::to_string(sub.height) +
                  " picture does not fit its canvas at (" + std::to_string(x) + ", " + std::to_string(y) + ")");
    for (std::uint32_t r = 0; r < pl[i].rows; ++r)
      std::copy_n(sub.bytes.begin() + std::ptrdiff_t(pl[i].offset + r * pl[i].pitch), pl[i].row_bytes,
                  canvas.bytes.begin() + std::ptrdiff_t(at[i] + std::uint64_t(r) * std::uint64_t(pitch[i])));
  }
}

}  // namespace

Picture vpc_reference(const Picture& src, const dvpp_cmd& cmd, const Picture& like) {
  Picture sub;  // the resized crop alone, at its own size
  sub.format = like.format;
  // The engine's rule: no crop (a side 0) takes the picture; no size (a side 0) keeps the crop's.
  const bool crop = cmd.crop_w && cmd.crop_h, size = cmd.out_width && cmd.out_height;
  sub.width = size ? cmd.out_width : crop ? cmd.crop_w : src.width;
  sub.height = size ? cmd.out_height : crop ? cmd.crop_h : src.height;
  dvpp::set_strides(sub, dvpp::Limits{});
  sub.bytes.assign(dvpp::picture_bytes(sub.format, sub.stride_w, sub.stride_h), 0);
  resized_reference(src, cmd, sub);
  Picture canvas = empty_like(like);
  if (cmd.fill_mode == 0) fill_reference(canvas, cmd.fill);
  paste_reference(canvas, sub, cmd.paste_x, cmd.paste_y);
  return canvas;
}

double psnr(const Picture& have, const Picture& want, std::uint32_t frames) {
  double sum = 0;
  std::uint64_t n = 0;
  const std::uint64_t frame = dvpp::picture_bytes(want.format, want.stride_w, want.stride_h);
  for (std::uint32_t f = 0; f < frames; ++f)
    for (const dvpp::Plane& p : dvpp::planes(want))
      for (std::uint32_t r = 0; r < p.rows; ++r)
        for (std::uint32_t b = 0; b < p.row_bytes; ++b, ++n) {
          const std::uint64_t at = f * frame + p.offset + r * p.pitch + b;
          const double d = double(have.bytes.at(at)) - double(want.bytes.at(at));
          sum += d * d;
        }
  return sum == 0 ? INFINITY : 10.0 * std::log10(255.0 * 255.0 * double(n) / sum);
}

}  // namespace dvp::platform
