// SPDX-License-Identifier: MIT
#include "library.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "aicore/numeric.hpp"

namespace dvp::platform {

namespace {

using aicore::DType;

// The cube's least time for `flops` at its peak over the configured cores (int8: twice the rate:
// the 16 x 32 x 16 step).
KernelWork cube_work(const aicore::AiCoreConfig& core, double flops, bool int8) {
  return {flops, int8 ? "OP" : "FLOP", flops / (core.peak_flops() * (int8 ? 2 : 1)) * 1e12};
}
// The vector's least time for `elems` element operations on `elem_bytes`-byte elements: one
// 256-byte repeat per vector_cycles_per_repeat (complex ones: exp, sqrt, div, ...) on each core.
double vector_ps(const aicore::AiCoreConfig& core, double elems, unsigned elem_bytes, bool complex) {
  const double repeats = elems * elem_bytes / 256.0;
  const double cycles = complex ? core.vector_complex_cycles_per_repeat : core.vector_cycles_per_repeat;
  return repeats * cycles * double(core.clock.period()) / core.cores;
}

std::uint32_t u32(const cfg::Node& sh, const char* key) { return std::uint32_t(sh.get_uint(key)); }
DType dtype(const cfg::Node& sh, const char* key) { return *aicore::dtype_from(sh.get_string(key)); }

// shape.epilogue: f16 (ATC's force_fp16) takes an f16 output from f16 or bf16 inputs.
bool f16_epilogue(const cfg::Node& sh, DType out, DType in) {
  if (sh.get_string("epilogue") != "f16") return false;
  if (out != DType::F16 || in == DType::S8)
    sh.at("epilogue")
        .fail("an f16 epilogue takes out: f16 and f16 or bf16 inputs (got out: " +
              std::string(aicore::dtype_name(out)) + ", in: " + aicore::dtype_name(in) + ")");
  return true;
}

// --- gemm ---------------------------------------------------------------------------------------
KernelShape read_gemm(const cfg::Node& sh) {
  // shape.n admits an element-wise length; a GEMM's dimensions are 32-bit, and their products
  // are bounded by the tensors they must fit.
  for (const char* key : {"m", "k", "n"})
    if (sh.get_uint(key) > (1u << 20))
      sh.at(key).fail("gemm takes m, k and n up to 1048576, got " + std::to_string(sh.get_uint(key)));
  for (const char* key : {"channel_scale", "residual", "relu6"})
    if (sh.get_bool(key)) sh.at(key).fail(std::string("a conv2d epilogue key; gemm takes bias and relu"));
  kernels::GemmShape g{u32(sh, "m"),        u32(sh, "k"),        u32(sh, "n"),
                       dtype(sh, "out"),    dtype(sh, "in"),     sh.get_bool("b_transposed"),
                       sh.get_bool("relu"), sh.get_bool("bias"), float(sh.get_double("scale"))};
  g.b_fractal = sh.get_string("b_layout") == "fractal_z";
  g.f16_epilogue = f16_epilogue(sh, g.out, g.in);
  g.b_once = sh.get_bool("weights_once");
  if (g.b_fractal && !g.b_transposed) sh.at("b_layout").fail("gemm: a B in fractal_z is B^T (n x k): set b_transposed");
  return g;
}
// A B^T of `rows` rows of k elements of `t` as the cube reads it in fractal order (fractal_z):
// the rows in whole fractals of 16, k in whole fractal rows of 32 bytes.
std::uint64_t fractal_z_elems(std::uint64_t rows, std::uint64_t k, DType t) {
  const std::uint64_t k0 = 32 / aicore::dtype_bytes(t);
  return (rows + 15) / 16 * 16 * ((k + k0 - 1) / k0 * k0);
}
std::vector<LibraryArg> gemm_args(const KernelShape& s) {
  const auto& g = std::get<kernels::GemmShape>(s);
  const std::uint64_t b = g.b_fractal ? fractal_z_elems(g.n, g.k, g.in) : std::uint64_t(g.k) * g.n;
  std::vector<LibraryArg> a{
      {"A", g.in, std::uint64_t(g.m) * g.k}, {"B", g.in, b, 0, 0, g.b_fractal}, {"C", g.out, std::uint64_t(g.m) * g.n}};
  if (g.bias) a.push_back({"bias", g.in == DType::S8 ? DType::S32 : DType::F32, g.n});
  return a;
}
BuiltKernel build_gemm(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& g = std::get<kernels::GemmShape>(s);
  const kernels::GemmTiling t = kernels::gemm_tiling(core, g);
  return {kernels::gemm_kernel(core, g), t.str(), t.tiles(g.m, g.n)};
}

KernelWork gemm_work(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& g = std::get<kernels::GemmShape>(s);
  return cube_work(core, 2.0 * g.m * g.n * g.k, g.in == DType::S8);
}

// --- conv2d -------------------------------------------------------------------------------------
KernelShape read_conv2d(const cfg::Node& sh) {
  kernels::ConvShape c{u32(sh, "h"),     u32(sh, "w"),        u32(sh, "c"),        u32(sh, "cout"),  u32(sh, "kh"),
                       u32(sh, "kw"),    u32(sh, "stride_h"), u32(sh, "stride_w"), u32(sh, "dil_h"), u32(sh, "dil_w"),
                       u32(sh, "pad_t"), u32(sh, "pad_b"),    u32(sh, "pad_l"),    u32(sh, "pad_r")};
  c.out = dtype(sh, "out");
  if (c.out != DType::F32 && c.out != DType::F16 && c.out != DType::BF16)
    sh.at("out").fail("conv2d gives an f32, f16 or bf16 output");
  c.bias = sh.get_bool("bias"), c.scale = sh.get_bool("channel_scale"), c.residual = sh.get_bool("residual");
  c.relu = sh.get_bool("relu"), c.relu6 = sh.get_bool("relu6");
  c.c0 = u32(sh, "c0"), c.groups = u32(sh, "groups");
  c.out_nc1hwc0 = sh.get_string("out_layout") == "nc1hwc0";
  c.weights_fractal = sh.get_string("weights_layout") == "fractal_z";
  c.f16_epilogue = f16_epilogue(sh, c.out, DType::F16);
  c.weights_once = sh.get_bool("weights_once");
  if (c.out_nc1hwc0 && c.cout % 16)
    sh.at("out_layout").fail("conv2d: an NC1HWC0 y takes cout a multiple of 16 (got " + std::to_string(c.cout) + ")");
  if (c.c0 != 16 && c.c0 != 4) sh.at("c0").fail("conv2d: c0 is 16, or 4 for the small-channel mode (c <= 4)");
  if (c.c0 == 4 && c.c > 4)
    sh.at("c0").fail("conv2d: c0 = 4 takes at most 4 channels (c = " + std::to_string(c.c) + ")");
  if (!c.groups || c.c % c.groups || c.cout % c.groups)
    sh.at("groups").fail("conv2d: groups must divide c (" + std::to_string(c.c) + ") and cout (" +
                         std::to_string(c.cout) + ")");
  if (c.h + c.pad_t + c.pad_b < c.dil_h * (c.kh - 1) + 1 || c.w + c.pad_l + c.pad_r < c.dil_w * (c.kw - 1) + 1)
    sh.fail("conv2d: the dilated filter is larger than the padded input");
  return c;
}
std::vector<LibraryArg> conv2d_args(const KernelShape& s) {
  const auto& c = std::get<kernels::ConvShape>(s);
  const std::uint64_t y = std::uint64_t(c.ho()) * c.wo() * c.cout;
  std::vector<LibraryArg> a{
      {"x", DType::F16, std::uint64_t(c.c1()) * c.c0 * c.h * c.w, c.c0, 1},
      {"weights", DType::F16,
       c.weights_fractal ? fractal_z_elems(c.cout, c.k(), DType::F16) : std::uint64_t(c.cout) * c.k(), c.c0, c.groups,
       c.weights_fractal},
      {"y", c.out, y, c.out_nc1hwc0 ? 16u : 0u, 1}};
  if (c.bias) a.push_back({"bias", DType::F32, c.cout});
  if (c.scale) a.push_back({"scale", DType::F32, c.cout});
  if (c.residual) a.push_back({"residual", c.out, y, c.out_nc1hwc0 ? 16u : 0u, 1});
  return a;
}
BuiltKernel build_conv2d(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& c = std::get<kernels::ConvShape>(s);
  const kernels::GemmShape g = kernels::conv2d_gemm_shape(c);
  const kernels::GemmTiling t = kernels::conv2d_words([&] { return kernels::gemm_tiling(core, g, &c); });
  return {kernels::conv2d_kernel(core, c), kernels::conv2d_tiling(core, c), t.tiles(g.m, g.n)};
}

KernelWork conv2d_work(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& c = std::get<kernels::ConvShape>(s);
  // The convolution's own MACs: its group's c / groups channels, not the pad channels of the
  // last C1 group nor the zeros of an extended group's block-diagonal weights.
  return cube_work(core, 2.0 * c.ho() * c.wo() * c.cout * c.cin_g() * c.kh * c.kw, false);
}

// --- pool ---------------------------------------------------------------------------------------
KernelShape read_pool(const cfg::Node& sh) {
  kernels::PoolShape p{sh.get_string("pool"), u32(sh, "h"),     u32(sh, "w"),        u32(sh, "c"),
                       u32(sh, "kh"),         u32(sh, "kw"),    u32(sh, "stride_h"), u32(sh, "stride_w"),
                       u32(sh, "pad_t"),      u32(sh, "pad_b"), u32(sh, "pad_l"),    u32(sh, "pad_r"),
                       u32(sh, "dil_h"),      u32(sh, "dil_w")};
  if (p.mode == "global") {  // global average: one window of the whole map
    for (const char* key : {"kh", "kw", "stride_h", "stride_w", "pad_t", "pad_b", "pad_l", "pad_r", "dil_h", "dil_w"})
      if (sh.get_uint(key) != (key[0] == 'p' ? 0 : 1))
        sh.at(key).fail("a global pool's window is the whole input: drop " + std::string(key));
    p.mode = "avg", p.kh = p.h, p.kw = p.w, p.stride_h = p.stride_w = 1;
  }
  if (p.h + p.pad_t + p.pad_b < p.span_h() || p.w + p.pad_l + p.pad_r < p.span_w())
    sh.fail("pool: the window spans " + std::to_string(p.span_h()) + " x " + std::to_string(p.span_w()) +
            " (kh x kw, dilated), more than the padded input's " + std::to_string(p.h + p.pad_t + p.pad_b) + " x " +
            std::to_string(p.w + p.pad_l + p.pad_r));
  return p;
}
std::vector<LibraryArg> pool_args(const KernelShape& s) {
  const auto& p = std::get<kernels::PoolShape>(s);
  return {{"x", DType::F16, std::uint64_t(p.c1()) * 16 * p.h * p.w},
          {"y", DType::F16, std::uint64_t(p.c1()) * 16 * p.ho() * p.wo()}};
}
BuiltKernel build_pool(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& p = std::get<kernels::PoolShape>(s);
  const std::uint32_t bo = kernels::pool_band_rows(core, p), batch = kernels::pool_global_batch(core, p);
  const std::uint64_t units = batch ? p.c1() / batch : std::uint64_t(p.c1()) * ((p.ho() + bo - 1) / bo);
  const std::string n = std::to_string(units) + " units";
  return {kernels::pool_kernel(core, p),
          batch == 1  ? "one channel group (16) per unit, its map summed at once, " + n
          : batch > 1 ? std::to_string(batch) + " channel groups (16 each) per unit, " + n
          : p.global()
              ? "one channel group (16) per unit, its map in chunks of " + std::to_string(kernels::kGlobalChunk) +
                    " positions, " + n
              : "one channel group (16) and a band of up to " + std::to_string(bo) + " output rows per unit, " + n,
          units};
}

// One max or add per window element (average: and one multiply per output).
KernelWork pool_work(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& p = std::get<kernels::PoolShape>(s);
  const double outs = double(p.c1()) * 16 * p.ho() * p.wo();
  const double ops = outs * p.kh * p.kw + (p.mode == "avg" ? outs : 0);
  return {ops, "vector op", vector_ps(core, ops, 2, false)};
}

// --- softmax ------------------------------------------------------------------------------------
KernelShape read_softmax(const cfg::Node& sh) {
  kernels::SoftmaxShape s{dtype(sh, "dtype"), u32(sh, "rows"), u32(sh, "cols"), sh.get_double("scale")};
  if (sh.has("mask_rows")) s.mask_rows = u32(sh, "mask_rows"), s.fill = sh.get_double("mask_fill");
  if (sh.has("mask_rows") && (s.mask_rows == 0 || s.rows % s.mask_rows))
    sh.at("mask_rows").fail("the mask's rows must divide the rows (" + std::to_string(s.rows) + ")");
  if (sh.has("mask_fill") && !sh.has("mask_rows")) sh.at("mask_fill").fail("mask_fill is a mask's: give mask_rows");
  return s;
}
std::vector<LibraryArg> softmax_args(const KernelShape& s) {
  const auto& sm = std::get<kernels::SoftmaxShape>(s);
  const std::uint64_t n = std::uint64_t(sm.rows) * sm.cols;
  if (sm.mask_rows)
    return {{"x", sm.dtype, n}, {"mask", sm.dtype, std::uint64_t(sm.mask_rows) * sm.cols}, {"out", sm.dtype, n}};
  return {{"x", sm.dtype, n}, {"out", sm.dtype, n}};
}
BuiltKernel build_softmax(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& sm = std::get<kernels::SoftmaxShape>(s);
  const std::uint32_t u = kernels::softmax_unit_rows(sm);
  const std::string rows =
      kernels::softmax_one_pass(core, sm) ? "one row at a time" : "one row at a time in three passes over chunks of it";
  return {kernels::softmax_kernel(core, sm),
          u == 1 ? rows : rows + ", in units of " + std::to_string(u) + " rows (whole blocks)", (sm.rows + u - 1) / u};
}

// Per element, at least: the row max, the subtraction, the exponential (complex), the row sum
// and the scaling (a multiply by the sum's reciprocal; the kernel divides, a complex op, so it
// is bounded below by this and not reached): four simple operations and one complex.
KernelWork softmax_elements(const aicore::AiCoreConfig& core, double n, unsigned b) {
  return {5 * n, "vector op", vector_ps(core, 4 * n, b, false) + vector_ps(core, n, b, true)};
}
KernelWork softmax_work(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& sm = std::get<kernels::SoftmaxShape>(s);
  return softmax_elements(core, double(sm.rows) * sm.cols, aicore::dtype_bytes(sm.dtype));
}

// --- softmax over channels ----------------------------------------------------------------------
KernelShape read_softmax_c(const cfg::Node& sh) {
  if (dtype(sh, "dtype") != DType::F16) sh.at("dtype").fail("softmax_c takes f16 (vtranspose moves 16-bit elements)");
  const double scale = sh.get_double("scale");
  if (!(scale > 0)) sh.at("scale").fail("softmax_c: the scale must be above 0");
  return kernels::ChannelSoftmaxShape{u32(sh, "h"), u32(sh, "w"), u32(sh, "c"), scale};
}
std::vector<LibraryArg> softmax_c_args(const KernelShape& s) {
  const auto& c = std::get<kernels::ChannelSoftmaxShape>(s);
  const std::uint64_t n = std::uint64_t(c.c1()) * 16 * c.positions();
  return {{"x", DType::F16, n}, {"y", DType::F16, n}};
}
BuiltKernel build_softmax_c(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& c = std::get<kernels::ChannelSoftmaxShape>(s);
  const std::uint64_t p = 16ull * kernels::channel_softmax_tiles(core, c), units = (c.positions() + p - 1) / p;
  return {
      kernels::channel_softmax_kernel(core, c),
      std::to_string(p) + " positions per unit, transposed to a row per channel, " + std::to_string(units) + " units",
      units};
}
// As softmax's per element (the transposes aside).
KernelWork softmax_c_work(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& c = std::get<kernels::ChannelSoftmaxShape>(s);
  return softmax_elements(core, double(c.c) * double(c.positions()), 2);
}

// --- upsample -----------------------------------------------------------------------------------
KernelShape read_upsample(const cfg::Node& sh) {
  if (dtype(sh, "dtype") != DType::F16) sh.at("dtype").fail("upsample takes f16 (an NC1HWC0 map of 32-byte blocks)");
  kernels::UpsampleShape u{u32(sh, "c"), u32(sh, "h"), u32(sh, "w"), u32(sh, "sh"), u32(sh, "sw")};
  u.zeros = sh.get_string("fill") == "zeros";
  u.pad_b = u32(sh, "pad_b"), u.pad_r = u32(sh, "pad_r");
  if ((u.pad_b || u.pad_r) && !u.zeros) sh.fail("upsample: pad_b and pad_r (zeros after the map) take fill: zeros");
  return u;
}
std::vector<LibraryArg> upsample_args(const KernelShape& s) {
  const auto& u = std::get<kernels::UpsampleShape>(s);
  return {{"x", DType::F16, u.in_elems()}, {"y", DType::F16, u.out_elems()}};
}
BuiltKernel build_upsample(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& u = std::get<kernels::UpsampleShape>(s);
  return {kernels::upsample_kernel(core, u),
          u.zeros ? "a row at a time, spread by vcopy into zeros, two UB buffers"
                  : "a row at a time, widened by vcopy, two UB buffers",
          std::uint64_t(u.c1()) * u.h};
}
// No arithmetic: the bound is the bytes (MTE2 reads the map, MTE3 writes it sh x sw times over).
KernelWork upsample_work(const aicore::AiCoreConfig&, const KernelShape& s) {
  return {double(std::get<kernels::UpsampleShape>(s).out_elems()), "element", 0};
}

// --- resize -------------------------------------------------------------------------------------
KernelShape read_resize(const cfg::Node& sh) {
  if (dtype(sh, "dtype") != DType::F16) sh.at("dtype").fail("resize takes f16 (an NC1HWC0 map of 32-byte blocks)");
  kernels::ResizeShape r;
  r.c = u32(sh, "c"), r.h = u32(sh, "h"), r.w = u32(sh, "w"), r.oh = u32(sh, "oh"), r.ow = u32(sh, "ow");
  r.rule.mode = kernels::ResizeMode(kernels::resize_name(kernels::kResizeModes, sh.get_string("mode")));
  r.rule.transform =
      kernels::ResizeTransform(kernels::resize_name(kernels::kResizeTransforms, sh.get_string("transform")));
  r.rule.rounding =
      kernels::NearestRounding(kernels::resize_name(kernels::kNearestRoundings, sh.get_string("nearest_mode")));
  r.rule.cubic_a = sh.get_double("cubic_a");
  r.rule.exclude_outside = sh.get_bool("exclude_outside");
  // ONNX's scales; sizes given instead are out / in.
  r.scale_h = sh.has("scale_h") ? sh.get_double("scale_h") : double(r.oh) / double(r.h);
  r.scale_w = sh.has("scale_w") ? sh.get_double("scale_w") : double(r.ow) / double(r.w);
  return r;
}
std::vector<LibraryArg> resize_args(const KernelShape& s) {
  const auto& r = std::get<kernels::ResizeShape>(s);
  return {{"x", DType::F16, r.in_elems()}, {"y", DType::F16, r.out_elems()}};
}
BuiltKernel build_resize(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& r = std::get<kernels::ResizeShape>(s);
  const std::uint32_t bands = kernels::resize_bands(core, r);
  return {kernels::resize_kernel(core, r),
          "an output row at a time" + (bands > 1 ? " in " + std::to_string(bands) + " bands" : std::string()) +
              ": its tap rows weighted and summed, then its positions gathered by vcopy runs, weighted and summed, "
              "two UB buffers",
          std::uint64_t(r.c1()) * r.oh};
}
// Per tap, the rows' multiply and add over the input's width, then the positions' copy, multiply
// and add over the output's (nearest: the copy alone).
KernelWork resize_work(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& r = std::get<kernels::ResizeShape>(s);
  const bool weighted = r.rule.mode != kernels::ResizeMode::Nearest;
  const double rows = double(r.c1()) * r.oh * 16 * r.rule.taps();
  const double n = rows * (weighted ? 2.0 * r.w + 3.0 * r.ow : double(r.ow));
  return {n, "vector op", vector_ps(core, n, 2, false)};
}

// --- channel_mul --------------------------------------------------------------------------------
KernelShape read_channel_mul(const cfg::Node& sh) {
  if (dtype(sh, "dtype") != DType::F16) sh.at("dtype").fail("channel_mul takes f16 (an NC1HWC0 map of 32-byte blocks)");
  return kernels::ChannelMulShape{u32(sh, "c"), u32(sh, "h"), u32(sh, "w")};
}
std::vector<LibraryArg> channel_mul_args(const KernelShape& s) {
  const auto& m = std::get<kernels::ChannelMulShape>(s);
  return {{"x", DType::F16, m.elems()}, {"g", DType::F16, std::uint64_t(m.c1()) * 16}, {"y", DType::F16, m.elems()}};
}
BuiltKernel build_channel_mul(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& m = std::get<kernels::ChannelMulShape>(s);
  return {kernels::channel_mul_kernel(core, m),
          "bands of " + std::to_string(kernels::channel_mul_band(core, m)) + " positions, two UB buffers",
          kernels::channel_mul_units(core, m)};
}
// One multiply per element.
KernelWork channel_mul_work(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const double n = double(std::get<kernels::ChannelMulShape>(s).elems());
  return {n, "vector op", vector_ps(core, n, 2, false)};
}

// --- layernorm ----------------------------------------------------------------------------------
KernelShape read_layernorm(const cfg::Node& sh) {
  const kernels::LayerNormShape l{dtype(sh, "dtype"), u32(sh, "rows"), u32(sh, "cols"), sh.get_double("epsilon")};
  if (l.dtype != DType::F16 && l.dtype != DType::F32) sh.at("dtype").fail("layernorm takes f16 or f32");
  if (std::uint64_t(l.cols) * aicore::dtype_bytes(l.dtype) % 32)
    sh.at("cols").fail("layernorm: a row is whole 32-byte blocks (" +
                       std::string(l.dtype == DType::F16 ? "f16" : "f32") + ": cols a multiple of " +
                       std::to_string(32 / aicore::dtype_bytes(l.dtype)) + "), got " + std::to_string(l.cols));
  return l;
}
std::vector<LibraryArg> layernorm_args(const KernelShape& s) {
  const auto& l = std::get<kernels::LayerNormShape>(s);
  const std::uint64_t n = std::uint64_t(l.rows) * l.cols;
  return {{"x", l.dtype, n}, {"gamma", l.dtype, l.cols}, {"beta", l.dtype, l.cols}, {"y", l.dtype, n}};
}
BuiltKernel build_layernorm(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& l = std::get<kernels::LayerNormShape>(s);
  return {kernels::layernorm_kernel(core, l), "one row at a time", l.rows};
}
// Per element: x / n and its sum, the subtraction, the scaling by 1 / sqrt(n), the square and
// its sum, the scaling by 1 / sqrt(var + eps), gamma and beta: nine simple operations (a row's
// reciprocal square root aside).
KernelWork layernorm_work(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& l = std::get<kernels::LayerNormShape>(s);
  const double n = double(l.rows) * l.cols;
  return {9 * n, "vector op", vector_ps(core, 9 * n, aicore::dtype_bytes(l.dtype), false)};
}

// --- transpose ----------------------------------------------------------------------------------
KernelShape read_transpose(const cfg::Node& sh) {
  const kernels::TransposeShape t{dtype(sh, "dtype"), sh.has("outer") ? u32(sh, "outer") : 1, u32(sh, "rows"),
                                  u32(sh, "cols"), u32(sh, "inner")};
  if (std::uint64_t(t.inner) * aicore::dtype_bytes(t.dtype) % 32)
    sh.at("inner").fail("transpose moves runs of whole 32-byte blocks: inner x " +
                        std::to_string(aicore::dtype_bytes(t.dtype)) + " B is " +
                        std::to_string(std::uint64_t(t.inner) * aicore::dtype_bytes(t.dtype)));
  return t;
}
std::vector<LibraryArg> transpose_args(const KernelShape& s) {
  const auto& t = std::get<kernels::TransposeShape>(s);
  const std::uint64_t n = std::uint64_t(t.outer) * t.rows * t.cols * t.inner;
  return {{"x", t.dtype, n}, {"y", t.dtype, n}};
}
BuiltKernel build_transpose(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& t = std::get<kernels::TransposeShape>(s);
  const std::uint32_t r = kernels::transpose_piece_rows(core, t);
  return {kernels::transpose_kernel(core, t), "pieces of " + std::to_string(r) + " rows, two UB buffers",
          kernels::transpose_pieces(core, t)};
}
// No arithmetic: the bound is the bytes (MTE2 reads them, MTE3 writes them).
KernelWork transpose_work(const aicore::AiCoreConfig&, const KernelShape& s) {
  const auto& t = std::get<kernels::TransposeShape>(s);
  return {double(t.outer) * t.rows * t.cols * t.inner, "element", 0};
}

// --- reduce -------------------------------------------------------------------------------------
KernelShape read_reduce(const cfg::Node& sh) {
  kernels::ReduceShape r{dtype(sh, "dtype"), kernels::ReduceOp::Sum, sh.has("outer") ? u32(sh, "outer") : 1,
                         u32(sh, "rows"), sh.has("inner") ? u32(sh, "inner") : 1};
  if (r.dtype != DType::F16 && r.dtype != DType::F32) sh.at("dtype").fail("reduce takes f16 or f32");
  const std::string op = sh.get_string("reduce");
  for (std::size_t i = 0; i < std::size(kernels::kReduceOps); ++i)
    if (op == kernels::kReduceOps[i]) r.op = kernels::ReduceOp(i);
  return r;
}
std::vector<LibraryArg> reduce_args(const KernelShape& s) {
  const auto& r = std::get<kernels::ReduceShape>(s);
  return {{"x", r.dtype, std::uint64_t(r.outer) * r.rows * r.inner}, {"y", r.dtype, std::uint64_t(r.outer) * r.inner}};
}
BuiltKernel build_reduce(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& r = std::get<kernels::ReduceShape>(s);
  const kernels::ReducePlan p = kernels::reduce_plan(core, r);
  std::string how = r.inner == 1   ? std::to_string(p.unit) + " rows a unit, gathered"
                    : p.packed     ? std::to_string(p.unit) + " output rows a unit, packed"
                    : p.unit > 1   ? "every output row on one core, in order (a unit does not fit the UB)"
                    : p.pieces > 1 ? std::to_string(p.pieces) + " pieces of an output row, each a unit"
                                   : "one output row a unit";
  if (p.pieces == 1 && p.width < (r.inner == 1 ? r.rows : r.inner))
    how += ", read " + std::to_string(p.width) + " elements at a time";
  return {kernels::reduce_kernel(core, r), how + (p.widened ? ", summed in f32" : ""), p.units};
}
// One operation per element read (a mean's scaling aside).
KernelWork reduce_work(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& r = std::get<kernels::ReduceShape>(s);
  const double n = double(r.outer) * r.rows * r.inner;
  return {n, "vector op", vector_ps(core, n, aicore::dtype_bytes(r.dtype), false)};
}

// --- expand -------------------------------------------------------------------------------------
KernelShape read_expand(const cfg::Node& sh) {
  kernels::ExpandShape e{dtype(sh, "dtype"), sh.has("outer") ? sh.get_uint("outer") : 1, sh.get_uint("rows"),
                         sh.has("inner") ? sh.get_uint("inner") : 1};
  const unsigned eb = aicore::dtype_bytes(e.dtype);
  if (eb != 2 && eb != 4)
    sh.at("dtype").fail("expand moves 2- or 4-byte elements (vdup, vcopy); the AI CPU's expand takes any type");
  if (e.inner != 1 && e.inner * eb % 32)
    sh.at("inner").fail("expand takes inner 1 or rows of whole 32-byte blocks (the AI CPU's expand takes any)");
  return e;
}
std::vector<LibraryArg> expand_args(const KernelShape& s) {
  const auto& e = std::get<kernels::ExpandShape>(s);
  return {{"x", e.dtype, e.in_elems()}, {"y", e.dtype, e.out_elems()}};
}
BuiltKernel build_expand(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& e = std::get<kernels::ExpandShape>(s);
  const kernels::ExpandPlan p = kernels::expand_plan(core, e);
  const std::string how = p.runs         ? std::to_string(p.unit) + " elements a unit, runs filled by vdup"
                          : p.pieces > 1 ? std::to_string(p.pieces) + " pieces of a row, each a unit"
                                         : std::to_string(p.unit) + " rows a unit, x's row doubled by vcopy";
  return {kernels::expand_kernel(core, e), how, p.units};
}
// No arithmetic: the bound is the bytes (x read, y written).
KernelWork expand_work(const aicore::AiCoreConfig&, const KernelShape& s) {
  return {double(std::get<kernels::ExpandShape>(s).out_elems()), "element", 0};
}

// --- slice --------------------------------------------------------------------------------------
KernelShape read_slice(const cfg::Node& sh) {
  const auto get = [&](const char* key, std::uint64_t dflt) { return sh.has(key) ? sh.get_uint(key) : dflt; };
  const kernels::SliceShape s{dtype(sh, "dtype"),     get("outer", 1),      get("rows", 1), sh.get_uint("inner"),
                              get("outer_stride", 0), get("row_stride", 0), get("start", 0)};
  if (s.rows > 1 && !sh.has("row_stride")) sh.at("rows").fail("slice: rows over 1 need row_stride");
  if (s.outer > 1 && !sh.has("outer_stride")) sh.at("outer").fail("slice: outer over 1 needs outer_stride");
  // The extents, exact (the keys' ranges allow products past 2^64): within any DRAM.
  using Wide = unsigned __int128;
  const Wide y = Wide(s.outer) * s.rows * s.inner;
  const Wide x = Wide(s.start) + Wide(s.outer - 1) * s.outer_stride + Wide(s.rows - 1) * s.row_stride + s.inner;
  if (std::max(x, y) > Wide(1) << 40)
    sh.fail("slice: x spans " + std::string(x > Wide(1) << 40 ? "over" : "under") + " 2^40 elements and y holds " +
            (y > Wide(1) << 40 ? "over" : "under") + " 2^40: past any DRAM");
  if (const std::string why = kernels::slice_refusal(s); !why.empty()) sh.fail(why);
  return s;
}
std::vector<LibraryArg> slice_args(const KernelShape& s) {
  const auto& c = std::get<kernels::SliceShape>(s);
  return {{"x", c.dtype, c.x_elems(), 0, 0, false, true}, {"y", c.dtype, c.y_elems()}};
}
BuiltKernel build_slice(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& c = std::get<kernels::SliceShape>(s);
  const kernels::SlicePlan p = kernels::slice_plan(core, c);
  const std::string how = p.chunks > 1 ? "runs in " + std::to_string(p.chunks) + " chunks, each a unit"
                                       : std::to_string(p.piece_rows) + " runs a unit, gathered";
  return {kernels::slice_kernel(core, c), how, p.units};
}
// No arithmetic: the bound is the bytes, y's read from x (x is read only in part) and y written.
KernelWork slice_work(const aicore::AiCoreConfig&, const KernelShape& s) {
  const auto& c = std::get<kernels::SliceShape>(s);
  return {double(c.y_elems()), "element", 0, c.y_elems() * aicore::dtype_bytes(c.dtype)};
}

// --- elementwise --------------------------------------------------------------------------------
KernelShape read_elementwise(const cfg::Node& sh) {
  kernels::ElementwiseShape e{sh.get_string("op"), dtype(sh, "dtype"), sh.get_uint("n"),
                              sh.has("to") ? dtype(sh, "to") : DType::None};
  if (e.op == "cast" && !sh.has("to")) sh.fail("a cast needs shape.to");
  const kernels::ElementwiseOp* op = kernels::elementwise_op(e.op);
  const unsigned params = op ? op->params : 0;
  for (unsigned i = 0; i < 2; ++i) {
    const char* key = i ? "beta" : "alpha";
    if (i < params && !sh.has(key)) sh.fail(e.op + " needs shape." + key + " (" + op->params_doc + ")");
    if (i >= params && sh.has(key)) sh.at(key).fail(e.op + " takes no " + key);
  }
  e.alpha = sh.has("alpha") ? sh.get_double("alpha") : 0.0;
  e.beta = sh.has("beta") ? sh.get_double("beta") : 0.0;
  return e;
}
std::vector<LibraryArg> elementwise_args(const KernelShape& s) {
  const auto& e = std::get<kernels::ElementwiseShape>(s);
  std::vector<LibraryArg> a{{"x", e.dtype, e.n}};
  if (kernels::elementwise_inputs(e.op) > 1) a.push_back({"y", e.dtype, e.n});
  if (kernels::elementwise_inputs(e.op) > 2) a.push_back({"w", e.dtype, e.n});
  a.push_back({"z", e.op == "cast" ? e.to : e.dtype, e.n});
  return a;
}
BuiltKernel build_elementwise(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& e = std::get<kernels::ElementwiseShape>(s);
  const std::uint32_t tile = kernels::elementwise_tile_bytes(core, e);
  const std::uint64_t tile_elems = tile / kernels::elementwise_wide_bytes(e);
  // The whole tiles, and the tail (one block's work) if n is not a whole number of them.
  return {kernels::elementwise_kernel(core, e), std::to_string(tile) + " B tiles",
          std::max<std::uint64_t>(1, e.n / tile_elems + (e.n % tile_elems ? 1 : 0))};
}

// The op's vector instructions per element, on the type it computes in (and an f16 x widened
// and narrowed); a cast's repeats are counted in the wider of its types.
KernelWork elementwise_work(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& e = std::get<kernels::ElementwiseShape>(s);
  const unsigned b = kernels::elementwise_wide_bytes(e);
  const kernels::ElementwiseOp* op = kernels::elementwise_op(e.op);
  if (!op) return {double(e.n), "vector op", vector_ps(core, double(e.n), b, false)};  // a cast
  const auto [own, heavy] = kernels::elementwise_counts(*op, e.alpha);
  const double n = double(e.n), light = own + (b > aicore::dtype_bytes(e.dtype) ? 2 : 0);
  return {n * (own + heavy), "vector op", vector_ps(core, n * light, b, false) + vector_ps(core, n * heavy, b, true)};
}

// --- aipp ---------------------------------------------------------------------------------------
// Three numbers of a list key (mean, min, var_reci), or `fallback` each when it is absent.
std::vector<double> three(const cfg::Node& sh, const char* key, double fallback) {
  if (!sh.has(key)) return {fallback, fallback, fallback};
  std::vector<double> v;
  for (const std::string& t : sh.get_string_list(key)) {
    char* end = nullptr;
    v.push_back(std::strtod(t.c_str(), &end));
    if (t.empty() || *end || !std::isfinite(v.back()) || std::abs(v.back()) > 65504)
      sh.at(key).fail("'" + t + "' is not a number an f16 holds (|v| <= 65504)");
  }
  if (v.size() != 3) sh.at(key).fail("give three values, one per channel");
  return v;
}

KernelShape read_aipp(const cfg::Node& sh) {
  static const std::vector<std::pair<std::string, std::uint32_t>> kFormats = {
      {"nv12", 1}, {"nv21", 2}, {"yuv400", 5}, {"rgb888", 6}};
  kernels::AippShape a;
  a.h = u32(sh, "h"), a.w = u32(sh, "w"), a.c0 = u32(sh, "c0");
  for (const auto& [name, f] : kFormats)
    if (sh.get_string("format") == name) a.format = f;
  const bool yuv420 = a.format == 1 || a.format == 2;  // strides even, as DVPP lays them out
  a.pitch = sh.has("pitch") ? u32(sh, "pitch") : yuv420 ? (a.w + 1) / 2 * 2 : a.w;
  a.plane_rows = sh.has("plane_rows") ? u32(sh, "plane_rows") : yuv420 ? (a.h + 1) / 2 * 2 : a.h;
  const std::string csc = sh.get_string("csc");
  a.csc = csc != "none";
  if (a.csc && a.format == 6) sh.at("csc").fail("aipp converts YUV to RGB; an rgb888 picture needs none");
  if (a.csc) a.matrix = kernels::aipp_yuv_to_rgb(csc == "bt601_full" ? 0 : csc == "bt601_limited" ? 1 : 2);
  const std::vector<double> mean = three(sh, "mean", 0), min = three(sh, "min", 0), var = three(sh, "var_reci", 1);
  for (int c = 0; c < 3; ++c) {
    if (mean[c] < 0 || mean[c] > 255 || mean[c] != std::floor(mean[c]))
      sh.at("mean").fail("a channel mean is a whole number 0 .. 255 (a fraction goes in min)");
    a.mean[c] = std::uint16_t(mean[c]);
    a.min[c] = aicore::num::to_f16(min[c]);
    a.var[c] = aicore::num::to_f16(var[c]);
  }
  return a;
}
std::vector<LibraryArg> aipp_args(const KernelShape& s) {
  const auto& a = std::get<kernels::AippShape>(s);
  return {{"x", DType::U8, a.in_bytes()}, {"y", DType::F16, a.out_elems()}};
}
BuiltKernel build_aipp(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& a = std::get<kernels::AippShape>(s);
  const std::uint32_t rows = kernels::aipp_band_rows(core, a);
  const std::uint64_t bands = (a.h + rows - 1) / rows;
  return {kernels::aipp_kernel(core, a),
          "bands of " + std::to_string(rows) + " rows, " + std::to_string(bands) + " units", bands};
}
// One pixel at a time through MTE2's conversion, on every core.
KernelWork aipp_work(const aicore::AiCoreConfig& core, const KernelShape& s) {
  const auto& a = std::get<kernels::AippShape>(s);
  const double px = double(a.h) * a.w;
  return {px, "pixel", px / core.aipp_pixels_per_cycle * double(core.clock.period()) / core.cores};
}

const LibraryKernel kGemm{"gemm", {"m", "k", "n"}, read_gemm, gemm_args, build_gemm, gemm_work};
const LibraryKernel kConv2d{"conv2d", {"h", "w", "c", "cout"}, read_conv2d, conv2d_args, build_conv2d, conv2d_work};
const LibraryKernel kPool{"pool", {"pool", "h", "w", "c"}, read_pool, pool_args, build_pool, pool_work};
const LibraryKernel kSoftmax{"softmax", {"rows", "cols"}, read_softmax, softmax_args, build_softmax, softmax_work};
const LibraryKernel kElementwise{"elementwise",    {"op", "n"},       read_elementwise,
                                 elementwise_args, build_elementwise, elementwise_work};
const LibraryKernel kLayerNorm{"layernorm",    {"rows", "cols"}, read_layernorm,
                               layernorm_args, build_layernorm,  layernorm_work};
const LibraryKernel kTranspose{"transpose",    {"rows", "cols", "inner"}, read_transpose,
                               transpose_args, build_transpose,           transpose_work};
const LibraryKernel kSoftmaxC{"softmax_c",    {"h", "w", "c"}, read_softmax_c,
                              softmax_c_args, build_softmax_c, softmax_c_work};
const LibraryKernel kChannelMul{"channel_mul",    {"h", "w", "c"},   read_channel_mul,
                                channel_mul_args, build_channel_mul, channel_mul_work};
const LibraryKernel kUpsample{"upsample", {"h", "w", "c"}, read_upsample, upsample_args, build_upsample, upsample_work};
const LibraryKernel kResize{"resize", {"h", "w", "c", "oh", "ow"}, read_resize, resize_args, build_resize, resize_work};
const LibraryKernel kReduce{"reduce", {"reduce", "rows"}, read_reduce, reduce_args, build_reduce, reduce_work};
const LibraryKernel kExpand{"expand", {"rows"}, read_expand, expand_args, build_expand, expand_work};
const LibraryKernel kSlice{"slice", {"inner"}, read_slice, slice_args, build_slice, slice_work};
const LibraryKernel kAipp{"aipp", {"h", "w", "format"}, read_aipp, aipp_args, build_aipp, aipp_work};

}  // namespace

double KernelWork::memory_ps(double dram_bytes_per_ps) const {
  return dram_bytes_per_ps > 0 ? double(bytes) / dram_bytes_per_ps : 0.0;
}
double KernelWork::bound_ps(double dram_bytes_per_ps) const {
  return std::max(compute_ps, memory_ps(dram_bytes_per_ps));
}
bool KernelWork::dram_bound(double dram_bytes_per_ps) const { return memory_ps(dram_bytes_per_ps) > compute_ps; }
const char* KernelWork::bound_kind(double dram_bytes_per_ps) const {
  return dram_bound(dram_bytes_per_ps) ? "DRAM" : "compute";
}

KernelWork library_work(const LibraryKernel& k, const aicore::AiCoreConfig& core, const KernelShape& s) {
  KernelWork w = k.work(core, s);
  for (const LibraryArg& a : k.args(s))
    if (!a.partly) w.bytes += a.elems * aicore::dtype_bytes(a.dtype);
  return w;
}

const cfg::Choices<const LibraryKernel*>& library_kernels() {
  static const cfg::Choices<const LibraryKernel*> table = {
      {"gemm", &kGemm, "C = A x B (+ bias, ReLU): fp16 / bf16 / int8, tiled for the core's buffers"},
      {"elementwise", &kElementwise, "an element-wise operation or a cast over n elements"},
      {"softmax", &kSoftmax, "softmax of each row"},
      {"channel_mul", &kChannelMul, "an f16 NC1HWC0 map times one value per channel (a squeeze-and-excitation gate)"},
      {"upsample", &kUpsample, "nearest-neighbour upsampling of an f16 NC1HWC0 map by whole factors sh, sw"},
      {"resize", &kResize,
       "resize of an f16 NC1HWC0 map to oh x ow: nearest, linear (bilinear) or cubic, in ONNX's coordinate "
       "transformations"},
      {"softmax_c", &kSoftmaxC, "softmax over the channels of an f16 NC1HWC0 map, each position on its own"},
      {"conv2d", &kConv2d, "2-D convolution via img2col (load3d) on the cube"},
      {"pool", &kPool, "max or average pooling"},
      {"transpose", &kTranspose,
       "two axes swapped: outer x rows x cols x inner to outer x cols x rows x inner (an attention's heads)"},
      {"layernorm", &kLayerNorm, "layer normalization of each row (a transformer's LayerNorm), times gamma plus beta"},
      {"reduce", &kReduce,
       "the sum, mean, maximum or minimum over the middle axis of outer x rows x inner (ONNX's Reduce ops over "
       "adjacent axes)"},
      {"expand", &kExpand,
       "x (outer x inner) repeated over a middle axis of rows: numpy's broadcasting (ONNX's Expand), for inner 1 "
       "or rows of whole 32-byte blocks"},
      {"slice", &kSlice,
       "runs of x gathered: y[o][r][i] = x[start + o outer_stride + r row_stride + i] (ONNX's Slice and Split "
       "along an axis), runs, strides and start whole 32-byte blocks"},
      {"aipp", &kAipp,
       "AIPP: a u8 picture (nv12, nv21, yuv400, rgb888) to a network's f16 NC1HWC0 input, colour-converted and "
       "normalised"},
  };
  return table;
}

}  // namespace dvp::platform
