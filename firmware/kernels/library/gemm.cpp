#include "gemm.hpp"

#include "aicore/kernel_builder.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

std::string GemmTiling::str() const {
  return std::to_string(mt) + " x " + std::to_string(nt) + " tiles, k in chunks of " + std::to_string(kt);
}

GemmTiling gemm_tiling(const AiCoreConfig& cfg, const GemmShape& s) {
  const bool int8 = s.in == DType::S8;
  if (s.in != DType::F16 && s.in != DType::BF16 && !int8) throw Error("gemm: inputs are f16, bf16 or s8");
  if (int8 && !s.b_transposed) throw Error("gemm: an int8 B must be given transposed (n x k): set b_transposed");
  if (int8 && s.out != DType::S32) throw Error("gemm: int8 inputs give an s32 output");
  if (!int8 && s.out != DType::F32 && s.out != DType::F16 && s.out != DType::BF16)
    throw Error("gemm: f16 and bf16 inputs give an f32, f16 or bf16 output");
  const std::uint32_t k0 = 32 / dtype_bytes(s.in);
  if (s.m % 16 || s.n % 16 || s.k % k0 || !s.m || !s.n || !s.k)
    throw Error("gemm: m and n must be positive multiples of 16 and k of " + std::to_string(k0) + " (got " +
                std::to_string(s.m) + " x " + std::to_string(s.k) + " x " + std::to_string(s.n) + ")");
  GemmTiling t;
  for (std::uint32_t kt : {64u, 32u, 16u})  // the largest chunk up to 64 that divides k
    if (s.k % kt == 0 && kt % k0 == 0) {
      t.kt = kt;
      break;
    }
  const unsigned eb = dtype_bytes(s.in);
  const std::uint64_t l0a = cfg.size[kL0A], l0b = cfg.size[kL0B], l0c = cfg.size[kL0C], l1 = cfg.size[kL1];
  // The largest tiles (by area) that divide m and n and fit: L0A and L0B hold two chunks each,
  // L0C one output tile, L1 two chunks of A and of B; one transposing load moves a B chunk.
  std::uint64_t best = 0;
  for (std::uint32_t mt = 16; mt <= 256; mt *= 2)
    for (std::uint32_t nt = 16; nt <= 256; nt *= 2) {
      if (s.m % mt || s.n % nt) continue;
      const bool fits = 2ull * mt * t.kt * eb <= l0a && 2ull * t.kt * nt * eb <= l0b &&
                        std::uint64_t(mt) * nt * 4 <= l0c && (t.kt / k0) * (nt / 16) <= 255 &&
                        2ull * (std::uint64_t(mt) * t.kt + std::uint64_t(t.kt) * nt) * eb <= l1;
      if (fits && std::uint64_t(mt) * nt > best) best = std::uint64_t(mt) * nt, t.mt = mt, t.nt = nt;
    }
  if (!best)
    throw Error("gemm: no tile of 16..256 that divides m and n fits L0A (" + std::to_string(l0a) + " B), L0B (" +
                std::to_string(l0b) + " B), L0C (" + std::to_string(l0c) + " B) and L1");
  return t;
}

