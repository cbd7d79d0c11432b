// SPDX-License-Identifier: MIT
#include "softmax.hpp"

#include "aicore/kernel_builder.hpp"
#include "aicore/numeric.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

namespace {

// The scale as the vector unit's scalar operand (its bits in the element type), -1 for none.
std::int64_t scale_operand(const SoftmaxShape& s) {
  return s.scale == 1.0 ? -1 : std::int64_t(num::bits(s.scale, s.dtype));
}

// A row is `full` repeats of per_repeat elements and a `tail`, one more repeat under a mask.
// UB: x / exp at 0, the broadcast sum at the row's bytes rounded up to a block, reductions after
// it (the tail's 32 bytes after), then the last block of a row that ends inside one (see below):
// blk, its sum, and blk_y, the output's block under it.
struct Row {
  KernelBuilder& k;
  DType t;
  std::uint32_t full, tail;
  Reg n, m;  // per_repeat (the mask between ops), scratch for other masks
  Reg ub_x, ub_s, ub_r, ub_xt, ub_st, ub_r2, v;
  Reg ub_blk = Reg{}, ub_blk_s = Reg{}, ub_blk_y = Reg{};
  std::uint32_t blk_elems = 0, before = 0;  // a block's elements; of them, the earlier rows'
  Reg c0 = Reg{}, c1 = Reg{}, c2 = Reg{};   // operand addresses of a later chunk of repeats
  std::int64_t scale = -1;                  // the scale's bits in t (-1: none)
  // A mask (single_pass): x loaded at ub_in, the mask's row at ub_x, the comparison's bits at
  // bits (16 bytes a repeat), a row of zeros at ub_zero and one of fill at ub_fill (each _t its
  // tail), written once before the rows (fills); fill's bits in t.
  bool masked = false;
  Reg ub_in = Reg{}, ub_in_t = Reg{}, bits = Reg{}, bits_t = Reg{};
  Reg ub_zero = Reg{}, ub_zero_t = Reg{}, ub_fill = Reg{}, ub_fill_t = Reg{};
  std::int64_t fill = 0;

  // The full repeats in chunks of at most 255 (a repeat count is 8 bits): f(operands, repeats),
  // the address operands of chunk j moved on by its first repeat's bytes (v, a value, is not).
  template <typename F>
  void chunks(const std::vector<Reg>& at, F f) {
    for (std::uint32_t r0 = 0; r0 < full; r0 += 255) {
      std::vector<Reg> ops = at;
      const Reg temps[] = {c0, c1, c2};
      for (std::size_t i = 0; i < ops.size() && r0; ++i)
        if (ops[i].n != v.n) {
          k.Addi(temps[i], ops[i], std::int32_t(r0 * 256));
          ops[i] = temps[i];
        }
      f(ops, std::min<std::uint32_t>(255, full - r0), r0 == 0);
    }
  }

