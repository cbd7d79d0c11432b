// SPDX-License-Identifier: MIT
#include "fixpipe.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "fractal.hpp"
#include "numeric.hpp"

namespace dvp::aicore {

Span FixPipe::fixp(const Issued& e) {
  const FixpCfg c = FixpCfg::unpack(e.v[2]);
  const DType out_t = e.in.dt1, acc_t = e.in.dt2;
  const Tick now = now_tick();
  if ((acc_t != DType::F32 && acc_t != DType::S32) || out_t == DType::None)
    return core_.fault(e, "takes .out.acc types with acc f32 or s32 (e.g. fixp.l0c2gm.f16.f32)"), Span::at(now);
  if (c.m == 0 || c.n == 0) return Span::at(now);
  if (c.dst_stride < c.n) return core_.fault(e, "dst_stride is smaller than n"), Span::at(now);
  const std::uint64_t mf = c.src_fractals ? c.src_fractals : ceil_div(c.m, 16), nf = ceil_div(c.n, 16);
  if (mf * 16 < c.m)
    return core_.fault(e, "src_fractals " + std::to_string(c.src_fractals) +
                              " holds fewer than m = " + std::to_string(c.m) + " rows"),
           Span::at(now);
  if (!core_.local_range(kL0C, e.v[1], mf * nf * 1024, e, "source")) return Span::at(now);
  const Buffer dst = e.in.info().dst;
  const bool to_gm = dst == kGm;
  const unsigned ob = dtype_bytes(out_t);
  const std::uint64_t row_bytes = std::uint64_t(c.n) * ob, row_step = std::uint64_t(c.dst_stride) * ob;
  if (!to_gm && !core_.local_range(dst, e.v[0], (c.m - 1) * row_step + row_bytes, e, "destination"))
    return Span::at(now);
  const AiCoreConfig& cfg = core_.config();
  const bool functional = core_.functional();
  std::vector<std::uint8_t> row(row_bytes);
  GmTransfer x{true, 0, row.data(), row_bytes, 0, cfg.gm_write_bytes_per_cycle, functional, e.pc, &e.in};
  // L0C is read and converted at fixp_bytes_per_cycle; rows then go out through the bus.
  Tick t = now + cfg.clock.cycles(cfg.mte_startup_cycles);
  Tick end = t;
  for (std::uint64_t r = 0; r < c.m; ++r) {
    if (functional) convert_row(e, r, row.data());
    t += cfg.clock.cycles(ceil_div(std::uint64_t(c.n) * 4, cfg.fixp_bytes_per_cycle));
    if (to_gm) {
      x.addr = e.v[0] + r * row_step;
      x.start = t;
      const GmTiming g = core_.gm_access(x);
      if (core_.stopping()) return Span::at(now_tick());
      end = std::max(end, g.done);
      t = std::max(t, g.issued);
    } else if (functional) {
      std::memcpy(core_.buffer(dst) + e.v[0] + r * row_step, row.data(), row_bytes);
    }
  }
  return Span{t, std::max(end, t)};
}

void FixPipe::convert_row(const Issued& e, std::uint64_t r, std::uint8_t* row) const {
  const FixpCfg c = FixpCfg::unpack(e.v[2]);
  const DType out_t = e.in.dt1, acc_t = e.in.dt2;
  const unsigned ob = dtype_bytes(out_t);
  float scale;
  const std::uint32_t scale_bits = std::uint32_t(e.v[3]);
  std::memcpy(&scale, &scale_bits, 4);
  const bool quant = acc_t == DType::S32 && out_t != DType::S32;  // int32 to another type: dequantise
  const bool relu = e.in.mode & mode::kRelu;
  const Round round = Round(e.in.mode & mode::kRoundMask);
  const std::uint64_t mf = c.src_fractals ? c.src_fractals : ceil_div(c.m, 16);
  const std::uint8_t* C = core_.l0c_settled(e.v[1], mf * ceil_div(c.n, 16) * 1024) + e.v[1];
  // A fractal row's 16 elements are contiguous in L0C: each is decoded and rounded with its type
  // chosen once (load_n / store_n), not element by element; directed rounding stays per element.
  const bool nearest = round == Round::Rint || round == Round::None;
  double v[16];
  for (std::uint64_t n0 = 0; n0 < c.n; n0 += 16) {
    const std::uint64_t cnt = std::min<std::uint64_t>(16, c.n - n0);
    num::load_n(C + l0c_offset(r, n0, mf), acc_t, cnt, v);
    for (std::uint64_t i = 0; i < cnt; ++i) {
      if (quant) v[i] *= double(scale);
      if (relu && v[i] < 0) v[i] = 0;
    }
    if (nearest)
      num::store_n(row + n0 * ob, out_t, v, cnt);
    else
      for (std::uint64_t i = 0; i < cnt; ++i) num::store(row + (n0 + i) * ob, out_t, v[i], round);
  }
}

}  // namespace dvp::aicore