namespace {

Image build(const AiCoreConfig& cfg, const GemmShape& s, const ConvShape* conv) {
  const GemmTiling t = gemm_tiling(cfg, s);
  const DType in = s.in, acc = in == DType::S8 ? DType::S32 : DType::F32;
  const unsigned eb = dtype_bytes(in);
  const std::uint32_t k0 = 32 / eb;
  const std::uint32_t mf = t.mt / 16, nf = t.nt / 16, kf = t.kt / k0;
  const std::uint32_t chunks = s.k / t.kt;
  const std::uint32_t tiles_n = s.n / t.nt, tiles = (s.m / t.mt) * tiles_n;
  const unsigned ob = dtype_bytes(s.out);
  // L1 holds nb chunks (four when they fit, to hide the memory latency; else two), L0A / L0B
  // two: chunk i uses L1 buffer i % nb and L0 buffer i % 2.
  const std::uint64_t a_bytes = std::uint64_t(t.mt) * t.kt * eb, b_bytes = std::uint64_t(t.kt) * t.nt * eb;
  // A conv keeps its whole feature map in L1 instead of A chunks.
  const std::uint64_t fm_bytes = conv ? std::uint64_t(conv->c) * conv->h * conv->w * 2 : 0;
  const std::uint64_t fm_area = (fm_bytes + 511) / 512 * 512;
  auto l1_need = [&](int n) { return conv ? fm_area + n * b_bytes : n * (a_bytes + b_bytes); };
  const int nb = l1_need(4) <= cfg.size[kL1] ? 4 : 2;
  if (l1_need(nb) > cfg.size[kL1])
    throw Error(conv ? "conv2d: the feature map (" + std::to_string(fm_bytes) + " B) and two weight chunks do not fit L1"
                     : "gemm: two chunks of A and B do not fit L1");
  std::uint64_t l1a[4], l1b[4];
  for (int b = 0; b < nb; ++b) {
    l1a[b] = std::uint64_t(b) * a_bytes;
    l1b[b] = (conv ? fm_area : nb * a_bytes) + std::uint64_t(b) * b_bytes;
  }
  const std::uint64_t l0a[2] = {0, a_bytes}, l0b[2] = {0, b_bytes};

  KernelBuilder k;
  const Reg zero = KernelBuilder::zero();
  Reg arg = k.reg(), A = k.reg(), B = k.reg(), C = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(A, arg, 0);
  k.LoadGm(B, arg, 8);
  k.LoadGm(C, arg, 16);
  Reg tile = k.reg(), dim = k.reg(), ntiles = k.Const(tiles), ntn = k.Const(tiles_n);
  k.GetSpr(tile, Spr::BlockId);
  k.GetSpr(dim, Spr::BlockDim);
  Reg a_ptr = k.reg(), b_ptr = k.reg(), c_ptr = k.reg(), tmp = k.reg(), init = k.reg(), dst = k.reg(), src = k.reg();
  Reg row = k.reg(), col = k.reg(), count = k.reg(), kstart = k.reg(), window = k.reg();
  Load3dCfg filter;
  if (conv) filter = Load3dCfg{conv->kh, conv->kw, conv->stride_h, conv->stride_w, conv->dil_h, conv->dil_w, conv->c};

  if (conv) {
    // The feature map goes into L1 once; MTE1 waits for it before its first img2col.
    k.Li(tmp, std::int64_t(Fmatrix{conv->w, conv->h, conv->pad_l, conv->pad_r, conv->pad_t, conv->pad_b}.pack()));
    k.SetSpr(Spr::Fmatrix, tmp);
    k.SetSpr(Spr::PadValue, zero);
    k.Li(dst, 0);
    k.DataCopy(Pos::L1, dst, Pos::GM, A, DataCopyCfg{1, std::uint32_t(fm_bytes / 32), 0, 0});  // fp16 feature map
    k.SetFlag(Pipe::MTE2, Pipe::MTE1, 7);  // event 7: the L1 buffers use 0..nb-1
    k.WaitFlag(Pipe::MTE2, Pipe::MTE1, 7);
  }

  // Prologue: every buffer starts free.
  for (int b = 0; b < nb; ++b) k.SetFlag(Pipe::MTE1, Pipe::MTE2, b);  // L1 buffer b
  for (int b = 0; b < 2; ++b) k.SetFlag(Pipe::M, Pipe::MTE1, b);      // L0A / L0B buffer b
  k.SetFlag(Pipe::FIX, Pipe::M, 0);  // L0C

  // MTE2 half of k chunk c: GM -> L1 buffer c % nb; a_ptr and b_ptr advance to the next chunk.
  auto load = [&](std::uint32_t c) {
    const int b = int(c % nb);
    k.WaitFlag(Pipe::MTE1, Pipe::MTE2, b);
    if (!conv) {
      k.Li(dst, std::int64_t(l1a[b]));
      k.Nd2Nz(in, dst, a_ptr, Nd2NzCfg{t.mt, t.kt, s.k, t.mt});
      k.Addi(a_ptr, a_ptr, std::int32_t(t.kt * eb));
    }
    k.Li(dst, std::int64_t(l1b[b]));
    if (s.b_transposed) {  // B^T chunk: nt rows of n, kt columns of k
      k.Nd2Nz(in, dst, b_ptr, Nd2NzCfg{t.nt, t.kt, s.k, t.nt});
      k.Addi(b_ptr, b_ptr, std::int32_t(t.kt * eb));
    } else {
      k.Nd2Nz(in, dst, b_ptr, Nd2NzCfg{t.kt, t.nt, s.n, t.kt});
      k.Li(tmp, std::int64_t(t.kt) * s.n * eb);
      k.Add(b_ptr, b_ptr, tmp);
    }
    k.SetFlag(Pipe::MTE2, Pipe::MTE1, b);
  };

  // MTE1 and cube half of k chunk c: L1 buffer c % nb -> L0 buffer c % 2, then C (+)= A x B.
  auto compute = [&](std::uint32_t c) {
    const int b = int(c % nb), l0 = int(c % 2);
    k.WaitFlag(Pipe::MTE2, Pipe::MTE1, b);
    k.WaitFlag(Pipe::M, Pipe::MTE1, l0);
    if (conv) {
      // A: the img2col window of this tile's rows and this chunk's columns.
      k.Op("or", window, kstart, a_ptr);  // a_ptr holds (m_start << 32) | (kt << 16) | (mt << 48)
      k.Li(dst, std::int64_t(l0a[l0]));
      k.LoadData3D(Pos::L0A, in, dst, zero, filter, window);
      k.Addi(kstart, kstart, std::int32_t(t.kt));
    } else {
      // A: one load per row of fractals (its kf fractals sit mf apart in Nz) into zZ order.
      for (std::uint32_t i = 0; i < mf; ++i) {
        k.Li(dst, std::int64_t(l0a[l0] + std::uint64_t(i) * kf * 512));
        k.Li(src, std::int64_t(l1a[b] + std::uint64_t(i) * 512));
        k.LoadData(Pos::L0A, in, dst, src, Load2dCfg{kf, mf, 0});
      }
    }
    if (s.b_transposed) {
      // B^T in Nz: its fractals are already B^T's; one load per row of fractals, as for A.
      for (std::uint32_t l = 0; l < nf; ++l) {
        k.Li(dst, std::int64_t(l0b[l0] + std::uint64_t(l) * kf * 512));
        k.Li(src, std::int64_t(l1b[b] + std::uint64_t(l) * 512));
        k.LoadData(Pos::L0B, in, dst, src, Load2dCfg{kf, nf, 0});
      }
    } else {
      // B in Nz: its fractal order is B^T's zN order already; transpose inside each fractal.
      k.Li(dst, std::int64_t(l0b[l0]));
      k.Li(src, std::int64_t(l1b[b]));
      k.LoadData(Pos::L0B, in, dst, src, Load2dCfg{kf * nf, 1, 0}, true);
    }
    k.SetFlag(Pipe::MTE1, Pipe::MTE2, b);
    k.SetFlag(Pipe::MTE1, Pipe::M, l0);

    k.WaitFlag(Pipe::MTE1, Pipe::M, l0);
    // C (+)= A x B; `init` holds the init bit for a tile's first chunk, then 0.
    k.Li(tmp, std::int64_t(MmadCfg{t.mt, t.kt, t.nt, false}.pack()));
    k.Op("or", tmp, tmp, init);
    k.Li(dst, std::int64_t(l0a[l0]));
    k.Li(src, std::int64_t(l0b[l0]));
    k.Mmad(acc, in, zero, dst, src, tmp);
    k.Li(init, 0);
    k.SetFlag(Pipe::M, Pipe::MTE1, l0);
  };

  // Output tiles round-robin over the blocks: tile, tile + blockdim, ...
  k.RoundRobin(tile, ntiles, dim, [&] {
    // Tile (row, col) of the tiles_n-wide grid.
    k.Op("divu", row, tile, ntn);
    k.Op("rem", col, tile, ntn);
    // a_ptr = A + row * mt * k * 2; b_ptr = B + col * nt * 2; c_ptr = C + (row * mt * n + col * nt) * ob
    if (conv) {
      // For load3d: (m_start << 32) | (kt << 16) | (mt << 48), with m_start = row x mt; k_start
      // (bits 15:0) counts up per chunk from 0.
      k.Li(tmp, std::int64_t(t.mt));
      k.Mul(a_ptr, row, tmp);
      k.OpI("shli", a_ptr, a_ptr, 32);
      k.Li(tmp, std::int64_t(std::uint64_t(t.kt) << 16 | std::uint64_t(t.mt) << 48));
      k.Op("or", a_ptr, a_ptr, tmp);
      k.Li(kstart, 0);
    } else {
      k.Li(tmp, std::int64_t(t.mt) * s.k * eb);
      k.Mul(a_ptr, row, tmp);
      k.Add(a_ptr, a_ptr, A);
    }
    k.Li(tmp, s.b_transposed ? std::int64_t(t.nt) * s.k * eb : std::int64_t(t.nt) * eb);
    k.Mul(b_ptr, col, tmp);
    k.Add(b_ptr, b_ptr, B);
    k.Li(tmp, std::int64_t(t.mt) * s.n * ob);
    k.Mul(c_ptr, row, tmp);
    k.Li(tmp, std::int64_t(t.nt) * ob);
    k.Mul(tmp, col, tmp);
    k.Add(c_ptr, c_ptr, tmp);
    k.Add(c_ptr, c_ptr, C);
    k.Li(init, std::int64_t(1) << 36);  // MmadCfg.init
    // The cube may overwrite L0C once FixPipe has read the previous tile.
    k.WaitFlag(Pipe::FIX, Pipe::M, 0);
    // Software pipelined: MTE2 runs nb - 1 chunks ahead of MTE1 and the cube in program order,
    // so the scalar unit, which issues in order, never holds a load behind compute work that
    // waits for an earlier load. Slot j loads chunk j and computes chunk j - ahead; buffers are
    // immediates (event ids), so the steady state is unrolled nb slots per loop iteration.
    const std::uint32_t ahead = std::min<std::uint32_t>(nb - 1, chunks);
    auto slot = [&](std::uint32_t j) {
      if (j < chunks) load(j);
      if (j >= ahead) compute(j - ahead);
    };
    for (std::uint32_t j = 0; j < ahead; ++j) slot(j);
    const std::uint32_t steady = chunks - ahead, iters = steady / nb;
    if (iters) {
      k.Li(count, iters);
      k.Loop(count, [&] {
        for (std::uint32_t j = ahead; j < ahead + nb; ++j) slot(j);  // the same buffers every iteration
      });
    }
    for (std::uint32_t j = ahead + iters * nb; j < chunks + ahead; ++j) slot(j);
    k.SetFlag(Pipe::M, Pipe::FIX, 0);
    k.WaitFlag(Pipe::M, Pipe::FIX, 0);
    k.Fixpipe(Pos::GM, s.out, acc, c_ptr, zero, FixpCfg{t.mt, t.nt, s.n}, zero, s.relu);
    k.SetFlag(Pipe::FIX, Pipe::M, 0);
  });
  // Epilogue: take back the free flags so every flag is clear when the block ends.
  for (int b = 0; b < nb; ++b) k.WaitFlag(Pipe::MTE1, Pipe::MTE2, b);
  for (int b = 0; b < 2; ++b) k.WaitFlag(Pipe::M, Pipe::MTE1, b);
  k.WaitFlag(Pipe::FIX, Pipe::M, 0);
  k.End();
  return k.Build();
}

}  // namespace

