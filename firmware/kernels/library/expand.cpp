// SPDX-License-Identifier: MIT
#include "expand.hpp"

#include <algorithm>

#include "aicore/kernel_builder.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

namespace {

std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }
int log2_of(std::uint64_t v) {
  int l = 0;
  while ((1ull << l) < v) ++l;
  return l;
}
// A DataCopy configuration word with the block length from a register (one block run): the
// packing of DataCopyCfg (block_count in bits 0..11, block_len from bit 12).
void copy_cfg(KernelBuilder& k, Reg cfg, Reg blocks) {
  k.OpI("shli", cfg, blocks, 12);
  k.OpI("ori", cfg, cfg, 1);
}

}  // namespace

ExpandPlan expand_plan(const AiCoreConfig& cfg, const ExpandShape& s) {
  if (!s.outer || !s.rows || !s.inner) throw Error("expand: outer, rows and inner are at least 1");
  const std::uint64_t eb = dtype_bytes(s.dtype), half = cfg.size[kUB] / 2 / 256 * 256;
  const std::uint64_t cores = std::max<std::uint64_t>(1, cfg.cores), rb = s.inner * eb;
  ExpandPlan p;
  p.runs = s.inner == 1;
  if (eb != 2 && eb != 4)
    throw Error("expand: vdup and vcopy move 2- or 4-byte elements here; " + std::string(dtype_name(s.dtype)) +
                " is neither (the AI CPU's expand takes any)");
  if (!p.runs && rb % 32)
    throw Error("expand: inner of " + std::to_string(s.inner) + " " + dtype_name(s.dtype) + " (" + std::to_string(rb) +
                " bytes) is neither 1 nor whole 32-byte blocks (the AI CPU's expand takes any)");
  if (p.runs) {
    // The image and the unit's x values (a value per run, a run at least one element, one more
    // where the unit starts inside a run), each whole blocks, in half the UB.
    for (p.image = half; p.image >= 256; p.image -= 256)
      if (p.image + round_up((p.image / eb / s.rows + 2) * eb, 32) <= half) break;
    if (p.image < 256) throw Error("expand: half the UB holds no repeat of y and its values of x");
    p.image = std::min(p.image, round_up(round_up(s.out_elems() * eb, cores) / cores, 256));  // every core a unit
    p.unit = p.image / eb;
    p.units = (s.out_elems() + p.unit - 1) / p.unit;
    return p;
  }
  p.image = half;
  if (p.image < 256) throw Error("expand: half the UB holds no repeat of y");
  const std::uint64_t rows = s.outer * s.rows;
  p.unit = std::min(p.image / rb, (rows + cores - 1) / cores);
  if (p.unit == 0) {
    p.pieces = (rb + p.image - 1) / p.image;
    p.units = rows * p.pieces;
  } else {
    p.units = (rows + p.unit - 1) / p.unit;
  }
  return p;
}

namespace {

struct Code {
  KernelBuilder& k;
  const ExpandShape& s;
  const ExpandPlan& p;
  std::uint64_t eb;
  int eb_log;
  Reg X, Y, a = k.reg(), n = k.reg(), o = k.reg(), o0 = k.reg(), t = k.reg(), t2 = k.reg(), v = k.reg(), s0 = k.reg(),
            e = k.reg(), d = k.reg(), cnt = k.reg(), rest = k.reg(), ub = k.reg(), ub_m = k.reg(), src = k.reg(),
            chunk = k.reg(), vcfg = k.reg();

