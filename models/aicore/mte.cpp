// SPDX-License-Identifier: MIT
#include "mte.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "fractal.hpp"
#include "numeric.hpp"

namespace dvp::aicore {

Span MteUnit::failed(const Issued& e, const std::string& why) {
  core_.fault(e, why);
  return Span::at(now_tick());
}

Span MteUnit::copy(const Issued& e) {
  // DataCopy: block_count blocks of block_len x 32 bytes; gaps between blocks on each side.
  const DataCopyCfg c = DataCopyCfg::unpack(e.v[2]);
  if (c.block_count < 1 || c.block_len < 1)
    return failed(e, "DataCopy with block_count " + std::to_string(c.block_count) + " and block_len " +
                         std::to_string(c.block_len) + " (both must be at least 1)");
  const OpInfo& info = e.in.info();
  const std::uint64_t block = std::uint64_t(c.block_len) * 32;
  const std::uint64_t src_step = block + std::uint64_t(c.src_gap) * 32,
                      dst_step = block + std::uint64_t(c.dst_gap) * 32;
  const std::uint64_t n = c.block_count;
  const std::uint64_t src_span = (n - 1) * src_step + block, dst_span = (n - 1) * dst_step + block;
  if (info.src != kGm && !core_.local_range(info.src, e.v[1], src_span, e, "source")) return Span::at(now_tick());
  if (info.dst != kGm && !core_.local_range(info.dst, e.v[0], dst_span, e, "destination")) return Span::at(now_tick());
  const AiCoreConfig& cfg = core_.config();
  const Tick t = now_tick() + cfg.clock.cycles(cfg.mte_startup_cycles);
  if (info.src == kGm || info.dst == kGm) return copy_gm(e, t);
  // Local to local.
  const std::uint32_t rate = info.src == kL1 ? cfg.l1_to_ub_bytes_per_cycle : cfg.ub_to_l1_bytes_per_cycle;
  if (core_.functional())
    for (std::uint64_t i = 0; i < n; ++i)
      std::memmove(core_.buffer(info.dst) + e.v[0] + i * dst_step, core_.buffer(info.src) + e.v[1] + i * src_step,
                   block);
  return Span::at(t + cfg.clock.cycles((n * block + rate - 1) / rate));
}

Span MteUnit::copy_gm(const Issued& e, Tick t) {
  // The blocks go through the bus interface back to back, each issuing once the one before it has
  // been sent. Blocks that follow each other in GM (no gap on the GM side) leave as one burst, as an
  // AXI master merges them: split only at line boundaries, however the local side is strided.
  const DataCopyCfg c = DataCopyCfg::unpack(e.v[2]);
  const OpInfo& info = e.in.info();
  const bool write = info.dst == kGm;
  const std::uint64_t block = std::uint64_t(c.block_len) * 32;
  const std::uint64_t src_step = block + std::uint64_t(c.src_gap) * 32,
                      dst_step = block + std::uint64_t(c.dst_gap) * 32;
  const std::uint64_t gm = write ? e.v[0] : e.v[1], gm_step = write ? dst_step : src_step;
  const std::uint64_t local_step = write ? src_step : dst_step;
  std::uint8_t* local = write ? core_.buffer(info.src) + e.v[1] : core_.buffer(info.dst) + e.v[0];
  const bool merged = gm_step == block && c.block_count > 1;
  GmTransfer x;
  x.write = write;
  x.rate = write ? core_.config().gm_write_bytes_per_cycle : core_.config().gm_read_bytes_per_cycle;
  x.functional = core_.functional();
  x.pc = e.pc;
  x.in = &e.in;
  x.no_alloc = c.no_alloc && !write;
  if (merged) {
    // One burst; a strided local side is gathered (or scattered) through a run of its own.
    std::vector<std::uint8_t> run(local_step == block || !x.functional ? 0 : c.block_count * block);
    if (write && !run.empty())
      for (std::uint64_t i = 0; i < c.block_count; ++i) std::memcpy(&run[i * block], local + i * local_step, block);
    x.addr = gm, x.len = c.block_count * block, x.start = t, x.data = run.empty() ? local : run.data();
    const GmTiming g = core_.gm_access(x);
    if (core_.stopping()) return Span::at(now_tick());
    if (!write && !run.empty())
      for (std::uint64_t i = 0; i < c.block_count; ++i) std::memcpy(local + i * local_step, &run[i * block], block);
    return Span{g.issued, std::max(t, g.done)};
  }
  x.len = block;
  Tick end = t;
  for (std::uint64_t i = 0; i < c.block_count; ++i) {
    x.data = local + i * local_step;
    x.addr = gm + i * gm_step;
    x.start = t;
    const GmTiming g = core_.gm_access(x);
    if (core_.stopping()) return Span::at(now_tick());
    end = std::max(end, g.done);
    t = g.issued;
  }
  return Span{t, end};
}

Span MteUnit::nd2nz(const Issued& e) {
  const Nd2NzCfg c = Nd2NzCfg::unpack(e.v[2]);
  const DType t = e.in.dt1;
  if (t == DType::None) return failed(e, "needs a data type");
  const unsigned eb = dtype_bytes(t), c0 = k0_of(t);
  if (c.rows == 0 || c.cols == 0) return failed(e, "an empty matrix (rows and cols must be at least 1)");
  if (c.dst_rows % 16 || c.dst_rows < c.rows)
    return failed(e, "dst_rows " + std::to_string(c.dst_rows) + " must be a multiple of 16 and at least rows (" +
                         std::to_string(c.rows) + ")");
  if (c.src_stride < c.cols) return failed(e, "src_stride is smaller than cols");
  const std::uint64_t cblocks = ceil_div(c.cols, c0);
  if (!core_.local_range(kL1, e.v[0], cblocks * c.dst_rows * 32, e, "destination")) return Span::at(now_tick());
  const AiCoreConfig& cfg = core_.config();
  const bool functional = core_.functional();
  std::vector<std::uint8_t> row(std::size_t(c.cols) * eb);
  std::uint8_t* l1 = core_.buffer(kL1) + e.v[0];
  // Padding first (rows and columns beyond the matrix), then each row from GM.
  if (functional) {
    std::uint8_t pad[4];
    std::memcpy(pad, &e.v[3], 4);
    for (std::uint64_t r = 0; r < c.dst_rows; ++r)
      for (std::uint64_t col = 0; col < cblocks * c0; ++col)
        if (r >= c.rows || col >= c.cols)
          std::memcpy(l1 + ((col / c0) * c.dst_rows + r) * 32 + (col % c0) * eb, pad, eb);
  }
  GmTransfer x{false, 0, row.data(), row.size(), 0, cfg.gm_read_bytes_per_cycle, functional, e.pc, &e.in};
  Tick t0 = now_tick() + cfg.clock.cycles(cfg.mte_startup_cycles);
  Tick end = t0;
  for (std::uint64_t r = 0; r < c.rows; ++r) {
    x.addr = e.v[1] + r * c.src_stride * eb;
    x.start = t0;
    const GmTiming g = core_.gm_access(x);
    if (core_.stopping()) return Span::at(now_tick());
    end = std::max(end, g.done);
    if (functional)
      for (std::uint64_t cb = 0; cb < cblocks; ++cb) {
        const std::uint64_t n = std::min<std::uint64_t>(c0, c.cols - cb * c0);
        std::memcpy(l1 + (cb * c.dst_rows + r) * 32, row.data() + cb * c0 * eb, n * eb);
      }
    t0 = g.issued;  // the next row issues once this one has been sent
  }
  return Span{t0, std::max(end, t0)};
}

Span MteUnit::load2d(const Issued& e) {
  const Load2dCfg c = Load2dCfg::unpack(e.v[2]);
  const Buffer dst = e.in.info().dst;
  const bool transpose = e.in.mode & mode::kTranspose;
  if (e.in.dt1 == DType::None) return failed(e, "needs a data type");
  if (transpose && dtype_bytes(e.in.dt1) != 2)
    return failed(e, "a transposing load works on 16-bit fractals (16 x 16)");
  if (c.repeat < 1) return failed(e, "repeat count 0 (must be 1..255)");
  const std::uint64_t n = c.repeat;
  if (!core_.local_range(kL1, e.v[1], ((n - 1) * c.src_stride + 1) * 512, e, "source") ||
      !core_.local_range(dst, e.v[0], ((n - 1) * (1 + c.dst_gap) + 1) * 512, e, "destination"))
    return Span::at(now_tick());
  if (core_.functional())
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint8_t* s = core_.buffer(kL1) + e.v[1] + i * c.src_stride * 512;
      std::uint8_t* d = core_.buffer(dst) + e.v[0] + i * (1 + c.dst_gap) * 512;
      if (!transpose) {
        std::memmove(d, s, 512);
      } else {
        std::uint16_t tmp[256];
        std::memcpy(tmp, s, 512);
        for (int r = 0; r < 16; ++r)
          for (int col = 0; col < 16; ++col) std::memcpy(d + (col * 16 + r) * 2, &tmp[r * 16 + col], 2);
      }
    }
  const AiCoreConfig& cfg = core_.config();
  const std::uint32_t rate = dst == kL0A ? cfg.l1_to_l0a_bytes_per_cycle : cfg.l1_to_l0b_bytes_per_cycle;
  return Span::at(now_tick() + cfg.clock.cycles(cfg.mte_startup_cycles + ceil_div(n * 512, rate)));
}

