// SPDX-License-Identifier: MIT
#include "vector.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "numeric.hpp"
#include "vector_ops.hpp"

namespace dvp::aicore {

namespace {

bool is_float(DType t) { return t == DType::F16 || t == DType::BF16 || t == DType::F32; }

// Integer results wrap to the element width, as the hardware's integer ALUs do.
void store_wrapped(std::uint8_t* p, DType t, std::int64_t v) { std::memcpy(p, &v, dtype_bytes(t)); }
std::int64_t load_int(const std::uint8_t* p, DType t) { return std::int64_t(num::load(p, t)); }

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

// The elements of a repeat an operand holds in consecutive bytes from a multiple of that count: a
// block's, or the whole repeat's when its blocks are adjacent (a block stride of 1).
constexpr unsigned kMaxRun = 256;  // a repeat's elements at most (8-bit types)
unsigned run_length(const Operand& o, unsigned elems) { return o.blk == 1 ? elems : 32 / o.eb; }

bool reduces(VecForm f) { return f == VecForm::ReduceRepeat || f == VecForm::ReduceAll; }
bool two_sources(VecForm f) { return f == VecForm::Binary || f == VecForm::Cmp || f == VecForm::Sel; }

}  // namespace

// One vector instruction's operands and shape, read once.
struct VectorUnit::Job {
  const Issued& e;
  const VecOp& op;
  DType t;
  VecCfg c;
  unsigned elems;  // per repeat
  Operand dst, src0, src1;
  std::uint64_t sel;
  bool on(unsigned i) const {  // the mask: a bit per 16-bit lane; 8-bit types have two elements per lane
    const unsigned b = i >> (elems > 128 ? 1 : 0);
    return ((b < 64 ? e.mask[0] >> b : e.mask[1] >> (b - 64)) & 1) != 0;
  }
};

// The type rules of the instruction's table entry; "" when they hold.
static std::string type_problem(const OpInfo& info, const Instr& in, unsigned elems) {
  const VecOp& op = *info.vec;
  const std::string m = info.mnemonic;
  if (in.dt1 == DType::None || (op.form == VecForm::Conv && in.dt2 == DType::None)) return "needs a data type";
  if (op.form == VecForm::Transpose && dtype_bytes(in.dt1) != 2) return "vtranspose works on 16-bit elements";
  if (op.types == VecTypes::Wide && elems > 128)
    return m + " works on 16- and 32-bit types (one selection bit per element, 128 per repeat)";
  if (op.types == VecTypes::Int && is_float(in.dt1)) return m + " works on integer types";
  if (op.types == VecTypes::Float && !is_float(in.dt1)) return m + " works on floating types";
  return "";
}

Span VectorUnit::execute(const Issued& e) {
  const Instr& in = e.in;
  const OpInfo& info = in.info();
  const VecOp& op = *info.vec;
  const Tick now = now_tick();
  const AiCoreConfig& cfg = core_.config();
  const unsigned eb = dtype_bytes(in.dt1);
  const unsigned sb = op.form == VecForm::Conv ? dtype_bytes(in.dt2) : eb;  // source element bytes
  const unsigned elems = eb ? 256 / std::max(eb, sb) : 0;
  if (const std::string why = type_problem(info, in, elems); !why.empty()) return core_.fault(e, why), Span::at(now);
  if (op.form == VecForm::Transpose) return transpose(e);
  // The configuration word is the last register operand.
  const VecCfg c = VecCfg::unpack(e.v[info.regs - 1]);
  if (c.repeat < 1) return core_.fault(e, "repeat count 0 (must be 1..255)"), Span::at(now);
  const Job j{e,
              op,
              in.dt1,
              c,
              elems,
              Operand{e.v[0], eb, c.dst_blk, c.dst_rep},
              Operand{e.v[1], sb, c.src0_blk, c.src0_rep},
              Operand{e.v[2], eb, c.src1_blk, c.src1_rep},
              e.v[3]};
  if (!ranges(j)) return Span::at(now);
  const std::uint32_t per_repeat =
      info.cost == Cost::VectorComplex ? cfg.vector_complex_cycles_per_repeat : cfg.vector_cycles_per_repeat;
  const Tick done = now + cfg.clock.cycles(cfg.vector_startup_cycles + std::uint64_t(c.repeat) * per_repeat);
  if (!core_.functional()) return Span::at(done);
  if (reduces(op.form))
    reduce(j);
  else if (op.form == VecForm::Cmp)
    compare(j);
  else
    elementwise(j);
  return Span::at(done);
}

Span VectorUnit::transpose(const Issued& e) {
  const Tick now = now_tick();
  if (!core_.local_range(kUB, e.v[0], 512, e, "destination") || !core_.local_range(kUB, e.v[1], 512, e, "source"))
    return Span::at(now);
  if (core_.functional()) {
    std::uint8_t* ub = core_.buffer(kUB);
    std::uint16_t in[256], out[256];
    std::memcpy(in, ub + e.v[1], 512);
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 16; ++c) out[c * 16 + r] = in[r * 16 + c];
    std::memcpy(ub + e.v[0], out, 512);
  }
  const AiCoreConfig& cfg = core_.config();
  return Span::at(now + cfg.clock.cycles(cfg.vector_startup_cycles + 2 * cfg.vector_cycles_per_repeat));
}