  // Unit `unit` of the runs way: y's elements [a, a + n) from x's values [o0, o1].
  void runs_unit(Reg unit, int buf, std::int64_t base) {
    const std::uint64_t total = s.out_elems();
    k.Li(t, std::int64_t(p.unit));
    k.Mul(a, unit, t);
    k.Li(n, std::int64_t(total));
    k.Op("sub", n, n, a);
    k.Op("min", n, n, t);
    k.Li(t, std::int64_t(s.rows));
    k.Op("divu", o0, a, t);
    k.Add(o, a, n);
    k.Addi(o, o, -1);
    k.Op("divu", o, o, t);  // o1, the last run's value, counted down from
    k.Op("sub", t, o, o0);  // the values: (o1 - o0 + 1) elements from x + o0
    k.Addi(t, t, 1);
    bytes_to_blocks(t);
    copy_cfg(k, t2, t);
    k.OpI("shli", t, o0, eb_log);
    k.Add(t, t, X);
    k.Li(ub_m, base + std::int64_t(p.image));
    k.WaitFlag(Pipe::MTE3, Pipe::MTE2, buf);  // the image's last write is out
    k.DataCopy(Pos::UB, ub_m, Pos::GM, t, t2);
    k.SetFlag(Pipe::MTE2, Pipe::S, 0);   // the scalar unit reads the values (and the vector unit
    k.WaitFlag(Pipe::MTE2, Pipe::S, 0);  // writes the image only after the write before it is out)
    k.Li(ub, base);
    Label top = k.NewLabel(), done = k.NewLabel();
    k.Bind(top);
    run();
    k.Branch("beq", o, o0, done);
    k.Addi(o, o, -1);
    k.Jump(top);
    k.Bind(done);
    k.SetFlag(Pipe::V, Pipe::MTE3, buf);
    k.WaitFlag(Pipe::V, Pipe::MTE3, buf);
    k.Add(t, n, Reg{0});
    bytes_to_blocks(t);
    copy_cfg(k, t2, t);
    k.OpI("shli", t, a, eb_log);
    k.Add(t, t, Y);
    k.DataCopy(Pos::GM, t, Pos::UB, ub, t2);
    k.SetFlag(Pipe::MTE3, Pipe::MTE2, buf);
  }
  // t (elements) -> the whole blocks that hold them.
  void bytes_to_blocks(Reg r) {
    k.OpI("shli", r, r, eb_log);
    k.Addi(r, r, 31);
    k.OpI("shri", r, r, 5);
  }
  // Run o's part of the unit, [s0, e) of the image, filled with x's value o from the block s0 is
  // in: whole repeats, then the rest under a mask of its first elements.
  void run() {
    const std::int64_t per_block = 32 / std::int64_t(eb), per_repeat = 256 / std::int64_t(eb);
    k.Li(t, std::int64_t(s.rows));
    k.Mul(s0, o, t);
    k.Add(e, s0, t);
    k.Op("max", s0, s0, a);
    k.Add(t, a, n);
    k.Op("min", e, e, t);
    k.Op("sub", s0, s0, a);
    k.Op("sub", e, e, a);
    k.Op("sub", t, o, o0);  // x's value: its bits from their 64-bit word (vdup takes the low bits)
    k.OpI("shli", t, t, eb_log);
    k.OpI("andi", t2, t, -8);
    k.Add(t2, t2, ub_m);
    k.LoadUb(v, t2, 0);
    k.OpI("andi", t, t, 7);
    k.OpI("shli", t, t, 3);
    k.Op("shr", v, v, t);
    k.OpI("andi", s0, s0, std::int32_t(-per_block));
    k.Op("sub", t, e, s0);
    k.OpI("shri", cnt, t, log2_of(std::uint64_t(per_repeat)));
    k.OpI("andi", rest, t, std::int32_t(per_repeat - 1));
    k.OpI("shli", d, s0, eb_log);
    k.Add(d, d, ub);
    Label out = k.NewLabel();
    whole_repeats("dup", d, v, cnt, false);
    k.Branch("beq", rest, Reg{0}, out);
    k.SetMaskCount(rest);
    k.Vector("dup", s.dtype, {d, v}, VecCfg{1, 1, 1, 1, 8, 8, 8});
    k.Bind(out);
  }

