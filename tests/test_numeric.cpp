// SPDX-License-Identifier: MIT
// AI Core number formats against independent references: the compiler's half type for round-to-nearest-
// even, the classic bf16 bit formula, and the definitions of the directed modes checked with
// the bit-adjacent neighbours of each result.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "aicore/numeric.hpp"

using namespace dvp::aicore;
using namespace dvp::aicore::num;

namespace {

// The compiler's own half type: GCC's _Float16; clang (the sanitizer build) has it on x86 only
// from version 15, but __fp16, a storage format converted with the same IEEE rounding, on every
// target.
#if defined(__clang__)
using Half = __fp16;
#else
using Half = _Float16;
#endif

float bits_to_float(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

std::uint16_t gcc_f16(float x) {
  Half h = static_cast<Half>(x);
  std::uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

// Random floats over the whole range, plus the cases that matter for fp16.
std::vector<float> samples() {
  std::vector<float> v;
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    float f = bits_to_float(rng());
    if (!std::isnan(f)) v.push_back(f);
  }
  // Dense around the fp16 range, including subnormals and the overflow threshold.
  for (int i = 0; i < 200000; ++i) {
    std::uniform_real_distribution<float> d(-70000.0f, 70000.0f);
    std::uniform_real_distribution<float> s(-1e-4f, 1e-4f);
    v.push_back(i % 2 ? d(rng) : s(rng));
  }
  for (float f : {0.0f, -0.0f, 1.0f, 65504.0f, 65519.99f, 65520.0f, 65536.0f, 5.96e-8f, 2.98e-8f, 2.99e-8f, 6.1035e-5f,
                  1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, INFINITY, -INFINITY})
    v.push_back(f);
  return v;
}

// The value of an fp16 bit pattern's neighbour one step away from zero / toward zero.
double f16_next_up(std::uint16_t b) {  // next toward +inf
  if (b == 0x8000) return f16(0x0001);
  return (b & 0x8000) ? f16(std::uint16_t(b - 1)) : f16(std::uint16_t(b + 1));
}
double f16_next_down(std::uint16_t b) {  // next toward -inf
  if (b == 0x0000) return -f16(0x0001);
  return (b & 0x8000) ? f16(std::uint16_t(b + 1)) : f16(std::uint16_t(b - 1));
}

}  // namespace

TEST(Numeric, F16NearestEvenMatchesGcc) {
  for (float x : samples()) ASSERT_EQ(to_f16(x, Round::Rint), gcc_f16(x)) << x;
  EXPECT_EQ(to_f16(std::nan(""), Round::Rint) & 0x7e00, 0x7e00);
}

TEST(Numeric, EveryF16ValueIsExactInADouble) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    Half h;
    std::uint16_t s = std::uint16_t(b);
    std::memcpy(&h, &s, 2);
    double ref = double(static_cast<float>(h));
    double got = f16(s);
    if (std::isnan(ref)) {
      ASSERT_TRUE(std::isnan(got)) << b;
    } else {
      ASSERT_EQ(got, ref) << b;
    }
    // And back, exactly.
    if (!std::isnan(ref)) {
      ASSERT_EQ(to_f16(got, Round::Rint), s) << b;
    }
  }
}

// The bit-arithmetic decoders (and load_n, which the functional cube uses) give the general
// decoder's double bit for bit on every pattern of both formats: NaNs' sign and payload, -0,
// subnormals. bf16 is also checked against its definition, the top half of an f32.
std::uint64_t double_bits(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

TEST(Numeric, SixteenBitDecodersMatchTheGeneralDecoderOnEveryPattern) {
  std::vector<std::uint8_t> all(2 * 0x10000);
  for (std::uint32_t b = 0; b < 0x10000; ++b) std::memcpy(&all[2 * b], &b, 2);
  std::vector<double> f16s(0x10000), bf16s(0x10000);
  load_n(all.data(), DType::F16, 0x10000, f16s.data());
  load_n(all.data(), DType::BF16, 0x10000, bf16s.data());
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const std::uint64_t h = double_bits(from_format(b, 10, 5)), bf = double_bits(from_format(b, 7, 8));
    ASSERT_EQ(double_bits(f16(std::uint16_t(b))), h) << b;
    ASSERT_EQ(double_bits(f16s[b]), h) << b;
    ASSERT_EQ(double_bits(bf16(std::uint16_t(b))), bf) << b;
    ASSERT_EQ(double_bits(bf16s[b]), bf) << b;
    const double as_f32 = double(bits_to_float(b << 16));
    if (std::isnan(as_f32))
      ASSERT_TRUE(std::isnan(bf16s[b])) << b;
    else
      ASSERT_EQ(double_bits(bf16s[b]), double_bits(as_f32)) << b;
  }
}

TEST(Numeric, F32NearestEvenFastPathMatchesTheGeneralRounding) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 1000000; ++i) {
    std::uint64_t bits = rng();
    double x;
    std::memcpy(&x, &bits, 8);
    if (i % 2) x = std::ldexp(double(std::int64_t(rng()) >> 11), int(rng() % 300) - 200);  // near f32 range
    ASSERT_EQ(to_f32(x, Round::Rint), round_to_format(x, 23, 8, Round::Rint)) << x;
  }
}