  void mask(std::uint32_t count) {
    k.Li(m, count);
    k.SetMaskCount(m);
  }
  // An op over the row: the full repeats from the operands `at`, then the tail from `tail_ops`.
  void each(const char* op, const std::vector<Reg>& at, const std::vector<Reg>& tail_ops) {
    chunks(at, [&](const std::vector<Reg>& ops, std::uint32_t reps, bool) {
      k.Vector(op, t, ops, VecCfg{reps, 1, 1, 1, 8, 8, 8});
    });
    if (!tail) return;
    mask(tail);
    k.Vector(op, t, tail_ops, VecCfg{1, 1, 1, 1, 8, 8, 8});
    k.SetMaskCount(n);
  }
  // An op over the last block only (`block`: with it).
  void on_block(bool block, const char* op, const std::vector<Reg>& ops) {
    if (!block) return;
    mask(blk_elems);
    k.Vector(op, t, ops, VecCfg{1, 1, 1, 1, 8, 8, 8});
    k.SetMaskCount(n);
  }
  // A reduction of the row into ub_r: of the full repeats (a later chunk's into ub_r2, then
  // combined), of the tail (into ub_r2), then of the two (`combine` on one element).
  void reduce_ub(const char* op, const char* combine) {
    chunks({ub_x}, [&](const std::vector<Reg>& ops, std::uint32_t reps, bool first) {
      k.Vector(op, t, {first ? ub_r : ub_r2, ops[0]}, VecCfg{reps, 1, 1, 1, 8, 8, 8});
      if (first) return;
      mask(1);
      k.Vector(combine, t, {ub_r, ub_r, ub_r2}, VecCfg{1, 1, 1, 1, 8, 8, 8});
      k.SetMaskCount(n);
    });
    if (tail) {
      mask(tail);
      k.Vector(op, t, {full ? ub_r2 : ub_r, ub_xt}, VecCfg{1, 1, 1, 1, 8, 8, 8});
      if (full) {
        mask(1);
        k.Vector(combine, t, {ub_r, ub_r, ub_r2}, VecCfg{1, 1, 1, 1, 8, 8, 8});
      }
      k.SetMaskCount(n);
    }
  }
  // The scalar unit reads the element at `at` into v after `event`: its bits, in the low
  // element width.
  void read(Reg at, int event) {
    k.SetFlag(Pipe::V, Pipe::S, event);
    k.WaitFlag(Pipe::V, Pipe::S, event);
    k.LoadUb(v, at, 0);
  }
  void reduce(const char* op, const char* combine, int event) {
    reduce_ub(op, combine);
    read(ub_r, event);
  }
  // ub_acc op= ub_r, on one element (a reduction's chunks of a long row, one by one).
  void fold(const char* combine, Reg ub_acc) {
    mask(1);
    k.Vector(combine, t, {ub_acc, ub_acc, ub_r}, VecCfg{1, 1, 1, 1, 8, 8, 8});
    k.SetMaskCount(n);
  }
  // x times the scale, in place (with `block`, the last block too); v is free before a row.
  void scaled(bool block) {
    if (scale < 0) return;
    k.Li(v, scale);
    each("muls", {ub_x, ub_x, v}, {ub_xt, ub_xt, v});
    on_block(block, "muls", {ub_blk, ub_blk, v});
  }
  // With a mask, before the first row: the rows of zeros (the mask compared with) and of fill.
  void fills() {
    k.Li(v, 0);
    each("dup", {ub_zero, v}, {ub_zero_t, v});
    k.Li(v, fill);
    each("dup", {ub_fill, v}, {ub_fill_t, v});
  }
  // With a mask: ub_x = mask != 0 ? x times the scale : fill (the mask's row read, x from ub_in).
  // Rows of at most 255 repeats (one instruction each) and no last block apart (softmax_masks).
  void select() {
    if (scale >= 0) {
      k.Li(v, scale);
      each("muls", {ub_in, ub_in, v}, {ub_in_t, ub_in_t, v});
    }
    if (full) k.Compare(Cmp::Ne, t, bits, ub_x, ub_zero, VecCfg{full, 1, 1, 1, 8, 8, 8});
    if (tail)
      mask(tail), k.Compare(Cmp::Ne, t, bits_t, ub_xt, ub_zero_t, VecCfg{1, 1, 1, 1, 8, 8, 8}), k.SetMaskCount(n);
    if (full) k.Vector("sel", t, {ub_x, ub_in, ub_fill, bits}, VecCfg{full, 1, 1, 1, 8, 8, 8});
    if (!tail) return;
    mask(tail);
    k.Vector("sel", t, {ub_xt, ub_in_t, ub_fill_t, bits_t}, VecCfg{1, 1, 1, 1, 8, 8, 8});
    k.SetMaskCount(n);
  }
  // exp(x - max) / sum of it, in place at ub_x; with `block`, the same for the row's last block
  // at ub_blk (the same operations on the same values), then the earlier rows' elements of it
  // from ub_blk_y (x + 0: the value).
  void softmax(std::uint64_t sign, bool block) {
    if (masked)
      select();
    else
      scaled(block);
    reduce("redmax", "max", 0);
    k.OpI("xori", v, v, std::int32_t(sign));  // the max negated, added
    each("adds", {ub_x, ub_x, v}, {ub_xt, ub_xt, v});
    each("exp", {ub_x, ub_x}, {ub_xt, ub_xt});
    on_block(block, "adds", {ub_blk, ub_blk, v});
    on_block(block, "exp", {ub_blk, ub_blk});
    reduce("redsum", "add", 1);  // the sum, broadcast over a row, divides
    each("dup", {ub_s, v}, {ub_st, v});
    each("div", {ub_x, ub_x, ub_s}, {ub_xt, ub_xt, ub_st});
    on_block(block, "dup", {ub_blk_s, v});
    on_block(block, "div", {ub_blk, ub_blk, ub_blk_s});
    if (!block || !before) return;
    mask(before);
    k.Li(v, 0);
    k.Vector("adds", t, {ub_blk, ub_blk_y, v}, VecCfg{1, 1, 1, 1, 8, 8, 8});
    k.SetMaskCount(n);
  }
};

// Rows go to blocks in units of `unit` rows whose bytes are whole 32-byte blocks, so no two
// blocks write one 32-byte block. A row is read from its first byte (any alignment) in whole
// blocks. It is written the same way when that stays inside its unit: the last block's bytes
// past the row land in the rows after it, which write them again later (and which, in place,
// are their own inputs as read, untouched by the vector unit). The unit's rows from `apart` on
// would write past the unit: they write their whole blocks, then the block [end - 32, end)
// that ends with the row, computed apart from x's bytes there (with, for a row shorter than a
// block, the earlier rows' results in it from the output). A unit is at least a row's blocks
// and one more, so that block starts inside the unit.
struct Plan {
  std::uint64_t row_bytes, padded, unit, apart;
  std::uint32_t blocks, whole;  // blocks read and written per row; whole ones (written apart)
};

void row_in(KernelBuilder& k, const Row& r, const Plan& p, Reg X, Reg O, Reg off, Reg g, bool block) {
  k.Add(g, X, off);
  k.DataCopy(Pos::UB, r.masked ? r.ub_in : r.ub_x, Pos::GM, g, DataCopyCfg{1, p.blocks, 0, 0});
  if (!block) return;
  k.Addi(g, g, std::int32_t(p.row_bytes) - 32);
  k.DataCopy(Pos::UB, r.ub_blk, Pos::GM, g, DataCopyCfg{1, 1, 0, 0});
  if (!r.before) return;
  k.Add(g, O, off);
  k.Addi(g, g, std::int32_t(p.row_bytes) - 32);
  k.DataCopy(Pos::UB, r.ub_blk_y, Pos::GM, g, DataCopyCfg{1, 1, 0, 0});
}

void row_out(KernelBuilder& k, const Row& r, const Plan& p, Reg O, Reg off, Reg g, bool block) {
  k.Add(g, O, off);
  if (!block) return k.DataCopy(Pos::GM, g, Pos::UB, r.ub_x, DataCopyCfg{1, p.blocks, 0, 0});
  if (p.whole) k.DataCopy(Pos::GM, g, Pos::UB, r.ub_x, DataCopyCfg{1, p.whole, 0, 0});
  k.Addi(g, g, std::int32_t(p.row_bytes) - 32);
  k.DataCopy(Pos::GM, g, Pos::UB, r.ub_blk, DataCopyCfg{1, 1, 0, 0});
}

}  // namespace

