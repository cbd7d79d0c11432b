// SPDX-License-Identifier: MIT
// The scalar unit's operations, as the ISA table names them: pure functions of two 64-bit
// operands (the second a register or the immediate, as the instruction's format says).
// Arithmetic wraps in two's complement; a signed division overflow gives the dividend, as
// RISC-V defines it; division by zero is the core's to refuse (OpInfo::divides).
#pragma once
#include <algorithm>
#include <cstdint>

namespace dvp::aicore::alu {

inline std::int64_t s(std::uint64_t v) { return std::int64_t(v); }

inline std::uint64_t add(std::uint64_t a, std::uint64_t b) { return a + b; }
inline std::uint64_t sub(std::uint64_t a, std::uint64_t b) { return a - b; }
inline std::uint64_t mul(std::uint64_t a, std::uint64_t b) { return a * b; }
inline std::uint64_t div(std::uint64_t a, std::uint64_t b) {
  return (s(a) == INT64_MIN && s(b) == -1) ? a : std::uint64_t(s(a) / s(b));
}
inline std::uint64_t divu(std::uint64_t a, std::uint64_t b) { return a / b; }
inline std::uint64_t rem(std::uint64_t a, std::uint64_t b) { return s(b) == -1 ? 0 : std::uint64_t(s(a) % s(b)); }
inline std::uint64_t and_(std::uint64_t a, std::uint64_t b) { return a & b; }
inline std::uint64_t or_(std::uint64_t a, std::uint64_t b) { return a | b; }
inline std::uint64_t xor_(std::uint64_t a, std::uint64_t b) { return a ^ b; }
inline std::uint64_t shl(std::uint64_t a, std::uint64_t b) { return a << (b & 63); }
inline std::uint64_t shr(std::uint64_t a, std::uint64_t b) { return a >> (b & 63); }
inline std::uint64_t sra(std::uint64_t a, std::uint64_t b) { return std::uint64_t(s(a) >> (b & 63)); }
inline std::uint64_t slt(std::uint64_t a, std::uint64_t b) { return s(a) < s(b); }
inline std::uint64_t sltu(std::uint64_t a, std::uint64_t b) { return a < b; }
inline std::uint64_t min(std::uint64_t a, std::uint64_t b) { return std::uint64_t(std::min(s(a), s(b))); }
inline std::uint64_t max(std::uint64_t a, std::uint64_t b) { return std::uint64_t(std::max(s(a), s(b))); }

inline bool eq(std::uint64_t a, std::uint64_t b) { return a == b; }
inline bool ne(std::uint64_t a, std::uint64_t b) { return a != b; }
inline bool lt(std::uint64_t a, std::uint64_t b) { return s(a) < s(b); }
inline bool ge(std::uint64_t a, std::uint64_t b) { return s(a) >= s(b); }
inline bool ltu(std::uint64_t a, std::uint64_t b) { return a < b; }
inline bool geu(std::uint64_t a, std::uint64_t b) { return a >= b; }
inline bool always(std::uint64_t, std::uint64_t) { return true; }

}  // namespace dvp::aicore::alu