bool VectorUnit::ranges(const Job& j) {
  // Range and alignment of every operand before anything moves.
  const VecForm f = j.op.form;
  const unsigned eb = j.dst.eb, rep = j.c.repeat;
  auto span = [&](const Operand& o) { return o.addr(rep - 1, j.elems - 1) + o.eb - o.base; };
  std::uint64_t dst_bytes = span(j.dst);
  if (f == VecForm::Cmp) dst_bytes = std::uint64_t(rep) * 16;
  if (f == VecForm::ReduceRepeat) dst_bytes = (j.op.reduce == Reduce::Sum ? rep : 2ull * rep) * eb;
  if (f == VecForm::ReduceAll) dst_bytes = (j.op.reduce == Reduce::Sum ? 1 : 2) * eb;
  if (!core_.local_range(kUB, j.dst.base, dst_bytes, j.e, "destination")) return false;
  if (f != VecForm::Dup && !core_.local_range(kUB, j.src0.base, span(j.src0), j.e, "source")) return false;
  if (two_sources(f) && !core_.local_range(kUB, j.src1.base, span(j.src1), j.e, "second source")) return false;
  if (f == VecForm::Sel && !core_.local_range(kUB, j.sel, std::uint64_t(rep) * 16, j.e, "selection")) return false;
  return true;
}

void VectorUnit::reduce(const Job& j) {
  // The sum, or the (value, index) of the largest or smallest, per repeat or over all.
  std::uint8_t* ub = core_.buffer(kUB);
  const DType t = j.t;
  const unsigned eb = j.dst.eb;
  const bool sum = j.op.reduce == Reduce::Sum, want_max = j.op.reduce == Reduce::Max;
  const bool across = j.op.form == VecForm::ReduceAll, fl = is_float(t);
  double acc = 0, best = 0;
  std::int64_t acc_i = 0;
  std::uint64_t best_idx = 0;
  bool have = false;
  auto put = [&](std::uint64_t at) {  // at: the result's index in elements
    if (sum)
      return void(fl ? num::store(ub + j.dst.base + at * eb, t, acc)
                     : store_wrapped(ub + j.dst.base + at * eb, t, acc_i));
    num::store(ub + j.dst.base + 2 * at * eb, t, best);
    store_wrapped(ub + j.dst.base + (2 * at + 1) * eb, t, std::int64_t(best_idx));  // index as raw integer bits
  };
  for (unsigned r = 0; r < j.c.repeat; ++r) {
    if (!across) acc = 0, acc_i = 0, have = false;
    for (unsigned i = 0; i < j.elems; ++i) {
      if (!j.on(i)) continue;
      const double v = num::load(ub + j.src0.addr(r, i), t);
      if (sum) {
        acc += v;
        acc_i = std::int64_t(std::uint64_t(acc_i) + std::uint64_t(to_int(v)));
      } else if (!have || (std::isnan(best) && !std::isnan(v)) || (want_max ? v > best : v < best)) {
        // (a NaN gives way to a number, as vmax's and vmin's do)
        best = v;
        best_idx = across ? std::uint64_t(r) * j.elems + i : i;
        have = true;
      }
    }
    if (!across) put(r);
  }
  if (across) put(0);
}

void VectorUnit::compare(const Job& j) {
  // One bit per element, 16 bytes per repeat.
  std::uint8_t* ub = core_.buffer(kUB);
  const Cmp cmp = Cmp((j.e.in.mode >> mode::kCmpShift) % 6);
  for (unsigned r = 0; r < j.c.repeat; ++r) {
    std::uint8_t bits[16] = {};
    for (unsigned i = 0; i < j.elems; ++i) {
      if (!j.on(i)) continue;
      const double a = num::load(ub + j.src0.addr(r, i), j.t), b = num::load(ub + j.src1.addr(r, i), j.t);
      bool res = false;
      switch (cmp) {
        case Cmp::Eq: res = a == b; break;
        case Cmp::Ne: res = a != b; break;
        case Cmp::Lt: res = a < b; break;
        case Cmp::Le: res = a <= b; break;
        case Cmp::Gt: res = a > b; break;
        case Cmp::Ge: res = a >= b; break;
      }
      if (res) bits[i / 8] |= std::uint8_t(1u << (i % 8));
    }
    std::memcpy(ub + j.dst.base + std::uint64_t(r) * 16, bits, 16);
  }
}

