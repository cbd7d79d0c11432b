// SPDX-License-Identifier: MIT
// The host's decode of a media file, to check DVPP's output against: the same libraries by other
// entry points than the engines use (TurboJPEG's YUV planes for JPEG; libpng's simplified API
// for PNG), laid out as the engine lays out its picture. Only the visible pixels are compared.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dvpp/codec.hpp"

namespace dvp::platform {

// The reference picture of `file`'s bytes in the format and strides of `like` (the engine's
// picture); throws dvp::Error when the library cannot decode it.
dvpp::Picture reference_picture(dvpp_engine engine, const std::vector<std::uint8_t>& file, const dvpp::Picture& like);

// VDEC's reference: libavformat's raw H.264 / HEVC demuxer (not the engine's parser) feeding
// libavcodec's decoder with its default threads: the first `max_frames` frames (0: all), NV12
// or NV21 as `like` lays out one frame, one after another. Throws dvp::Error when it fails.
dvpp::Picture video_reference(const std::vector<std::uint8_t>& file, dvpp_stream stream, const dvpp::Picture& like,
                              std::uint32_t frames);

// Which library call made the reference, for reports.
const char* reference_name(dvpp_engine engine);

// VPC's reference: the crop of `src` resized by plain bilinear interpolation (pixel centres
// aligned, edges clamped to the crop; chroma sampled at its own sites) and converted between YUV
// and RGB in floating point (enum dvpp_csc), laid out as `like`. Not bit-exact with libswscale's
// fixed point: compared by PSNR.
dvpp::Picture vpc_reference(const dvpp::Picture& src, const dvpp_cmd& cmd, const dvpp::Picture& like);
// PSNR of `have` against `want` over the visible bytes of their first `frames` pictures (one
// after another at `want`'s layout), dB (infinite when equal).
double psnr(const dvpp::Picture& have, const dvpp::Picture& want, std::uint32_t frames = 1);

struct PixelDiff {
  std::uint64_t compared = 0, differ = 0;  // visible bytes
  std::uint64_t first = 0;                 // the first differing byte's offset in the picture
  std::string where;                       // "Y row 3, byte 17"
};
// Compares the visible bytes of two pictures of one format and layout.
PixelDiff compare_pictures(const dvpp::Picture& have, const dvpp::Picture& want);

}  // namespace dvp::platform
