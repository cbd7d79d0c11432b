// SPDX-License-Identifier: MIT
#include "elementwise.hpp"

#include <algorithm>
#include <vector>

#include "aicore/kernel_builder.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

bool elementwise_binary(const std::string& op) {
  return op == "add" || op == "sub" || op == "mul" || op == "max" || op == "min";
}

unsigned elementwise_wide_bytes(const ElementwiseShape& s) {
  return std::max(dtype_bytes(s.dtype), s.op == "cast" ? dtype_bytes(s.to) : 0u);
}

std::uint64_t elementwise_block_elems(const ElementwiseShape& s) {
  return 32 / std::min(dtype_bytes(s.dtype), s.op == "cast" ? dtype_bytes(s.to) : dtype_bytes(s.dtype));
}

std::uint32_t elementwise_tile_bytes(const AiCoreConfig& cfg, const ElementwiseShape& s) {
  const unsigned operands = elementwise_binary(s.op) ? 3 : 2;  // each operand area is a full tile
  std::uint32_t tile = 65280;                                  // 255 repeats x 256 B
  std::uint32_t p = 256;
  // Two tiles of each operand, and 768 bytes for the last block of a ragged n (ElementwiseCode).
  while (p * 2 <= tile && 2ull * operands * p * 2 + 768 <= cfg.size[kUB]) p *= 2;
  if (2ull * operands * p + 768 > cfg.size[kUB])
    throw Error("elementwise: the UB cannot hold two tiles of each operand");
  return p;
}

namespace {

void check_shape(const ElementwiseShape& s) {
  static const char* ops[] = {"add", "sub", "mul", "max", "min", "relu", "exp", "abs", "sqrt", "cast"};
  bool known = false;
  for (const char* o : ops) known |= s.op == o;
  if (!known) throw Error("elementwise: unknown op '" + s.op + "'");
  if (s.op == "cast") {
    for (DType t : {s.dtype, s.to})
      if (t != DType::F16 && t != DType::BF16 && t != DType::F32 && t != DType::S8 && t != DType::S32)
        throw Error("elementwise: cast between f16, bf16, f32, s8 and s32");
    if (s.dtype == s.to) throw Error("elementwise: a cast to the same type");
  } else if (s.dtype != DType::F16 && s.dtype != DType::F32) {
    throw Error("elementwise: dtype f16 or f32");
  }
}

// How one tile moves and computes: a whole tile, or a piece of the tail (from element start).
struct TileCfg {
  DataCopyCfg copy_in, copy_out;
  VecCfg vec, conv;
  std::uint64_t start = 0;
};

// The kernel's code: two tiles per turn, double-buffered (MTE2 in, V, MTE3 out). When n is not
// a whole number of tiles, one block also does the tail, in whole 32-byte blocks of x and z
// (what a copy moves): the whole blocks after the last tile, then, if n ends inside a block,
// the last block's worth of elements ending at n, which recomputes a few elements already done
// (the same values: the ops are pointwise). That last block may reach back into the last whole
// tile, so the block that owns that tile does the tail, and reads the last block's inputs
// first, before it writes anything: in place (z an input), what it recomputes are still inputs.
struct ElementwiseCode {
  const ElementwiseShape& s;
  bool binary, cast;
  std::uint32_t tile;  // bytes of the wider type
  std::uint64_t x_bytes, z_bytes;
  TileCfg whole;
  std::vector<TileCfg> tail;  // its pieces; the last one (the block ending at n) when `ragged`
  bool ragged = false;
  KernelBuilder k{};
  Reg arg{}, X{}, Y{}, Z{}, t{}, dim{}, ntiles{}, off{}, g{}, u0{}, u1{}, u2{}, n128{};

