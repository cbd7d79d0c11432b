// SPDX-License-Identifier: MIT
#include "pool.hpp"

#include <algorithm>

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
// UB bytes of a band of `bo` output rows: its padded input rows, rounded up to 256 bytes (the
// output rows start on a repeat's boundary), then its output rows.
std::uint64_t band_in_bytes(const PoolShape& s, std::uint64_t bo) {
  return (band_rows_in(s, bo) * padded_w(s) * 32 + 255) / 256 * 256;
}
std::uint64_t band_ub(const PoolShape& s, std::uint64_t bo) { return band_in_bytes(s, bo) + bo * s.wo() * 32; }

// A band's vector work by columns of 8 output positions, each instruction a repeat per output
// row (band_vector_columns), where that takes fewer instructions, each with its startup, than a
// row at a time: a band of more rows than the map has columns of 8 positions (ResNet's 3 x 3 s2
// max pool: 7 columns, bands of 14 rows), whose rows' strides fit a repeat stride (wo output
// blocks, stride_h x the padded width input blocks: at most 255).
bool by_columns(const PoolShape& s, std::uint32_t bo) {
  const std::uint32_t columns = (s.wo() + 7) / 8, parts = (s.wo() / 8 ? 1 : 0) + (s.wo() % 8 ? 1 : 0);
  return s.wo() <= 255 && std::uint64_t(s.stride_h) * padded_w(s) <= 255 && bo <= 255 && columns < bo * parts;
}

void band_vector_columns(KernelBuilder& k, const PoolShape& s, std::uint32_t bo, std::uint64_t base,
                         std::uint64_t ub_out, Reg d, Reg src, Reg n, Reg sc) {
  const std::uint32_t columns = (s.wo() + 7) / 8, tail = s.wo() % 8, wo = s.wo();
  const std::uint64_t wp = padded_w(s);
  const std::uint32_t in_rows = std::uint32_t(s.stride_h * wp);  // blocks from one output row's input to the next
  for (std::uint32_t c = 0; c < columns; ++c) {
    const bool masked = tail && c == columns - 1;
    if (c == 0 || masked) {
      k.Li(n, masked ? std::int64_t(tail) * 16 : 128);
      k.SetMaskCount(n);
    }
    k.Li(d, std::int64_t(ub_out + std::uint64_t(c) * 8 * 32));
    for (std::uint32_t i = 0; i < s.kh; ++i)
      for (std::uint32_t j = 0; j < s.kw; ++j) {
        k.Li(src, std::int64_t(
                      base + (std::uint64_t(i) * s.dil_h * wp + std::uint64_t(c) * 8 * s.stride_w + j * s.dil_w) * 32));
        if (i == 0 && j == 0)  // the first offset copies (max(v, v) = v); the others accumulate
          k.Vector("max", DType::F16, {d, src, src}, VecCfg{bo, 1, s.stride_w, s.stride_w, wo, in_rows, in_rows});
        else
          k.Vector(s.mode == "max" ? "max" : "add", DType::F16, {d, d, src},
                   VecCfg{bo, 1, 1, s.stride_w, wo, wo, in_rows});
      }
  }
  if (s.mode != "avg") return;
  const std::uint64_t blocks = std::uint64_t(bo) * wo;  // the band's output, in place: 8 blocks a repeat
  k.Li(n, 128);
  k.SetMaskCount(n);
  for (std::uint64_t b = 0; b < blocks / 8 * 8; b += 8 * 255) {
    k.Li(d, std::int64_t(ub_out + b * 32));
    k.Vector("muls", DType::F16, {d, d, sc},
             VecCfg{std::uint32_t(std::min<std::uint64_t>(255, (blocks / 8 * 8 - b) / 8)), 1, 1, 1, 8, 8, 8});
  }
  if (blocks % 8) {
    k.Li(n, std::int64_t(blocks % 8) * 16);
    k.SetMaskCount(n);
    k.Li(d, std::int64_t(ub_out + blocks / 8 * 8 * 32));
    k.Vector("muls", DType::F16, {d, d, sc}, VecCfg{1, 1, 1, 1, 8, 8, 8});
  }
}

