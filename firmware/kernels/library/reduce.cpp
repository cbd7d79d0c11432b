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
struct Opd {
  Reg r;
  std::uint32_t step;
};

// What every part of the kernel shares: the builder, the shape, and scratch registers.
struct Code {
  KernelBuilder& k;
  const ReduceShape& s;
  DType t;
  unsigned eb;
  std::uint32_t per_repeat;  // elements of t in a 256-byte repeat
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
  void over(const char* op, DType type, const std::vector<Opd>& ops, std::uint64_t n, std::uint32_t per_rep,
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
  // The element-wise combination of two partial results, and the reduction of a run into one.
  const char* combine() const { return s.op == ReduceOp::Max ? "max" : s.op == ReduceOp::Min ? "min" : "add"; }
  const char* across() const { return s.op == ReduceOp::Max ? "redmax" : s.op == ReduceOp::Min ? "redmin" : "redsum"; }
  // The value a fold starts from: 0, or -inf / +inf for a maximum / minimum (bits of t).
  std::int64_t identity() const {
    const double inf = std::numeric_limits<double>::infinity();
    if (s.op == ReduceOp::Max) return std::int64_t(num::bits(-inf, t));
    return s.op == ReduceOp::Min ? std::int64_t(num::bits(inf, t)) : 0;
  }
  // The output rows of unit `unit`, [row, end): U of them, the last unit's fewer.
  void unit_rows(Reg unit, std::uint32_t U, Reg row, Reg end, Reg tmp) {
    k.Li(tmp, U);
    k.Mul(row, unit, tmp);
    k.Add(end, row, tmp);
    k.Li(tmp, s.outer);
    k.Op("min", end, end, tmp);
  }
  // x at GM g -> the UB at `buf` (n elements, read in whole blocks), once the vector unit is done
  // with what was there.
  void load(Reg buf, Reg g, std::uint64_t n) {
    k.WaitFlag(Pipe::V, Pipe::MTE2, 0);
    k.DataCopy(Pos::UB, buf, Pos::GM, g, DataCopyCfg{1, std::uint32_t((n * eb + 31) / 32), 0, 0});
    barrier(Pipe::MTE2, Pipe::V);
  }
};

// --- inner 1: a row per output element ----------------------------------------------------------
// UB: a chunk of a row at 0 (chunk elements), one block per row of the unit (`slots`), the
// reductions' partial result (r2), then the gathered unit (`out`).
struct Rows {
  Code& c;
  std::uint64_t chunk;  // elements of a row read at once
  Reg buf, slots, r2, out, slot, g, cnt, inv;

