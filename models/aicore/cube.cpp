// The matrix path: ND -> Nz into L1 (MTE2), fractal loads into L0A / L0B (MTE1), the cube
// (M) and FixPipe (FIX). Layouts, with k0 = 32 bytes / element size (fp16 16, int8 32, fp32 8):
//
//   L1 Nz      matrix R x C (R padded to dst_rows, C to a multiple of k0): fractal (rb, cb) of
//              16 rows x k0 columns at byte (cb * dst_rows/16 + rb) * 512, row-major inside.
//   L0A (zZ)   A, m x k: fractal (i, j) (rows 16i.., k 16j..) at (i * kf + j) * 512, 16 x k0 row-major.
//   L0B (zN)   B, k x n, held as B^T fractals: (l, j) (n 16l.., k k0*j..) at (l * kf + j) * 512,
//              16 (n) x k0 (k) row-major.
//   L0C (Nz)   C, m x n, accumulator type: fractal (i, l) at (l * mf + i) * 16*16*4, 16 x 16 row-major.
#include <cblas.h>

#include <cmath>
#include <cstring>
#include <string_view>

#include "aicore.hpp"
#include "common/error.hpp"
#include "numeric.hpp"

namespace dvp::aicore {

namespace {
unsigned k0_of(DType t) { return 32 / dtype_bytes(t); }
std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }
}  // namespace

AiCore::Span AiCore::nd2nz_op(const Issued& e) {
  const Nd2NzCfg c = Nd2NzCfg::unpack(e.v[2]);
  const DType t = e.in.dt1;
  const Tick now = now_tick();
  if (t == DType::None) return raise(e.pc, &e.in, "needs a data type"), Span{now, now};
  const unsigned eb = dtype_bytes(t), c0 = k0_of(t);
  if (c.rows == 0 || c.cols == 0) return raise(e.pc, &e.in, "an empty matrix (rows and cols must be at least 1)"), Span{now, now};
  if (c.dst_rows % 16 || c.dst_rows < c.rows)
    return raise(e.pc, &e.in, "dst_rows " + std::to_string(c.dst_rows) + " must be a multiple of 16 and at least rows (" +
                                  std::to_string(c.rows) + ")"), Span{now, now};
  if (c.src_stride < c.cols) return raise(e.pc, &e.in, "src_stride is smaller than cols"), Span{now, now};
  const std::uint64_t cblocks = ceil_div(c.cols, c0);
  const std::uint64_t span = cblocks * c.dst_rows * 32;
  if (!local_range(kL1, e.v[0], span, e, "destination")) return Span{now, now};
  const Clock& clk = cfg_.clock;
  Tick t0 = now + clk.cycles(cfg_.mte_startup_cycles);
  Tick end = t0;
  std::vector<std::uint8_t> row(std::size_t(c.cols) * eb);
  std::uint8_t* l1 = buf_[kL1].data() + e.v[0];
  // Padding first (rows and columns beyond the matrix), then each row from GM.
  if (functional_) {
    std::uint8_t pad[4];
    std::memcpy(pad, &e.v[3], 4);
    for (std::uint64_t r = 0; r < c.dst_rows; ++r)
      for (std::uint64_t col = 0; col < cblocks * c0; ++col)
        if (r >= c.rows || col >= c.cols)
          std::memcpy(l1 + ((col / c0) * c.dst_rows + r) * 32 + (col % c0) * eb, pad, eb);
  }
  for (std::uint64_t r = 0; r < c.rows; ++r) {
    Tick issued = t0;
    end = std::max(end, gm_access(false, e.v[1] + r * c.src_stride * eb, row.data(), row.size(), t0,
                                  cfg_.gm_read_bytes_per_cycle, functional_, e.pc, &e.in, &issued));
    if (stopping_) return Span{now_tick(), now_tick()};
    if (functional_)
      for (std::uint64_t cb = 0; cb < cblocks; ++cb) {
        const std::uint64_t n = std::min<std::uint64_t>(c0, c.cols - cb * c0);
        std::memcpy(l1 + (cb * c.dst_rows + r) * 32, row.data() + cb * c0 * eb, n * eb);
      }
    t0 = issued;  // the next row issues once this one has been sent
  }
  return Span{t0, std::max(end, t0)};
}

