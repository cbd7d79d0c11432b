// SPDX-License-Identifier: MIT
// VENC's bytes: libavcodec's libx264 (H.264 high profile; qp 0 is lossless, High 4:4:4
// Predictive) and libx265 (H.265 main) encoders on consecutive NV12 / NV21 frames in memory,
// written as one Annex B elementary stream. As a hardware encoder runs them: one QP for every
// frame (the command's; the I / P ratio set to 1), I and P frames only (no B frames, no
// reordering: each frame's bits come out as it is encoded), a closed GOP with an IDR frame every
// `gop` frames, one thread and no lookahead threads, so the same frames give the same bytes on
// every host with the same libraries. The motion search is the "veryfast" preset: a fixed, cheap
// search, as in silicon.
#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "codec.hpp"
#include "libav.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/opt.h>
}

namespace dvp::dvpp {

namespace {

// The encoder for the command's codec, configured; null (and `why`) when it cannot open.
Av<AVCodecContext> open_encoder(const dvpp_cmd& c, const Picture& in, std::string& why) {
  const bool h264 = c.stream == DVPP_STREAM_H264;
  const AVCodec* codec = avcodec_find_encoder_by_name(h264 ? "libx264" : "libx265");
  if (!codec) return why = std::string("libavcodec has no ") + (h264 ? "libx264" : "libx265") + " encoder", nullptr;
  quiet_libav();
  Av<AVCodecContext> ctx(avcodec_alloc_context3(codec));
  if (!ctx) return why = "no memory for the encoder", nullptr;
  ctx->width = int(in.width), ctx->height = int(in.height);
  ctx->pix_fmt = AV_PIX_FMT_YUV420P;
  ctx->time_base = AVRational{1, 30};
  ctx->framerate = AVRational{30, 1};
  ctx->gop_size = c.gop ? int(c.gop) : 1 << 30;
  ctx->max_b_frames = 0;
  ctx->thread_count = 1;
  ctx->flags |= AV_CODEC_FLAG_CLOSED_GOP;  // every key frame an IDR frame
  const std::string qp = std::to_string(c.qp);
  const char* params = h264 ? "lookahead-threads=1:sliced-threads=0:scenecut=0:ipratio=1:pbratio=1"
                            : "pools=none:frame-threads=1:wpp=0:scenecut=0:open-gop=0:ipratio=1:pbratio=1:"
                              "log-level=error";
  const std::pair<const char*, const char*> options[] = {
      {"preset", "veryfast"}, {"qp", qp.c_str()}, {h264 ? "x264-params" : "x265-params", params}};
  for (const auto& [key, value] : options)
    if (av_opt_set(ctx->priv_data, key, value, 0) < 0)
      return why = std::string("the encoder has no option ") + key + " (" + value + ")", nullptr;
  const int e = avcodec_open2(ctx.get(), codec, nullptr);
  if (e < 0) return why = "the encoder did not open: " + av_error(e), nullptr;
  return ctx;
}

// Frame `i` of the input into `f` (planar 4:2:0: the chroma pairs split).
void put_frame(const Picture& in, const std::uint8_t* bytes, std::uint32_t i, AVFrame& f) {
  const std::uint8_t* at = bytes + std::uint64_t(i) * picture_bytes(in.format, in.stride_w, in.stride_h);
  const std::vector<Plane> pl = planes(in);
  for (std::uint32_t r = 0; r < in.height; ++r)
    std::memcpy(f.data[0] + std::ptrdiff_t(r) * f.linesize[0], at + r * pl[0].pitch, in.width);
  const int u = in.format == DVPP_FMT_NV21 ? 1 : 0;
  for (std::uint32_t r = 0; r < pl[1].rows; ++r) {
    const std::uint8_t* row = at + pl[1].offset + r * pl[1].pitch;
    for (std::uint32_t x = 0; x < pl[1].row_bytes / 2; ++x) {
      f.data[1][std::ptrdiff_t(r) * f.linesize[1] + x] = row[2 * x + u];
      f.data[2][std::ptrdiff_t(r) * f.linesize[2] + x] = row[2 * x + 1 - u];
    }
  }
}

// One frame into the encoder (null: drain), every packet it gives out appended to `out`.
bool send(AVCodecContext* ctx, const AVFrame* frame, std::vector<std::uint8_t>& out, std::string& why) {
  int e = avcodec_send_frame(ctx, frame);
  if (e < 0) return why = "the encoder: " + av_error(e), false;
  Av<AVPacket> pkt(av_packet_alloc());
  while ((e = avcodec_receive_packet(ctx, pkt.get())) >= 0) {
    out.insert(out.end(), pkt->data, pkt->data + pkt->size);
    av_packet_unref(pkt.get());
  }
  if (e != AVERROR(EAGAIN) && e != AVERROR_EOF) return why = "the encoder: " + av_error(e), false;
  return true;
}

// The frame count the command asks for, against what the input holds; or why not.
Decoded frame_count(const Request& r, const Picture& in, std::uint32_t& frames) {
  const std::uint64_t each = picture_bytes(in.format, in.stride_w, in.stride_h);
  const std::uint64_t held = r.size / each;
  frames = r.cmd.max_frames ? r.cmd.max_frames : std::uint32_t(std::min<std::uint64_t>(held, 1u << 20));
  if (r.cmd.max_frames > held)
    return refuse(DVPP_ERR_SIZE, "the input (" + std::to_string(r.size) + " B) holds " + std::to_string(held) +
                                     " frames of " + std::to_string(each) + " B, not the " +
                                     std::to_string(r.cmd.max_frames) + " asked");
  Decoded ok;
  ok.status = DVPP_DONE;
  return ok;
}

}  // namespace

Decoded encode_video(const Request& r, const Limits& limits) {
  const auto format = dvpp_format(r.cmd.in_format);
  if (format != DVPP_FMT_NV12 && format != DVPP_FMT_NV21)
    return refuse(DVPP_ERR_FORMAT,
                  std::string("VENC encodes nv12 or nv21, not ") + format_name(format) + " (VPC converts)");
  Picture in;
  if (Decoded d = read_picture(r, limits, in); d.status != DVPP_DONE) return d;
  if (r.cmd.stream != DVPP_STREAM_H264 && r.cmd.stream != DVPP_STREAM_H265)
    return refuse(DVPP_ERR_FORMAT, "stream type " + std::to_string(r.cmd.stream) + " is no enum dvpp_stream");
  if (r.cmd.qp > 51) return refuse(DVPP_ERR_FORMAT, "qp " + std::to_string(r.cmd.qp) + " is outside 0 .. 51");
  if (r.cmd.gop > (1u << 30)) return refuse(DVPP_ERR_FORMAT, "gop " + std::to_string(r.cmd.gop) + " is above 2^30");
  if (in.width % 2 || in.height % 2)
    return refuse(DVPP_ERR_SIZE, std::to_string(in.width) + " x " + std::to_string(in.height) +
                                     ": VENC encodes 4:2:0 pictures of even width and height");
  std::uint32_t frames = 0;
  if (Decoded d = frame_count(r, in, frames); d.status != DVPP_DONE) return d;
  std::string why;
  Av<AVCodecContext> ctx = open_encoder(r.cmd, in, why);
  Av<AVFrame> frame(av_frame_alloc());
  if (!ctx || !frame) return refuse(DVPP_ERR_UNSUPPORTED, why.empty() ? "no memory for a frame" : why);
  frame->format = AV_PIX_FMT_YUV420P, frame->width = int(in.width), frame->height = int(in.height);
  if (av_frame_get_buffer(frame.get(), 0) < 0) return refuse(DVPP_ERR_UNSUPPORTED, "no memory for a frame");
  Decoded d;
  std::vector<std::uint8_t>& out = d.picture.bytes;
  for (std::uint32_t i = 0; i < frames; ++i) {
    if (av_frame_make_writable(frame.get()) < 0) return refuse(DVPP_ERR_UNSUPPORTED, "no memory for a frame");
    put_frame(in, r.data, i, *frame);
    frame->pts = i;
    if (!send(ctx.get(), frame.get(), out, why)) return refuse(DVPP_ERR_UNSUPPORTED, why);
  }
  if (!send(ctx.get(), nullptr, out, why)) return refuse(DVPP_ERR_UNSUPPORTED, why);
  d.status = DVPP_DONE;
  d.picture.format = DVPP_FMT_NATIVE, d.picture.width = in.width, d.picture.height = in.height;
  d.frames = frames;
  d.work_pixels = std::uint64_t(in.width) * in.height;
  return d;
}

}  // namespace dvp::dvpp
