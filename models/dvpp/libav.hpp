// SPDX-License-Identifier: MIT
// What VDEC and VENC share of libavcodec: owners of its objects, its error codes in words, and
// its own reports kept off stderr.
#pragma once
#include <memory>
#include <string>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
}

namespace dvp::dvpp {

struct AvDeleter {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
  void operator()(AVCodecParserContext* p) const { av_parser_close(p); }
  void operator()(AVPacket* p) const { av_packet_free(&p); }
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
template <typename T>
using Av = std::unique_ptr<T, AvDeleter>;

inline std::string av_error(int e) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(e, text, sizeof text);
  return text;
}

// libavcodec's and its encoders' own reports (a damaged slice, x264's statistics) kept off
// stderr: each command's status and reason say what happened.
void quiet_libav();

}  // namespace dvp::dvpp
