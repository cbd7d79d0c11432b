// SPDX-License-Identifier: MIT
// Tensor files against files NumPy wrote (tests/data/npy, made by numpy 1.24 with np.save and
// numpy.lib.format.write_array: versions 1.0 - 3.0, both byte orders, Fortran order, records,
// complex, truncated and padded copies): what they hold, and a named error for what the
// platform cannot take.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>

#include "aicore/numeric.hpp"
#include "common/error.hpp"
#include "tensor_file.hpp"
#include "tensor_layout.hpp"

using namespace dvp;
using namespace dvp::platform;
using aicore::DType;
namespace fs = std::filesystem;

namespace {

std::string data(const std::string& f) { return std::string(DVP_SOURCE_DIR) + "/tests/data/npy/" + f; }

std::vector<double> read_as(const std::string& f, DType t, bool convert) {
  const NpyHeader h = read_npy_header(data(f));
  std::vector<std::uint8_t> buf(h.elements() * aicore::dtype_bytes(t));
  read_tensor_data(data(f), &h, t, h.elements(), convert, buf.data());
  std::vector<double> v;
  for (std::uint64_t i = 0; i < h.elements(); ++i)
    v.push_back(aicore::num::load(buf.data() + i * aicore::dtype_bytes(t), t));
  return v;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<std::uint8_t> bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(f), {});
}

const std::vector<double> kA = {-0.625, -0.375, -0.125, 0.125, 0.375, 0.625};  // (arange(6) - 2.5) / 4

}  // namespace

TEST(TensorFile, ReadsWhatNumPyWroteInEveryVersionAndByteOrder) {
  for (const char* f : {"f32_v2_2x3.npy", "f32_v3_2x3.npy", "f32_be_2x3.npy"}) {
    const NpyHeader h = read_npy_header(data(f));
    EXPECT_EQ(h.shape, (std::vector<std::uint64_t>{2, 3})) << f;
    EXPECT_TRUE(npy_matches(h, DType::F32)) << f;
    EXPECT_EQ(read_as(f, DType::F32, false), kA) << f;
  }
  EXPECT_EQ(read_as("f16_2x3.npy", DType::F16, false), kA);
  EXPECT_EQ(read_as("s8_5.npy", DType::S8, false), (std::vector<double>{-128, -1, 0, 1, 127}));
  const NpyHeader s = read_npy_header(data("u8_scalar.npy"));
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.elements(), 1u);
  EXPECT_EQ(read_as("u8_scalar.npy", DType::U8, false), std::vector<double>{200});
}

TEST(TensorFile, Bf16IsItsBitPatternsInU16) {
  EXPECT_EQ(npy_descr(DType::BF16), "<u2");
  EXPECT_EQ(read_as("bf16bits_2x3.npy", DType::BF16, false), kA);  // each value is exact in bf16
}

TEST(TensorFile, ConvertsOtherNumbersOnlyWhenAskedRoundingOnce) {
  EXPECT_EQ(read_as("i64_6.npy", DType::S8, true), (std::vector<double>{-3, -1, 0, 1, 2, 127}));  // saturated
  EXPECT_EQ(read_as("bool_4.npy", DType::F16, true), (std::vector<double>{1, 0, 1, 1}));
  const auto f = read_as("f64_3.npy", DType::F16, true);
  EXPECT_EQ(f[0], aicore::num::f16(aicore::num::to_f16(0.1)));
  EXPECT_TRUE(std::isinf(f[1]));  // 1e5 is past fp16's largest, 65504
  EXPECT_EQ(f[2], -2.0);
  EXPECT_NE(error_of([] { read_as("f64_3.npy", DType::F16, false); }).find("holds <f8, not f16"), std::string::npos);
  // The types decoded a piece at a time (num::load_n), either byte order.
  for (const char* file : {"f32_v2_2x3.npy", "f32_be_2x3.npy"}) EXPECT_EQ(read_as(file, DType::F16, true), kA) << file;
  EXPECT_EQ(read_as("f16_2x3.npy", DType::F32, true), kA);
  EXPECT_EQ(read_as("s8_5.npy", DType::F32, true), (std::vector<double>{-128, -1, 0, 1, 127}));
  EXPECT_EQ(read_as("s8_5.npy", DType::U8, true), (std::vector<double>{0, 0, 0, 1, 127}));  // saturated
  EXPECT_EQ(read_as("u8_scalar.npy", DType::F16, true), std::vector<double>{200});
  EXPECT_EQ(read_as("bf16bits_2x3.npy", DType::F32, true)[0], 48928.0);  // u2 is a number: 0xBF20, bf16 -0.625
}

