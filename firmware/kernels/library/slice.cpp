// SPDX-License-Identifier: MIT
#include "slice.hpp"

#include <algorithm>

#include "aicore/kernel_builder.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

namespace {

constexpr std::uint64_t kMaxBurst = 65535;  // a DataCopy's block_len and gaps (16 bits)
constexpr std::uint64_t kMaxBursts = 4095;  // its block_count (12 bits)

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// Runs that touch are one run: rows a run apart, then outer blocks a row's run of rows apart (and
// outer blocks of one row are rows).
SliceShape merge(SliceShape s) {
  const auto rows_into_inner = [&] {
    if (s.rows > 1 && s.row_stride == s.inner) s.inner *= s.rows, s.rows = 1, s.row_stride = 0;
  };
  rows_into_inner();
  if (s.outer > 1 && (s.rows == 1 || s.outer_stride == s.rows * s.row_stride)) {
    s.row_stride = s.rows == 1 ? s.outer_stride : s.row_stride;
    s.rows *= s.outer, s.outer = 1, s.outer_stride = 0;
  }
  rows_into_inner();
  return s;
}

}  // namespace

std::string slice_refusal(const SliceShape& s) {
  if (!s.outer || !s.rows || !s.inner) return "slice: outer, rows and inner are at least 1";
  const SliceShape m = merge(s);
  const std::uint64_t eb = dtype_bytes(s.dtype);
  const std::pair<const char*, std::uint64_t> parts[] = {{"a run (inner)", m.inner},
                                                         {"start", m.start},
                                                         {"row_stride", m.rows > 1 ? m.row_stride : 0},
                                                         {"outer_stride", m.outer > 1 ? m.outer_stride : 0}};
  for (const auto& [what, elems] : parts)
    if (elems * eb % 32)
      return std::string("slice: ") + what + " of " + std::to_string(elems) + " " + dtype_name(s.dtype) + " is " +
             std::to_string(elems * eb) +
             " bytes, not whole 32-byte blocks (MTE moves blocks; the AI CPU's slice takes any)";
  return "";
}

SlicePlan slice_plan(const AiCoreConfig& cfg, const SliceShape& s) {
  if (const std::string why = slice_refusal(s); !why.empty()) throw Error(why);
  SlicePlan p;
  p.merged = merge(s);
  const SliceShape& m = p.merged;
  const std::uint64_t eb = dtype_bytes(m.dtype), blocks = m.inner * eb / 32, half = cfg.size[kUB] / 2 / 32;
  const std::uint64_t cores = std::max<std::uint64_t>(1, cfg.cores), runs = m.outer * m.rows;
  if (half == 0) throw Error("slice: half the UB holds no 32-byte block");
  if (blocks <= std::min(half, kMaxBurst) && runs >= cores) {
    // Whole runs, as many a piece as half the UB and one copy hold, every core a piece. Rows that
    // overlap or are further apart than a copy's gap go one a piece.
    const bool gap = m.rows == 1 || (m.row_stride >= m.inner && (m.row_stride - m.inner) * eb / 32 <= kMaxBurst);
    p.piece_rows = gap ? std::min({m.rows, kMaxBursts, half / blocks, kMaxBurst / blocks}) : 1;
    p.piece_rows = std::max<std::uint64_t>(1, std::min(p.piece_rows, m.rows / ceil_div(cores, m.outer)));
    p.chunk_blocks = blocks;
  } else {
    // Runs in chunks: longer than half the UB, or fewer runs than cores (a copy of one long run).
    p.chunks = std::min(blocks, std::max(ceil_div(blocks, std::min(half, kMaxBurst)), ceil_div(cores, runs)));
    p.chunk_blocks = ceil_div(blocks, p.chunks);
    p.chunks = ceil_div(blocks, p.chunk_blocks);
  }
  p.units = m.outer * ceil_div(m.rows, p.piece_rows) * p.chunks;
  return p;
}

namespace {

// The registers of one unit's move.
struct Move {
  KernelBuilder& k;
  const SlicePlan& p;
  Reg X, Y;
  const SliceShape& m = p.merged;
  const std::uint64_t eb = dtype_bytes(m.dtype), row_pieces = ceil_div(m.rows, p.piece_rows);
  Reg o = k.reg(), j = k.reg(), q = k.reg(), src = k.reg(), dst = k.reg(), t = k.reg();

