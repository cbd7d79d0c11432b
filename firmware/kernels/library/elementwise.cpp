// SPDX-License-Identifier: MIT
#include "elementwise.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "aicore/kernel_builder.hpp"
#include "aicore/numeric.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

// What an op's steps write with: the vector unit on the math type, from `src` (x, or x widened),
// `y` and `w` (the second and third inputs) into `dst`; `scalar` holds an immediate. The steps
// may write over the inputs' areas: each tile's inputs are read once.
struct ElementwiseSteps {
  KernelBuilder& k;
  DType t;
  VecCfg vec;
  Reg dst, src, y, w3, scalar;
  Reg w[2];  // scratch areas (ElementwiseOp::scratch)
  double alpha, beta;
  void un(const char* op, Reg d, Reg s) { k.Vector(op, t, {d, s}, vec); }
  void bin(const char* op, Reg d, Reg a, Reg b) { k.Vector(op, t, {d, a, b}, vec); }
  void scal(const char* op, Reg d, Reg s, double v) {
    k.Li(scalar, std::int64_t(num::bits(v, t)));
    k.Vector(op, t, {d, s, scalar}, vec);
  }
  void dup(Reg d, double v) {
    k.Li(scalar, std::int64_t(num::bits(v, t)));
    k.Vector("dup", t, {d, scalar}, vec);
  }
  // bits <- a <c> b (16 bytes of bits a repeat: a scratch area holds them)
  void cmp(Cmp c, Reg bits, Reg a, Reg b) { k.Compare(c, t, bits, a, b, vec); }
  void sel(Reg d, Reg a, Reg b, Reg bits) { k.Vector("sel", t, {d, a, b, bits}, vec); }
};