TEST(Numeric, Bf16NearestEvenMatchesTheBitFormula) {
  for (float x : samples()) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    std::uint16_t ref = std::uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
    ASSERT_EQ(to_bf16(x, Round::Rint), ref) << x;
  }
}

TEST(Numeric, DirectedModesFollowTheirDefinitions) {
  for (float xf : samples()) {
    const double x = xf;
    if (std::isinf(x) || std::fabs(x) > 65504.0) continue;  // overflow has its own test
    std::uint16_t fl = to_f16(x, Round::Floor), ce = to_f16(x, Round::Ceil);
    std::uint16_t tr = to_f16(x, Round::Trunc), ro = to_f16(x, Round::Round), od = to_f16(x, Round::Odd);
    // floor: the largest value <= x; ceil: the smallest >= x.
    ASSERT_LE(f16(fl), x);
    ASSERT_GT(f16_next_up(fl), x) << x;
    ASSERT_GE(f16(ce), x);
    ASSERT_LT(f16_next_down(ce), x) << x;
    // trunc: toward zero.
    ASSERT_EQ(tr, x >= 0 ? fl : ce) << x;
    // round: nearest, ties away from zero.
    const double dl = x - f16(fl), dc = f16(ce) - x;
    const std::uint16_t away = x >= 0 ? ce : fl;
    ASSERT_EQ(ro, dl == dc ? away : (dl < dc ? fl : ce)) << x;
    // odd: exact stays, otherwise whichever neighbour has an odd last bit.
    if (fl == ce || f16(fl) == x) {
      ASSERT_EQ(f16(od), x == 0 ? f16(od) : x) << x;
    } else {
      ASSERT_TRUE((od == fl || od == ce) && (od & 1)) << x;
    }
  }
}

TEST(Numeric, OverflowGoesToInfinityOrTheLargestFinite) {
  EXPECT_EQ(to_f16(70000.0, Round::Rint), 0x7c00);
  EXPECT_EQ(to_f16(65519.0, Round::Rint), 0x7bff);  // below the halfway point to 65536
  EXPECT_EQ(to_f16(65520.0, Round::Rint), 0x7c00);  // the tie rounds to even: infinity
  EXPECT_EQ(to_f16(70000.0, Round::Trunc), 0x7bff);
  EXPECT_EQ(to_f16(70000.0, Round::Floor), 0x7bff);
  EXPECT_EQ(to_f16(-70000.0, Round::Floor), 0xfc00);
  EXPECT_EQ(to_f16(70000.0, Round::Ceil), 0x7c00);
  EXPECT_EQ(to_f16(-70000.0, Round::Ceil), 0xfbff);
  EXPECT_EQ(to_f16(1e9, Round::Odd), 0x7bff);
  EXPECT_EQ(to_bf16(3.5e38, Round::Rint), 0x7f80);
}

TEST(Numeric, IntegerConversionsRoundThenSaturate) {
  EXPECT_EQ(to_int(2.5, Round::Rint, -128, 127), 2);
  EXPECT_EQ(to_int(3.5, Round::Rint, -128, 127), 4);
  EXPECT_EQ(to_int(-2.5, Round::Round, -128, 127), -3);
  EXPECT_EQ(to_int(-2.5, Round::Floor, -128, 127), -3);
  EXPECT_EQ(to_int(-2.5, Round::Ceil, -128, 127), -2);
  EXPECT_EQ(to_int(-2.7, Round::Trunc, -128, 127), -2);
  EXPECT_EQ(to_int(2.2, Round::Odd, -128, 127), 3);
  EXPECT_EQ(to_int(3.2, Round::Odd, -128, 127), 3);
  EXPECT_EQ(to_int(300.0, Round::Rint, -128, 127), 127);
  EXPECT_EQ(to_int(-300.0, Round::Rint, -128, 127), -128);
  EXPECT_EQ(to_int(std::nan(""), Round::Rint, -128, 127), 0);
  EXPECT_EQ(to_int(5e9, Round::Trunc, INT32_MIN, INT32_MAX), INT32_MAX);
}

TEST(Numeric, LoadAndStoreEveryType) {
  std::uint8_t buf[4];
  const DType types[] = {DType::F16, DType::BF16, DType::F32, DType::S8, DType::U8,
                         DType::S16, DType::U16,  DType::S32, DType::U32};
  for (DType t : types) {
    store(buf, t, 100.0);
    EXPECT_EQ(load(buf, t), 100.0) << dtype_name(t);
  }
  store(buf, DType::U8, -3.0);
  EXPECT_EQ(load(buf, DType::U8), 0.0);
  store(buf, DType::F32, 0.1);
  EXPECT_EQ(load(buf, DType::F32), double(0.1f));
  store(buf, DType::BF16, 1.00390625 + 1e-9);
  EXPECT_EQ(load(buf, DType::BF16), 1.0078125);  // above the halfway point: rounds up
}