Tick AiCore::load2d_op(const Issued& e) {
  const Load2dCfg c = Load2dCfg::unpack(e.v[2]);
  const std::string_view m = e.in.info().mnemonic;
  const Buffer dst = m == "load2d.l0a" ? kL0A : kL0B;
  const Tick now = now_tick();
  const bool transpose = e.in.mode & mode::kTranspose;
  if (e.in.dt1 == DType::None) return raise(e.pc, &e.in, "needs a data type"), now;
  if (transpose && dtype_bytes(e.in.dt1) != 2)
    return raise(e.pc, &e.in, "a transposing load works on 16-bit fractals (16 x 16)"), now;
  if (c.repeat < 1) return raise(e.pc, &e.in, "repeat count 0 (must be 1..255)"), now;
  const std::uint64_t n = c.repeat;
  if (!local_range(kL1, e.v[1], ((n - 1) * c.src_stride + 1) * 512, e, "source") ||
      !local_range(dst, e.v[0], ((n - 1) * (1 + c.dst_gap) + 1) * 512, e, "destination"))
    return now;
  if (functional_)
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint8_t* s = buf_[kL1].data() + e.v[1] + i * c.src_stride * 512;
      std::uint8_t* d = buf_[dst].data() + e.v[0] + i * (1 + c.dst_gap) * 512;
      if (!transpose) {
        std::memmove(d, s, 512);
      } else {
        std::uint16_t tmp[256];
        std::memcpy(tmp, s, 512);
        for (int r = 0; r < 16; ++r)
          for (int col = 0; col < 16; ++col) std::memcpy(d + (col * 16 + r) * 2, &tmp[r * 16 + col], 2);
      }
    }
  const std::uint32_t rate = dst == kL0A ? cfg_.l1_to_l0a_bytes_per_cycle : cfg_.l1_to_l0b_bytes_per_cycle;
  return now + cfg_.clock.cycles(cfg_.mte_startup_cycles + ceil_div(n * 512, rate));
}

