// SPDX-License-Identifier: MIT
// VDEC's pixels: libavcodec's H.264 and H.265 decoders on an Annex B elementary stream, split into
// access units by libavcodec's own parser, on one thread (the same frames in the same order on
// every host), with errors that explode (AV_EF_EXPLODE: a damaged slice is an error here, not
// concealed as a player would). Every frame, 8-bit 4:2:0, is written NV12 (NV21 on request) at
// the engine's strides, one after another; a 10-bit one (H.265 main 10) as P010. Refused: other
// chroma formats and depths (`unsupported`), a format the stream's depth is not written in
// (`format`), a size outside the engine's range, a size or depth change mid-stream.
#include <cstring>
#include <memory>

#include "codec.hpp"
#include "libav.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
}

namespace dvp::dvpp {

namespace {

// The decoder's frames, appended to one picture of consecutive NV12 (NV21) frames.
struct Frames {
  const Limits& limits;
  dvpp_format format;  // NATIVE until the first frame: NV12, or P010 for a 10-bit stream
  std::uint32_t max_frames;
  std::uint64_t out_size;  // the command's buffer: no frame past it is kept
  Decoded out;
  std::uint64_t frame_bytes = 0;

  bool pick_format(const AVFrame& f);
  bool take(const AVFrame& f);
  bool full() const { return max_frames && out.frames >= max_frames; }
};

// The output format for the stream's first frame, or why not.
bool Frames::pick_format(const AVFrame& f) {
  const bool ten = f.format == AV_PIX_FMT_YUV420P10LE;
  if (!ten && f.format != AV_PIX_FMT_YUV420P && f.format != AV_PIX_FMT_YUVJ420P)
    return out = refuse(DVPP_ERR_UNSUPPORTED, std::string("frames of ") + av_get_pix_fmt_name(AVPixelFormat(f.format)) +
                                                  " (VDEC writes 8-bit and 10-bit 4:2:0)"),
           false;
  if (format == DVPP_FMT_NATIVE) format = ten ? DVPP_FMT_P010 : DVPP_FMT_NV12;
  if (ten != (format == DVPP_FMT_P010))
    return out = refuse(DVPP_ERR_FORMAT, std::string("a ") +
                                             (ten ? "10-bit stream is written p010"
                                                  : "8-bit stream is "
                                                    "written nv12 or "
                                                    "nv21") +
                                             ", not " + format_name(format) + " (VPC converts)"),
           false;
  return true;
}

bool Frames::take(const AVFrame& f) {
  Picture& p = out.picture;
  if (!out.frames && !pick_format(f)) return false;
  if (out.frames && (f.format == AV_PIX_FMT_YUV420P10LE) != (format == DVPP_FMT_P010))
    return out = refuse(DVPP_ERR_UNSUPPORTED, "the bit depth changes at frame " + std::to_string(out.frames)), false;
  if (f.decode_error_flags || (f.flags & AV_FRAME_FLAG_CORRUPT))
    return out = refuse(DVPP_ERR_CORRUPT, "frame " + std::to_string(out.frames) + " decoded with errors"), false;
  const auto w = std::uint32_t(f.width), h = std::uint32_t(f.height);
  if (!out.frames) {
    if (w < limits.min_side || h < limits.min_side || w > limits.max_side || h > limits.max_side)
      return out = refuse(DVPP_ERR_SIZE, std::to_string(w) + " x " + std::to_string(h) + " pixels, outside " +
                                             std::to_string(limits.min_side) + " .. " +
                                             std::to_string(limits.max_side) + " a side"),
             false;
    p.format = format, p.width = w, p.height = h;
    set_strides(p, limits);
    frame_bytes = picture_bytes(p.format, p.stride_w, p.stride_h);
  } else if (w != p.width || h != p.height) {
    return out = refuse(DVPP_ERR_UNSUPPORTED, "the size changes at frame " + std::to_string(out.frames)), false;
  }
  const std::uint64_t at = p.bytes.size();
  if (at + frame_bytes > out_size)
    return out = refuse(DVPP_ERR_OUT_SIZE, "frame " + std::to_string(out.frames) + " does not fit the output buffer (" +
                                               std::to_string(out_size) + " B)"),
           false;
  p.bytes.resize(at + frame_bytes, 0);
  const std::uint8_t* const planes[3] = {f.data[0], f.data[1], f.data[2]};
  put_yuv420(p, at, planes, f.linesize);
  ++out.frames;
  return true;
}

// One access unit into the decoder (null: drain), every frame it gives out taken.
bool send(AVCodecContext* ctx, const AVPacket* pkt, AVFrame* frame, Frames& fr) {
  const int e = avcodec_send_packet(ctx, pkt);
  if (e < 0 && e != AVERROR_EOF) return fr.out = refuse(DVPP_ERR_CORRUPT, "the decoder: " + av_error(e)), false;
  for (;;) {
    const int r = avcodec_receive_frame(ctx, frame);
    if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return true;
    if (r < 0) return fr.out = refuse(DVPP_ERR_CORRUPT, "the decoder: " + av_error(r)), false;
    if (fr.full()) continue;
    if (!fr.take(*frame)) return false;
  }
}

}  // namespace

void quiet_libav() {
  if (av_log_get_level() > AV_LOG_FATAL) av_log_set_level(AV_LOG_FATAL);
}

Decoded decode_video(const Request& r, const Limits& limits) {
  const AVCodecID id = r.cmd.stream == DVPP_STREAM_H264   ? AV_CODEC_ID_H264
                       : r.cmd.stream == DVPP_STREAM_H265 ? AV_CODEC_ID_HEVC
                                                          : AV_CODEC_ID_NONE;
  if (id == AV_CODEC_ID_NONE)
    return refuse(DVPP_ERR_FORMAT, "stream type " + std::to_string(r.cmd.stream) + " is no enum dvpp_stream");
  const dvpp_format want = r.want();
  if (want != DVPP_FMT_NATIVE && want != DVPP_FMT_NV12 && want != DVPP_FMT_NV21 && want != DVPP_FMT_P010)
    return refuse(DVPP_ERR_FORMAT,
                  std::string("VDEC writes nv12, nv21 or p010, not ") + format_name(want) + " (VPC converts)");
  quiet_libav();
  const AVCodec* codec = avcodec_find_decoder(id);
  Av<AVCodecContext> ctx(codec ? avcodec_alloc_context3(codec) : nullptr);
  Av<AVCodecParserContext> parser(av_parser_init(id));
  Av<AVPacket> pkt(av_packet_alloc());
  Av<AVFrame> frame(av_frame_alloc());
  if (!ctx || !parser || !pkt || !frame) return refuse(DVPP_ERR_UNSUPPORTED, "libavcodec has no decoder for it");
  ctx->thread_count = 1;
  ctx->err_recognition = AV_EF_EXPLODE | AV_EF_BITSTREAM | AV_EF_BUFFER;
  if (avcodec_open2(ctx.get(), codec, nullptr) < 0) return refuse(DVPP_ERR_UNSUPPORTED, "the decoder did not open");
  std::vector<std::uint8_t> data(r.size + AV_INPUT_BUFFER_PADDING_SIZE, 0);  // the parser reads past the end
  std::memcpy(data.data(), r.data, r.size);
  Frames fr{limits, want, r.cmd.max_frames, r.cmd.out_size, {}, 0};
  fr.out.frames = 0;
  const std::uint8_t* at = data.data();
  int left = int(r.size);
  while (!fr.full()) {  // calls with nothing left flush the parser's last access units
    const bool flushing = left == 0;
    const int n =
        av_parser_parse2(parser.get(), ctx.get(), &pkt->data, &pkt->size, at, left, AV_NOPTS_VALUE, AV_NOPTS_VALUE, 0);
    if (n < 0) return refuse(DVPP_ERR_CORRUPT, "the parser: " + av_error(n));
    at += n, left -= n;
    if (pkt->size && !send(ctx.get(), pkt.get(), frame.get(), fr)) return std::move(fr.out);
    if (flushing && !pkt->size) break;
  }
  if (!fr.full() && !send(ctx.get(), nullptr, frame.get(), fr)) return std::move(fr.out);
  if (!fr.out.frames) return refuse(DVPP_ERR_CORRUPT, "no frame in the stream");
  fr.out.status = DVPP_DONE;
  fr.out.stream_bytes = std::uint64_t(at - data.data());  // parsed: up to the last frame kept
  return std::move(fr.out);
}

}  // namespace dvp::dvpp
