// SPDX-License-Identifier: MIT
#include "reduce.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "aicore/kernel_builder.hpp"
#include "aicore/numeric.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

namespace {

std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

// A vector operand and the bytes each repeat moves it on (0: it stays, as a scalar value or a
// reduction's result does).
struct Operand {
  Reg r;
  std::uint32_t step;
};

// What every part of the kernel shares: the builder, the shape and plan, the type the sum is
// taken in, and scratch registers.
struct Code {
  KernelBuilder& k;
  const ReduceShape& s;
  const ReducePlan& p;
  DType t, at;  // the element type; the type the reduction is taken in (f32 for a widened sum)
  unsigned eb;
  Reg m = k.reg(), moved[3] = {k.reg(), k.reg(), k.reg()};

  void mask(std::uint64_t n) {
    k.Li(m, std::int64_t(n));
    k.SetMaskCount(m);
  }
  void barrier(Pipe from, Pipe to) {
    k.SetFlag(from, to, 1);
    k.WaitFlag(from, to, 1);
  }
  // `op` (a cast from `from` when it is not None) of `type` over n elements, per_rep of them a
  // repeat: whole repeats in runs of 255 (a repeat count is 8 bits), then the tail under a mask.
  void over(const char* op, DType type, const std::vector<Operand>& ops, std::uint64_t n, std::uint32_t per_rep,
            DType from = DType::None) {
    auto issue = [&](std::uint64_t first, std::uint32_t reps, std::uint64_t count) {
      std::vector<Reg> regs;
      std::uint32_t rep[3] = {8, 8, 8};
      for (std::size_t i = 0; i < ops.size(); ++i) {
        Reg r = ops[i].r;
        if (ops[i].step && first) k.Addi(moved[i], r, std::int32_t(first * ops[i].step)), r = moved[i];
        if (ops[i].step) rep[i] = ops[i].step / 32;
        regs.push_back(r);
      }
      mask(count);
      const VecCfg c{reps, 1, 1, 1, rep[0], rep[1], rep[2]};
      if (from != DType::None) return k.Cast(type, from, regs[0], regs[1], c, Round::Rint);
      k.Vector(op, type, regs, c);
    };
    const std::uint64_t full = n / per_rep, tail = n % per_rep;
    for (std::uint64_t r0 = 0; r0 < full; r0 += 255)
      issue(r0, std::uint32_t(std::min<std::uint64_t>(255, full - r0)), per_rep);
    if (tail) issue(full, 1, tail);
  }
  // n f16 elements at `from` widened to f32 at `to`, or the f32 at `from` narrowed to f16 at `to`.
  void widen(Reg to, Reg from, std::uint64_t n) { over("", DType::F32, {{to, 256}, {from, 128}}, n, 64, DType::F16); }
  void narrow(Reg to, Reg from, std::uint64_t n) { over("", DType::F16, {{to, 128}, {from, 256}}, n, 64, DType::F32); }
  std::uint32_t per_repeat(DType type) const { return 256 / dtype_bytes(type); }
  // The element-wise combination of two partial results, and the reduction of a run into one.
  const char* combine() const { return s.op == ReduceOp::Max ? "max" : s.op == ReduceOp::Min ? "min" : "add"; }
  const char* across() const { return s.op == ReduceOp::Max ? "redmax" : s.op == ReduceOp::Min ? "redmin" : "redsum"; }
  // The value a fold starts from (bits of `at`): 0 for a sum; for a maximum or minimum a NaN,
  // which gives way to any number, so that a row of NaNs alone stays NaN (as NumPy's fmax).
  std::int64_t identity() const {
    if (s.op == ReduceOp::Sum || s.op == ReduceOp::Mean) return 0;
    return std::int64_t(num::bits(std::numeric_limits<double>::quiet_NaN(), at));
  }
  // x at GM g -> the UB at `buf` (n elements, read in whole blocks), once the vector unit is done
  // with what was there.
  void load(Reg buf, Reg g, std::uint64_t n) {
    k.WaitFlag(Pipe::V, Pipe::MTE2, 0);
    k.DataCopy(Pos::UB, buf, Pos::GM, g, DataCopyCfg{1, std::uint32_t((n * eb + 31) / 32), 0, 0});
    barrier(Pipe::MTE2, Pipe::V);
  }
  // The output rows of unit `unit`, [row, end): p.unit of them, the last unit's fewer.
  void unit_rows(Reg unit, Reg row, Reg end, Reg tmp) {
    k.Li(tmp, p.unit);
    k.Mul(row, unit, tmp);
    k.Add(end, row, tmp);
    k.Li(tmp, s.outer);
    k.Op("min", end, end, tmp);
  }
};

// --- inner 1: a row per output element ----------------------------------------------------------
// The UB's parts: a chunk of a row as read, the same widened to f32 (widened only), then per row
// of the unit a block of the reduction's type, then (widened) a block of the result in f16, the
// reductions' partial result and the gathered unit.
struct RowsLayout {
  std::uint64_t wide, slots, narrow, r2, out, end;
};
RowsLayout rows_layout(const ReduceShape& s, std::uint64_t chunk, bool widened) {
  const std::uint32_t unit = 32 / dtype_bytes(s.dtype);
  RowsLayout l{};
  l.wide = round_up(chunk * dtype_bytes(s.dtype), 256) + 256;
  l.slots = l.wide + (widened ? round_up(chunk * 4, 256) + 256 : 0);
  l.narrow = l.slots + 32 * unit;
  l.r2 = l.narrow + (widened ? 32 * unit : 0);
  l.out = l.r2 + 64;
  l.end = l.out + 256;  // the gather's repeats read 256 bytes from each slot: past the last one
  return l;
}

struct Rows {
  Code& c;
  const RowsLayout& l;
  Reg buf, wide, r2, slot, g, cnt, inv;

