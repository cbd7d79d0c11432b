// SPDX-License-Identifier: MIT
#include "softmax.hpp"

#include "aicore/kernel_builder.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

namespace {

// A row is `full` repeats of per_repeat elements and a `tail`, one more repeat under a mask.
// UB: x / exp at 0, the broadcast sum at row_bytes, reductions at 2 x row_bytes (the tail's 32
// bytes after).
struct Row {
  KernelBuilder& k;
  DType t;
  std::uint32_t full, tail;
  Reg n, m;  // per_repeat (the mask between ops), scratch for other masks
  Reg ub_x, ub_s, ub_r, ub_xt, ub_st, ub_r2, v;

  void mask(std::uint32_t count) {
    k.Li(m, count);
    k.SetMaskCount(m);
  }
  // An op over the row: the full repeats from the operands `at`, then the tail from `tail_ops`.
  void each(const char* op, const std::vector<Reg>& at, const std::vector<Reg>& tail_ops) {
    if (full) k.Vector(op, t, at, VecCfg{full, 1, 1, 1, 8, 8, 8});
    if (!tail) return;
    mask(tail);
    k.Vector(op, t, tail_ops, VecCfg{1, 1, 1, 1, 8, 8, 8});
    k.SetMaskCount(n);
  }
  // A reduction of the row into ub_r: of the full repeats, of the tail (into ub_r2), then of
  // the two (`combine` on one element); the scalar unit reads it into v after `event`.
  void reduce(const char* op, const char* combine, int event) {
    if (full) k.Vector(op, t, {ub_r, ub_x}, VecCfg{full, 1, 1, 1, 8, 8, 8});
    if (tail) {
      mask(tail);
      k.Vector(op, t, {full ? ub_r2 : ub_r, ub_xt}, VecCfg{1, 1, 1, 1, 8, 8, 8});
      if (full) {
        mask(1);
        k.Vector(combine, t, {ub_r, ub_r, ub_r2}, VecCfg{1, 1, 1, 1, 8, 8, 8});
      }
      k.SetMaskCount(n);
    }
    k.SetFlag(Pipe::V, Pipe::S, event);
    k.WaitFlag(Pipe::V, Pipe::S, event);
    k.LoadUb(v, ub_r, 0);  // the result's bits, in the low element width
  }
  // exp(x - max) / sum of it, in place at ub_x.
  void softmax(std::uint64_t sign) {
    reduce("redmax", "max", 0);
    k.OpI("xori", v, v, std::int32_t(sign));  // the max negated, added
    each("adds", {ub_x, ub_x, v}, {ub_xt, ub_xt, v});
    each("exp", {ub_x, ub_x}, {ub_xt, ub_xt});
    reduce("redsum", "add", 1);  // the sum, broadcast over a row, divides
    each("dup", {ub_s, v}, {ub_st, v});
    each("div", {ub_x, ub_x, ub_s}, {ub_xt, ub_xt, ub_st});
  }
};

}  // namespace

Image softmax_kernel(const AiCoreConfig& cfg, const SoftmaxShape& s) {
  if (s.dtype != DType::F32 && s.dtype != DType::F16) throw Error("softmax: dtype f32 or f16");
  const unsigned eb = dtype_bytes(s.dtype);
  const std::uint32_t per_repeat = 256 / eb, full = s.cols / per_repeat, tail = s.cols % per_repeat;
  if (s.rows == 0 || s.cols == 0 || std::uint64_t(s.cols) * eb % 32 || full + (tail ? 1 : 0) > 255)
    throw Error("softmax: a row must be whole 32-byte blocks (cols a multiple of " + std::to_string(32 / eb) + " for " +
                dtype_name(s.dtype) +
                ": the copies move blocks, and a row ending inside one would write the next row's first elements) "
                "of at most " +
                std::to_string(255 * per_repeat) + " elements");
  const std::uint64_t row_bytes = std::uint64_t(s.cols) * eb, tail_at = std::uint64_t(full) * 256;
  if (2 * row_bytes + 64 > cfg.size[kUB]) throw Error("softmax: a row does not fit the UB twice");
  const DataCopyCfg copy{1, std::uint32_t(row_bytes / 32), 0, 0};

  KernelBuilder k;
  Reg arg = k.reg(), X = k.reg(), O = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0);
  k.LoadGm(O, arg, 8);
  Reg row = k.reg(), dim = k.reg(), nrows = k.Const(s.rows), off = k.reg(), g = k.reg(),
      rb = k.Const(std::int64_t(row_bytes));
  Row r{k,
        s.dtype,
        full,
        tail,
        k.Const(per_repeat),
        k.reg(),
        k.Const(0),
        k.Const(std::int64_t(row_bytes)),
        k.Const(std::int64_t(2 * row_bytes)),
        k.Const(std::int64_t(tail_at)),
        k.Const(std::int64_t(row_bytes + tail_at)),
        k.Const(std::int64_t(2 * row_bytes + 32)),
        k.reg()};
  k.GetSpr(row, Spr::BlockId);
  k.GetSpr(dim, Spr::BlockDim);
  k.SetMaskCount(r.n);
  k.SetFlag(Pipe::MTE3, Pipe::MTE2, 0);  // the UB row is free
  k.RoundRobin(row, nrows, dim, [&] {
    k.Mul(off, row, rb);
    k.WaitFlag(Pipe::MTE3, Pipe::MTE2, 0);  // x row -> UB
    k.Add(g, X, off);
    k.DataCopy(Pos::UB, r.ub_x, Pos::GM, g, copy);
    k.SetFlag(Pipe::MTE2, Pipe::V, 0);
    k.WaitFlag(Pipe::MTE2, Pipe::V, 0);
    r.softmax(eb == 4 ? 0x80000000u : 0x8000u);
    k.SetFlag(Pipe::V, Pipe::MTE3, 0);
    k.WaitFlag(Pipe::V, Pipe::MTE3, 0);
    k.Add(g, O, off);
    k.DataCopy(Pos::GM, g, Pos::UB, r.ub_x, copy);
    k.SetFlag(Pipe::MTE3, Pipe::MTE2, 0);
  });
  k.WaitFlag(Pipe::MTE3, Pipe::MTE2, 0);
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
