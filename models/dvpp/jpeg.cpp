// SPDX-License-Identifier: MIT
// JPEGD's pixels: libjpeg-turbo decodes to raw component planes (no colour conversion, no
// upsampling: the samples the IDCT gives, as the hardware's decoder writes them), which are laid
// out semi-planar in the JPEG's own sampling. What the engine does not decode (progressive or
// arithmetic-coded, 12-bit, CMYK, 4:1:1) is refused with the reason, as is a stream libjpeg
// finds corrupt or truncated: its warnings (a premature end, a bad Huffman code) are errors here,
// as the hardware flags them instead of filling grey.
#include <csetjmp>
#include <cstdio>
#include <cstring>

#include "codec.hpp"

extern "C" {
#include <jpeglib.h>
// jerror.h after jpeglib.h: its message codes
#include <jerror.h>
}

namespace dvp::dvpp {

namespace {

struct ErrorMgr {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

extern "C" void on_error(j_common_ptr c) {
  auto* e = reinterpret_cast<ErrorMgr*>(c->err);
  (*c->err->format_message)(c, e->message);
  std::longjmp(e->jump, 1);
}

// Level -1: corrupt data libjpeg would decode past; an error here, but for the warnings about
// markers a decoder may ignore (a newer JFIF revision, an unknown Adobe transform). Trace
// levels: ignored.
extern "C" void on_message(j_common_ptr c, int level) {
  const int code = c->err->msg_code;
  if (level < 0 && code != JWRN_JFIF_MAJOR && code != JWRN_ADOBE_XFORM) on_error(c);
}

// What a decode keeps across libjpeg's calls: every C++ object lives here, outside the frame
// that calls setjmp, so a longjmp skips no destructor.
struct Job {
  dvpp_format want;
  Limits limits;
  Decoded out;
  std::vector<std::uint8_t> rows[3];  // one iMCU row of each component, block-padded
  std::vector<JSAMPROW> ptrs[3];
  JSAMPARRAY planes[3] = {};