namespace {

struct UnitRegs {
  Reg X, O, off, g, row, end, last;
  Reg M = Reg{}, at = Reg{};  // the mask; its row's address
};

// The mask's row for x's row u.row (row % mask_rows), into the UB at ub (single_pass).
void mask_in(KernelBuilder& k, const UnitRegs& u, const SoftmaxShape& s, const Plan& p, Reg ub) {
  k.Li(u.at, s.mask_rows);
  k.Op("rem", u.at, u.row, u.at);
  k.Li(u.g, std::int64_t(p.row_bytes));
  k.Mul(u.at, u.at, u.g);
  k.Add(u.at, u.M, u.at);
  k.DataCopy(Pos::UB, ub, Pos::GM, u.at, DataCopyCfg{1, p.blocks, 0, 0});
}

// Unit `unit`'s rows [unit x u, min(that + u, rows)), one at a time; `body(block)` each, with
// `block` for those from `last` (the unit's first row + apart) on: they are written apart. off
// is the row's byte offset in x and out. With `fence`, a row's first load waits for the last
// row's write (MTE3 -> MTE2; a body that reuses the UB within a row fences its own loads).
template <typename Body>
void unit_rows(KernelBuilder& k, const Plan& p, const SoftmaxShape& s, Reg unit, const UnitRegs& u, bool fence,
               Body body) {
  const bool ragged = p.unit > 1;
  k.Li(u.g, std::int64_t(p.unit));
  k.Mul(u.row, unit, u.g);
  k.Add(u.end, u.row, u.g);
  k.Addi(u.last, u.row, std::int32_t(p.apart));
  k.Li(u.g, s.rows);
  k.Op("min", u.end, u.end, u.g);
  Label top = k.NewLabel(), done = k.NewLabel();
  k.Bind(top);
  k.Branch("bgeu", u.row, u.end, done);
  k.Li(u.g, std::int64_t(p.row_bytes));
  k.Mul(u.off, u.row, u.g);
  if (fence) k.WaitFlag(Pipe::MTE3, Pipe::MTE2, 0);
  if (ragged) {
    Label other = k.NewLabel(), next = k.NewLabel();
    k.Branch("bltu", u.row, u.last, other);
    body(true);
    k.Jump(next);
    k.Bind(other);
    body(false);
    k.Bind(next);
  } else {
    body(false);
  }
  if (fence) k.SetFlag(Pipe::MTE3, Pipe::MTE2, 0);
  k.Addi(u.row, u.row, 1);
  k.Jump(top);
  k.Bind(done);
}

// A row the UB cannot hold twice (128256 f16 classes) goes in three passes over chunks of it of
// `chunk` bytes (255 repeats at most, so each op is one instruction): its max, folded chunk by
// chunk into ub_acc; the sum of exp(x - max), the same way; then exp(x - max) / sum, written
// chunk by chunk. The row is read three times, a chunk's load after the vector unit is done
// with the last (one UB buffer). The last chunk (`last`, 1 to chunk bytes) may end inside a
// block; `whole` is every other. A row written apart has its last block loaded before any
// chunk is written (in place, the chunks before it would change it) and computed beside the
// last chunk.
struct LongRow {
  enum Pass { Max, Sum, Out };
  KernelBuilder& k;
  Row &whole, &last;
  const Plan& p;
  const UnitRegs& u;
  std::uint64_t chunk, last_bytes;
  std::uint32_t chunks;  // before the last
  std::uint64_t sign, lowest;
  Reg acc, mx, at, to, count;

