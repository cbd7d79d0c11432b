// SPDX-License-Identifier: MIT
#include "layernorm.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "aicore/kernel_builder.hpp"
#include "aicore/numeric.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

namespace {

// A row in the UB: `full` repeats of 256 bytes and a tail of `tail` elements under a mask. The
// UB holds x at 0, (x - mean)^2 at `sq`, gamma, beta, then the reductions (r, and r2 for a
// later chunk's or the tail's, combined into r).
struct Row {
  KernelBuilder& k;
  DType t;
  std::uint32_t full, tail;
  Reg n, m, v;      // per repeat (the mask between ops), scratch for masks, a scalar operand
  Reg x, sq, g, b;  // UB addresses
  Reg r, r2;
  Reg at[3];  // operand addresses of a later chunk, or of the tail

  void mask(std::uint32_t count) {
    k.Li(m, count);
    k.SetMaskCount(m);
  }
  // Operands moved on by `bytes` (the scalar operand, index `scalar`, is a value: it stays).
  std::vector<Reg> moved(const std::vector<Reg>& ops, std::uint32_t bytes, int scalar) {
    std::vector<Reg> o = ops;
    for (std::size_t i = 0; i < o.size() && bytes; ++i)
      if (int(i) != scalar) k.Addi(at[i], ops[i], std::int32_t(bytes)), o[i] = at[i];
    return o;
  }
  // op over the row: the full repeats in chunks of at most 255 (a repeat count is 8 bits), then
  // the tail.
  void each(const char* op, const std::vector<Reg>& ops, int scalar = -1) {
    for (std::uint32_t r0 = 0; r0 < full; r0 += 255)
      k.Vector(op, t, moved(ops, r0 * 256, scalar), VecCfg{std::min<std::uint32_t>(255, full - r0), 1, 1, 1, 8, 8, 8});
    if (!tail) return;
    mask(tail);
    k.Vector(op, t, moved(ops, full * 256, scalar), VecCfg{1, 1, 1, 1, 8, 8, 8});
    k.SetMaskCount(n);
  }
  // op on the one element at r (its result there).
  void one(const char* op, const std::vector<Reg>& ops) {
    mask(1);
    k.Vector(op, t, ops, VecCfg{1, 1, 1, 1, 8, 8, 8});
    k.SetMaskCount(n);
  }
  // r = the sum of the row at `src`: the first chunk's into r, each later chunk's and the
  // tail's into r2, added to r.
  void sum(Reg src) {
    bool first = true;
    for (std::uint32_t r0 = 0; r0 < full; r0 += 255, first = false) {
      k.Vector("redsum", t, {first ? r : r2, moved({src}, r0 * 256, -1)[0]},
               VecCfg{std::min<std::uint32_t>(255, full - r0), 1, 1, 1, 8, 8, 8});
      if (!first) one("add", {r, r, r2});
    }
    if (!tail) return;
    mask(tail);
    k.Vector("redsum", t, {first ? r : r2, moved({src}, full * 256, -1)[0]}, VecCfg{1, 1, 1, 1, 8, 8, 8});
    k.SetMaskCount(n);
    if (!first) one("add", {r, r, r2});
  }
  // The scalar unit reads the element at r into v, once the vector unit has written it.
  void read() {
    k.SetFlag(Pipe::V, Pipe::S, 0);
    k.WaitFlag(Pipe::V, Pipe::S, 0);
    k.LoadUb(v, r, 0);
  }
};

// The row at x normalized in place: the mean subtracted, the variance's 1 / sqrt(var + eps)
// multiplied, then gamma and beta (one rounding to the element type per operation, as the
// vector unit rounds). The sums are of x / n and of ((x - mean) / sqrt(n))^2, the mean and the
// variance themselves: a sum of x or of its squares would overflow f16 (65504) on a row of
// 1024 values of 8.
void normalize(Row& w, const LayerNormShape& s) {
  KernelBuilder& k = w.k;
  const Reg inv_n = k.Const(std::int64_t(num::bits(1.0 / s.cols, s.dtype))),
            inv_sqrt_n = k.Const(std::int64_t(num::bits(1.0 / std::sqrt(double(s.cols)), s.dtype))),
            eps = k.Const(std::int64_t(num::bits(s.epsilon, s.dtype)));
  w.each("muls", {w.sq, w.x, inv_n}, 2);
  w.sum(w.sq);  // the mean
  w.read();
  k.OpI("xori", w.v, w.v, std::int32_t(s.dtype == DType::F16 ? 0x8000u : 0x80000000u));  // negated, added
  w.each("adds", {w.x, w.x, w.v}, 2);
  w.each("muls", {w.sq, w.x, inv_sqrt_n}, 2);
  w.each("mul", {w.sq, w.sq, w.sq});
  w.sum(w.sq);  // the variance
  w.one("adds", {w.r, w.r, eps});
  w.one("rsqrt", {w.r, w.r});
  w.read();
  w.each("muls", {w.x, w.x, w.v}, 2);
  w.each("mul", {w.x, w.x, w.g});
  w.each("add", {w.x, w.x, w.b});
  k.release(inv_n);
  k.release(inv_sqrt_n);
  k.release(eps);
}

}  // namespace