  // The reduction of n elements (of c.at, at `from`) folded into the row's slot.
  void fold(Reg from, std::uint64_t n) {
    KernelBuilder& k = c.k;
    const std::uint32_t per = c.per_repeat(c.at);
    auto part = [&](std::uint64_t first, std::uint32_t reps, std::uint64_t count) {
      Reg src = from;
      if (first) k.Addi(c.moved[0], from, std::int32_t(first * 256)), src = c.moved[0];
      c.mask(count);
      k.Vector(c.across(), c.at, {r2, src}, VecCfg{reps, 1, 1, 1, 8, 8, 8});
      c.mask(1);
      k.Vector(c.combine(), c.at, {slot, slot, r2}, VecCfg{1, 1, 1, 1, 8, 8, 8});
    };
    const std::uint64_t full = n / per, tail = n % per;
    for (std::uint64_t r0 = 0; r0 < full; r0 += 255)
      part(r0, std::uint32_t(std::min<std::uint64_t>(255, full - r0)), per);
    if (tail) part(full, 1, tail);
  }
  void step(std::uint64_t n) {
    c.load(buf, g, n);
    if (c.p.widened) c.widen(wide, buf, n);
    fold(c.p.widened ? wide : buf, n);
    c.k.SetFlag(Pipe::V, Pipe::MTE2, 0);
    c.k.Addi(g, g, std::int32_t(c.p.width * c.eb));
  }
  // The row at GM g into its slot: from the identity, chunk by chunk; then a mean's scaling, and
  // (widened) the result narrowed into the row's f16 block.
  void row() {
    KernelBuilder& k = c.k;
    k.Li(cnt, c.identity());
    c.mask(1);
    k.Vector("dup", c.at, {slot, cnt}, VecCfg{1, 1, 1, 1, 8, 8, 8});
    const std::uint64_t rows = c.s.rows, chunk = c.p.width, whole = (rows - 1) / chunk;
    if (whole) {
      k.Li(cnt, std::int64_t(whole));
      k.Loop(cnt, [&] { step(chunk); });
    }
    step(rows - whole * chunk);
    if (c.s.op == ReduceOp::Mean) c.over("muls", c.at, {{slot, 0}, {slot, 0}, {inv, 0}}, 1, 1);
    if (!c.p.widened) return;
    k.Addi(c.moved[2], slot, std::int32_t(l.narrow - l.slots));
    c.narrow(c.moved[2], slot, 1);
  }
};

void rows_kernel(Code& c, Reg X, Reg Y, Reg unit, Reg dim) {
  KernelBuilder& k = c.k;
  const std::uint32_t U = c.p.unit;
  const RowsLayout l = rows_layout(c.s, c.p.width, c.p.widened);
  Rows r{c,
         l,
         KernelBuilder::zero(),
         k.Const(std::int64_t(l.wide)),
         k.Const(std::int64_t(l.r2)),
         k.reg(),
         k.reg(),
         k.reg(),
         k.reg()};
  if (c.s.op == ReduceOp::Mean) k.Li(r.inv, std::int64_t(num::bits(1.0 / c.s.rows, c.at)));
  Reg units = k.Const(std::int64_t(c.p.units)), row = k.reg(), end = k.reg(), tmp = k.reg();
  Reg results = k.Const(std::int64_t(c.p.widened ? l.narrow : l.slots)), out = k.Const(std::int64_t(l.out));
  k.RoundRobin(unit, units, dim, [&] {
    c.unit_rows(unit, row, end, tmp);
    k.Li(r.slot, std::int64_t(l.slots));
    Label top = k.NewLabel(), done = k.NewLabel();
    k.Bind(top);
    k.Branch("bgeu", row, end, done);
    k.Li(tmp, std::int64_t(c.s.rows) * c.eb);
    k.Mul(r.g, row, tmp);
    k.Add(r.g, X, r.g);
    r.row();
    k.Addi(row, row, 1);
    k.Addi(r.slot, r.slot, 32);
    k.Jump(top);
    k.Bind(done);
    // Each row's result is its block's first element: one a repeat, the repeats one block apart,
    // they come out side by side.
    c.mask(1);
    k.Vector("cadd", c.t, {out, results}, VecCfg{U, 1, 1, 1, 8, 1, 8});
    c.barrier(Pipe::V, Pipe::MTE3);
    k.Li(tmp, 32);
    k.Mul(tmp, unit, tmp);
    k.Add(tmp, Y, tmp);
    k.DataCopy(Pos::GM, tmp, Pos::UB, out, DataCopyCfg{1, 1, 0, 0});
    c.barrier(Pipe::MTE3, Pipe::V);
  });
}

// --- inner above 1: output rows of inner elements -------------------------------------------------
// The UB's parts: a row of x as read, then (widened) that row in f32 and the f32 sum, then one
// slot per output row of a packed unit (one otherwise), then (packed) the packed unit.
struct SliceLayout {
  std::uint64_t tmp, acc, slots, slot_step, out, end;
};
SliceLayout slice_layout(const ReduceShape& s, std::uint64_t width, bool widened, std::uint32_t unit, bool packed,
                         std::uint64_t batch = 1) {
  const unsigned eb = dtype_bytes(s.dtype);
  SliceLayout l{};
  l.tmp = round_up(batch * round_up(width * eb, 32), 256) + 256;
  l.acc = l.tmp + (widened ? round_up(width * 4, 256) + 256 : 0);
  l.slots = l.acc + (widened ? round_up(width * 4, 256) + 256 : 0);
  l.slot_step = round_up(width * eb, 32);
  l.out = l.slots + (packed ? unit : 1) * l.slot_step + 256;
  l.end = l.out + (packed ? round_up(std::uint64_t(unit) * s.inner * eb, 32) : 32);
  return l;
}

// The scalar unit copies n elements from UB `from` to UB `to` (any element alignment), one by one
// through 64-bit UB words (ld.ub / st.ub are 8-byte aligned; an element never straddles two
// words), the destination's other bits kept. `r`: its eight scratch registers.
void copy_elements(Code& c, Reg from, Reg to, std::uint64_t n, const Reg (&r)[8]) {
  KernelBuilder& k = c.k;
  const Reg s = r[0], d = r[1], a = r[2], sh = r[3], w = r[4], v = r[5], msk = r[6], count = r[7];
  const int bits = 8 * int(c.eb);
  k.Addi(s, from, 0);
  k.Addi(d, to, 0);
  k.Li(count, std::int64_t(n));
  k.Loop(count, [&] {
    k.OpI("andi", a, s, -8);  // the element's bits from its word
    k.OpI("andi", sh, s, 7);
    k.OpI("shli", sh, sh, 3);
    k.LoadUb(w, a, 0);
    k.Op("shr", v, w, sh);
    k.OpI("shli", v, v, 64 - bits);
    k.OpI("shri", v, v, 64 - bits);
    k.OpI("andi", a, d, -8);  // into the destination's word
    k.OpI("andi", sh, d, 7);
    k.OpI("shli", sh, sh, 3);
    k.LoadUb(w, a, 0);
    k.Li(msk, -1);
    k.OpI("shri", msk, msk, 64 - bits);
    k.Op("shl", msk, msk, sh);
    k.Op("and", msk, w, msk);
    k.Op("xor", w, w, msk);
    k.Op("shl", v, v, sh);
    k.Op("or", w, w, v);
    k.StoreUb(w, a, 0);
    k.Addi(s, s, std::int32_t(c.eb));
    k.Addi(d, d, std::int32_t(c.eb));
  });
}

struct Slices {
  Code& c;
  const SliceLayout& l;
  Reg buf, tmp, acc, slot, xo, yo, g, cnt, inv, stride;
  Reg row_at = Reg{}, rows_left = Reg{};  // a row within a batch, and the batch's rows (batch above 1)
  bool serial = false;                    // one core writes every output row in order