// The bit-level nearest-even path of to_f16 / to_bf16 must agree with the general rounding on
// every double: random bit patterns, values near each binade of the targets, exact ties, the
// edges of the normal range (carry into infinity, the smallest normal) and zeros.
TEST(Numeric, SixteenBitNearestEvenFastPathMatchesTheGeneralRounding) {
  std::mt19937_64 rng(5);
  std::vector<double> all;  // every value below, for store_n's path (F16C where the host has it)
  auto same = [&all](double x) {
    all.push_back(x);
    ASSERT_EQ(to_f16(x, Round::Rint), round_to_format(x, 10, 5, Round::Rint)) << x;
    ASSERT_EQ(to_bf16(x, Round::Rint), round_to_format(x, 7, 8, Round::Rint)) << x;
    ASSERT_EQ(to_f16(x, Round::None), round_to_format(x, 10, 5, Round::Rint)) << x;
  };
  for (int i = 0; i < 1000000; ++i) {
    std::uint64_t bits = rng();
    double x;
    std::memcpy(&x, &bits, 8);
    if (i % 2) x = std::ldexp(double(std::int64_t(rng()) >> 11), int(rng() % 180) - 150);  // both targets' range
    same(x);
  }
  for (std::uint32_t h = 0; h < 0x10000; ++h) {  // every f16 and bf16, and the ties between neighbours
    for (double v : {f16(std::uint16_t(h)), bf16(std::uint16_t(h))}) {
      if (std::isnan(v)) continue;
      same(v);
      same(std::nextafter(v, INFINITY));
      same(std::nextafter(v, -INFINITY));
    }
    const double a = f16(std::uint16_t(h)), b = f16(std::uint16_t(h + 1));
    if (h < 0x7bff) {  // the tie, and just off it by less than an f32's last bit (a double rounding's trap)
      const double tie = (a + b) / 2, off = std::ldexp(std::fabs(tie), -30);
      for (double x : {tie, tie + off, tie - off, std::nextafter(tie, INFINITY), std::nextafter(tie, -INFINITY)})
        same(x), same(-x);
    }
  }
  for (double x : {0.0, -0.0, 65504.0, 65519.99, 65520.0, -65520.0, std::nextafter(65520.0, 0.0),
                   std::nextafter(65520.0, 1e9), 6.103515625e-05, 6.1035e-05, 3.4e38, 3.3961776e38, 1e-300, -1e-300,
                   1e300, double(INFINITY), -double(INFINITY), 2.9802322387695312e-08, 2.98023223876953125e-08 * 1.5})
    same(x);
  all.push_back(std::nan(""));
  all.push_back(-std::nan(""));
  for (std::size_t skip = 0; skip < 4; ++skip) {  // each element in each lane of a step of 4, and tails
    std::vector<std::uint8_t> out(2 * all.size());
    store_n(out.data(), DType::F16, all.data() + skip, all.size() - skip);
    for (std::size_t i = skip; i < all.size(); ++i) {
      std::uint16_t got;
      std::memcpy(&got, &out[2 * (i - skip)], 2);
      ASSERT_EQ(got, to_f16(all[i], Round::Rint)) << all[i] << " at " << i - skip;
    }
  }
}

// f32 -> f16 without a double between (a network's f32 weights loaded into f16 tensors) is the
// double's rounding: every sign and exponent with the f32 mantissa's low bits at the f16's ties and
// beside them (f16 normals cut 13 bits, subnormals more: the bits above 16 run through all their
// values), random patterns, NaNs with payloads; each in each lane of a step of 8, and the tails.
TEST(Numeric, F32ToF16DirectlyIsTheRoundingOfItsValue) {
  std::vector<std::uint32_t> bits;
  for (std::uint32_t hi = 0; hi < 0x10000; ++hi) {
    for (std::uint32_t lo : {0x0000u, 0x0001u, 0x0fffu, 0x1000u, 0x1001u, 0x1fffu, 0x2000u, 0x2fffu, 0x3000u, 0x3001u,
                             0x8000u, 0xefffu, 0xf000u, 0xffffu})
      bits.push_back(hi << 16 | lo);
  }
  std::mt19937 rng(11);
  for (int i = 0; i < 200000; ++i) bits.push_back(rng());
  for (std::size_t skip = 0; skip < 8; ++skip) {
    const std::size_t n = bits.size() - skip;
    std::vector<std::uint8_t> out(2 * n);
    f16_from_f32_n(reinterpret_cast<const std::uint8_t*>(bits.data() + skip), out.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const float f = bits_to_float(bits[skip + i]);
      std::uint16_t got;
      std::memcpy(&got, &out[2 * i], 2);
      ASSERT_EQ(got, to_f16(double(f))) << std::hex << bits[skip + i];
      if (!std::isnan(f)) {
        ASSERT_EQ(got, gcc_f16(f)) << std::hex << bits[skip + i];
      }
    }
  }
}
