// SPDX-License-Identifier: MIT
#include "pool.hpp"

#include "aicore/kernel_builder.hpp"
#include "aicore/numeric.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

Image pool_kernel(const AiCoreConfig& cfg, const PoolShape& s) {
  if (s.mode != "max" && s.mode != "avg") throw Error("pool: mode max or avg");
  if (s.c == 0 || s.c % 16) throw Error("pool: c must be a positive multiple of 16");
  if (!s.kh || !s.kw || !s.stride_h || !s.stride_w || s.kh > s.h || s.kw > s.w)
    throw Error("pool: the window must fit the input and strides be at least 1");
  if (s.stride_w > 255 / 8) throw Error("pool: stride_w above 31 does not fit a repeat stride");
  const std::uint64_t plane = std::uint64_t(s.h) * s.w * 32, out_plane = std::uint64_t(s.ho()) * s.wo() * 32;
  const std::uint64_t out_ub = (plane + 31) / 32 * 32;
  if (out_ub + out_plane > cfg.size[kUB]) throw Error("pool: an input and an output plane do not fit the UB");
  if (plane / 32 > 65535 || out_plane / 32 > 65535) throw Error("pool: a plane is too large for one DataCopy");
  const std::uint32_t groups = s.c / 16, full = s.wo() / 8, tail = s.wo() % 8;
  const std::uint16_t scale = num::to_f16(1.0 / (s.kh * s.kw));

  KernelBuilder k;
  Reg arg = k.reg(), X = k.reg(), Y = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0);
  k.LoadGm(Y, arg, 8);
  Reg g = k.reg(), dim = k.reg(), ngroups = k.Const(groups), gm = k.reg(), tmp = k.reg(), ub_in = k.Const(0),
      ub_out = k.Const(std::int64_t(out_ub)), d = k.reg(), src = k.reg(), n = k.reg(), sc = k.Const(scale);
  k.GetSpr(g, Spr::BlockId);
  k.GetSpr(dim, Spr::BlockDim);
  k.SetFlag(Pipe::MTE3, Pipe::MTE2, 0);  // the UB is free
  k.RoundRobin(g, ngroups, dim, [&] {
    k.WaitFlag(Pipe::MTE3, Pipe::MTE2, 0);
    k.Li(tmp, std::int64_t(plane));
    k.Mul(gm, g, tmp);
    k.Add(gm, gm, X);
    k.DataCopy(Pos::UB, ub_in, Pos::GM, gm, DataCopyCfg{1, std::uint32_t(plane / 32), 0, 0});
    k.SetFlag(Pipe::MTE2, Pipe::V, 0);
    k.WaitFlag(Pipe::MTE2, Pipe::V, 0);
    // Each output row: `full` repeats of 8 positions, then a masked repeat for the rest.
    for (std::uint32_t oh = 0; oh < s.ho(); ++oh) {
      for (int part = 0; part < 2; ++part) {
        const std::uint32_t reps = part == 0 ? full : (tail ? 1 : 0);
        if (!reps) continue;
        const std::uint32_t first_wo = part == 0 ? 0 : full * 8;
        k.Li(n, part == 0 ? 128 : std::int64_t(tail) * 16);
        k.SetMaskCount(n);
        const VecCfg cfg_w{reps, 1, 1, s.stride_w, 8, 8, 8 * s.stride_w};
        k.Li(d, std::int64_t(out_ub + (std::uint64_t(oh) * s.wo() + first_wo) * 32));
        for (std::uint32_t i = 0; i < s.kh; ++i)
          for (std::uint32_t j = 0; j < s.kw; ++j) {
            const std::uint64_t at =
                ((std::uint64_t(oh) * s.stride_h + i) * s.w + std::uint64_t(first_wo) * s.stride_w + j) * 32;
            k.Li(src, std::int64_t(at));
            const bool first = i == 0 && j == 0;
            // The first offset copies (max(v, v) = v); the others accumulate.
            if (first)
              k.Vector("max", DType::F16, {d, src, src},
                       VecCfg{reps, 1, s.stride_w, s.stride_w, 8, 8 * s.stride_w, 8 * s.stride_w});
            else
              k.Vector(s.mode == "max" ? "max" : "add", DType::F16, {d, d, src}, cfg_w);
          }
        if (s.mode == "avg") k.Vector("muls", DType::F16, {d, d, sc}, VecCfg{reps, 1, 1, 1, 8, 8, 8});
      }
    }
    k.SetFlag(Pipe::V, Pipe::MTE3, 0);
    k.WaitFlag(Pipe::V, Pipe::MTE3, 0);
    k.Li(tmp, std::int64_t(out_plane));
    k.Mul(gm, g, tmp);
    k.Add(gm, gm, Y);
    k.DataCopy(Pos::GM, gm, Pos::UB, ub_out, DataCopyCfg{1, std::uint32_t(out_plane / 32), 0, 0});
    k.SetFlag(Pipe::MTE3, Pipe::MTE2, 0);
  });
  k.WaitFlag(Pipe::MTE3, Pipe::MTE2, 0);
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