// The pad value into blocks [b0, b1) of the band's UB: repeats of 8, the last one masked (no
// block past b1: the output rows follow, which MTE3 may still be copying out).
void fill_blocks(KernelBuilder& k, std::uint64_t base, std::uint64_t b0, std::uint64_t b1, Reg d, Reg n, Reg pv) {
  const std::uint64_t whole = b0 + (b1 - b0) / 8 * 8;
  k.Li(n, 128);
  k.SetMaskCount(n);
  for (; b0 < whole; b0 += 8 * 255) {
    k.Li(d, std::int64_t(base + b0 * 32));
    k.Vector("dup", DType::F16, {d, pv},
             VecCfg{std::uint32_t(std::min<std::uint64_t>(255, (whole - b0) / 8)), 1, 1, 1, 8, 8, 8});
  }
  if (whole == b1) return;
  k.Li(n, std::int64_t(b1 - whole) * 16);
  k.SetMaskCount(n);
  k.Li(d, std::int64_t(base + whole * 32));
  k.Vector("dup", DType::F16, {d, pv}, VecCfg{1, 1, 1, 1, 8, 8, 8});
}

// The padding of a band whose padded rows [r0, r1) of `rows` hold input: the rows above and
// below whole, and the pad_l and pad_r blocks of each input row, a repeat per row (a row's
// blocks a repeat stride apart) where they fit one repeat and the stride 255; else the band
// whole. Filling only the padding took ResNet-50's max pool's fill from a quarter of its vector
// time to a few percent.
void pad_fill(KernelBuilder& k, const PoolShape& s, std::uint64_t base, std::uint64_t r0, std::uint64_t r1,
              std::uint64_t rows, Reg d, Reg n, Reg pv) {
  const std::uint64_t wp = padded_w(s);
  if (wp > 255 || s.pad_l > 8 || s.pad_r > 8) return fill_blocks(k, base, 0, rows * wp, d, n, pv);
  if (r0) fill_blocks(k, base, 0, r0 * wp, d, n, pv);
  if (r1 < rows) fill_blocks(k, base, r1 * wp, rows * wp, d, n, pv);
  for (const auto& [at, width] : {std::pair<std::uint64_t, std::uint32_t>{0, s.pad_l}, {wp - s.pad_r, s.pad_r}}) {
    if (!width) continue;
    k.Li(n, std::int64_t(width) * 16);
    k.SetMaskCount(n);
    for (std::uint64_t r = r0; r < r1; r += 255) {
      k.Li(d, std::int64_t(base + (r * wp + at) * 32));
      const auto reps = std::uint32_t(std::min<std::uint64_t>(255, r1 - r));
      k.Vector("dup", DType::F16, {d, pv}, VecCfg{reps, 1, 1, 1, std::uint32_t(wp), 8, 8});
    }
  }
}

// Emits the vector work of one band: output rows [0, bo) of the band's UB at `ub_out`, the
// band's padded input at UB `base`.
void band_vector(KernelBuilder& k, const PoolShape& s, std::uint32_t bo, std::uint64_t base, std::uint64_t ub_out,
                 Reg d, Reg src, Reg n, Reg sc) {
  if (by_columns(s, bo)) return band_vector_columns(k, s, bo, base, ub_out, d, src, n, sc);
  const std::uint64_t wp = padded_w(s);
  for (std::uint32_t oh = 0; oh < bo; ++oh)
    // Repeats of 8 positions (at most 255 an instruction), then a masked one for the rest.
    for (std::uint32_t first_wo = 0, left = s.wo(); left; left = s.wo() - first_wo) {
      const bool masked = left < 8;
      const std::uint32_t reps = masked ? 1 : std::min(left / 8, 255u);
      k.Li(n, masked ? std::int64_t(left) * 16 : 128);
      k.SetMaskCount(n);
      const VecCfg cfg_w{reps, 1, 1, s.stride_w, 8, 8, 8 * s.stride_w};
      k.Li(d, std::int64_t(ub_out + (std::uint64_t(oh) * s.wo() + first_wo) * 32));
      for (std::uint32_t i = 0; i < s.kh; ++i)
        for (std::uint32_t j = 0; j < s.kw; ++j) {
          const std::uint64_t at = ((std::uint64_t(oh) * s.stride_h + i * s.dil_h) * wp +
                                    std::uint64_t(first_wo) * s.stride_w + j * s.dil_w) *
                                   32;
          k.Li(src, std::int64_t(base + at));
          if (i == 0 && j == 0)  // the first offset copies (max(v, v) = v); the others accumulate
            k.Vector("max", DType::F16, {d, src, src},
                     VecCfg{reps, 1, s.stride_w, s.stride_w, 8, 8 * s.stride_w, 8 * s.stride_w});
          else
            k.Vector(s.mode == "max" ? "max" : "add", DType::F16, {d, d, src}, cfg_w);
        }
      if (s.mode == "avg") k.Vector("muls", DType::F16, {d, d, sc}, VecCfg{reps, 1, 1, 1, 8, 8, 8});
      first_wo += masked ? left : reps * 8;
    }
}

}  // namespace

