// SPDX-License-Identifier: MIT
#include "numeric.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "common/host_cpu.hpp"

namespace dvp::aicore::num {

std::uint32_t round_to_format(double x, int mant_bits, int exp_bits, Round mode) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const std::uint32_t exp_all = (1u << exp_bits) - 1;
  const std::uint32_t sign_bit = 1u << (exp_bits + mant_bits);
  const std::uint32_t max_finite = ((exp_all - 1) << mant_bits) | ((1u << mant_bits) - 1);
  const std::uint32_t inf = exp_all << mant_bits;
  if (std::isnan(x)) return inf | (1u << (mant_bits - 1));
  const bool neg = std::signbit(x);
  const std::uint32_t sign = neg ? sign_bit : 0;
  if (std::isinf(x)) return sign | inf;
  const double a = std::fabs(x);
  if (a == 0.0) return sign;
  if (mode == Round::None) mode = Round::Rint;

  int E;
  std::frexp(a, &E);  // a = f * 2^E, f in [0.5, 1)
  const int emin = 1 - bias;
  int e = std::max(E - 1, emin);
  // The value in units of the last place of the target at exponent e: exact in a double.
  const double m = std::ldexp(a, mant_bits - e);
  const double ip = std::floor(m);
  const double frac = m - ip;
  std::uint64_t q = std::uint64_t(ip);
  switch (mode) {
    case Round::Rint:
      if (frac > 0.5 || (frac == 0.5 && (q & 1))) ++q;
      break;
    case Round::Round:
      if (frac >= 0.5) ++q;
      break;
    case Round::Trunc: break;
    case Round::Floor:
      if (frac > 0 && neg) ++q;
      break;
    case Round::Ceil:
      if (frac > 0 && !neg) ++q;
      break;
    case Round::Odd:
      if (frac > 0) q |= 1;
      break;
    case Round::None: break;
  }
  if (q >> (mant_bits + 1)) {  // carried into the next binade
    q >>= 1;
    ++e;
  }
  const bool normal = (q >> mant_bits) != 0;
  if (normal && e > bias) {
    // Overflow: to infinity, or to the largest finite value for the modes that never round
    // away from zero in this direction.
    const bool to_max =
        mode == Round::Trunc || mode == Round::Odd || (mode == Round::Floor && !neg) || (mode == Round::Ceil && neg);
    return sign | (to_max ? max_finite : inf);
  }
  const std::uint32_t biased = normal ? std::uint32_t(e + bias) : 0;
  return sign | (biased << mant_bits) | std::uint32_t(q & ((1u << mant_bits) - 1));
}

double from_format(std::uint32_t bits, int mant_bits, int exp_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const std::uint32_t exp_all = (1u << exp_bits) - 1;
  const bool neg = (bits >> (exp_bits + mant_bits)) & 1;
  const std::uint32_t ex = (bits >> mant_bits) & exp_all;
  const std::uint32_t man = bits & ((1u << mant_bits) - 1);
  double v;
  if (ex == exp_all)
    v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (ex == 0)
    v = std::ldexp(double(man), 1 - bias - mant_bits);
  else
    v = std::ldexp(double(man | (1u << mant_bits)), int(ex) - bias - mant_bits);
  return neg ? -v : v;
}

std::uint32_t to_f32(double x, Round r) {
  if (r == Round::Rint || r == Round::None) {
    // The host's own double -> float conversion rounds to nearest even (the default mode the
    // simulator runs in), subnormals and overflow included: the same result, much cheaper.
    const float f = float(x);
    std::uint32_t b;
    std::memcpy(&b, &f, 4);
    if (std::isnan(x)) return 0x7fc00000u;  // the canonical quiet NaN, as round_to_format gives
    return b;
  }
  return round_to_format(x, 23, 8, r);
}

double f32(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return double(f);
}

