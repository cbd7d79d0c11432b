// SPDX-License-Identifier: MIT
#include "launcher.hpp"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <sstream>

#include "aicore/assembler.hpp"
#include "aicore/numeric.hpp"
#include "common/error.hpp"
#include "common/payload.hpp"
#include "common/zero_pages.hpp"
#include "dvpp/codec.hpp"
#include "kernels/library/elementwise.hpp"
#include "library.hpp"
#include "reference.hpp"
#include "tensor_file.hpp"
#include "tensor_layout.hpp"

extern "C" {
#include "dvp_abi.h"  // the job table (shared with the firmware)
}

namespace dvp::platform {

using cfg::Type;
namespace fs = std::filesystem;

namespace {

// Adds the host time of its scope to a total. Host time is reported, never simulated: nothing a
// model or the firmware sees depends on it.
class HostTimer {
 public:
  explicit HostTimer(double& total) : total_(total), t0_(std::chrono::steady_clock::now()) {}
  ~HostTimer() { total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
  HostTimer(const HostTimer&) = delete;
  HostTimer& operator=(const HostTimer&) = delete;

 private:
  double& total_;
  std::chrono::steady_clock::time_point t0_;
};
std::string shape_text(const std::vector<std::uint64_t>& s) {
  std::string t = "(";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + ")";
}

std::string num_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// Element i of a tensor of this shape: [i] in one dimension, [r, c] in two, ...
std::string index_text(std::uint64_t i, const std::vector<std::uint64_t>& shape) {
  if (shape.size() < 2) return "[" + std::to_string(i) + "]";
  std::vector<std::uint64_t> at(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) at[d] = i % shape[d], i /= shape[d];
  std::string t = "[";
  for (std::size_t d = 0; d < at.size(); ++d) t += (d ? ", " : "") + std::to_string(at[d]);
  return t + "]";
}

// Stored element s of an NC1HWC0 tensor at its logical place; a pad channel says so.
std::string nc1hwc0_index_text(std::uint64_t s, const Nc1hwc0& l, const std::vector<std::uint64_t>& shape) {
  std::uint64_t i = 0, channel = 0;
  if (l.logical_of(s, i, channel)) return index_text(i, shape);
  return "[pad channel " + std::to_string(channel) + " of image " + std::to_string(s / l.row()) + "]";
}

// "N elements within ..." or "B of N elements over ...", with the errors and the worst element
// (an NC1HWC0 output's compared as stored, named at its logical place).
std::string comparison_text(const std::string& out, const std::vector<std::uint64_t>& shape,
                            const KernelLauncher::Comparison& c, const Nc1hwc0* stored = nullptr) {
  const std::string tol = "atol " + num_text(c.atol) + " + rtol " + num_text(c.rtol) + " x |reference|";
  std::string t = c.over ? std::to_string(c.over) + " of " + std::to_string(c.count) + " elements over " + tol
                         : std::to_string(c.count) + " elements within " + tol;
  if (c.worst < 0) return t + "; all equal to the reference";
  const std::uint64_t w = std::uint64_t(c.worst);
  t += "; max abs err " + num_text(c.max_abs) + ", max rel err " + num_text(c.max_rel) + "; worst " + out +
       (stored ? nc1hwc0_index_text(w, *stored, shape) : index_text(w, shape)) + " = " + num_text(c.have) +
       ", reference " + num_text(c.want);
  return t;
}

// The AI CPU kernels of the runtime firmware (firmware/runtime/aicpu.c), by their function code.
const cfg::Choices<std::uint32_t> kAicpuKernels = {
    {"topk", DVP_AICPU_TOPK, "each row's k largest, values and indices"},
    {"argmax", DVP_AICPU_ARGMAX, "each row's largest, its index"},
    {"concat", DVP_AICPU_CONCAT, "inputs joined: y's rows are the inputs' rows side by side (byte copies)"},
    {"gather", DVP_AICPU_GATHER, "rows picked by index: y's rows are x's rows at the s32 indices, per outer block"},
    {"expand", DVP_AICPU_EXPAND, "x broadcast: y's rows (o, r), r < mid, of run_bytes are x's row o (byte copies)"},
    {"slice", DVP_AICPU_SLICE,
     "runs of x: y's runs (o, r) of run_bytes are x's from start + o outer_stride + r row_stride (a negative "
     "row_stride: a step backward; byte copies)"},
};

// The tasks over a range of a tensor (range_entry): their key and type.
struct RangeKind {
  const char* key;
  std::uint32_t type;
};
constexpr RangeKind kRangeKinds[] = {
    {"preload", DVP_TASK_PRELOAD}, {"prefetch", DVP_TASK_PREFETCH}, {"discard", DVP_TASK_DISCARD}};

// The range kind of task t, or null (another kind of task).
const RangeKind* range_kind(const cfg::Node& t) {
  for (const RangeKind& k : kRangeKinds)
    if (t.has(k.key)) return &k;
  return nullptr;
}
}  // namespace

void KernelLauncher::describe_tasks(cfg::Spec& t) {
  t.param("name", Type::String, "the task's name in reports (default: the kernel's name, or record / wait N)")
      .optional();
  t.param("stream", Type::Int, "the stream it is submitted to; tasks of one stream run in order")
      .defaults("0")
      .range(0, DVP_MAX_STREAMS - 1);
  t.param("kernel", Type::String, "an AI Core kernel: the name of a kernels: entry (its blocks)").optional();
  t.param("record", Type::Int, "set this event").optional().range(0, DVP_MAX_EVENTS - 1);
  t.param("wait", Type::Int, "wait until this event is set, then clear it").optional().range(0, DVP_MAX_EVENTS - 1);
  t.param("barrier", Type::Bool, "wait until every other stream has nothing queued or running").optional();
  t.param("dvpp", Type::String, "a media command: the name of a dvpp: entry (its engine runs it)").optional();
  t.param("preload", Type::String,
          "KERNEL.TENSOR: the task scheduler's SDMA engine brings that tensor into the L2 (platform.ts.sdma); the "
          "stream goes on at once, and a kernel reading a line still on its way waits for it")
      .optional();
  t.param("prefetch", Type::String,
          "KERNEL.TENSOR: as preload, at the SDMA engine's low priority: it issues the lines only while no preload "
          "is queued, pausing for those that come (for data wanted after the next preloads' kernels: it fills the "
          "time the DRAM would leave idle)")
      .optional();
  t.param("discard", Type::String,
          "KERNEL.TENSOR: the task scheduler's SDMA engine drops the L2's copies of that tensor's whole lines, dirty "
          "ones without writing them back (cache maintenance, CHI's MakeInvalid; platform.ts.sdma), for memory no "
          "later task reads: what is left in DRAM there is stale. The stream goes on at once. A network's compiler "
          "discards activations no later layer uses")
      .optional();
  t.param("offset", Type::Int, "a preload, prefetch or discard: from this many bytes into the tensor (default 0)")
      .unit("B")
      .optional()
      .range(0, 1ull << 48);
  t.param("bytes", Type::Int,
          "a preload, prefetch or discard: this many bytes (default: the whole tensor, from offset)")
      .unit("B")
      .optional()
      .range(1, 1ull << 48);
}

void KernelLauncher::describe(cfg::Spec& k) {
  k.param("name", Type::String, "kernel name, for tasks, aliases, reports and saved files; one kernel each");
  k.param("source", Type::String, "DV assembly file, assembled at load (relative to the scenario)").optional();
  k.param("image", Type::String, "kernel image built by dvas (relative to the scenario)").optional();
  k.param("aicpu", Type::Enum,
          "an AI CPU kernel of the runtime firmware (needs firmware: and tasks:); args (docs/scenarios.md): topk, "
          "argmax: x (f32), rows, cols, k, values (f32), indices (s32); concat: y, outer, n, x0, bytes0, ...; gather: "
          "y, outer, n, row_bytes, x, x_rows, indices (s32); expand: y, x, outer, mid, run_bytes; slice: y, x, outer, "
          "outer_stride, rows, row_stride, run_bytes, start (bytes). " +
              kAicpuKernels.doc())
      .choices(kAicpuKernels.names())
      .optional();
  k.param("library", Type::Enum,
          "a kernel of the kernel library, built (tiled) for the configured core: " + library_kernels().doc())
      .choices(library_kernels().names())
      .optional();
  describe_shape(k.section("shape", "Problem shape of a library kernel"));
  k.param("cores", Type::Int, "cores to run on (default: all)").optional().range(1, 256);
  k.param("blocks", Type::Int,
          "task blocks (block ids 0..blocks-1; default: cores, or for a library kernel its work units (tiles, "
          "rows, ...) if fewer); more blocks than cores run in waves")
      .optional()
      .range(1, 65535);
  describe_tensors(k.object_list("tensors", "Tensors placed in DRAM before the launch"));
  k.param("args", Type::StringList,
          "the argument table at argbase, 8 bytes each: a tensor name gives its GM address, a number its value");
  describe_check(k.section("check", "Compare an output tensor with a reference: computed from the inputs, or a file"));
}

void KernelLauncher::describe_shape(cfg::Spec& sh) {
  sh.optional();
  sh.param("m", Type::Int, "gemm: rows of A and C (1: a matrix-vector product)").optional().range(1, 1 << 20);
  sh.param("k", Type::Int, "gemm: columns of A, rows of B").optional().range(1, 65535);
  sh.param("n", Type::Int, "gemm: columns of B and C; elementwise: elements").optional().range(1, 1ull << 34);
  std::vector<std::string> ops;
  std::string op_doc;
  for (const kernels::ElementwiseOp& o : kernels::elementwise_ops()) {
    ops.push_back(o.name);
    op_doc += std::string(op_doc.empty() ? "" : "; ") + o.name + ": " + o.doc;
  }
  ops.push_back("cast");
  sh.param("op", Type::Enum, "elementwise: the operation (" + op_doc + "; cast: z = x in shape.to)")
      .choices(ops)
      .optional();
  sh.param("alpha", Type::Float,
           "elementwise leaky_relu: the slope below 0; hard_sigmoid: max(0, min(1, alpha x + beta)); clip: the "
           "lower bound; adds, muls: the constant; where_else: z where x is 0; where_then, where_both: z where x is "
           "not 0 (each as the vector unit's scalar: rounded to dtype)")
      .optional();
  sh.param("beta", Type::Float,
           "elementwise hard_sigmoid: see alpha; clip: the upper bound; where_both: z where x is 0")
      .optional();
  sh.param("to", Type::Enum, "elementwise cast: the output type")
      .choices({"f16", "bf16", "f32", "s8", "s32"})
      .optional();
  sh.param("dtype", Type::Enum, "elementwise, softmax, layernorm, transpose: element type (of the input for a cast)")
      .choices({"f16", "bf16", "f32", "s8", "s32"})
      .defaults("f16");
  for (const char* key : {"h", "w", "c", "cout"})
    sh.param(key, Type::Int,
             "conv2d, pool, softmax_c, upsample, channel_mul: input height, width, channels (stored NC1HWC0: groups of "
             "16, the last "
             "one "
             "padded; pool and softmax_c likewise), conv2d: output channels")
        .optional()
        .range(1, 65535);
  for (const char* key : {"sh", "sw"})
    sh.param(key, Type::Int, "upsample: the factor down (sh) and across (sw)").defaults("1").range(1, 255);
  describe_resize_shape(sh);
  for (const char* key : {"kh", "kw", "stride_h", "stride_w", "dil_h", "dil_w"})
    sh.param(key, Type::Int, "conv2d: filter size, stride, dilation; pool: window size, stride, dilation")
        .defaults("1")
        .range(1, 255);
  sh.param("pool", Type::Enum, "pool: max, avg (padding counted in the divisor) or global (average of the whole map)")
      .choices({"max", "avg", "global"})
      .optional();
  for (const char* key : {"pad_t", "pad_b", "pad_l", "pad_r"})
    sh.param(key, Type::Int,
             "conv2d: zero padding; pool: padding (never the maximum; 0 in an average); upsample with fill zeros: "
             "pad_b and pad_r, rows and columns of zeros after the map")
        .defaults("0")
        .range(0, 255);
  sh.param("in", Type::Enum, "gemm: type of A and B").choices({"f16", "bf16", "s8"}).defaults("f16");
  sh.param("out", Type::Enum,
           "gemm: type of C (f16 / bf16 inputs: f32, f16 or bf16; s8 inputs: s32, or with scale s8, f16 or f32); "
           "conv2d: type of y (f32, f16 or bf16)")
      .choices({"f32", "f16", "bf16", "s32", "s8"})
      .defaults("f32");
  sh.param("scale", Type::Float,
           "softmax: each row times scale first (an attention's 1 / sqrt(d)); softmax_c: each value (as an f16); "
           "gemm, s8 inputs: requantization, C = (A x B (+ bias), ReLU) x scale, rounded to nearest even "
           "(s8 saturates; f16 overflows to inf); with an s32 C, 1")
      .defaults("1")
      .range(1e-30, 1e30);
  sh.param("relu", Type::Bool, "gemm, conv2d: negative results become 0").defaults("false");
  sh.param("b_transposed", Type::Bool, "gemm: B is stored transposed, n x k (required for s8)").defaults("false");
  sh.param("b_layout", Type::Enum,
           "gemm: how B^T (b_transposed) is stored: nd (n rows of k) or fractal_z (the cube's fractal order, as ATC "
           "stores weights: each chunk of k a tile reads is one run per 32-byte slice of k, not a strided read of n "
           "rows; the tensor in layout fractal_z, shape [n, k])")
      .defaults("nd")
      .choices({"nd", "fractal_z"});
  sh.param("bias", Type::Bool,
           "gemm: C = A x B + bias; a fourth argument, n values of the accumulator type (f32; s32 for s8); "
           "conv2d: a bias per output channel (f32), the argument after y")
      .defaults("false");
  describe_conv_shape(sh);
  describe_row_shape(sh);
  describe_aipp_shape(sh);
}

// conv2d's own keys of shape: its epilogue (and the type it runs in, gemm's too), the layouts of y
// and the weights (and whether they are read once, gemm's B too), C0 and groups.
void KernelLauncher::describe_conv_shape(cfg::Spec& sh) {
  sh.param("weights_once", Type::Bool,
           "gemm (B in b_layout fractal_z), conv2d (weights_layout fractal_z): no kernel after this one reads the "
           "weights. With one row of output tiles, each core then reads its columns of them once, and those reads "
           "do not allocate in the L2 (DataCopy's no_alloc), where they would evict what later kernels read (and "
           "write it back first when dirty). The network compiler sets it for weights no other kernel reads. "
           "Values are the same either way; a later reader finds them in DRAM")
      .defaults("false");
  sh.param("epilogue", Type::Enum,
           "gemm, conv2d with a vector epilogue (bias, channel_scale, residual, relu6): the type it runs in. f32: "
           "FixPipe moves the f32 sums to UB, the steps run in f32 and the result is cast once; f16 (ATC's "
           "precision_mode force_fp16, its default for inference): FixPipe rounds the sums to f16 and each step "
           "runs in f16 and is rounded, at twice the elements per vector repeat and without casts; out: f16")
      .defaults("f32")
      .choices({"f32", "f16"});
  sh.param("channel_scale", Type::Bool,
           "conv2d: the convolution times a scale per output channel (f32; a folded batch norm's), before the "
           "bias; the argument after the bias")
      .defaults("false");
  sh.param("residual", Type::Bool,
           "conv2d: a tensor like y (its type and layout) added before the activation; the last argument")
      .defaults("false");
  sh.param("out_layout", Type::Enum,
           "conv2d: how y (and the residual) are stored: nd (ho x wo rows of cout, NHWC) or nc1hwc0 (the layout the "
           "next conv or pool reads, as CANN's convolutions write it; cout a multiple of 16)")
      .defaults("nd")
      .choices({"nd", "nc1hwc0"});
  sh.param("relu6", Type::Bool, "conv2d: the output clamped to [0, 6] (ReLU6)").defaults("false");
  sh.param("weights_layout", Type::Enum,
           "conv2d: how the weights are stored: nc1hwc0 (cout rows of the img2col k) or fractal_z (the cube's "
           "fractal order, as ATC stores them: a tile's chunk of k is read in runs of whole rows of fractals; the "
           "tensor in layout fractal_z, or fractal_z_c04 with c0: 4)")
      .defaults("nc1hwc0")
      .choices({"nc1hwc0", "fractal_z"});
  sh.param("c0", Type::Int,
           "conv2d: channels per position of the stored input: 16 (NC1HWC0), or 4, the small-channel mode of a first "
           "layer (c <= 4; x and the weights in layout nc1hwc0_c04): k is kh x kw x 4 in whole fractals, not "
           "kh x kw x 16; aipp: channels per position of its output, 16 or 4")
      .defaults("16")
      .range(4, 16);
  sh.param("groups", Type::Int,
           "conv2d: grouped convolution (groups = c: depthwise); output channel o sees the c / groups input channels "
           "of group o / (cout / groups); the weights tensor takes the same groups key")
      .defaults("1")
      .range(1, 65535);
}

// resize's own keys of shape: the output's size and ONNX's Resize attributes.
void KernelLauncher::describe_resize_shape(cfg::Spec& sh) {
  const auto list = [](const auto& names) { return std::vector<std::string>(std::begin(names), std::end(names)); };
  for (const char* key : {"oh", "ow"})
    sh.param(key, Type::Int, "resize: the output's rows (oh) and positions (ow)").optional().range(1, 65535);
  sh.param("mode", Type::Enum, "resize: the interpolation (ONNX's mode)")
      .choices(list(kernels::kResizeModes))
      .defaults("linear");
  sh.param("transform", Type::Enum,
           "resize: where an output index reads in the input (ONNX's coordinate_transformation_mode)")
      .choices(list(kernels::kResizeTransforms))
      .defaults("half_pixel");
  sh.param("nearest_mode", Type::Enum, "resize, mode nearest: how that coordinate rounds (ONNX's nearest_mode)")
      .choices(list(kernels::kNearestRoundings))
      .defaults("round_prefer_floor");
  sh.param("cubic_a", Type::Float, "resize, mode cubic: the cubic convolution's coefficient (ONNX's cubic_coeff_a)")
      .defaults("-0.75")
      .range(-10, 10);
  sh.param("exclude_outside", Type::Bool,
           "resize: taps outside the input weigh 0 and the others are scaled to sum to 1 (ONNX's exclude_outside)")
      .defaults("false");
  for (const char* key : {"scale_h", "scale_w"})
    sh.param(key, Type::Float,
             "resize: ONNX's scale of H (scale_h) and W (scale_w), which the transformations divide by (default: oh / "
             "h, ow / w, as when ONNX's sizes are given)")
        .optional()
        .range(1e-6, 1e6);
}

// The row kernels' keys of shape (softmax, layernorm, transpose), and upsample's fill.
void KernelLauncher::describe_row_shape(cfg::Spec& sh) {
  sh.param("fill", Type::Enum,
           "upsample: copies (nearest: each position sh x sw times) or zeros (zero insertion, a transposed conv's "
           "stride: each position once at (h sh, w sw), zeros between; y (h - 1) sh + 1 by (w - 1) sw + 1)")
      .defaults("copies")
      .choices({"copies", "zeros"});
  sh.param("rows", Type::Int,
           "softmax, layernorm: rows; transpose: x's second axis, y's third; reduce: the axis reduced (x is outer x "
           "rows x inner, y outer x inner); expand: the axis each x row is repeated over (x is outer x inner, y "
           "outer x rows x inner); slice: runs an outer block (default 1)")
      .optional()
      .range(1, 1 << 24);
  sh.param("outer", Type::Int, "transpose, reduce, expand, slice: the leading axis, kept").optional().range(1, 1 << 24);
  sh.param("outer_stride", Type::Int, "slice: elements of x from one outer block's first run to the next's")
      .optional()
      .range(0, 1ull << 40);
  sh.param("row_stride", Type::Int, "slice: elements of x from one run of a block to the next (a step along the axis)")
      .optional()
      .range(0, 1ull << 40);
  sh.param("start", Type::Int, "slice: x's element that is y's first (default 0)").optional().range(0, 1ull << 40);
  sh.param("inner", Type::Int,
           "transpose: elements moved together (the last axis, kept; whole 32-byte blocks); reduce: the last axis, "
           "kept (default 1: each row reduced to one element); expand: the last axis, kept (1, or whole 32-byte "
           "blocks; default 1: a run of rows copies of each x element); slice: elements a run (whole 32-byte blocks)")
      .optional()
      .range(1, 1 << 30);
  sh.param("reduce", Type::Enum,
           "reduce: the sum, the mean (the sum times 1 / rows; f16 sums are taken in f32), the maximum or the "
           "minimum (a NaN gives way to a number)")
      .choices({std::begin(kernels::kReduceOps), std::end(kernels::kReduceOps)})
      .optional();
  sh.param("epsilon", Type::Float, "layernorm: added to each row's variance").defaults("1e-5").range(0, 1);
  sh.param("mask_rows", Type::Int,
           "softmax: a mask (the argument after x) of mask_rows x cols, row r of x reading its row r % mask_rows (an "
           "attention's causal or padding mask, fused); where it is 0 the row holds mask_fill, not x times scale")
      .optional()
      .range(1, 1 << 24);
  sh.param("mask_fill", Type::Float, "softmax: the value where the mask is 0 (rounded to dtype)").optional();
  sh.param("cols", Type::Int, "softmax, layernorm: elements per row; transpose: x's third axis, y's second")
      .optional()
      .range(1, 1 << 20);
}

// The aipp kernel's keys of shape (h and w are the common ones; c0 is conv2d's too).
void KernelLauncher::describe_aipp_shape(cfg::Spec& sh) {
  sh.param("format", Type::Enum, "aipp: the picture's format (as DVPP writes it)")
      .choices({"nv12", "nv21", "yuv400", "rgb888"})
      .optional();
  sh.param("pitch", Type::Int, "aipp: pixels from a row of the picture to the next (default: w)")
      .optional()
      .range(1, 65535);
  sh.param("plane_rows", Type::Int, "aipp: rows of the Y plane, after which the chroma plane starts (default: h)")
      .optional()
      .range(1, 65535);
  sh.param("csc", Type::Enum,
           "aipp: YUV to RGB with this standard's matrix (Q8, as CANN's AIPP takes it), or none: the channels as "
           "they are")
      .choices({"none", "bt601_full", "bt601_limited", "bt709_limited"})
      .defaults("none");
  sh.param("mean", Type::StringList, "aipp: per channel, a whole number subtracted first (default 0)").optional();
  sh.param("min", Type::StringList, "aipp: per channel, subtracted next, as an f16 (default 0)").optional();
  sh.param("var_reci", Type::StringList,
           "aipp: per channel, the multiplier, as an f16 (default 1): y = (v - mean - min) x var_reci")
      .optional();
}

void KernelLauncher::describe_tensors(cfg::Spec& t) {
  t.param("name", Type::String, "tensor name, used in args, aliases, checks and saved files; one tensor each");
  t.param("dtype", Type::Enum, "element type").choices({"f16", "bf16", "f32", "s8", "u8", "s16", "u16", "s32", "u32"});
  t.param("elements", Type::Int, "number of elements (default: the product of shape, or the file's)")
      .optional()
      .range(1, 1ull << 34);
  t.param("shape", Type::IntList, "dimensions, C order (a .npy file's shape must equal it)").optional();
  t.param("layout", Type::Enum,
          "how the tensor is stored: nd (as its shape says, C order) or nc1hwc0 (the AI Core's feature-map layout: "
          "a shape of N x C x H x W or C x H x W stored as N x C1 x H x W x 16, the channels past C zero; conv2d "
          "weights as cout x C x kh x kw), or nc1hwc0_c04 (C0 = 4: conv2d's small-channel mode, c0: 4), or "
          "fractal_z / fractal_z_c04 (the cube's fractal order, CANN's FRACTAL_Z: conv2d weights [cout, C, kh, kw] "
          "in those layouts' rows, or a gemm's B^T [n, k], cut into fractal rows of 32 bytes of every row in turn; "
          "weights_layout / b_layout fractal_z). Files, init and save are in the shape's order; the conversion is done "
          "on the host, at load and at save")
      .choices({"nd", "nc1hwc0", "nc1hwc0_c04", "fractal_z", "fractal_z_c04"})
      .defaults("nd");
  t.param("groups", Type::Int,
          "layout nc1hwc0, a grouped conv2d's weights (logical cout x c / groups x kh x kw, as ONNX gives them): "
          "stored as the kernel reads them, cout rows of an extended group's channels x kh x kw, block-diagonal")
      .defaults("1")
      .range(1, 65535);
  t.param("init", Type::Enum, "initial contents, when there is no file")
      .choices({"zeros", "random", "arange"})
      .defaults("zeros");
  t.param("file", Type::String,
          "initial contents from a file (relative to the scenario): NumPy .npy (the tensor's type: f16 <f2, f32 <f4, "
          "bf16 <u2 bit patterns, s8 |i1, u8 |u1, s16 <i2, u16 <u2, s32 <i4, u32 <u4) or raw little-endian elements")
      .optional();
  t.param("format", Type::Enum, "the file's format (default: npy for a .npy name, else raw)")
      .choices({"npy", "raw"})
      .optional();
  t.param("convert", Type::Bool,
          "a .npy file of another numeric type (f64, i64, bool, ...) is converted, each value rounded to nearest "
          "even once")
      .defaults("false");
  t.param("save", Type::String,
          "after the run, write the tensor to this file (relative to the output directory; .npy, else raw)")
      .optional();
  t.param("save_shape", Type::IntList,
          "the shape its saved files give (save, --save-tensors), if not shape: the same elements in the same order, "
          "e.g. a 1-D feature map stored as N x C x 1 x L (layout nc1hwc0) saved as the N x C x L its model gives; [] "
          "a scalar's (one element)")
      .optional();
  t.param("arena", Type::Int,
          "bytes: the tensor lives at this offset (a multiple of 4096) in the activation arena, one region of DRAM "
          "that tensors whose lives do not overlap share (a network compiler's memory plan; the plan is the "
          "scenario's to keep apart). Never initialised (init: zeros included) unless from a file; not with alias, "
          "dvpp or another init")
      .optional()
      .range(0, 1ull << 40);
  t.param("dvpp", Type::String,
          "JOB: this tensor is the output buffer of that dvpp: job (same memory, not initialised; default elements: "
          "the buffer's bytes over the element size): how a decoded, resized picture reaches a kernel (aipp)")
      .optional();
  t.param("alias", Type::String,
          "KERNEL.TENSOR: this tensor is an earlier kernel's tensor, or one listed before it in this kernel (same "
          "memory, not initialised): how one kernel's output feeds the next, and how kernels write their slices of "
          "one output (a concat's)")
      .optional();
  t.param("offset", Type::Int,
          "bytes: with alias, this tensor starts this far into the aliased one's memory (a slice of it: one head of "
          "a batched matmul, one input of a concat)")
      .optional()
      .range(0, 1ull << 40);
  t.param("seed", Type::Int, "seed of init: random").defaults("1").range(0, 9.0e18);
  t.param("min", Type::Float, "lowest value of init: random").defaults("-1");
  t.param("max", Type::Float, "highest value of init: random").defaults("1");
}

void KernelLauncher::describe_check(cfg::Spec& c) {
  c.optional();
  c.param("op", Type::Enum, "the reference, computed from the inputs: " + reference_checks().doc())
      .choices(reference_checks().names())
      .optional();
  c.param("expected", Type::String,
          "the reference as a file of the output's values (relative to the scenario; .npy of any numeric type, "
          "else raw elements of the output's type), instead of op")
      .optional();
  c.param("cols", Type::Int, "softmax, layernorm, topk, argmax, gather, expand: elements per row")
      .optional()
      .range(1, 1ull << 32);
  c.param("rows", Type::Int, "expand: how many rows of the output each row of the input fills")
      .optional()
      .range(1, 1ull << 32);
  c.param("epsilon", Type::Float, "layernorm: added to each row's variance").defaults("1e-5").range(0, 1);
  c.param(
       "alpha", Type::Float,
       "leaky_relu: the slope below 0; hard_sigmoid: alpha x + beta; clip: the lower bound; adds, muls: the constant; "
       "where_else, where_then, where_both: the value selected (where_both: where in0 is not 0)")
      .optional();
  c.param("beta", Type::Float, "hard_sigmoid: see alpha; clip: the upper bound; where_both: where in0 is 0").optional();
  c.param("m", Type::Int, "gemm: rows of in0 and out").optional().range(1, 1 << 20);
  c.param("k", Type::Int, "gemm: columns of in0, rows of in1; topk: how many").optional().range(1, 1 << 20);
  c.param("n", Type::Int, "gemm: columns of in1 and out").optional().range(1, 1 << 20);
  c.param("b_transposed", Type::Bool, "gemm: in1 is stored n x k").defaults("false");
  c.param("b_layout", Type::Enum, "gemm: in1 (n x k) is stored nd or fractal_z (as the gemm's b_layout)")
      .defaults("nd")
      .choices({"nd", "fractal_z"});
  c.param("relu", Type::Bool, "gemm: the reference goes through ReLU").defaults("false");
  c.param("epilogue", Type::Enum,
          "gemm: f16: the sum and the bias each rounded to f16 and their sum rounded again, as the kernel's f16 "
          "epilogue adds them (a conv2d check takes it from the kernel's shape)")
      .defaults("f32")
      .choices({"f32", "f16"});
  c.param("scale", Type::Float,
          "gemm: the reference is multiplied by it (requantization); softmax: each row is, first (as an f32)")
      .defaults("1");
  c.param("inputs", Type::StringList, "op: input tensor names (one or two)").optional();
  c.param("output", Type::String, "output tensor name");
  c.param("atol", Type::Float, "absolute tolerance").defaults("0").min(0);
  c.param("rtol", Type::Float, "relative tolerance").defaults("0").min(0);
}

struct KernelLauncher::TensorSpec {
  Tensor t;
  std::vector<std::uint64_t> shape;  // as given (or the file's); empty: one dimension
  std::string init;
  std::uint64_t seed;
  double lo, hi;
  int alias_kernel = -1, alias_tensor = -1;  // another kernel's tensor (same memory)
  std::uint64_t alias_offset = 0;            // bytes into it
  bool media = false;                        // a media job's output buffer (at t.addr)
  std::string media_job;
  MediaBuffer media_out;
  bool borrowed() const { return alias_kernel >= 0 || media; }  // memory this tensor does not own
  std::optional<std::uint64_t> arena;                           // its offset in the activation arena
  std::string file;                                             // initial contents from this file (a path)
  std::optional<NpyHeader> npy;                                 // its header, if it is a .npy file
  bool convert = false;
  std::string save;  // write it here after the run (as given, relative to the output directory)
  std::optional<std::vector<std::uint64_t>> save_shape;  // the saved files' shape (none: shape; empty: a scalar)
  std::optional<Nc1hwc0> nc1hwc0;                        // stored NC1HWC0, its shape the logical one
  // Bytes of the logical tensor -> its stored form in `to` (as is, or NC1HWC0).
  void store(const std::uint8_t* logical, std::uint8_t* to) const;
};
struct KernelLauncher::Kernel {
  std::string name;
  std::string tiling;
  aicore::Image image;
  unsigned cores = 1, blocks = 1;