  // [x0 x1 y0 y1 z0 z1] ([x0 x1 z0 z1] for one input), then the ragged last block's x, y and z
  // (b = 2), 256 bytes each: what elementwise_tile_bytes counts.
  std::int64_t ub(int operand, int b) const {
    const int operands = binary ? 3 : 2, at = operand == 2 && !binary ? 1 : operand;
    return b == 2 ? std::int64_t(tile) * 2 * operands + 256 * operand : std::int64_t(tile) * (2 * at + b);
  }
  // This tile's byte offset in an operand of `bytes` per element: t x tile, or the piece's.
  void offset(const TileCfg* piece, std::uint64_t tile_bytes, unsigned bytes);
  void load(int b, const TileCfg* piece = nullptr);
  void compute(int b, const TileCfg* piece = nullptr);
  void store(int b, const TileCfg* piece = nullptr);
};

void ElementwiseCode::offset(const TileCfg* piece, std::uint64_t tile_bytes, unsigned bytes) {
  if (piece) return k.Li(off, std::int64_t(piece->start * bytes));
  k.Li(off, std::int64_t(tile_bytes));
  k.Mul(off, t, off);
}

void ElementwiseCode::load(int b, const TileCfg* piece) {
  const TileCfg& c = piece ? *piece : whole;
  offset(piece, x_bytes, dtype_bytes(s.dtype));
  if (b < 2) k.WaitFlag(Pipe::V, Pipe::MTE2, b);  // buffer 2 (the last block) is used once
  k.Add(g, X, off);
  k.Li(u0, ub(0, b));
  k.DataCopy(Pos::UB, u0, Pos::GM, g, c.copy_in);
  if (binary) {
    k.Add(g, Y, off);
    k.Li(u1, ub(1, b));
    k.DataCopy(Pos::UB, u1, Pos::GM, g, c.copy_in);
  }
  k.SetFlag(Pipe::MTE2, Pipe::V, b);
}

void ElementwiseCode::compute(int b, const TileCfg* piece) {
  const TileCfg& c = piece ? *piece : whole;
  k.WaitFlag(Pipe::MTE2, Pipe::V, b);
  if (b < 2) k.WaitFlag(Pipe::MTE3, Pipe::V, b);
  k.Li(u0, ub(0, b));
  k.Li(u2, ub(2, b));
  if (cast) {
    k.Cast(s.to, s.dtype, u2, u0, c.conv, Round::Rint);
  } else if (binary) {
    k.Li(u1, ub(1, b));
    k.Vector(s.op.c_str(), s.dtype, {u2, u0, u1}, c.vec);
  } else {
    k.Vector(s.op.c_str(), s.dtype, {u2, u0}, c.vec);
  }
  if (b < 2) k.SetFlag(Pipe::V, Pipe::MTE2, b);
  k.SetFlag(Pipe::V, Pipe::MTE3, b);
}

void ElementwiseCode::store(int b, const TileCfg* piece) {
  const TileCfg& c = piece ? *piece : whole;
  k.WaitFlag(Pipe::V, Pipe::MTE3, b);
  offset(piece, z_bytes, cast ? dtype_bytes(s.to) : dtype_bytes(s.dtype));
  k.Add(g, Z, off);
  k.DataCopy(Pos::GM, g, Pos::UB, u2, c.copy_out);
  if (b < 2) k.SetFlag(Pipe::MTE3, Pipe::V, b);
  k.Add(t, t, dim);
}

// A tile of `elems` elements: its copies in whole 32-byte blocks, its vector repeats of 256 B of
// the wider type (a conversion's sides advance by their own share of it).
TileCfg tile_cfg(std::uint64_t elems, unsigned eb, unsigned ob, unsigned wide, std::uint64_t start = 0) {
  const std::uint32_t repeats = std::uint32_t((elems * wide + 255) / 256);
  return {DataCopyCfg{1, std::uint32_t(elems * eb / 32), 0, 0}, DataCopyCfg{1, std::uint32_t(elems * ob / 32), 0, 0},
          VecCfg{repeats, 1, 1, 1, 8, 8, 8}, VecCfg{repeats, 1, 1, 1, 8 * ob / wide, 8 * eb / wide, 8}, start};
}

}  // namespace