Image gemm_kernel(const AiCoreConfig& cfg, const GemmShape& s) { return build(cfg, s, nullptr); }

GemmShape conv2d_gemm_shape(const ConvShape& c) {
  // C (ho x wo, cout) = A (ho x wo, c x kh x kw) x B (c x kh x kw, cout), with B given as B^T.
  return GemmShape{c.ho() * c.wo(), c.k(), c.cout, DType::F32, DType::F16, true};
}

Image conv2d_kernel(const AiCoreConfig& cfg, const ConvShape& c) {
  if (c.c == 0 || c.c % 16 || c.cout == 0 || c.cout % 16)
    throw Error("conv2d: c and cout must be positive multiples of 16");
  if (!c.kh || !c.kw || !c.stride_h || !c.stride_w || !c.dil_h || !c.dil_w)
    throw Error("conv2d: filter size, stride and dilation must be at least 1");
  if (c.h + c.pad_t + c.pad_b < c.dil_h * (c.kh - 1) + 1 || c.w + c.pad_l + c.pad_r < c.dil_w * (c.kw - 1) + 1)
    throw Error("conv2d: the filter is larger than the padded input");
  const GemmShape g = conv2d_gemm_shape(c);
  if (g.m % 16) throw Error("conv2d: ho x wo = " + std::to_string(g.m) + " must be a multiple of 16");
  return build(cfg, g, &c);
}

}  // namespace dvp::kernels