Tick AiCore::load3d_op(const Issued& e) {
  // img2col. The feature map in L1 is C1 x H x W x C0 (C0 = k0); fmatrix gives W, H and the
  // padding. Column k of the matrix is ((c1 * kh + i) * kw + j) * C0 + c0, row p is the output
  // position ho * Wo + wo; element (p, k) is the input at h = ho * stride_h - pad_t + i * dil_h,
  // w = wo * stride_w - pad_l + j * dil_w, or padvalue outside the map (and 0 for rows past
  // Ho x Wo). Rows m_start.. and columns k_start.. of it go to L0A / L0B in 16 x k0 fractals.
  const Load3dCfg c = Load3dCfg::unpack(e.v[2], e.v[3]);
  const Fmatrix f = Fmatrix::unpack(e.fmatrix);
  const DType t = e.in.dt1;
  const Tick now = now_tick();
  if (t == DType::None) return raise(e.pc, &e.in, "needs a data type"), now;
  const unsigned eb = dtype_bytes(t), c0 = k0_of(t);
  const Buffer dst = std::string(e.in.info().mnemonic) == "load3d.l0a" ? kL0A : kL0B;
  if (c.channels == 0 || c.channels % c0) return raise(e.pc, &e.in, "channels must be a multiple of " + std::to_string(c0)), now;
  if (!c.kh || !c.kw || !c.stride_h || !c.stride_w || !c.dil_h || !c.dil_w)
    return raise(e.pc, &e.in, "filter size, stride and dilation must be at least 1"), now;
  if (!f.w || !f.h) return raise(e.pc, &e.in, "fmatrix holds no feature map (W and H are 0)"), now;
  const std::int64_t eh = std::int64_t(c.dil_h) * (c.kh - 1) + 1, ew = std::int64_t(c.dil_w) * (c.kw - 1) + 1;
  const std::int64_t ho = (std::int64_t(f.h) + f.pad_t + f.pad_b - eh) / c.stride_h + 1;
  const std::int64_t wo = (std::int64_t(f.w) + f.pad_l + f.pad_r - ew) / c.stride_w + 1;
  if (ho < 1 || wo < 1) return raise(e.pc, &e.in, "the filter is larger than the padded feature map"), now;
  if (c.m_start % 16 || c.m_ext % 16 || c.k_start % c0 || c.k_ext % c0 || !c.m_ext || !c.k_ext)
    return raise(e.pc, &e.in, "m_start and m_ext must be multiples of 16, k_start and k_ext of " + std::to_string(c0)), now;
  const std::uint64_t K = std::uint64_t(c.channels) * c.kh * c.kw;
  if (c.k_start + c.k_ext > K) return raise(e.pc, &e.in, "columns past K = channels x kh x kw = " + std::to_string(K)), now;
  const std::uint64_t c1n = c.channels / c0;
  if (!local_range(kL1, e.v[1], c1n * f.h * f.w * 32, e, "feature map")) return now;
  const std::uint64_t mf = c.m_ext / 16, kf = c.k_ext / c0;
  if (!local_range(dst, e.v[0], mf * kf * 512, e, "destination")) return now;
  if (functional_) {
    const std::uint8_t* fm = buf_[kL1].data() + e.v[1];
    std::uint8_t* out = buf_[dst].data() + e.v[0];
    std::uint8_t pad[4];
    std::memcpy(pad, &e.padvalue, 4);
    for (std::uint64_t r = 0; r < c.m_ext; ++r) {
      const std::uint64_t p = c.m_start + r;
      const std::int64_t oh = std::int64_t(p) / wo, ow = std::int64_t(p) % wo;
      for (std::uint64_t kk = 0; kk < c.k_ext; ++kk) {
        const std::uint64_t k = c.k_start + kk;
        const std::uint64_t cc = k % c0, j = (k / c0) % c.kw, i = (k / c0 / c.kw) % c.kh, c1 = k / c0 / c.kw / c.kh;
        std::uint8_t* d = out + ((r / 16) * kf + kk / c0) * 512 + (r % 16) * 32 + (kk % c0) * eb;
        const std::int64_t h = oh * c.stride_h - f.pad_t + std::int64_t(i) * c.dil_h;
        const std::int64_t w = ow * c.stride_w - f.pad_l + std::int64_t(j) * c.dil_w;
        if (oh >= ho) std::memset(d, 0, eb);  // rows past the output
        else if (h < 0 || w < 0 || h >= f.h || w >= f.w) std::memcpy(d, pad, eb);
        else std::memcpy(d, fm + ((c1 * f.h + std::uint64_t(h)) * f.w + std::uint64_t(w)) * 32 + cc * eb, eb);
      }
    }
  }
  const std::uint32_t rate = dst == kL0A ? cfg_.l1_to_l0a_bytes_per_cycle : cfg_.l1_to_l0b_bytes_per_cycle;
  return now + cfg_.clock.cycles(cfg_.mte_startup_cycles + ceil_div(mf * kf * 512, rate));
}