  // The reduction of n elements at buf folded into the row's slot.
  void fold(std::uint64_t n) {
    KernelBuilder& k = c.k;
    const std::uint64_t full = n / c.per_repeat, tail = n % c.per_repeat;
    auto part = [&](std::uint64_t first, std::uint32_t reps, std::uint64_t count) {
      Reg at = buf;
      if (first) k.Addi(c.moved[0], buf, std::int32_t(first * 256)), at = c.moved[0];
      c.mask(count);
      k.Vector(c.across(), c.t, {r2, at}, VecCfg{reps, 1, 1, 1, 8, 8, 8});
      c.mask(1);
      k.Vector(c.combine(), c.t, {slot, slot, r2}, VecCfg{1, 1, 1, 1, 8, 8, 8});
    };
    for (std::uint64_t r0 = 0; r0 < full; r0 += 255)
      part(r0, std::uint32_t(std::min<std::uint64_t>(255, full - r0)), c.per_repeat);
    if (tail) part(full, 1, tail);
  }
  void step(std::uint64_t n) {
    c.load(buf, g, n);
    if (c.s.op == ReduceOp::Mean) c.over("muls", c.t, {{buf, 256}, {buf, 256}, {inv, 0}}, n, c.per_repeat);
    fold(n);
    c.k.SetFlag(Pipe::V, Pipe::MTE2, 0);
    c.k.Addi(g, g, std::int32_t(chunk * c.eb));
  }
  // Row `row` (its first element at GM g) into its slot: from the identity, chunk by chunk.
  void row() {
    KernelBuilder& k = c.k;
    k.Li(cnt, c.identity());
    c.mask(1);
    k.Vector("dup", c.t, {slot, cnt}, VecCfg{1, 1, 1, 1, 8, 8, 8});
    const std::uint64_t rows = c.s.rows, whole = (rows - 1) / chunk;
    if (whole) {
      k.Li(cnt, std::int64_t(whole));
      k.Loop(cnt, [&] { step(chunk); });
    }
    step(rows - whole * chunk);
  }
};

void rows_kernel(Code& c, Reg X, Reg Y, Reg unit, Reg dim, std::uint64_t chunk) {
  KernelBuilder& k = c.k;
  const std::uint32_t U = 32 / c.eb;
  const std::uint64_t at = round_up(chunk * c.eb, 256) + 256;
  Rows r{c,
         chunk,
         KernelBuilder::zero(),
         k.Const(std::int64_t(at)),
         k.Const(std::int64_t(at + 32 * U)),
         k.Const(std::int64_t(at + 32 * U + 64)),
         k.reg(),
         k.reg(),
         k.reg(),
         k.reg()};
  if (c.s.op == ReduceOp::Mean) k.Li(r.inv, std::int64_t(num::bits(1.0 / c.s.rows, c.t)));
  Reg units = k.Const(std::int64_t(reduce_units(c.s))), row = k.reg(), end = k.reg(), tmp = k.reg();
  k.RoundRobin(unit, units, dim, [&] {
    c.unit_rows(unit, U, row, end, tmp);
    k.Addi(r.slot, r.slots, 0);
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
    // Each slot's first element, one a repeat of one block: the unit's results side by side.
    c.mask(1);
    k.Vector("cadd", c.t, {r.out, r.slots}, VecCfg{U, 1, 1, 1, 8, 1, 8});
    c.barrier(Pipe::V, Pipe::MTE3);
    k.Li(tmp, 32);
    k.Mul(tmp, unit, tmp);
    k.Add(tmp, Y, tmp);
    k.DataCopy(Pos::GM, tmp, Pos::UB, r.out, DataCopyCfg{1, 1, 0, 0});
    c.barrier(Pipe::MTE3, Pipe::V);
  });
}

// --- inner above 1: output rows of inner elements -------------------------------------------------
// UB: a row of x at 0, then (f16 sums, widened) that row in f32 and the f32 sum, then one slot per
// output row of the unit, then (several output rows a unit) the packed unit.
struct Slices {
  Code& c;
  DType at;                 // the type the sum is taken in
  std::uint64_t width;      // elements of a piece of an output row
  std::uint64_t slot_step;  // bytes from one slot to the next
  Reg buf, tmp, acc, slot, xo, yo, g, cnt, inv, stride;

