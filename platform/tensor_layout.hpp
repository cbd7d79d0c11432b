// SPDX-License-Identifier: MIT
// A tensor's layout in memory against its logical shape. `nd`: as the shape says, C order.
// `nc1hwc0`: the AI Core's feature-map layout (NC1HWC0, "5HD"): a logical N x C x H x W tensor
// (or C x H x W, N = 1) stored as N x C1 x H x W x C0 with C0 = 16 and C1 = ceil(C / 16), the
// channels past C in the last group zero. The same layout holds convolution weights given as
// cout x C x kh x kw (O x C1 x kh x kw x C0: the conv2d kernel's img2col order). `nc1hwc0_c04`:
// C0 = 4, the small-channel mode of a first layer (CANN's NC1HWC0_C04): an image's 3 channels
// and a zero, and its weights cout x kh x kw x 4. A grouped conv's weights (`groups`; logical
// cout x C / groups x kh x kw, as ONNX gives them) are stored as the kernel reads them: each
// output channel's row over the C1 groups of its extended group (kernels::ConvShape::ext()),
// zero outside its own group. `fractal_z` (CANN's FRACTAL_Z, as ATC stores weights): those
// weights, or a GEMM's B^T given as n x k, as the cube's B: the rows (cout, or n) cut along
// their length into fractal rows of 32 bytes (16 f16 elements), each fractal row holding its
// slice of every row in turn; the rows padded to a multiple of 16 and their length to whole
// fractal rows, with zeros. Files, random and arange contents and saved tensors are in the
// logical shape; the conversion is done once, on the host, as a framework or driver does before
// it hands a tensor to the AI Core.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace dvp::platform {

struct Nc1hwc0 {
  std::uint64_t n = 1, c = 0, h = 0, w = 0;
  std::uint64_t c0 = 16;
  // Weights of a grouped conv: n output channels in `groups` groups, c the channels of one
  // group; ext groups per extended group, whose c1e x C0 channels a row holds.
  std::uint64_t groups = 1, ext = 1, c1e = 0;
  // fractal_z: the elements of a fractal row (32 bytes of the type); 0: the N rows as they are.
  std::uint64_t k0 = 0;
  // From a logical shape of 3 (C, H, W) or 4 (N, C, H, W) dimensions; throws dvp::Error otherwise
  // (and when groups does not divide N).
  static Nc1hwc0 of(const std::vector<std::uint64_t>& shape, std::uint64_t c0 = 16, std::uint64_t groups = 1);
  // fractal_z of a conv's weights (4 dimensions, as `of` takes them) or of a B^T of n x k (2), in
  // fractal rows of k0 elements; throws dvp::Error for other shapes.
  static Nc1hwc0 fractal_z(const std::vector<std::uint64_t>& shape, std::uint64_t k0, std::uint64_t c0 = 16,
                           std::uint64_t groups = 1);
  // By a tensor's layout name (nc1hwc0, nc1hwc0_c04, fractal_z, fractal_z_c04), for elements of
  // `eb` bytes; throws dvp::Error as `of` and `fractal_z` do.
  static Nc1hwc0 named(const std::string& layout, const std::vector<std::uint64_t>& shape, unsigned eb,
                       std::uint64_t groups = 1);
  std::uint64_t c1() const { return groups > 1 ? c1e : (c + c0 - 1) / c0; }
  std::uint64_t row() const { return c1() * h * w * c0; }  // one of the N rows (img2col order)
  std::uint64_t rows16() const { return (n + 15) / 16 * 16; }
  std::uint64_t logical() const { return n * c * h * w; }
  std::uint64_t stored() const { return k0 ? (row() + k0 - 1) / k0 * k0 * rows16() : n * row(); }
  // Where logical element i (C order over N, C, H, W) is stored.
  std::uint64_t at(std::uint64_t i) const;
  // The inverse, for a plain NC1HWC0 (no groups, no fractal_z): the logical element stored at s,
  // or false when s holds a pad channel (`channel` says which).
  bool logical_of(std::uint64_t s, std::uint64_t& i, std::uint64_t& channel) const;
  // Logical elements of `eb` bytes -> the stored tensor (pad channels zeroed), and back.
  void scatter(const std::uint8_t* logical, std::uint8_t* stored, unsigned eb) const;
  void gather(const std::uint8_t* stored, std::uint8_t* logical, unsigned eb) const;
};

}  // namespace dvp::platform