Span MteUnit::load3d(const Issued& e) {
  // img2col. The feature map in L1 is C1 x H x W x C0 (C0 = k0), or, with fewer channels than
  // k0 (4 or 8 of fp16: the small-channel mode of a network's first layer, CANN's C04), H x W x
  // channels; fmatrix gives W, H and the padding. Column k of the matrix is
  // ((c1 * kh + i) * kw + j) * C0 + c0 (C0 the map's), row p is the output position
  // ho * Wo + wo; element (p, k) is the input at h = ho * stride_h - pad_t + i * dil_h,
  // w = wo * stride_w - pad_l + j * dil_w, or padvalue outside the map (and 0 for rows past
  // Ho x Wo, and for the columns of a small-channel map past K = channels x kh x kw, up to the
  // next whole fractal). Rows m_start.. and columns k_start.. go to L0A / L0B in 16 x k0 fractals.
  const Load3dCfg c = Load3dCfg::unpack(e.v[2], e.v[3]);
  const Fmatrix f = Fmatrix::unpack(e.fmatrix);
  const DType t = e.in.dt1;
  if (t == DType::None) return failed(e, "needs a data type");
  const unsigned c0 = k0_of(t);
  const Buffer dst = e.in.info().dst;
  if (c.channels == 0 || (c.channels < c0 ? c0 % c.channels || c.channels < 4 : c.channels % c0))
    return failed(e, "channels must be a multiple of " + std::to_string(c0) + ", or 4 or more dividing it");
  if (!c.kh || !c.kw || !c.stride_h || !c.stride_w || !c.dil_h || !c.dil_w)
    return failed(e, "filter size, stride and dilation must be at least 1");
  if (!f.w || !f.h) return failed(e, "fmatrix holds no feature map (W and H are 0)");
  const std::int64_t eh = std::int64_t(c.dil_h) * (c.kh - 1) + 1, ew = std::int64_t(c.dil_w) * (c.kw - 1) + 1;
  const std::int64_t ho = (std::int64_t(f.h) + f.pad_t + f.pad_b - eh) / c.stride_h + 1;
  const std::int64_t wo = (std::int64_t(f.w) + f.pad_l + f.pad_r - ew) / c.stride_w + 1;
  if (ho < 1 || wo < 1) return failed(e, "the filter is larger than the padded feature map");
  // m_start is any output position (a band of the feature map starts mid-row, as the
  // hardware's load3d starts at any point of the map); the rows written are whole fractals.
  if (c.m_ext % 16 || c.k_start % c0 || c.k_ext % c0 || !c.m_ext || !c.k_ext)
    return failed(e, "m_ext must be a multiple of 16, k_start and k_ext of " + std::to_string(c0));
  const std::uint64_t K = std::uint64_t(c.channels) * c.kh * c.kw, k_cols = (K + c0 - 1) / c0 * c0;
  if (c.k_start + c.k_ext > k_cols)
    return failed(e, "columns past K = channels x kh x kw = " + std::to_string(K) +
                         (k_cols != K ? " (" + std::to_string(k_cols) + " in whole fractals)" : std::string()));
  const std::uint64_t map_bytes = std::uint64_t(c.channels) * f.h * f.w * dtype_bytes(t);
  if (!core_.local_range(kL1, e.v[1], map_bytes, e, "feature map")) return Span::at(now_tick());
  const std::uint64_t mf = c.m_ext / 16, kf = c.k_ext / c0;
  if (!core_.local_range(dst, e.v[0], mf * kf * 512, e, "destination")) return Span::at(now_tick());
  if (core_.functional()) img2col(e, std::uint64_t(wo), std::uint64_t(ho));
  const AiCoreConfig& cfg = core_.config();
  const std::uint32_t rate = dst == kL0A ? cfg.l1_to_l0a_bytes_per_cycle : cfg.l1_to_l0b_bytes_per_cycle;
  return Span::at(now_tick() + cfg.clock.cycles(cfg.mte_startup_cycles + ceil_div(mf * kf * 512, rate)));
}