Tick AiCore::mmad_op(const Issued& e) {
  const MmadCfg c = MmadCfg::unpack(e.v[3]);
  const DType acc_t = e.in.dt1, in_t = e.in.dt2;
  const Tick now = now_tick();
  const bool ok = (acc_t == DType::F32 && (in_t == DType::F16 || in_t == DType::BF16 || in_t == DType::F32)) ||
                  (acc_t == DType::S32 && in_t == DType::S8);
  if (!ok) return raise(e.pc, &e.in, "unsupported type pair (f32.f16, f32.bf16, f32.f32, s32.s8)"), now;
  if (c.m == 0 || c.k == 0 || c.n == 0) return now + cfg_.clock.cycles(cfg_.cube_startup_cycles);
  const unsigned ib = dtype_bytes(in_t), k0 = k0_of(in_t);
  const std::uint64_t mf = ceil_div(c.m, 16), kf = ceil_div(c.k, k0), nf = ceil_div(c.n, 16);
  if (!local_range(kL0A, e.v[1], mf * kf * 512, e, "A") || !local_range(kL0B, e.v[2], nf * kf * 512, e, "B") ||
      !local_range(kL0C, e.v[0], mf * nf * 1024, e, "C"))
    return now;
  if (functional_) {
    const std::uint8_t* A = buf_[kL0A].data() + e.v[1];
    const std::uint8_t* B = buf_[kL0B].data() + e.v[2];
    std::uint8_t* C = buf_[kL0C].data() + e.v[0];
    // Element addresses in the fractal layouts (see the top of this file).
    auto a_at = [&](std::uint64_t r, std::uint64_t k) { return A + ((r / 16) * kf + k / k0) * 512 + (r % 16) * 32 + (k % k0) * ib; };
    auto b_at = [&](std::uint64_t k, std::uint64_t n) { return B + ((n / 16) * kf + k / k0) * 512 + (n % 16) * 32 + (k % k0) * ib; };
    auto c_at = [&](std::uint64_t r, std::uint64_t n) { return C + ((n / 16) * mf + r / 16) * 1024 + (r % 16) * 64 + (n % 16) * 4; };
    if (acc_t == DType::S32) {
      for (std::uint64_t r = 0; r < c.m; ++r)
        for (std::uint64_t n = 0; n < c.n; ++n) {
          std::int64_t s = 0;
          for (std::uint64_t k = 0; k < c.k; ++k) s += std::int64_t(std::int8_t(*a_at(r, k))) * std::int8_t(*b_at(k, n));
          std::int32_t cur = 0;
          if (!c.init) std::memcpy(&cur, c_at(r, n), 4);
          const std::int32_t v = std::int32_t(std::uint32_t(cur) + std::uint32_t(s));  // wraps like the hardware
          std::memcpy(c_at(r, n), &v, 4);
        }
    } else {
      // Products of two fp16/bf16 values are exact in a double, and so are the sums up to
      // the k of one mmad; the result is added to L0C and rounded once to f32. The operands
      // are decoded once, not once per multiply.
      std::vector<double> a(std::size_t(c.m) * c.k), bt(std::size_t(c.n) * c.k);
      // 16-bit inputs decode by table; a fractal row holds k0 consecutive elements of k.
      const double* table = in_t == DType::F16 ? num::f16_table() : in_t == DType::BF16 ? num::bf16_table() : nullptr;
      auto decode = [&](const std::uint8_t* p) {
        if (!table) return num::load(p, in_t);
        std::uint16_t b;
        std::memcpy(&b, p, 2);
        return table[b];
      };
      // A (rows m) and B (columns n) share one fractal layout; unpack each row of k by
      // walking its fractals, k0 contiguous elements at a time.
      auto unpack = [&](const std::uint8_t* base, std::uint64_t rows, std::vector<double>& out) {
        for (std::uint64_t r = 0; r < rows; ++r) {
          const std::uint8_t* row = base + (r / 16) * kf * 512 + (r % 16) * 32;
          double* o = out.data() + r * c.k;
          for (std::uint64_t k = 0; k < c.k; k += k0, row += 512)
            for (std::uint64_t j = 0; j < k0 && k + j < c.k; ++j) o[k + j] = decode(row + j * ib);
        }
      };
      unpack(A, c.m, a);
      unpack(B, c.n, bt);
      // The dot products in double precision by BLAS (exact products; sums in double).
      std::vector<double> prod(std::size_t(c.m) * c.n);
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(c.m), int(c.n), int(c.k), 1.0, a.data(), int(c.k),
                  bt.data(), int(c.k), 0.0, prod.data(), int(c.n));
      // Into L0C fractal by fractal (its own order), rounding once to f32 (host nearest-even,
      // NaN canonical, as num::to_f32).
      for (std::uint64_t nj = 0; nj < nf; ++nj)
        for (std::uint64_t mi = 0; mi < mf; ++mi) {
          std::uint8_t* frac = C + (nj * mf + mi) * 1024;
          for (std::uint64_t rr = 0, r = mi * 16; rr < 16 && r < c.m; ++rr, ++r)
            for (std::uint64_t cc = 0, n = nj * 16; cc < 16 && n < c.n; ++cc, ++n) {
              std::uint8_t* p = frac + rr * 64 + cc * 4;
              double v = prod[r * c.n + n];
              if (!c.init) {
                float cur;
                std::memcpy(&cur, p, 4);
                v += double(cur);
              }
              const float f = float(v);
              std::uint32_t bits;
              std::memcpy(&bits, &f, 4);
              if (v != v) bits = 0x7fc00000u;
              std::memcpy(p, &bits, 4);
            }
        }
    }
  }
  (acc_t == DType::S32 ? cube_int_ops_ : cube_flops_) += 2.0 * double(c.m) * double(c.k) * double(c.n);
  return now + cfg_.clock.cycles(cfg_.cube_startup_cycles + cube_steps(mf, kf, nf, k0) * cfg_.cube_cycles_per_step);
}