  // After the header: whether the engine takes it (else `out` says why), and the output's layout.
  bool accept(const jpeg_decompress_struct& c);
  void prepare(const jpeg_decompress_struct& c);
  void store(const jpeg_decompress_struct& c, JDIMENSION first_row);
};

// The output format for the JPEG's sampling (h, v of Y; chroma 1 x 1), or NATIVE if none.
dvpp_format native_format(const jpeg_decompress_struct& c) {
  if (c.num_components == 1) return DVPP_FMT_YUV400;
  const int h = c.comp_info[0].h_samp_factor, v = c.comp_info[0].v_samp_factor;
  for (int i = 1; i < 3; ++i)
    if (c.comp_info[i].h_samp_factor != 1 || c.comp_info[i].v_samp_factor != 1) return DVPP_FMT_NATIVE;
  if (h == 2 && v == 2) return DVPP_FMT_NV12;
  if (h == 2 && v == 1) return DVPP_FMT_YUV422SP;
  if (h == 1 && v == 1) return DVPP_FMT_YUV444SP;
  return DVPP_FMT_NATIVE;
}

bool Job::accept(const jpeg_decompress_struct& c) {
  if (c.progressive_mode) return out = refuse(DVPP_ERR_UNSUPPORTED, "progressive JPEG (JPEGD decodes baseline)"), false;
  if (c.arith_code) return out = refuse(DVPP_ERR_UNSUPPORTED, "arithmetic-coded JPEG (JPEGD decodes Huffman)"), false;
  if (c.data_precision != 8)
    return out = refuse(DVPP_ERR_UNSUPPORTED, std::to_string(c.data_precision) + "-bit samples (JPEGD decodes 8)"),
           false;
  const bool ycc = c.num_components == 3 && c.jpeg_color_space == JCS_YCbCr;
  if (!ycc && !(c.num_components == 1 && c.jpeg_color_space == JCS_GRAYSCALE))
    return out = refuse(DVPP_ERR_UNSUPPORTED,
                        std::to_string(c.num_components) + "-component JPEG that is not YCbCr or grey (CMYK, RGB)"),
           false;
  const dvpp_format native = native_format(c);
  if (native == DVPP_FMT_NATIVE)
    return out = refuse(DVPP_ERR_UNSUPPORTED, "chroma sampling " + std::to_string(c.comp_info[0].h_samp_factor) + "x" +
                                                  std::to_string(c.comp_info[0].v_samp_factor) +
                                                  " (JPEGD decodes 4:2:0, 4:2:2, 4:4:4 and grey)"),
           false;
  if (c.image_width < limits.min_side || c.image_height < limits.min_side || c.image_width > limits.max_side ||
      c.image_height > limits.max_side)
    return out = refuse(DVPP_ERR_SIZE, std::to_string(c.image_width) + " x " + std::to_string(c.image_height) +
                                           " pixels, outside " + std::to_string(limits.min_side) + " .. " +
                                           std::to_string(limits.max_side) + " a side"),
           false;
  const bool ok = want == DVPP_FMT_NATIVE || want == native || want == DVPP_FMT_YUV400 ||
                  (want == DVPP_FMT_NV21 && native == DVPP_FMT_NV12);
  if (!ok)
    return out = refuse(DVPP_ERR_FORMAT, std::string("JPEGD writes this JPEG as ") + format_name(native) +
                                             (native == DVPP_FMT_NV12 ? ", nv21" : "") +
                                             (native == DVPP_FMT_YUV400 ? "" : " or yuv400") + ", not " +
                                             format_name(want) + " (VPC converts)"),
           false;
  out.picture.format = want == DVPP_FMT_NATIVE ? native : want;
  return true;
}

void Job::prepare(const jpeg_decompress_struct& c) {
  Picture& p = out.picture;
  p.width = c.image_width, p.height = c.image_height;
  set_strides(p, limits);
  p.bytes.assign(picture_bytes(p.format, p.stride_w, p.stride_h), 0);
  for (int i = 0; i < c.num_components; ++i) {
    const jpeg_component_info& ci = c.comp_info[i];
    const std::size_t w = std::size_t(ci.width_in_blocks) * DCTSIZE, n = std::size_t(ci.v_samp_factor) * DCTSIZE;
    rows[i].assign(w * n, 0);
    ptrs[i].resize(n);
    for (std::size_t r = 0; r < n; ++r) ptrs[i][r] = rows[i].data() + r * w;
    planes[i] = ptrs[i].data();
  }
}

// One iMCU row of raw samples (max_v_samp x 8 luma rows from first_row) into the planes.
void Job::store(const jpeg_decompress_struct& c, JDIMENSION first_row) {
  Picture& p = out.picture;
  const std::size_t y_rows = std::size_t(c.max_v_samp_factor) * DCTSIZE;
  for (std::size_t r = 0; r < y_rows && first_row + r < p.height; ++r)
    std::memcpy(&p.bytes[(first_row + r) * p.stride_w], ptrs[0][r], p.width);
  if (p.format == DVPP_FMT_YUV400) return;
  const int v = c.max_v_samp_factor;  // luma rows per chroma row
  const std::size_t plane = std::size_t(p.stride_w) * p.stride_h;
  const std::size_t cw = c.comp_info[1].downsampled_width, ch = c.comp_info[1].downsampled_height;
  const std::size_t c_pitch = p.format == DVPP_FMT_YUV444SP ? 2 * std::size_t(p.stride_w) : p.stride_w;
  const bool vu = p.format == DVPP_FMT_NV21;
  for (std::size_t r = 0; r < std::size_t(DCTSIZE); ++r) {
    const std::size_t row = first_row / v + r;
    if (row >= ch) break;
    std::uint8_t* dst = &p.bytes[plane + row * c_pitch];
    for (std::size_t x = 0; x < cw; ++x) {
      dst[2 * x + (vu ? 1 : 0)] = ptrs[1][r][x];
      dst[2 * x + (vu ? 0 : 1)] = ptrs[2][r][x];
    }
  }
}

// The libjpeg calls, under setjmp: only trivially destructible locals here.
bool run(jpeg_decompress_struct& c, ErrorMgr& err, Job& job, const std::uint8_t* data, std::size_t size) {
  if (setjmp(err.jump)) return false;
  jpeg_create_decompress(&c);  // after setjmp: it may fail too
  jpeg_mem_src(&c, data, static_cast<unsigned long>(size));
  jpeg_read_header(&c, TRUE);
  if (!job.accept(c)) return true;
  c.raw_data_out = TRUE;
  c.out_color_space = c.jpeg_color_space;
  job.prepare(c);
  jpeg_start_decompress(&c);
  const JDIMENSION step = JDIMENSION(c.max_v_samp_factor) * DCTSIZE;
  while (c.output_scanline < c.output_height) {
    const JDIMENSION first = c.output_scanline;
    if (jpeg_read_raw_data(&c, job.planes, step) == 0) break;
    job.store(c, first);
  }
  jpeg_finish_decompress(&c);
  job.out.status = DVPP_DONE;
  return true;
}

}  // namespace

Decoded decode_jpeg(const Request& r, const Limits& limits) {
  const std::uint8_t* data = r.data;
  const std::size_t size = r.size;
  const dvpp_format want = r.want();
  if (size < 4 || data[0] != 0xff || data[1] != 0xd8) return refuse(DVPP_ERR_CORRUPT, "not a JPEG (no SOI marker)");
  Job job{want, limits, {}, {}, {}};
  jpeg_decompress_struct c{};
  ErrorMgr err{};
  c.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = on_error;
  err.pub.emit_message = on_message;
  if (!run(c, err, job, data, size)) job.out = refuse(DVPP_ERR_CORRUPT, err.message);
  jpeg_destroy_decompress(&c);
  if (job.out.status == DVPP_PENDING) job.out = refuse(DVPP_ERR_CORRUPT, "the stream ended before the last row");
  return std::move(job.out);
}

}  // namespace dvp::dvpp
