// SPDX-License-Identifier: MIT
// Kernel library: GEMM. C (m x n) = A (m x k) x B (k x n) (+ bias), row-major in GM, optionally
// through ReLU. fp16 and bf16 inputs give f32, f16 or bf16 C; int8 inputs give int32 C. B may be stored transposed (n x
// k, as inference weights usually are: [out features, in features]); for int8 it must be. The tiling comes from the
// core's buffer sizes, so a what-if on L0A / L0B / L0C needs no kernel edit.
#pragma once
#include <cstdint>
#include <string>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

// The most rows (n, or a conv's cout) a B^T in fractal order takes: its rows, padded to 16, are a
// DataCopy's gap field (16 bits of 32-byte blocks).
constexpr std::uint32_t kFractalMaxRows = 65520;

struct GemmShape {
  std::uint32_t m = 0, k = 0, n = 0;
  aicore::DType out = aicore::DType::F32;
  aicore::DType in = aicore::DType::F16;  // F16, BF16 or S8
  bool b_transposed = false;              // B given as n x k
  bool relu = false;                      // negative results become 0
  // C = A x B + bias, bias n values of the accumulator type (f32, or s32 for int8) added to
  // every row. As on the 310 / 910, which have no bias table, the epilogue runs on the vector
  // unit: FixPipe L0C -> UB, vadd (then ReLU, cast), MTE3 UB -> GM.
  bool bias = false;
  // int8 requantization: C = (A x B (+ bias), ReLU) x scale, rounded to nearest even to C's
  // type (s8 saturates at -128 / 127; f16 overflows to inf): FixPipe's dequantize, or, with
  // bias, the vector epilogue (s32 -> f32, x scale, cast). 1 for an s32 C.
  float scale = 1.0f;
  // The fused epilogue of a layer (f16 / bf16 inputs), on the vector unit:
  // C = act(A x B x channel_scale + bias + residual), act ReLU or ReLU6 (min(max(x, 0), 6)).
  bool channel_scale = false;  // n f32 values, one per column (a folded batch norm's scale)
  bool residual = false;       // an m x n tensor of C's type added before the activation
  bool relu6 = false;
  // C stored as a conv's output is read by the next layer: NC1HWC0 (n / 16 column blocks, each
  // m x 16 contiguous), not row-major. n must be a multiple of 16.
  bool out_nc1hwc0 = false;
  // B^T stored in the cube's fractal order (CANN's FRACTAL_Z, as ATC converts weights offline):
  // k in fractal rows of 32 bytes (16 f16 / bf16 or 32 int8 elements), each holding its slice
  // of k for every row of B^T in turn (n padded to 16 rows, k to whole fractal rows, with zeros).
  // A tile's chunk is then one contiguous run per fractal row; B^T stored row by row is nt runs
  // of one row's slice each, a strided read that opens a DRAM row for every few of them. Needs
  // b_transposed; n up to kFractalMaxRows.
  bool b_fractal = false;
  // No kernel after this one reads B (shape weights_once): with one row of tiles, the fractal
  // B's reads do not allocate in the L2 (DataCopyCfg::no_alloc).
  bool b_once = false;
  // The vector epilogue in f16 (ATC's precision_mode force_fp16, its default for inference:
  // vector work in an fp16 network's own type): FixPipe rounds the accumulators to f16 into UB,
  // and the scale, bias, residual and activation run there in f16, each step rounded to f16:
  // 128 elements a repeat instead of f32's 64, and no casts. An f16 C from f16 or bf16 inputs.
  bool f16_epilogue = false;
  bool vector_epilogue() const { return bias || channel_scale || residual || relu6; }
  bool half_epilogue() const { return f16_epilogue && vector_epilogue(); }
};