  bool widened() const { return at != c.t; }
  // acc (or the slot) = the first row of the piece; then each later row combined into it.
  void first(std::uint64_t n) {
    if (widened()) return c.over("", DType::F32, {{acc, 256}, {buf, 128}}, n, 64, DType::F16);
    c.over("copy", c.t, {{slot, 256}, {buf, 256}}, n, c.per_repeat);
  }
  void next(std::uint64_t n) {
    if (!widened()) return c.over(c.combine(), c.t, {{slot, 256}, {slot, 256}, {buf, 256}}, n, c.per_repeat);
    c.over("", DType::F32, {{tmp, 256}, {buf, 128}}, n, 64, DType::F16);
    c.over("add", DType::F32, {{acc, 256}, {acc, 256}, {tmp, 256}}, n, 64);
  }
  void finish(std::uint64_t n) {
    const std::uint32_t pr = widened() ? 64 : c.per_repeat;
    if (c.s.op == ReduceOp::Mean)
      c.over("muls", at, {{widened() ? acc : slot, 256}, {widened() ? acc : slot, 256}, {inv, 0}}, n, pr);
    if (widened()) c.over("", DType::F16, {{slot, 128}, {acc, 256}}, n, 64, DType::F32);
  }
  // A piece of n elements of the output row whose input starts at xo (its output at yo).
  void piece(std::uint64_t n, bool write) {
    KernelBuilder& k = c.k;
    k.Addi(g, xo, 0);
    c.load(buf, g, n);
    first(n);
    k.SetFlag(Pipe::V, Pipe::MTE2, 0);
    if (c.s.rows > 1) {
      k.Li(cnt, std::int64_t(c.s.rows) - 1);
      k.Loop(cnt, [&] {
        k.Add(g, g, stride);
        c.load(buf, g, n);
        next(n);
        k.SetFlag(Pipe::V, Pipe::MTE2, 0);
      });
    }
    finish(n);
    if (write) {
      c.barrier(Pipe::V, Pipe::MTE3);
      k.DataCopy(Pos::GM, yo, Pos::UB, slot, DataCopyCfg{1, std::uint32_t((n * c.eb + 31) / 32), 0, 0});
      c.barrier(Pipe::MTE3, Pipe::V);
    }
    k.Addi(xo, xo, std::int32_t(n * c.eb));
    k.Addi(yo, yo, std::int32_t(n * c.eb));
  }
  // One output row (its input at xo, output at yo): its pieces; written one by one when the
  // unit is one output row, else packed later.
  void output_row(bool write) {
    KernelBuilder& k = c.k;
    const std::uint64_t inner = c.s.inner, whole = (inner - 1) / width;
    if (whole) {
      Reg count = k.reg();
      k.Li(count, std::int64_t(whole));
      k.Loop(count, [&] { piece(width, write); });
      k.release(count);
    }
    piece(inner - whole * width, write);
  }
};

// The scalar unit packs output rows [row, end) of the unit from their slots (from sl.slot,
// slot_step apart) to sl.g, element by element through 64-bit UB words (ld.ub / st.ub are 8-byte
// aligned; an element never straddles two words). Its registers are the vector steps' scratch,
// free here; `count` counts a row's elements.
void pack(Code& c, Slices& sl, Reg row, Reg end, Reg count) {
  KernelBuilder& k = c.k;
  const Reg s = c.moved[0], d = c.moved[1], a = c.moved[2], sh = c.m, w = sl.xo, v = sl.yo, msk = sl.cnt;
  Label top = k.NewLabel(), done = k.NewLabel();
  k.Bind(top);
  k.Branch("bgeu", row, end, done);
  k.Addi(s, sl.slot, 0);
  k.Addi(d, sl.g, 0);
  k.Li(count, c.s.inner);
  k.Loop(count, [&] {
    k.OpI("andi", a, s, -8);  // the element's bits from its word
    k.OpI("andi", sh, s, 7);
    k.OpI("shli", sh, sh, 3);
    k.LoadUb(w, a, 0);
    k.Op("shr", v, w, sh);
    k.OpI("shli", v, v, 64 - 8 * int(c.eb));
    k.OpI("shri", v, v, 64 - 8 * int(c.eb));
    k.OpI("andi", a, d, -8);  // into the destination's word, its other bits kept
    k.OpI("andi", sh, d, 7);
    k.OpI("shli", sh, sh, 3);
    k.LoadUb(w, a, 0);
    k.Li(msk, c.eb == 2 ? 0xffff : -1);
    if (c.eb == 4) k.OpI("shri", msk, msk, 32);
    k.Op("shl", msk, msk, sh);
    k.Op("and", msk, w, msk);
    k.Op("xor", w, w, msk);
    k.Op("shl", v, v, sh);
    k.Op("or", w, w, v);
    k.StoreUb(w, a, 0);
    k.Addi(s, s, std::int32_t(c.eb));
    k.Addi(d, d, std::int32_t(c.eb));
  });
  k.Addi(sl.slot, sl.slot, std::int32_t(sl.slot_step));
  k.Addi(sl.g, sl.g, std::int32_t(std::uint64_t(c.s.inner) * c.eb));
  k.Addi(row, row, 1);
  k.Jump(top);
  k.Bind(done);
}

// The unit's packed rows written: all of them, or the last unit's fewer (it writes no further
// than their last block, which stays inside the output's page).
void write_unit(Code& c, Reg unit, Reg Y, Reg out, Reg tmp) {
  KernelBuilder& k = c.k;
  const std::uint32_t U = reduce_unit_outers(c.s);
  const std::uint64_t unit_bytes = std::uint64_t(U) * c.s.inner * c.eb, units = reduce_units(c.s);
  const std::uint64_t last_bytes = std::uint64_t(c.s.outer - (units - 1) * U) * c.s.inner * c.eb;
  k.Li(tmp, std::int64_t(unit_bytes));
  k.Mul(tmp, unit, tmp);
  k.Add(tmp, Y, tmp);
  Label other = k.NewLabel(), done = k.NewLabel();
  Reg last = k.Const(std::int64_t(units - 1));
  k.Branch("bne", unit, last, other);
  k.DataCopy(Pos::GM, tmp, Pos::UB, out, DataCopyCfg{1, std::uint32_t((last_bytes + 31) / 32), 0, 0});
  k.Jump(done);
  k.Bind(other);
  k.DataCopy(Pos::GM, tmp, Pos::UB, out, DataCopyCfg{1, std::uint32_t(unit_bytes / 32), 0, 0});
  k.Bind(done);
  k.release(last);
}

// The UB's layout for pieces of `width` elements: bytes it needs, and where each part starts.
struct SliceLayout {
  std::uint64_t tmp, acc, slots, slot_step, out, end;
};
SliceLayout slice_layout(const ReduceShape& s, std::uint64_t width, bool widened) {
  const unsigned eb = dtype_bytes(s.dtype);
  const std::uint32_t U = reduce_unit_outers(s);
  SliceLayout l{};
  l.tmp = round_up(width * eb, 256) + 256;
  l.acc = l.tmp + (widened ? round_up(width * 4, 256) + 256 : 0);
  l.slots = l.acc + (widened ? round_up(width * 4, 256) + 256 : 0);
  l.slot_step = round_up(width * eb, 32);
  l.out = l.slots + U * l.slot_step + 256;
  l.end = l.out + (U > 1 ? round_up(std::uint64_t(U) * s.inner * eb, 32) : 0);
  return l;
}

void slices_kernel(Code& c, Reg X, Reg Y, Reg unit, Reg dim, std::uint64_t width, bool widened) {
  KernelBuilder& k = c.k;
  const std::uint32_t U = reduce_unit_outers(c.s);
  const SliceLayout l = slice_layout(c.s, width, widened);
  const DType at = widened ? DType::F32 : c.t;
  Slices sl{c,
            at,
            width,
            l.slot_step,
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
  if (c.s.op == ReduceOp::Mean) k.Li(sl.inv, std::int64_t(num::bits(1.0 / c.s.rows, at)));
  Reg units = k.Const(std::int64_t(reduce_units(c.s))), row = k.reg(), end = k.reg(), tmp = k.reg();
  Reg slots = k.Const(std::int64_t(l.slots)), out = k.Const(std::int64_t(l.out));
  k.RoundRobin(unit, units, dim, [&] {
    c.unit_rows(unit, U, row, end, tmp);
    k.Addi(sl.slot, slots, 0);
    Label top = k.NewLabel(), done = k.NewLabel();
    k.Bind(top);
    k.Branch("bgeu", row, end, done);
    k.Li(tmp, std::int64_t(std::uint64_t(c.s.rows) * c.s.inner * c.eb));
    k.Mul(sl.xo, row, tmp);
    k.Add(sl.xo, X, sl.xo);
    k.Li(tmp, std::int64_t(std::uint64_t(c.s.inner) * c.eb));
    k.Mul(sl.yo, row, tmp);
    k.Add(sl.yo, Y, sl.yo);
    sl.output_row(U == 1);
    k.Addi(row, row, 1);
    if (U > 1) k.Addi(sl.slot, sl.slot, std::int32_t(l.slot_step));
    k.Jump(top);
    k.Bind(done);
    if (U == 1) return;
    c.barrier(Pipe::V, Pipe::S);
    k.Li(tmp, U);
    k.Mul(row, unit, tmp);
    k.Addi(sl.slot, slots, 0);
    k.Addi(sl.g, out, 0);
    pack(c, sl, row, end, tmp);
    write_unit(c, unit, Y, out, tmp);
    c.barrier(Pipe::MTE3, Pipe::S);
  });
}

// Elements of a row (inner 1) read at once, or of an output row's piece (inner above 1): the
// whole of it when the UB holds it, else whole 256-byte repeats.
std::uint64_t fit_width(const AiCoreConfig& cfg, const ReduceShape& s, bool widened) {
  const unsigned eb = dtype_bytes(s.dtype);
  const std::uint64_t ub = cfg.size[kUB];
  if (s.inner == 1) {
    const std::uint64_t cap = std::min<std::uint64_t>(255 * 256, ub > 2048 ? (ub - 2048) / 256 * 256 : 0);
    return std::min<std::uint64_t>(s.rows, cap / eb);
  }
  if (slice_layout(s, s.inner, widened).end <= ub) return s.inner;
  if (reduce_unit_outers(s) > 1) return 0;
  std::uint64_t w = 256 / eb;
  while (slice_layout(s, w + 256 / eb, widened).end <= ub && w + 256 / eb < s.inner) w += 256 / eb;
  return slice_layout(s, w, widened).end <= ub ? w : 0;
}

}  // namespace

std::uint32_t reduce_unit_outers(const ReduceShape& s) {
  const std::uint64_t row = std::uint64_t(s.inner) * dtype_bytes(s.dtype);
  if (s.inner == 1) return 32 / dtype_bytes(s.dtype);
  if (row % 32 == 0 || s.outer == 1) return 1;
  std::uint32_t u = 1;
  while (u * row % 32) ++u;
  return u;
}

std::uint64_t reduce_units(const ReduceShape& s) {
  const std::uint32_t u = reduce_unit_outers(s);
  return (std::uint64_t(s.outer) + u - 1) / u;
}

Image reduce_kernel(const AiCoreConfig& cfg, const ReduceShape& s) {
  if (s.dtype != DType::F32 && s.dtype != DType::F16) throw Error("reduce: dtype f32 or f16");
  if (s.outer == 0 || s.rows == 0 || s.inner == 0) throw Error("reduce: outer, rows and inner must be at least 1");
  const unsigned eb = dtype_bytes(s.dtype);
  const bool widened = s.dtype == DType::F16 && (s.op == ReduceOp::Sum || s.op == ReduceOp::Mean);
  const std::uint64_t width = fit_width(cfg, s, widened);
  if (width == 0)
    throw Error("reduce: output rows of " + std::to_string(s.inner) + " elements (" +
                std::to_string(std::uint64_t(s.inner) * eb) + " B, " + std::to_string(reduce_unit_outers(s)) +
                " of them a unit) do not fit the UB (" + std::to_string(cfg.size[kUB]) + " B)");
  KernelBuilder k;
  Code c{k, s, s.dtype, eb, 256 / eb};
  Reg arg = k.reg(), X = k.reg(), Y = k.reg(), unit = k.reg(), dim = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0);
  k.LoadGm(Y, arg, 8);
  k.release(arg);
  k.GetSpr(unit, Spr::BlockId);
  k.GetSpr(dim, Spr::BlockDim);
  k.SetFlag(Pipe::V, Pipe::MTE2, 0);  // the row buffer is free
  if (s.inner == 1)
    rows_kernel(c, X, Y, unit, dim, width);
  else
    slices_kernel(c, X, Y, unit, dim, width, widened);
  k.WaitFlag(Pipe::V, Pipe::MTE2, 0);
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