std::int64_t to_int(double x, Round r, std::int64_t lo, std::int64_t hi) {
  if (std::isnan(x)) return 0;
  double v = x;
  switch (r) {
    case Round::None:
    case Round::Rint: v = std::nearbyint(x); break;  // the default environment rounds to nearest even
    case Round::Floor: v = std::floor(x); break;
    case Round::Ceil: v = std::ceil(x); break;
    case Round::Round: v = std::round(x); break;
    case Round::Trunc: v = std::trunc(x); break;
    case Round::Odd: {
      v = std::trunc(x);
      if (v != x && std::fmod(v, 2.0) == 0.0) v += x > 0 ? 1.0 : -1.0;
      break;
    }
  }
  if (v <= double(lo)) return lo;
  if (v >= double(hi)) return hi;
  return std::int64_t(v);
}

double load(const std::uint8_t* p, DType t) {
  std::uint32_t u = 0;
  std::memcpy(&u, p, dtype_bytes(t));
  switch (t) {
    case DType::F16: return f16(std::uint16_t(u));
    case DType::BF16: return bf16(std::uint16_t(u));
    case DType::F32: return f32(u);
    case DType::S8: return double(std::int8_t(u));
    case DType::U8: return double(std::uint8_t(u));
    case DType::S16: return double(std::int16_t(u));
    case DType::U16: return double(std::uint16_t(u));
    case DType::S32: return double(std::int32_t(u));
    case DType::U32: return double(u);
    case DType::None: break;
  }
  return 0.0;
}

namespace {
// Many f16 / bf16 elements at once (the functional cube decodes every mmad's operands: a 2048^3
// GEMM decodes 67 M elements, a sixth of its host time one by one): the host's own conversions,
// 8 elements a step. The few elements those would decode otherwise (a NaN's payload; a bf16
// subnormal, should the process flush them) are decoded again by decode16, so every value is
// from_format's, bit for bit, on every host. Each returns how many elements it decoded.
template <int Mant, int Exp>
void decode_again(const std::uint8_t* p, double* out, int lanes) {  // lanes: 2 mask bits per element
  for (int k = 0; k < 8; ++k)
    if (lanes & (1 << (2 * k))) {
      std::uint16_t b;
      std::memcpy(&b, p + 2 * k, 2);
      out[k] = decode16<Mant, Exp>(b);
    }
}

#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) std::uint64_t f16_by_eight(const std::uint8_t* p, std::uint64_t n, double* out) {
  const __m128i exp_all = _mm_set1_epi16(0x7c00);
  std::uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * i));
    const __m256 f = _mm256_cvtph_ps(h);
    _mm256_storeu_pd(out + i, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
    _mm256_storeu_pd(out + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
    if (int nan = _mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(h, exp_all), exp_all)))
      decode_again<10, 5>(p + 2 * i, out + i, nan);
  }
  return i;
}

// bf16 is the top half of an f32: SSE2, which every x86-64 host has.
std::uint64_t bf16_by_eight(const std::uint8_t* p, std::uint64_t n, double* out) {
  const __m128i zero = _mm_setzero_si128(), exp_all = _mm_set1_epi16(0x7f80);
  const __m128i magnitude = _mm_set1_epi16(0x7fff), smallest_normal = _mm_set1_epi16(0x80);
  std::uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * i));
    const __m128 lo = _mm_castsi128_ps(_mm_unpacklo_epi16(zero, h)), hi = _mm_castsi128_ps(_mm_unpackhi_epi16(zero, h));
    _mm_storeu_pd(out + i, _mm_cvtps_pd(lo));
    _mm_storeu_pd(out + i + 2, _mm_cvtps_pd(_mm_movehl_ps(lo, lo)));
    _mm_storeu_pd(out + i + 4, _mm_cvtps_pd(hi));
    _mm_storeu_pd(out + i + 6, _mm_cvtps_pd(_mm_movehl_ps(hi, hi)));
    const __m128i m = _mm_and_si128(h, magnitude);
    const __m128i nan = _mm_cmpeq_epi16(_mm_and_si128(h, exp_all), exp_all);
    const __m128i subnormal = _mm_andnot_si128(_mm_cmpeq_epi16(m, zero), _mm_cmplt_epi16(m, smallest_normal));
    if (int redo = _mm_movemask_epi8(_mm_or_si128(nan, subnormal))) decode_again<7, 8>(p + 2 * i, out + i, redo);
  }
  return i;
}