  // `reps` (counted down to 0) whole repeats of `op` from `dst` on (advanced past them), up to 255
  // a vector instruction (the count is 8 bits), all elements on; `src` a vcopy's source (moving
  // with dst), or a vdup's scalar.
  void whole_repeats(const char* op, Reg dst, Reg src, Reg reps, bool src_moves) {
    Label done = k.NewLabel(), more = k.NewLabel();
    k.Branch("beq", reps, Reg{0}, done);
    k.Li(chunk, 256 / std::int64_t(eb));
    k.SetMaskCount(chunk);
    k.Bind(more);
    k.Li(chunk, 255);
    k.Op("min", chunk, reps, chunk);
    k.Op("sub", reps, reps, chunk);
    k.Li(vcfg, std::int64_t(VecCfg{0, 1, 1, 1, 8, 8, 8}.pack()));
    k.Op("or", vcfg, vcfg, chunk);
    k.Vector(op, s.dtype, {dst, src}, vcfg);
    k.OpI("shli", chunk, chunk, 8);
    k.Add(dst, dst, chunk);
    if (src_moves) k.Add(src, src, chunk);
    k.Branch("bne", reps, Reg{0}, more);
    k.Bind(done);
  }

  // Unit `unit` of the rows way: whole rows of y [a, a + n), or (pieces) one piece of a row. The
  // rows of one x row form a segment: MTE2 copies each segment's x row to its start, then, once
  // they are all in, vcopy doubles what each segment holds (rows 0..k-1 copied to k..2k-1) until
  // it is full. (One flag for all the copies: a flag is set once before it is waited for.)
  void rows_unit(Reg unit, int buf, std::int64_t base) {
    const std::uint64_t rb = s.inner * eb, rows = s.outer * s.rows;
    k.Li(ub, base);
    k.WaitFlag(Pipe::MTE3, Pipe::MTE2, buf);
    if (p.pieces > 1) return piece(unit, buf);
    k.Li(t, std::int64_t(p.unit));
    k.Mul(a, unit, t);  // the first row, a
    k.Li(n, std::int64_t(rows));
    k.Op("sub", n, n, a);
    k.Op("min", n, n, t);  // its rows, n
    segments([&] {
      k.Li(t, std::int64_t(rb));
      k.Mul(t, o, t);
      k.Add(t, t, X);
      k.DataCopy(Pos::UB, d, Pos::GM, t, DataCopyCfg{1, std::uint32_t(rb / 32), 0, 0});
    });
    k.SetFlag(Pipe::MTE2, Pipe::V, buf);
    k.WaitFlag(Pipe::MTE2, Pipe::V, buf);
    segments([&] { double_up(); });
    k.SetFlag(Pipe::V, Pipe::MTE3, buf);
    k.WaitFlag(Pipe::V, Pipe::MTE3, buf);
    k.Li(t, std::int64_t(rb / 32));
    k.Mul(t, n, t);
    copy_cfg(k, t2, t);
    k.Li(t, std::int64_t(rb));
    k.Mul(t, a, t);
    k.Add(t, t, Y);
    k.DataCopy(Pos::GM, t, Pos::UB, ub, t2);
    k.SetFlag(Pipe::MTE3, Pipe::MTE2, buf);
  }
  // `body` once per segment of the unit's rows [a, a + n): o its x row, d its place in the image,
  // cnt its bytes (body may change t and the registers double_up uses, not these).
  template <typename Body>
  void segments(Body body) {
    k.Li(t, std::int64_t(s.rows));
    k.Op("divu", o, a, t);
    k.Add(s0, a, Reg{0});  // the segment's first row
    k.Add(d, ub, Reg{0});
    Label next = k.NewLabel();
    k.Bind(next);
    k.Addi(e, o, 1);
    k.Li(t, std::int64_t(s.rows));
    k.Mul(e, e, t);
    k.Add(t, a, n);
    k.Op("min", e, e, t);  // the segment's end, e
    k.Op("sub", cnt, e, s0);
    k.Li(t, std::int64_t(s.inner * eb));
    k.Mul(cnt, cnt, t);
    body();
    k.Add(d, d, cnt);
    k.Add(s0, e, Reg{0});
    k.Addi(o, o, 1);
    k.Add(t, a, n);
    k.Branch("bltu", s0, t, next);
  }
  // The cnt bytes at d, of which the first row (rb bytes) is there: vcopy of what is done so far
  // after itself, whole repeats (up to 255 a vcopy) then the rest under a mask, until all are.
  void double_up() {
    const Reg done = rest, step = v, dst = t2, reps = t;
    k.Li(done, std::int64_t(s.inner * eb));
    Label more = k.NewLabel(), out = k.NewLabel();
    k.Bind(more);
    k.Branch("bgeu", done, cnt, out);
    k.Op("sub", step, cnt, done);
    k.Op("min", step, step, done);  // this step's bytes: d .. d + step copied to d + done
    k.Add(dst, d, done);
    k.Add(src, d, Reg{0});
    k.Add(done, done, step);
    k.OpI("shri", reps, step, 8);
    whole_repeats("copy", dst, src, reps, true);
    k.OpI("andi", reps, step, 255);
    k.Branch("beq", reps, Reg{0}, more);
    k.OpI("shri", reps, reps, eb_log);
    k.SetMaskCount(reps);
    k.Vector("copy", s.dtype, {dst, src}, VecCfg{1, 1, 1, 1, 8, 8, 8});
    k.Jump(more);
    k.Bind(out);
  }
  // Piece unit % pieces of row unit / pieces: the image's bytes from min(piece x image, row -
  // image) on, so the last piece ends at the row's end.
  void piece(Reg unit, int buf) {
    const std::uint64_t rb = s.inner * eb;
    k.Li(t, std::int64_t(p.pieces));
    k.Op("divu", a, unit, t);  // y's row
    k.Op("rem", d, unit, t);
    k.Li(t, std::int64_t(p.image));
    k.Mul(d, d, t);
    k.Li(t, std::int64_t(rb - p.image));
    k.Op("min", d, d, t);  // the piece's offset in the row
    k.Li(t, std::int64_t(s.rows));
    k.Op("divu", o, a, t);  // x's row
    k.Li(t, std::int64_t(rb));
    k.Mul(o, o, t);
    k.Add(o, o, d);
    k.Add(o, o, X);
    const DataCopyCfg c{1, std::uint32_t(p.image / 32), 0, 0};
    k.DataCopy(Pos::UB, ub, Pos::GM, o, c);
    k.SetFlag(Pipe::MTE2, Pipe::MTE3, buf);
    k.WaitFlag(Pipe::MTE2, Pipe::MTE3, buf);
    k.Mul(a, a, t);
    k.Add(a, a, d);
    k.Add(a, a, Y);
    k.DataCopy(Pos::GM, a, Pos::UB, ub, c);
    k.SetFlag(Pipe::MTE3, Pipe::MTE2, buf);
  }
};

}  // namespace

Image expand_kernel(const AiCoreConfig& cfg, const ExpandShape& s) {
  const ExpandPlan p = expand_plan(cfg, s);
  KernelBuilder k;
  Reg arg = k.reg(), X = k.reg(), Y = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0);
  k.LoadGm(Y, arg, 8);
  const std::uint64_t eb = dtype_bytes(s.dtype);
  Code c{k, s, p, eb, log2_of(eb), X, Y};
  const std::int64_t half = std::int64_t(cfg.size[kUB] / 2 / 256 * 256);
  k.RoundRobinTwoBuffers(arg, k.Const(std::int64_t(p.units)), k.reg(), k.reg(), k.reg(), [&](Reg unit, int buf) {
    if (p.runs) return c.runs_unit(unit, buf, buf ? half : 0);
    c.rows_unit(unit, buf, buf ? half : 0);
  });
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
