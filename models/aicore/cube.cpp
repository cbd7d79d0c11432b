// SPDX-License-Identifier: MIT
#include "cube.hpp"

#include <cblas.h>

#include <cstring>

#include "fractal.hpp"
#include "numeric.hpp"

namespace dvp::aicore {

CubeUnit::CubeUnit(CoreServices& core) : core_(core) {
  // The cube's arithmetic runs inside a SystemC thread: BLAS threads would only compete with
  // the simulator for the host's cores.
  static const bool one_thread = (openblas_set_num_threads(1), true);
  (void)one_thread;
}

// One mmad's operands in L0A / L0B / L0C and its shape in fractals.
struct CubeUnit::Job {
  const std::uint8_t *A, *B;
  std::uint8_t* C;
  MmadCfg c;
  DType in_t;
  unsigned ib, k0;
  std::uint64_t mf, kf, nf;
  // Element addresses in the fractal layouts (fractal.hpp).
  const std::uint8_t* a_at(std::uint64_t r, std::uint64_t k) const {
    return A + ((r / 16) * kf + k / k0) * 512 + (r % 16) * 32 + (k % k0) * ib;
  }
  const std::uint8_t* b_at(std::uint64_t k, std::uint64_t n) const {
    return B + ((n / 16) * kf + k / k0) * 512 + (n % 16) * 32 + (k % k0) * ib;
  }
  std::uint8_t* c_at(std::uint64_t r, std::uint64_t n) const { return C + l0c_offset(r, n, mf); }
};

Span CubeUnit::mmad(const Issued& e) {
  const MmadCfg c = MmadCfg::unpack(e.v[3]);
  const DType acc_t = e.in.dt1, in_t = e.in.dt2;
  const AiCoreConfig& cfg = core_.config();
  const Tick now = now_tick();
  const bool ok = (acc_t == DType::F32 && (in_t == DType::F16 || in_t == DType::BF16 || in_t == DType::F32)) ||
                  (acc_t == DType::S32 && in_t == DType::S8);
  if (!ok) return core_.fault(e, "unsupported type pair (f32.f16, f32.bf16, f32.f32, s32.s8)"), Span::at(now);
  if (c.m == 0 || c.k == 0 || c.n == 0) return Span::at(now + cfg.clock.cycles(cfg.cube_startup_cycles));
  const unsigned ib = dtype_bytes(in_t), k0 = k0_of(in_t);
  const std::uint64_t mf = ceil_div(c.m, 16), kf = ceil_div(c.k, k0), nf = ceil_div(c.n, 16);
  if (!core_.local_range(kL0A, e.v[1], mf * kf * 512, e, "A") ||
      !core_.local_range(kL0B, e.v[2], nf * kf * 512, e, "B") ||
      !core_.local_range(kL0C, e.v[0], mf * nf * 1024, e, "C"))
    return Span::at(now);
  if (core_.functional()) {
    const Job j{core_.buffer(kL0A) + e.v[1],
                core_.buffer(kL0B) + e.v[2],
                core_.buffer(kL0C) + e.v[0],
                c,
                in_t,
                ib,
                k0,
                mf,
                kf,
                nf};
    if (acc_t == DType::S32)
      mmad_int8(j);
    else
      mmad_float(j);
  }
  (acc_t == DType::S32 ? int_ops_ : flops_) += 2.0 * double(c.m) * double(c.k) * double(c.n);
  return Span::at(now + cfg.clock.cycles(cfg.cube_startup_cycles + steps(mf, kf, nf) * cfg.cube_cycles_per_step));
}

void CubeUnit::mmad_int8(const Job& j) {
  const MmadCfg& c = j.c;
  for (std::uint64_t r = 0; r < c.m; ++r)
    for (std::uint64_t n = 0; n < c.n; ++n) {
      std::int64_t s = 0;
      for (std::uint64_t k = 0; k < c.k; ++k)
        s += std::int64_t(std::int8_t(*j.a_at(r, k))) * std::int8_t(*j.b_at(k, n));
      std::int32_t cur = 0;
      if (!c.init) std::memcpy(&cur, j.c_at(r, n), 4);
      const std::int32_t v = std::int32_t(std::uint32_t(cur) + std::uint32_t(s));  // wraps like the hardware
      std::memcpy(j.c_at(r, n), &v, 4);
    }
}

void CubeUnit::mmad_float(const Job& j) {
  // Products of two fp16/bf16 values are exact in a double, and so are the sums up to the k of
  // one mmad; the result is added to L0C and rounded once to f32. The operands are decoded
  // once, not once per multiply.
  const MmadCfg& c = j.c;
  std::vector<double> a(std::size_t(c.m) * c.k), bt(std::size_t(c.n) * c.k);
  // 16-bit inputs decode by table; a fractal row holds k0 consecutive elements of k.
  const double* table = j.in_t == DType::F16 ? num::f16_table() : j.in_t == DType::BF16 ? num::bf16_table() : nullptr;
  auto decode = [&](const std::uint8_t* p) {
    if (!table) return num::load(p, j.in_t);
    std::uint16_t b;
    std::memcpy(&b, p, 2);
    return table[b];
  };
  // A (rows m) and B (columns n) share one fractal layout; unpack each row of k by walking its
  // fractals, k0 contiguous elements at a time.
  auto unpack = [&](const std::uint8_t* base, std::uint64_t rows, std::vector<double>& out) {
    for (std::uint64_t r = 0; r < rows; ++r) {
      const std::uint8_t* row = base + (r / 16) * j.kf * 512 + (r % 16) * 32;
      double* o = out.data() + r * c.k;
      for (std::uint64_t k = 0; k < c.k; k += j.k0, row += 512)
        for (std::uint64_t i = 0; i < j.k0 && k + i < c.k; ++i) o[k + i] = decode(row + i * j.ib);
    }
  };
  unpack(j.A, c.m, a);
  unpack(j.B, c.n, bt);
  // The dot products in double precision by BLAS (exact products; sums in double).
  std::vector<double> prod(std::size_t(c.m) * c.n);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(c.m), int(c.n), int(c.k), 1.0, a.data(), int(c.k), bt.data(),
              int(c.k), 0.0, prod.data(), int(c.n));
  accumulate_l0c(j, prod);
}

void CubeUnit::accumulate_l0c(const Job& j, const std::vector<double>& prod) {
  // Into L0C fractal by fractal (its own order), rounding once to f32 (host nearest-even, NaN
  // canonical, as num::to_f32).
  const MmadCfg& c = j.c;
  for (std::uint64_t nj = 0; nj < j.nf; ++nj)
    for (std::uint64_t mi = 0; mi < j.mf; ++mi) {
      std::uint8_t* frac = j.C + (nj * j.mf + mi) * 1024;
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

// The cube's steps for an mmad of mf x kf x nf fractals: each step multiplies cube_m rows by
// cube_n columns over cube_k fp16 elements of k (twice as many int8, half as many f32, the same
// 32 bytes). Partial fractals are padded in L0, so the cube works on whole fractals: the
// 16 x 16 x 16 cube of the 310 / 910 takes one step per fractal triple.
std::uint64_t CubeUnit::steps(std::uint64_t mf, std::uint64_t kf, std::uint64_t nf) const {
  // kf * k0 elements of k, cube_k * k0 / 16 per step: kf * 16 / cube_k steps for every type.
  const AiCoreConfig& cfg = core_.config();
  return ceil_div(mf * 16, cfg.cube_m) * ceil_div(kf * 16, cfg.cube_k) * ceil_div(nf * 16, cfg.cube_n);
}

}  // namespace dvp::aicore
