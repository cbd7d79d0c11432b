// SPDX-License-Identifier: MIT
#include "pool.hpp"

#include <algorithm>
#include <cstring>

#include "aicore/kernel_builder.hpp"
#include "aicore/numeric.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

namespace {

// The first output row (or column) whose taps all fall in the padding, or `out` if none does:
// `first` is its first tap's place in the input (the padding before it negative), taps `dil`
// apart.
std::uint32_t all_padding(std::uint32_t out, std::uint32_t stride, std::uint32_t pad, std::uint32_t k,
                          std::uint32_t dil, std::uint32_t in) {
  for (std::uint32_t o = 0; o < out; ++o) {
    const std::int64_t first = std::int64_t(o) * stride - pad;
    bool inside = false;
    for (std::uint32_t i = 0; i < k && !inside; ++i)
      inside = first + std::int64_t(i) * dil >= 0 && first + std::int64_t(i) * dil < in;
    if (!inside) return o;
  }
  return out;
}

void check_pool(const PoolShape& s) {
  if (s.mode != "max" && s.mode != "avg") throw Error("pool: mode max or avg");
  if (!s.c || !s.h || !s.w) throw Error("pool: h, w and c must be at least 1");
  if (!s.kh || !s.kw || !s.stride_h || !s.stride_w || !s.dil_h || !s.dil_w)
    throw Error("pool: window, strides and dilations must be at least 1");
  if (s.span_h() > s.h + s.pad_t + s.pad_b || s.span_w() > s.w + s.pad_l + s.pad_r)
    throw Error("pool: the window must fit the padded input");
  // A window all in padding would read only the pad value (-inf for max); with dilation its
  // taps can step over an input shorter than the gaps.
  if (s.pad_t >= s.span_h() || s.pad_b >= s.span_h() || s.pad_l >= s.span_w() || s.pad_r >= s.span_w())
    throw Error("pool: padding must be smaller than the window");
  if (const std::uint32_t r = all_padding(s.ho(), s.stride_h, s.pad_t, s.kh, s.dil_h, s.h); r < s.ho())
    throw Error("pool: the window of output row " + std::to_string(r) + " has all its taps in the padding");
  if (const std::uint32_t c = all_padding(s.wo(), s.stride_w, s.pad_l, s.kw, s.dil_w, s.w); c < s.wo())
    throw Error("pool: the window of output column " + std::to_string(c) + " has all its taps in the padding");
  if (s.stride_w > 255 / 8) throw Error("pool: stride_w above 31 does not fit a repeat stride");
  if (s.w > 65535 || s.wo() > 65535)
    throw Error("pool: an input or output row of more than 65535 positions does not fit one copy");
}

std::uint64_t padded_w(const PoolShape& s) { return std::uint64_t(s.w) + s.pad_l + s.pad_r; }
std::uint64_t band_rows_in(const PoolShape& s, std::uint64_t bo) { return (bo - 1) * s.stride_h + s.span_h(); }
// UB bytes of a band of `bo` output rows: its padded input rows, rounded up to whole 256-byte
// repeats (the pad fill writes whole repeats: it must not reach the output rows, which MTE3
// may still be copying out), then its output rows.
std::uint64_t band_in_bytes(const PoolShape& s, std::uint64_t bo) {
  return (band_rows_in(s, bo) * padded_w(s) * 32 + 255) / 256 * 256;
}
std::uint64_t band_ub(const PoolShape& s, std::uint64_t bo) { return band_in_bytes(s, bo) + bo * s.wo() * 32; }

// Emits the vector work of one band: output rows [0, bo) of the band's UB at `ub_out`, the
// band's padded input at UB 0.
void band_vector(KernelBuilder& k, const PoolShape& s, std::uint32_t bo, std::uint64_t ub_out, Reg d, Reg src, Reg n,
                 Reg sc) {
  const std::uint32_t full = s.wo() / 8, tail = s.wo() % 8;
  const std::uint64_t wp = padded_w(s);
  for (std::uint32_t oh = 0; oh < bo; ++oh)
    for (int part = 0; part < 2; ++part) {  // `full` repeats of 8 positions, then a masked one
      const std::uint32_t reps = part == 0 ? full : (tail ? 1 : 0);
      if (!reps) continue;
      const std::uint32_t first_wo = part == 0 ? 0 : full * 8;
      k.Li(n, part == 0 ? 128 : std::int64_t(tail) * 16);
      k.SetMaskCount(n);
      const VecCfg cfg_w{reps, 1, 1, s.stride_w, 8, 8, 8 * s.stride_w};
      k.Li(d, std::int64_t(ub_out + (std::uint64_t(oh) * s.wo() + first_wo) * 32));
      for (std::uint32_t i = 0; i < s.kh; ++i)
        for (std::uint32_t j = 0; j < s.kw; ++j) {
          const std::uint64_t at = ((std::uint64_t(oh) * s.stride_h + i * s.dil_h) * wp +
                                    std::uint64_t(first_wo) * s.stride_w + j * s.dil_w) *
                                   32;
          k.Li(src, std::int64_t(at));
          if (i == 0 && j == 0)  // the first offset copies (max(v, v) = v); the others accumulate
            k.Vector("max", DType::F16, {d, src, src},
                     VecCfg{reps, 1, s.stride_w, s.stride_w, 8, 8 * s.stride_w, 8 * s.stride_w});
          else
            k.Vector(s.mode == "max" ? "max" : "add", DType::F16, {d, d, src}, cfg_w);
        }
      if (s.mode == "avg") k.Vector("muls", DType::F16, {d, d, sc}, VecCfg{reps, 1, 1, 1, 8, 8, 8});
    }
}

}  // namespace