Image layernorm_kernel(const AiCoreConfig& cfg, const LayerNormShape& s) {
  if (s.dtype != DType::F32 && s.dtype != DType::F16) throw Error("layernorm: dtype f32 or f16");
  if (s.rows == 0 || s.cols == 0) throw Error("layernorm: rows and cols must be at least 1");
  const unsigned eb = dtype_bytes(s.dtype);
  const std::uint64_t row = std::uint64_t(s.cols) * eb;
  if (row % 32)
    throw Error("layernorm: a row of " + std::to_string(s.cols) +
                " elements is not whole 32-byte blocks (cols a "
                "multiple of " +
                std::to_string(32 / eb) + ")");
  if (4 * row + 64 > cfg.size[kUB])
    throw Error("layernorm: a row of " + std::to_string(row) + " B does not fit the UB (" +
                std::to_string(cfg.size[kUB]) + " B) four times (x, its squares, gamma, beta)");
  if (row / 32 > 65535)
    throw Error("layernorm: a row of " + std::to_string(row) + " B is more than one copy's 65535 blocks");
  const std::uint32_t per_repeat = 256 / eb, blocks = std::uint32_t(row / 32);
  KernelBuilder k;
  Reg arg = k.reg(), X = k.reg(), G = k.reg(), B = k.reg(), Y = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0), k.LoadGm(G, arg, 8), k.LoadGm(B, arg, 16), k.LoadGm(Y, arg, 24);
  Row w{k,
        s.dtype,
        s.cols / per_repeat,
        s.cols % per_repeat,
        k.Const(per_repeat),
        k.reg(),
        k.reg(),
        KernelBuilder::zero(),
        k.Const(std::int64_t(row)),
        k.Const(std::int64_t(2 * row)),
        k.Const(std::int64_t(3 * row)),
        k.Const(std::int64_t(4 * row)),
        k.Const(std::int64_t(4 * row + 32)),
        {k.reg(), k.reg(), k.reg()}};
  k.SetMaskCount(w.n);
  // gamma and beta once; the first row's MTE2 -> V flag covers them (MTE2 runs in order).
  k.DataCopy(Pos::UB, w.g, Pos::GM, G, DataCopyCfg{1, blocks, 0, 0});
  k.DataCopy(Pos::UB, w.b, Pos::GM, B, DataCopyCfg{1, blocks, 0, 0});
  Reg item = arg, dim = k.reg(), rows = k.Const(s.rows), off = k.reg(), gm = k.reg(), rb = k.Const(std::int64_t(row));
  k.GetSpr(item, Spr::BlockId);
  k.GetSpr(dim, Spr::BlockDim);
  k.SetFlag(Pipe::MTE3, Pipe::MTE2, 0);  // the UB row is free
  k.RoundRobin(item, rows, dim, [&] {
    k.Mul(off, item, rb);
    k.Add(gm, X, off);
    k.WaitFlag(Pipe::MTE3, Pipe::MTE2, 0);  // the last row is written
    k.DataCopy(Pos::UB, w.x, Pos::GM, gm, DataCopyCfg{1, blocks, 0, 0});
    k.SetFlag(Pipe::MTE2, Pipe::V, 0);
    k.WaitFlag(Pipe::MTE2, Pipe::V, 0);
    normalize(w, s);
    k.SetFlag(Pipe::V, Pipe::MTE3, 0);
    k.WaitFlag(Pipe::V, Pipe::MTE3, 0);
    k.Add(gm, Y, off);
    k.DataCopy(Pos::GM, gm, Pos::UB, w.x, DataCopyCfg{1, blocks, 0, 0});
    k.SetFlag(Pipe::MTE3, Pipe::MTE2, 0);
  });
  k.WaitFlag(Pipe::MTE3, Pipe::MTE2, 0);
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