  void load(bool is_last) {
    const std::uint64_t bytes = is_last ? last_bytes : chunk;
    k.WaitFlag(Pipe::MTE3, Pipe::MTE2, 0);  // the chunk before is written (or not to be)
    k.DataCopy(Pos::UB, whole.ub_x, Pos::GM, at, DataCopyCfg{1, std::uint32_t((bytes + 31) / 32), 0, 0});
    k.SetFlag(Pipe::MTE2, Pipe::V, 0);
    k.WaitFlag(Pipe::MTE2, Pipe::V, 0);
  }
  void write(bool is_last, bool block) {
    const std::uint64_t bytes = is_last ? last_bytes : chunk;
    const std::uint32_t blocks = std::uint32_t(block ? bytes / 32 : (bytes + 31) / 32);
    if (blocks) k.DataCopy(Pos::GM, to, Pos::UB, whole.ub_x, DataCopyCfg{1, blocks, 0, 0});
    if (!block) return;
    k.Add(u.g, u.O, u.off);
    k.Addi(u.g, u.g, std::int32_t(p.row_bytes) - 32);
    k.DataCopy(Pos::GM, u.g, Pos::UB, whole.ub_blk, DataCopyCfg{1, 1, 0, 0});
  }
  void step(Pass pass, bool is_last, bool block) {
    Row& r = is_last ? last : whole;
    load(is_last);
    r.scaled(false);  // the last block, once per row (row())
    if (pass == Max) {
      r.reduce_ub("redmax", "max");
      r.fold("max", acc);
    } else {
      r.each("adds", {r.ub_x, r.ub_x, mx}, {r.ub_xt, r.ub_xt, mx});
      r.each("exp", {r.ub_x, r.ub_x}, {r.ub_xt, r.ub_xt});
    }
    if (pass == Sum) {
      r.reduce_ub("redsum", "add");
      r.fold("add", acc);
    } else if (pass == Out) {
      r.each("div", {r.ub_x, r.ub_x, r.ub_s}, {r.ub_xt, r.ub_xt, r.ub_st});
      r.on_block(is_last && block, "adds", {r.ub_blk, r.ub_blk, mx});
      r.on_block(is_last && block, "exp", {r.ub_blk, r.ub_blk});
      r.on_block(is_last && block, "div", {r.ub_blk, r.ub_blk, r.ub_blk_s});
    }
    k.SetFlag(Pipe::V, Pipe::MTE3, 0);
    k.WaitFlag(Pipe::V, Pipe::MTE3, 0);
    if (pass == Out) write(is_last, block);
    k.SetFlag(Pipe::MTE3, Pipe::MTE2, 0);
  }
  void pass(Pass pass, bool block) {
    k.Add(at, u.X, u.off);
    k.Add(to, u.O, u.off);
    if (chunks) {
      k.Li(count, chunks);
      k.Loop(count, [&] {
        step(pass, false, block);
        k.Addi(at, at, std::int32_t(chunk));
        k.Addi(to, to, std::int32_t(chunk));
      });
    }
    step(pass, true, block);
  }
  // ub_acc = value (one element), the start of a fold.
  void start(std::uint64_t value) {
    k.Li(whole.v, std::int64_t(value));
    whole.mask(1);
    k.Vector("dup", whole.t, {acc, whole.v}, VecCfg{1, 1, 1, 1, 8, 8, 8});
    k.SetMaskCount(whole.n);
  }
  void row(bool block) {
    if (block) {
      k.Add(u.g, u.X, u.off);
      k.Addi(u.g, u.g, std::int32_t(p.row_bytes) - 32);
      k.DataCopy(Pos::UB, whole.ub_blk, Pos::GM, u.g, DataCopyCfg{1, 1, 0, 0});
      if (whole.scale >= 0) {
        k.SetFlag(Pipe::MTE2, Pipe::V, 1);
        k.WaitFlag(Pipe::MTE2, Pipe::V, 1);
        k.Li(whole.v, whole.scale);
        whole.on_block(true, "muls", {whole.ub_blk, whole.ub_blk, whole.v});
      }
    }
    start(lowest);
    pass(Max, block);
    whole.read(acc, 0);
    k.OpI("xori", mx, whole.v, std::int32_t(sign));  // the max negated, added
    start(0);
    pass(Sum, block);
    whole.read(acc, 1);  // the sum, broadcast over a chunk, divides
    whole.each("dup", {whole.ub_s, whole.v}, {whole.ub_s, whole.v});
    whole.on_block(block, "dup", {whole.ub_blk_s, whole.v});
    pass(Out, block);
  }
};

// The kernel's registers: its arguments, its share of the units, the row loop's.
struct Frame {
  KernelBuilder& k;
  Reg unit, dim, nunits;
  UnitRegs u;
};

Frame frame(KernelBuilder& k, std::uint64_t units, bool masked) {
  Reg arg = k.reg(), X = k.reg(), O = k.reg(), M = masked ? k.reg() : Reg{};
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0);
  if (masked) k.LoadGm(M, arg, 8);
  k.LoadGm(O, arg, masked ? 16 : 8);
  k.release(arg);
  Frame f{k, k.reg(), k.reg(), k.Const(std::int64_t(units)), {X, O, k.reg(), k.reg(), k.reg(), k.reg(), k.reg()}};
  if (masked) f.u.M = M, f.u.at = k.reg();
  k.GetSpr(f.unit, Spr::BlockId);
  k.GetSpr(f.dim, Spr::BlockDim);
  return f;
}

