// The vector unit: every V instruction on UB operands, with mask, repeats and block / repeat
// strides, computed element by element in the instruction's data type.
#include <cmath>
#include <cstring>
#include <limits>
#include <array>
#include <utility>

#include "aicore.hpp"
#include "common/error.hpp"
#include "numeric.hpp"

namespace dvp::aicore {

namespace {

bool is_float(DType t) { return t == DType::F16 || t == DType::BF16 || t == DType::F32; }

// Integer results wrap to the element width, as the hardware's integer ALUs do.
void store_wrapped(std::uint8_t* p, DType t, std::int64_t v) { std::memcpy(p, &v, dtype_bytes(t)); }

std::int64_t load_int(const std::uint8_t* p, DType t) { return std::int64_t(num::load(p, t)); }

// The integer ALU wraps in two's complement; C++ signed overflow is undefined, so the sums
// and products are formed unsigned (u32 x u32 exceeds an int64).
std::int64_t wrap_add(std::int64_t a, std::int64_t b) { return std::int64_t(std::uint64_t(a) + std::uint64_t(b)); }
std::int64_t wrap_sub(std::int64_t a, std::int64_t b) { return std::int64_t(std::uint64_t(a) - std::uint64_t(b)); }
std::int64_t wrap_mul(std::int64_t a, std::int64_t b) { return std::int64_t(std::uint64_t(a) * std::uint64_t(b)); }
// A double as an integer operand: saturated, NaN as 0 (a cast out of range is undefined).
std::int64_t to_int(double v) {
  if (!(v == v)) return 0;
  if (v >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
  if (v <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
  return std::int64_t(v);
}

// A scalar operand: the low element-width bits of a register, read as the element type.
double scalar_value(std::uint64_t reg, DType t) {
  std::uint8_t b[8];
  std::memcpy(b, &reg, 8);
  return num::load(b, t);
}

struct Operand {
  std::uint64_t base;
  unsigned eb;        // element bytes
  unsigned blk, rep;  // strides in 32 B blocks
  std::uint64_t addr(unsigned r, unsigned i) const {
    const unsigned per_block = 32 / eb;
    return base + std::uint64_t(r) * rep * 32 + std::uint64_t(i / per_block) * blk * 32 + (i % per_block) * eb;
  }
};

// The vector operations, resolved from their opcodes once (as the scalar unit does) so that
// the per-element loops compare small integers rather than mnemonics.
enum class VOp : std::uint8_t {
  None, Add, Sub, Mul, Div, Max, Min, And, Or, Adds, Muls, Maxs, Mins, Abs, Exp, Ln, Sqrt, Rsqrt, Rec, Relu,
  Lrelu, Copy, Conv, Cmp, Sel, Cadd, Cmax, Cmin, Redsum, Redmax, Redmin, Dup, Transpose
};

const std::array<VOp, 256>& vector_ops() {
  static const std::array<VOp, 256> table = [] {
    std::array<VOp, 256> t{};
    const std::pair<const char*, VOp> names[] = {
        {"vadd", VOp::Add},     {"vsub", VOp::Sub},       {"vmul", VOp::Mul},       {"vdiv", VOp::Div},
        {"vmax", VOp::Max},     {"vmin", VOp::Min},       {"vand", VOp::And},       {"vor", VOp::Or},
        {"vadds", VOp::Adds},   {"vmuls", VOp::Muls},     {"vmaxs", VOp::Maxs},     {"vmins", VOp::Mins},
        {"vabs", VOp::Abs},     {"vexp", VOp::Exp},       {"vln", VOp::Ln},         {"vsqrt", VOp::Sqrt},
        {"vrsqrt", VOp::Rsqrt}, {"vrec", VOp::Rec},       {"vrelu", VOp::Relu},     {"vlrelu", VOp::Lrelu},
        {"vcopy", VOp::Copy},   {"vconv", VOp::Conv},     {"vcmp", VOp::Cmp},       {"vsel", VOp::Sel},
        {"vcadd", VOp::Cadd},   {"vcmax", VOp::Cmax},     {"vcmin", VOp::Cmin},     {"vredsum", VOp::Redsum},
        {"vredmax", VOp::Redmax}, {"vredmin", VOp::Redmin}, {"vdup", VOp::Dup},     {"vtranspose", VOp::Transpose}};
    for (auto& [m, op] : names) t[*find_opcode(m)] = op;
    return t;
  }();
  return table;
}

}  // namespace

Tick AiCore::vector_op(const Issued& e) {
  const Instr& in = e.in;
  const OpInfo& info = in.info();
  const VOp op = vector_ops()[in.op];
  const Tick now = now_tick();
  const Clock& clk = cfg_.clock;
  std::uint8_t* ub = buf_[kUB].data();
  const DType t = in.dt1;
  if (op == VOp::None) {
    raise(e.pc, &in, "has no vector model");
    return now;
  }
  if (t == DType::None || (op == VOp::Conv && in.dt2 == DType::None)) {
    raise(e.pc, &in, "needs a data type");
    return now;
  }
  auto fault = [&](const std::string& why) {
    raise(e.pc, &in, why);
    return now;
  };
  const unsigned eb = dtype_bytes(t);

  if (op == VOp::Transpose) {
    if (eb != 2) return fault("vtranspose works on 16-bit elements");
    if (!local_range(kUB, e.v[0], 512, e, "destination") || !local_range(kUB, e.v[1], 512, e, "source")) return now;
    if (functional_) {
      std::uint16_t tmp[256];
      std::memcpy(tmp, ub + e.v[1], 512);
      std::uint16_t out[256];
      for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 16; ++c) out[c * 16 + r] = tmp[r * 16 + c];
      std::memcpy(ub + e.v[0], out, 512);
    }
    return now + clk.cycles(cfg_.vector_startup_cycles + 2 * cfg_.vector_cycles_per_repeat);
  }

  // The configuration word is the last register operand.
  const VecCfg c = VecCfg::unpack(e.v[info.regs - 1]);
  if (c.repeat < 1) return fault("repeat count 0 (must be 1..255)");
  const bool conv = op == VOp::Conv;
  const unsigned sb = conv ? dtype_bytes(in.dt2) : eb;  // source element bytes
  const unsigned elems = 256 / std::max(eb, sb);        // per repeat
  const bool scalar_form = op == VOp::Adds || op == VOp::Muls || op == VOp::Maxs || op == VOp::Mins || op == VOp::Lrelu;
  const bool binary = op == VOp::Add || op == VOp::Sub || op == VOp::Mul || op == VOp::Div || op == VOp::Max || op == VOp::Min ||
                      op == VOp::And || op == VOp::Or || op == VOp::Cmp || op == VOp::Sel;
  const bool reduce = op == VOp::Cadd || op == VOp::Cmax || op == VOp::Cmin || op == VOp::Redsum || op == VOp::Redmax || op == VOp::Redmin;
  const bool dup = op == VOp::Dup;
  if ((op == VOp::Cmp || op == VOp::Sel) && elems > 128)
    return fault(std::string(info.mnemonic) + " works on 16- and 32-bit types (one selection bit per element, 128 per repeat)");
  if ((op == VOp::And || op == VOp::Or) && is_float(t)) return fault(std::string(info.mnemonic) + " works on integer types");
  if ((op == VOp::Exp || op == VOp::Ln || op == VOp::Div || op == VOp::Sqrt || op == VOp::Rsqrt || op == VOp::Rec) && !is_float(t))
    return fault(std::string(info.mnemonic) + " works on floating types");

  Operand dst{e.v[0], eb, c.dst_blk, c.dst_rep};
  Operand src0{e.v[1], sb, c.src0_blk, c.src0_rep};
  Operand src1{e.v[2], eb, c.src1_blk, c.src1_rep};
  const std::uint64_t sel_base = e.v[3];
  auto span = [&](const Operand& o) { return o.addr(c.repeat - 1, elems - 1) + o.eb - o.base; };
  // Range and alignment of every operand before anything moves.
  if (op == VOp::Cmp) {
    if (!local_range(kUB, dst.base, std::uint64_t(c.repeat) * 16, e, "destination")) return now;
  } else if (reduce) {
    const std::uint64_t n = (op == VOp::Redsum) ? 1 : (op == VOp::Redmax || op == VOp::Redmin) ? 2
                            : (op == VOp::Cadd) ? c.repeat : 2ull * c.repeat;
    if (!local_range(kUB, dst.base, n * eb, e, "destination")) return now;
  } else if (!local_range(kUB, dst.base, span(dst), e, "destination")) {
    return now;
  }
  if (!dup && !local_range(kUB, src0.base, span(src0), e, "source")) return now;
  if (binary && !local_range(kUB, src1.base, span(src1), e, "second source")) return now;
  if (op == VOp::Sel && !local_range(kUB, sel_base, std::uint64_t(c.repeat) * 16, e, "selection")) return now;

  const bool complex = op == VOp::Exp || op == VOp::Ln || op == VOp::Sqrt || op == VOp::Rsqrt || op == VOp::Rec || op == VOp::Div;
  const Tick done = now + clk.cycles(cfg_.vector_startup_cycles +
                                     std::uint64_t(c.repeat) * (complex ? cfg_.vector_complex_cycles_per_repeat
                                                                        : cfg_.vector_cycles_per_repeat));
  if (!functional_) return done;

  // The mask has a bit per 16-bit lane (128 per repeat); 8-bit types (256 per repeat) have two
  // elements per lane, both on or off.
  const unsigned lane_shift = elems > 128 ? 1 : 0;
  auto on = [&](unsigned i) {
    const unsigned b = i >> lane_shift;
    return ((b < 64 ? e.mask[0] >> b : e.mask[1] >> (b - 64)) & 1) != 0;
  };
  const bool fl = is_float(t);
  const Round round = Round(in.mode & mode::kRoundMask);
  const double scal = scalar_form || dup ? scalar_value(e.v[dup ? 1 : 2], t) : 0.0;
  const std::int64_t scal_i = to_int(scal);

  // Reductions.
  if (reduce) {
    const bool sum = op == VOp::Cadd || op == VOp::Redsum;
    const bool want_max = op == VOp::Cmax || op == VOp::Redmax;
    const bool across = op == VOp::Redsum || op == VOp::Redmax || op == VOp::Redmin;
    double acc = 0, best = 0;
    std::int64_t acc_i = 0;
    std::uint64_t best_idx = 0;
    bool have = false;
    for (unsigned r = 0; r < c.repeat; ++r) {
      if (!across) acc = 0, acc_i = 0, have = false;
      for (unsigned i = 0; i < elems; ++i) {
        if (!on(i)) continue;
        const double v = num::load(ub + src0.addr(r, i), t);
        if (sum) {
          acc += v;
          acc_i = wrap_add(acc_i, to_int(v));
        } else if (!have || (want_max ? v > best : v < best)) {
          best = v;
          best_idx = across ? std::uint64_t(r) * elems + i : i;
          have = true;
        }
      }
      if (!across) {
        if (sum) fl ? num::store(ub + dst.base + r * eb, t, acc) : store_wrapped(ub + dst.base + r * eb, t, acc_i);
        else {
          num::store(ub + dst.base + 2 * r * eb, t, best);
          store_wrapped(ub + dst.base + (2 * r + 1) * eb, t, std::int64_t(best_idx));  // index as raw integer bits
        }
      }
    }
    if (across) {
      if (sum) fl ? num::store(ub + dst.base, t, acc) : store_wrapped(ub + dst.base, t, acc_i);
      else {
        num::store(ub + dst.base, t, best);
        store_wrapped(ub + dst.base + eb, t, std::int64_t(best_idx));
      }
    }
    return done;
  }

  // Compare: one bit per element, 16 bytes per repeat.
  if (op == VOp::Cmp) {
    const Cmp op = Cmp((in.mode >> mode::kCmpShift) % 6);
    for (unsigned r = 0; r < c.repeat; ++r) {
      std::uint8_t bits[16] = {};
      for (unsigned i = 0; i < elems; ++i) {
        if (!on(i)) continue;
        const double a = num::load(ub + src0.addr(r, i), t), b = num::load(ub + src1.addr(r, i), t);
        bool res = false;
        switch (op) {
          case Cmp::Eq: res = a == b; break;
          case Cmp::Ne: res = a != b; break;
          case Cmp::Lt: res = a < b; break;
          case Cmp::Le: res = a <= b; break;
          case Cmp::Gt: res = a > b; break;
          case Cmp::Ge: res = a >= b; break;
        }
        if (res) bits[i / 8] |= std::uint8_t(1u << (i % 8));
      }
      std::memcpy(ub + dst.base + std::uint64_t(r) * 16, bits, 16);
    }
    return done;
  }

  // Element-wise.
  for (unsigned r = 0; r < c.repeat; ++r) {
    for (unsigned i = 0; i < elems; ++i) {
      if (!on(i)) continue;
      std::uint8_t* d = ub + dst.addr(r, i);
      if (dup) {
        num::store(d, t, scal);
        continue;
      }
      const std::uint8_t* s0 = ub + src0.addr(r, i);
      if (conv) {
        num::store(d, t, num::load(s0, in.dt2), round);
        continue;
      }
      if (op == VOp::Sel) {
        const bool pick = (ub[sel_base + std::uint64_t(r) * 16 + i / 8] >> (i % 8)) & 1;
        std::memcpy(d, pick ? s0 : ub + src1.addr(r, i), eb);
        continue;
      }
      if (op == VOp::Copy) {
        std::memmove(d, s0, eb);
        continue;
      }
      if (!fl) {
        // Integer arithmetic, wrapping.
        const std::int64_t a = load_int(s0, t), b = binary ? load_int(ub + src1.addr(r, i), t) : scal_i;
        std::int64_t v = 0;
        if (op == VOp::Add || op == VOp::Adds) v = wrap_add(a, b);
        else if (op == VOp::Sub) v = wrap_sub(a, b);
        else if (op == VOp::Mul || op == VOp::Muls) v = wrap_mul(a, b);
        else if (op == VOp::Max || op == VOp::Maxs) v = std::max(a, b);
        else if (op == VOp::Min || op == VOp::Mins) v = std::min(a, b);
        else if (op == VOp::And) v = a & b;
        else if (op == VOp::Or) v = a | b;
        else if (op == VOp::Abs) v = a < 0 ? wrap_sub(0, a) : a;
        else if (op == VOp::Relu) v = std::max<std::int64_t>(a, 0);
        else if (op == VOp::Lrelu) v = a >= 0 ? a : to_int(std::nearbyint(double(a) * scal));
        store_wrapped(d, t, v);
        continue;
      }
      // Floating point: exact in a double, rounded once to the element type.
      const double a = num::load(s0, t), b = binary ? num::load(ub + src1.addr(r, i), t) : scal;
      double v = 0;
      if (op == VOp::Add || op == VOp::Adds) v = a + b;
      else if (op == VOp::Sub) v = a - b;
      else if (op == VOp::Mul || op == VOp::Muls) v = a * b;
      else if (op == VOp::Div) v = a / b;
      else if (op == VOp::Max || op == VOp::Maxs) v = std::fmax(a, b);
      else if (op == VOp::Min || op == VOp::Mins) v = std::fmin(a, b);
      else if (op == VOp::Abs) v = std::fabs(a);
      else if (op == VOp::Exp) v = std::exp(a);
      else if (op == VOp::Ln) v = std::log(a);
      else if (op == VOp::Sqrt) v = std::sqrt(a);
      else if (op == VOp::Rsqrt) v = 1.0 / std::sqrt(a);
      else if (op == VOp::Rec) v = 1.0 / a;
      else if (op == VOp::Relu) v = a > 0 ? a : 0.0;
      else if (op == VOp::Lrelu) v = a >= 0 ? a : a * b;
      num::store(d, t, v);
    }
  }
  return done;
}

}  // namespace dvp::aicore