// Elements [i, i + n) of repeat r of a float form or a conversion, decoded, computed and stored
// together, when that gives what element by element gives: the destination's bytes the sources'
// own or apart from them (an element then reads no result of an earlier one of the run). The caller
// has found every mask bit of the run on. `scal`: the Scalar form's operand. Returns false, having
// done nothing, otherwise.
bool VectorUnit::element_run(const Job& j, unsigned r, unsigned i, unsigned n, double scal) {
  std::uint8_t* ub = core_.buffer(kUB);
  const VecForm f = j.op.form;
  const std::uint64_t d = j.dst.addr(r, i), s0 = j.src0.addr(r, i), s1 = j.src1.addr(r, i);
  const auto apart_or_same = [&](std::uint64_t s, unsigned eb) {
    return (s == d && eb == j.dst.eb) || s + std::uint64_t(n) * eb <= d || d + std::uint64_t(n) * j.dst.eb <= s;
  };
  if (!apart_or_same(s0, j.src0.eb) || (f == VecForm::Binary && !apart_or_same(s1, j.src1.eb))) return false;
  double a[kMaxRun], b[kMaxRun];
  num::load_n(ub + s0, f == VecForm::Conv ? j.e.in.dt2 : j.t, n, a);
  if (f == VecForm::Conv) {
    const Round round = Round(j.e.in.mode & mode::kRoundMask);
    for (unsigned k = 0; k < n; ++k) num::store(ub + d + k * j.dst.eb, j.t, a[k], round);
    return true;
  }
  if (f == VecForm::Binary) num::load_n(ub + s1, j.t, n, b);
  for (unsigned k = 0; k < n; ++k) a[k] = j.op.f(a[k], f == VecForm::Binary ? b[k] : scal);
  num::store_n(ub + d, j.t, a, n);
  return true;
}

void VectorUnit::elementwise(const Job& j) {
  const VecForm f = j.op.form;
  const double scal =
      f == VecForm::Scalar || f == VecForm::Dup ? scalar_value(j.e.v[f == VecForm::Dup ? 1 : 2], j.t) : 0.0;
  const std::int64_t scal_i = to_int(scal);
  // The float forms and conversions take runs of elements at once where element_run may: each run
  // contiguous in every operand (a 32 B block, or the whole repeat when the blocks are adjacent).
  const bool runs =
      f == VecForm::Conv || (is_float(j.t) && (f == VecForm::Binary || f == VecForm::Scalar || f == VecForm::Unary));
  const unsigned run = runs ? std::min({run_length(j.dst, j.elems), run_length(j.src0, j.elems),
                                        f == VecForm::Binary ? run_length(j.src1, j.elems) : j.elems})
                            : 1;
  if (run == 1) {
    for (unsigned r = 0; r < j.c.repeat; ++r)
      for (unsigned i = 0; i < j.elems; ++i)
        if (j.on(i)) element(j, r, i, scal, scal_i);
    return;
  }
  // The mask's stretches of elements on, each inside one run (the mask is the same for every
  // repeat): a partial mask (the first 64 of 128 elements, say) still goes by stretches, not elements.
  struct Stretch {
    unsigned at, n;
  };
  std::array<Stretch, kMaxRun> stretches;
  unsigned count = 0;
  for (unsigned i = 0; i < j.elems;) {
    if (!j.on(i)) {
      ++i;
      continue;
    }
    unsigned end = i + 1;
    while (end < j.elems && end % run && j.on(end)) ++end;
    stretches[count++] = {i, end - i};
    i = end;
  }
  for (unsigned r = 0; r < j.c.repeat; ++r)
    for (unsigned k = 0; k < count; ++k) {
      const Stretch s = stretches[k];
      if (!element_run(j, r, s.at, s.n, scal))
        for (unsigned i = s.at; i < s.at + s.n; ++i) element(j, r, i, scal, scal_i);
    }
}

// Element i of repeat r, on its own (its mask bit on). scal_i: the Scalar form's operand as an integer.
void VectorUnit::element(const Job& j, unsigned r, unsigned i, double scal, std::int64_t scal_i) {
  std::uint8_t* ub = core_.buffer(kUB);
  const DType t = j.t;
  const VecForm f = j.op.form;
  std::uint8_t* d = ub + j.dst.addr(r, i);
  const std::uint8_t* s0 = ub + j.src0.addr(r, i);
  switch (f) {
    case VecForm::Dup: return num::store(d, t, scal);
    case VecForm::Conv: return num::store(d, t, num::load(s0, j.e.in.dt2), Round(j.e.in.mode & mode::kRoundMask));
    case VecForm::Copy: return void(std::memmove(d, s0, j.dst.eb));
    case VecForm::Sel: {
      const bool pick = (ub[j.sel + std::uint64_t(r) * 16 + i / 8] >> (i % 8)) & 1;
      return void(std::memcpy(d, pick ? s0 : ub + j.src1.addr(r, i), j.dst.eb));
    }
    default: break;
  }
  const bool binary = f == VecForm::Binary;
  if (!is_float(t)) {  // integer arithmetic, wrapping
    const std::int64_t b = binary ? load_int(ub + j.src1.addr(r, i), t) : scal_i;
    store_wrapped(d, t, j.op.i(load_int(s0, t), b, scal));
  } else {  // floating point: exact in a double, rounded once to the element type
    const double b = binary ? num::load(ub + j.src1.addr(r, i), t) : scal;
    num::store(d, t, j.op.f(num::load(s0, t), b));
  }
}

}  // namespace dvp::aicore