// Rows the UB holds twice: one pass each (Row::softmax).
void single_pass(KernelBuilder& k, const Frame& f, const Plan& p, const SoftmaxShape& s) {
  const unsigned eb = dtype_bytes(s.dtype);
  const std::uint32_t per_repeat = 256 / eb, full = s.cols / per_repeat, tail = s.cols % per_repeat;
  const std::uint64_t tail_at = std::uint64_t(full) * 256, blk_at = 2 * p.padded + 64;
  Row r{k,
        s.dtype,
        full,
        tail,
        k.Const(per_repeat),
        k.reg(),
        KernelBuilder::zero(),
        k.Const(std::int64_t(p.padded)),
        k.Const(std::int64_t(2 * p.padded)),
        k.Const(std::int64_t(tail_at)),
        k.Const(std::int64_t(p.padded + tail_at)),
        k.Const(std::int64_t(2 * p.padded + 32)),
        k.reg()};
  if (full > 255) r.c0 = k.reg(), r.c1 = k.reg(), r.c2 = k.reg();
  r.scale = scale_operand(s);
  if (s.mask_rows) {  // UB after the last block's 160 bytes: x, the zeros, the fill, then the bits
    r.masked = true, r.fill = std::int64_t(num::bits(s.fill, s.dtype));
    const std::int64_t in = std::int64_t(blk_at + 96), padded = std::int64_t(p.padded), bits = in + 3 * padded;
    r.ub_in = k.Const(in), r.ub_in_t = k.Const(in + std::int64_t(tail_at));
    r.ub_zero = k.Const(in + padded), r.ub_zero_t = k.Const(in + padded + std::int64_t(tail_at));
    r.ub_fill = k.Const(in + 2 * padded), r.ub_fill_t = k.Const(in + 2 * padded + std::int64_t(tail_at));
    r.bits = k.Const(bits), r.bits_t = k.Const(bits + (full * 16 + 31) / 32 * 32);  // the tail's in a block apart
  }
  if (p.unit > 1) {  // rows end inside blocks
    r.ub_blk = k.Const(std::int64_t(blk_at)), r.ub_blk_s = k.Const(std::int64_t(blk_at + 32));
    r.ub_blk_y = k.Const(std::int64_t(blk_at + 64));
    r.blk_elems = 32 / eb, r.before = p.row_bytes < 32 ? std::uint32_t((32 - p.row_bytes) / eb) : 0;
  }
  k.SetMaskCount(r.n);
  if (r.masked) r.fills();
  const UnitRegs& u = f.u;
  k.RoundRobin(f.unit, f.nunits, f.dim, [&] {
    unit_rows(k, p, s, f.unit, u, true, [&](bool block) {
      row_in(k, r, p, u.X, u.O, u.off, u.g, block);
      if (r.masked) mask_in(k, u, s, p, r.ub_x);
      k.SetFlag(Pipe::MTE2, Pipe::V, 0);
      k.WaitFlag(Pipe::MTE2, Pipe::V, 0);
      r.softmax(eb == 4 ? 0x80000000u : 0x8000u, block);
      k.SetFlag(Pipe::V, Pipe::MTE3, 0);
      k.WaitFlag(Pipe::V, Pipe::MTE3, 0);
      row_out(k, r, p, u.O, u.off, u.g, block);
    });
  });
}