namespace {

template <int kOp>
void binary(ElementwiseSteps& s) {
  static const char* names[] = {"add", "sub", "mul", "max", "min", "div"};
  s.bin(names[kOp], s.dst, s.src, s.y);
}
template <int kOp>
void unary(ElementwiseSteps& s) {
  static const char* names[] = {"relu", "exp", "abs", "sqrt", "rec", "ln"};
  s.un(names[kOp], s.dst, s.src);
}
void neg(ElementwiseSteps& s) { s.scal("muls", s.dst, s.src, -1.0); }
// 1 / (1 + e^-x): e^-x overflows to inf below about -11 in f16, and 1 / inf is 0, the limit.
void sigmoid(ElementwiseSteps& s) {
  s.scal("muls", s.dst, s.src, -1.0);
  s.un("exp", s.dst, s.dst);
  s.scal("adds", s.dst, s.dst, 1.0);
  s.un("rec", s.dst, s.dst);
}
// 1 - 2 / (e^2x + 1): no overflow to inf / inf at either end. It cancels near 0, so an f16 x is
// computed in f32 (the op's f32_math), as vendor libraries widen f16 tanh.
void tanh_steps(ElementwiseSteps& s) {
  s.scal("muls", s.dst, s.src, 2.0);
  s.un("exp", s.dst, s.dst);
  s.scal("adds", s.dst, s.dst, 1.0);
  s.un("rec", s.dst, s.dst);
  s.scal("muls", s.dst, s.dst, -2.0);
  s.scal("adds", s.dst, s.dst, 1.0);
}
void leaky_relu(ElementwiseSteps& s) {
  s.k.Li(s.scalar, std::int64_t(num::bits(s.alpha, s.t)));
  s.k.Vector("lrelu", s.t, {s.dst, s.src, s.scalar}, s.vec);
}
// max(0, min(1, a x + b)) into dst, from src, min first as the formula (vmins and vmaxs return
// the number of a NaN and a number: a NaN x gives 1, as std::min and std::max in that order).
void hard_gate(ElementwiseSteps& s, double a, double b) {
  s.scal("muls", s.dst, s.src, a);
  s.scal("adds", s.dst, s.dst, b);
  s.scal("mins", s.dst, s.dst, 1.0);
  s.scal("maxs", s.dst, s.dst, 0.0);
}
void hard_sigmoid(ElementwiseSteps& s) { hard_gate(s, s.alpha, s.beta); }
void hard_swish(ElementwiseSteps& s) {  // x max(0, min(1, x / 6 + 1 / 2)), ONNX's fixed alpha and beta
  hard_gate(s, 1.0 / 6.0, 0.5);
  s.bin("mul", s.dst, s.dst, s.src);
}
void clip(ElementwiseSteps& s) {
  s.scal("maxs", s.dst, s.src, s.alpha);
  s.scal("mins", s.dst, s.dst, s.beta);
}
// x / (1 + e^-x) as the sigmoid times x (SiLU, Swish).
void silu(ElementwiseSteps& s) {
  sigmoid(s);
  s.bin("mul", s.dst, s.dst, s.src);
}
void adds(ElementwiseSteps& s) { s.scal("adds", s.dst, s.src, s.alpha); }
// 1 where x <c> y, else 0 (ONNX's bool, held as 0 and 1 of dtype): vcmp's bits select between a
// tile of ones and one of zeros, written over x and y once they are compared (vsel's operands
// are three areas: it copies each element, which must not be its own source).
template <Cmp kCmp>
void compare(ElementwiseSteps& s) {
  s.cmp(kCmp, s.w[0], s.src, s.y);
  s.dup(s.src, 1.0);
  s.dup(s.y, 0.0);
  s.sel(s.dst, s.src, s.y, s.w[0]);
}
// 1 where x is 0, else 0 (ONNX's Not of a bool held as 0 and 1).
void logical_not(ElementwiseSteps& s) {
  s.dup(s.w[1], 0.0);
  s.cmp(Cmp::Eq, s.w[0], s.src, s.w[1]);
  s.dup(s.src, 1.0);
  s.sel(s.dst, s.src, s.w[1], s.w[0]);
}
// y where x is not 0, else w (ONNX's Where; its condition a bool held as 0 and 1).
void where(ElementwiseSteps& s) {
  s.dup(s.w[1], 0.0);
  s.cmp(Cmp::Ne, s.w[0], s.src, s.w[1]);
  s.sel(s.dst, s.y, s.w3, s.w[0]);
}
// Where with a value of one element, alpha (beta), in a scratch area or over x once it is compared:
// no tensor of it is read (GPT-2's mask value over every head's scores).
void where_else(ElementwiseSteps& s) {  // x != 0 ? y : alpha
  s.dup(s.w[1], 0.0);
  s.cmp(Cmp::Ne, s.w[0], s.src, s.w[1]);
  s.dup(s.w[1], s.alpha);
  s.sel(s.dst, s.y, s.w[1], s.w[0]);
}
void where_then(ElementwiseSteps& s) {  // x != 0 ? alpha : y
  s.dup(s.w[1], 0.0);
  s.cmp(Cmp::Ne, s.w[0], s.src, s.w[1]);
  s.dup(s.w[1], s.alpha);
  s.sel(s.dst, s.w[1], s.y, s.w[0]);
}
void where_both(ElementwiseSteps& s) {  // x != 0 ? alpha : beta
  s.dup(s.w[1], 0.0);
  s.cmp(Cmp::Ne, s.w[0], s.src, s.w[1]);
  s.dup(s.src, s.alpha);
  s.dup(s.w[1], s.beta);
  s.sel(s.dst, s.src, s.w[1], s.w[0]);
}
void muls(ElementwiseSteps& s) { s.scal("muls", s.dst, s.src, s.alpha); }

// x^alpha for a constant alpha (ONNX's Pow by a constant; an f16 x computed in f32, whose range
// holds the powers f16's cannot). An integral alpha up to 64 by squaring, left to right from its
// leading bit (x^3 = x x x, two products, a negative x keeping its sign: (-2)^3 is -8), 1 / x^-alpha
// for a negative one (0^-3 an infinity); x^0 is 1, a NaN's too (NumPy's). Past 64 the products'
// roundings add up (n of them: 2e-3 at 1e5), so a larger integral alpha is e^(m ln |x|) for its
// even part m, times x when it is odd (the sign, -0 and -inf's too), then 1 / that below 0. Any
// other alpha e^(alpha ln x): a negative x gives NaN (ln's), as NumPy's pow does, 0 gives 0 or an
// infinity; -inf, whose ln is NaN too, is selected apart: C's pow gives it inf (alpha > 0) or 0.
// Through e^v the relative error is a few f32 steps times 1 + |v|.
bool integral(double a) { return a == std::trunc(a); }
bool by_products(double a) { return integral(a) && std::fabs(a) <= 64.0; }
bool odd(double a) { return std::fmod(std::fabs(a), 2.0) == 1.0; }
int leading_bit(std::uint32_t n) { return 31 - __builtin_clz(n); }  // n > 0
void powers(ElementwiseSteps& s) {                                  // x^n by products, 0 < n <= 64
  const auto n = std::uint32_t(std::fabs(s.alpha));
  const int top = leading_bit(n);
  if (top == 0) s.scal("muls", s.dst, s.src, 1.0);  // x^1: x itself, a copy
  for (int b = top - 1; b >= 0; --b) {
    s.bin("mul", s.dst, b == top - 1 ? s.src : s.dst, b == top - 1 ? s.src : s.dst);
    if (n >> b & 1u) s.bin("mul", s.dst, s.dst, s.src);
  }
}
void pows(ElementwiseSteps& s) {
  if (!integral(s.alpha)) {
    s.un("ln", s.w[1], s.src);
    s.scal("muls", s.w[1], s.w[1], s.alpha);
    s.un("exp", s.w[1], s.w[1]);
    s.dup(s.dst, -HUGE_VAL);
    s.cmp(Cmp::Eq, s.w[0], s.src, s.dst);
    s.dup(s.src, s.alpha > 0 ? HUGE_VAL : 0.0);
    s.sel(s.dst, s.src, s.w[1], s.w[0]);
    return;
  }
  if (s.alpha == 0) return s.dup(s.dst, 1.0);
  if (by_products(s.alpha)) {
    powers(s);
  } else {
    s.un("abs", s.dst, s.src);
    s.un("ln", s.dst, s.dst);
    s.scal("muls", s.dst, s.dst, std::fabs(s.alpha) - (odd(s.alpha) ? 1 : 0));
    s.un("exp", s.dst, s.dst);
    if (odd(s.alpha)) s.bin("mul", s.dst, s.dst, s.src);
  }
  if (s.alpha < 0) s.un("rec", s.dst, s.dst);
}
// pows's vector instructions per element, as its steps emit them: light (muls, mul, dup), heavy
// (ln, exp, rec).
std::pair<unsigned, unsigned> pows_counts(double alpha) {
  const unsigned rec = alpha < 0 ? 1 : 0;
  if (!integral(alpha)) return {5, 2};
  if (alpha == 0) return {1, 0};
  if (!by_products(alpha)) return {odd(alpha) ? 3u : 2u, 2 + rec};
  const auto n = std::uint32_t(std::fabs(alpha));
  return {n == 1 ? 1u : unsigned(leading_bit(n) + __builtin_popcount(n) - 1), rec};
}

// erf(x) into d from x (kept), with scratch w: Abramowitz and Stegun 7.1.26, for x >= 0
// E(x) = 1 - t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) e^-x^2 with t = 1 / (1 + p x), within
// 1.5e-7; odd, so erf(x) = E(|x|) c / (|c| + 1e-30) with c = x clamped to [-1, 1], which needs no
// select (at 0: 0 times a finite value; at an infinity: E = 1 times its sign; a NaN stays NaN).
void erf_into(ElementwiseSteps& s, Reg d, Reg x, Reg w) {
  static const double a[] = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
  s.un("abs", d, x);
  s.scal("muls", d, d, 0.3275911);
  s.scal("adds", d, d, 1.0);
  s.un("rec", d, d);  // t
  s.scal("muls", w, d, a[4]);
  for (int i = 3; i >= 0; --i) {
    s.scal("adds", w, w, a[i]);
    s.bin("mul", w, w, d);
  }
  s.bin("mul", d, x, x);
  s.scal("muls", d, d, -1.0);
  s.un("exp", d, d);
  s.bin("mul", w, w, d);
  s.scal("muls", w, w, -1.0);
  s.scal("adds", w, w, 1.0);  // E(|x|)
  s.scal("maxs", d, x, -1.0);
  s.scal("mins", d, d, 1.0);  // c
  s.bin("mul", w, w, d);
  s.un("abs", d, d);
  s.scal("adds", d, d, 1e-30);
  s.bin("div", d, w, d);
}
void erf(ElementwiseSteps& s) { erf_into(s, s.dst, s.src, s.w[0]); }
// x (1 + erf(x / sqrt 2)) / 2: GELU in BERT's and PyTorch's exact form.
void gelu(ElementwiseSteps& s) {
  s.scal("muls", s.w[1], s.src, 0.70710678118654752);
  erf_into(s, s.dst, s.w[1], s.w[0]);
  s.scal("adds", s.dst, s.dst, 1.0);
  s.scal("muls", s.dst, s.dst, 0.5);
  s.bin("mul", s.dst, s.dst, s.src);
}
// x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2: GELU's tanh approximation (GPT-2's gelu_new,
// PyTorch's approximate="tanh"), as x / (1 + e^-2u) with u the tanh's operand: the same function
// (1 + tanh u = 2 / (1 + e^-2u)), without 1 + tanh u cancelling where tanh u nears -1 (x = -4 lost
// a quarter of its value so in f16).
void gelu_tanh(ElementwiseSteps& s) {
  s.bin("mul", s.w[0], s.src, s.src);
  s.bin("mul", s.w[0], s.w[0], s.src);
  s.scal("muls", s.w[0], s.w[0], 0.044715);
  s.bin("add", s.w[0], s.w[0], s.src);
  s.scal("muls", s.w[0], s.w[0], -2 * 0.79788456080286536);
  s.un("exp", s.w[0], s.w[0]);
  s.scal("adds", s.w[0], s.w[0], 1.0);
  s.bin("div", s.dst, s.src, s.w[0]);
}

}  // namespace

