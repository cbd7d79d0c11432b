// SPDX-License-Identifier: MIT
#include "channel_mul.hpp"

#include <algorithm>

#include "aicore/kernel_builder.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

std::uint32_t channel_mul_band(const AiCoreConfig& cfg, const ChannelMulShape& s) {
  if (!s.c || !s.h || !s.w) throw Error("channel_mul: c, h and w are at least 1");
  // Half the UB: the gate's block, then the band (32 bytes a position).
  const std::uint64_t fit = (cfg.size[kUB] / 2 - 32) / 32 / 8 * 8;
  if (fit < 8) throw Error("channel_mul: half the UB holds no 8 positions");
  return std::uint32_t(std::min<std::uint64_t>({fit, 255 * 8, (s.positions() + 7) / 8 * 8}));
}

std::uint64_t channel_mul_units(const AiCoreConfig& cfg, const ChannelMulShape& s) {
  const std::uint32_t band = channel_mul_band(cfg, s);
  return std::uint64_t(s.c1()) * ((s.positions() + band - 1) / band);
}

namespace {

struct Band {
  KernelBuilder& k;
  const ChannelMulShape& s;
  std::uint32_t band, per_group;  // positions a unit; units a channel group
  Reg X, G, Y, t, group, first, src, gate, ub_g, ub_x, mask;

  // Unit `unit` (group x per_group + j) through buffer `buf`, whose half of the UB starts at `base`.
  void move(Reg unit, int buf, std::int64_t base) {
    const std::uint64_t tail = s.positions() - std::uint64_t(per_group - 1) * band;
    k.Li(t, per_group);
    k.Op("divu", group, unit, t);
    k.Op("rem", first, unit, t);
    k.Li(t, std::int64_t(band) * 32);
    k.Mul(first, first, t);  // the band's byte offset in its group
    k.Li(t, std::int64_t(s.positions()) * 32);
    k.Mul(src, group, t);
    k.Add(src, src, first);  // the band's offset in the map
    k.Li(t, 32);
    k.Mul(gate, group, t);
    k.Add(gate, gate, G);
    k.Li(ub_g, base);
    k.Li(ub_x, base + 32);
    k.WaitFlag(Pipe::MTE3, Pipe::MTE2, buf);
    k.DataCopy(Pos::UB, ub_g, Pos::GM, gate, DataCopyCfg{1, 1, 0, 0});
    if (tail == band) return whole(buf, band);
    Label last = k.NewLabel(), done = k.NewLabel();
    k.Li(t, std::int64_t(per_group - 1) * band * 32);
    k.Branch("beq", first, t, last);
    whole(buf, band);
    k.Jump(done);
    k.Bind(last);
    whole(buf, std::uint32_t(tail));
    k.Bind(done);
  }
  // `n` positions from src: in, times the gate block, out.
  void whole(int buf, std::uint32_t n) {
    k.Add(t, X, src);
    k.DataCopy(Pos::UB, ub_x, Pos::GM, t, DataCopyCfg{1, n, 0, 0});
    k.SetFlag(Pipe::MTE2, Pipe::V, buf);
    k.WaitFlag(Pipe::MTE2, Pipe::V, buf);
    const std::uint32_t full = n / 8, rest = n % 8;
    if (full) {
      k.Li(mask, 128);
      k.SetMaskCount(mask);
      k.Vector("mul", DType::F16, {ub_x, ub_x, ub_g}, VecCfg{full, 1, 1, 0, 8, 8, 0});
    }
    if (rest) {
      k.Li(mask, rest * 16);
      k.SetMaskCount(mask);
      k.Li(t, std::int64_t(full) * 256);
      k.Add(t, t, ub_x);
      k.Vector("mul", DType::F16, {t, t, ub_g}, VecCfg{1, 1, 1, 0, 8, 8, 0});
    }
    k.SetFlag(Pipe::V, Pipe::MTE3, buf);
    k.WaitFlag(Pipe::V, Pipe::MTE3, buf);
    k.Add(t, Y, src);
    k.DataCopy(Pos::GM, t, Pos::UB, ub_x, DataCopyCfg{1, n, 0, 0});
    k.SetFlag(Pipe::MTE3, Pipe::MTE2, buf);
  }
};

}  // namespace

Image channel_mul_kernel(const AiCoreConfig& cfg, const ChannelMulShape& s) {
  const std::uint32_t band = channel_mul_band(cfg, s);
  KernelBuilder k;
  Reg arg = k.reg(), X = k.reg(), G = k.reg(), Y = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0);
  k.LoadGm(G, arg, 8);
  k.LoadGm(Y, arg, 16);
  const auto per_group = std::uint32_t((s.positions() + band - 1) / band);
  Band b{k, s, band, per_group, X, G, Y, k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg()};
  const std::int64_t half = std::int64_t(cfg.size[kUB] / 2 / 32 * 32);
  k.RoundRobinTwoBuffers(arg, k.Const(std::int64_t(channel_mul_units(cfg, s))), k.reg(), k.reg(), k.reg(),
                         [&](Reg unit, int buf) { b.move(unit, buf, buf ? half : 0); });
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