// A convolution run as a GEMM: A is the img2col of the input (via load3d), B^T the weights.
struct ConvShape {
  std::uint32_t h = 0, w = 0, c = 0;  // input: c channels of h x w, stored NC1HWC0 (C1 = ceil(c / c0))
  std::uint32_t cout = 0;             // output channels
  std::uint32_t kh = 1, kw = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  std::uint32_t pad_t = 0, pad_b = 0, pad_l = 0, pad_r = 0;
  // The fused epilogue, per output channel: y = act(conv x scale + bias + residual), y of type
  // `out` (f32, f16 or bf16); residual is a tensor like y.
  aicore::DType out = aicore::DType::F32;
  bool scale = false, bias = false, residual = false, relu = false, relu6 = false;
  bool f16_epilogue = false;  // GemmShape::f16_epilogue (y f16)
  // y (and the residual) stored NC1HWC0, as the next conv or pool reads it (CANN's 5HD output),
  // instead of ho x wo rows of cout (NHWC). cout must be a multiple of 16.
  bool out_nc1hwc0 = false;
  // C0 of the stored input: 16, or 4, the small-channel mode of a first layer (c <= 4, CANN's
  // NC1HWC0_C04): each position's 4 channels packed along k, so a 7 x 7 filter on 3 channels is
  // k = 196 (208 in whole fractals), not 49 x 16 = 784, and the image moves a quarter of the bytes.
  std::uint32_t c0 = 16;
  // The weights stored as the GEMM's B^T in fractal order (GemmShape::b_fractal: layout
  // fractal_z), not row by row (layout nc1hwc0).
  bool weights_fractal = false;
  bool weights_once = false;  // GemmShape::b_once
  // Grouped convolution: output channel o sees the c / groups input channels of its group
  // o / (cout / groups) (depthwise: groups = c). The cube works on extended groups of `ext()`
  // groups whose input and output channels are whole fractals (CANN's group extension), its
  // weights block-diagonal inside one; each output tile lies in one extended group.
  std::uint32_t groups = 1;
  std::uint32_t ho() const { return (h + pad_t + pad_b - dil_h * (kh - 1) - 1) / stride_h + 1; }
  std::uint32_t wo() const { return (w + pad_l + pad_r - dil_w * (kw - 1) - 1) / stride_w + 1; }
  std::uint32_t c1() const { return (c + c0 - 1) / c0; }
  std::uint32_t cin_g() const { return c / groups; }
  std::uint32_t cout_g() const { return cout / groups; }
  // Groups per extended group: the fewest whose input and output channels are multiples of 16
  // when that divides groups, else all of them (one extended group: a dense conv whose weights
  // are zero across groups).
  std::uint32_t ext() const {
    std::uint32_t e = 1;
    while ((e * cin_g() % 16 || e * cout_g() % 16) && e < 16) e *= 2;
    return groups % e == 0 && e * cin_g() % 16 == 0 && e * cout_g() % 16 == 0 ? e : groups;
  }
  std::uint32_t ext_groups() const { return groups / ext(); }
  // An extended group's input channel groups of C0 (all of C1 when there is one) and outputs.
  std::uint32_t c1e() const { return ext_groups() == 1 ? c1() : ext() * cin_g() / c0; }
  std::uint32_t coute() const { return cout / ext_groups(); }
  // The GEMM's k: an extended group's channels x kh x kw (with C0 = 16, the pad channels of the
  // last C1 group included; with C0 = 4, k0 columns of 4 channels at a time).
  std::uint32_t k() const { return c1e() * c0 * kh * kw; }
  // A map of one row under a window of one row (a 1-D conv, N x C x L as N x C x 1 x L): its
  // output is one row, which column bands cut (conv_col_band) where one input row is too large
  // for L1.
  bool one_row() const { return h == 1 && kh == 1 && pad_t == 0 && pad_b == 0; }
};

// The part of the input a conv tile reads: the input rows [top, top + rows) of its output rows
// (the band), the padding above and below them, and the tile's first output position counted
// from the band's first output row (load3d's m_start).
struct ConvBand {
  std::uint32_t top = 0, rows = 0, pad_t = 0, pad_b = 0, m_start = 0;
};
// The band of the tile of output positions [row x mt, row x mt + mt). rows is 0 when the band
// is all padding.
ConvBand conv_band(const ConvShape& c, std::uint32_t mt, std::uint32_t row);
// A one-row map's band of input columns of the tile of output positions [row x mt, row x mt +
// mt) (ConvShape::one_row): in ConvBand's fields, its first input column (top), its columns
// (rows), the padding left and right of them (pad_t, pad_b); m_start 0 (the tile's first output
// is the band's first).
ConvBand conv_col_band(const ConvShape& c, std::uint32_t mt, std::uint32_t row);

struct GemmTiling {
  std::uint32_t mt = 0, nt = 0, kt = 0;  // output tile mt x nt, k in chunks of kt
  std::string str() const;
  // The output tiles of an m x n C: the work units the blocks share.
  std::uint64_t tiles(std::uint32_t m, std::uint32_t n) const {
    return std::uint64_t((m + mt - 1) / mt) * ((n + nt - 1) / nt);
  }
};

// The tiles whose double-buffered L0A / L0B and one L0C tile fit the configuration (two L0C
// tiles, alternating, when two fit), with the least estimated time;
// throws dvp::Error naming the constraint when the shape cannot be tiled.
// A conv (`conv` set) keeps its feature map, or two bands of it, in L1 instead of A's chunks.
GemmTiling gemm_tiling(const aicore::AiCoreConfig& cfg, const GemmShape& s, const ConvShape* conv = nullptr);

// Arguments at argbase: A, B, C (GM addresses), then bias, channel scale and residual, those the shape has. Output
// tiles go to blocks round-robin
// by block id; within a block, MTE2 (GM -> L1), MTE1 (L1 -> L0A / L0B) and the cube overlap on two buffers each, and
// FixPipe writes each finished tile.
aicore::Image gemm_kernel(const aicore::AiCoreConfig& cfg, const GemmShape& s);

// Runs `f` (which builds or tiles a conv as its GEMM) and says a GEMM error in the conv's words:
// m is ho x wo, k is c x kh x kw, n is cout.
template <typename F>
auto conv2d_words(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.rfind("gemm: ", 0) != 0) throw;
    throw Error("conv2d: as a GEMM (m = ho x wo, k = c x kh x kw, n = cout): " + what.substr(6), e.exit_code());
  }
}

// Conv2D (fp16, one image): x (NC1HWC0) and weights (cout x k, k in img2col order:
// ((c1 x kh + i) x kw + j) x 16 + c0) -> y (ho x wo rows of cout, NHWC; or NC1HWC0 with
// out_nc1hwc0), through the fused
// epilogue if the shape asks for one. The feature map is
// kept in L1 when it fits, else each output tile loads the band of input rows it reads (two
// bands in L1, so the next tile's loads while this one computes); each k chunk of A comes from
// load3d. Arguments at argbase: x, weights, y, then bias, scale and residual (those the shape has).
aicore::Image conv2d_kernel(const aicore::AiCoreConfig& cfg, const ConvShape& c);
GemmShape conv2d_gemm_shape(const ConvShape& c);
// The tiling, and how the feature map sits in L1, for the summary.
std::string conv2d_tiling(const aicore::AiCoreConfig& cfg, const ConvShape& c);

}  // namespace dvp::kernels