// Rows larger: three passes each over chunks of `chunk` bytes (LongRow). UB: a chunk at 0, the
// sum broadcast over a chunk after it, then the reductions (ub_r, ub_r2), ub_acc, and the last
// block and its sum.
void multi_pass(KernelBuilder& k, const Frame& f, const Plan& p, const SoftmaxShape& s, std::uint64_t chunk) {
  const unsigned eb = dtype_bytes(s.dtype);
  const std::uint32_t per_repeat = 256 / eb, chunk_elems = std::uint32_t(chunk / eb);
  const std::uint32_t chunks = (s.cols - 1) / chunk_elems, rem = s.cols - chunks * chunk_elems;
  Reg n = k.Const(per_repeat), m = k.reg(), ub_s = k.Const(std::int64_t(chunk)), v = k.reg();
  Reg ub_r = k.Const(std::int64_t(2 * chunk)), ub_r2 = k.Const(std::int64_t(2 * chunk + 32));
  Row whole{k,    s.dtype, std::uint32_t(chunk / 256), 0,    n,     m, KernelBuilder::zero(),
            ub_s, ub_r,    KernelBuilder::zero(),      ub_s, ub_r2, v};
  if (p.unit > 1)
    whole.ub_blk = k.Const(std::int64_t(2 * chunk + 96)), whole.ub_blk_s = k.Const(std::int64_t(2 * chunk + 128));
  whole.blk_elems = 32 / eb, whole.scale = scale_operand(s);
  Row last = whole;
  last.full = rem / per_repeat, last.tail = rem % per_repeat;
  if (last.tail)
    last.ub_xt = k.Const(std::int64_t(last.full) * 256), last.ub_st = k.Const(chunk + std::int64_t(last.full) * 256);
  LongRow L{k,
            whole,
            last,
            p,
            f.u,
            chunk,
            std::uint64_t(rem) * eb,
            chunks,
            eb == 4 ? 0x80000000u : 0x8000u,
            eb == 4 ? 0xff800000u : 0xfc00u,  // -inf
            k.Const(std::int64_t(2 * chunk + 64)),
            k.reg(),
            k.reg(),
            k.reg(),
            k.reg()};
  k.SetMaskCount(n);
  k.RoundRobin(f.unit, f.nunits, f.dim,
               [&] { unit_rows(k, p, s, f.unit, f.u, false, [&](bool block) { L.row(block); }); });
}

}  // namespace