const std::vector<ElementwiseOp>& elementwise_ops() {
  static const std::vector<ElementwiseOp> table = {
      // name, inputs, f32 math, exact, scratch, light, heavy, params, params doc, doc, steps
      {"add", 2, false, true, 0, 1, 0, 0, "", "z = x + y", binary<0>},
      {"sub", 2, false, true, 0, 1, 0, 0, "", "z = x - y", binary<1>},
      {"mul", 2, false, true, 0, 1, 0, 0, "", "z = x * y", binary<2>},
      {"max", 2, false, true, 0, 1, 0, 0, "", "z = max(x, y)", binary<3>},
      {"min", 2, false, true, 0, 1, 0, 0, "", "z = min(x, y)", binary<4>},
      {"div", 2, false, true, 0, 0, 1, 0, "", "z = x / y", binary<5>},
      {"relu", 1, false, true, 0, 1, 0, 0, "", "z = max(x, 0)", unary<0>},
      {"exp", 1, false, true, 0, 0, 1, 0, "", "z = e^x", unary<1>},
      {"abs", 1, false, true, 0, 1, 0, 0, "", "z = |x|", unary<2>},
      {"sqrt", 1, false, true, 0, 0, 1, 0, "", "z = sqrt(x)", unary<3>},
      {"rec", 1, false, true, 0, 0, 1, 0, "", "z = 1 / x", unary<4>},
      {"log", 1, false, true, 0, 0, 1, 0, "", "z = ln(x)", unary<5>},
      {"neg", 1, false, true, 0, 1, 0, 0, "", "z = -x", neg},
      {"adds", 1, false, false, 0, 1, 0, 1, "alpha: the constant", "z = x + alpha", adds},
      {"muls", 1, false, false, 0, 1, 0, 1, "alpha: the constant", "z = alpha x", muls},
      {"sigmoid", 1, false, false, 0, 2, 2, 0, "", "z = 1 / (1 + e^-x)", sigmoid},
      {"silu", 1, false, false, 0, 3, 2, 0, "", "z = x / (1 + e^-x) (SiLU, Swish)", silu},
      {"tanh", 1, true, false, 0, 4, 2, 0, "", "z = tanh(x), as 1 - 2 / (e^2x + 1) (f16: computed in f32)", tanh_steps},
      {"erf", 1, true, false, 1, 22, 3, 0, "", "z = erf(x), within 1.5e-7 and f32 rounding (f16: computed in f32)",
       erf},
      {"gelu", 1, true, false, 2, 26, 3, 0, "", "z = x (1 + erf(x / sqrt 2)) / 2 (f16: computed in f32)", gelu},
      {"gelu_tanh", 1, true, false, 1, 6, 2, 0, "",
       "z = x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2, GELU's tanh form (f16: computed in f32)", gelu_tanh},
      {"pows", 1, true, false, 2, 0, 0, 1, "alpha: the exponent",
       "z = x^alpha: an integral alpha (|alpha| <= 64) by products, a larger one e^(m ln |x|) (times x when odd), "
       "1 / x^-alpha below 0; another alpha e^(alpha ln x) (NaN for x < 0) (f16: computed in f32)",
       pows, pows_counts},
      {"leaky_relu", 1, false, false, 0, 1, 0, 1, "alpha: the slope below 0", "z = x >= 0 ? x : alpha x", leaky_relu},
      {"hard_sigmoid", 1, false, false, 0, 4, 0, 2, "alpha, beta", "z = max(0, min(1, alpha x + beta))", hard_sigmoid},
      {"hard_swish", 1, false, false, 0, 5, 0, 0, "", "z = x max(0, min(1, x / 6 + 1 / 2))", hard_swish},
      {"clip", 1, false, true, 0, 2, 0, 2, "alpha, beta: the bounds", "z = min(max(x, alpha), beta)", clip},
      {"eq", 2, false, true, 1, 4, 0, 0, "", "z = x == y ? 1 : 0", compare<Cmp::Eq>},
      {"ne", 2, false, true, 1, 4, 0, 0, "", "z = x != y ? 1 : 0 (a NaN is unequal)", compare<Cmp::Ne>},
      {"lt", 2, false, true, 1, 4, 0, 0, "", "z = x < y ? 1 : 0", compare<Cmp::Lt>},
      {"le", 2, false, true, 1, 4, 0, 0, "", "z = x <= y ? 1 : 0", compare<Cmp::Le>},
      {"gt", 2, false, true, 1, 4, 0, 0, "", "z = x > y ? 1 : 0", compare<Cmp::Gt>},
      {"ge", 2, false, true, 1, 4, 0, 0, "", "z = x >= y ? 1 : 0", compare<Cmp::Ge>},
      {"not", 1, false, true, 2, 4, 0, 0, "", "z = x == 0 ? 1 : 0", logical_not},
      {"where", 3, false, true, 2, 3, 0, 0, "", "z = x != 0 ? y : w", where},
      {"where_else", 2, false, true, 2, 4, 0, 1, "alpha: z where x is 0", "z = x != 0 ? y : alpha", where_else},
      {"where_then", 2, false, true, 2, 4, 0, 1, "alpha: z where x is not 0", "z = x != 0 ? alpha : y", where_then},
      {"where_both", 1, false, true, 2, 5, 0, 2, "alpha, beta: z where x is not 0, and where it is",
       "z = x != 0 ? alpha : beta", where_both},
  };
  return table;
}

