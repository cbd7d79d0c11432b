// SPDX-License-Identifier: MIT
// The memory transfer engines: DataCopy between GM and the local buffers and between L1 and
// UB (MTE2, MTE3, MTE1), ND -> Nz into L1 (MTE2) and the fractal loads into L0A / L0B, plain
// or img2col (MTE1). Layouts: fractal.hpp.
#pragma once
#include "pipe_unit.hpp"

namespace dvp::aicore {

class MteUnit {
 public:
  explicit MteUnit(CoreServices& core) : core_(core) {}
  Span copy(const Issued& e);    // DataCopy: blocks of 32 B with gaps on either side
  Span nd2nz(const Issued& e);   // GM ND -> L1 Nz
  Span load2d(const Issued& e);  // L1 fractals -> L0A / L0B, optionally transposed
  Span load3d(const Issued& e);  // img2col of a feature map in L1 -> L0A / L0B
  Span aipp(const Issued& e);    // AIPP: a u8 picture's crop in GM -> f16 NC1HWC0 in L1

 private:
  Span copy_gm(const Issued& e, Tick t);
  void img2col(const Issued& e, std::uint64_t wo, std::uint64_t ho);
  std::string aipp_fault(const Issued& e) const;
  void aipp_row(const Issued& e, const std::uint8_t* luma, const std::uint8_t* chroma, std::uint32_t row);
  Span failed(const Issued& e, const std::string& why);
  CoreServices& core_;
};

}  // namespace dvp::aicore