std::uint32_t softmax_unit_rows(const SoftmaxShape& s) {
  const std::uint64_t row = std::uint64_t(s.cols) * dtype_bytes(s.dtype);
  if (row % 32 == 0) return 1;
  std::uint32_t u = 1;
  while (u * row % 32 || u * row < (row + 31) / 32 * 32 + 32) ++u;
  return u;
}

// One pass: the row, its sums' broadcast, the reductions and the last block (blk_at + 96); with a
// mask, x, the zeros, the fill and the bits after them.
bool softmax_one_pass(const AiCoreConfig& cfg, const SoftmaxShape& s) {
  const std::uint64_t padded = (std::uint64_t(s.cols) * dtype_bytes(s.dtype) + 31) / 32 * 32;
  const std::uint64_t masked = s.mask_rows ? 3 * padded + (padded / 256 * 16 + 31) / 32 * 32 + 32 : 0;
  return 2 * padded + 160 + masked <= cfg.size[kUB];
}

bool softmax_masks(const AiCoreConfig& cfg, const SoftmaxShape& s) {
  const std::uint64_t row = std::uint64_t(s.cols) * dtype_bytes(s.dtype);
  SoftmaxShape m = s;
  m.mask_rows = std::max<std::uint32_t>(1, s.mask_rows);
  return row % 32 == 0 && row / 256 <= 255 && softmax_one_pass(cfg, m);
}

Image softmax_kernel(const AiCoreConfig& cfg, const SoftmaxShape& s) {
  if (s.dtype != DType::F32 && s.dtype != DType::F16) throw Error("softmax: dtype f32 or f16");
  if (s.rows == 0 || s.cols == 0) throw Error("softmax: rows and cols must be at least 1");
  if (!(s.scale > 0)) throw Error("softmax: the scale must be positive");
  if (s.mask_rows && !softmax_masks(cfg, s))
    throw Error("softmax: a mask takes rows of whole 32-byte blocks, at most 255 repeats, that the UB holds with it");
  const unsigned eb = dtype_bytes(s.dtype);
  Plan p{std::uint64_t(s.cols) * eb, 0, softmax_unit_rows(s), 0, 0, 0};
  p.padded = (p.row_bytes + 31) / 32 * 32;
  while (p.apart * p.row_bytes + p.padded <= p.unit * p.row_bytes) ++p.apart;
  p.blocks = std::uint32_t(p.padded / 32), p.whole = std::uint32_t(p.row_bytes / 32);
  const bool one_pass = softmax_one_pass(cfg, s);
  // Several: chunks of whole repeats, 255 at most, two of them beside 160 bytes.
  const std::uint64_t chunk =
      std::min<std::uint64_t>(255, (cfg.size[kUB] - std::min<std::uint64_t>(cfg.size[kUB], 160)) / 512) * 256;
  if (!one_pass && chunk == 0)
    throw Error("softmax: the UB (" + std::to_string(cfg.size[kUB]) + " B) holds no two 256-byte chunks of a row");
  KernelBuilder k;
  const Frame f = frame(k, (s.rows + p.unit - 1) / p.unit, s.mask_rows > 0);
  k.SetFlag(Pipe::MTE3, Pipe::MTE2, 0);  // the UB row is free
  if (one_pass)
    single_pass(k, f, p, s);
  else
    multi_pass(k, f, p, s, chunk);
  k.WaitFlag(Pipe::MTE3, Pipe::MTE2, 0);
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
