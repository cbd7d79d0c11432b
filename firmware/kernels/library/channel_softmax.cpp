// SPDX-License-Identifier: MIT
#include "channel_softmax.hpp"

#include <algorithm>

#include "aicore/kernel_builder.hpp"
#include "aicore/numeric.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

namespace {

// UB of a unit of `t` tiles: the input as copied (c1 groups of 16t positions, a block each), the
// same transposed (c1 x t fractals of 16 channels x 16 positions, 512 B), then the max and the
// sum of each position, and each group's part of the sum (16t f16 each, within one repeat).
std::uint64_t unit_ub(const ChannelSoftmaxShape& s, std::uint32_t t) {
  return 2ull * s.c1() * t * 512 + (2ull + s.c1()) * 256;
}

void check_shape(const ChannelSoftmaxShape& s) {
  if (!s.h || !s.w || !s.c) throw Error("softmax_c: h, w and c must be at least 1");
}

// The registers of a unit's code.
struct Regs {
  Reg x, y, gm, ub, row, m, sum, n, t, t2, scale;
};

// Row (channel) ch of the transposed copy, for every tile of the unit: its first block; the
// tiles' blocks are 16 apart (one 512-byte fractal each).
void row_at(KernelBuilder& k, const Regs& r, std::uint64_t b_at, std::uint32_t tiles, std::uint32_t ch) {
  k.Li(r.row, std::int64_t(b_at + (std::uint64_t(ch / 16) * tiles) * 512 + (ch % 16) * 32));
}

// The softmax across the c rows, 16 x tiles positions at once (the mask set): max, then
// exp(x - max) in place and their sum, then each divided by it.
void across_rows(KernelBuilder& k, const ChannelSoftmaxShape& s, const Regs& r, std::uint64_t b_at,
                 std::uint32_t tiles) {
  const VecCfg row_row{1, 16, 16, 16, 8, 8, 8}, acc_row{1, 1, 1, 16, 8, 8, 8}, row_acc{1, 16, 16, 1, 8, 8, 8};
  if (s.scale != 1.0)
    for (std::uint32_t ch = 0; ch < s.c; ++ch) {
      row_at(k, r, b_at, tiles, ch);
      k.Vector("muls", DType::F16, {r.row, r.row, r.scale}, row_row);
    }
  for (std::uint32_t ch = 0; ch < s.c; ++ch) {  // the first row copies (max(v, v) = v)
    row_at(k, r, b_at, tiles, ch);
    if (ch == 0)
      k.Vector("max", DType::F16, {r.m, r.row, r.row}, VecCfg{1, 1, 16, 16, 8, 8, 8});
    else
      k.Vector("max", DType::F16, {r.m, r.m, r.row}, acc_row);
  }
  // The sum in two steps, each group's 16 channels, then the groups' parts: an f16 sum of c
  // terms rounds about c times, this one about 16 + c / 16 (1000 channels: 3% -> under 1%).
  const VecCfg acc_acc{1, 1, 1, 1, 8, 8, 8};
  for (std::uint32_t ch = 0; ch < s.c; ++ch) {
    row_at(k, r, b_at, tiles, ch);
    k.Vector("sub", DType::F16, {r.row, r.row, r.m}, row_acc);
    k.Vector("exp", DType::F16, {r.row, r.row}, row_row);
    k.Addi(r.t2, r.sum, std::int32_t(256 * (1 + ch / 16)));  // this group's part; its first row copies
    if (ch % 16 == 0)
      k.Vector("max", DType::F16, {r.t2, r.row, r.row}, VecCfg{1, 1, 16, 16, 8, 8, 8});
    else
      k.Vector("add", DType::F16, {r.t2, r.t2, r.row}, acc_row);
  }
  k.Vector("dup", DType::F16, {r.sum, KernelBuilder::zero()}, acc_acc);
  for (std::uint32_t g = 0; g < s.c1(); ++g) {
    k.Addi(r.t2, r.sum, std::int32_t(256 * (1 + g)));
    k.Vector("add", DType::F16, {r.sum, r.sum, r.t2}, acc_acc);
  }
  for (std::uint32_t ch = 0; ch < s.c; ++ch) {
    row_at(k, r, b_at, tiles, ch);
    k.Vector("div", DType::F16, {r.row, r.row, r.sum}, row_acc);
  }
}

// One unit: `count` positions (at most 16 x tiles) from position register r.t's GM offset.
// In: a copy per channel group; transposes; the softmax; transposes back; out likewise.
void unit(KernelBuilder& k, const ChannelSoftmaxShape& s, const Regs& r, std::uint32_t tiles, std::uint32_t count) {
  const std::uint64_t p = 16ull * tiles, b_at = std::uint64_t(s.c1()) * p * 32, hw32 = s.positions() * 32;
  const auto copies = [&](bool in) {
    for (std::uint32_t g = 0; g < s.c1(); ++g) {
      k.Li(r.gm, std::int64_t(g * hw32));
      k.Add(r.gm, r.gm, r.t);
      k.Add(r.gm, r.gm, in ? r.x : r.y);
      k.Li(r.ub, std::int64_t(g * p * 32));
      if (in)
        k.DataCopy(Pos::UB, r.ub, Pos::GM, r.gm, DataCopyCfg{1, count, 0, 0});
      else
        k.DataCopy(Pos::GM, r.gm, Pos::UB, r.ub, DataCopyCfg{1, count, 0, 0});
    }
  };
  const auto transposes = [&](bool back) {
    for (std::uint32_t g = 0; g < s.c1(); ++g)
      for (std::uint32_t t = 0; t < tiles; ++t) {
        k.Li(r.ub, std::int64_t((g * p + t * 16) * 32));
        k.Li(r.row, std::int64_t(b_at + (std::uint64_t(g) * tiles + t) * 512));
        if (back)
          k.Transpose16(r.ub, r.row);
        else
          k.Transpose16(r.row, r.ub);
      }
  };
  k.WaitFlag(Pipe::MTE3, Pipe::MTE2, 0);  // the input copy is free
  copies(true);
  k.SetFlag(Pipe::MTE2, Pipe::V, 0);
  k.WaitFlag(Pipe::MTE2, Pipe::V, 0);
  transposes(false);
  across_rows(k, s, r, b_at, tiles);
  transposes(true);
  k.SetFlag(Pipe::V, Pipe::MTE3, 0);
  k.WaitFlag(Pipe::V, Pipe::MTE3, 0);
  copies(false);
  k.SetFlag(Pipe::MTE3, Pipe::MTE2, 0);
}

}  // namespace

