// The vector unit: every V instruction on UB operands, with mask, repeats and block / repeat
// strides, computed element by element in the instruction's data type.
#include <cmath>
#include <cstring>

#include "aicore.hpp"
#include "common/error.hpp"
#include "numeric.hpp"

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

}  // namespace

Tick AiCore::vector_op(const Issued& e) {
  const Instr& in = e.in;
  const OpInfo& info = in.info();
  const std::string m = info.mnemonic;
  const Tick now = now_tick();
  const Clock& clk = cfg_.clock;
  std::uint8_t* ub = buf_[kUB].data();
  const DType t = in.dt1;
  if (t == DType::None || (m == "vconv" && in.dt2 == DType::None)) {
    raise(e.pc, &in, "needs a data type");
    return now;
  }
  auto fault = [&](const std::string& why) {
    raise(e.pc, &in, why);
    return now;
  };
  const unsigned eb = dtype_bytes(t);

  if (m == "vtranspose") {
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
  const bool conv = m == "vconv";
  const unsigned sb = conv ? dtype_bytes(in.dt2) : eb;  // source element bytes
  const unsigned elems = 256 / std::max(eb, sb);        // per repeat
  const bool scalar_form = m == "vadds" || m == "vmuls" || m == "vmaxs" || m == "vmins" || m == "vlrelu";
  const bool binary = m == "vadd" || m == "vsub" || m == "vmul" || m == "vdiv" || m == "vmax" || m == "vmin" ||
                      m == "vand" || m == "vor" || m == "vcmp" || m == "vsel";
  const bool reduce = m == "vcadd" || m == "vcmax" || m == "vcmin" || m == "vredsum" || m == "vredmax" || m == "vredmin";
  const bool dup = m == "vdup";
  if ((m == "vand" || m == "vor") && is_float(t)) return fault(m + " works on integer types");
  if ((m == "vexp" || m == "vln" || m == "vdiv" || m == "vsqrt" || m == "vrsqrt" || m == "vrec") && !is_float(t))
    return fault(m + " works on floating types");

  Operand dst{e.v[0], eb, c.dst_blk, c.dst_rep};
  Operand src0{e.v[1], sb, c.src0_blk, c.src0_rep};
  Operand src1{e.v[2], eb, c.src1_blk, c.src1_rep};
  const std::uint64_t sel_base = e.v[3];
  auto span = [&](const Operand& o) { return o.addr(c.repeat - 1, elems - 1) + o.eb - o.base; };
  // Range and alignment of every operand before anything moves.
  if (m == "vcmp") {
    if (!local_range(kUB, dst.base, std::uint64_t(c.repeat) * 16, e, "destination")) return now;
  } else if (reduce) {
    const std::uint64_t n = (m == "vredsum") ? 1 : (m == "vredmax" || m == "vredmin") ? 2
                            : (m == "vcadd") ? c.repeat : 2ull * c.repeat;
    if (!local_range(kUB, dst.base, n * eb, e, "destination")) return now;
  } else if (!local_range(kUB, dst.base, span(dst), e, "destination")) {
    return now;
  }
  if (!dup && !local_range(kUB, src0.base, span(src0), e, "source")) return now;
  if (binary && !local_range(kUB, src1.base, span(src1), e, "second source")) return now;
  if (m == "vsel" && !local_range(kUB, sel_base, std::uint64_t(c.repeat) * 16, e, "selection")) return now;

  const bool complex = m == "vexp" || m == "vln" || m == "vsqrt" || m == "vrsqrt" || m == "vrec" || m == "vdiv";
  const Tick done = now + clk.cycles(cfg_.vector_startup_cycles +
                                     std::uint64_t(c.repeat) * (complex ? cfg_.vector_complex_cycles_per_repeat
                                                                        : cfg_.vector_cycles_per_repeat));
  if (!functional_) return done;

  auto on = [&](unsigned i) { return ((i < 64 ? e.mask[0] >> i : e.mask[1] >> (i - 64)) & 1) != 0; };
  const bool fl = is_float(t);
  const Round round = Round(in.mode & mode::kRoundMask);
  const double scal = scalar_form || dup ? scalar_value(e.v[dup ? 1 : 2], t) : 0.0;
  const std::int64_t scal_i = std::int64_t(scal);

  // Reductions.
  if (reduce) {
    const bool sum = m == "vcadd" || m == "vredsum";
    const bool want_max = m == "vcmax" || m == "vredmax";
    const bool across = m.rfind("vred", 0) == 0;
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
          acc_i += std::int64_t(v);
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
  if (m == "vcmp") {
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
      if (m == "vsel") {
        const bool pick = (ub[sel_base + std::uint64_t(r) * 16 + i / 8] >> (i % 8)) & 1;
        std::memcpy(d, pick ? s0 : ub + src1.addr(r, i), eb);
        continue;
      }
      if (m == "vcopy") {
        std::memmove(d, s0, eb);
        continue;
      }
      if (!fl) {
        // Integer arithmetic, wrapping.
        const std::int64_t a = load_int(s0, t), b = binary ? load_int(ub + src1.addr(r, i), t) : scal_i;
        std::int64_t v = 0;
        if (m == "vadd" || m == "vadds") v = a + b;
        else if (m == "vsub") v = a - b;
        else if (m == "vmul" || m == "vmuls") v = a * b;
        else if (m == "vmax" || m == "vmaxs") v = std::max(a, b);
        else if (m == "vmin" || m == "vmins") v = std::min(a, b);
        else if (m == "vand") v = a & b;
        else if (m == "vor") v = a | b;
        else if (m == "vabs") v = a < 0 ? -a : a;
        else if (m == "vrelu") v = std::max<std::int64_t>(a, 0);
        else if (m == "vlrelu") v = a >= 0 ? a : std::int64_t(std::nearbyint(double(a) * scal));
        store_wrapped(d, t, v);
        continue;
      }
      // Floating point: exact in a double, rounded once to the element type.
      const double a = num::load(s0, t), b = binary ? num::load(ub + src1.addr(r, i), t) : scal;
      double v = 0;
      if (m == "vadd" || m == "vadds") v = a + b;
      else if (m == "vsub") v = a - b;
      else if (m == "vmul" || m == "vmuls") v = a * b;
      else if (m == "vdiv") v = a / b;
      else if (m == "vmax" || m == "vmaxs") v = std::fmax(a, b);
      else if (m == "vmin" || m == "vmins") v = std::fmin(a, b);
      else if (m == "vabs") v = std::fabs(a);
      else if (m == "vexp") v = std::exp(a);
      else if (m == "vln") v = std::log(a);
      else if (m == "vsqrt") v = std::sqrt(a);
      else if (m == "vrsqrt") v = 1.0 / std::sqrt(a);
      else if (m == "vrec") v = 1.0 / a;
      else if (m == "vrelu") v = a > 0 ? a : 0.0;
      else if (m == "vlrelu") v = a >= 0 ? a : a * b;
      num::store(d, t, v);
    }
  }
  return done;
}

}  // namespace dvp::aicore