std::uint32_t pool_band_rows(const AiCoreConfig& cfg, const PoolShape& s) {
  check_pool(s);
  if (s.global()) return 1;
  std::uint32_t bo = 0;
  // The input copy's row count is a 12-bit field, the output copy's length (rows x wo) 16 bits.
  while (bo < s.ho() && band_ub(s, bo + 1) <= cfg.size[kUB] && band_rows_in(s, bo + 1) <= 4095 &&
         std::uint64_t(bo + 1) * s.wo() <= 65535)
    ++bo;
  if (!bo && band_rows_in(s, 1) > 4095)
    throw Error("pool: one output row's window spans " + std::to_string(band_rows_in(s, 1)) +
                " input rows (kh x dil_h), more than one copy moves (4095)");
  if (!bo)
    throw Error("pool: one output row's window (" + std::to_string(band_rows_in(s, 1)) + " padded input rows of " +
                std::to_string(padded_w(s)) + " positions, " + std::to_string(band_in_bytes(s, 1)) +
                " B) and its output do not fit the UB (" + std::to_string(cfg.size[kUB]) + " B)");
  return bo;
}

namespace {

// Sums the f32 values of `p` positions (a power of two; 16 channels each) at UB `at` into its
// first position, halving: the second half added to the first, 64 elements a repeat, the
// last halves under masks of 32 and 16.
void halve(KernelBuilder& k, std::uint32_t p, Reg at, Reg other, Reg n) {
  for (std::uint32_t half = p / 2; half >= 1; half /= 2) {
    const std::uint32_t elems = half * 16;
    k.Li(n, std::min<std::uint32_t>(elems, 64));
    k.SetMaskCount(n);
    k.Addi(other, at, std::int32_t(elems * 4));
    k.Vector("add", DType::F32, {at, at, other}, VecCfg{std::max<std::uint32_t>(elems / 64, 1), 1, 1, 1, 8, 8, 8});
  }
}

// One chunk of `count` positions (`p`: the power of two at or above it) from GM `gm`, advanced
// past it: into UB `in` (whole blocks: a position is one), widened to f32 at `f` (zeros past
// count), halved, added to the sum at `acc`. t and t2 are scratch; n holds the mask count.
struct GlobalRegs {
  Reg gm, in, f, acc, n, t, t2;
};
void global_chunk(KernelBuilder& k, std::uint32_t count, std::uint32_t p, const GlobalRegs& r) {
  k.WaitFlag(Pipe::V, Pipe::MTE2, 0);  // `in` is free
  k.DataCopy(Pos::UB, r.in, Pos::GM, r.gm, DataCopyCfg{1, count, 0, 0});
  k.Li(r.t, std::int64_t(count) * 32);
  k.Add(r.gm, r.gm, r.t);
  k.SetFlag(Pipe::MTE2, Pipe::V, 0);
  k.WaitFlag(Pipe::MTE2, Pipe::V, 0);
  if (count < p) {  // the positions past count add nothing
    k.Li(r.n, std::min<std::uint32_t>(p * 16, 64));
    k.SetMaskCount(r.n);
    k.Vector("dup", DType::F32, {r.f, KernelBuilder::zero()},
             VecCfg{std::max<std::uint32_t>(p * 16 / 64, 1), 1, 1, 1, 8, 8, 8});
  }
  for (std::uint32_t done = 0; done < count * 16;) {  // f16 -> f32, 64 elements a repeat
    const std::uint32_t reps = std::min<std::uint32_t>((count * 16 - done) / 64, 255);
    const std::uint32_t elems = reps ? reps * 64 : count * 16 - done;
    k.Li(r.n, reps ? 64 : elems);
    k.SetMaskCount(r.n);
    k.Addi(r.t, r.in, std::int32_t(done * 2));
    k.Addi(r.t2, r.f, std::int32_t(done * 4));
    k.Cast(DType::F32, DType::F16, r.t2, r.t, VecCfg{std::max<std::uint32_t>(reps, 1), 1, 1, 1, 8, 4, 0});
    done += elems;
  }
  k.SetFlag(Pipe::V, Pipe::MTE2, 0);
  halve(k, p, r.f, r.t, r.n);
  k.Li(r.n, 16);
  k.SetMaskCount(r.n);
  k.Vector("add", DType::F32, {r.acc, r.acc, r.f}, VecCfg{1, 1, 1, 1, 8, 8, 8});
}

std::uint32_t pow2_at_least(std::uint32_t n) {
  std::uint32_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// Global average pooling: a unit is one channel group; its h x w positions stream through UB
// in chunks of kGlobalChunk, each widened to f32 and summed by halving (the next chunk's copy
// overlapping the halving), the sums of the chunks added in f32, times 1 / (h x w), rounded
// once to f16. UB: the chunk in, its f32 values, the sum, the output block.
Image global_pool(const AiCoreConfig& cfg, const PoolShape& s) {
  const std::uint64_t hw = std::uint64_t(s.h) * s.w, full = hw / kGlobalChunk;
  const std::uint32_t last = std::uint32_t(hw % kGlobalChunk);
  const std::uint64_t in_at = 0, f_at = kGlobalChunk * 32, acc_at = f_at + kGlobalChunk * 64, out_at = acc_at + 64;
  if (out_at + 32 > cfg.size[kUB])
    throw Error("pool: a global average's chunk of " + std::to_string(kGlobalChunk) + " positions (" +
                std::to_string(out_at + 32) + " B with its f32 sums) does not fit the UB (" +
                std::to_string(cfg.size[kUB]) + " B)");
  float inv = float(1.0 / double(hw));
  std::uint32_t inv_bits;
  std::memcpy(&inv_bits, &inv, 4);
  KernelBuilder k;
  Reg arg = k.reg(), X = k.reg(), Y = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0);
  k.LoadGm(Y, arg, 8);
  Reg g = k.reg(), dim = k.reg(), groups = k.Const(s.c1()), count = k.reg(), out = k.Const(std::int64_t(out_at));
  GlobalRegs r{k.reg(),
               k.Const(std::int64_t(in_at)),
               k.Const(std::int64_t(f_at)),
               k.Const(std::int64_t(acc_at)),
               k.reg(),
               k.reg(),
               k.reg()};
  Reg inv_r = k.Const(inv_bits);
  k.GetSpr(g, Spr::BlockId);
  k.GetSpr(dim, Spr::BlockDim);
  k.SetFlag(Pipe::V, Pipe::MTE2, 0);  // `in` is free
  k.SetFlag(Pipe::MTE3, Pipe::V, 0);  // the output block is free
  k.RoundRobin(g, groups, dim, [&] {
    k.Li(r.t, std::int64_t(hw) * 32);
    k.Mul(r.gm, g, r.t);
    k.Add(r.gm, r.gm, X);
    k.Li(r.n, 16);
    k.SetMaskCount(r.n);
    k.Vector("dup", DType::F32, {r.acc, KernelBuilder::zero()}, VecCfg{1, 1, 1, 1, 8, 8, 8});
    k.Li(count, std::int64_t(full));
    k.Loop(count, [&] { global_chunk(k, kGlobalChunk, kGlobalChunk, r); });
    if (last) global_chunk(k, last, pow2_at_least(last), r);
    k.Li(r.n, 16);
    k.SetMaskCount(r.n);
    k.Vector("muls", DType::F32, {r.acc, r.acc, inv_r}, VecCfg{1, 1, 1, 1, 8, 8, 8});
    k.WaitFlag(Pipe::MTE3, Pipe::V, 0);
    k.Cast(DType::F16, DType::F32, out, r.acc, VecCfg{1, 1, 1, 1, 4, 8, 0});
    k.SetFlag(Pipe::V, Pipe::MTE3, 0);
    k.WaitFlag(Pipe::V, Pipe::MTE3, 0);
    k.Li(r.t, 32);
    k.Mul(r.t, g, r.t);
    k.Add(r.t, r.t, Y);
    k.DataCopy(Pos::GM, r.t, Pos::UB, out, DataCopyCfg{1, 1, 0, 0});
    k.SetFlag(Pipe::MTE3, Pipe::V, 0);
  });
  k.WaitFlag(Pipe::V, Pipe::MTE2, 0);
  k.WaitFlag(Pipe::MTE3, Pipe::V, 0);
  k.End();
  return k.Build();
}

}  // namespace