  // out = x * f + add (out may be add).
  void mad(Reg out, Reg x, std::uint64_t f, Reg add) {
    k.Li(t, std::int64_t(f));
    k.Mul(t, x, t);
    k.Add(out, t, add);
  }
  // unit = (o x row_pieces + piece) x chunks + q; j: the piece's first row.
  // src = X + (start + o outer_stride + j row_stride) eb + q chunk; dst = Y + (o rows + j) inner eb + q chunk.
  void addresses(Reg unit) {
    k.Li(t, std::int64_t(p.chunks));
    k.Op("rem", q, unit, t);
    k.Op("divu", o, unit, t);
    k.Li(t, std::int64_t(row_pieces));
    k.Op("rem", j, o, t);
    k.Op("divu", o, o, t);
    k.Li(t, std::int64_t(p.piece_rows));
    k.Mul(j, j, t);
    k.Li(src, std::int64_t(m.start * eb));
    k.Add(src, src, X);
    mad(src, o, m.outer_stride * eb, src);
    mad(src, j, m.row_stride * eb, src);
    mad(src, q, p.chunk_blocks * 32, src);
    mad(dst, o, m.rows, j);
    mad(dst, dst, m.inner * eb, Y);
    mad(dst, q, p.chunk_blocks * 32, dst);
  }
  // `rows` runs of `blocks` gathered into UB buffer `buf`, then written in one run.
  void copy(std::uint64_t rows, std::uint64_t blocks, int buf, Reg ub) {
    const std::uint64_t gap = rows > 1 ? (m.row_stride - m.inner) * eb / 32 : 0;
    k.DataCopy(Pos::UB, ub, Pos::GM, src,
               DataCopyCfg{std::uint32_t(rows), std::uint32_t(blocks), std::uint32_t(gap), 0});
    k.SetFlag(Pipe::MTE2, Pipe::MTE3, buf);
    k.WaitFlag(Pipe::MTE2, Pipe::MTE3, buf);
    k.DataCopy(Pos::GM, dst, Pos::UB, ub, DataCopyCfg{1, std::uint32_t(rows * blocks), 0, 0});
  }
  // Unit `unit` through buffer `buf`: the last piece of an outer block may have fewer rows, the
  // last chunk of a run fewer blocks.
  void move(Reg unit, int buf, Reg ub) {
    addresses(unit);
    k.WaitFlag(Pipe::MTE3, Pipe::MTE2, buf);  // the buffer's last write is out
    const bool chunked = p.chunks > 1;
    const std::uint64_t tail =
        chunked ? m.inner * eb / 32 - (p.chunks - 1) * p.chunk_blocks : m.rows - (row_pieces - 1) * p.piece_rows;
    if (tail == (chunked ? p.chunk_blocks : p.piece_rows)) {
      copy(p.piece_rows, p.chunk_blocks, buf, ub);
    } else {
      Label last = k.NewLabel(), done = k.NewLabel();
      k.Li(t, std::int64_t(chunked ? p.chunks - 1 : (row_pieces - 1) * p.piece_rows));
      k.Branch("beq", chunked ? q : j, t, last);
      copy(p.piece_rows, p.chunk_blocks, buf, ub);
      k.Jump(done);
      k.Bind(last);
      copy(chunked ? 1 : tail, chunked ? tail : p.chunk_blocks, buf, ub);
      k.Bind(done);
    }
    k.SetFlag(Pipe::MTE3, Pipe::MTE2, buf);
  }
};

}  // namespace

Image slice_kernel(const AiCoreConfig& cfg, const SliceShape& s) {
  const SlicePlan p = slice_plan(cfg, s);
  KernelBuilder k;
  Reg arg = k.reg(), X = k.reg(), Y = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0);
  k.LoadGm(Y, arg, 8);
  Move mv{k, p, X, Y};
  Reg ub[2] = {KernelBuilder::zero(), k.Const(std::int64_t(cfg.size[kUB] / 2 / 32 * 32))};
  k.RoundRobinTwoBuffers(arg, k.Const(std::int64_t(p.units)), k.reg(), k.reg(), k.reg(),
                         [&](Reg unit, int buf) { mv.move(unit, buf, ub[buf]); });
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