  std::vector<TensorSpec> tensors;
  const LibraryKernel* lib = nullptr;  // a library kernel: which one, and its shape
  KernelShape shape;
  KernelWork work;                                  // a library kernel's least work, for its roofline
  std::vector<std::pair<int, std::uint64_t>> args;  // (tensor index or -1, value)
  bool check = false;
  Reference ref;  // the check's reference (conv2d and pool take the kernel's shape)
  std::vector<int> inputs;
  int output = -1;
  double atol = 0, rtol = 0;
  std::vector<std::uint8_t> expected;                        // check: expected: the file's values in the output's type
  std::uint64_t image_addr = 0, code_bytes = 0, argtab = 0;  // DRAM offsets once placed
  std::uint32_t aicpu_func = 0;                              // an AI CPU kernel (enum dvp_aicpu_func): no image
  // Host work beside the run (HostJobs): its tensors' stored bytes set up ahead (bare mode;
  // per tensor, empty: set up at its start), and its check's reference computed while it runs,
  // from the input bytes it had then.
  std::shared_ptr<HostJobs::Job> setup_job, ref_job;
  std::vector<std::vector<std::uint8_t>> initial;  // none for a tensor of zeros: place() clears it
  std::vector<std::vector<std::uint8_t>> early_inputs;
  std::vector<double> early_want;
  std::uint64_t early_bytes = 0;  // host bytes the two above hold
};

KernelLauncher::KernelLauncher(sc_core::sc_module_name n, const cfg::Node& kernels, const std::string& dir,
                               std::vector<aicore::AiCore*> cores, const aicore::AiCoreConfig& core_cfg,
                               dram::Storage& dram, std::uint64_t dram_base, bool functional, const cfg::Node* tasks,
                               MediaJobs media)
    : sc_module(n),
      socket("socket"),
      cores_(std::move(cores)),
      dram_(dram),
      base_(dram_base),
      next_(tasks ? 2 * DVP_JOB_TABLE_OFFSET : 0),  // with firmware: its 16 MiB, then the job table's
      functional_(functional),
      firmware_mode_(tasks != nullptr),
      media_(std::move(media)),
      stats_(*this) {
  for (const cfg::Node& k : kernels.items()) {
    kernels_.push_back(std::make_unique<Kernel>());
    Kernel* K = kernels_.back().get();
    K->name = k.get_string("name");
    // A kernel's name is how tasks, aliases, results and saved files name it: one kernel each.
    for (std::size_t i = 0; i + 1 < kernels_.size(); ++i)
      if (kernels_[i]->name == K->name) k.at("name").fail("a kernel named '" + K->name + "' is already in kernels:");
    read_code(K, k, dir, tasks != nullptr);
    K->cores = k.has("cores") ? unsigned(k.get_uint("cores")) : unsigned(cores_.size());
    if (K->cores > cores_.size())
      k.at("cores").fail("asks for " + std::to_string(K->cores) + " cores; the SoC has " +
                         std::to_string(cores_.size()));
    K->blocks = k.has("blocks") ? unsigned(k.get_uint("blocks")) : K->cores;
    read_tensors(K, k, dir);
    for (const cfg::Node& a : k.at("args").items()) {
      const std::string& s = a.as_string();
      if (!s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-'))
        K->args.push_back({-1, std::uint64_t(a.as_int())});
      else
        K->args.push_back({tensor_index(K, s, a), 0});
    }
    if (K->aicpu_func) check_aicpu_args(K, k);
    if (K->lib) {
      // Sizes first: a shape its tensors cannot hold is an error before any tiling or building.
      check_library_args(K, k);
      build_library(K, k.at("shape"), core_cfg, tasks != nullptr, k.has("blocks"));
      check_media_layout(K, k);
    }
    if (const cfg::Node* c = k.find("check")) read_check(K, *c, dir);
    layout(K, k);
  }
  place_arena(kernels);
  std::vector<std::uint8_t>().swap(load_buffer_);  // every file is in DRAM now
  stats_.json("kernels", "per kernel: blocks, cores, start and end (ns), result of the check, roofline",
              [this] { return results_json(); });
  if (tasks) {
    write_job_table(*tasks);
    SC_HAS_PROCESS(KernelLauncher);
    SC_THREAD(run);
    return;
  }
  // A fault stops the run with a report naming the kernel, the block and the core.
  for (aicore::AiCore* c : cores_)
    c->set_fault_handler([this, c](const aicore::Fault& f) {
      if (!fault_.empty()) return;
      fault_ = "kernel " + current_ + ", block " + std::to_string(c->launched().block_id) + ": " + f.str();
      sc_core::sc_stop();
    });
  SC_HAS_PROCESS(KernelLauncher);
  SC_THREAD(run);
}

int KernelLauncher::tensor_index(const Kernel* K, const std::string& name, const cfg::Node& where) {
  for (std::size_t i = 0; i < K->tensors.size(); ++i)
    if (K->tensors[i].t.name == name) return int(i);
  where.fail("no tensor named '" + name + "'");
}

// The kernel's code: an AI CPU function, an assembly source, a dvas image, or a library kernel
// (whose shape is read here and built once its tensors are known to fit it).
void KernelLauncher::read_code(Kernel* K, const cfg::Node& k, const std::string& dir, bool with_tasks) {
  auto path = [&](const char* key) {
    fs::path p = k.get_string(key);
    return (p.is_relative() ? fs::path(dir) / p : p).string();
  };
  if (int(k.has("source")) + int(k.has("image")) + int(k.has("library")) + int(k.has("aicpu")) != 1)
    k.fail(
        "give exactly one of source (assembly), image (dvas output), library (a library kernel) or aicpu (an "
        "AI CPU kernel)");
  if (k.has("aicpu")) {
    if (!with_tasks)
      k.at("aicpu").fail(
          "an AI CPU kernel runs on the AI CPU: the scenario needs firmware: {image: runtime} and tasks:");
    K->aicpu_func = kAicpuKernels.parse(k.at("aicpu"));
    K->tiling = "AI CPU";
  } else if (k.has("library")) {
    if (!k.has("shape")) k.fail("a library kernel needs its shape:");
    K->lib = library_kernels().parse(k.at("library"));
    const cfg::Node& sh = k.at("shape");
    for (const char* key : K->lib->required)
      if (!sh.has(key)) sh.fail(std::string(K->lib->name) + " needs shape." + key);
    K->shape = K->lib->read(sh);
  } else if (k.has("source")) {
    std::ifstream f(path("source"));
    if (!f) k.at("source").fail("cannot open " + path("source"));
    std::stringstream ss;
    ss << f.rdbuf();
    K->image = aicore::assemble(ss.str(), path("source"));
  } else {
    try {
      K->image = aicore::Image::load(path("image"));
    } catch (const Error& e) {
      k.at("image").fail(e.what());
    }
  }
}

// A tensor given a layout is stored as the kernel reads it (C0, a grouped conv's weights): the
// same number of elements in another arrangement would be silently wrong values.
void KernelLauncher::check_arg_layout(const TensorSpec& s, const LibraryArg& w, const std::string& role,
                                      const cfg::Node& a) {
  if (!s.nc1hwc0) return;  // its bytes as they are
  const Nc1hwc0& l = *s.nc1hwc0;
  if (bool(l.k0) != w.fractal)
    a.fail(role + ": tensor '" + s.t.name + "' is stored " + (l.k0 ? "in fractal_z" : "row by row") + ", the kernel " +
           (w.fractal ? "reads it in fractal_z (give the tensor layout fractal_z)"
            : w.c0    ? "reads it row by row (give the shape weights_layout: fractal_z)"
                      : "reads it as it is (only a conv2d's weights and a gemm's B^T take fractal_z)"));
  if (!w.c0) return;
  if (l.c0 != w.c0)
    a.fail(role + ": tensor '" + s.t.name + "' is stored with C0 = " + std::to_string(l.c0) + ", the shape's c0 is " +
           std::to_string(w.c0) + " (layout " + (l.k0 ? "fractal_z" : "nc1hwc0") + (w.c0 == 4 ? "_c04" : "") + ")");
  if (l.groups != w.groups)
    a.fail(role + ": tensor '" + s.t.name + "' is laid out for groups " + std::to_string(l.groups) +
           ", the shape has groups " + std::to_string(w.groups) +
           " (give the tensor groups: " + std::to_string(w.groups) + ")");
}

// An AI CPU kernel reads and writes what its numbers say (dvp_abi.h): each tensor argument must
// hold those bytes, or the firmware would run past it in DRAM into the next tensor.
void KernelLauncher::check_aicpu_args(const Kernel* K, const cfg::Node& k) {
  const cfg::Node& args = k.at("args");
  const std::string fn = k.get_string("aicpu");
  const auto& a = K->args;
  const auto arg = [&](std::size_t i) -> const cfg::Node& {
    if (i >= a.size())
      args.fail(fn + " needs more arguments than " + std::to_string(a.size()) + " (docs/scenarios.md)");
    return args.items()[i];
  };
  const auto number = [&](std::size_t i) {
    const cfg::Node& at = arg(i);
    if (a[i].first >= 0) at.fail(fn + "'s argument " + std::to_string(i + 1) + " is a number, not a tensor");
    return a[i].second;
  };
  const auto times = [](std::uint64_t x, std::uint64_t y) {  // saturating: no size wraps to a small one
    return y && x > ~std::uint64_t(0) / y ? ~std::uint64_t(0) : x * y;
  };
  // Tensor argument i must hold `bytes` (`optional`: or be 0, no tensor).
  const auto holds = [&](std::size_t i, std::uint64_t bytes, bool optional = false) {
    const cfg::Node& at = arg(i);
    if (a[i].first < 0) {
      if (!optional || a[i].second != 0)
        at.fail(fn + "'s argument " + std::to_string(i + 1) + " is a tensor, not a number");
      return;
    }
    const Tensor& t = K->tensors[std::size_t(a[i].first)].t;
    const std::uint64_t have = t.elems * aicore::dtype_bytes(t.dtype);
    if (have < bytes)
      at.fail(fn + ": tensor '" + t.name + "' holds " + std::to_string(have) + " bytes, the arguments make it " +
              std::to_string(bytes));
  };
  if (fn == "topk" || fn == "argmax") {
    const std::uint64_t rows = number(1), cols = number(2), picks = fn == "topk" ? number(3) : 1;
    holds(0, times(times(rows, cols), 4));
    holds(4, times(times(rows, picks), 4), true);
    holds(5, times(times(rows, picks), 4));
  } else if (fn == "concat") {
    const std::uint64_t outer = number(1), n = number(2);
    if (n < 1 || n > 64 || a.size() != 3 + 2 * n)
      args.fail("concat takes y, outer, n, then n pairs x_j, bytes_j, 1 <= n <= 64 (n = " + std::to_string(n) + ", " +
                std::to_string(a.size()) + " arguments)");
    std::uint64_t row = 0;
    for (std::uint64_t j = 0; j < n; ++j) {
      holds(3 + 2 * j, times(outer, number(4 + 2 * j)));
      const std::uint64_t bytes = number(4 + 2 * j);
      row = bytes > ~std::uint64_t(0) - row ? ~std::uint64_t(0) : row + bytes;  // saturating, as times()
    }
    holds(0, times(outer, row));
  } else if (fn == "gather") {
    if (a.size() != 7) args.fail("gather takes 7 arguments: y, outer, n, row_bytes, x, x_rows, indices");
    const std::uint64_t outer = number(1), n = number(2), row = number(3), rows = number(5);
    holds(0, times(times(outer, n), row));
    holds(4, times(times(outer, rows), row));
    holds(6, times(n, 4));
  } else if (fn == "expand") {
    if (a.size() != 5) args.fail("expand takes 5 arguments: y, x, outer, mid, run_bytes");
    const std::uint64_t outer = number(2), mid = number(3), run = number(4);
    if (run == 0) arg(4).fail("expand's run_bytes is 0: a row of x is at least one byte");
    holds(0, times(times(outer, mid), run));
    holds(1, times(outer, run));
  } else if (fn == "slice") {
    check_aicpu_slice(K, k);
  }
}

// The AI CPU's slice: y holds outer x rows runs, and every run read lies inside x (a row_stride
// read as signed: negative, the rows go backward from start).
void KernelLauncher::check_aicpu_slice(const Kernel* K, const cfg::Node& k) {
  const cfg::Node& args = k.at("args");
  const auto& a = K->args;
  if (a.size() != 8)
    args.fail("slice takes 8 arguments: y, x, outer, outer_stride, rows, row_stride, run_bytes, start");
  for (std::size_t i = 0; i < 8; ++i)
    if ((a[i].first >= 0) != (i < 2))
      args.items()[i].fail("slice's argument " + std::to_string(i + 1) + " must be " +
                           (i < 2 ? "a tensor (y, x)" : "a number"));
  using Wide = __int128;
  const Wide outer = a[2].second, ostride = a[3].second, rows = a[4].second, run = a[6].second, start = a[7].second;
  const Wide rstride = std::int64_t(a[5].second);
  if (run == 0) args.items()[6].fail("slice's run_bytes is 0: a run is at least one byte");
  constexpr Wide kMost = Wide(1) << 50;  // past any DRAM; below it, no product here overflows
  for (std::size_t i = 2; i < 8; ++i) {
    if (i != 5 && std::int64_t(a[i].second) < 0)
      args.items()[i].fail("slice's argument " + std::to_string(i + 1) + " is negative (only row_stride may be)");
    if ((i == 5 ? (rstride < 0 ? -rstride : rstride) : Wide(a[i].second)) > kMost)
      args.items()[i].fail("slice's argument " + std::to_string(i + 1) + " is over 2^50");
  }
  const auto bytes_of = [&](std::size_t i) {
    const Tensor& t = K->tensors[std::size_t(a[i].first)].t;
    return std::pair<Wide, std::string>{Wide(t.elems) * aicore::dtype_bytes(t.dtype), t.name};
  };
  const auto [y_bytes, y_name] = bytes_of(0);
  const auto [x_bytes, x_name] = bytes_of(1);
  if (std::min(outer * rows, kMost) * run > y_bytes)
    args.items()[0].fail("slice: tensor '" + y_name + "' holds " + std::to_string(std::uint64_t(y_bytes)) +
                         " bytes, the arguments write outer x rows x run_bytes");
  const Wide last = rows > 0 ? (rows - 1) * rstride : 0, first = start + (last < 0 ? last : 0);
  const Wide end = start + (outer > 0 ? (outer - 1) * ostride : 0) + (last > 0 ? last : 0) + run;
  if (outer > 0 && rows > 0 && (first < 0 || end > x_bytes))
    args.items()[1].fail("slice: tensor '" + x_name + "' holds " + std::to_string(std::uint64_t(x_bytes)) +
                         " bytes, the arguments read from byte " + std::to_string(std::int64_t(first)) + " to " +
                         std::to_string(std::int64_t(end)));
}

// A library kernel reads and writes its shape's elements (and, where an output ends inside a
// 32-byte block, up to the end of that block, in the tensor's own pages): each argument must be
// a tensor of the kernel's type holding them, or the kernel would run past it in DRAM.
void KernelLauncher::check_library_args(const Kernel* K, const cfg::Node& k) {
  const cfg::Node& args = k.at("args");
  const std::vector<LibraryArg> want = K->lib->args(K->shape);
  const std::string lib = K->lib->name;
  const auto* g = std::get_if<kernels::GemmShape>(&K->shape);
  if (args.items().size() != want.size())
    args.fail("library " + lib + (g && g->bias ? " with a bias" : "") + " takes " + std::to_string(want.size()) +
              " arguments, got " + std::to_string(args.items().size()));
  for (std::size_t i = 0; i < want.size(); ++i) {
    const LibraryArg& w = want[i];
    const cfg::Node& a = args.items()[i];
    const std::string role = lib + "'s " + w.role + " (argument " + std::to_string(i + 1) + ")";
    if (K->args[i].first < 0) a.fail(role + " is a tensor; got the number " + a.as_string());
    const Tensor& t = K->tensors[std::size_t(K->args[i].first)].t;
    if (t.dtype != w.dtype)
      a.fail(role + ": tensor '" + t.name + "' is " + aicore::dtype_name(t.dtype) + ", the kernel takes " +
             aicore::dtype_name(w.dtype));
    if (t.elems < w.elems)
      a.fail(role + ": tensor '" + t.name + "' has " + std::to_string(t.elems) + " elements, the shape needs " +
             std::to_string(w.elems));
    check_arg_layout(K->tensors[std::size_t(K->args[i].first)], w, role, a);
  }
}

void KernelLauncher::build_library(Kernel* K, const cfg::Node& sh, const aicore::AiCoreConfig& core_cfg, bool by_tasks,
                                   bool blocks_given) {
  // The kernel's tiling is chosen for the cores its blocks run on at once: in bare mode those
  // it is given; the task scheduler puts blocks on any free core, so its roofline takes them all.
  // Unless the scenario sets blocks, the kernel takes no more blocks than it has work units:
  // a block with nothing to do still costs its dispatch and start.
  aicore::AiCoreConfig cfg = core_cfg, peak = core_cfg;
  try {
    cfg.cores = std::min(std::min(cfg.cores, K->cores), K->blocks);
    BuiltKernel b = K->lib->build(cfg, K->shape);
    // Fewer cores may give a finer tiling with more units: settle (in a step or two).
    const unsigned most = K->blocks;
    for (int i = 0; i < 4 && !blocks_given && b.units != K->blocks; ++i) {
      const unsigned want = unsigned(std::min<std::uint64_t>(most, b.units));
      if (want == K->blocks) break;
      K->blocks = want;
      cfg.cores = std::min(std::min(core_cfg.cores, K->cores), K->blocks);
      b = K->lib->build(cfg, K->shape);  // its tiling for the cores it now has
    }
    peak.cores = by_tasks ? std::min(peak.cores, K->blocks) : cfg.cores;
    K->image = std::move(b.image);
    K->tiling = std::move(b.tiling);
    K->work = library_work(*K->lib, peak, K->shape);
  } catch (const Error& e) {
    sh.fail(e.what());
  }
}

void KernelLauncher::read_tensors(Kernel* K, const cfg::Node& k, const std::string& dir) {
  const cfg::Node* ts = k.find("tensors");
  if (!ts) return;
  for (const cfg::Node& t : ts->items()) {
    TensorSpec s;
    s.t.name = t.get_string("name");
    // A tensor's name is how args, aliases, checks and saved files name it: one tensor each.
    for (const TensorSpec& other : K->tensors)
      if (other.t.name == s.t.name)
        t.at("name").fail("kernel " + K->name + " already has a tensor named '" + s.t.name + "'");
    s.t.dtype = *aicore::dtype_from(t.get_string("dtype"));
    s.init = t.get_string("init");
    s.seed = t.get_uint("seed");
    s.lo = t.get_double("min");
    s.hi = t.get_double("max");
    s.convert = t.get_bool("convert");
    if (t.has("save")) s.save = t.get_string("save");
    if (t.has("shape")) s.shape = t.get_uint_list("shape");
    if (t.get_string("layout") != "nd")
      read_layout(s, t);
    else if (t.get_uint("groups") != 1)
      t.at("groups").fail("groups describes a grouped conv's weights in layout nc1hwc0 or fractal_z");
    if (t.has("file")) read_tensor_file(s, t, dir);
    if (t.has("offset") && !t.has("alias")) t.at("offset").fail("offset is a place in an aliased tensor: give alias");
    if (t.has("alias")) read_alias(s, t);
    if (t.has("dvpp")) read_media(s, t);
    s.t.elems = tensor_elements(s, t);
    if (t.has("save_shape")) {
      s.save_shape = t.get_uint_list("save_shape");
      std::uint64_t n = 1;  // [] is a scalar's shape: one element; 0 for a 0 or over 2^34
      for (std::uint64_t d : *s.save_shape) n = d && n <= (1ull << 34) / d ? n * d : 0;
      const std::uint64_t want = s.nc1hwc0 ? s.nc1hwc0->logical() : s.t.elems;
      if (n != want)
        t.at("save_shape")
            .fail("a shape of " + (n ? std::to_string(n) : std::string("0 or over 2^34")) +
                  " elements; the tensor holds " + std::to_string(want) + " (the same elements, reshaped)");
    }
    if (t.has("arena")) read_arena(s, t);
    if (s.alias_kernel >= 0 && alias_bytes(s) < s.t.elems * aicore::dtype_bytes(s.t.dtype))
      t.at("alias").fail("'" + t.get_string("alias") + "' is smaller than this tensor" +
                         (s.alias_offset ? " at offset " + std::to_string(s.alias_offset) : std::string()));
    K->tensors.push_back(s);
  }
}

// arena: OFFSET: placed once every kernel is read (place_arena), never initialised but from a file.
void KernelLauncher::read_arena(TensorSpec& s, const cfg::Node& t) {
  const cfg::Node& a = t.at("arena");
  if (t.get_uint("arena") % 4096) a.fail("an arena offset is a multiple of 4096");
  for (const char* other : {"alias", "dvpp"})
    if (t.has(other)) a.fail(std::string("a tensor in the arena owns its memory there: drop ") + other);
  if (s.init != "zeros") t.at("init").fail("a tensor in the arena holds what the kernels before it left: drop init");
  s.arena = t.get_uint("arena");
  const std::uint64_t bytes = s.t.elems * aicore::dtype_bytes(s.t.dtype);
  arena_bytes_ = std::max<std::uint64_t>(arena_bytes_, *s.arena + ((bytes + 4095) & ~std::uint64_t(4095)));
}

// A tensor's element count: from elements, shape and its file, which must agree.
std::uint64_t KernelLauncher::tensor_elements(TensorSpec& s, const cfg::Node& t) const {
  std::uint64_t n = 0;
  if (t.has("shape")) {
    n = 1;
    for (std::uint64_t d : s.shape) {
      if (d == 0 || n > (1ull << 34) / d) t.at("shape").fail("a shape of 1 to 2^34 elements, each dimension >= 1");
      n *= d;
    }
    if (s.shape.empty()) t.at("shape").fail("an empty shape: give at least one dimension");
  }
  if (t.has("elements")) {
    const std::uint64_t e = t.get_uint("elements");
    if (n && e != n) t.at("elements").fail(std::to_string(e) + " elements, but the shape holds " + std::to_string(n));
    n = e;
  }
  if (!s.file.empty()) {
    const unsigned eb = aicore::dtype_bytes(s.t.dtype);
    std::uint64_t f = 0;
    if (s.npy) {
      f = s.npy->elements();
    } else {
      std::error_code ec;
      const std::uint64_t size = fs::file_size(s.file, ec);
      if (ec) t.at("file").fail(s.file + ": " + ec.message());
      if (size == 0 || size % eb || (n && size != n * eb))
        t.at("file").fail(s.file + ": a raw file of " + std::to_string(size) + " bytes; the tensor's elements are " +
                          std::to_string(eb) + " bytes each" +
                          (n ? " and it has " + std::to_string(n) + " (" + std::to_string(n * eb) + " bytes)" : ""));
      f = size / eb;
    }
    if (s.npy && t.has("shape") && s.npy->shape != s.shape)
      t.at("file").fail(s.file + " has shape " + shape_text(s.npy->shape) + ", the tensor's is " + shape_text(s.shape));
    if (n && s.npy && f != n)
      t.at("file").fail(s.file + " holds " + std::to_string(f) + " elements, the tensor " + std::to_string(n));
    if (!n) n = f;
    if (s.npy && s.shape.empty()) s.shape = s.npy->shape;
  }
  if (s.nc1hwc0) {  // the shape's elements (checked above), stored with pad channels
    if (s.nc1hwc0->stored() > (1ull << 34))
      t.at("shape").fail("stored as its layout says, " + std::to_string(s.nc1hwc0->stored()) +
                         " elements (at most 2^34)");
    return s.nc1hwc0->stored();
  }
  if (!n && s.alias_kernel >= 0)  // as many as the memory it shares holds
    n = alias_bytes(s) / aicore::dtype_bytes(s.t.dtype);
  if (!n && s.media) n = s.media_out.bytes / aicore::dtype_bytes(s.t.dtype);
  if (s.media && n * aicore::dtype_bytes(s.t.dtype) > s.media_out.bytes)
    t.fail("dvpp job '" + s.media_job + "' writes " + std::to_string(s.media_out.bytes) + " B, less than the " +
           std::to_string(n * aicore::dtype_bytes(s.t.dtype)) + " B of this tensor");
  if (!n) t.fail("give the tensor's elements, shape or file (with at least one element)");
  if (n > (1ull << 34)) t.fail("a tensor of " + std::to_string(n) + " elements (at most 2^34)");
  return n;
}

// layout: nc1hwc0, nc1hwc0_c04, fractal_z or fractal_z_c04: the shape is the logical one.
void KernelLauncher::read_layout(TensorSpec& s, const cfg::Node& t) {
  const std::string layout = t.get_string("layout");
  if (!t.has("shape"))
    t.at("layout").fail("layout " + layout + " needs the tensor's logical shape: shape: [N, C, H, W]");
  if (t.has("elements"))
    t.at("elements").fail("with layout " + layout + " the shape gives the elements; drop elements");
  if (t.has("alias"))
    t.at("layout").fail("an alias takes its memory as it is; give the layout on the tensor it aliases");
  const std::uint64_t groups = t.get_uint("groups");
  if (groups != 1 && layout != "nc1hwc0" && layout != "fractal_z")
    t.at("groups").fail("a grouped conv's weights are in layout nc1hwc0 or fractal_z");
  try {
    s.nc1hwc0 = Nc1hwc0::named(layout, s.shape, aicore::dtype_bytes(s.t.dtype), groups);
  } catch (const Error& e) {
    t.at(std::string(e.what()).rfind("groups", 0) == 0 ? "groups" : "shape").fail(e.what());
  }
}

void KernelLauncher::TensorSpec::store(const std::uint8_t* logical, std::uint8_t* to) const {
  const unsigned eb = aicore::dtype_bytes(t.dtype);
  if (nc1hwc0)
    nc1hwc0->scatter(logical, to, eb);
  else
    std::memcpy(to, logical, t.elems * eb);
}

// The file's header is read and checked now; its data goes into DRAM when the tensor is laid out.
void KernelLauncher::read_tensor_file(TensorSpec& s, const cfg::Node& t, const std::string& dir) {
  const cfg::Node& f = t.at("file");
  if (t.has("alias")) f.fail("a tensor is either an alias of another or initialised from a file, not both");
  if (t.get_string("init") != "zeros") t.at("init").fail("give init or file, not both");
  fs::path p = f.as_string();
  s.file = (p.is_relative() ? fs::path(dir) / p : p).string();
  const bool npy = t.has("format") ? t.get_string("format") == "npy" : is_npy_path(s.file);
  try {
    if (npy) s.npy = read_npy_header(s.file);
  } catch (const Error& e) {
    f.fail(e.what());
  }
  if (!s.npy) return;
  if (!npy_matches(*s.npy, s.t.dtype) && !s.convert)
    f.fail(s.file + " holds " + s.npy->descr + " elements, the tensor is " + aicore::dtype_name(s.t.dtype) + " (" +
           npy_descr(s.t.dtype) + "); save it as that type, or set convert: true to round each value");
}

// An earlier kernel's tensor, or one listed before it in this kernel (a slice of the output a
// kernel holds for others to write the rest of: a Concat's): found now, addressed when the kernels
// are placed.
void KernelLauncher::read_alias(TensorSpec& s, const cfg::Node& t) {
  const std::string a = t.get_string("alias");
  const auto dot = a.find('.');
  for (std::size_t ki = 0; dot != std::string::npos && ki < kernels_.size(); ++ki)
    if (kernels_[ki]->name == a.substr(0, dot))
      for (std::size_t ti = 0; ti < kernels_[ki]->tensors.size(); ++ti)
        if (kernels_[ki]->tensors[ti].t.name == a.substr(dot + 1)) {
          s.alias_kernel = int(ki);
          s.alias_tensor = int(ti);
        }
  if (s.alias_kernel < 0)
    t.at("alias").fail("no tensor '" + a + "' in an earlier kernel or before it in this one (write KERNEL.TENSOR)");
  s.alias_offset = t.has("offset") ? t.get_uint("offset") : 0;
  if (s.alias_offset >= alias_of(s).elems * aicore::dtype_bytes(alias_of(s).dtype))
    t.at("offset").fail("offset " + std::to_string(s.alias_offset) + " is past the end of '" + a + "' (" +
                        std::to_string(alias_of(s).elems * aicore::dtype_bytes(alias_of(s).dtype)) + " B)");
}

// A media job's output buffer (dvpp: NAME): its DRAM offset now; its contents are what the job
// writes (in firmware mode, before the kernel runs only if a task orders it so).
void KernelLauncher::read_media(TensorSpec& s, const cfg::Node& t) {
  for (const char* other : {"alias", "file", "layout"})
    if (t.has(other) && (std::string(other) != "layout" || t.get_string("layout") != "nd"))
      t.at("dvpp").fail(std::string("a tensor is a dvpp job's output as it is written: drop ") + other);
  s.media_job = t.get_string("dvpp");
  if (!media_.output || !media_.output(s.media_job, s.media_out))
    t.at("dvpp").fail("no job named '" + s.media_job + "' in dvpp: that writes a picture");
  s.t.addr = s.media_out.offset;
  s.media = true;
}

// An aipp kernel reading a job's picture takes it as the job lays it out: its format, row stride
// and plane height, and no more than its size.
void KernelLauncher::check_media_layout(const Kernel* K, const cfg::Node& k) const {
  const auto* a = std::get_if<kernels::AippShape>(&K->shape);
  if (!a || K->args.empty() || K->args[0].first < 0) return;
  const TensorSpec& s = K->tensors[std::size_t(K->args[0].first)];
  if (!s.media) return;
  const MediaBuffer& m = s.media_out;
  const cfg::Node& sh = k.at("shape");
  const std::string job = "dvpp job '" + s.media_job + "' writes ";
  if (a->format != m.format) sh.at("format").fail(job + dvpp::format_name(dvpp_format(m.format)));
  if (a->pitch != m.stride_w || a->plane_rows != m.stride_h)
    sh.fail(job + "its picture at a row stride of " + std::to_string(m.stride_w) + " pixels and " +
            std::to_string(m.stride_h) + " rows a plane: give pitch: " + std::to_string(m.stride_w) +
            " and plane_rows: " + std::to_string(m.stride_h));
  if (a->w > m.width || a->h > m.height)
    sh.fail(job + "a " + std::to_string(m.width) + " x " + std::to_string(m.height) + " picture, smaller than w x h");
}

// A kernel that read a media job's buffer started after the job completed (the firmware's tasks
// must order them: a record / wait between), else its check fails, saying so.
bool KernelLauncher::media_in_time(const Kernel* K, Result& r) const {
  for (const TensorSpec& s : K->tensors) {
    if (!s.media || !media_.completed) continue;
    const Tick end = media_.completed(s.media_job);
    if (end != kTickMax && end <= r.start) continue;
    r.checked = true, r.passed = false;
    r.detail = "read dvpp job '" + s.media_job + "'s picture " +
               (end == kTickMax ? std::string("which no task ran")
                                : "at " + std::to_string(r.start / 1e6) + " us, before the job completed (" +
                                      std::to_string(end / 1e6) + " us): order them with an event");
    return false;
  }
  return true;
}

const KernelLauncher::Tensor& KernelLauncher::alias_of(const TensorSpec& s) const {
  return kernels_[std::size_t(s.alias_kernel)]->tensors[std::size_t(s.alias_tensor)].t;
}
std::uint64_t KernelLauncher::alias_bytes(const TensorSpec& s) const {
  return alias_of(s).elems * aicore::dtype_bytes(alias_of(s).dtype) - s.alias_offset;
}

void KernelLauncher::read_check(Kernel* K, const cfg::Node& c, const std::string& dir) {
  K->check = true;
  if (int(c.has("op")) + int(c.has("expected")) != 1)
    c.fail("give op (a reference computed from the inputs) or expected (a file of the output's values), not both");
  K->output = tensor_index(K, c.get_string("output"), c.at("output"));
  K->atol = c.get_double("atol");
  K->rtol = c.get_double("rtol");
  if (c.has("expected")) return read_expected(K, c.at("expected"), dir);
  Reference& R = K->ref;
  R.op = reference_checks().parse(c.at("op"));
  const std::string op = R.op->name;
  if (!c.has("inputs")) c.fail(op + " computes its reference from inputs: give inputs: [...]");
  for (const cfg::Node& i : c.at("inputs").items()) K->inputs.push_back(tensor_index(K, i.as_string(), i));
  const std::size_t n = K->inputs.size();
  if (n < R.op->min_inputs || n > R.op->max_inputs)
    c.at("inputs").fail(op + " takes " +
                        (R.op->max_inputs == 1                  ? std::string("one input")
                         : R.op->min_inputs == R.op->max_inputs ? std::to_string(R.op->max_inputs) + " inputs"
                         : op == "conv2d" ? "x, the weights, then the bias, scale and residual its shape has"
                         : op == "concat" ? "1 to 64 inputs"
                                          : "two inputs (three with a bias)"));
  for (const char* key : R.op->needs)
    if (!c.has(key)) c.fail(op + " needs " + key);
  R.m = c.has("m") ? c.get_uint("m") : 0, R.k = c.has("k") ? c.get_uint("k") : 0,
  R.n = c.has("n") ? c.get_uint("n") : 0;
  R.cols = c.has("cols") ? c.get_uint("cols") : 0;
  R.rows = c.has("rows") ? c.get_uint("rows") : 0;
  if (op == "topk" && R.k > R.cols)
    c.at("k").fail("topk: k " + std::to_string(R.k) + " is more than cols (" + std::to_string(R.cols) + ")");
  R.b_transposed = c.get_bool("b_transposed");
  R.b_fractal = c.get_string("b_layout") == "fractal_z";
  if (R.b_fractal && !R.b_transposed) c.at("b_layout").fail("gemm: a fractal_z in1 is B^T (n x k): set b_transposed");
  if (n > 1) R.b_k0 = 32 / aicore::dtype_bytes(K->tensors[std::size_t(K->inputs[1])].t.dtype);
  R.relu = c.get_bool("relu");
  R.scale = c.get_double("scale");
  R.epsilon = c.get_double("epsilon");
  for (const char* key : {"alpha", "beta"})
    if (c.has(key) &&
        std::none_of(R.op->needs.begin(), R.op->needs.end(), [&](const char* k) { return std::string(k) == key; }))
      c.at(key).fail(op + " takes no " + key);
  R.alpha = c.has("alpha") ? c.get_double("alpha") : 0.0;
  R.beta = c.has("beta") ? c.get_double("beta") : 0.0;
  R.bias = n == 3;
  R.f16_epilogue = c.get_string("epilogue") == "f16";
  read_check_shape(K, c);
  check_reference_sizes(K, c);
}

// The checks of a library kernel's own shape (conv2d, pool, aipp, ...) take it into the reference.
void KernelLauncher::read_check_shape(Kernel* K, const cfg::Node& c) {
  Reference& R = K->ref;
  const std::string op = R.op->name;
  auto take = [&](auto& into) {
    const auto* t = std::get_if<std::decay_t<decltype(into)>>(&K->shape);
    if (!t) c.fail("check op " + op + " needs a library: " + op + " kernel (it uses its shape)");
    into = *t;
  };
  if (op == "aipp") take(R.aipp);
  if (op == "softmax_c") take(R.softmax_c);
  if (op == "softmax") {                                                // its mask, from a softmax kernel's shape
    if (const auto* m = std::get_if<kernels::SoftmaxShape>(&K->shape))  // the fill as the kernel holds it
      R.mask_rows = m->mask_rows,
      R.mask_fill = m->dtype == aicore::DType::F16 ? aicore::num::f16(aicore::num::to_f16(m->fill)) : float(m->fill);
    if (K->inputs.size() > 1 && !R.mask_rows)
      c.at("inputs").fail("softmax: a second input is a mask, a softmax kernel's with shape.mask_rows");
    if (K->inputs.size() < 2 && R.mask_rows)
      c.fail("softmax: the kernel has a mask (shape.mask_rows): its check reads it, the input after x");
  }
  if (op == "channel_mul") take(R.channel_mul);
  if (op == "upsample") take(R.upsample);
  if (op == "resize") take(R.resize);
  if (op == "transpose") take(R.transpose);
  if (op == "reduce") take(R.reduce);
  if (op == "pool") take(R.pool);
  if (op == "slice") return slice_check_shape(K, c);
  if (op != "conv2d") return;
  take(R.conv);
  const kernels::ConvShape& conv = R.conv;
  if (K->inputs.size() != std::size_t(2 + conv.bias + conv.scale + conv.residual))
    c.at("inputs").fail(
        "conv2d's check takes the kernel's inputs: x, the weights, then the bias, the scale and the residual its "
        "shape has (" +
        std::to_string(2 + conv.bias + conv.scale + conv.residual) + ")");
}

// check op slice: the slice kernel's shape, or the AI CPU slice's arguments (bytes) in elements of
// the output's type.
void KernelLauncher::slice_check_shape(Kernel* K, const cfg::Node& c) {
  Reference& R = K->ref;
  if (const auto* s = std::get_if<kernels::SliceShape>(&K->shape)) {
    R.slice = *s;
    return;
  }
  if (K->aicpu_func != DVP_AICPU_SLICE)
    c.fail("check op slice needs a library: slice kernel or an aicpu: slice kernel (it uses its shape or arguments)");
  const aicore::DType dt = K->tensors[K->output].t.dtype;
  const std::uint64_t eb = aicore::dtype_bytes(dt);
  std::uint64_t v[6];  // outer, outer_stride, rows, row_stride, run_bytes, start
  for (std::size_t i = 0; i < 6; ++i) {
    v[i] = K->args[i + 2].second;
    if (i != 0 && i != 2 && v[i] % eb)  // a negative row_stride too: its two's complement divides as it does
      c.fail("check op slice: the AI CPU slice's argument " + std::to_string(i + 3) + " (" + std::to_string(v[i]) +
             " bytes) is not whole elements of the output's " + aicore::dtype_name(dt));
  }
  const auto elems = [&](std::uint64_t b) { return std::uint64_t(std::int64_t(b) / std::int64_t(eb)); };
  R.slice = kernels::SliceShape{dt, v[0], v[2], v[4] / eb, v[1] / eb, elems(v[3]), v[5] / eb};
}

// check: expected: a file of the output's values, read now and rounded once to the output's type.
void KernelLauncher::read_expected(Kernel* K, const cfg::Node& e, const std::string& dir) {
  fs::path p = e.as_string();
  const std::string path = (p.is_relative() ? fs::path(dir) / p : p).string();
  const TensorSpec& spec = K->tensors[K->output];
  const Tensor& out = spec.t;
  // An NC1HWC0 output's expected values are in its logical shape.
  const std::uint64_t count = spec.nc1hwc0 ? spec.nc1hwc0->logical() : out.elems;
  try {
    std::optional<NpyHeader> h;
    if (is_npy_path(path)) {
      h = read_npy_header(path);
      if (h->elements() != count)
        e.fail(path + " holds " + std::to_string(h->elements()) + " elements, the output '" + out.name + "' " +
               std::to_string(count));
    }
    std::vector<std::uint8_t> values(count * aicore::dtype_bytes(out.dtype));
    read_tensor_data(path, h ? &*h : nullptr, out.dtype, count, true, values.data());
    K->expected.resize(out.elems * aicore::dtype_bytes(out.dtype));
    spec.store(values.data(), K->expected.data());
  } catch (const Error& x) {
    if (dynamic_cast<const cfg::ConfigError*>(&x)) throw;
    e.fail(x.what());
  }
}

// Every tensor the reference reads or compares must be large enough for its shape.
void KernelLauncher::check_reference_sizes(const Kernel* K, const cfg::Node& c) {
  const Reference& R = K->ref;
  auto need = [&](int t, std::uint64_t elems, const char* what) {
    if (K->tensors[t].t.elems < elems)
      c.fail(std::string(what) + " '" + K->tensors[t].t.name + "' has " + std::to_string(K->tensors[t].t.elems) +
             " elements, " + R.op->name + " needs " + std::to_string(elems));
  };
  const std::uint64_t out_elems = K->tensors[K->output].t.elems;
  if (R.op->whole_rows && (R.cols == 0 || out_elems % R.cols))
    c.at("cols").fail("the output's " + std::to_string(out_elems) + " elements are not whole rows");
  const auto in_elems = R.op->input_elems(R, out_elems);
  for (std::size_t i = 0; i < K->inputs.size() && i < in_elems.size(); ++i)
    need(K->inputs[i], in_elems[i].first, in_elems[i].second);
  need(K->output, R.count(out_elems), "output");
}

// Where the image, the tensors and the argument table go in DRAM, decided at load in launch
// order: what does not fit is an error naming it, before anything runs or is filled.
// Whole pages of DRAM from next_ for `what` (named at `at` when they do not fit).
std::uint64_t KernelLauncher::take(std::uint64_t bytes, const cfg::Node& at, const std::string& what) {
  const std::uint64_t end = next_ + ((bytes + 4095) & ~std::uint64_t(4095));
  const std::uint64_t top = std::min<std::uint64_t>(dram_.size(), media_.floor);
  if (end > top)
    at.fail(what + " (" + std::to_string(bytes) + " B) does not fit in DRAM: " + std::to_string(top) + " B" +
            (top < dram_.size() ? " below the media jobs' buffers" : "") + ", of which " + std::to_string(next_) +
            " B are taken by what comes before it");
  const std::uint64_t at_offset = next_;
  next_ = end;
  return at_offset;
}

void KernelLauncher::layout(Kernel* K, const cfg::Node& k) {
  if (!K->aicpu_func) {
    K->code_bytes = K->image.bytes().size() - 32;  // the image less its header
    K->image_addr = take(K->code_bytes + 32, k, "the kernel image");
  }
  for (std::size_t i = 0; i < K->tensors.size(); ++i) {
    TensorSpec& s = K->tensors[i];
    if (s.alias_kernel >= 0) {  // an earlier kernel's memory
      s.t.addr = alias_of(s).addr + s.alias_offset;
      continue;
    }
    if (s.media || s.arena) continue;  // a media job's buffer, addressed when read; the arena's, later
    const cfg::Node& t = k.at("tensors").items()[i];
    s.t.addr = take(s.t.elems * aicore::dtype_bytes(s.t.dtype), t, "tensor '" + s.t.name + "'");
    load_file(s, t);
  }
  K->argtab = take(8 * K->args.size() + 8, k.at("args"), "the argument table");
}

std::vector<KernelLauncher::Placed> KernelLauncher::memory_map() const {
  std::vector<Placed> m;
  for (const auto& K : kernels_) {
    if (!K->aicpu_func) m.push_back({K->name + " image", "code", base_ + K->image_addr, K->code_bytes});
    for (const TensorSpec& s : K->tensors)
      m.push_back(
          {K->name + "." + s.t.name, contents(s), base_ + s.t.addr, s.t.elems * aicore::dtype_bytes(s.t.dtype)});
    m.push_back({K->name + " arguments", "argument table", base_ + K->argtab, 8 * K->args.size()});
  }
  return m;
}

// What a tensor's memory holds at its kernel's start, for memory_map.
std::string KernelLauncher::contents(const TensorSpec& s) const {
  std::string from = !s.file.empty() ? "file " + s.file : s.init;
  if (s.media) return "output of dvpp job " + s.media_job;
  if (s.arena) return "activation arena" + (s.file.empty() ? "" : ", " + from);
  if (s.alias_kernel < 0) return from;
  const Kernel& of = *kernels_[std::size_t(s.alias_kernel)];
  return "alias of " + of.name + "." + of.tensors[std::size_t(s.alias_tensor)].t.name +
         (s.alias_offset ? " + " + hex(s.alias_offset) : "");
}

// The arena after every kernel's own memory: its tensors at their offsets (their files read now),
// and the aliases of them.
void KernelLauncher::place_arena(const cfg::Node& kernels) {
  if (!arena_bytes_) return;
  const std::uint64_t base = take(arena_bytes_, kernels, "the activation arena");
  for (std::size_t ki = 0; ki < kernels_.size(); ++ki)
    for (std::size_t i = 0; i < kernels_[ki]->tensors.size(); ++i) {
      TensorSpec& s = kernels_[ki]->tensors[i];
      if (s.arena) {
        s.t.addr = base + *s.arena;
        load_file(s, kernels.items()[ki].at("tensors").items()[i]);
      } else if (s.alias_kernel >= 0) {  // placed in the arena by now, if its tensor is
        s.t.addr = alias_of(s).addr + s.alias_offset;
      }
    }
}

// A tensor's file, straight into DRAM at its address: a file as large as the memory is read once.
// Its DRAM pages are made in one call first (a network's weights are tens of megabytes: a fault a
// page costs about twice as much on this project's VMs), and a laid-out tensor's logical form goes
// through one buffer kept from tensor to tensor, not a fresh one zeroed and faulted in for each.
void KernelLauncher::load_file(TensorSpec& s, const cfg::Node& t) {
  if (s.file.empty()) return;
  const unsigned eb = aicore::dtype_bytes(s.t.dtype);
  dram_.will_write(s.t.addr, s.t.elems * eb);
  try {
    if (s.nc1hwc0) {  // the logical tensor, then stored
      const std::uint64_t logical = s.nc1hwc0->logical();
      if (load_buffer_.size() < logical * eb) load_buffer_.resize(logical * eb);
      read_tensor_data(s.file, s.npy ? &*s.npy : nullptr, s.t.dtype, logical, s.convert, load_buffer_.data());
      s.store(load_buffer_.data(), dram_.write_at(s.t.addr, s.t.elems * eb));
    } else {
      read_tensor_data(s.file, s.npy ? &*s.npy : nullptr, s.t.dtype, s.t.elems, s.convert,
                       dram_.write_at(s.t.addr, s.t.elems * eb));
    }
  } catch (const Error& e) {
    t.at("file").fail(e.what());
  }
}

std::vector<std::uint8_t> KernelLauncher::read_back(std::uint64_t addr, std::uint64_t len) {
  std::vector<std::uint8_t> out = made_vector<std::uint8_t>(len);
  read_back_into(addr, out.data(), len);
  return out;
}

void KernelLauncher::read_back_into(std::uint64_t addr, std::uint8_t* out, std::uint64_t len) {
  if (bulk_read_ && bulk_read_(addr, out, len)) return;
  tlm::tlm_generic_payload p;
  for (std::uint64_t off = 0; off < len;) {
    // Debug reads through the ring reach the L2 slice that may hold the line dirty.
    const std::uint64_t chunk = std::min<std::uint64_t>(len - off, 128 - (addr + off) % 128);
    prepare(p, false, addr + off, out + off, unsigned(chunk));
    if (socket->transport_dbg(p) != chunk) throw Error(std::string(name()) + ": cannot read back " + hex(addr + off));
    off += chunk;
  }
}

// A check reads a tensor back a piece at a time into one buffer it keeps: a whole tensor's copy
// would be fresh pages each time (on this project's VMs 6 us a page at its first write).
const std::uint8_t* KernelLauncher::read_piece(std::uint64_t addr, std::uint64_t len) {
  if (piece_.size() < len) piece_.resize(len);
  read_back_into(addr, piece_.data(), len);
  return piece_.data();
}

bool KernelLauncher::holds(std::uint64_t addr, const std::vector<std::uint8_t>& bytes) {
  for (std::uint64_t off = 0; off < bytes.size(); off += kPieceBytes) {
    const std::uint64_t n = std::min<std::uint64_t>(kPieceBytes, bytes.size() - off);
    if (std::memcmp(read_piece(addr + off, n), bytes.data() + off, n) != 0) return false;
  }
  return true;
}

void KernelLauncher::write_job_table(const cfg::Node& tasks) {
  // Every kernel goes into DRAM now; the table lists the tasks in scenario order.
  for (auto& K : kernels_) place(K.get());
  std::vector<dvp_task> table;
  std::uint64_t streams = 1;
  for (const cfg::Node& t : tasks.items()) {
    dvp_task d{};
    d.stream = std::uint32_t(t.get_uint("stream"));
    streams = std::max<std::uint64_t>(streams, d.stream + 1);
    const int kinds = int(t.has("kernel")) + int(t.has("record")) + int(t.has("wait")) + int(t.has("barrier")) +
                      int(t.has("dvpp")) + int(t.has("preload")) + int(t.has("prefetch")) + int(t.has("discard"));
    if (kinds != 1)
      t.fail(
          "a task is exactly one of kernel: NAME, dvpp: NAME, preload: KERNEL.TENSOR, prefetch: KERNEL.TENSOR, "
          "discard: KERNEL.TENSOR, record: EVENT, wait: EVENT or barrier: true");
    const bool range = range_kind(t) != nullptr;
    if (t.has("bytes") && !range) t.at("bytes").fail("only a preload, prefetch or discard task has bytes");
    if (t.has("offset") && !range) t.at("offset").fail("only a preload, prefetch or discard task has an offset");
    std::string name;
    task_entry(t, d, name);
    if (t.has("name")) name = t.get_string("name");
    const std::string shown = name.substr(0, sizeof d.name - 1);  // as reports show it
    if (t.has("kernel")) {
      auto [at, fresh] = task_kernel_.emplace(shown, t.get_string("kernel"));
      if (!fresh && at->second != t.get_string("kernel"))
        t.fail("task '" + name + "': tasks of different kernels must differ in their first " +
               std::to_string(sizeof d.name - 1) + " characters ('" + shown + "' is kernel '" + at->second + "')");
    }
    std::strncpy(d.name, name.c_str(), sizeof d.name - 1);
    d.id = std::uint32_t(table.size());
    table.push_back(d);
  }
  if (table.size() > DVP_MAX_TASKS)
    tasks.fail(std::to_string(table.size()) + " tasks: the runtime firmware takes at most " +
               std::to_string(DVP_MAX_TASKS));
  dvp_job_table head{DVP_JOB_MAGIC, table.size(), streams, 0};
  const std::uint64_t bytes = sizeof head + table.size() * sizeof(dvp_task);
  if (DVP_JOB_TABLE_OFFSET + bytes > 2 * DVP_JOB_TABLE_OFFSET) tasks.fail("too many tasks for the job table's 16 MiB");
  std::uint8_t* at = dram_.write_at(DVP_JOB_TABLE_OFFSET, bytes);
  std::memcpy(at, &head, sizeof head);
  std::memcpy(at + sizeof head, table.data(), table.size() * sizeof(dvp_task));
}

// One task's entry, by its kind; `name` its default name.
void KernelLauncher::task_entry(const cfg::Node& t, dvp_task& d, std::string& name) {
  if (t.has("kernel")) {
    const std::string k = t.get_string("kernel");
    Kernel* K = nullptr;
    for (auto& x : kernels_)
      if (x->name == k) K = x.get();
    if (!K) t.at("kernel").fail("no kernel named '" + k + "' in kernels:");
    d.type = K->aicpu_func ? DVP_TASK_AICPU : DVP_TASK_KERNEL;
    aicpu_tasks_ |= K->aicpu_func != 0;
    d.entry = K->aicpu_func ? K->aicpu_func : K->image.entry;
    d.image = base_ + K->image_addr;
    d.code_bytes = K->code_bytes;
    d.blocks = K->aicpu_func ? 1 : K->blocks;
    d.args = base_ + K->argtab;
    name = k;
  } else if (t.has("dvpp")) {
    name = t.get_string("dvpp");
    if (!media_.task || !media_.task(name, d)) t.at("dvpp").fail("no job named '" + name + "' in dvpp:");
  } else if (range_kind(t)) {
    range_entry(t, d, name);
  } else if (t.has("barrier")) {
    d.type = DVP_TASK_BARRIER;
    name = "barrier";
  } else {
    const bool rec = t.has("record");
    d.type = rec ? DVP_TASK_RECORD : DVP_TASK_WAIT;
    d.event = std::uint32_t(t.get_uint(rec ? "record" : "wait"));
    name = std::string(rec ? "record " : "wait ") + std::to_string(d.event);
  }
}

// A preload, prefetch or discard task's entry: the tensor's address and bytes (its memory: an
// alias's owner's, the arena's), from `offset`.
void KernelLauncher::range_entry(const cfg::Node& t, dvp_task& d, std::string& name) {
  const RangeKind* k = range_kind(t);
  assert(k);  // task_entry calls it for these kinds only
  const char* kind = k->key;
  const std::string what = t.get_string(kind);
  const auto dot = what.rfind('.');
  const Kernel* K = nullptr;
  for (auto& x : kernels_)
    if (dot != std::string::npos && x->name == what.substr(0, dot)) K = x.get();
  if (!K) t.at(kind).fail("'" + what + "': give KERNEL.TENSOR, a kernel of kernels: and one of its tensors");
  const TensorSpec* s = nullptr;
  for (const TensorSpec& x : K->tensors)
    if (x.t.name == what.substr(dot + 1)) s = &x;
  if (!s) t.at(kind).fail("kernel '" + K->name + "' has no tensor '" + what.substr(dot + 1) + "'");
  const std::uint64_t bytes = s->t.elems * aicore::dtype_bytes(s->t.dtype);
  const std::uint64_t offset = t.has("offset") ? t.get_uint("offset") : 0;
  if (offset >= bytes)
    t.at("offset").fail("offset " + std::to_string(offset) + " is past the tensor's " + std::to_string(bytes) +
                        " bytes");
  d.type = k->type;
  d.args = base_ + s->t.addr + offset;
  d.code_bytes = t.has("bytes") ? std::min<std::uint64_t>(t.get_uint("bytes"), bytes - offset) : bytes - offset;
  name = std::string(kind) + " " + what;
}

void KernelLauncher::set_control_cores(unsigned n) {
  const std::uint64_t v = n;
  std::memcpy(dram_.write_at(DVP_JOB_TABLE_OFFSET + offsetof(dvp_job_table, control_cores), 8), &v, 8);
}

void KernelLauncher::place(Kernel* K) {
  // Image, tensors and argument table, written straight into DRAM (at the offsets layout()
  // chose) before the launch. (In bare mode at the kernel's start, not at elaboration: whatever
  // ran before it, a traffic generator or an RTL master, may have written that memory, and left
  // lines of it in the L2: they are dropped, below.)
  AddressRanges wrote;
  const auto write = [&](std::uint64_t at, const void* from, std::uint64_t len) {
    if (!len) return;  // an empty argument table: no source to copy from
    std::memcpy(dram_.write_at(at, len), from, len);
    wrote.emplace_back(base_ + at, base_ + at + len);
  };
  if (!K->aicpu_func) {
    const auto code = K->image.bytes();
    write(K->image_addr, code.data() + 32, code.size() - 32);
  }
  for (std::size_t i = 0; i < K->tensors.size(); ++i) {
    const TensorSpec& s = K->tensors[i];
    if (!set_up_at_start(s)) continue;
    const std::uint64_t len = s.t.elems * aicore::dtype_bytes(s.t.dtype);  // as stored
    dram_.will_write(s.t.addr, len);
    wrote.emplace_back(base_ + s.t.addr, base_ + s.t.addr + len);
    // Stored zeros are zero bytes in every dtype and layout: cleared where they are, not set up
    // on the host and copied.
    if (!generated(s)) {
      std::memset(dram_.write_at(s.t.addr, len), 0, len);
      continue;
    }
    std::vector<std::uint8_t> bytes;
    if (i < K->initial.size()) bytes.swap(K->initial[i]);  // set up ahead (its memory freed below)
    if (bytes.empty()) bytes = initial_bytes(s);
    std::memcpy(dram_.write_at(s.t.addr, bytes.size()), bytes.data(), bytes.size());
  }
  std::vector<std::uint64_t> argtab;
  for (const auto& [tensor, value] : K->args)
    argtab.push_back(tensor >= 0 ? base_ + K->tensors[std::size_t(tensor)].t.addr : value);
  write(K->argtab, argtab.data(), 8 * argtab.size());
  // Every range is a whole allocation of take() (pages), so it owns the lines it touches.
  if (invalidate_) invalidate_(wrote);
}

// Tensors place() writes: not another's memory, a file's (read at load) or the arena's.
bool KernelLauncher::set_up_at_start(const TensorSpec& s) { return !s.borrowed() && s.file.empty() && !s.arena; }

// Of those, the ones whose values the host generates (random, arange): place() clears a tensor of
// zeros where it is.
bool KernelLauncher::generated(const TensorSpec& s) { return set_up_at_start(s) && s.init != "zeros"; }

// A tensor's initial values (init: zeros, arange, random), stored as the tensor is (ND, or
// converted to NC1HWC0, its pad channels 0): a pure function of its spec.
std::vector<std::uint8_t> KernelLauncher::initial_bytes(const TensorSpec& s) {
  const unsigned eb = aicore::dtype_bytes(s.t.dtype);
  // The logical tensor's values, in its order; stored (converted) after.
  const std::uint64_t n = s.nc1hwc0 ? s.nc1hwc0->logical() : s.t.elems;
  // Made in one call (make_pages), not a page fault each: gemm-2048's operands are 8 MiB apiece.
  std::vector<std::uint8_t> logical = made_vector<std::uint8_t>(n * eb);
  std::uint64_t z = s.seed * 0x9E3779B97F4A7C15ull + 1;
  const bool arange = s.init == "arange", random = s.init == "random";
  double v[4096];  // the values, stored a chunk at a time (the type chosen once a chunk)
  for (std::uint64_t i0 = 0; i0 < n; i0 += 4096) {
    const std::uint64_t len = std::min<std::uint64_t>(4096, n - i0);
    // A loop per kind, the choice out of it. z >> 11 < 2^53 converts exactly as a signed integer
    // (one instruction; an unsigned 64-bit one takes a branch and a fix-up).
    if (random)
      for (std::uint64_t j = 0; j < len; ++j) {
        z ^= z << 13, z ^= z >> 7, z ^= z << 17;
        v[j] = s.lo + (s.hi - s.lo) * double(std::int64_t(z >> 11)) * 0x1.0p-53;
      }
    else if (arange)
      for (std::uint64_t j = 0; j < len; ++j) v[j] = double((i0 + j) % 2048);
    else
      std::fill(v, v + len, 0.0);
    aicore::num::store_n(logical.data() + i0 * eb, s.t.dtype, v, len);
  }
  if (!s.nc1hwc0) return logical;
  std::vector<std::uint8_t> stored = made_vector<std::uint8_t>(s.t.elems * eb);
  s.store(logical.data(), stored.data());
  return stored;
}

// Bare mode: the worker sets up a kernel's tensors before it starts (place() copies them in).
void KernelLauncher::post_setup(Kernel* K) {
  K->setup_job = jobs_.post([K] {
    K->initial.resize(K->tensors.size());
    for (std::size_t i = 0; i < K->tensors.size(); ++i)
      if (generated(K->tensors[i])) K->initial[i] = initial_bytes(K->tensors[i]);
  });
}

// A functional run's check whose inputs are its own (inputs_set_up): its reference is computed
// by the worker while the kernel runs, from a copy of the input bytes in DRAM now (no cache
// holds them yet: before the run, or as place() wrote them, but a file's, read at load, which
// something may have written since through the L2). The check takes those values only if it
// reads the same bytes back (reference_values); they are what it would compute.
// The host memory this holds until the check (input copies, 8 bytes a value) is at most
// kEarlyBytes at a time; a check past it computes its reference after its kernel, as before.
void KernelLauncher::post_reference(Kernel* K) {
  if (!functional_ || !K->check || !K->expected.empty() || !inputs_set_up(*K)) return;
  const std::uint64_t count = K->ref.count(K->tensors[std::size_t(K->output)].t.elems);
  std::uint64_t bytes = count * sizeof(double);
  for (int i : K->inputs)
    bytes += K->tensors[std::size_t(i)].t.elems * aicore::dtype_bytes(K->tensors[std::size_t(i)].t.dtype);
  if (early_held_ + bytes > kEarlyBytes) return;
  early_held_ += K->early_bytes = bytes;
  K->ref.stop = &stopping_;  // read by the worker from here on
  K->early_inputs.clear();
  for (int i : K->inputs) {
    const Tensor& t = K->tensors[std::size_t(i)].t;
    const std::uint64_t len = t.elems * aicore::dtype_bytes(t.dtype);
    std::vector<std::uint8_t>& copy = K->early_inputs.emplace_back();
    copy.reserve(len);
    make_pages(copy.data(), len);  // its pages in one call, then written once
    copy.insert(copy.end(), dram_.read_at(t.addr), dram_.read_at(t.addr) + len);
  }
  K->ref_job = jobs_.post([K, count] { K->early_want = rounded_reference(K, K->early_inputs, count); });
}

// Firmware mode: every kernel's inputs are in DRAM when the simulation starts. (Not when the
// platform is built: a `dvp map`, or a scenario refused before its run, computes nothing.)
void KernelLauncher::start_of_simulation() {
  if (firmware_mode_)
    for (auto& K : kernels_) post_reference(K.get());
}

// The reference values of a kernel's check, each rounded once to the output type: computed from
// the inputs as read back (or taken from the worker's, computed from the same bytes), or the
// expected file's.
std::vector<double> KernelLauncher::reference_values(Kernel* K, std::uint64_t count) {
  const Tensor& out = K->tensors[K->output].t;
  const unsigned ob = aicore::dtype_bytes(out.dtype);
  if (!K->expected.empty()) {
    std::vector<double> want = made_vector<double>(count);
    for (std::uint64_t i = 0; i < count; ++i) want[i] = aicore::num::load(K->expected.data() + i * ob, out.dtype);
    return want;
  }
  std::vector<std::vector<std::uint8_t>> in;
  if (const auto job = std::move(K->ref_job)) {
    // The worker's values stand only if the inputs are still the bytes they were computed from
    // (whatever wrote them since: a kernel in place, the firmware, an engine). One the worker
    // has not begun is dropped; one that failed (a reference over the host's budget) is computed
    // again here, to be reported from here, from the same bytes. Either way the values are the same.
    bool same = true;
    for (std::size_t j = 0; j < K->inputs.size() && same; ++j)
      same = holds(base_ + K->tensors[std::size_t(K->inputs[j])].t.addr, K->early_inputs[j]);
    early_same_ += same;
    bool done = false;
    if (!job->claim()) try {
        job->wait();
        done = same;
      } catch (const std::exception&) {}
    if (same) in.swap(K->early_inputs);                              // what memory holds: not read back again
    std::vector<std::vector<std::uint8_t>>().swap(K->early_inputs);  // the copies' memory back
    early_held_ -= K->early_bytes;
    if (done) return std::move(K->early_want);
    std::vector<double>().swap(K->early_want);
  }
  if (in.empty())
    for (int i : K->inputs) {
      const Tensor& t = K->tensors[i].t;
      in.push_back(read_back(base_ + t.addr, t.elems * aicore::dtype_bytes(t.dtype)));
    }
  return rounded_reference(K, in, count);
}

std::vector<double> KernelLauncher::rounded_reference(const Kernel* K, const std::vector<std::vector<std::uint8_t>>& in,
                                                      std::uint64_t count) {
  const Tensor& out = K->tensors[K->output].t;
  const unsigned ob = aicore::dtype_bytes(out.dtype);
  std::vector<TensorView> views;
  for (std::size_t j = 0; j < in.size(); ++j) {
    const Tensor& t = K->tensors[K->inputs[j]].t;
    views.push_back(TensorView{in[j].data(), t.dtype, t.elems});
  }
  std::vector<double> want = K->ref.compute(views, count);
  // Rounded to the output type and back, in place: a second buffer of 8 bytes a value would be
  // fresh pages (on this project's VMs a 64 MiB one costs about 0.1 s, docs/performance.md).
  std::vector<std::uint8_t> rounded = made_vector<std::uint8_t>(count * ob);
  aicore::num::store_n(rounded.data(), out.dtype, want.data(), count);
  aicore::num::load_n(rounded.data(), out.dtype, count, want.data());
  return want;
}

// Inputs set up before the run in memory of the kernel's own: no earlier kernel's output (an
// alias), no engine's picture, no arena slot another tensor shares.
bool KernelLauncher::inputs_set_up(const Kernel& K) {
  return std::all_of(K.inputs.begin(), K.inputs.end(), [&](int i) {
    const TensorSpec& s = K.tensors[std::size_t(i)];
    return !s.borrowed() && !s.arena;
  });
}

// Element i's part in a check's figures; worst_excess is the worst element's so far.
void KernelLauncher::compare_element(Comparison& c, double& worst_excess, std::uint64_t i, double have, double w) {
  // Equal values pass first (infinities, an fp16 overflow, have no finite difference): they
  // change none of the figures, and are most elements of many checks.
  if (have == w || (std::isnan(w) && std::isnan(have))) return;
  const double abs_err = std::isnan(have - w) ? INFINITY : std::fabs(have - w);
  // A NaN or infinite reference is met only by itself (its tolerance would be NaN or inf).
  const double tol = std::isfinite(w) ? c.atol + c.rtol * std::fabs(w) : -1.0;
  c.max_abs = std::max(c.max_abs, abs_err);
  if (w != 0 && !std::isnan(w)) c.max_rel = std::max(c.max_rel, abs_err / std::fabs(w));
  if (abs_err > tol) ++c.over;
  const double excess = abs_err - tol;
  if (abs_err > 0 && excess > worst_excess) worst_excess = excess, c.worst = std::int64_t(i), c.have = have, c.want = w;
}

void KernelLauncher::check(Kernel* K, Result& r) {
  if (!media_in_time(K, r)) return void(++failed_);
  if (!K->check) return;
  if (!functional_) {
    r.detail = "not checked: a timing-only run moves no data";
    return;
  }
  r.checked = true;
  const HostTimer timer(host_check_s_);
  const Tensor& out = K->tensors[K->output].t;
  const unsigned ob = aicore::dtype_bytes(out.dtype);
  const std::uint64_t count = K->expected.empty() ? K->ref.count(out.elems) : out.elems;
  const std::vector<double> want = reference_values(K, count);
  Comparison& c = r.comparison;
  c.count = count, c.atol = K->atol, c.rtol = K->rtol;
  // The worst element: the one furthest past its tolerance, or (all within) the closest to it.
  double worst_excess = -INFINITY;
  // The output read back a piece (whole chunks) at a time and decoded a chunk at a time, into
  // buffers kept from check to check: a whole tensor's values, 8 bytes each, would be fresh pages
  // (about 0.1 s for kernels/add's 8 Mi values on this project's VMs).
  static_assert(kPieceBytes / 8 >= kDecodeChunk, "a piece holds whole chunks of the widest type");
  const std::uint64_t per_piece = kPieceBytes / ob / kDecodeChunk * kDecodeChunk;
  got_.resize(kDecodeChunk);
  for (std::uint64_t p0 = 0; p0 < count; p0 += per_piece) {
    const std::uint64_t p_end = std::min(count, p0 + per_piece);
    const std::uint8_t* piece = read_piece(base_ + out.addr + p0 * ob, (p_end - p0) * ob);
    for (std::uint64_t c0 = p0; c0 < p_end; c0 += kDecodeChunk) {
      const std::uint64_t n = std::min(kDecodeChunk, p_end - c0);
      aicore::num::load_n(piece + (c0 - p0) * ob, out.dtype, n, got_.data());
      for (std::uint64_t j = 0; j < n; ++j) compare_element(c, worst_excess, c0 + j, got_[j], want[c0 + j]);
    }
  }
  r.passed = c.over == 0;
  const TensorSpec& os = K->tensors[K->output];
  // A stored NC1HWC0 output (not grouped weights, not fractal) is compared as stored.
  const bool stored = os.nc1hwc0 && os.nc1hwc0->groups == 1 && !os.nc1hwc0->k0 && count == out.elems;
  r.detail = comparison_text(out.name, os.shape, c, stored ? &*os.nc1hwc0 : nullptr);
  if (!r.passed) ++failed_;
}

// No kernel can be faster than its work at the cube's or vector's peak: one that is shows a
// timing model in error, and fails like a wrong value. (Its DRAM bound can be beaten: L2 can
// hold inputs an earlier kernel left, and outputs not yet written back.)
void KernelLauncher::check_compute_bound(Result& r) {
  const double took = double(r.end - r.start);
  if (!r.has_work || r.end <= r.start || took >= r.work.compute_ps * (1 - 1e-9)) return;
  r.checked = true;
  r.passed = false;
  r.detail = (r.detail.empty() ? "" : r.detail + "; ") + "took " + std::to_string(took / 1e6) +
             " us, less than its work allows at peak (" + std::to_string(r.work.compute_ps / 1e6) +
             " us): a timing model error";
  ++failed_;
}

bool KernelLauncher::saves_tensors(const std::string& all_dir) const {
  if (!all_dir.empty()) return true;
  for (auto& K : kernels_)
    for (auto& s : K->tensors)
      if (!s.save.empty()) return true;
  return false;
}

unsigned KernelLauncher::save_tensors(const std::string& out_dir, const std::string& all_dir) {
  unsigned n = 0;
  for (auto& K : kernels_)
    for (auto& s : K->tensors) {
      std::vector<fs::path> paths;
      if (!s.save.empty())
        paths.push_back(fs::path(s.save).is_relative() ? fs::path(out_dir) / s.save : fs::path(s.save));
      if (!all_dir.empty() && !s.borrowed())
        paths.push_back(fs::path(all_dir) / (file_name_of(K->name) + "." + file_name_of(s.t.name) + ".npy"));
      if (paths.empty()) continue;
      auto bytes = read_back(base_ + s.t.addr, s.t.elems * aicore::dtype_bytes(s.t.dtype));
      std::uint64_t count = s.t.elems;
      if (s.nc1hwc0) {  // saved in the logical shape
        std::vector<std::uint8_t> logical(s.nc1hwc0->logical() * aicore::dtype_bytes(s.t.dtype));
        s.nc1hwc0->gather(bytes.data(), logical.data(), aicore::dtype_bytes(s.t.dtype));
        bytes = std::move(logical);
        count = s.nc1hwc0->logical();
      }
      for (const fs::path& p : paths) {
        std::error_code ec;
        if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
        if (ec) throw OutputError(p.parent_path().string() + ": cannot create the directory: " + ec.message());
        // A tensor given by its element count (no shape) is saved as one dimension, not as a scalar.
        const std::vector<std::uint64_t> flat{count};
        write_tensor_file(p.string(), s.t.dtype,
                          s.save_shape      ? *s.save_shape
                          : s.shape.empty() ? flat
                                            : s.shape,
                          bytes.data(), count);
        ++n;
      }
    }
  return n;
}

void KernelLauncher::run() {
  if (firmware_mode_) return;  // the firmware runs the kernels through the task scheduler
  // A kernel that reads a media job's picture: after every job has completed.
  const bool reads_media = std::any_of(kernels_.begin(), kernels_.end(), [](const auto& K) {
    return std::any_of(K->tensors.begin(), K->tensors.end(), [](const TensorSpec& s) { return s.media; });
  });
  if (reads_media && media_.done && !media_.done()) wait(*media_.finished);
  if (!kernels_.empty()) post_setup(kernels_.front().get());
  for (std::size_t k = 0; k < kernels_.size(); ++k) {
    Kernel* K = kernels_[k].get();
    current_ = K->name;
    {
      const HostTimer timer(host_setup_s_);
      try {
        K->setup_job->need();  // the worker's, or here if it has not begun
      } catch (const std::exception&) {
        K->initial.clear();  // its failure (memory, on its thread) is tried again here by place()
      }
      place(K);
    }
    // The next kernel's set-up first (short, and needed as soon as this one ends), then this
    // one's reference, from its inputs as it will read them.
    if (k + 1 < kernels_.size()) post_setup(kernels_[k + 1].get());
    post_reference(K);
    Result r = result_of(*K);
    r.start = now_tick();
    // Blocks go onto free cores in order of block id: the first `cores` at once, then each
    // next block onto the first core to finish.
    unsigned next_block = 0;
    while (next_block < K->blocks ||
           std::any_of(cores_.begin(), cores_.begin() + K->cores, [](aicore::AiCore* c) { return c->busy(); })) {
      for (unsigned c = 0; c < K->cores && next_block < K->blocks; ++c)
        if (!cores_[c]->busy()) {
          aicore::Launch l;
          l.image_base = base_ + K->image_addr;
          l.code_bytes = K->code_bytes;
          l.entry = K->image.entry;
          l.block_id = next_block++;
          l.block_dim = K->blocks;
          l.arg_base = base_ + K->argtab;
          cores_[c]->start(l);
        }
      sc_core::sc_event_or_list any;
      for (unsigned c = 0; c < K->cores; ++c) any |= cores_[c]->finished();
      wait(any);
    }
    r.end = now_tick();
    check(K, r);
    check_compute_bound(r);
    results_.push_back(r);
  }
  done_ = true;
}

void KernelLauncher::check_after_firmware(const std::vector<std::pair<std::string, std::pair<Tick, Tick>>>& times) {
  for (auto& K : kernels_) {
    Result r = result_of(*K);
    for (auto& [name, t] : times) {  // a task's name, the kernel it ran (its last run's times)
      auto it = task_kernel_.find(name);
      if ((it != task_kernel_.end() ? it->second : name) == K->name) r.start = t.first, r.end = t.second;
    }
    check(K.get(), r);
    check_compute_bound(r);
    results_.push_back(r);
  }
  done_ = true;
}

nlohmann::json KernelLauncher::results_json() const {
  nlohmann::json a = nlohmann::json::array();
  for (auto& r : results_) {
    nlohmann::json j = {{"name", r.name},
                        {"blocks", r.blocks},
                        {"cores", r.cores},
                        {"start_ns", double(r.start) / 1000.0},
                        {"end_ns", double(r.end) / 1000.0},
                        {"checked", r.checked},
                        {"passed", r.passed},
                        {"detail", r.detail},
                        {"compared", r.comparison.count},
                        {"over_tolerance", r.comparison.over},
                        {"max_abs_err", r.comparison.max_abs},
                        {"max_rel_err", r.comparison.max_rel},
                        {"worst_index", r.comparison.worst},
                        {"tiling", r.tiling}};
    if (r.has_work) {
      const double bound = r.work.bound_ps(dram_bytes_per_ps_), took = double(r.end - r.start);
      j["ops"] = r.work.ops;
      j["ops_unit"] = r.work.unit;
      j["min_dram_bytes"] = r.work.bytes;
      j["roofline_ns"] = bound / 1000.0;
      j["bound"] = r.work.bound_kind(dram_bytes_per_ps_);
      j["roofline_fraction"] = took > 0 ? bound / took : 0.0;
    }
    a.push_back(std::move(j));
  }
  return a;
}

double KernelLauncher::work_bound_ps() const {
  double ps = 0;
  for (const auto& K : kernels_)
    if (K->lib) ps += K->work.bound_ps(dram_bytes_per_ps_);
  return ps;
}

KernelLauncher::Result KernelLauncher::result_of(const Kernel& K) {
  Result r;
  r.name = K.name;
  r.blocks = K.blocks;
  r.cores = K.cores;
  r.tiling = K.tiling;
  r.has_work = K.lib != nullptr;
  r.work = K.work;
  return r;
}

// A run that ends before its checks (a fault, a signal, an error) stops the reference the worker
// is computing, rather than wait for values nobody will read.
KernelLauncher::~KernelLauncher() { stopping_ = true; }

}  // namespace dvp::platform
