#include "elementwise.hpp"

#include "aicore/kernel_builder.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

bool elementwise_binary(const std::string& op) {
  return op == "add" || op == "sub" || op == "mul" || op == "max" || op == "min";
}

// Bytes per element of the wider of x and z.
static unsigned wide_bytes(const ElementwiseShape& s) {
  return std::max(dtype_bytes(s.dtype), s.op == "cast" ? dtype_bytes(s.to) : 0u);
}

std::uint32_t elementwise_tile_bytes(const AiCoreConfig& cfg, const ElementwiseShape& s) {
  const unsigned operands = elementwise_binary(s.op) ? 3 : 2;  // each operand area is a full tile
  std::uint32_t tile = 65280;  // 255 repeats x 256 B
  std::uint32_t p = 256;
  while (p * 2 <= tile && 2ull * operands * p * 2 <= cfg.size[kUB]) p *= 2;
  if (2ull * operands * p > cfg.size[kUB]) throw Error("elementwise: the UB cannot hold two tiles of each operand");
  return p;
}

Image elementwise_kernel(const AiCoreConfig& cfg, const ElementwiseShape& s) {
  static const char* ops[] = {"add", "sub", "mul", "max", "min", "relu", "exp", "abs", "sqrt", "cast"};
  bool known = false;
  for (const char* o : ops) known |= s.op == o;
  if (!known) throw Error("elementwise: unknown op '" + s.op + "'");
  const bool cast = s.op == "cast";
  if (cast) {
    for (DType t : {s.dtype, s.to})
      if (t != DType::F16 && t != DType::BF16 && t != DType::F32 && t != DType::S8 && t != DType::S32)
        throw Error("elementwise: cast between f16, bf16, f32, s8 and s32");
    if (s.dtype == s.to) throw Error("elementwise: a cast to the same type");
  } else if (s.dtype != DType::F16 && s.dtype != DType::F32) {
    throw Error("elementwise: dtype f16 or f32");
  }
  const bool binary = elementwise_binary(s.op);
  const unsigned eb = dtype_bytes(s.dtype), ob = cast ? dtype_bytes(s.to) : eb, wide = wide_bytes(s);
  // A tile is `tile` bytes of the wider type; x and z tiles hold the same number of elements.
  const std::uint32_t tile = elementwise_tile_bytes(cfg, s);
  const std::uint64_t tile_elems = tile / wide;
  if (s.n == 0 || s.n % tile_elems)
    throw Error("elementwise: n must be a multiple of the tile, " + std::to_string(tile_elems) + " elements");
  const std::uint64_t tiles = s.n / tile_elems;
  // UB: [x0 x1 y0 y1 z0 z1], tile bytes (of the wider type) each.
  auto ub = [&](int operand, int b) { return std::int64_t(tile) * (2 * operand + b); };
  const std::uint64_t x_bytes = tile_elems * eb, z_bytes = tile_elems * ob;

  KernelBuilder k;
  Reg arg = k.reg(), X = k.reg(), Y = k.reg(), Z = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0);
  if (binary) k.LoadGm(Y, arg, 8);
  k.LoadGm(Z, arg, binary ? 16 : 8);
  Reg t = k.reg(), dim = k.reg(), ntiles = k.Const(std::int64_t(tiles)), off = k.reg(), g = k.reg(), u0 = k.reg(),
      u1 = k.reg(), u2 = k.reg(), n128 = k.Const(std::min<std::int64_t>(128, 256 / wide));
  k.GetSpr(t, Spr::BlockId);
  k.GetSpr(dim, Spr::BlockDim);
  k.SetMaskCount(n128);
  const DataCopyCfg copy_in{1, std::uint32_t(x_bytes / 32), 0, 0}, copy_out{1, std::uint32_t(z_bytes / 32), 0, 0};
  const VecCfg vec{tile / 256, 1, 1, 1, 8, 8, 8};
  // A conversion's repeat covers 256 B of the wider type: each side advances its own share.
  const VecCfg conv{tile / 256, 1, 1, 1, 8 * ob / wide, 8 * eb / wide, 8};

  for (int b = 0; b < 2; ++b) {
    k.SetFlag(Pipe::V, Pipe::MTE2, b);  // input buffers b free
    k.SetFlag(Pipe::MTE3, Pipe::V, b);  // output buffer b free
  }
  // Tile `t` on buffer b.
  auto one = [&](int b) {
    k.Li(off, std::int64_t(x_bytes));
    k.Mul(off, t, off);
    k.WaitFlag(Pipe::V, Pipe::MTE2, b);
    k.Add(g, X, off);
    k.Li(u0, ub(0, b));
    k.DataCopy(Pos::UB, u0, Pos::GM, g, copy_in);
    if (binary) {
      k.Add(g, Y, off);
      k.Li(u1, ub(1, b));
      k.DataCopy(Pos::UB, u1, Pos::GM, g, copy_in);
    }
    k.SetFlag(Pipe::MTE2, Pipe::V, b);

    k.WaitFlag(Pipe::MTE2, Pipe::V, b);
    k.WaitFlag(Pipe::MTE3, Pipe::V, b);
    k.Li(u0, ub(0, b));
    k.Li(u2, ub(2, b));
    if (cast) {
      k.Cast(s.to, s.dtype, u2, u0, conv, Round::Rint);
    } else if (binary) {
      k.Li(u1, ub(1, b));
      k.Vector(s.op.c_str(), s.dtype, {u2, u0, u1}, vec);
    } else {
      k.Vector(s.op.c_str(), s.dtype, {u2, u0}, vec);
    }
    k.SetFlag(Pipe::V, Pipe::MTE2, b);
    k.SetFlag(Pipe::V, Pipe::MTE3, b);

    k.WaitFlag(Pipe::V, Pipe::MTE3, b);
    k.Li(off, std::int64_t(z_bytes));
    k.Mul(off, t, off);
    k.Add(g, Z, off);
    k.DataCopy(Pos::GM, g, Pos::UB, u2, copy_out);
    k.SetFlag(Pipe::MTE3, Pipe::V, b);
    k.Add(t, t, dim);
  };
  // This block's tiles: blockid, blockid + blockdim, ...; two per turn (buffers 0 and 1).
  Label top = k.NewLabel(), done = k.NewLabel();
  k.Bind(top);
  k.Branch("bgeu", t, ntiles, done);
  one(0);
  k.Branch("bgeu", t, ntiles, done);
  one(1);
  k.Jump(top);
  k.Bind(done);
  for (int b = 0; b < 2; ++b) {
    k.WaitFlag(Pipe::V, Pipe::MTE2, b);
    k.WaitFlag(Pipe::MTE3, Pipe::V, b);
  }
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