  // acc (or the slot) = the first row of the piece, at `row`; then each later row combined into it.
  void first(std::uint64_t n, Reg row) {
    if (c.p.widened) return c.widen(acc, row, n);
    c.over("copy", c.t, {{slot, 256}, {row, 256}}, n, c.per_repeat(c.t));
  }
  void next(std::uint64_t n, Reg row) {
    if (!c.p.widened) return c.over(c.combine(), c.t, {{slot, 256}, {slot, 256}, {row, 256}}, n, c.per_repeat(c.t));
    c.widen(tmp, row, n);
    c.over("add", DType::F32, {{acc, 256}, {acc, 256}, {tmp, 256}}, n, 64);
  }
  // b rows of x from g, n elements each, by one strided copy, combined into the sum (the first
  // starting it when `starts`); g moves on past them.
  void batch(std::uint64_t n, std::uint64_t b, bool starts) {
    KernelBuilder& k = c.k;
    const std::uint64_t bytes = n * c.eb, gap = (std::uint64_t(c.s.inner) - n) * c.eb / 32;
    k.WaitFlag(Pipe::V, Pipe::MTE2, 0);
    k.DataCopy(Pos::UB, buf, Pos::GM, g,
               DataCopyCfg{std::uint32_t(b), std::uint32_t(bytes / 32), std::uint32_t(gap), 0});
    c.barrier(Pipe::MTE2, Pipe::V);
    if (starts)
      first(n, buf);
    else
      next(n, buf);
    if (b > 1) {
      k.Addi(row_at, buf, 0);
      k.Li(rows_left, std::int64_t(b - 1));
      k.Loop(rows_left, [&] {
        k.Addi(row_at, row_at, std::int32_t(bytes));
        next(n, row_at);
      });
    }
    k.SetFlag(Pipe::V, Pipe::MTE2, 0);
    k.Li(rows_left, std::int64_t(b * c.s.inner * c.eb));
    k.Add(g, g, rows_left);
  }
  // Every row of a piece of n elements from g, in batches of c.p.batch.
  void batches(std::uint64_t n) {
    KernelBuilder& k = c.k;
    const std::uint64_t B = c.p.batch, rows = c.s.rows;
    batch(n, std::min<std::uint64_t>(B, rows), true);
    if (rows <= B) return;
    const std::uint64_t whole = (rows - B) / B, rest = (rows - B) % B;
    if (whole) {
      k.Li(cnt, std::int64_t(whole));
      k.Loop(cnt, [&] { batch(n, B, false); });
    }
    if (rest) batch(n, rest, false);
  }
  void finish(std::uint64_t n) {
    const Reg sum = c.p.widened ? acc : slot;
    if (c.s.op == ReduceOp::Mean) c.over("muls", c.at, {{sum, 256}, {sum, 256}, {inv, 0}}, n, c.per_repeat(c.at));
    if (c.p.widened) c.narrow(slot, acc, n);
  }
  // A piece of n elements of the output row whose input starts at xo (its output at yo).
  void piece(std::uint64_t n, bool write, bool ends_row = false) {
    KernelBuilder& k = c.k;
    k.Addi(g, xo, 0);
    if (c.p.batch > 1) {
      batches(n);
    } else {
      c.load(buf, g, n);
      first(n, buf);
      k.SetFlag(Pipe::V, Pipe::MTE2, 0);
      if (c.s.rows > 1) {
        k.Li(cnt, std::int64_t(c.s.rows) - 1);
        k.Loop(cnt, [&] {
          k.Add(g, g, stride);
          c.load(buf, g, n);
          next(n, buf);
          k.SetFlag(Pipe::V, Pipe::MTE2, 0);
        });
      }
    }
    finish(n);
    if (write && ends_row && serial && n * c.eb % 32) {
      write_ending(n);
    } else if (write) {
      c.barrier(Pipe::V, Pipe::MTE3);
      k.DataCopy(Pos::GM, yo, Pos::UB, slot, DataCopyCfg{1, std::uint32_t((n * c.eb + 31) / 32), 0, 0});
      c.barrier(Pipe::MTE3, Pipe::V);
    }
    k.Addi(xo, xo, std::int32_t(n * c.eb));
    k.Addi(yo, yo, std::int32_t(n * c.eb));
  }
  // The last piece of an output row that ends inside a block, written without a byte past the
  // row (one core writing every row in order: the last row's end may be the output's): its whole
  // blocks, then the 32 bytes that end it (a piece is at least 32 bytes), moved to an aligned UB
  // block by the scalar unit, as one block ending with the row.
  void write_ending(std::uint64_t n) {
    KernelBuilder& k = c.k;
    const std::uint64_t bytes = n * c.eb;
    if (bytes < 32) throw Error("reduce: an output row of " + std::to_string(bytes) + " B written alone");
    c.barrier(Pipe::V, Pipe::MTE3);
    k.DataCopy(Pos::GM, yo, Pos::UB, slot, DataCopyCfg{1, std::uint32_t(bytes / 32), 0, 0});
    c.barrier(Pipe::V, Pipe::S);
    k.Addi(g, slot, std::int32_t(bytes - 32));
    k.Li(cnt, std::int64_t(l.out));
    const Reg scratch[8] = {k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg()};
    copy_elements(c, g, cnt, 32 / c.eb, scratch);
    for (Reg r : scratch) k.release(r);
    k.Addi(g, yo, std::int32_t(bytes - 32));
    k.DataCopy(Pos::GM, g, Pos::UB, cnt, DataCopyCfg{1, 1, 0, 0});
    c.barrier(Pipe::MTE3, Pipe::V);
    c.barrier(Pipe::MTE3, Pipe::S);
  }
  // One output row (its input at xo, output at yo): its pieces, each written at once unless the
  // unit is packed.
  // The short piece goes first: where one core writes the rows in order, its whole blocks may
  // reach past it into the next piece, which rewrites them, and every later piece is whole blocks
  // ending where the next begins; the last ends with the row. A row of one piece ends inside a
  // block: write_ending.
  void output_row() {
    KernelBuilder& k = c.k;
    const std::uint64_t inner = c.s.inner, width = c.p.width, whole = (inner - 1) / width;
    piece(inner - whole * width, !c.p.packed, whole == 0);
    if (!whole) return;
    Reg count = k.reg();
    k.Li(count, std::int64_t(whole));
    k.Loop(count, [&] { piece(width, !c.p.packed); });
    k.release(count);
  }
};

// The scalar unit packs output rows [row, end) of the unit from their slots (from `from`,
// slot_step apart) to `to`, side by side.
void pack(Code& c, const SliceLayout& l, Reg row, Reg end, Reg from, Reg to, const Reg (&r)[8]) {
  KernelBuilder& k = c.k;
  Label top = k.NewLabel(), done = k.NewLabel();
  k.Bind(top);
  k.Branch("bgeu", row, end, done);
  copy_elements(c, from, to, c.s.inner, r);
  k.Addi(from, from, std::int32_t(l.slot_step));
  k.Addi(to, to, std::int32_t(std::uint64_t(c.s.inner) * c.eb));
  k.Addi(row, row, 1);
  k.Jump(top);
  k.Bind(done);
}

// The unit's packed rows written: all of them, or the last unit's fewer (it writes no further
// than their last block, which stays inside the output's page).
void write_unit(Code& c, Reg unit, Reg Y, Reg out, Reg tmp) {
  KernelBuilder& k = c.k;
  const std::uint64_t unit_bytes = std::uint64_t(c.p.unit) * c.s.inner * c.eb;
  const std::uint64_t last_bytes = std::uint64_t(c.s.outer - (c.p.units - 1) * c.p.unit) * c.s.inner * c.eb;
  k.Li(tmp, std::int64_t(unit_bytes));
  k.Mul(tmp, unit, tmp);
  k.Add(tmp, Y, tmp);
  Label other = k.NewLabel(), done = k.NewLabel();
  Reg last = k.Const(std::int64_t(c.p.units - 1));
  k.Branch("bne", unit, last, other);
  k.DataCopy(Pos::GM, tmp, Pos::UB, out, DataCopyCfg{1, std::uint32_t((last_bytes + 31) / 32), 0, 0});
  k.Jump(done);
  k.Bind(other);
  k.DataCopy(Pos::GM, tmp, Pos::UB, out, DataCopyCfg{1, std::uint32_t(unit_bytes / 32), 0, 0});
  k.Bind(done);
  k.release(last);
}

// Units that are pieces of output rows: unit u is piece u % pieces of output row u / pieces,
// written at once. A piece but the last is whole repeats, so two never share a block; the last
// may end inside one, past the row's end, where the next row's first piece rewrites it (or, past
// the output's end, inside its page).
void piece_units(Code& c, Slices& sl, Reg X, Reg Y, Reg unit, Reg dim, Reg units, const Reg (&r)[3]) {
  KernelBuilder& k = c.k;
  const Reg o = r[0], at = r[1], tmp = r[2];
  const std::uint64_t inner = c.s.inner, w = c.p.width, eb = c.eb;
  k.RoundRobin(unit, units, dim, [&] {
    k.Li(tmp, std::int64_t(c.p.pieces));
    k.Op("divu", o, unit, tmp);  // the output row
    k.Mul(at, o, tmp);
    k.Op("sub", at, unit, at);  // the piece, then its bytes into the row
    k.Li(tmp, std::int64_t(w * eb));
    k.Mul(at, at, tmp);
    k.Li(tmp, std::int64_t(std::uint64_t(c.s.rows) * inner * eb));
    k.Mul(sl.xo, o, tmp);
    k.Add(sl.xo, sl.xo, at);
    k.Add(sl.xo, X, sl.xo);
    k.Li(tmp, std::int64_t(inner * eb));
    k.Mul(sl.yo, o, tmp);
    k.Add(sl.yo, sl.yo, at);
    k.Add(sl.yo, Y, sl.yo);
    if (c.p.pieces == 1) return sl.piece(inner, true);
    Label other = k.NewLabel(), done = k.NewLabel();
    k.Li(tmp, std::int64_t((c.p.pieces - 1) * w * eb));
    k.Branch("bne", at, tmp, other);
    sl.piece(inner - (c.p.pieces - 1) * w, true);
    k.Jump(done);
    k.Bind(other);
    sl.piece(w, true);
    k.Bind(done);
  });
}

void slices_kernel(Code& c, Reg X, Reg Y, Reg unit, Reg dim) {
  KernelBuilder& k = c.k;
  const SliceLayout l = slice_layout(c.s, c.p.width, c.p.widened, c.p.unit, c.p.packed, c.p.batch);
  Slices sl{c,
            l,
            KernelBuilder::zero(),
            k.Const(std::int64_t(l.tmp)),
            k.Const(std::int64_t(l.acc)),
            k.reg(),
            k.reg(),
            k.reg(),
            k.reg(),
            k.reg(),
            k.reg(),
            k.Const(std::int64_t(std::uint64_t(c.s.inner) * c.eb))};
  if (c.s.op == ReduceOp::Mean) k.Li(sl.inv, std::int64_t(num::bits(1.0 / c.s.rows, c.at)));
  if (c.p.batch > 1) sl.row_at = k.reg(), sl.rows_left = k.reg();
  sl.serial = c.p.unit > 1 && !c.p.packed;
  Reg units = k.Const(std::int64_t(c.p.units)), row = k.reg(), end = k.reg(), tmp = k.reg();
  if (c.p.unit == 1) {
    k.Li(sl.slot, std::int64_t(l.slots));
    return piece_units(c, sl, X, Y, unit, dim, units, {row, end, tmp});
  }
  k.RoundRobin(unit, units, dim, [&] {
    c.unit_rows(unit, row, end, tmp);
    k.Li(sl.slot, std::int64_t(l.slots));
    Label top = k.NewLabel(), done = k.NewLabel();
    k.Bind(top);
    k.Branch("bgeu", row, end, done);
    k.Li(tmp, std::int64_t(std::uint64_t(c.s.rows) * c.s.inner * c.eb));
    k.Mul(sl.xo, row, tmp);
    k.Add(sl.xo, X, sl.xo);
    k.Li(tmp, std::int64_t(std::uint64_t(c.s.inner) * c.eb));
    k.Mul(sl.yo, row, tmp);
    k.Add(sl.yo, Y, sl.yo);
    sl.output_row();
    k.Addi(row, row, 1);
    if (c.p.packed) k.Addi(sl.slot, sl.slot, std::int32_t(l.slot_step));
    k.Jump(top);
    k.Bind(done);
    if (!c.p.packed) return;
    c.barrier(Pipe::V, Pipe::S);
    c.unit_rows(unit, row, end, tmp);
    Reg scratch[8] = {k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg()};
    k.Li(sl.slot, std::int64_t(l.slots));
    k.Li(sl.g, std::int64_t(l.out));
    pack(c, l, row, end, sl.slot, sl.g, scratch);
    for (Reg s : scratch) k.release(s);
    k.Li(sl.g, std::int64_t(l.out));
    write_unit(c, unit, Y, sl.g, tmp);
    c.barrier(Pipe::MTE3, Pipe::S);
  });
}

// The most elements of a row (inner 1) or of an output row (a piece of it) the UB holds at once:
// all of them, or whole 256-byte repeats of both types (a multiple of 128), as many as fit.
template <typename Fits>
std::uint64_t widest(std::uint64_t n, Fits fits) {
  if (fits(n)) return n;
  std::uint64_t w = 0;
  while (w + 128 < n && fits(w + 128)) w += 128;
  return w;
}

}  // namespace

