// SPDX-License-Identifier: MIT
// JPEGE's bytes: libjpeg-turbo encodes a picture in memory (semi-planar YUV 4:2:0 / 4:2:2 /
// 4:4:4 or grey, as the decoders and VPC write them) as a baseline JPEG of the same sampling, from
// raw component planes (`raw_data_in`: no colour conversion, no resampling), at the command's
// quality (standard tables scaled, libjpeg's accurate integer DCT, optimised Huffman tables
// off: the hardware's fixed tables). The picture's edges are repeated out to whole MCUs, as an
// encoder pads.
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "codec.hpp"

extern "C" {
#include <jpeglib.h>
}

namespace dvp::dvpp {

namespace {

struct EncodeError {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

extern "C" void on_encode_error(j_common_ptr c) {
  auto* e = reinterpret_cast<EncodeError*>(c->err);
  (*c->err->format_message)(c, e->message);
  std::longjmp(e->jump, 1);
}

// Every C++ object of an encode, outside the frame that calls setjmp.
struct Encode {
  const Picture& in;
  const std::uint8_t* bytes;  // the picture's, as laid out
  int quality;
  std::vector<std::uint8_t> rows[3];  // one iMCU row of each component, padded to whole blocks
  std::vector<JSAMPROW> ptrs[3];
  JSAMPARRAY planes[3] = {};
  unsigned char* out = nullptr;  // libjpeg's buffer (malloc), freed by the caller
  unsigned long out_size = 0;

  void setup(jpeg_compress_struct& c);
  void fill(const jpeg_compress_struct& c, JDIMENSION first_row);
};

// Sampling of Y for the input format (chroma 1 x 1).
void sampling(dvpp_format f, int& h, int& v) {
  h = f == DVPP_FMT_NV12 || f == DVPP_FMT_NV21 || f == DVPP_FMT_YUV422SP ? 2 : 1;
  v = f == DVPP_FMT_NV12 || f == DVPP_FMT_NV21 ? 2 : 1;
}

void Encode::setup(jpeg_compress_struct& c) {
  c.image_width = in.width, c.image_height = in.height;
  const bool grey = in.format == DVPP_FMT_YUV400;
  c.input_components = grey ? 1 : 3;
  c.in_color_space = grey ? JCS_GRAYSCALE : JCS_YCbCr;
  jpeg_set_defaults(&c);
  jpeg_set_colorspace(&c, grey ? JCS_GRAYSCALE : JCS_YCbCr);
  jpeg_set_quality(&c, quality, TRUE);
  c.raw_data_in = TRUE;
  c.dct_method = JDCT_ISLOW;
  int h = 1, v = 1;
  sampling(in.format, h, v);
  c.comp_info[0].h_samp_factor = h, c.comp_info[0].v_samp_factor = v;
  for (int i = 1; i < c.input_components; ++i) c.comp_info[i].h_samp_factor = 1, c.comp_info[i].v_samp_factor = 1;
  const std::size_t mcus = (std::size_t(in.width) + 8 * h - 1) / (8 * h);  // across
  for (int i = 0; i < c.input_components; ++i) {
    const std::size_t width = mcus * DCTSIZE * (i ? 1 : h), n = std::size_t(i ? 1 : v) * DCTSIZE;
    rows[i].assign(width * n, 0);
    ptrs[i].resize(n);
    for (std::size_t r = 0; r < n; ++r) ptrs[i][r] = rows[i].data() + r * width;
    planes[i] = ptrs[i].data();
  }
}

// The component rows of one iMCU row from the picture, edges repeated.
void Encode::fill(const jpeg_compress_struct& c, JDIMENSION first_row) {
  const std::vector<Plane> pl = dvpp::planes(in);
  const int vmax = c.max_v_samp_factor;
  for (int i = 0; i < c.num_components; ++i) {
    const bool chroma = i > 0;
    const std::uint32_t w = chroma ? (in.width + c.max_h_samp_factor - 1) / c.max_h_samp_factor : in.width;
    const std::uint32_t h = chroma ? (in.height + vmax - 1) / vmax : in.height;
    const std::uint32_t first = chroma ? first_row / vmax : first_row;
    const bool vu = in.format == DVPP_FMT_NV21;
    for (std::size_t r = 0; r < ptrs[i].size(); ++r) {
      const std::uint32_t y = std::min<std::uint32_t>(first + std::uint32_t(r), h - 1);
      JSAMPROW row = ptrs[i][r];
      const std::size_t width = rows[i].size() / ptrs[i].size();
      for (std::size_t x = 0; x < width; ++x) {
        const std::uint32_t sx = std::min<std::uint32_t>(std::uint32_t(x), w - 1);
        row[x] = chroma ? bytes[pl[1].offset + y * pl[1].pitch + 2 * sx + ((i == 2) != vu ? 1 : 0)]
                        : bytes[pl[0].offset + y * pl[0].pitch + sx];
      }
    }
  }
}

bool run(jpeg_compress_struct& c, EncodeError& err, Encode& e) {
  if (setjmp(err.jump)) return false;
  jpeg_create_compress(&c);  // after setjmp: it may fail too
  jpeg_mem_dest(&c, &e.out, &e.out_size);
  e.setup(c);
  jpeg_start_compress(&c, TRUE);
  const JDIMENSION step = JDIMENSION(c.max_v_samp_factor) * DCTSIZE;
  while (c.next_scanline < c.image_height) {
    e.fill(c, c.next_scanline);
    jpeg_write_raw_data(&c, e.planes, step);
  }
  jpeg_finish_compress(&c);
  return true;
}

}  // namespace

Decoded encode_jpeg(const Request& r, const Limits& limits) {
  Picture in;
  if (Decoded d = read_picture(r, limits, in); d.status != DVPP_DONE) return d;
  if (in.format == DVPP_FMT_RGB888 || in.format == DVPP_FMT_RGBA8888 || in.format == DVPP_FMT_P010)
    return refuse(DVPP_ERR_FORMAT,
                  std::string("JPEGE encodes 8-bit YUV, not ") + format_name(in.format) + " (VPC converts)");
  if (r.cmd.quality < 1 || r.cmd.quality > 100)
    return refuse(DVPP_ERR_FORMAT, "quality " + std::to_string(r.cmd.quality) + " is outside 1 .. 100");
  Encode e{in, r.data, int(r.cmd.quality), {}, {}};
  jpeg_compress_struct c{};
  EncodeError err{};
  c.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = on_encode_error;
  const bool ok = run(c, err, e);
  jpeg_destroy_compress(&c);
  Decoded d;
  if (ok) {
    d.status = DVPP_DONE;
    d.picture.format = DVPP_FMT_NATIVE, d.picture.width = in.width, d.picture.height = in.height;
    d.picture.bytes.assign(e.out, e.out + e.out_size);
    d.work_pixels = std::uint64_t(in.width) * in.height;
  } else {
    d = refuse(DVPP_ERR_CORRUPT, err.message);
  }
  std::free(e.out);
  return d;
}

}  // namespace dvp::dvpp
