// SPDX-License-Identifier: MIT
// libavcodec and libavformat, loaded when a model first calls them (VDEC, VENC, a video's
// reference decode), not when a process starts. With the hundred-odd codec, network and
// container libraries they bring, they took about 50 of the 90 ms every dvp process spent
// before main, and most runs decode no video.
//
// Each function the models call is defined here with the headers' own prototype (a mismatch
// does not compile) and forwards to the library's, looked up once. The binaries do not link
// either library; libavutil and libswscale (a few ms to load) stay linked.
#include <dlfcn.h>

#include <string>

#include "common/error.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/macros.h>
}

namespace {

// The library of the major version the models were compiled against, loaded once.
void* library(const char* soname) {
  void* lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    throw dvp::Error(std::string("cannot load ") + soname + " (" + (why ? why : "no reason given") +
                     "): scripts/setup.sh installs it with FFmpeg's development packages");
  }
  return lib;
}

void* avcodec() {
  static void* const lib = library("libavcodec.so." AV_STRINGIFY(LIBAVCODEC_VERSION_MAJOR));
  return lib;
}

void* avformat() {
  static void* const lib = library("libavformat.so." AV_STRINGIFY(LIBAVFORMAT_VERSION_MAJOR));
  return lib;
}

template <typename F>
F entry(void* lib, const char* name) {
  void* f = dlsym(lib, name);
  if (!f) throw dvp::Error(std::string("the loaded FFmpeg library has no ") + name);
  return reinterpret_cast<F>(f);
}

}  // namespace

// One forwarder: `name` of library `lib`, its parameters as declared, and the names passed on.
#define DVP_LIBAV(lib, ret, name, params, args)                      \
  extern "C" ret name params {                                       \
    static const auto real = entry<decltype(&::name)>(lib(), #name); \
    return real args;                                                \
  }

DVP_LIBAV(avcodec, const AVCodec*, avcodec_find_decoder, (enum AVCodecID id), (id))
DVP_LIBAV(avcodec, const AVCodec*, avcodec_find_encoder_by_name, (const char* name), (name))
DVP_LIBAV(avcodec, AVCodecContext*, avcodec_alloc_context3, (const AVCodec* codec), (codec))
DVP_LIBAV(avcodec, void, avcodec_free_context, (AVCodecContext * *ctx), (ctx))
DVP_LIBAV(avcodec, int, avcodec_open2, (AVCodecContext * ctx, const AVCodec* codec, AVDictionary** options),
          (ctx, codec, options))
DVP_LIBAV(avcodec, int, avcodec_parameters_to_context, (AVCodecContext * ctx, const AVCodecParameters* par), (ctx, par))
DVP_LIBAV(avcodec, int, avcodec_send_packet, (AVCodecContext * ctx, const AVPacket* pkt), (ctx, pkt))
DVP_LIBAV(avcodec, int, avcodec_receive_frame, (AVCodecContext * ctx, AVFrame* frame), (ctx, frame))
DVP_LIBAV(avcodec, int, avcodec_send_frame, (AVCodecContext * ctx, const AVFrame* frame), (ctx, frame))
DVP_LIBAV(avcodec, int, avcodec_receive_packet, (AVCodecContext * ctx, AVPacket* pkt), (ctx, pkt))
DVP_LIBAV(avcodec, AVPacket*, av_packet_alloc, (void), ())
DVP_LIBAV(avcodec, void, av_packet_free, (AVPacket * *pkt), (pkt))
DVP_LIBAV(avcodec, void, av_packet_unref, (AVPacket * pkt), (pkt))
DVP_LIBAV(avcodec, AVCodecParserContext*, av_parser_init, (int codec_id), (codec_id))
DVP_LIBAV(avcodec, void, av_parser_close, (AVCodecParserContext * s), (s))
DVP_LIBAV(avcodec, int, av_parser_parse2,
          (AVCodecParserContext * s, AVCodecContext* avctx, uint8_t** poutbuf, int* poutbuf_size, const uint8_t* buf,
           int buf_size, int64_t pts, int64_t dts, int64_t pos),
          (s, avctx, poutbuf, poutbuf_size, buf, buf_size, pts, dts, pos))

DVP_LIBAV(avformat, AVFormatContext*, avformat_alloc_context, (void), ())
DVP_LIBAV(avformat, int, avformat_open_input,
          (AVFormatContext * *ps, const char* url, const AVInputFormat* fmt, AVDictionary** options),
          (ps, url, fmt, options))
DVP_LIBAV(avformat, int, avformat_find_stream_info, (AVFormatContext * ic, AVDictionary** options), (ic, options))
DVP_LIBAV(avformat, void, avformat_close_input, (AVFormatContext * *s), (s))
DVP_LIBAV(avformat, int, av_read_frame, (AVFormatContext * s, AVPacket* pkt), (s, pkt))
DVP_LIBAV(avformat, const AVInputFormat*, av_find_input_format, (const char* short_name), (short_name))
DVP_LIBAV(avformat, AVIOContext*, avio_alloc_context,
          (unsigned char* buffer, int buffer_size, int write_flag, void* opaque,
           int (*read_packet)(void* opaque, uint8_t* buf, int buf_size),
           int (*write_packet)(void* opaque, uint8_t* buf, int buf_size),
           int64_t (*seek)(void* opaque, int64_t offset, int whence)),
          (buffer, buffer_size, write_flag, opaque, read_packet, write_packet, seek))
DVP_LIBAV(avformat, void, avio_context_free, (AVIOContext * *s), (s))