// f32 into f16 as a network's weights come: a file of more than one read piece (1 MiB, 262,144 f32),
// its count no multiple of the 8 a step converts, random patterns and values at f16's ties, NaN and
// infinities; each element is to_f16's rounding of its value, wherever it lies in its piece.
TEST(TensorFile, F32IntoF16OverSeveralPiecesIsEachValuesRounding) {
  std::mt19937 rng(3);
  std::vector<float> v(300001);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::uint32_t bits = i % 3 ? rng() : (rng() & 0xffffe000u) | 0x1000u;  // random, or a tie
    std::memcpy(&v[i], &bits, 4);
  }
  v[7] = std::numeric_limits<float>::quiet_NaN(), v[262143] = INFINITY, v[262144] = -INFINITY, v.back() = 65520.0f;
  const std::string path = (fs::temp_directory_path() / "dvp-tensor-file-f32-big.npy").string();
  write_tensor_file(path, DType::F32, {v.size()}, reinterpret_cast<const std::uint8_t*>(v.data()), v.size());
  const NpyHeader h = read_npy_header(path);
  std::vector<std::uint16_t> got(v.size());
  read_tensor_data(path, &h, DType::F16, v.size(), true, reinterpret_cast<std::uint8_t*>(got.data()));
  fs::remove(path);
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(got[i], aicore::num::to_f16(double(v[i]))) << "element " << i;
}

TEST(TensorFile, WritesWhatNumPyWritesByteForByte) {
  const std::string out = (fs::temp_directory_path() / "dvp-tensor-file-test.npy").string();
  std::vector<std::uint8_t> d(12);
  for (int i = 0; i < 6; ++i) aicore::num::store(d.data() + 2 * i, DType::F16, kA[std::size_t(i)]);
  write_tensor_file(out, DType::F16, {2, 3}, d.data(), 6);
  EXPECT_EQ(bytes_of(out), bytes_of(data("f16_2x3.npy")));
  write_tensor_file(out, DType::S8, {}, d.data(), 5);  // one dimension: "(5,)"
  EXPECT_EQ(read_npy_header(out).shape, std::vector<std::uint64_t>{5});
  const std::string raw = out + ".bin";
  write_tensor_file(raw, DType::F16, {2, 3}, d.data(), 6);
  EXPECT_EQ(bytes_of(raw), d);
  fs::remove(out), fs::remove(raw);
}

TEST(TensorFile, WhatItCannotTakeIsANamedError) {
  const std::pair<const char*, const char*> cases[] = {
      {"bad_magic.npy", "bad_magic.npy: not a NumPy .npy file"},
      {"truncated_header.npy", "truncated_header.npy: truncated in its .npy header"},
      {"truncated_data.npy", "truncated_data.npy: truncated: 9 bytes of data, the header's shape needs 12"},
      {"trailing.npy", "trailing.npy: has trailing bytes: 14 bytes of data"},
      {"fortran_2x3.npy", "Fortran-order"},
      {"complex_2.npy", "element type '<c8' is not a number the platform holds"},
      {"record_2.npy", "a structured type"},
      {"missing.npy", "missing.npy: cannot open"},
  };
  for (const auto& c : cases) {
    const std::string file = c.first, got = error_of([&] { read_npy_header(data(file)); });
    EXPECT_NE(got.find(c.second), std::string::npos) << file << ": " << got;
  }
  std::vector<std::uint8_t> buf(64);
  EXPECT_NE(error_of([&] {
              read_tensor_data(data("f16_2x3.npy"), nullptr, DType::F32, 6, false, buf.data());
            }).find("a raw tensor file of 140 bytes; the tensor (6 x f32) needs 24"),
            std::string::npos);
}

