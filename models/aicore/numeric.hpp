// SPDX-License-Identifier: MIT
// Number formats of the AI Core: fp16, bf16, fp32 and integers, with the conversions and
// rounding modes the vector unit and FixPipe apply.
//
// Values are carried in a double, which holds every f16, bf16, f32, s32 and u32 value
// exactly; one routine rounds a double to a binary floating format of any width with a given
// rounding mode, so every conversion is rounded once, from the exact value. (Debian's Imath
// `half` rounds to nearest even only; the hardware has six modes.)
#pragma once
#include <cstdint>

#include "isa.hpp"

namespace dvp::aicore::num {

// Bits of the nearest value in a format with `mant_bits` fraction bits and `exp_bits`
// exponent bits (IEEE layout: sign, biased exponent, fraction; subnormals; inf; NaN).
// Round::None means Rint. NaN becomes the canonical quiet NaN.
std::uint32_t round_to_format(double x, int mant_bits, int exp_bits, Round mode);
double from_format(std::uint32_t bits, int mant_bits, int exp_bits);

inline std::uint16_t to_f16(double x, Round r = Round::Rint) { return std::uint16_t(round_to_format(x, 10, 5, r)); }
inline std::uint16_t to_bf16(double x, Round r = Round::Rint) { return std::uint16_t(round_to_format(x, 7, 8, r)); }
std::uint32_t to_f32(double x, Round r = Round::Rint);
// Decoding by table: every 16-bit pattern's value, computed once by from_format.
double f16(std::uint16_t b);
double bf16(std::uint16_t b);
// The tables themselves (65536 doubles), for loops that decode many elements of one type.
const double* f16_table();
const double* bf16_table();
double f32(std::uint32_t b);

// Integer conversions: rounded with `r` (None = Rint), then saturated to [lo, hi]; NaN -> 0.
std::int64_t to_int(double x, Round r, std::int64_t lo, std::int64_t hi);

// Reads / writes one element of type t at p (little-endian) as a double.
double load(const std::uint8_t* p, DType t);
void store(std::uint8_t* p, DType t, double v, Round r = Round::Rint);
// The bits of v as an element of type t (rounded to nearest even): a vector instruction's scalar
// operand, which the unit reads from a register's low bits.
std::uint64_t bits(double v, DType t);

}  // namespace dvp::aicore::num
