// SPDX-License-Identifier: MIT
#include "softmax.hpp"

#include "aicore/kernel_builder.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

Image softmax_kernel(const AiCoreConfig& cfg, const SoftmaxShape& s) {
  if (s.dtype != DType::F32 && s.dtype != DType::F16) throw Error("softmax: dtype f32 or f16");
  const unsigned eb = dtype_bytes(s.dtype);
  const std::uint32_t per_repeat = 256 / eb;
  if (s.rows == 0 || s.cols == 0 || s.cols % per_repeat || s.cols / per_repeat > 255)
    throw Error("softmax: cols must be a multiple of " + std::to_string(per_repeat) + " and at most " +
                std::to_string(255 * per_repeat));
  const std::uint64_t row_bytes = std::uint64_t(s.cols) * eb;
  // UB: x / exp at 0, the broadcast sum at row_bytes, reductions at 2 x row_bytes.
  if (2 * row_bytes + 64 > cfg.size[kUB]) throw Error("softmax: a row does not fit the UB twice");
  const std::uint32_t repeats = s.cols / per_repeat;
  const DataCopyCfg copy{1, std::uint32_t(row_bytes / 32), 0, 0};
  const VecCfg vec{repeats, 1, 1, 1, 8, 8, 8};
  const std::uint64_t sign = eb == 4 ? 0x80000000u : 0x8000u;

  KernelBuilder k;
  Reg arg = k.reg(), X = k.reg(), O = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0);
  k.LoadGm(O, arg, 8);
  Reg row = k.reg(), dim = k.reg(), nrows = k.Const(s.rows), off = k.reg(), g = k.reg(), v = k.reg(), ub_x = k.Const(0),
      ub_s = k.Const(std::int64_t(row_bytes)), ub_r = k.Const(std::int64_t(2 * row_bytes)), n = k.Const(per_repeat),
      rb = k.Const(std::int64_t(row_bytes));
  k.GetSpr(row, Spr::BlockId);
  k.GetSpr(dim, Spr::BlockDim);
  k.SetMaskCount(n);
  k.SetFlag(Pipe::MTE3, Pipe::MTE2, 0);  // the UB row is free
  k.RoundRobin(row, nrows, dim, [&] {
    k.Mul(off, row, rb);
    // x row -> UB
    k.WaitFlag(Pipe::MTE3, Pipe::MTE2, 0);
    k.Add(g, X, off);
    k.DataCopy(Pos::UB, ub_x, Pos::GM, g, copy);
    k.SetFlag(Pipe::MTE2, Pipe::V, 0);
    k.WaitFlag(Pipe::MTE2, Pipe::V, 0);
    // max over the row, read by the scalar unit, negated, and subtracted
    k.Vector("redmax", s.dtype, {ub_r, ub_x}, vec);
    k.SetFlag(Pipe::V, Pipe::S, 0);
    k.WaitFlag(Pipe::V, Pipe::S, 0);
    k.LoadUb(v, ub_r, 0);  // the max's bits, in the low element width
    k.OpI("xori", v, v, std::int32_t(sign));
    k.Vector("adds", s.dtype, {ub_x, ub_x, v}, vec);
    k.Vector("exp", s.dtype, {ub_x, ub_x}, vec);
    // the sum, broadcast over a row, divides
    k.Vector("redsum", s.dtype, {ub_r, ub_x}, vec);
    k.SetFlag(Pipe::V, Pipe::S, 1);
    k.WaitFlag(Pipe::V, Pipe::S, 1);
    k.LoadUb(v, ub_r, 0);
    k.Vector("dup", s.dtype, {ub_s, v}, vec);
    k.Vector("div", s.dtype, {ub_x, ub_x, ub_s}, vec);
    k.SetFlag(Pipe::V, Pipe::MTE3, 0);
    k.WaitFlag(Pipe::V, Pipe::MTE3, 0);
    k.Add(g, O, off);
    k.DataCopy(Pos::GM, g, Pos::UB, ub_x, copy);
    k.SetFlag(Pipe::MTE3, Pipe::MTE2, 0);
  });
  k.WaitFlag(Pipe::MTE3, Pipe::MTE2, 0);
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