TEST(TensorFile, HeadersThatAreNotNumPysAreRefused) {
  auto parse = [](const std::string& dict) {
    std::string f = std::string("\x93NUMPY\x01\x00", 8);
    f += char(dict.size() & 0xff), f += char(dict.size() >> 8), f += dict;
    return error_of([&] { parse_npy_header(reinterpret_cast<const std::uint8_t*>(f.data()), f.size(), "h.npy"); });
  };
  EXPECT_EQ(parse("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n"), "");
  EXPECT_NE(parse("{'descr': '<f4', 'shape': (2, 3), }").find("missing"), std::string::npos);
  EXPECT_NE(parse("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }").find("whole number"),
            std::string::npos);
  EXPECT_NE(
      parse("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }").find("more than 2^62"),
      std::string::npos);
  EXPECT_NE(parse("{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551615,), }")
                .find("a shape entry of 20 digits (a .npy shape holds at most 2^62 elements)"),
            std::string::npos);
  EXPECT_NE(parse("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }").find("neither True nor False"),
            std::string::npos);
  EXPECT_NE(parse("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}").find("unknown key 'x'"),
            std::string::npos);
  EXPECT_NE(parse("{'descr': '<f4").find("unterminated"), std::string::npos);
}

// fractal_z against the layout written out as loops: B^T's element (row r, column c) at fractal
// row c / k0, row r of it, element c % k0; the rows padded to 16 and k to whole fractal rows.
TEST(TensorLayout, FractalZPutsEachRowsSliceOfKInItsFractalRow) {
  using dvp::platform::Nc1hwc0;
  const Nc1hwc0 bt = Nc1hwc0::fractal_z({20, 40}, 16);  // B^T of n 20 x k 40, f16
  EXPECT_EQ(bt.stored(), 32u * 48u);                    // 20 rows -> 32, k 40 -> 48
  for (std::uint64_t r = 0; r < 20; ++r)
    for (std::uint64_t c = 0; c < 40; ++c) EXPECT_EQ(bt.at(r * 40 + c), (c / 16 * 32 + r) * 16 + c % 16);
  const Nc1hwc0 s8 = Nc1hwc0::fractal_z({3, 70}, 32);  // int8: fractal rows of 32 elements
  EXPECT_EQ(s8.stored(), 16u * 96u);
  EXPECT_EQ(s8.at(2 * 70 + 69), (69 / 32 * 16 + 2) * 32 + 69 % 32);
  // A conv's weights, cout 24 x c 20 x 3 x 3: each row the img2col k of 2 C1 groups x 9 x 16.
  const Nc1hwc0 w = Nc1hwc0::fractal_z({24, 20, 3, 3}, 16);
  EXPECT_EQ(w.stored(), 32u * 288u);
  for (std::uint64_t o = 0; o < 24; ++o)
    for (std::uint64_t ch = 0; ch < 20; ++ch)
      for (std::uint64_t i = 0; i < 9; ++i) {
        const std::uint64_t k = (ch / 16 * 9 + i) * 16 + ch % 16;  // img2col order
        EXPECT_EQ(w.at((o * 20 + ch) * 9 + i), (k / 16 * 32 + o) * 16 + k % 16);
      }
  // The small-channel mode's rows, kh x kw x 4 = 196 elements, in 13 fractal rows.
  EXPECT_EQ(Nc1hwc0::fractal_z({64, 3, 7, 7}, 16, 4).stored(), 64u * 208u);
  EXPECT_THROW(Nc1hwc0::fractal_z({1, 24, 7, 7, 2}, 16), dvp::Error);
  EXPECT_THROW(Nc1hwc0::fractal_z({24, 40}, 16, 16, 2), dvp::Error);  // groups lay out a conv's weights
}

