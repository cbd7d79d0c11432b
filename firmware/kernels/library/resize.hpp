// SPDX-License-Identifier: MIT
// Kernel library: resize of an f16 NC1HWC0 map in H and W by any factors, in ONNX's modes:
// nearest (any rounding), linear (bilinear) and cubic (bicubic, with its coefficient and
// exclude_outside), under every coordinate transformation but tf_crop_and_resize. What ONNX's
// Resize and Upsample become when the upsample kernel (whole nearest factors) does not take them:
// a segmentation head's bilinear 8x, an FPN's bilinear 2x, a super-resolution model's bicubic.
//
// Separable, as the interpolation is: each output row is the weighted sum of up to four input
// rows (its taps), then each output position the weighted sum of up to four positions of that
// row; a position is one 32-byte block of 16 channels, so every step is a vector op on blocks.
// Per (c1, output row), on two UB buffers: MTE2 copies the row's tap rows in; the vector unit
// scales them by their weights (vmuls, the weight a scalar from a table the kernel writes in UB
// at its start) and adds them; then, per tap, gathers the positions each output position reads
// (vcopy runs: a run is positions `stride` apart reading positions `src_stride` apart, found when
// the kernel is built) and multiplies them by a row of the columns' weights (vmul) and adds; MTE3
// writes the row. Each step rounds to f16, as the vector unit does; the weights are f16.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

enum class ResizeMode : std::uint8_t { Nearest, Linear, Cubic };
// ONNX's coordinate_transformation_mode: where output index y reads in the input.
enum class ResizeTransform : std::uint8_t { HalfPixel, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNn };
// ONNX's nearest_mode: how nearest rounds that coordinate.
enum class NearestRounding : std::uint8_t { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };

// ONNX's names of the modes, the transformations and the roundings, in the enums' order.
inline constexpr const char* kResizeModes[] = {"nearest", "linear", "cubic"};
inline constexpr const char* kResizeTransforms[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                                    "tf_half_pixel_for_nn"};
inline constexpr const char* kNearestRoundings[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
// The index of `name` in `names`, or -1.
template <std::size_t N>
int resize_name(const char* const (&names)[N], const std::string& name) {
  for (std::size_t i = 0; i < N; ++i)
    if (name == names[i]) return int(i);
  return -1;
}

struct ResizeRule {
  ResizeMode mode = ResizeMode::Linear;
  ResizeTransform transform = ResizeTransform::HalfPixel;
  NearestRounding rounding = NearestRounding::RoundPreferFloor;
  double cubic_a = -0.75;        // cubic_coeff_a
  bool exclude_outside = false;  // taps outside the input weigh 0, the rest renormalised
  unsigned taps() const { return mode == ResizeMode::Nearest ? 1 : mode == ResizeMode::Linear ? 2 : 4; }
};

// One axis of `in` elements resized to `out` by `scale` (ONNX's: out / in when sizes were given):
// output index y reads input index[y x taps + j] with weight[y x taps + j], as ONNX's reference
// interpolates (the coordinate transformation; taps beside it, edge values past the ends).
struct ResizeTaps {
  unsigned taps = 1;
  std::vector<std::uint32_t> index;
  std::vector<double> weight;
};
ResizeTaps resize_taps(const ResizeRule& r, double scale, std::uint32_t in, std::uint32_t out);

struct ResizeShape {
  std::uint32_t c = 0, h = 0, w = 0;  // the input map (c channels, stored in groups of 16)
  std::uint32_t oh = 0, ow = 0;       // the output's rows and positions
  double scale_h = 1, scale_w = 1;    // ONNX's scales of H and W
  ResizeRule rule;
  std::uint32_t c1() const { return (c + 15) / 16; }
  std::uint64_t in_elems() const { return std::uint64_t(c1()) * h * w * 16; }
  std::uint64_t out_elems() const { return std::uint64_t(c1()) * oh * ow * 16; }
};

// Throws dvp::Error naming what the kernel cannot take (a taps table too tall for the UB).
void check_resize(const aicore::AiCoreConfig& cfg, const ResizeShape& s);
// The bands of output positions a row is worked in: 1 when the UB holds a whole row (with its tap
// rows, twice over, and the columns' weights), more for wide rows (a Cityscapes-sized output).
std::uint32_t resize_bands(const aicore::AiCoreConfig& cfg, const ResizeShape& s);
// Arguments at argbase: x, y (GM addresses).
aicore::Image resize_kernel(const aicore::AiCoreConfig& cfg, const ResizeShape& s);

}  // namespace dvp::kernels