Image elementwise_kernel(const AiCoreConfig& cfg, const ElementwiseShape& s) {
  check_shape(s);
  const bool cast = s.op == "cast", binary = elementwise_binary(s.op);
  const unsigned eb = dtype_bytes(s.dtype), ob = cast ? dtype_bytes(s.to) : eb, wide = elementwise_wide_bytes(s);
  // A tile is `tile` bytes of the wider type; x and z tiles hold the same number of elements.
  const std::uint32_t tile = elementwise_tile_bytes(cfg, s);
  const std::uint64_t tile_elems = tile / wide;
  // Copies move whole 32-byte blocks: the tail is a whole number of blocks of x and of z, its
  // last block ending at n. Under one block (n < 16 f16 elements) there is nothing to end at: one
  // block from element 0, its copies past n staying in the tensors' memory (whole 4 KiB pages).
  const std::uint64_t block_elems = elementwise_block_elems(s);
  const std::uint64_t full = s.n / tile_elems, rest = s.n % tile_elems;
  ElementwiseCode c{s, binary, cast, tile, tile_elems * eb, tile_elems * ob, tile_cfg(tile_elems, eb, ob, wide), {}};
  if (s.n < block_elems) c.tail.push_back(tile_cfg(block_elems, eb, ob, wide, 0));
  if (const std::uint64_t whole_blocks = rest / block_elems * block_elems)
    c.tail.push_back(tile_cfg(whole_blocks, eb, ob, wide, full * tile_elems));
  c.ragged = s.n >= block_elems && rest % block_elems != 0;
  if (c.ragged) c.tail.push_back(tile_cfg(block_elems, eb, ob, wide, s.n - block_elems));
  KernelBuilder& k = c.k;
  c.arg = k.reg(), c.X = k.reg(), c.Y = k.reg(), c.Z = k.reg();
  k.GetSpr(c.arg, Spr::ArgBase);
  k.LoadGm(c.X, c.arg, 0);
  if (binary) k.LoadGm(c.Y, c.arg, 8);
  k.LoadGm(c.Z, c.arg, binary ? 16 : 8);
  c.t = k.reg(), c.dim = k.reg(), c.ntiles = k.Const(std::int64_t(full)), c.off = k.reg(), c.g = k.reg(),
  c.u0 = k.reg(), c.u1 = k.reg(), c.u2 = k.reg(), c.n128 = k.Const(std::min<std::int64_t>(128, 256 / wide));
  k.GetSpr(c.t, Spr::BlockId);
  k.GetSpr(c.dim, Spr::BlockDim);
  k.SetMaskCount(c.n128);
  for (int b = 0; b < 2; ++b) {
    k.SetFlag(Pipe::V, Pipe::MTE2, b);  // input buffers b free
    k.SetFlag(Pipe::MTE3, Pipe::V, b);  // output buffer b free
  }
  // The tail's block: the last whole tile's (block 0 without one); it reads the ragged last
  // block's inputs (buffer 2) before anything else.
  Reg owner = k.Const(full ? std::int64_t(full - 1) : 0);
  k.Op("rem", owner, owner, c.dim);
  if (c.ragged) {
    Label not_owner = k.NewLabel();
    k.Branch("bne", c.t, owner, not_owner);
    c.load(2, &c.tail.back());
    k.Bind(not_owner);
  }
  // This block's tiles: blockid, blockid + blockdim, ...; two per turn (buffers 0 and 1).
  Label top = k.NewLabel(), done = k.NewLabel();
  k.Bind(top);
  for (int b = 0; b < 2; ++b) {
    k.Branch("bgeu", c.t, c.ntiles, done);
    c.load(b), c.compute(b), c.store(b);
  }
  k.Jump(top);
  k.Bind(done);
  if (rest) {  // the tail: its whole blocks, then the ragged last block already loaded
    Label no_tail = k.NewLabel();
    k.GetSpr(c.t, Spr::BlockId);
    k.Branch("bne", c.t, owner, no_tail);
    if (!c.ragged || c.tail.size() == 2) c.load(0, &c.tail[0]), c.compute(0, &c.tail[0]), c.store(0, &c.tail[0]);
    if (c.ragged) c.compute(2, &c.tail.back()), c.store(2, &c.tail.back());
    k.Bind(no_tail);
  }
  for (int b = 0; b < 2; ++b) {
    k.WaitFlag(Pipe::V, Pipe::MTE2, b);
    k.WaitFlag(Pipe::MTE3, Pipe::V, b);
  }
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