// A comparison's 4 masks of 64 bits as 4 of 32, an f32 lane each.
__attribute__((target("avx"))) __m128i narrow_mask(__m256d m) {
  return _mm_castps_si128(_mm_shuffle_ps(_mm256_castps256_ps128(_mm256_castpd_ps(m)),
                                         _mm256_extractf128_ps(_mm256_castpd_ps(m), 1), _MM_SHUFFLE(2, 0, 2, 0)));
}

// Doubles stored as f16, nearest even, 4 a step (tensors set up, FixPipe's f16 output): each is
// first rounded to an f32 by rounding to odd (toward zero, then the last bit set when inexact),
// and F16C's nearest-even rounding of that f32 is the double's own rounding to f16 (an f32 has 13
// bits more than an f16, rounding to odd needs 2; f16 subnormals and overflow to infinity
// included). Only NaN (to_f16's canonical 0x7e00) is stored again by to_f16.
__attribute__((target("avx,f16c"))) std::uint64_t f16_store_by_four(std::uint8_t* p, const double* v, std::uint64_t n) {
  const __m256d magnitude = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
  const __m128i one = _mm_set1_epi32(1);
  std::uint64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d d = _mm256_loadu_pd(v + i);
    // Rounded as the environment says (nearest even, unless a library changed it); the steps below
    // correct any of the modes, and _mm_cvtps_ph's immediate 0 is nearest even whatever the mode.
    const __m128 nearest = _mm256_cvtpd_ps(d);
    const __m256d back = _mm256_cvtps_pd(nearest);
    // Where the f32 is inexact, and where it was rounded away from zero.
    const __m128i inexact = narrow_mask(_mm256_cmp_pd(back, d, _CMP_NEQ_UQ));
    const __m128i away =
        narrow_mask(_mm256_cmp_pd(_mm256_and_pd(back, magnitude), _mm256_and_pd(d, magnitude), _CMP_GT_OQ));
    __m128i odd = _mm_sub_epi32(_mm_castps_si128(nearest), _mm_and_si128(away, one));  // toward zero
    odd = _mm_or_si128(odd, _mm_and_si128(inexact, one));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p + 2 * i), _mm_cvtps_ph(_mm_castsi128_ps(odd), 0));
    if (_mm256_movemask_pd(_mm256_cmp_pd(d, d, _CMP_UNORD_Q)))
      for (int k = 0; k < 4; ++k) {
        const std::uint16_t h = to_f16(v[i + k]);
        std::memcpy(p + 2 * (i + k), &h, 2);
      }
  }
  return i;
}

// f32 to f16, 8 a step: F16C's nearest-even rounding of an f32 is to_f16's of the same value (an
// f32 is exact in a double; f16 subnormals and overflow to infinity included; an f32 subnormal,
// zero or flushed, is a signed zero in f16 either way). NaN keeps its payload there: stored again
// by to_f16, as the canonical NaN.
__attribute__((target("avx,f16c"))) std::uint64_t f16_from_f32_by_eight(const std::uint8_t* p, std::uint8_t* out,
                                                                        std::uint64_t n) {
  std::uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 f = _mm256_loadu_ps(reinterpret_cast<const float*>(p + 4 * i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), _mm256_cvtps_ph(f, 0));
    if (_mm256_movemask_ps(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)))
      for (int k = 0; k < 8; ++k) {
        std::uint32_t b;
        std::memcpy(&b, p + 4 * (i + k), 4);
        const std::uint16_t h = to_f16(f32(b));
        std::memcpy(out + 2 * (i + k), &h, 2);
      }
  }
  return i;
}
#else
std::uint64_t f16_from_f32_by_eight(const std::uint8_t*, std::uint8_t*, std::uint64_t) { return 0; }
std::uint64_t f16_by_eight(const std::uint8_t*, std::uint64_t, double*) { return 0; }
std::uint64_t bf16_by_eight(const std::uint8_t*, std::uint64_t, double*) { return 0; }
std::uint64_t f16_store_by_four(std::uint8_t*, const double*, std::uint64_t) { return 0; }
#endif