namespace {
// Two UB buffers, each half the UB, where a band of one output row fits one: units alternate
// between them, one's copy in overlapping the other's vector work.
int pool_buffers(const AiCoreConfig& cfg, const PoolShape& s) { return band_ub(s, 1) <= cfg.size[kUB] / 2 ? 2 : 1; }
}  // namespace

std::uint32_t pool_band_rows(const AiCoreConfig& cfg, const PoolShape& s) {
  check_pool(s);
  if (s.global()) return 1;
  std::uint32_t bo = 0;
  const std::uint64_t ub = cfg.size[kUB] / std::uint64_t(pool_buffers(cfg, s));
  // The input copy's row count is a 12-bit field, the output copy's length (rows x wo) 16 bits.
  while (bo < s.ho() && band_ub(s, bo + 1) <= ub && band_rows_in(s, bo + 1) <= 4095 &&
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
  const std::uint32_t inv_bits = num::to_f32(1.0 / double(hw));  // 1 / (h x w) in f32
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

// Global average pooling of a map of at most 255 positions (7 x 7, 14 x 14: a network's last
// maps, a squeeze-and-excitation block's): a unit is a batch of g channel groups, copied in at
// once, so that every vector instruction works on all g of them, one repeat per group (a
// group's positions a source repeat stride apart: at most 255 blocks). Four positions at a time
// (64 f16) are widened to f32 and added to the batch's sums; the four partial sums of each
// group are then added, scaled by 1 / (h x w) and rounded once to f16, and the batch's g
// output blocks go out in one copy. Two units in flight (UB buffers 0 and 1), so one's copy in
// overlaps the other's vector work. One group at a time (global_pool) takes about 25 vector
// instructions (each with its 8-cycle startup) and two round trips to the memory per group.
struct BatchUb {
  std::uint64_t in, tmp, acc, out, bytes;  // in one buffer
};
BatchUb batch_ub(std::uint64_t hw, std::uint32_t g) {
  BatchUb b{};
  b.in = 0, b.tmp = std::uint64_t(g) * hw * 32, b.acc = b.tmp + g * 256ull, b.out = b.acc + g * 256ull;
  b.bytes = b.out + g * 32ull;
  return b;
}

// Groups per unit: a divisor of the channel groups (every unit the same code), as many as give
// each core two units (or one), at most 255 (a repeat count) and what two buffers hold (one
// group's 255 positions and sums are 8.7 KB).
std::uint32_t batch_groups(const AiCoreConfig& cfg, const PoolShape& s) {
  const std::uint64_t hw = std::uint64_t(s.h) * s.w, c1 = s.c1();
  const std::uint64_t want = std::max<std::uint64_t>(1, (c1 + 2 * cfg.cores - 1) / (2 * cfg.cores));
  for (std::uint64_t g = std::min<std::uint64_t>({want, c1, 255}); g > 1; --g)
    if (c1 % g == 0 && 2 * batch_ub(hw, std::uint32_t(g)).bytes <= cfg.size[kUB]) return std::uint32_t(g);
  return 1;
}

// Batch `u` (g groups) into buffer `buf` (at UB `base`): the copy in, once the buffer's input
// is free. Registers: t scratch, n the mask count.
struct BatchRegs {
  Reg x, y, t, n, in, tmp, acc, src1, out, inv;
};
void batch_in(KernelBuilder& k, const PoolShape& s, std::uint32_t g, std::uint64_t base, Reg u, int buf,
              const BatchRegs& r) {
  const std::uint64_t hw = std::uint64_t(s.h) * s.w;
  k.WaitFlag(Pipe::V, Pipe::MTE2, buf);
  k.Li(r.t, std::int64_t(g) * std::int64_t(hw) * 32);
  k.Mul(r.t, u, r.t);
  k.Add(r.t, r.t, r.x);
  k.Li(r.in, std::int64_t(base + batch_ub(hw, g).in));
  k.DataCopy(Pos::UB, r.in, Pos::GM, r.t, DataCopyCfg{1, std::uint32_t(g * hw), 0, 0});
  k.SetFlag(Pipe::MTE2, Pipe::V, buf);
}

// Batch `u` in buffer `buf`: its sums, then its g output blocks out in one copy. The input is
// freed for the next copy in as soon as the last positions are read.
void batch_sums(KernelBuilder& k, const PoolShape& s, std::uint32_t g, std::uint64_t base, Reg u, int buf,
                const BatchRegs& r) {
  const std::uint64_t hw = std::uint64_t(s.h) * s.w;
  const BatchUb b = batch_ub(hw, g);
  k.WaitFlag(Pipe::MTE2, Pipe::V, buf);
  k.Li(r.tmp, std::int64_t(base + b.tmp)), k.Li(r.acc, std::int64_t(base + b.acc));
  k.Li(r.n, 64);
  k.SetMaskCount(r.n);
  const VecCfg each{g, 1, 1, 1, 8, 8, 8};  // a repeat per group: its 64 f32
  k.Vector("dup", DType::F32, {r.acc, KernelBuilder::zero()}, each);
  for (std::uint64_t p = 0; p < hw; p += 4) {  // positions p .. p + 3 of every group
    if (hw - p < 4) {
      k.Li(r.n, std::int64_t(hw - p) * 16);
      k.SetMaskCount(r.n);
    }
    k.Li(r.t, std::int64_t(base + b.in + p * 32));
    k.Cast(DType::F32, DType::F16, r.tmp, r.t, VecCfg{g, 1, 1, 1, 8, std::uint32_t(hw), 0});
    k.Vector("add", DType::F32, {r.acc, r.acc, r.tmp}, each);
  }
  k.SetFlag(Pipe::V, Pipe::MTE2, buf);     // the input is read
  for (std::uint32_t half : {32u, 16u}) {  // the four partial sums of each group into its first
    k.Li(r.n, half);
    k.SetMaskCount(r.n);
    k.Addi(r.src1, r.acc, std::int32_t(half * 4));
    k.Vector("add", DType::F32, {r.acc, r.acc, r.src1}, each);
  }
  k.Vector("muls", DType::F32, {r.acc, r.acc, r.inv}, each);
  k.Li(r.out, std::int64_t(base + b.out));
  k.WaitFlag(Pipe::MTE3, Pipe::V, buf);  // the output blocks are out
  k.Cast(DType::F16, DType::F32, r.out, r.acc, VecCfg{g, 1, 1, 1, 1, 8, 0});
  k.SetFlag(Pipe::V, Pipe::MTE3, buf);
  k.WaitFlag(Pipe::V, Pipe::MTE3, buf);
  k.Li(r.t, std::int64_t(g) * 32);
  k.Mul(r.t, u, r.t);
  k.Add(r.t, r.t, r.y);
  k.DataCopy(Pos::GM, r.t, Pos::UB, r.out, DataCopyCfg{1, g, 0, 0});
  k.SetFlag(Pipe::MTE3, Pipe::V, buf);
}

// A core's units alternate between the two buffers, each copied in while the one before is
// summed (KernelBuilder::RoundRobinPipelined).
Image global_pool_batched(const AiCoreConfig& cfg, const PoolShape& s) {
  const std::uint32_t g = batch_groups(cfg, s);  // two buffers of it fit the UB
  const std::uint64_t one = batch_ub(std::uint64_t(s.h) * s.w, g).bytes;
  const std::uint32_t inv_bits = num::to_f32(1.0 / (double(s.h) * s.w));
  KernelBuilder k;
  Reg arg = k.reg();
  BatchRegs r{k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.Const(inv_bits)};
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(r.x, arg, 0);
  k.LoadGm(r.y, arg, 8);
  Reg u = k.reg(), dim = k.reg(), step = k.reg(), next = k.reg(), units = k.Const(s.c1() / g);
  for (int buf = 0; buf < 2; ++buf) k.SetFlag(Pipe::V, Pipe::MTE2, buf), k.SetFlag(Pipe::MTE3, Pipe::V, buf);
  k.RoundRobinPipelined(
      2, u, units, dim, step, next, [&](Reg unit, int buf) { batch_in(k, s, g, buf ? one : 0, unit, buf, r); },
      [&](Reg unit, int buf) { batch_sums(k, s, g, buf ? one : 0, unit, buf, r); });
  for (int buf = 0; buf < 2; ++buf) k.WaitFlag(Pipe::V, Pipe::MTE2, buf), k.WaitFlag(Pipe::MTE3, Pipe::V, buf);
  k.End();
  return k.Build();
}

}  // namespace

// Batches where they take under 0.7 x the vector cycles a group of global_pool: a batch's per 4
// positions, 2 instructions of 8 + g cycles (and 5 more at its end) shared by g groups, against a
// cast and a halving a group at a time (a repeat per 4 positions, 8 cycles a halving step) and
// about 88 cycles of small instructions and waits on its two copies (measured: 162 cycles a
// group of 7 x 7 on ascend310). The margin: a batch's copy in is one large copy, overlapped with
// one batch's work; a 15 x 17 map from DRAM in batches of 8 groups (0.95 x the cycles) took 15.0
// us, one group at a time 13.2 us (in batches of 4: 19.0 us).
std::uint32_t pool_global_batch(const AiCoreConfig& cfg, const PoolShape& s) {
  const std::uint64_t hw = std::uint64_t(s.h) * s.w;
  if (!s.global() || hw > 255) return 0;
  const std::uint32_t g = batch_groups(cfg, s);
  const std::uint64_t slices = (hw + 3) / 4;  // of 4 positions, the last one short
  const int halvings = __builtin_ctz(pow2_at_least(std::uint32_t(hw)));
  const double batched = (2.0 * double(slices) + 5) * (8 + g) / g, single = 2.0 * double(slices) + 8 * halvings + 88;
  return batched < 0.7 * single ? g : 0;
}

namespace {

// A band kernel's registers and constants: the unit's channel group g and band, scratch, the
// vector operands' addresses, the mask count, the scale and the pad value.
struct BandRegs {
  Reg X, Y, g, band, gm, tmp, ub, d, src, n, sc, pv;
};
struct BandPlan {
  std::uint32_t bo, bands;
  std::uint64_t ub_out, wp, buffer;  // the output rows' place in a buffer; a buffer's bytes
  bool padded;
};

// Unit `unit` (channel group unit / bands, band unit % bands) branches to its band's code, f(b):
// each band's rows and padding are constants of its own code.
template <typename F>
void for_band(KernelBuilder& k, const BandPlan& p, const BandRegs& r, Reg unit, F f) {
  k.Li(r.tmp, p.bands);
  k.Op("divu", r.g, unit, r.tmp);
  k.Op("rem", r.band, unit, r.tmp);
  Label done = k.NewLabel();
  for (std::uint32_t b = 0; b < p.bands; ++b) {
    Label next = k.NewLabel();
    k.Li(r.tmp, b);
    k.Branch("bne", r.band, r.tmp, next);
    f(b);
    k.Jump(done);
    k.Bind(next);
  }
  k.Bind(done);
}

// Band b's padded input rows [a, a + rows) hold the input rows [top, bot).
struct BandRows {
  std::uint32_t oh0, rows_out;
  std::int64_t a, rows, top, bot;
};
BandRows band_rows(const PoolShape& s, const BandPlan& p, std::uint32_t b) {
  BandRows w{};
  w.oh0 = b * p.bo, w.rows_out = std::min(p.bo, s.ho() - w.oh0);
  w.a = std::int64_t(w.oh0) * s.stride_h, w.rows = std::int64_t(band_rows_in(s, w.rows_out));
  w.top = std::max<std::int64_t>(w.a - s.pad_t, 0), w.bot = std::min<std::int64_t>(w.a + w.rows - s.pad_t, s.h);
  return w;
}

// Band b into buffer `buf`: its padding (V, after the vector work that last read the buffer's
// input: in order), then its input rows copied in.
void band_in(KernelBuilder& k, const PoolShape& s, const BandPlan& p, const BandRegs& r, std::uint32_t b, int buf) {
  const BandRows w = band_rows(s, p, b);
  const std::uint64_t base = std::uint64_t(buf) * p.buffer;
  if (p.padded)
    pad_fill(k, s, base, std::uint64_t(w.top + s.pad_t - w.a), std::uint64_t(w.bot + s.pad_t - w.a),
             std::uint64_t(w.rows), r.d, r.n, r.pv);
  k.SetFlag(Pipe::V, Pipe::MTE2, buf);  // the buffer's input may be written
  k.WaitFlag(Pipe::V, Pipe::MTE2, buf);
  k.Li(r.tmp, std::int64_t(s.h) * s.w * 32);
  k.Mul(r.gm, r.g, r.tmp);
  k.Li(r.tmp, w.top * s.w * 32);
  k.Add(r.gm, r.gm, r.tmp);
  k.Add(r.gm, r.gm, r.X);
  k.Li(r.ub, std::int64_t(base + std::uint64_t(((w.top + s.pad_t - w.a) * std::int64_t(p.wp) + s.pad_l) * 32)));
  k.DataCopy(Pos::UB, r.ub, Pos::GM, r.gm, DataCopyCfg{std::uint32_t(w.bot - w.top), s.w, 0, s.pad_l + s.pad_r});
  k.SetFlag(Pipe::MTE2, Pipe::V, buf);
}

// Band b in buffer `buf`: its output rows (once the buffer's last ones are out), copied out.
void band_out(KernelBuilder& k, const PoolShape& s, const BandPlan& p, const BandRegs& r, std::uint32_t b, int buf) {
  const BandRows w = band_rows(s, p, b);
  const std::uint64_t base = std::uint64_t(buf) * p.buffer;
  k.WaitFlag(Pipe::MTE2, Pipe::V, buf);
  k.WaitFlag(Pipe::MTE3, Pipe::V, buf);
  band_vector(k, s, w.rows_out, base, base + p.ub_out, r.d, r.src, r.n, r.sc);
  k.SetFlag(Pipe::V, Pipe::MTE3, buf);
  k.WaitFlag(Pipe::V, Pipe::MTE3, buf);
  k.Li(r.tmp, std::int64_t(s.ho()) * s.wo() * 32);
  k.Mul(r.gm, r.g, r.tmp);
  k.Li(r.tmp, std::int64_t(w.oh0) * s.wo() * 32);
  k.Add(r.gm, r.gm, r.tmp);
  k.Add(r.gm, r.gm, r.Y);
  k.Li(r.ub, std::int64_t(base + p.ub_out));
  k.DataCopy(Pos::GM, r.gm, Pos::UB, r.ub, DataCopyCfg{1, w.rows_out * s.wo(), 0, 0});
  k.SetFlag(Pipe::MTE3, Pipe::V, buf);
}

}  // namespace

// Units go round-robin to blocks, on one or two buffers (KernelBuilder::RoundRobinPipelined).
Image pool_kernel(const AiCoreConfig& cfg, const PoolShape& s) {
  if (pool_global_batch(cfg, s)) return global_pool_batched(cfg, s);
  if (s.global()) return global_pool(cfg, s);
  BandPlan p{};
  p.bo = pool_band_rows(cfg, s), p.bands = (s.ho() + p.bo - 1) / p.bo;
  p.ub_out = band_in_bytes(s, p.bo), p.wp = padded_w(s), p.buffer = cfg.size[kUB] / 2;
  p.padded = s.pad_t || s.pad_b || s.pad_l || s.pad_r;
  const bool two = pool_buffers(cfg, s) == 2;
  const std::uint16_t pad_value = s.mode == "max" ? 0xFC00 : 0;  // -inf: never the maximum; 0 adds nothing
  KernelBuilder k;
  Reg arg = k.reg();
  BandRegs r{k.reg(),
             k.reg(),
             k.reg(),
             k.reg(),
             k.reg(),
             k.reg(),
             k.reg(),
             k.reg(),
             k.reg(),
             k.reg(),
             k.Const(num::to_f16(1.0 / (s.kh * s.kw))),
             k.Const(pad_value)};
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(r.X, arg, 0);
  k.LoadGm(r.Y, arg, 8);
  Reg u = k.reg(), dim = k.reg(), step = k.reg(), next = k.reg(), nunits = k.Const(std::int64_t(s.c1()) * p.bands);
  for (int buf = 0; buf < (two ? 2 : 1); ++buf) k.SetFlag(Pipe::MTE3, Pipe::V, buf);  // the outputs are free
  k.RoundRobinPipelined(
      two ? 2 : 1, u, nunits, dim, step, next,
      [&](Reg unit, int buf) { for_band(k, p, r, unit, [&](std::uint32_t b) { band_in(k, s, p, r, b, buf); }); },
      [&](Reg unit, int buf) { for_band(k, p, r, unit, [&](std::uint32_t b) { band_out(k, s, p, r, b, buf); }); });
  for (int buf = 0; buf < (two ? 2 : 1); ++buf) k.WaitFlag(Pipe::MTE3, Pipe::V, buf);
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
