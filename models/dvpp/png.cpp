// SPDX-License-Identifier: MIT
// PNGD's pixels: libpng decodes to 8-bit RGB or RGBA rows written straight into the output plane
// at its stride. Grey expands to RGB, a palette to its colours, tRNS to alpha; 1, 2 and 4-bit
// samples widen to 8; interlaced PNGs are decoded whole. 16-bit samples are refused (the engine
// decodes 8). A stream libpng finds corrupt (a bad CRC, a bad zlib stream, a truncated file) is
// an error with libpng's words.
#include <csetjmp>
#include <cstring>

#include <png.h>

#include "codec.hpp"

namespace dvp::dvpp {

namespace {

struct Source {
  const std::uint8_t* data;
  std::size_t size, at;
  char message[160];
};

extern "C" void on_png_error(png_structp png, png_const_charp msg) {
  auto* s = static_cast<Source*>(png_get_error_ptr(png));
  std::snprintf(s->message, sizeof s->message, "%s", msg);
  png_longjmp(png, 1);
}

extern "C" void on_png_warning(png_structp, png_const_charp) {}

extern "C" void read_bytes(png_structp png, png_bytep out, png_size_t n) {
  auto* s = static_cast<Source*>(png_get_io_ptr(png));
  if (n > s->size - s->at) png_error(png, "the file ends inside a chunk (truncated)");
  std::memcpy(out, s->data + s->at, n);
  s->at += n;
}

// Every C++ object of a decode, outside the frame that calls setjmp.
struct Job {
  dvpp_format want;
  Limits limits;
  Decoded out;
  std::vector<png_bytep> rows;

  bool accept(png_structp png, png_infop info);
};

// After png_read_info: whether the engine takes it, and the transformations to 8-bit RGB(A).
bool Job::accept(png_structp png, png_infop info) {
  const png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
  const int depth = png_get_bit_depth(png, info), type = png_get_color_type(png, info);
  if (depth == 16) return out = refuse(DVPP_ERR_UNSUPPORTED, "16-bit samples (PNGD decodes 8-bit PNGs)"), false;
  if (w < limits.min_side || h < limits.min_side || w > limits.max_side || h > limits.max_side)
    return out = refuse(DVPP_ERR_SIZE, std::to_string(w) + " x " + std::to_string(h) + " pixels, outside " +
                                           std::to_string(limits.min_side) + " .. " + std::to_string(limits.max_side) +
                                           " a side"),
           false;
  const bool alpha = (type & PNG_COLOR_MASK_ALPHA) || png_get_valid(png, info, PNG_INFO_tRNS);
  const dvpp_format native = alpha ? DVPP_FMT_RGBA8888 : DVPP_FMT_RGB888;
  if (want != DVPP_FMT_NATIVE && want != DVPP_FMT_RGB888 && want != DVPP_FMT_RGBA8888)
    return out = refuse(DVPP_ERR_FORMAT, std::string("PNGD writes rgb888 or rgba8888, not ") + format_name(want)),
           false;
  const dvpp_format f = want == DVPP_FMT_NATIVE ? native : want;
  if (type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (type == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  if (type == PNG_COLOR_TYPE_GRAY || type == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
  if (f == DVPP_FMT_RGB888 && alpha) png_set_strip_alpha(png);
  if (f == DVPP_FMT_RGBA8888 && !alpha) png_set_filler(png, 0xff, PNG_FILLER_AFTER);  // opaque
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  Picture& p = out.picture;
  p.format = f, p.width = w, p.height = h;
  set_strides(p, limits);
  p.bytes.assign(picture_bytes(f, p.stride_w, p.stride_h), 0);
  const std::size_t pitch = std::size_t(p.stride_w) * (f == DVPP_FMT_RGB888 ? 3 : 4);
  rows.resize(h);
  for (png_uint_32 r = 0; r < h; ++r) rows[r] = &p.bytes[r * pitch];
  return true;
}

bool run(png_structp png, png_infop info, Job& job) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_info(png, info);
  if (!job.accept(png, info)) return true;
  png_read_image(png, job.rows.data());
  png_read_end(png, nullptr);
  job.out.status = DVPP_DONE;
  return true;
}

}  // namespace

Decoded decode_png(const Request& r, const Limits& limits) {
  const std::uint8_t* data = r.data;
  const std::size_t size = r.size;
  const dvpp_format want = r.want();
  if (size < 8 || png_sig_cmp(data, 0, 8)) return refuse(DVPP_ERR_CORRUPT, "not a PNG (no PNG signature)");
  Source src{data, size, 0, {}};
  Job job{want, limits, {}, {}};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, on_png_error, on_png_warning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!info) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return refuse(DVPP_ERR_CORRUPT, "libpng could not start");
  }
  png_set_read_fn(png, &src, read_bytes);
  if (!run(png, info, job)) job.out = refuse(DVPP_ERR_CORRUPT, src.message);
  png_destroy_read_struct(&png, &info, nullptr);
  return std::move(job.out);
}

}  // namespace dvp::dvpp