void MteUnit::img2col(const Issued& e, std::uint64_t wo, std::uint64_t ho) {
  const Load3dCfg c = Load3dCfg::unpack(e.v[2], e.v[3]);
  const Fmatrix f = Fmatrix::unpack(e.fmatrix);
  const unsigned eb = dtype_bytes(e.in.dt1), k0 = k0_of(e.in.dt1);
  const unsigned c0 = std::min<unsigned>(c.channels, k0);  // the map's channels per position
  const std::uint64_t kf = c.k_ext / k0, K = std::uint64_t(c.channels) * c.kh * c.kw;
  const std::uint8_t* fm = core_.buffer(kL1) + e.v[1];
  std::uint8_t* out = core_.buffer(e.in.info().dst) + e.v[0];
  // A tap is one (c1, i, j): the c0 channels of one position of the map, c0 x eb bytes in a row
  // both in L1 and in a fractal's row (k_start, K and k0 are multiples of c0, so a tap never
  // straddles a fractal or K). Each tap's column of rows is one copy per row, and the rows' output
  // positions step along without a division.
  const unsigned tap_bytes = c0 * eb;
  std::uint8_t pad[32];  // padvalue for each of a tap's elements
  for (unsigned b = 0; b < tap_bytes; b += eb) std::memcpy(pad + b, &e.padvalue, eb);
  for (std::uint64_t kk = 0; kk < c.k_ext; kk += c0) {
    const std::uint64_t k = c.k_start + kk, tap = k / c0;
    const std::uint64_t j = tap % c.kw, i = tap / c.kw % c.kh, c1 = tap / c.kw / c.kh;
    const std::int64_t h0 = std::int64_t(i) * c.dil_h - f.pad_t, w0 = std::int64_t(j) * c.dil_w - f.pad_l;
    const std::uint64_t plane = c1 * f.h * f.w * tap_bytes;  // an offset: past K, c1 is past the map
    std::uint8_t* column = out + (kk / k0) * 512 + (kk % k0) * eb;
    std::uint64_t oh = c.m_start / wo, ow = c.m_start % wo;
    for (std::uint64_t r = 0; r < c.m_ext; ++r) {
      std::uint8_t* d = column + (r / 16) * kf * 512 + (r % 16) * 32;
      const std::int64_t h = std::int64_t(oh) * c.stride_h + h0, w = std::int64_t(ow) * c.stride_w + w0;
      if (oh >= ho || k >= K)
        std::memset(d, 0, tap_bytes);  // rows past the output, columns past K
      else if (h < 0 || w < 0 || h >= f.h || w >= f.w)
        std::memcpy(d, pad, tap_bytes);
      else
        std::memcpy(d, fm + plane + (std::uint64_t(h) * f.w + std::uint64_t(w)) * tap_bytes, tap_bytes);
      if (++ow == wo) ow = 0, ++oh;
    }
  }
}