using host_cpu::f16c;
}  // namespace

void load_n(const std::uint8_t* p, DType t, std::uint64_t n, double* out) {
  const auto each16 = [&](std::uint64_t i, auto decode) {
    for (; i < n; ++i) {
      std::uint16_t b;
      std::memcpy(&b, p + 2 * i, 2);
      out[i] = decode(b);
    }
  };
  if (t == DType::F16) {
    each16(f16c() ? f16_by_eight(p, n, out) : 0, decode16<10, 5>);
  } else if (t == DType::BF16) {
    each16(bf16_by_eight(p, n, out), decode16<7, 8>);
  } else if (t == DType::S8) {
    for (std::uint64_t i = 0; i < n; ++i) out[i] = double(std::int8_t(p[i]));
  } else if (t == DType::F32 || t == DType::S32) {
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint32_t b;
      std::memcpy(&b, p + 4 * i, 4);
      out[i] = t == DType::F32 ? f32(b) : double(std::int32_t(b));
    }
  } else {
    const unsigned eb = dtype_bytes(t);
    for (std::uint64_t i = 0; i < n; ++i) out[i] = load(p + i * eb, t);
  }
}

void store(std::uint8_t* p, DType t, double v, Round r) {
  std::uint32_t u = 0;
  switch (t) {
    case DType::F16: u = to_f16(v, r); break;
    case DType::BF16: u = to_bf16(v, r); break;
    case DType::F32: u = to_f32(v, r); break;
    case DType::S8: u = std::uint32_t(to_int(v, r, -128, 127)); break;
    case DType::U8: u = std::uint32_t(to_int(v, r, 0, 255)); break;
    case DType::S16: u = std::uint32_t(to_int(v, r, -32768, 32767)); break;
    case DType::U16: u = std::uint32_t(to_int(v, r, 0, 65535)); break;
    case DType::S32: u = std::uint32_t(to_int(v, r, INT32_MIN, INT32_MAX)); break;
    case DType::U32: u = std::uint32_t(to_int(v, r, 0, UINT32_MAX)); break;
    case DType::None: return;
  }
  std::memcpy(p, &u, dtype_bytes(t));
}

void store_n(std::uint8_t* p, DType t, const double* v, std::uint64_t n) {
  const auto each = [&](auto convert, auto word, std::uint64_t i = 0) {
    for (; i < n; ++i) {
      const decltype(word) u = convert(v[i]);
      std::memcpy(p + i * sizeof u, &u, sizeof u);
    }
  };
  switch (t) {
    case DType::F16:
      return each([](double x) { return to_f16(x); }, std::uint16_t(), f16c() ? f16_store_by_four(p, v, n) : 0);
    case DType::BF16: return each([](double x) { return to_bf16(x); }, std::uint16_t());
    case DType::F32: return each([](double x) { return to_f32(x); }, std::uint32_t());
    default:
      for (std::uint64_t i = 0; i < n; ++i) store(p + i * dtype_bytes(t), t, v[i]);
  }
}

void f16_from_f32_n(const std::uint8_t* from, std::uint8_t* to, std::uint64_t n) {
  for (std::uint64_t i = f16c() ? f16_from_f32_by_eight(from, to, n) : 0; i < n; ++i) {
    std::uint32_t b;
    std::memcpy(&b, from + 4 * i, 4);
    const std::uint16_t h = to_f16(f32(b));
    std::memcpy(to + 2 * i, &h, 2);
  }
}

std::uint64_t bits(double v, DType t) {
  std::uint8_t b[8] = {};
  store(b, t, v);
  std::uint64_t x = 0;
  for (int i = 7; i >= 0; --i) x = x << 8 | b[i];
  return x;
}

}  // namespace dvp::aicore::num