std::uint32_t channel_softmax_tiles(const AiCoreConfig& cfg, const ChannelSoftmaxShape& s) {
  check_shape(s);
  std::uint32_t t = 8;
  while (t > 1 && (unit_ub(s, t) > cfg.size[kUB] || 16ull * (t / 2) >= s.positions())) t /= 2;
  if (unit_ub(s, t) > cfg.size[kUB])
    throw Error("softmax_c: " + std::to_string(s.c) + " channels of 16 positions (" + std::to_string(unit_ub(s, 1)) +
                " B, with their transposed copy) do not fit the UB (" + std::to_string(cfg.size[kUB]) + " B)");
  return t;
}

// Units of 16 x tiles positions go round-robin to the blocks; the last unit (fewer positions
// when they do not divide) has code of its own. Single-buffered: a unit's copies, transposes
// and vector work follow each other.
Image channel_softmax_kernel(const AiCoreConfig& cfg, const ChannelSoftmaxShape& s) {
  const std::uint32_t tiles = channel_softmax_tiles(cfg, s);
  const std::uint64_t p = 16ull * tiles, units = (s.positions() + p - 1) / p;
  const std::uint32_t last = std::uint32_t(s.positions() - (units - 1) * p);
  KernelBuilder k;
  Reg arg = k.reg();
  Regs r{k.reg(),
         k.reg(),
         k.reg(),
         k.reg(),
         k.reg(),
         k.Const(std::int64_t(2 * s.c1() * tiles * 512)),
         k.reg(),
         k.reg(),
         k.reg(),
         k.reg(),
         k.Const(std::int64_t(num::bits(s.scale, DType::F16)))};
  k.Li(r.sum, std::int64_t(2 * s.c1() * tiles * 512 + 256));
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(r.x, arg, 0);
  k.LoadGm(r.y, arg, 8);
  Reg u = k.reg(), dim = k.reg(), nunits = k.Const(std::int64_t(units)), tail = k.Const(std::int64_t(units - 1));
  k.GetSpr(u, Spr::BlockId);
  k.GetSpr(dim, Spr::BlockDim);
  k.Li(r.n, std::int64_t(16 * tiles));
  k.SetMaskCount(r.n);                   // a position's 16 lanes, a tile's 16 positions: 16 x tiles
  k.SetFlag(Pipe::MTE3, Pipe::MTE2, 0);  // the input copy is free
  k.RoundRobin(u, nunits, dim, [&] {
    k.Li(r.t, std::int64_t(p * 32));
    k.Mul(r.t, u, r.t);                                // the unit's first position, as a GM byte offset within a group
    if (last == p) return unit(k, s, r, tiles, last);  // every unit whole: one body
    Label other = k.NewLabel(), done = k.NewLabel();
    k.Branch("bne", u, tail, other);
    unit(k, s, r, tiles, last);
    k.Jump(done);
    k.Bind(other);
    unit(k, s, r, tiles, std::uint32_t(p));
    k.Bind(done);
  });
  k.WaitFlag(Pipe::MTE3, Pipe::MTE2, 0);
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