namespace {
// Picture formats AIPP reads (enum dvpp_format's numbers).
constexpr std::uint32_t kNv12 = 1, kNv21 = 2, kYuv400 = 5, kRgb888 = 6;
bool is_420(std::uint32_t f) { return f == kNv12 || f == kNv21; }
std::uint32_t pixel_bytes(std::uint32_t f) { return f == kRgb888 ? 3 : 1; }
}  // namespace

// Why aipp.gm2l1 cannot run, or "".
std::string MteUnit::aipp_fault(const Issued& e) const {
  const AippSrc s = AippSrc::unpack(e.aipp[0]);
  const AippCfg c = AippCfg::unpack(e.v[2]);
  if (!is_420(s.format) && s.format != kYuv400 && s.format != kRgb888)
    return "aipp_src format " + std::to_string(s.format) + " is not nv12 (1), nv21 (2), yuv400 (5) or rgb888 (6)";
  if (!c.w || !c.h) return "an empty crop (w and h must be at least 1)";
  if (is_420(s.format) && (s.pitch % 2 || s.plane_rows % 2))
    return "a 4:2:0 picture's pitch (" + std::to_string(s.pitch) + ") and plane_rows (" + std::to_string(s.plane_rows) +
           ") must be even";
  if (std::uint64_t(c.x) + c.w > s.pitch || std::uint64_t(c.y) + c.h > s.plane_rows)
    return "the crop (" + std::to_string(c.w) + " x " + std::to_string(c.h) + " at " + std::to_string(c.x) + ", " +
           std::to_string(c.y) + ") is not inside the picture's pitch x plane_rows (" + std::to_string(s.pitch) +
           " x " + std::to_string(s.plane_rows) + ")";
  return "";
}