const ElementwiseOp* elementwise_op(const std::string& name) {
  for (const ElementwiseOp& o : elementwise_ops())
    if (name == o.name) return &o;
  return nullptr;
}

std::pair<unsigned, unsigned> elementwise_counts(const ElementwiseOp& op, double alpha) {
  return op.counts ? op.counts(alpha) : std::pair{op.light, op.heavy};
}

unsigned elementwise_inputs(const std::string& op) {
  const ElementwiseOp* o = elementwise_op(op);
  return o ? o->inputs : 1;  // a cast: 1
}

// An f16 x of an f32_math op is widened: the tiles are sized in f32.
unsigned elementwise_wide_bytes(const ElementwiseShape& s) {
  const ElementwiseOp* o = elementwise_op(s.op);
  return std::max({dtype_bytes(s.dtype), s.op == "cast" ? dtype_bytes(s.to) : 0u, o && o->f32_math ? 4u : 0u});
}

std::uint64_t elementwise_block_elems(const ElementwiseShape& s) {
  return 32 / std::min(dtype_bytes(s.dtype), s.op == "cast" ? dtype_bytes(s.to) : dtype_bytes(s.dtype));
}

std::uint32_t elementwise_tile_bytes(const AiCoreConfig& cfg, const ElementwiseShape& s) {
  const unsigned operands = elementwise_inputs(s.op) + 1;  // each operand area is a full tile
  const ElementwiseOp* op = elementwise_op(s.op);
  const unsigned areas = 2 * operands + (op ? op->scratch : 0);  // two of each operand, one of each scratch
  std::uint32_t tile = 65280;                                    // 255 repeats x 256 B
  std::uint32_t p = 256;
  // The areas, and 256 bytes an operand (x, y, z at least) for the last block of a ragged n
  // (ElementwiseCode::ub).
  const std::uint64_t last = 256ull * std::max(3u, operands);
  while (p * 2 <= tile && 2ull * areas * p + last <= cfg.size[kUB]) p *= 2;
  if (std::uint64_t(areas) * p + last > cfg.size[kUB])
    throw Error("elementwise: the UB cannot hold two tiles of each operand and the op's scratch");
  return p;
}