// logical_of inverts at() over every stored element of two images of 21 channels (the second
// group padded, C0 16) and of a C0-4 map: a logical element back where it came from, a pad
// channel named as one.
TEST(TensorLayout, LogicalOfInvertsAt) {
  using dvp::platform::Nc1hwc0;
  for (const Nc1hwc0& l : {Nc1hwc0::of({2, 21, 3, 5}), Nc1hwc0::of({1, 3, 4, 2}, 4)}) {
    std::vector<int> seen(l.stored(), -1);
    for (std::uint64_t i = 0; i < l.logical(); ++i) seen[l.at(i)] = int(i);
    for (std::uint64_t s = 0; s < l.stored(); ++s) {
      std::uint64_t i = 0, channel = 0;
      const bool logical = l.logical_of(s, i, channel);
      EXPECT_EQ(logical, seen[s] >= 0) << "stored " << s;
      if (logical) {
        EXPECT_EQ(int(i), seen[s]) << "stored " << s;
      } else {
        EXPECT_GE(channel, l.c) << "stored " << s;
      }
    }
  }
}

// scatter and gather (a row's divisions taken once) put every element where at() says, for
// every layout: nc1hwc0 (C0 16 and 4, channels no whole group, groups), fractal_z of weights
// (fractal rows of 8, 16 and 32 elements: f32, fp16, int8) and of a B^T; the pad places zero;
// gather is scatter's inverse.
TEST(TensorLayout, ScatterAndGatherPutEachElementWhereAtSays) {
  using dvp::platform::Nc1hwc0;
  const std::vector<Nc1hwc0> layouts = {Nc1hwc0::of({2, 21, 3, 5}),
                                        Nc1hwc0::of({1, 3, 4, 2}, 4),
                                        Nc1hwc0::of({7, 33, 1, 1}),
                                        Nc1hwc0::of({12, 8, 3, 3}, 16, 4),
                                        Nc1hwc0::of({48, 1, 3, 3}, 16, 48),
                                        Nc1hwc0::fractal_z({24, 20, 3, 3}, 16),
                                        Nc1hwc0::fractal_z({20, 20, 3, 3}, 8),   // f32: k0 8 of c0 16
                                        Nc1hwc0::fractal_z({18, 40, 3, 3}, 32),  // int8: c0 16 of k0 32
                                        Nc1hwc0::fractal_z({20, 40}, 16),
                                        Nc1hwc0::fractal_z({3, 70}, 32),
                                        Nc1hwc0::fractal_z({5, 9}, 8),
                                        Nc1hwc0::fractal_z({64, 3, 7, 7}, 16, 4),
                                        Nc1hwc0::fractal_z({12, 8, 3, 3}, 16, 16, 4)};
  for (const Nc1hwc0& l : layouts)
    for (unsigned eb : {1u, 2u, 4u, 8u}) {
      std::vector<std::uint8_t> logical(l.logical() * eb), want(l.stored() * eb, 0), have(l.stored() * eb, 0xAB);
      for (std::size_t b = 0; b < logical.size(); ++b) logical[b] = std::uint8_t(b * 7 + b / 251 + 1);
      for (std::uint64_t i = 0; i < l.logical(); ++i)
        std::memcpy(want.data() + l.at(i) * eb, logical.data() + i * eb, eb);
      l.scatter(logical.data(), have.data(), eb);
      EXPECT_EQ(have, want) << "n " << l.n << " c " << l.c << " h " << l.h << " w " << l.w << " k0 " << l.k0
                            << " groups " << l.groups << " eb " << eb;
      std::vector<std::uint8_t> back(logical.size());
      l.gather(have.data(), back.data(), eb);
      EXPECT_EQ(back, logical) << "gather, n " << l.n << " c " << l.c << " k0 " << l.k0 << " eb " << eb;
    }
}
