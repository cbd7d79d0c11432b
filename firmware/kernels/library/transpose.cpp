// SPDX-License-Identifier: MIT
#include "transpose.hpp"

#include <algorithm>

#include "aicore/kernel_builder.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

namespace {

std::uint64_t run_bytes(const TransposeShape& s) { return std::uint64_t(s.inner) * dtype_bytes(s.dtype); }

void check(const AiCoreConfig& cfg, const TransposeShape& s) {
  if (!s.outer || !s.rows || !s.cols || !s.inner) throw Error("transpose: outer, rows, cols and inner are at least 1");
  if (run_bytes(s) % 32)
    throw Error("transpose: a run of inner = " + std::to_string(s.inner) + " elements is " +
                std::to_string(run_bytes(s)) + " B, not whole 32-byte blocks (MTE moves blocks)");
  if ((s.cols - 1) * run_bytes(s) / 32 > 65535)
    throw Error("transpose: x's rows are " + std::to_string(std::uint64_t(s.cols) * run_bytes(s)) +
                " B apart: a strided copy's gap is at most 65535 blocks");
  if (2 * run_bytes(s) > cfg.size[kUB] || run_bytes(s) / 32 > 65535)
    throw Error("transpose: a run of " + std::to_string(run_bytes(s)) +
                " B does not fit half the UB or one copy's 65535 blocks");
}

// The registers of one piece's move.
struct Piece {
  KernelBuilder& k;
  const TransposeShape& s;
  std::uint32_t r, pieces_per_col;  // rows per piece, pieces per y row
  Reg X, Y, j, o, c, src, dst, t;

  // src = X + ((o x rows + j x r) x cols + c) x run; dst = Y + ((o x cols + c) x rows + j x r) x run.
  void addresses(Reg unit) {
    const std::int64_t run = std::int64_t(run_bytes(s));
    k.Li(t, pieces_per_col);
    k.Op("rem", j, unit, t);
    k.Op("divu", o, unit, t);
    k.Li(t, s.cols);
    k.Op("rem", c, o, t);
    k.Op("divu", o, o, t);
    k.Li(t, r);
    k.Mul(j, j, t);  // the piece's first row
    mad(src, o, s.rows, j);
    mad(src, src, s.cols, c);
    mad(src, src, run, X);
    mad(dst, o, s.cols, c);
    mad(dst, dst, s.rows, j);
    mad(dst, dst, run, Y);
  }
  // out = x * m + add.
  void mad(Reg out, Reg x, std::int64_t m, Reg add) {
    k.Li(t, m);
    k.Mul(out, x, t);
    k.Add(out, out, add);
  }
  // `rows` rows gathered into UB buffer `buf`, then written in one run.
  void copy(std::uint32_t rows, int buf, Reg ub) {
    const std::uint32_t blocks = std::uint32_t(run_bytes(s) / 32);
    k.DataCopy(Pos::UB, ub, Pos::GM, src, DataCopyCfg{rows, blocks, (s.cols - 1) * blocks, 0});
    k.SetFlag(Pipe::MTE2, Pipe::MTE3, buf);
    k.WaitFlag(Pipe::MTE2, Pipe::MTE3, buf);
    k.DataCopy(Pos::GM, dst, Pos::UB, ub, DataCopyCfg{1, rows * blocks, 0, 0});
  }
  // Piece `unit` through buffer `buf` (the last piece of a y row may have fewer rows).
  void move(Reg unit, int buf, Reg ub) {
    addresses(unit);
    k.WaitFlag(Pipe::MTE3, Pipe::MTE2, buf);  // the buffer's last write is done
    const std::uint32_t tail = s.rows - (pieces_per_col - 1) * r;
    if (tail == r) {
      copy(r, buf, ub);
    } else {
      Label short_piece = k.NewLabel(), done = k.NewLabel();
      k.Li(t, std::int64_t(pieces_per_col - 1) * r);
      k.Branch("beq", j, t, short_piece);
      copy(r, buf, ub);
      k.Jump(done);
      k.Bind(short_piece);
      copy(tail, buf, ub);
      k.Bind(done);
    }
    k.SetFlag(Pipe::MTE3, Pipe::MTE2, buf);
  }
};

}  // namespace

std::uint32_t transpose_piece_rows(const AiCoreConfig& cfg, const TransposeShape& s) {
  check(cfg, s);
  // A gather is at most 4095 runs, a write at most 65535 blocks.
  return std::uint32_t(
      std::min<std::uint64_t>({s.rows, 4095, cfg.size[kUB] / 2 / run_bytes(s), 65535 / (run_bytes(s) / 32)}));
}

std::uint64_t transpose_pieces(const AiCoreConfig& cfg, const TransposeShape& s) {
  const std::uint32_t r = transpose_piece_rows(cfg, s);
  return std::uint64_t(s.outer) * s.cols * ((s.rows + r - 1) / r);
}

Image transpose_kernel(const AiCoreConfig& cfg, const TransposeShape& s) {
  const std::uint32_t r = transpose_piece_rows(cfg, s);
  KernelBuilder k;
  Reg arg = k.reg(), X = k.reg(), Y = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0);
  k.LoadGm(Y, arg, 8);
  Piece p{k, s, r, (s.rows + r - 1) / r, X, Y, k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg()};
  Reg ub[2] = {KernelBuilder::zero(), k.Const(std::int64_t(cfg.size[kUB] / 2 / 32 * 32))};
  k.RoundRobinTwoBuffers(arg, k.Const(std::int64_t(transpose_pieces(cfg, s))), k.reg(), k.reg(), k.reg(),
                         [&](Reg unit, int buf) { p.move(unit, buf, ub[buf]); });
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