// The cube's steps for an mmad of mf x kf x nf fractals: each step multiplies cube_m rows by
// cube_n columns over cube_k fp16 elements of k (twice as many int8, half as many f32, the same
// 32 bytes). Partial fractals are padded in L0, so the cube works on whole fractals: the
// 16 x 16 x 16 cube of the 310 / 910 takes one step per fractal triple.
std::uint64_t AiCore::cube_steps(std::uint64_t mf, std::uint64_t kf, std::uint64_t nf, unsigned k0) const {
  // kf * k0 elements of k, cube_k * k0 / 16 per step: kf * 16 / cube_k steps for every type.
  (void)k0;
  return ceil_div(mf * 16, cfg_.cube_m) * ceil_div(kf * 16, cfg_.cube_k) * ceil_div(nf * 16, cfg_.cube_n);
}

AiCore::Span AiCore::fixp_op(const Issued& e) {
  const FixpCfg c = FixpCfg::unpack(e.v[2]);
  const DType out_t = e.in.dt1, acc_t = e.in.dt2;
  const Tick now = now_tick();
  if ((acc_t != DType::F32 && acc_t != DType::S32) || out_t == DType::None)
    return raise(e.pc, &e.in, "takes .out.acc types with acc f32 or s32 (e.g. fixp.l0c2gm.f16.f32)"), Span{now, now};
  if (c.m == 0 || c.n == 0) return Span{now, now};
  if (c.dst_stride < c.n) return raise(e.pc, &e.in, "dst_stride is smaller than n"), Span{now, now};
  const std::uint64_t mf = ceil_div(c.m, 16), nf = ceil_div(c.n, 16);
  if (!local_range(kL0C, e.v[1], mf * nf * 1024, e, "source")) return Span{now, now};
  const std::string_view m = e.in.info().mnemonic;
  const bool to_gm = m == "fixp.l0c2gm";
  const Buffer dst = m == "fixp.l0c2ub" ? kUB : kL1;
  const unsigned ob = dtype_bytes(out_t);
  const std::uint64_t row_bytes = std::uint64_t(c.n) * ob;
  if (!to_gm && !local_range(dst, e.v[0], (c.m - 1) * std::uint64_t(c.dst_stride) * ob + row_bytes, e, "destination"))
    return Span{now, now};
  float scale_f;
  const std::uint32_t scale_bits = std::uint32_t(e.v[3]);
  std::memcpy(&scale_f, &scale_bits, 4);
  const bool quant = acc_t == DType::S32 && out_t != DType::S32;
  const bool relu = e.in.mode & mode::kRelu;
  const Round round = Round(e.in.mode & mode::kRoundMask);
  const std::uint8_t* C = buf_[kL0C].data() + e.v[1];
  std::vector<std::uint8_t> row(row_bytes);
  const Clock& clk = cfg_.clock;
  // L0C is read and converted at fixp_bytes_per_cycle; rows then go out through the bus.
  Tick t = now + clk.cycles(cfg_.mte_startup_cycles);
  Tick end = t;
  for (std::uint64_t r = 0; r < c.m; ++r) {
    if (functional_) {
      for (std::uint64_t n = 0; n < c.n; ++n) {
        const std::uint8_t* src = C + ((n / 16) * mf + r / 16) * 1024 + (r % 16) * 64 + (n % 16) * 4;
        double v = num::load(src, acc_t);
        if (quant) v *= double(scale_f);
        if (relu && v < 0) v = 0;
        num::store(row.data() + n * ob, out_t, v, round);
      }
    }
    t += clk.cycles(ceil_div(std::uint64_t(c.n) * 4, cfg_.fixp_bytes_per_cycle));
    if (to_gm) {
      Tick issued = t;
      end = std::max(end, gm_access(true, e.v[0] + r * std::uint64_t(c.dst_stride) * ob, row.data(), row_bytes, t,
                                    cfg_.gm_write_bytes_per_cycle, functional_, e.pc, &e.in, &issued));
      if (stopping_) return Span{now_tick(), now_tick()};
      t = std::max(t, issued);
    } else if (functional_) {
      std::memcpy(buf_[dst].data() + e.v[0] + r * std::uint64_t(c.dst_stride) * ob, row.data(), row_bytes);
    }
  }
  return Span{t, std::max(end, t)};
}

}  // namespace dvp::aicore
