// SPDX-License-Identifier: MIT
#include "resize.hpp"

#include <algorithm>
#include <cmath>

#include "aicore/kernel_builder.hpp"
#include "aicore/numeric.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

namespace {

// Output index y in the input, as ONNX's coordinate transformation puts it (its output width is
// scale x in, a real number).
double coordinate(ResizeTransform t, double y, double scale, std::uint32_t in, std::uint32_t out) {
  const double xf = scale * double(in);
  switch (t) {
    case ResizeTransform::HalfPixel: return (y + 0.5) / scale - 0.5;
    // One output element reads 0, as the operator's definition and ONNX Runtime have it (ONNX's
    // reference reads -0.5, which differs for cubic alone).
    case ResizeTransform::PytorchHalfPixel: return out > 1 ? (y + 0.5) / scale - 0.5 : 0;
    case ResizeTransform::AlignCorners: return xf == 1 ? 0 : y * double(in - 1) / (xf - 1);
    case ResizeTransform::Asymmetric: return y / scale;
    case ResizeTransform::TfHalfPixelForNn: return (y + 0.5) / scale;
  }
  return 0;
}

// The nearest mode's rounding of x (an exact index is itself), clamped to the input.
std::int64_t nearest(NearestRounding r, double x, std::uint32_t in) {
  const double f = std::floor(x), frac = x - f;
  auto i = std::int64_t(f);
  if (frac != 0 && (r == NearestRounding::Ceil || (r == NearestRounding::RoundPreferFloor && frac > 0.5) ||
                    (r == NearestRounding::RoundPreferCeil && frac >= 0.5)))
    ++i;
  return std::clamp<std::int64_t>(i, 0, std::int64_t(in) - 1);
}

// ONNX's cubic convolution weights of the four taps around a point `ratio` past the second.
void cubic(double a, double ratio, double* c) {
  const double r1 = ratio + 1, s = 1 - ratio, s1 = s + 1;
  c[0] = ((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a;
  c[1] = ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1;
  c[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
  c[3] = ((a * s1 - 5 * a) * s1 + 8 * a) * s1 - 4 * a;
}

}  // namespace

ResizeTaps resize_taps(const ResizeRule& r, double scale, std::uint32_t in, std::uint32_t out) {
  ResizeTaps t;
  t.taps = r.taps();
  t.index.reserve(std::size_t(out) * t.taps), t.weight.reserve(std::size_t(out) * t.taps);
  for (std::uint32_t y = 0; y < out; ++y) {
    const double x = coordinate(r.transform, double(y), scale, in, out);
    if (r.mode == ResizeMode::Nearest) {
      t.index.push_back(std::uint32_t(nearest(r.rounding, x, in))), t.weight.push_back(1.0);
      continue;
    }
    // ONNX takes the point's left neighbour at a ratio in (0, 1]: an exact index is its left
    // neighbour's at ratio 1. Linear's taps are that neighbour and the next, cubic's one more each side.
    double base = std::floor(x), ratio = x - base;
    if (ratio == 0) base -= 1, ratio = 1;
    double c[4] = {1 - ratio, ratio, 0, 0};
    if (r.mode == ResizeMode::Cubic) cubic(r.cubic_a, ratio, c), base -= 1;
    double sum = 0;
    for (unsigned j = 0; j < t.taps; ++j) {
      const double at = base + j;
      if (r.exclude_outside && (at < 0 || at > double(in) - 1)) c[j] = 0;
      sum += c[j];
    }
    for (unsigned j = 0; j < t.taps; ++j) {  // past the ends, the edge's value
      t.index.push_back(std::uint32_t(std::clamp(base + j, 0.0, double(in) - 1)));
      t.weight.push_back(r.exclude_outside ? c[j] / sum : c[j]);
    }
  }
  return t;
}

namespace {

constexpr std::uint64_t kBlock = 32;      // bytes: one position's 16 f16 channels
constexpr std::uint32_t kMaxStride = 31;  // blocks: a repeat's stride, 8 x this, fits 8 bits

// A run of output positions `stride` blocks apart from `first`, reading positions `src_stride`
// apart from `src` (or, for weights, holding one value): one vector instruction of up to 255
// repeats of 8 blocks.
struct Run {
  std::uint32_t first, stride, count, src, src_stride;
};

// The runs that cover positions [from, from + n), position i reading src(i) with value(i): the
// longest run from each position not yet covered, over strides up to kMaxStride. A 2x upsample's
// tap is two runs of stride 2 (and the edges); a ratio of p / q positions, p runs of stride p.
template <typename Src, typename Value>
std::vector<Run> runs(std::uint32_t from, std::uint32_t n, Src src, Value value) {
  std::vector<bool> done(n, false);
  std::vector<Run> out;
  const auto at = [&](std::uint64_t i) {
    return std::pair{value(from + std::uint32_t(i)), src(from + std::uint32_t(i))};
  };
  for (std::uint32_t i = 0; i < n; ++i) {
    if (done[i]) continue;
    Run best{i, 1, 1, at(i).second, 0};
    for (std::uint32_t p = 1; p <= kMaxStride && i + p < n; ++p) {
      const auto [v0, s0] = at(i);
      const auto [v1, s1] = at(i + p);
      if (done[i + p] || v0 != v1 || s1 < s0 || s1 - s0 > kMaxStride) continue;
      const std::uint32_t q = s1 - s0;
      std::uint32_t c = 2;
      for (std::uint64_t k = i + std::uint64_t(c) * p; k < n && !done[k] && at(k) == std::pair{v0, s0 + c * q};
           k = i + std::uint64_t(c) * p)
        ++c;
      if (c > best.count) best = Run{i, p, c, s0, q};
    }
    for (std::uint32_t c = 0; c < best.count; ++c) done[best.first + c * best.stride] = true;
    out.push_back(best);
  }
  return out;
}

// A band of output positions and the input positions their taps read.
struct Band {
  std::uint32_t first, count, in_first, in_count;
};

// Where the kernel keeps what, in the UB: the rows' taps table (per output row, each tap's input
// row, 16 bits, and f16 weight, 16 bits, two taps a 64-bit word), the columns' weight rows (one
// per tap, each weight in all 16 lanes of its block: of every position, written once, or where
// they do not fit, of a band's, written for each band), and two buffers, each the band's tap rows,
// its output row and (more than one tap) a gathered row. Then room for the span of a last repeat:
// the vector unit checks the 8 blocks of a repeat whose last are masked off, at their stride.
struct Plan {
  const ResizeShape& s;
  ResizeTaps rows, cols;
  std::vector<Band> bands;
  std::uint64_t weights_at = 0, buffer_at[2] = {0, 0}, end = 0;
  bool whole_weights = true;  // every position's column weights, written once

  unsigned taps() const { return rows.taps; }
  unsigned words() const { return (taps() + 1) / 2; }
  bool weighted() const { return s.rule.mode != ResizeMode::Nearest; }
  std::uint32_t in_blocks() const {
    std::uint32_t n = 0;
    for (const Band& b : bands) n = std::max(n, b.in_count);
    return n;
  }
  std::uint64_t in_at(int buf, unsigned j) const { return buffer_at[buf] + std::uint64_t(j) * in_blocks() * kBlock; }
  std::uint64_t out_at(int buf) const { return in_at(buf, taps()); }
  std::uint64_t gathered_at(int buf) const { return out_at(buf) + std::uint64_t(bands[0].count) * kBlock; }
  // Tap j's weight of position x, of band b.
  std::uint64_t weight_at(unsigned j, const Band& b, std::uint32_t x) const {
    const std::uint64_t row = whole_weights ? s.ow : bands[0].count;
    return weights_at + (j * row + (whole_weights ? b.first : 0) + x) * kBlock;
  }
  std::uint32_t col(std::uint32_t x, unsigned j) const { return cols.index[std::size_t(x) * taps() + j]; }
  std::uint16_t col_weight(std::uint32_t x, unsigned j) const {
    return num::to_f16(cols.weight[std::size_t(x) * taps() + j]);
  }

  // Bands of `width` output positions (the last shorter), and where everything goes.
  void lay_out(std::uint32_t width, bool whole) {
    bands.clear();
    whole_weights = whole;
    for (std::uint32_t first = 0; first < s.ow; first += width) {
      Band b{first, std::min(width, s.ow - first), ~0u, 0};
      std::uint32_t last = 0;
      for (std::uint32_t x = first; x < first + b.count; ++x)
        for (unsigned j = 0; j < taps(); ++j)
          b.in_first = std::min(b.in_first, col(x, j)), last = std::max(last, col(x, j));
      b.in_count = last - b.in_first + 1;
      bands.push_back(b);
    }
    weights_at = (std::uint64_t(s.oh) * words() * 8 + kBlock - 1) / kBlock * kBlock;
    buffer_at[0] = weights_at + (weighted() ? std::uint64_t(taps()) * (whole ? s.ow : width) * kBlock : 0);
    const std::uint64_t buffer =
        (std::uint64_t(taps()) * in_blocks() + std::uint64_t(width) * (taps() > 1 ? 2 : 1)) * kBlock;
    buffer_at[1] = buffer_at[0] + buffer;
    end = buffer_at[1] + buffer + 8 * kMaxStride * kBlock;
  }
};

// The widest bands that fit the core's UB (the whole output row when it fits, else halving, down
// to one vector repeat of 8 positions), with every position's weights kept or a band's; false
// when even bands of 8 do not fit.
bool fit(const AiCoreConfig& cfg, Plan& p, bool whole) {
  std::uint32_t width = p.s.ow;
  for (p.lay_out(width, whole); p.end > cfg.size[kUB] && width > 8; p.lay_out(width, whole))
    width = std::max(8u, (width + 1) / 2);
  return p.end <= cfg.size[kUB];
}

// Of the two ways to fit, the one in fewer bands: every position's weights, written once, leave
// less room for the bands than a band's, written for each band of each row. Measured on
// scenarios/kernels/resize.yaml (ascend310): bilinear 640 to 2560 in 4 bands, weights per band,
// 32.0 us against 8 bands, weights once, 34.7 us; bicubic 2500 down to 1200, 36.2 against 40.1 us;
// as many bands either way (375 to 1115), weights once 51.1 us against 92.6 us.
Plan plan_for(const AiCoreConfig& cfg, const ResizeShape& s) {
  Plan whole{s, resize_taps(s.rule, s.scale_h, s.h, s.oh), resize_taps(s.rule, s.scale_w, s.w, s.ow), {}};
  Plan banded = whole;
  const bool fits_whole = fit(cfg, whole, true), fits_banded = whole.weighted() && fit(cfg, banded, false);
  if (!fits_whole && !fits_banded)
    throw Error("resize: " + std::to_string(s.oh) + " output rows (their taps table: " +
                std::to_string(whole.weights_at) + " B) and bands of 8 positions need " + std::to_string(whole.end) +
                " B of UB (" + std::to_string(cfg.size[kUB]) + ")");
  return fits_banded && (!fits_whole || banded.bands.size() < whole.bands.size()) ? banded : whole;
}

}  // namespace

void check_resize(const AiCoreConfig& cfg, const ResizeShape& s) {
  if (!s.c || !s.h || !s.w || !s.oh || !s.ow) throw Error("resize: c, h, w, oh and ow are at least 1");
  if (s.h > 65535 || s.w > 65535 || s.ow > 65535)
    throw Error("resize: h, w and ow are at most 65535 (a tap's index and a row's copy)");
  if (!(s.scale_h > 0) || !(s.scale_w > 0)) throw Error("resize: scale_h and scale_w are above 0");
  plan_for(cfg, s);
}

std::uint32_t resize_bands(const AiCoreConfig& cfg, const ResizeShape& s) {
  return std::uint32_t(plan_for(cfg, s).bands.size());
}

namespace {

enum class Form { Unary, Binary, Scalar, Dup };

struct Emit {
  KernelBuilder& k;
  Reg t, mask, d, a, b;

  // `op` over `count` blocks, block i of dst at UB dst + i x dp blocks, of the sources at src0 +
  // i x sp0 and src1 + i x sp1: 8 blocks a repeat, up to 255 repeats an instruction, the last
  // blocks under a shorter mask. `scalar`: the Scalar and Dup forms' operand.
  void blocks(const char* op, Form f, std::uint64_t dst, std::uint32_t dp, std::uint64_t src0, std::uint32_t sp0,
              std::uint64_t src1, std::uint32_t sp1, std::uint64_t count, Reg scalar) {
    const std::uint64_t full = count / 8, tail = count % 8;
    for (std::uint64_t r = 0; r < full; r += 255)
      issue(op, f, std::min<std::uint64_t>(255, full - r), 128, r * 8, {dst, dp, src0, sp0, src1, sp1}, scalar);
    if (tail) issue(op, f, 1, tail * 16, full * 8, {dst, dp, src0, sp0, src1, sp1}, scalar);
  }
  // `op` over a contiguous row of `count` blocks.
  void row(const char* op, Form f, std::uint64_t dst, std::uint64_t src0, std::uint64_t src1, std::uint64_t count,
           Reg scalar = KernelBuilder::zero()) {
    blocks(op, f, dst, 1, src0, 1, src1, 1, count, scalar);
  }

 private:
  struct Operands {
    std::uint64_t dst;
    std::uint32_t dp;
    std::uint64_t src0;
    std::uint32_t sp0;
    std::uint64_t src1;
    std::uint32_t sp1;
  };
  // One instruction of `reps` repeats under a mask of `lanes`, from block `at` of the operands.
  void issue(const char* op, Form f, std::uint64_t reps, std::uint64_t lanes, std::uint64_t at, const Operands& o,
             Reg scalar) {
    k.Li(mask, std::int64_t(lanes));
    k.SetMaskCount(mask);
    k.Li(d, std::int64_t(o.dst + at * o.dp * kBlock));
    if (f != Form::Dup) k.Li(a, std::int64_t(o.src0 + at * o.sp0 * kBlock));
    if (f == Form::Binary) k.Li(b, std::int64_t(o.src1 + at * o.sp1 * kBlock));
    const auto r = std::uint32_t(reps);
    switch (f) {
      case Form::Unary: k.Vector(op, DType::F16, {d, a}, VecCfg{r, o.dp, o.sp0, 1, 8 * o.dp, 8 * o.sp0, 8}); break;
      case Form::Binary:
        k.Vector(op, DType::F16, {d, a, b}, VecCfg{r, o.dp, o.sp0, o.sp1, 8 * o.dp, 8 * o.sp0, 8 * o.sp1});
        break;
      case Form::Scalar:
        k.Vector(op, DType::F16, {d, a, scalar}, VecCfg{r, o.dp, o.sp0, 1, 8 * o.dp, 8 * o.sp0, 8});
        break;
      case Form::Dup: k.Vector(op, DType::F16, {d, scalar}, VecCfg{r, o.dp, 1, 1, 8 * o.dp, 8, 8}); break;
    }
  }
};

// The rows' taps table at UB 0, a 64-bit word at a time by the scalar unit.
void write_table(KernelBuilder& k, Emit& e, const Plan& p) {
  const unsigned T = p.taps();
  for (std::uint32_t y = 0; y < p.s.oh; ++y)
    for (unsigned wd = 0; wd < p.words(); ++wd) {
      std::uint64_t v = 0;
      for (unsigned h = 0; h < 2 && 2 * wd + h < T; ++h) {
        const std::size_t at = std::size_t(y) * T + 2 * wd + h;
        v |= (std::uint64_t(p.rows.index[at]) | std::uint64_t(num::to_f16(p.rows.weight[at])) << 16) << (32 * h);
      }
      k.Li(e.t, std::int64_t(v));
      k.StoreUb(e.t, KernelBuilder::zero(), std::int32_t((std::uint64_t(y) * p.words() + wd) * 8));
    }
}

// The columns' weights of band b's positions: vdup runs of equal weights.
void write_weights(KernelBuilder& k, Emit& e, const Plan& p, const Band& b) {
  for (unsigned j = 0; j < p.taps(); ++j)
    for (const Run& r : runs(
             b.first, b.count, [](std::uint32_t) { return 0u; }, [&](std::uint32_t x) { return p.col_weight(x, j); })) {
      k.Li(e.t, p.col_weight(b.first + r.first, j));
      e.blocks("dup", Form::Dup, p.weight_at(j, b, r.first), r.stride, 0, 1, 0, 1, r.count, e.t);
    }
}

// Output row `unit` (= c1 x oh + the row) through buffer `buf`, a band of positions at a time.
struct RowStep {
  KernelBuilder& k;
  Emit& e;
  const Plan& p;
  Reg X, Y, oy, c1, word, src, field;

  void run(Reg unit, int buf) {
    const ResizeShape& s = p.s;
    k.Li(e.t, s.oh);
    k.Op("rem", oy, unit, e.t);
    k.Op("divu", c1, unit, e.t);
    k.Li(e.t, std::int64_t(p.words()) * 8);
    k.Mul(word, oy, e.t);  // the row's table entry (UB 0 on)
    for (const Band& b : p.bands) band(unit, buf, b);
  }
  void band(Reg unit, int buf, const Band& b) {
    const ResizeShape& s = p.s;
    k.WaitFlag(Pipe::MTE3, Pipe::MTE2, buf);
    for (unsigned j = 0; j < p.taps(); ++j) {  // x + ((c1 x h) + the tap's row) x w x 32 + the band's first
      tap_field(j, 0);
      k.Li(e.t, s.h);
      k.Mul(src, c1, e.t);
      k.Add(src, src, field);
      k.Li(e.t, std::int64_t(s.w) * 32);
      k.Mul(src, src, e.t);
      k.Add(src, src, X);
      k.Li(e.t, std::int64_t(b.in_first) * 32);
      k.Add(src, src, e.t);
      k.Li(e.d, std::int64_t(p.in_at(buf, j)));
      k.DataCopy(Pos::UB, e.d, Pos::GM, src, DataCopyCfg{1, b.in_count, 0, 0});
    }
    k.SetFlag(Pipe::MTE2, Pipe::V, buf);
    k.WaitFlag(Pipe::MTE2, Pipe::V, buf);
    vertical(buf, b);
    if (p.weighted() && !p.whole_weights) write_weights(k, e, p, b);  // the V pipe runs in order
    horizontal(buf, b);
    k.SetFlag(Pipe::V, Pipe::MTE3, buf);
    k.WaitFlag(Pipe::V, Pipe::MTE3, buf);
    k.Li(e.t, std::int64_t(s.ow) * 32);
    k.Mul(src, unit, e.t);
    k.Add(src, src, Y);
    k.Li(e.t, std::int64_t(b.first) * 32);
    k.Add(src, src, e.t);
    k.Li(e.d, std::int64_t(p.out_at(buf)));
    k.DataCopy(Pos::GM, src, Pos::UB, e.d, DataCopyCfg{1, b.count, 0, 0});
    k.SetFlag(Pipe::MTE3, Pipe::MTE2, buf);
  }
  // field = tap j's row (part 0) or f16 weight (part 1), from the table word at `word`.
  void tap_field(unsigned j, unsigned part) {
    k.LoadUb(field, word, std::int32_t(j / 2 * 8));
    k.OpI("shri", field, field, std::int32_t(32 * (j % 2) + 16 * part));
    k.OpI("andi", field, field, 0xffff);
  }
  // The band's input positions of the output row's tap rows, each times its weight, summed into
  // the first tap's row.
  void vertical(int buf, const Band& b) {
    if (!p.weighted()) return;
    for (unsigned j = 0; j < p.taps(); ++j) {
      tap_field(j, 1);
      e.row("muls", Form::Scalar, p.in_at(buf, j), p.in_at(buf, j), 0, b.in_count, field);
      if (j) e.row("add", Form::Binary, p.in_at(buf, 0), p.in_at(buf, 0), p.in_at(buf, j), b.in_count);
    }
  }
  // Each output position of the band the weighted sum of the positions its taps read.
  void horizontal(int buf, const Band& b) {
    for (unsigned j = 0; j < p.taps(); ++j) {
      const std::uint64_t to = j ? p.gathered_at(buf) : p.out_at(buf);
      const auto src = [&](std::uint32_t x) { return p.col(x, j) - b.in_first; };
      for (const Run& r : runs(b.first, b.count, src, [](std::uint32_t) { return 0; }))
        e.blocks("copy", Form::Unary, to + std::uint64_t(r.first) * kBlock, r.stride,
                 p.in_at(buf, 0) + std::uint64_t(r.src) * kBlock, r.src_stride, 0, 1, r.count, KernelBuilder::zero());
      if (!p.weighted()) continue;
      e.row("mul", Form::Binary, to, to, p.weight_at(j, b, 0), b.count);
      if (j) e.row("add", Form::Binary, p.out_at(buf), p.out_at(buf), to, b.count);
    }
  }
};

}  // namespace

Image resize_kernel(const AiCoreConfig& cfg, const ResizeShape& s) {
  check_resize(cfg, s);
  const Plan p = plan_for(cfg, s);
  KernelBuilder k;
  Reg arg = k.reg(), X = k.reg(), Y = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0);
  k.LoadGm(Y, arg, 8);
  Emit e{k, k.reg(), k.reg(), k.reg(), k.reg(), k.reg()};
  write_table(k, e, p);
  if (p.weighted() && p.whole_weights) write_weights(k, e, p, Band{0, s.ow, 0, 0});  // once: every row's
  RowStep step{k, e, p, X, Y, k.reg(), k.reg(), k.reg(), k.reg(), k.reg()};
  k.RoundRobinTwoBuffers(arg, k.Const(std::int64_t(s.c1()) * s.oh), k.reg(), k.reg(), k.reg(),
                         [&](Reg unit, int buf) { step.run(unit, buf); });
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