namespace {

void check_shape(const ElementwiseShape& s) {
  if (s.op != "cast" && !elementwise_op(s.op)) throw Error("elementwise: unknown op '" + s.op + "'");
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
  VecCfg widen, narrow;  // an f32_math op's f16 x to f32, and its f32 result back
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
  const ElementwiseOp* op;  // nullptr: a cast
  unsigned inputs;          // 1 to 3
  bool cast;
  std::uint32_t tile;  // bytes of the wider type
  std::uint64_t x_bytes, z_bytes;
  TileCfg whole;
  std::vector<TileCfg> tail;  // its pieces; the last one (the block ending at n) when `ragged`
  bool ragged = false;
  KernelBuilder k{};
  Reg arg{}, X{}, Y{}, W{}, Z{}, t{}, dim{}, ntiles{}, off{}, g{}, u0{}, u1{}, u3{}, u2{}, n128{}, sc{}, w0{}, w1{};

  // Operand 0 is x, 1 y, 3 w (the inputs), 2 z. The UB: two tiles of each input, then two of z
  // ([x0 x1 y0 y1 z0 z1] for two inputs), then the ragged last block's operands (b = 2), 256 bytes
  // each at 256 x the operand's number (three of them at least), then the op's scratch areas
  // (only the vector unit uses them, one tile at a time): what elementwise_tile_bytes counts.
  int slot(int operand) const { return operand == 2 ? int(inputs) : operand == 3 ? 2 : operand; }
  std::int64_t ub(int operand, int b) const {
    const int operands = int(inputs) + 1, at = slot(operand);
    return b == 2 ? std::int64_t(tile) * 2 * operands + 256 * operand : std::int64_t(tile) * (2 * at + b);
  }
  std::int64_t scratch(int i) const {
    return std::int64_t(tile) * (2 * (inputs + 1) + i) + 256 * std::max(3, int(inputs) + 1);
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
  if (inputs > 1) {
    k.Add(g, Y, off);
    k.Li(u1, ub(1, b));
    k.DataCopy(Pos::UB, u1, Pos::GM, g, c.copy_in);
  }
  if (inputs > 2) {
    k.Add(g, W, off);
    k.Li(u3, ub(3, b));
    k.DataCopy(Pos::UB, u3, Pos::GM, g, c.copy_in);
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
  } else if (op->f32_math && s.dtype == DType::F16) {
    // x widened into z's area (a tile of the wider type), the op into x's, narrowed back.
    k.Cast(DType::F32, DType::F16, u2, u0, c.widen, Round::Rint);
    ElementwiseSteps st{k, DType::F32, c.vec, u0, u2, u1, u3, sc, {w0, w1}, s.alpha, s.beta};
    op->steps(st);
    k.Cast(DType::F16, DType::F32, u2, u0, c.narrow, Round::Rint);
  } else {
    if (inputs > 1) k.Li(u1, ub(1, b));
    if (inputs > 2) k.Li(u3, ub(3, b));
    ElementwiseSteps st{k, s.dtype, c.vec, u2, u0, u1, u3, sc, {w0, w1}, s.alpha, s.beta};
    op->steps(st);
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
  return {DataCopyCfg{1, std::uint32_t(elems * eb / 32), 0, 0},
          DataCopyCfg{1, std::uint32_t(elems * ob / 32), 0, 0},
          VecCfg{repeats, 1, 1, 1, 8, 8, 8},
          VecCfg{repeats, 1, 1, 1, 8 * ob / wide, 8 * eb / wide, 8},
          VecCfg{repeats, 1, 1, 1, 8, 8 * eb / wide, 8},
          VecCfg{repeats, 1, 1, 1, 8 * ob / wide, 8, 8},
          start};
}

}  // namespace

Image elementwise_kernel(const AiCoreConfig& cfg, const ElementwiseShape& s) {
  check_shape(s);
  const bool cast = s.op == "cast";
  const unsigned inputs = elementwise_inputs(s.op);
  const unsigned eb = dtype_bytes(s.dtype), ob = cast ? dtype_bytes(s.to) : eb, wide = elementwise_wide_bytes(s);
  // A tile is `tile` bytes of the wider type; x and z tiles hold the same number of elements.
  const std::uint32_t tile = elementwise_tile_bytes(cfg, s);
  const std::uint64_t tile_elems = tile / wide;
  // Copies move whole 32-byte blocks: the tail is a whole number of blocks of x and of z, its
  // last block ending at n. Under one block (n < 16 f16 elements) there is nothing to end at: one
  // block from element 0, its copies past n staying in the tensors' memory (whole 4 KiB pages).
  const std::uint64_t block_elems = elementwise_block_elems(s);
  const std::uint64_t full = s.n / tile_elems, rest = s.n % tile_elems;
  ElementwiseCode c{s,    elementwise_op(s.op), inputs,          cast,
                    tile, tile_elems * eb,      tile_elems * ob, tile_cfg(tile_elems, eb, ob, wide),
                    {}};
  if (s.n < block_elems) c.tail.push_back(tile_cfg(block_elems, eb, ob, wide, 0));
  if (const std::uint64_t whole_blocks = rest / block_elems * block_elems)
    c.tail.push_back(tile_cfg(whole_blocks, eb, ob, wide, full * tile_elems));
  c.ragged = s.n >= block_elems && rest % block_elems != 0;
  if (c.ragged) c.tail.push_back(tile_cfg(block_elems, eb, ob, wide, s.n - block_elems));
  KernelBuilder& k = c.k;
  c.arg = k.reg(), c.X = k.reg(), c.Y = k.reg(), c.Z = k.reg();
  k.GetSpr(c.arg, Spr::ArgBase);
  k.LoadGm(c.X, c.arg, 0);
  if (inputs > 1) k.LoadGm(c.Y, c.arg, 8);
  if (inputs > 2) c.W = k.reg(), k.LoadGm(c.W, c.arg, 16);
  k.LoadGm(c.Z, c.arg, 8 * std::int64_t(inputs));
  c.t = k.reg(), c.dim = k.reg(), c.ntiles = k.Const(std::int64_t(full)), c.off = k.reg(), c.g = k.reg(),
  c.u0 = k.reg(), c.u1 = k.reg(), c.u2 = k.reg(), c.sc = k.reg(), c.u3 = inputs > 2 ? k.reg() : Reg{},
  c.n128 = k.Const(std::min<std::int64_t>(128, 256 / wide));
  const unsigned scratch = c.op ? c.op->scratch : 0;
  if (scratch > 0) c.w0 = k.Const(c.scratch(0));
  if (scratch > 1) c.w1 = k.Const(c.scratch(1));
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
