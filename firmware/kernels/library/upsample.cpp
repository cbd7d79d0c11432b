// SPDX-License-Identifier: MIT
#include "upsample.hpp"

#include "aicore/kernel_builder.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

void check_upsample(const AiCoreConfig& cfg, const UpsampleShape& s) {
  if (!s.c || !s.h || !s.w || !s.sh || !s.sw) throw Error("upsample: c, h, w, sh and sw are at least 1");
  if (s.sw > 31)
    throw Error("upsample: sw " + std::to_string(s.sw) + ": a repeat's stride of 8 x sw blocks is up to 255");
  if (s.w / 8 > 255) throw Error("upsample: a row of " + std::to_string(s.w) + " positions is over 255 vector repeats");
  const std::uint64_t row = std::uint64_t(s.w) * 32 * (1 + s.sw);  // a buffer: the row and the widened row
  if (2 * row > cfg.size[kUB] || std::uint64_t(s.w) * s.sw > 65535)
    throw Error("upsample: a row of " + std::to_string(s.w) + " positions widened " + std::to_string(s.sw) +
                " times does not fit half the UB (" + std::to_string(row) + " B) or one copy's 65535 blocks");
}

namespace {

struct Row {
  KernelBuilder& k;
  const UpsampleShape& s;
  Reg X, Y, t, src, dst, in, out, mask, b;

  // Row `unit` (c1 x h + r) through buffer `buf`, whose input part starts at UB `base`.
  void move(Reg unit, int buf, std::int64_t base) {
    const std::int64_t w = s.w, wide = w * s.sw;
    // unit = c1 x h + r: src = X + unit x w x 32; dst = Y + ((c1 x h + r) x sh) x wide x 32.
    k.Li(t, w * 32);
    k.Mul(src, unit, t);
    k.Add(src, src, X);
    k.Li(t, std::int64_t(s.sh) * wide * 32);
    k.Mul(dst, unit, t);
    k.Add(dst, dst, Y);
    k.Li(in, base);
    k.Li(out, base + w * 32);
    k.WaitFlag(Pipe::MTE3, Pipe::MTE2, buf);  // the buffer's last rows are written
    k.DataCopy(Pos::UB, in, Pos::GM, src, DataCopyCfg{1, s.w, 0, 0});
    k.SetFlag(Pipe::MTE2, Pipe::V, buf);
    k.WaitFlag(Pipe::MTE2, Pipe::V, buf);
    widen();
    k.SetFlag(Pipe::V, Pipe::MTE3, buf);
    k.WaitFlag(Pipe::V, Pipe::MTE3, buf);
    for (std::uint32_t i = 0; i < s.sh; ++i) {
      k.DataCopy(Pos::GM, dst, Pos::UB, out, DataCopyCfg{1, std::uint32_t(wide), 0, 0});
      if (i + 1 < s.sh) k.Li(t, wide * 32), k.Add(dst, dst, t);
    }
    k.SetFlag(Pipe::MTE3, Pipe::MTE2, buf);
  }
  // Each of the row's blocks sw times: for offset j, 8 blocks a repeat into every sw-th block
  // from block j (the row's last blocks, under a repeat, with a shorter mask). `src` is free now:
  // the copy in took its value when it was issued.
  void widen() {
    const std::uint32_t full = s.w / 8, tail = s.w % 8;
    const VecCfg spread{full, s.sw, 1, 1, 8 * s.sw, 8, 8};
    for (std::uint32_t j = 0; j < s.sw; ++j) {
      k.Li(t, std::int64_t(j) * 32);
      k.Add(b, out, t);
      if (full) {
        k.Li(mask, 128);
        k.SetMaskCount(mask);
        k.Vector("copy", DType::F16, {b, in}, spread);
      }
      if (!tail) continue;
      k.Li(mask, tail * 16);
      k.SetMaskCount(mask);
      k.Li(t, std::int64_t(full) * 256);
      k.Add(src, in, t);
      k.Li(t, std::int64_t(full) * 256 * s.sw);
      k.Add(b, b, t);
      k.Vector("copy", DType::F16, {b, src}, VecCfg{1, s.sw, 1, 1, 8 * s.sw, 8, 8});
    }
  }
};

}  // namespace

Image upsample_kernel(const AiCoreConfig& cfg, const UpsampleShape& s) {
  check_upsample(cfg, s);
  KernelBuilder k;
  Reg arg = k.reg(), X = k.reg(), Y = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0);
  k.LoadGm(Y, arg, 8);
  Row r{k, s, X, Y, k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg()};
  const std::int64_t half = std::int64_t(cfg.size[kUB] / 2 / 32 * 32);
  k.RoundRobinTwoBuffers(arg, k.Const(std::int64_t(s.c1()) * s.h), k.reg(), k.reg(), k.reg(),
                         [&](Reg unit, int buf) { r.move(unit, buf, buf ? half : 0); });
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