// One output row of the crop from its source rows (Y or RGB; the chroma row of 4:2:0) into L1.
void MteUnit::aipp_row(const Issued& e, const std::uint8_t* luma, const std::uint8_t* chroma, std::uint32_t row) {
  const AippSrc s = AippSrc::unpack(e.aipp[0]);
  const AippCfg c = AippCfg::unpack(e.v[2]);
  const AippCsc m = AippCsc::unpack(&e.aipp[1]);
  const unsigned channels = s.format == kYuv400 ? 1 : 3;
  int mean[3];
  float min[3], var[3];  // the f16 registers' values, decoded once for the row
  for (unsigned k = 0; k < 3; ++k) {
    mean[k] = int(std::uint16_t(e.aipp[4] >> (16 * k)));
    min[k] = float(num::f16(std::uint16_t(e.aipp[5] >> (16 * k))));
    var[k] = float(num::f16(std::uint16_t(e.aipp[6] >> (16 * k))));
  }
  std::uint16_t* out = reinterpret_cast<std::uint16_t*>(core_.buffer(kL1) + e.v[0]) + std::uint64_t(row) * c.w * s.c0;
  for (std::uint32_t i = 0; i < c.w; ++i, out += s.c0) {
    int px[3] = {luma[i * pixel_bytes(s.format)], 0, 0};
    if (s.format == kRgb888) px[1] = luma[3 * i + 1], px[2] = luma[3 * i + 2];
    if (is_420(s.format)) {  // the U V pair of the pixel's column, from the first pair read
      const std::uint32_t pair = (c.x + i) / 2 - c.x / 2, u = s.format == kNv21 ? 1 : 0;
      px[1] = chroma[2 * pair + u], px[2] = chroma[2 * pair + 1 - u];
    }
    int v[3] = {px[0], px[1], px[2]};
    if (s.csc)
      for (unsigned k = 0; k < 3; ++k) {
        const int sum = m.m[k][0] * (px[0] - m.in_bias[0]) + m.m[k][1] * (px[1] - m.in_bias[1]) +
                        m.m[k][2] * (px[2] - m.in_bias[2]);
        v[k] = std::clamp((sum >> 8) + m.out_bias[k], 0, 255);  // an arithmetic shift: floor
      }
    std::fill(out, out + s.c0, std::uint16_t(0));
    for (unsigned k = 0; k < channels; ++k)  // in f32, as the pipe's arithmetic; rounded once to f16
      out[k] = num::to_f16(double((float(v[k] - mean[k]) - min[k]) * var[k]));
  }
}