ReducePlan reduce_plan(const AiCoreConfig& cfg, const ReduceShape& s) {
  if (s.dtype != DType::F32 && s.dtype != DType::F16) throw Error("reduce: dtype f32 or f16");
  if (s.outer == 0 || s.rows == 0 || s.inner == 0) throw Error("reduce: outer, rows and inner must be at least 1");
  const unsigned eb = dtype_bytes(s.dtype);
  const std::uint64_t ub = cfg.size[kUB], row = std::uint64_t(s.inner) * eb;
  ReducePlan p;
  p.widened = s.dtype == DType::F16 && (s.op == ReduceOp::Sum || s.op == ReduceOp::Mean);
  auto slices_fit = [&](std::uint32_t unit, bool packed) {
    return [&, unit, packed](std::uint64_t w) { return slice_layout(s, w, p.widened, unit, packed).end <= ub; };
  };
  if (s.inner == 1) {
    p.unit = 32 / eb;
    p.width = widest(s.rows, [&](std::uint64_t w) { return rows_layout(s, w, p.widened).end <= ub; });
  } else if (row % 32 == 0 || s.outer == 1) {
    p.width = widest(s.inner, slices_fit(1, false));
    if (s.outer < cfg.cores && p.width) {  // pieces of whole repeats, about one a core
      const std::uint64_t want = (cfg.cores + s.outer - 1) / s.outer;
      p.width = std::min(p.width, std::max<std::uint64_t>(128, round_up((s.inner + want - 1) / want, 128)));
    }
    if (p.width) p.pieces = (s.inner + p.width - 1) / p.width;
    const auto fits = [&](std::uint64_t b) { return slice_layout(s, p.width, p.widened, 1, false, b).end <= ub; };
    // Output rows of whole blocks: rows of a piece by one strided copy, where the gap from one
    // row's piece to the next (the shortest piece's the widest) fits the copy's 16 bits of blocks.
    const std::uint64_t shortest = p.width ? s.inner - (p.pieces - 1) * p.width : 0;
    if (row % 32 == 0 && p.width && (s.inner - shortest) * eb / 32 <= 0xffff)
      for (p.batch = std::uint32_t(std::min<std::uint64_t>(s.rows, 4095)); p.batch > 1 && !fits(p.batch);) --p.batch;
  } else {
    p.unit = 1;
    while (p.unit * row % 32) ++p.unit;
    p.packed = slices_fit(p.unit, true)(s.inner);
    if (p.packed) {
      p.width = s.inner;
    } else {  // one core, every output row in order
      p.unit = s.outer;
      p.width = widest(s.inner, slices_fit(1, false));
      if (row < 32)  // (a UB of a few KiB) a row of one piece ends with a block of its own
        throw Error("reduce: output rows of " + std::to_string(row) + " B, 16 of them a unit, do not fit the UB (" +
                    std::to_string(ub) + " B)");
    }
  }
  if (p.width == 0)
    throw Error("reduce: the UB (" + std::to_string(ub) + " B) holds no piece of a row of " +
                std::to_string(s.inner == 1 ? s.rows : s.inner) + " elements with its sums");
  p.units = (std::uint64_t(s.outer) + p.unit - 1) / p.unit * p.pieces;
  return p;
}

Image reduce_kernel(const AiCoreConfig& cfg, const ReduceShape& s) {
  const ReducePlan p = reduce_plan(cfg, s);
  KernelBuilder k;
  Code c{k, s, p, s.dtype, p.widened ? DType::F32 : s.dtype, dtype_bytes(s.dtype)};
  Reg arg = k.reg(), X = k.reg(), Y = k.reg(), unit = k.reg(), dim = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0);
  k.LoadGm(Y, arg, 8);
  k.release(arg);
  k.GetSpr(unit, Spr::BlockId);
  k.GetSpr(dim, Spr::BlockDim);
  k.SetFlag(Pipe::V, Pipe::MTE2, 0);  // the row buffer is free
  if (s.inner == 1)
    rows_kernel(c, X, Y, unit, dim);
  else
    slices_kernel(c, X, Y, unit, dim);
  k.WaitFlag(Pipe::V, Pipe::MTE2, 0);
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