Image pool_kernel(const AiCoreConfig& cfg, const PoolShape& s) {
  if (s.global()) return global_pool(cfg, s);
  const std::uint32_t bo = pool_band_rows(cfg, s), bands = (s.ho() + bo - 1) / bo;
  const std::uint64_t ub_out = band_in_bytes(s, bo), wp = padded_w(s);
  const bool padded = s.pad_t || s.pad_b || s.pad_l || s.pad_r;
  const std::uint16_t pad_value = s.mode == "max" ? 0xFC00 : 0;  // -inf: never the maximum; 0 adds nothing
  KernelBuilder k;
  Reg arg = k.reg(), X = k.reg(), Y = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0);
  k.LoadGm(Y, arg, 8);
  Reg u = k.reg(), dim = k.reg(), nunits = k.Const(std::int64_t(s.c1()) * bands), g = k.reg(), band = k.reg(),
      gm = k.reg(), tmp = k.reg(), ub = k.reg(), d = k.reg(), src = k.reg(), n = k.reg(),
      sc = k.Const(num::to_f16(1.0 / (s.kh * s.kw))), pv = k.Const(pad_value);
  k.GetSpr(u, Spr::BlockId);
  k.GetSpr(dim, Spr::BlockDim);
  k.SetFlag(Pipe::MTE3, Pipe::MTE2, 0);  // the UB is free
  // Unit u: channel group u / bands, band u % bands. Each band's code is its own (its rows and
  // padding are constants); the unit branches to it.
  k.RoundRobin(u, nunits, dim, [&] {
    k.Li(tmp, bands);
    k.Op("divu", g, u, tmp);
    k.Op("rem", band, u, tmp);
    Label done = k.NewLabel();
    for (std::uint32_t b = 0; b < bands; ++b) {
      Label next = k.NewLabel();
      k.Li(tmp, b);
      k.Branch("bne", band, tmp, next);
      const std::uint32_t oh0 = b * bo, rows_out = std::min(bo, s.ho() - oh0);
      // Padded input rows [a, a + rows_in) hold the input rows [top, bot).
      const std::int64_t a = std::int64_t(oh0) * s.stride_h, rows_in = std::int64_t(band_rows_in(s, rows_out));
      const std::int64_t top = std::max<std::int64_t>(a - s.pad_t, 0),
                         bot = std::min<std::int64_t>(a + rows_in - s.pad_t, s.h);
      k.WaitFlag(Pipe::MTE3, Pipe::MTE2, 0);
      if (padded) {  // the band's padded rows: the pad value, then the input rows copied in
        const std::uint64_t blocks = std::uint64_t(rows_in) * wp;
        k.Li(n, 128);
        k.SetMaskCount(n);
        for (std::uint64_t b0 = 0; b0 < blocks; b0 += 8 * 255) {
          const std::uint64_t reps = std::min<std::uint64_t>(255, (blocks - b0 + 7) / 8);
          k.Li(d, std::int64_t(b0 * 32));
          k.Vector("dup", DType::F16, {d, pv}, VecCfg{std::uint32_t(reps), 1, 1, 1, 8, 8, 8});
        }
        k.SetFlag(Pipe::V, Pipe::MTE2, 1);
        k.WaitFlag(Pipe::V, Pipe::MTE2, 1);
      }
      k.Li(tmp, std::int64_t(s.h) * s.w * 32);
      k.Mul(gm, g, tmp);
      k.Li(tmp, top * s.w * 32);
      k.Add(gm, gm, tmp);
      k.Add(gm, gm, X);
      k.Li(ub, std::int64_t(((top + s.pad_t - a) * std::int64_t(wp) + s.pad_l) * 32));
      k.DataCopy(Pos::UB, ub, Pos::GM, gm, DataCopyCfg{std::uint32_t(bot - top), s.w, 0, s.pad_l + s.pad_r});
      k.SetFlag(Pipe::MTE2, Pipe::V, 0);
      k.WaitFlag(Pipe::MTE2, Pipe::V, 0);
      band_vector(k, s, rows_out, ub_out, d, src, n, sc);
      k.SetFlag(Pipe::V, Pipe::MTE3, 0);
      k.WaitFlag(Pipe::V, Pipe::MTE3, 0);
      k.Li(tmp, std::int64_t(s.ho()) * s.wo() * 32);
      k.Mul(gm, g, tmp);
      k.Li(tmp, std::int64_t(oh0) * s.wo() * 32);
      k.Add(gm, gm, tmp);
      k.Add(gm, gm, Y);
      k.Li(ub, std::int64_t(ub_out));
      k.DataCopy(Pos::GM, gm, Pos::UB, ub, DataCopyCfg{1, rows_out * s.wo(), 0, 0});
      k.SetFlag(Pipe::MTE3, Pipe::MTE2, 0);
      k.Jump(done);
      k.Bind(next);
    }
    k.Bind(done);
  });
  k.WaitFlag(Pipe::MTE3, Pipe::MTE2, 0);
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
