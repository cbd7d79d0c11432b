// SPDX-License-Identifier: MIT
// The matrix path's layouts, shared by the MTEs, the cube and FixPipe. With k0 = 32 bytes /
// element size (fp16 16, int8 32, fp32 8):
//
//   L1 Nz      matrix R x C (R padded to dst_rows, C to a multiple of k0): fractal (rb, cb) of
//              16 rows x k0 columns at byte (cb * dst_rows/16 + rb) * 512, row-major inside.
//   L0A (zZ)   A, m x k: fractal (i, j) (rows 16i.., k 16j..) at (i * kf + j) * 512, 16 x k0 row-major.
//   L0B (zN)   B, k x n, held as B^T fractals: (l, j) (n 16l.., k k0*j..) at (l * kf + j) * 512,
//              16 (n) x k0 (k) row-major.
//   L0C (Nz)   C, m x n, accumulator type: fractal (i, l) at (l * mf + i) * 16*16*4, 16 x 16 row-major.
#pragma once
#include <cstdint>

#include "isa.hpp"

namespace dvp::aicore {

// Elements of k in one 32-byte fractal row.
inline unsigned k0_of(DType t) { return 32 / dtype_bytes(t); }
inline std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// Byte offset of element (r, n) of an m x n accumulator matrix in L0C (mf = ceil(m / 16)).
inline std::uint64_t l0c_offset(std::uint64_t r, std::uint64_t n, std::uint64_t mf) {
  return ((n / 16) * mf + r / 16) * 1024 + (r % 16) * 64 + (n % 16) * 4;
}

}  // namespace dvp::aicore