Span MteUnit::aipp(const Issued& e) {
  if (const std::string why = aipp_fault(e); !why.empty()) return failed(e, why);
  const AippSrc s = AippSrc::unpack(e.aipp[0]);
  const AippCfg c = AippCfg::unpack(e.v[2]);
  const std::uint64_t out_bytes = std::uint64_t(c.w) * c.h * s.c0 * 2;
  if (!core_.local_range(kL1, e.v[0], out_bytes, e, "destination")) return Span::at(now_tick());
  const AiCoreConfig& cfg = core_.config();
  const bool functional = core_.functional();
  const std::uint64_t row_bytes = std::uint64_t(s.pitch) * pixel_bytes(s.format);
  const std::uint64_t chroma_at = e.v[1] + row_bytes * s.plane_rows;
  const std::uint32_t pair0 = c.x / 2, pairs = (c.x + c.w - 1) / 2 - pair0 + 1;
  std::vector<std::uint8_t> luma(std::uint64_t(c.w) * pixel_bytes(s.format)), chroma(2ull * pairs);
  GmTransfer x{false, 0, nullptr, 0, 0, cfg.gm_read_bytes_per_cycle, functional, e.pc, &e.in};
  Tick t = now_tick() + cfg.clock.cycles(cfg.mte_startup_cycles);
  const Tick first = t;
  Tick end = t;
  auto read = [&](std::uint64_t addr, std::vector<std::uint8_t>& into) {
    x.addr = addr, x.data = into.data(), x.len = into.size(), x.start = t;
    const GmTiming g = core_.gm_access(x);
    end = std::max(end, g.done);
    t = g.issued;  // the next row issues once this one has been sent
  };
  for (std::uint32_t r = 0; r < c.h && !core_.stopping(); ++r) {
    const std::uint32_t sy = c.y + r;
    read(e.v[1] + sy * row_bytes + std::uint64_t(c.x) * pixel_bytes(s.format), luma);
    if (is_420(s.format) && (r == 0 || sy % 2 == 0)) read(chroma_at + (sy / 2) * row_bytes + 2ull * pair0, chroma);
    if (functional && !core_.stopping()) aipp_row(e, luma.data(), chroma.data(), r);
  }
  if (core_.stopping()) return Span::at(now_tick());
  // The conversion keeps pace with the reads up to aipp_pixels_per_cycle.
  const Tick convert = first + cfg.clock.cycles(ceil_div(std::uint64_t(c.w) * c.h, cfg.aipp_pixels_per_cycle));
  return Span{t, std::max(end, convert)};
}

}  // namespace dvp::aicore
