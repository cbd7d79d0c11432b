// SPDX-License-Identifier: MIT
#include "compiler.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <optional>
#include <set>
#include <sstream>

#include "aicore/isa.hpp"
#include "cache/l2_config.hpp"
#include "common/error.hpp"
#include "dram/dram_config.hpp"
#include "dvp_abi.h"  // DVP_MAX_TASKS: the runtime firmware's task table
#include "host_reference.hpp"
#include "kernels/library/elementwise.hpp"
#include "kernels/library/gemm.hpp"  // kFractalMaxRows
#include "kernels/library/slice.hpp"
#include "kernels/library/softmax.hpp"
#include "kernels/library/upsample.hpp"
#include "launcher.hpp"
#include "library.hpp"
#include "reference.hpp"
#include "schedule.hpp"
#include "tensor_file.hpp"
#include "tensor_layout.hpp"

namespace dvp::network {

namespace {

namespace fs = std::filesystem;
using Dims = std::vector<std::int64_t>;

// A tensor's shape as a kernel holds it: a scalar (rank 0) as the one element it is (a kernel's
// tensor has a dimension).
Dims held(const Dims& shape) { return shape.empty() ? Dims{1} : shape; }

enum class Layout { Nd, Nc1hwc0 };

// An activation as the compiled model holds it: its logical shape (the host reference's), how
// it is stored, and the kernel tensor that holds it (KERNEL.TENSOR); a graph input is placed by
// its first consumer, converted at load.
struct Value {
  Dims shape;  // one image's
  Layout layout = Layout::Nd;
  std::string dtype = "f16";
  std::vector<std::string> refs;  // per image: the kernel tensor that holds it ("": not placed yet)
  std::string input;              // a graph input (or a view of one): the reference value of its data
  // Views a reader folds into its own kernel: the stored tensor's last two axes are this value's
  // swapped (a Transpose a MatMul reads as B), or the value is the stored tensor times `scale` (a
  // Mul or Div by a constant before a Softmax).
  bool transposed = false;
  double scale = 1.0;
  // A flattening (1 x C.H.W) of the NC1HWC0 map of this stored shape (1 x C x H x W, H x W > 1): its
  // bytes are in the map's order, not the flattening's, so it is read only as a gemm's A whose
  // weight B has its rows put in the map's order (flat_b); empty for any other value.
  Dims map;
  // A Pad the Conv reading this value folds into its padding (top, left, bottom, right): the
  // value is the unpadded map; empty for any other value.
  Dims pads;
  // An NC1HWC0 feature map of more than one position (a 1 x 1 one, a global pool's output, holds
  // its channels in order: readable as rows).
  bool spatial_map() const { return layout == Layout::Nc1hwc0 && shape[2] * shape[3] != 1; }
};

constexpr std::size_t kMaxTasks = DVP_MAX_TASKS;

const char* layout_name(Layout l) { return l == Layout::Nc1hwc0 ? "nc1hwc0" : "nd"; }

// A tensor entry of a kernel in the scenario.
struct KTensor {
  std::string name, dtype, layout, alias, file, save;
  Dims shape;
  // The model's shape, where the stored one differs (a 1-D map's N x C x L; a scalar's, empty).
  std::optional<Dims> save_shape;
  std::int64_t groups;
  std::int64_t arena = -1;   // its offset in the activation arena (-1: its own memory)
  std::int64_t offset = 0;   // an alias: bytes into the tensor it aliases (a head's slice)
  bool graph_input = false;  // a graph input placed here (its file is the input's values)
  bool weight() const { return alias.empty() && !file.empty() && !graph_input; }
  KTensor(std::string n, std::string dt, std::string lay = "nd", std::string al = "", std::string f = "",
          std::string sv = "", Dims sh = {}, std::int64_t g = 1)
      : name(std::move(n)),
        dtype(std::move(dt)),
        layout(std::move(lay)),
        alias(std::move(al)),
        file(std::move(f)),
        save(std::move(sv)),
        shape(std::move(sh)),
        groups(g) {}
};

struct Kernel {
  Kernel(std::string n, std::string lib) : name(std::move(n)), library(std::move(lib)) {}
  std::string name, library;
  std::vector<std::pair<std::string, std::string>> shape;
  std::vector<KTensor> tensors;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> check;
  std::vector<std::string> check_inputs;
  std::vector<int> nodes;             // the ONNX nodes it runs, fused
  std::string output;                 // the tensor it writes (checked)
  std::vector<std::string> produced;  // every tensor it writes (TopK: its values and indices)
  std::string holds;                  // a tensor it holds whose slices other kernels write too (a Concat's output)
  bool writes(const std::string& t) const { return t == output || std::count(produced.begin(), produced.end(), t) > 0; }
  std::size_t image = 0, layer = 0;  // in a batch: its image, and its layer's place in the network
  std::size_t head = 0;  // of a node that runs as several kernels (a batched MatMul's heads, a pool's count)
  // A conv's or gemm's largest value before its epilogue's last steps (|y| + |bias| + |residual|,
  // from the host reference): an f16 epilogue's check allows two f16 steps of it (precision()).
  double magnitude = 0;
};

// The largest |x| of n values (NaN passed over): four maxima side by side, then theirs, as a chain
// of one at a time would be four times as long (a network's weights and activations, tens of
// millions of values); the largest of a set does not depend on the order it is taken in.
template <typename T>
double max_abs(const T* x, std::size_t n) {
  double m[4] = {0, 0, 0, 0};
  std::size_t e = 0;
  for (; e + 4 <= n; e += 4)
    for (std::size_t k = 0; k < 4; ++k) m[k] = std::max(m[k], std::fabs(double(x[e + k])));
  for (; e < n; ++e) m[0] = std::max(m[0], std::fabs(double(x[e])));
  return std::max(std::max(m[0], m[1]), std::max(m[2], m[3]));
}
template <typename V>
double max_abs(const V& v) {
  return max_abs(v.data(), v.size());
}

std::int64_t product(const Dims& d, std::size_t from = 0, std::size_t to = ~std::size_t(0)) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < std::min(to, d.size()); ++i) p *= d[i];
  return p;
}

using Attrs = NodeAttrs;

// An element's bytes in a kernel tensor's type (f16, f32, s32, s8, ...: the compiler's own).
std::int64_t elem_bytes(const std::string& dtype) {
  const auto t = aicore::dtype_from(dtype);
  if (!t) throw Error("network compiler: no element type '" + dtype + "'");
  return std::int64_t(aicore::dtype_bytes(*t));
}

// A tensor's bytes as stored (NC1HWC0: its channels in whole groups of C0; fractal_z: its rows in
// whole fractals), as the launcher lays it out.
std::uint64_t stored_bytes(const KTensor& t) {
  const std::uint64_t eb = std::uint64_t(elem_bytes(t.dtype));
  const bool fractal = t.layout.rfind("fractal_z", 0) == 0;
  if (t.layout == "nd" || (t.shape.size() < 3 && !fractal)) return std::uint64_t(product(t.shape)) * eb;
  const std::vector<std::uint64_t> shape(t.shape.begin(), t.shape.end());
  return platform::Nc1hwc0::named(t.layout, shape, unsigned(eb), std::uint64_t(t.groups)).stored() * eb;
}

// t's values broadcast to `to` by numpy's rules (trailing axes aligned, an axis of 1 repeated);
// false when they do not broadcast.
bool expand(const Tensor& t, const Dims& to, Tensor& out) {
  if (t.shape.size() > to.size()) return false;
  const std::size_t lead = to.size() - t.shape.size();
  Dims stride(to.size(), 0);
  for (std::int64_t a = std::int64_t(t.shape.size()) - 1, s = 1; a >= 0; s *= t.shape[std::size_t(a)], --a) {
    const std::int64_t d = t.shape[std::size_t(a)];
    if (d != 1 && d != to[lead + std::size_t(a)]) return false;
    stride[lead + std::size_t(a)] = d == 1 ? 0 : s;
  }
  out = Tensor{to, std::vector<float>(static_cast<std::size_t>(product(to)))};
  Dims at(to.size(), 0);
  for (float& v : out.data) {
    std::int64_t from = 0;
    for (std::size_t a = 0; a < to.size(); ++a) from += at[a] * stride[a];
    v = t.data[std::size_t(from)];
    for (std::size_t a = to.size(); a-- > 0 && ++at[a] == to[a];) at[a] = 0;
  }
  return true;
}

// A .npy file's values as f32, in its shape.
Tensor read_npy(const std::string& path) {
  const platform::NpyHeader h = platform::read_npy_header(path);
  Tensor t;
  t.shape.assign(h.shape.begin(), h.shape.end());
  t.data.resize(h.elements());
  platform::read_tensor_data(path, &h, aicore::DType::F32, h.elements(), true,
                             reinterpret_cast<std::uint8_t*>(t.data.data()));
  return t;
}

class Compiler {
 public:
  Compiler(const Model& m, const CompileOptions& o);
  Compiled run();

 private:
  using Lowering = bool (Compiler::*)(int);
  static const std::map<std::string, Lowering>& lowerings();
  bool lower(int i, Lowering by);
  [[noreturn]] void fail(int i, const std::string& why) const;
  const onnx::NodeProto& node(int i) const { return g_.node(i); }
  // Node i's attributes; a 1-D window op's (its input N x C x L) as its 2-D form's.
  Attrs attrs(int i) const { return Attrs{node(i), one_d_window(node(i), ref_.at(node(i).input(0)).shape.size())}; }
  void read_inputs();
  void refuse_empty() const;
  void check_input_shape(const onnx::ValueInfoProto& in, const Tensor& t, const std::string& file) const;
  void check_npy_type(const onnx::ValueInfoProto& in, const platform::NpyHeader& h, const Tensor& t,
                      const std::string& file) const;
  static std::optional<std::string> npy_integer(const std::string& file, const platform::NpyHeader& h, std::size_t e);
  void check_output_shapes();
  bool available(const std::string& v) const;
  int sole_consumer(const std::string& v) const;
  bool is_weight(const std::string& v) const { return init_.count(v) > 0; }
  // A weight, or a graph input not placed yet: its values are known when the model is compiled,
  // and converted at load as a framework converts what it hands the AI Core.
  bool constant(const std::string& v) const {
    auto it = values_.find(v);
    return is_weight(v) || (it != values_.end() && !it->second.input.empty() && ref(v).empty() && batch_ == 1);
  }
  const Tensor& weight(int i, int input) const;
  KTensor weight_tensor(int i, const Kernel& k, KTensor t, const Tensor& data);
  // The kernel tensor holding v for the image being lowered ("": not placed).
  const std::string& ref(const std::string& v) const { return values_.at(v).refs[image_]; }
  Dims image_shape(const std::string& v) const;
  // v's shape for one image as stored in `layout`: an NC1HWC0 map of one dimension (1 x C x L)
  // as 1 x C x 1 x L.
  Dims stored_shape(const std::string& v, Layout layout) const {
    return layout == Layout::Nc1hwc0 ? as_2d(image_shape(v)) : image_shape(v);
  }
  Tensor image_data(const std::string& v) const;
  std::string kernel_name(int i, const std::string& tail = "");
  std::string write(const std::string& file, const Tensor& t, const Dims& shape);
  // A file of the compiled model as the scenario names it: relative to its folder, or absolute
  // (a scenario's model: key, whose scenario is elsewhere).
  std::string path_of(const std::string& rel) const {
    return o_.absolute_paths ? (fs::absolute(o_.dir) / rel).string() : rel;
  }
  KTensor use(int i, Kernel& k, const std::string& v, const std::string& name, Layout want, bool c04 = false,
              const std::string& dtype = "f16", bool folds = false);
  void set_view(int i, Value v);
  void produce(Kernel& k, const std::string& v, KTensor t, Layout layout);
  // A graph output no layer reads is f32 (as the model gives it); the rest f16 (the next layer's).
  std::string out_dtype(const std::string& v) const {
    return outputs_.count(v) && !consumers_.count(v) ? "f32" : "f16";
  }
  void place(Kernel k);
  void precision(Kernel& k) const;
  bool finish(int i, Kernel k) {  // node i lowered as k
    done_[std::size_t(i)] = true;
    place(std::move(k));
    return true;
  }
  // Lowerings: false when an input is not produced yet (the node is tried again later).
  bool conv(int i);
  // What a conv2d layer computes: a Conv's own, or a ConvTranspose's as a conv (conv_transpose).
  struct ConvSpec {
    std::string x;  // the input value
    Tensor w;       // M x C / groups x kh x kw
    Dims s, d, p;   // strides, dilations, pads (top, left, bottom, right)
    std::int64_t groups = 1;
  };
  bool conv_layer(int i, ConvSpec c);
  bool conv_transpose(int i);
  std::string insert_zeros(int i, const std::string& v, const Dims& s, const Dims& after);
  bool shortcut_first(int i) const;
  struct Chain {
    int bn = -1, add = -1, act = -1;
    bool relu6 = false;  // act is Clip(0, 6) (MobileNet's ReLU6), else Relu or Clip(0, none)
    std::string residual, out;
  };
  Chain conv_chain(int i) const;
  bool clip_bounds(int i, float& lo, float& hi) const;
  bool conv_scale_bias(int i, int bn, std::vector<double>& sc, std::vector<double>& b) const;
  bool fold_scale(int i, int bn, Tensor& w) const;
  void conv_epilogue(int i, int bn, Kernel& k, std::int64_t cout, bool folded);
  void bn_fold(int bn, std::vector<double>& scale, std::vector<double>& bias) const;
  void epilogue_tensors(int i, Kernel& k, const std::vector<double>& sc, const std::vector<double>& b, bool scaled,
                        std::int64_t cout);
  bool batch_norm(int i);
  bool bn_conv(int i, const std::vector<double>& sc, const std::vector<double>& b);
  Dims conv_pads(int i, const Dims& x, const Dims& k, const Dims& s, const Dims& d) const;
  bool pool(int i);
  bool global_pool(int i, const std::string& x, const std::string& y, bool max);
  Tensor pool_window(int i, const Dims& x, Kernel& k) const;
  double pool_atol(int i) const;
  void pool_counts(int i, const Tensor& counts);
  bool gemm(int i);
  struct GemmPlan {
    std::int64_t m = 0, k = 0, n = 0, heads = 1;  // heads: a batched MatMul's gemms
    bool bt = false;                              // B stored n x k
    bool matrix_c = false;                        // C not a row: added after (gemm_matrix_c)
    std::string a;                                // the value read as A (gemm_a)
    int bias_node = -1, bias_input = -1, act = -1;
    float alpha = 1.0f, beta = 1.0f;
    std::string out;  // the value the fused chain writes
  };
  GemmPlan gemm_plan(int i, const std::string& av) const;
  std::string gemm_a(int i);
  void gemm_matrix_c(int i, const GemmPlan& p);
  void gemm_head(int i, const GemmPlan& p, std::int64_t h);
  std::int64_t flat_b(int i, Kernel& k, const GemmPlan& p);
  KTensor fractal_b(int i, const Kernel& k, const GemmPlan& p, std::int64_t h);
  std::string cast_to(int i, const std::string& v, const std::string& to);
  std::string real_valued(int i, const std::string& v);
  bool top_k(int i);
  bool gather(int i);
  KTensor slice(KTensor t, std::int64_t heads, std::int64_t h, const Dims& shape) const;
  KTensor gemm_operand(int i, Kernel& k, int j, const std::string& name, float factor, const Dims& shape,
                       std::int64_t heads, std::int64_t h);
  bool transpose(int i);
  bool layer_norm(int i);
  bool concat(int i);
  void concat_copy(int i, int j, Layout layout, const std::string& dt, std::int64_t& offset);
  bool concat_runs(int i, std::int64_t axis, const std::string& dt) const;
  void concat_aicpu(int i, std::int64_t axis, const std::string& dt);
  bool elementwise(int i);
  bool scale_view(int i);
  struct Operand {
    std::string value;       // "": the constant
    Tensor constant;         // out's shape per image
    bool broadcast = false;  // value is an activation of another shape, broadcast to out's (expanded)
  };
  Operand operand(int i, int j, const Dims& full) const;
  std::pair<Layout, std::string> placed_form(const std::vector<std::string>& values) const;
  bool feeds_feature_map(const std::string& v) const;
  using Params = std::vector<std::pair<std::string, std::string>>;  // shape and check keys
  void elementwise_kernel(int i, std::size_t head, const std::string& tail, const std::string& op,
                          const std::vector<Operand>& in, const std::string& out, const Params& params = {},
                          const std::vector<int>& fused = {});
  bool scalar_op(int i);
  bool where_scalar(int i);
  bool channel_gate(int i);
  std::string expanded(int i, const std::string& v, const Dims& full, std::size_t head, const std::string& out = "",
                       const std::string& dtype = "f32");
  void expand_operands(int i, std::vector<Operand>& in, const Dims& full);
  void expand_kernel(int i, const std::string& x, const std::string& y, const Dims& shape, const Dims& runs,
                     std::size_t head, const std::string& dtype);
  bool expand_node(int i);
  // Node n's input j as the host reference holds it (nullptr: absent), for the plans' constants.
  std::function<const Tensor*(int)> inputs_of(const onnx::NodeProto& n) const {
    return [this, &n](int j) { return j < n.input_size() && !n.input(j).empty() ? &ref_.at(n.input(j)) : nullptr; };
  }
  bool slice_node(int i);
  bool split_node(int i);
  bool reaches_map(const std::string& v, int depth = 0) const;
  bool holds_an_output(const Value& v, const std::string& except) const;
  void output_copy(int i, const Value& v);
  Layout slice_placement(const std::string& x) const;
  void slice_axes(int i, const std::string& x, const std::string& out, const std::vector<SliceAxis>& plan,
                  std::size_t head, const std::string& tail);
  struct SliceIo {
    std::string x, y;
    Layout place;  // where x is placed, when it is a graph input not placed yet
  };
  void slice_copy(int i, const SliceIo& io, std::size_t axis, const SliceAxis& a, std::size_t head,
                  const std::string& tail);
  void map_axis(int i, const Dims& s, const SliceAxis& a, std::size_t& axis, std::int64_t& start, std::int64_t& count,
                Dims& dims) const;
  std::string placed_type(const std::string& v) const;
  bool power(int i);
  bool silu(int i);
  // GELU as five nodes (find_gelus): each member -> its pattern, lowered as one gelu kernel.
  struct Gelu {
    int anchor;               // the Erf or the Tanh: the kernel's node
    const char* op = "gelu";  // or gelu_tanh
    std::string x, out;
    std::vector<int> nodes;
  };
  std::vector<Gelu> gelus_;
  std::map<int, std::size_t> gelu_;
  void fold_constant_nodes();
  void find_gelus();
  bool match_gelu(int erf, Gelu& g) const;
  bool match_gelu_tanh(int tanh, Gelu& g) const;
  // Softmax over the last axis of a Where of the scores by a constant condition and a constant
  // fill (an attention's causal or padding mask, find_masked_softmaxes): one softmax kernel that
  // reads the condition as its mask, broadcast over the heads.
  struct MaskedSoftmax {
    int where, softmax;
    std::int64_t mask_rows, cols;
    std::vector<int> nodes;
  };
  std::vector<MaskedSoftmax> masked_softmaxes_;
  std::map<int, std::size_t> masked_softmax_;
  void find_masked_softmaxes();
  bool match_masked_softmax(int softmax, MaskedSoftmax& p) const;
  bool masked_softmax(std::size_t pattern);
  std::vector<std::string> pointwise_sources(const std::string& v) const;
  std::optional<double> pointwise_at(const std::string& v, const std::string& x, double a, std::set<int>& nodes,
                                     int depth) const;
  bool gelu(std::size_t pattern);
  // LayerNormalization written out (find_layer_norms): ReduceMean, Sub, Pow 2, ReduceMean, Add
  // epsilon, Sqrt, Div (+ Mul gamma, + Add beta), each member -> its pattern: one layernorm kernel.
  struct LayerNorm {
    int mean = -1;
    std::string x, out, gamma, beta;
    double epsilon = 0;
    std::vector<int> nodes;
  };
  std::vector<LayerNorm> layer_norms_;
  std::map<int, std::size_t> layer_norm_;
  void find_layer_norms();
  bool match_layer_norm(int mean, LayerNorm& p) const;
  bool layer_norm_pattern(std::size_t pattern);
  bool reduce(int i);
  bool spatial_reduce(int i);
  bool only_reduce_axes(const std::string& v) const;
  std::vector<bool> reduced_axes(int i, std::size_t rank) const;
  std::pair<std::int64_t, std::int64_t> reduced_run(int i, const Dims& x) const;
  bool axes_reduce(int i, const std::string& x, const std::string& y, const std::string& op, std::size_t head = 0);
  bool composite_reduce(int i);
  bool layernorm_kernel(int i, const std::string& x, const std::string& out, std::int64_t axis, double epsilon,
                        const Tensor* gamma, const Tensor* beta, const std::vector<int>& fused);
  double constant_scalar(const std::string& v) const;  // NaN unless a constant of one element
  Params activation_params(int i) const;
  void clear_pads(int i, const std::string& op, const Params& params);
  bool softmax(int i);
  bool softmax_channels(int i);
  bool view(int i);
  bool copy_output(int i);
  bool cast(int i);
  bool pad(int i);
  bool resize(int i);
  bool whole_factors(int i, const Dims& full, const ResizePlan& plan);
  void finish_outputs();
  std::map<std::string, std::string> output_files() const;
  struct ArenaBuffer {
    KTensor* t;
    std::vector<int> touched, writers;  // the kernels that read or write it; that write it
    bool loaded, kept = false;          // a graph input (there before the run); a graph output (after it)
    std::uint64_t bytes, offset = 0;    // bytes: in whole pages of 4096; offset: plan_arena's (else t->arena)
    std::string ref;                    // KERNEL.TENSOR
  };
  std::map<std::string, ArenaBuffer> arena_buffers();
  void plan_arena();
  struct Discard {
    std::string tensor;  // KERNEL.TENSOR, in the arena
    std::uint64_t offset, bytes;
  };
  void plan_discards();
  const std::vector<Discard>& discards(std::size_t j) const;
  void drop_small_discards(bool automatic);
  void discard_range(const std::vector<const ArenaBuffer*>& placed, std::uint64_t from, std::uint64_t to);
  void order_batch();
  std::vector<Scheduled> task_streams();  // one stream if the task table cannot hold the events
  struct PreloadTask {
    std::string tensor;        // KERNEL.TENSOR
    std::uint64_t bytes;       // this many bytes from offset; 0: all of it
    std::uint64_t offset = 0;  // from this many bytes in
    bool prefetch = false;     // at the engine's low priority (DVP_TASK_PREFETCH)
  };
  const std::vector<PreloadTask>& preloads(std::size_t j) const;
  std::uint64_t weight_bytes(std::size_t j) const;
  void plan_preloads();
  void plan_heads(const std::vector<std::size_t>& reached, std::uint64_t room);
  std::size_t prefetch_start(std::size_t at, std::size_t b, std::uint64_t bytes,
                             const std::vector<std::uint64_t>& live) const;
  std::vector<std::uint64_t> live_activations();
  void mark_weights_once();
  void fit_preloads();
  bool fills_cores(const Kernel& k);
  void emit_tasks(YAML::Emitter& y) const;
  std::vector<int> firmware_cores() const;
  void emit(const std::string& path) const;
  void emit_network(YAML::Emitter& y) const;

  const Model& m_;
  const CompileOptions& o_;
  // A batch of N runs as N images: each layer is N kernels, one per image, the weights in the
  // first image's kernel's memory (order_batch decides the order the kernels run in).
  std::size_t batch_ = 1, image_ = 0;
  // A node's kernel (a head of it) -> the first image's kernel that runs it, and its layer.
  std::map<std::pair<int, std::size_t>, std::pair<std::string, std::size_t>> first_kernel_;
  std::size_t layers_ = 0;
  const onnx::GraphProto& g_;
  std::map<std::string, const onnx::TensorProto*> init_;
  std::map<std::string, std::vector<int>> consumers_;
  std::map<std::string, int> producer_;  // a node output -> its node
  std::set<std::string> outputs_;
  Tensors ref_;  // the host reference: the inputs and every node's outputs
  std::map<std::string, Value> values_;
  std::vector<bool> done_;
  std::set<std::string> names_;
  std::map<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>, bool> fills_cores_;
  std::vector<Kernel> kernels_;
  std::map<std::pair<int, std::size_t>, std::size_t> casts_;  // per node and image: casts placed for it
  std::vector<Scheduled> sched_;                              // each kernel's stream and events
  std::vector<std::vector<PreloadTask>> preload_at_;          // the weights preloaded as each kernel starts
  std::vector<std::vector<Discard>> discard_at_;              // the arena's ranges dropped as each kernel ends
  Compiled out_;
};

Compiler::Compiler(const Model& m, const CompileOptions& o) : m_(m), o_(o), g_(m.graph()) {
  for (const auto& t : g_.initializer()) init_[t.name()] = &t;
  for (int i = 0; i < g_.node_size(); ++i)
    for (const auto& in : node(i).input())
      if (!in.empty()) consumers_[in].push_back(i);
  for (int i = 0; i < g_.node_size(); ++i)
    for (const auto& out : node(i).output()) producer_[out] = i;
  for (const auto& v : g_.output()) outputs_.insert(v.name());
  if (!o.outputs.empty()) outputs_ = std::set<std::string>(o.outputs.begin(), o.outputs.end());
  done_.assign(std::size_t(g_.node_size()), false);
  batch_ = std::max<std::uint64_t>(1, o.batch);
}

void Compiler::fail(int i, const std::string& why) const {
  const auto& n = node(i);
  throw Error(m_.path + ": node '" + (n.name().empty() ? "#" + std::to_string(i) : n.name()) + "' (" + n.op_type() +
                  "): " + why,
              kExitConfig);
}

// The graph's inputs (initializers aside): from the files given, or seeded uniform [-1, 1) (an
// integer one with whole numbers).
void Compiler::read_inputs() {
  std::uint64_t state = o_.seed * 0x9E3779B97F4A7C15ull + 1;
  for (const auto& in : g_.input()) {
    if (init_.count(in.name())) continue;
    Tensor t;
    if (auto f = o_.inputs.find(in.name()); f != o_.inputs.end()) {
      const bool npy = platform::is_npy_path(f->second);
      t = npy ? read_npy(f->second) : read_tensor_file(f->second, in.type().tensor_type().elem_type());
      check_input_shape(in, t, f->second);
      if (npy) check_npy_type(in, platform::read_npy_header(f->second), t, f->second);
    } else {
      for (const auto& d : in.type().tensor_type().shape().dim()) {
        if (!d.has_dim_value() && t.shape.empty()) {  // a symbolic batch: --batch's (default 1)
          t.shape.push_back(std::int64_t(batch_));
          continue;
        }
        if (!d.has_dim_value())
          throw Error(m_.path + ": input '" + in.name() + "' has a symbolic dimension '" + d.dim_param() +
                          "': give the input as a file (--input " + in.name() + "=FILE.npy)",
                      kExitConfig);
        t.shape.push_back(d.dim_value());
      }
      if (batch_ > 1 && !t.shape.empty()) t.shape[0] = std::int64_t(batch_);
      t.data.resize(t.elements());
      // An integer input (ids, pixels) gets whole numbers in [0, 16) (bool: 0 or 1): a fraction
      // would be truncated by the host reference and rounded by the platform's conversion.
      const int type = in.type().tensor_type().elem_type();
      const double whole = type == onnx::TensorProto::BOOL ? 2.0 : integer_type(type) ? 16.0 : 0.0;
      for (float& x : t.data) {  // splitmix64: the same values on every host
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        const double u = double((z ^ (z >> 31)) >> 40) / double(1ull << 24);  // [0, 1)
        x = float(whole > 0 ? std::floor(u * whole) : 2.0 * u - 1.0);
      }
    }
    if (t.elements() == 0 && !only_reduce_axes(in.name()))  // a model's right, not the platform's
      throw Error(m_.path + ": input '" + in.name() + "' of shape " + t.shape_str() +
                      " has no elements (a dimension of 0): the platform's kernels take at least one",
                  kExitConfig);
    ref_[in.name()] = t;
    values_[in.name()] = Value{
        image_shape(in.name()), Layout::Nd, "f16", std::vector<std::string>(batch_), in.name(), false, 1.0, {}, {}};
  }
  for (const auto& [name, file] : o_.inputs)
    if (!values_.count(name))
      throw Error("--input " + name + ": " + m_.path + " has no input of that name", kExitConfig);
}

// A file given for a graph input holds the shape the model declares (a symbolic dimension
// takes any size).
void Compiler::check_input_shape(const onnx::ValueInfoProto& in, const Tensor& t, const std::string& file) const {
  const auto& dims = in.type().tensor_type().shape().dim();
  bool same = dims.size() == int(t.shape.size());
  for (int d = 0; same && d < dims.size(); ++d)
    same = !dims[d].has_dim_value() || dims[d].dim_value() == t.shape[std::size_t(d)] ||
           (d == 0 && batch_ > 1 && dims[0].dim_value() == 1 && t.shape[0] == std::int64_t(batch_));
  if (same) return;
  std::string want;
  for (const auto& d : dims)
    want += (want.empty() ? "" : "x") + (d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param());
  throw Error("--input " + in.name() + ": " + file + " holds a tensor of shape " + t.shape_str() + ", " + m_.path +
                  " takes " + want,
              kExitConfig);
}

// A .npy input against the model's type (a .pb must be of it: read_tensor_file). A float input
// takes any numeric array (converted, as the platform holds it in f16). An integer one (token ids,
// pixels) takes integer and bool arrays only, a float array's fractions being cut by the host
// reference and rounded by the platform, and values its type holds that f32 holds exactly (ids
// to 2^24): ONNX Runtime refuses an array of another type altogether.
void Compiler::check_npy_type(const onnx::ValueInfoProto& in, const platform::NpyHeader& h, const Tensor& t,
                              const std::string& file) const {
  using T = onnx::TensorProto;
  const int type = in.type().tensor_type().elem_type();
  if (!integer_type(type) && type != T::BOOL) return;
  const std::string name = T::DataType_Name(T::DataType(type));
  const auto refuse = [&](const std::string& why) {
    throw Error("--input " + in.name() + ": " + file + " " + why + "; " + m_.path + " takes " + name, kExitConfig);
  };
  if (h.kind != 'i' && h.kind != 'u' && h.kind != 'b')
    refuse("holds " + h.descr +
           " values (a float array's fractions would be cut): save it as an integer or bool "
           "array");
  static const std::map<int, std::pair<double, double>> kRange = {{T::UINT8, {0, 255}},
                                                                  {T::INT8, {-128, 127}},
                                                                  {T::UINT16, {0, 65535}},
                                                                  {T::INT16, {-32768, 32767}},
                                                                  {T::BOOL, {0, 1}},
                                                                  {T::UINT32, {0, 0x1p24 - 1}},
                                                                  {T::UINT64, {0, 0x1p24 - 1}},
                                                                  {T::INT32, {1 - 0x1p24, 0x1p24 - 1}},
                                                                  {T::INT64, {1 - 0x1p24, 0x1p24 - 1}}};
  const auto r = kRange.find(type);
  if (r == kRange.end()) return;
  const auto num = [](double v) {
    std::ostringstream o;
    o.precision(9);
    o << v;
    return o.str();
  };
  for (std::size_t e = 0; e < t.data.size(); ++e)
    if (!(t.data[e] >= r->second.first && t.data[e] <= r->second.second))
      refuse("holds " + npy_integer(file, h, e).value_or(num(double(t.data[e]))) + " at element " + std::to_string(e) +
             ", outside " + num(r->second.first) + " .. " + num(r->second.second) +
             " (the type's range, or f32's exact integers)");
}

// Element e of an integer .npy as the file holds it: the tensor read holds it in f32, where 2^24 + 1
// is 16777216, and a refusal names the value the user wrote. Nothing if it cannot be read.
std::optional<std::string> Compiler::npy_integer(const std::string& file, const platform::NpyHeader& h, std::size_t e) {
  if ((h.kind != 'i' && h.kind != 'u') || h.itemsize > 8 || !h.itemsize) return std::nullopt;
  std::ifstream f(file, std::ios::binary);
  std::uint8_t b[8] = {};
  if (!f.seekg(std::streamoff(h.data_offset + e * h.itemsize)) ||
      !f.read(reinterpret_cast<char*>(b), std::streamsize(h.itemsize)))
    return std::nullopt;
  std::uint64_t v = 0;
  for (unsigned i = 0; i < h.itemsize; ++i) v |= std::uint64_t(b[h.big_endian ? h.itemsize - 1 - i : i]) << (8 * i);
  if (h.kind == 'u') return std::to_string(v);
  const unsigned shift = 64 - 8 * h.itemsize;  // sign-extend from the element's width
  return std::to_string(std::int64_t(v << shift) >> shift);
}

// A graph output whose shape by its nodes' definitions differs from the one the model declares
// (onnx 1.12's shape inference gives ConvTranspose with SAME padding and k x d < stride one row
// and column fewer than the operator's definition): the run computes the definition's, and
// says so. A batch's first dimension where the model declares 1 is no difference.
void Compiler::check_output_shapes() {
  for (const auto& o : g_.output()) {
    if (!ref_.count(o.name()))  // (ONNX's checker lets a graph output name nothing)
      throw Error(m_.path + ": graph output '" + o.name() + "' is no node's output, initializer or graph input",
                  kExitConfig);
    const auto& dims = o.type().tensor_type().shape().dim();
    const Dims& have = ref_.at(o.name()).shape;
    bool same = dims.size() == int(have.size()) || dims.empty();
    for (int d = 0; same && d < dims.size(); ++d)
      same = !dims[d].has_dim_value() || dims[d].dim_value() == have[std::size_t(d)] ||
             (d == 0 && batch_ > 1 && dims[0].dim_value() == 1 && have[0] == std::int64_t(batch_));
    if (same) continue;
    std::string want;
    for (const auto& d : dims)
      want += (want.empty() ? "" : "x") + (d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param());
    out_.notes.push_back(m_.path + ": graph output '" + o.name() + "' is " + Tensor{have, {}}.shape_str() +
                         " by its nodes' definitions; the model declares " + want + " (the run computes " +
                         Tensor{have, {}}.shape_str() + ")");
  }
}

bool Compiler::available(const std::string& v) const {
  auto it = values_.find(v);
  return it != values_.end() && (!it->second.refs[image_].empty() || !it->second.input.empty());
}

// Input j of node n is a Reduce op's axes, which may be empty: no axes are a meaning of their own
// (all of them, or none with noop_with_empty_axes), not an empty tensor.
bool reduce_axes(const onnx::NodeProto& n, int j) { return j == 1 && n.op_type().rfind("Reduce", 0) == 0; }

// The layers that read a feature map (NC1HWC0) as their input 0: a conv, a pool.
bool map_reader(const onnx::NodeProto& n) {
  static const std::set<std::string> kMapReaders = {"Conv", "MaxPool", "AveragePool", "GlobalAveragePool",
                                                    "GlobalMaxPool"};
  return kMapReaders.count(n.op_type()) > 0;
}

// Whether every node reading v reads it as a Reduce op's axes.
bool Compiler::only_reduce_axes(const std::string& v) const {
  bool read = false;
  for (const auto& n : g_.node())
    for (int j = 0; j < n.input_size(); ++j) {
      if (n.input(j) != v) continue;
      if (!reduce_axes(n, j)) return false;
      read = true;
    }
  return read;
}

// v's shape for one image: the batch (the first dimension) is 1.
Dims Compiler::image_shape(const std::string& v) const {
  Dims d = ref_.at(v).shape;
  if (batch_ == 1) return d;
  if (d.empty() || d[0] != std::int64_t(batch_))
    throw Error(m_.path + ": '" + v + "' is " + ref_.at(v).shape_str() + ": with a batch of " + std::to_string(batch_) +
                    ", every activation's first dimension is the batch",
                kExitConfig);
  d[0] = 1;
  return d;
}

// The values of v for the image being lowered.
Tensor Compiler::image_data(const std::string& v) const {
  const Tensor& all = ref_.at(v);
  Tensor t{image_shape(v), {}};
  const std::size_t n = all.data.size() / batch_;
  t.data.assign(all.data.begin() + std::ptrdiff_t(image_ * n), all.data.begin() + std::ptrdiff_t((image_ + 1) * n));
  return t;
}

// A weight tensor of node i's layer: written for the first image's kernel; the other images'
// kernels read the same memory.
KTensor Compiler::weight_tensor(int, const Kernel& k, KTensor t, const Tensor& data) {
  if (image_ == 0) {
    t.file = write(k.name + "." + t.name, data, t.shape);
    return t;
  }
  return KTensor{t.name, t.dtype, "nd", first_kernel_.at({k.nodes.front(), k.head}).first + "." + t.name};
}

// The one node that reads v, when v is not also a graph output; else -1.
int Compiler::sole_consumer(const std::string& v) const {
  auto it = consumers_.find(v);
  if (outputs_.count(v) || it == consumers_.end() || it->second.size() != 1) return -1;
  return it->second[0];
}

const Tensor& Compiler::weight(int i, int input) const {
  const auto& n = node(i);
  if (n.input_size() <= input || !constant(n.input(input)))
    fail(i, "input " + std::to_string(input) + " must be a weight (an initializer or a graph input) to be lowered");
  return ref_.at(n.input(input));
}

std::string Compiler::kernel_name(int i, const std::string& tail) {
  std::string s = node(i).name().empty() ? node(i).op_type() + "_" + std::to_string(i) : node(i).name();
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  // Reports show a task's first 23 characters (dvp_task's name): a longer name is cut, keeping
  // its tail (a head: _h3), its image and the number that makes it unique.
  const std::string image = tail + (batch_ > 1 ? "_b" + std::to_string(image_) : "");
  auto fit = [&](const std::string& end) { return s.substr(0, std::min(s.size(), 23 - end.size())) + end; };
  std::string name = fit(image);
  for (int k = 2; names_.count(name); ++k) name = fit("_" + std::to_string(k) + image);
  names_.insert(name);
  return name;
}

// Writes t's values (f32, in `shape`) under tensors/; returns the path the scenario gives.
std::string Compiler::write(const std::string& file, const Tensor& t, const Dims& shape) {
  const std::string rel = "tensors/" + file + ".npy";
  std::vector<std::uint64_t> s(shape.begin(), shape.end());
  platform::write_tensor_file((fs::path(o_.dir) / rel).string(), aicore::DType::F32, s,
                              reinterpret_cast<const std::uint8_t*>(t.data.data()), t.data.size());
  return path_of(rel);
}

// Kernel k's tensor `name` reading value v in layout `want`: an alias of the kernel tensor that
// holds it, or a graph input placed here (converted to `dtype` and the layout at load), which later
// layers then read from here. A view of it to fold (transposed, scaled) is the reader's to fold
// (`folds`), else an error.
KTensor Compiler::use(int i, Kernel& k, const std::string& v, const std::string& name, Layout want, bool c04,
                      const std::string& dtype, bool folds) {
  Value& val = values_.at(v);
  KTensor t{name, val.dtype};
  if (!folds && val.transposed)
    fail(i, "input '" + v + "' is a Transpose of its last two axes, lowered only as a MatMul's B (read transposed)");
  if (!folds && val.scale != 1.0)
    fail(i, "input '" + v + "' is scaled by a constant (Mul or Div), lowered only into the Softmax that reads it");
  if (!val.pads.empty() && !(k.library == "conv2d" && name == "x"))
    fail(i, "input '" + v + "' is a Pad, lowered only as the padding of the Conv that reads it");
  if (!val.map.empty())
    fail(i, "input '" + v + "' flattens an NC1HWC0 feature map of " + std::to_string(val.map[2]) + " x " +
                std::to_string(val.map[3]) +
                ": it is read only as the A of a Gemm or MatMul whose B is a weight (B's rows put in the map's "
                "order); a layout change for other readers is not lowered");
  if (!val.refs[image_].empty()) {
    if (val.layout != want)
      fail(i, "input '" + v + "' is stored " + (val.layout == Layout::Nd ? "ND" : "NC1HWC0") +
                  ", this layer reads it " + (want == Layout::Nd ? "ND" : "NC1HWC0") +
                  " (a layout change between them is not lowered)");
    t.alias = val.refs[image_];
    return t;
  }
  if (want == Layout::Nc1hwc0) {
    val.shape = as_2d(val.shape);  // 1 x C x L: stored as 1 x C x 1 x L
    if (val.shape.size() != 4 || val.shape[0] != 1) fail(i, "input '" + v + "' is not 1 x C x H x W or 1 x C x L");
    t.layout = c04 ? "nc1hwc0_c04" : "nc1hwc0";
  }
  t.dtype = dtype, t.shape = val.shape;
  t.file = write("input." + k.name + "." + name, image_data(val.input), held(val.shape));
  t.graph_input = true;
  val.refs[image_] = k.name + "." + name, val.layout = want, val.dtype = dtype;
  return t;
}

// Kernel k writes value v as its tensor t (the layer's output).
void Compiler::produce(Kernel& k, const std::string& v, KTensor t, Layout layout) {
  Value& val = values_[v];
  val.shape = stored_shape(v, layout);
  val.layout = layout, val.dtype = t.dtype;
  val.refs.resize(batch_), val.refs[image_] = k.name + "." + t.name, val.input.clear();
  val.transposed = false, val.scale = 1.0;
  if (t.shape.empty()) t.shape = val.shape;
  if (layout == Layout::Nc1hwc0) t.layout = "nc1hwc0";
  if (layout == Layout::Nc1hwc0 && image_shape(v).size() == 3) t.save_shape = image_shape(v);  // saved as 1 x C x L
  k.output = t.name;
  k.produced.push_back(t.name);
  k.tensors.push_back(t);
  out_.activation_bytes += stored_bytes(t);
}

std::string num(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}
std::string num(std::int64_t v) { return std::to_string(v); }

// A conv2d's or gemm's vector epilogue (bias, scale, shortcut, ReLU6) in f16 where its output is
// f16 and the precision mode is force_fp16, as ATC's default runs an fp16 network's vector work.
//
// Not with a scale per channel: a batch norm's scale that fold_scale kept out of the weights (they
// would leave f16's range) multiplies sums that may be past 65504 themselves, which FixPipe would
// round to inf before the scale. The check: the reference rounds its double sum where the kernel
// rounds its f32 one; where that sum lies within the f32 sum's error of an f16 tie they round to
// neighbours, one f16 step of the sum apart before the bias or shortcut cancels it (about one
// element in 10^5): the check allows two steps of the layer's magnitude.
void Compiler::precision(Kernel& k) const {
  if (o_.precision_mode != "force_fp16" || (k.library != "conv2d" && k.library != "gemm")) return;
  bool f16 = false, epilogue = false, scale = false;
  for (const auto& [key, v] : k.shape) {
    f16 = f16 || (key == "out" && v == "f16");
    scale = scale || (key == "channel_scale" && v == "true");
    epilogue = epilogue || ((key == "bias" || key == "residual" || key == "relu6") && v == "true");
  }
  if (!f16 || !epilogue || scale) return;
  k.shape.push_back({"epilogue", "f16"});
  if (k.library == "gemm" && !k.check.empty()) k.check.push_back({"epilogue", "f16"});  // a conv2d's takes its shape
  const double step = k.magnitude > 0 ? std::exp2(std::floor(std::log2(k.magnitude)) - 9) : 0;  // two f16 steps
  for (auto& [key, v] : k.check)
    if (key == "atol" && std::stod(v) < step) v = num(step);
}

void Compiler::place(Kernel k) {
  precision(k);
  // A window the conv2d and pool kernels' shape keys cannot hold (their range, 1 to 255; pads 0
  // to 255) is the node's error here, not its model.yaml's when it runs.
  for (const auto& [key, v] : k.shape)
    for (const char* w : {"kh", "kw", "stride_h", "stride_w", "dil_h", "dil_w", "pad_t", "pad_b", "pad_l", "pad_r"})
      if (key == w && std::stoll(v) > 255)
        fail(k.nodes.front(), "the " + k.library + " kernel takes " + key + " up to 255; this window needs " + v);
  // A graph input this kernel placed and reads again (Add(x, x)): one tensor, named twice. (A slice
  // of a tensor it holds, a Concat's first copy, has a shape of its own and stays.)
  for (auto t = k.tensors.begin(); t != k.tensors.end();) {
    if (t->alias.rfind(k.name + ".", 0) != 0 || !t->shape.empty()) {
      ++t;
      continue;
    }
    const std::string to = t->alias.substr(k.name.size() + 1), from = t->name;
    for (auto* names : {&k.args, &k.check_inputs}) std::replace(names->begin(), names->end(), from, to);
    t = k.tensors.erase(t);
  }
  // The images of a node's kernel share its layer.
  const std::pair<int, std::size_t> key{k.nodes.front(), k.head};
  if (image_ == 0) first_kernel_[key] = {k.name, layers_++};
  k.image = image_, k.layer = first_kernel_.at(key).second;
  CompiledLayer l{k.name, k.library, {}, {}, ""};
  for (int j : k.nodes) l.nodes.push_back(node(j).name()), l.ops.push_back(node(j).op_type());
  for (const KTensor& t : k.tensors)
    if (t.name == k.output)
      for (std::int64_t d : t.save_shape && !t.save_shape->empty() ? *t.save_shape : t.shape)
        l.output += (l.output.empty() ? "" : "x") + std::to_string(d);
  out_.layers.push_back(l);
  kernels_.push_back(std::move(k));
}

// A weight of `rows` rows (a conv's cout, a Gemm's n) is stored in the cube's fractal order
// (fractal_z), as ATC stores weights, so a tile's chunk of it is whole runs of DRAM; past the most
// rows that order takes (kernels::kFractalMaxRows), row by row.
bool fractal_rows(std::int64_t rows) { return rows <= std::int64_t(kernels::kFractalMaxRows); }
// The layout of a weight of `rows` rows: fractal_z or the row-by-row `other`.
std::string weight_layout(std::int64_t rows, const std::string& other, bool c04 = false) {
  return fractal_rows(rows) ? (c04 ? "fractal_z_c04" : "fractal_z") : other;
}

// The conv2d kernel's shape keys: y stored NC1HWC0 in type `out`; the weights as weight_layout
// stores them.
std::vector<std::pair<std::string, std::string>> conv_keys(const Dims& x, std::int64_t cout, const Dims& kk,
                                                           const Dims& s, const Dims& d, const Dims& p,
                                                           std::int64_t groups, bool c04, const std::string& out) {
  const std::string weights = fractal_rows(cout) ? "fractal_z" : "nc1hwc0";
  return {{"h", num(x[2])},     {"w", num(x[3])},          {"c", num(x[1])},           {"cout", num(cout)},
          {"kh", num(kk[0])},   {"kw", num(kk[1])},        {"stride_h", num(s[0])},    {"stride_w", num(s[1])},
          {"dil_h", num(d[0])}, {"dil_w", num(d[1])},      {"pad_t", num(p[0])},       {"pad_b", num(p[2])},
          {"pad_l", num(p[1])}, {"pad_r", num(p[3])},      {"groups", num(groups)},    {"c0", c04 ? "4" : "16"},
          {"out", out},         {"out_layout", "nc1hwc0"}, {"weights_layout", weights}};
}

// Grouped conv weights (cout x C / groups x kh x kw) as a dense conv's (cout x C x kh x kw): output
// channel o's filter in its group's input channels, zeros in the others'.
Tensor block_diagonal(const Tensor& w, std::int64_t groups) {
  const std::int64_t cout = w.shape[0], cg = w.shape[1], k = w.shape[2] * w.shape[3], per = cout / groups;
  Tensor d{{cout, cg * groups, w.shape[2], w.shape[3]}, std::vector<float>(std::size_t(cout * cg * groups * k), 0.0f)};
  for (std::int64_t o = 0; o < cout; ++o)
    std::copy_n(w.data.begin() + o * cg * k, cg * k, d.data.begin() + (o * cg * groups + o / per * cg) * k);
  return d;
}

// Pads {top, left, bottom, right} from auto_pad or pads.
Dims Compiler::conv_pads(int i, const Dims& x, const Dims& k, const Dims& s, const Dims& d) const {
  const Attrs a = attrs(i);
  const std::string ap = a.s("auto_pad", "NOTSET");
  if (ap == "VALID") return {0, 0, 0, 0};
  if (ap != "SAME_UPPER" && ap != "SAME_LOWER") return a.ints("pads", {0, 0, 0, 0});
  Dims p(4);
  for (int ax = 0; ax < 2; ++ax) {
    const std::int64_t out = (x[2 + ax] + s[ax] - 1) / s[ax];
    const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * s[ax] + (k[ax] - 1) * d[ax] + 1 - x[2 + ax]);
    p[ax] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
    p[ax + 2] = total - p[ax];
  }
  return p;
}

// What follows a conv that the conv2d kernel's epilogue does: a BatchNormalization (a scale and
// a bias per channel), an Add of another activation (the residual), Relu. Each is fused only
// when it is the one reader of what comes before it.
Compiler::Chain Compiler::conv_chain(int i) const {
  Chain c;
  c.out = node(i).output(0);
  int next = sole_consumer(c.out);
  if (next >= 0 && node(next).op_type() == "BatchNormalization" && constant(node(next).input(1)) &&
      constant(node(next).input(2)) && constant(node(next).input(3)) && constant(node(next).input(4)))
    c.bn = next, c.out = node(next).output(0), next = sole_consumer(c.out);
  // The Add's other operand is the residual, when it is computed already (else the branch that
  // computes it later fuses the Add, this one being its residual then).
  if (next >= 0 && node(next).op_type() == "Add" && node(next).input_size() == 2) {
    const std::string other = node(next).input(node(next).input(0) == c.out);
    if (!is_weight(other) && available(other) && ref_.at(other).shape == ref_.at(c.out).shape)
      c.add = next, c.residual = other, c.out = node(next).output(0), next = sole_consumer(c.out);
  }
  float lo = 0, hi = 0;
  const bool clip = next >= 0 && node(next).op_type() == "Clip" && clip_bounds(next, lo, hi) && lo == 0.0f &&
                    (hi == 6.0f || hi == std::numeric_limits<float>::max());
  if (next >= 0 && (node(next).op_type() == "Relu" || clip))
    c.act = next, c.out = node(next).output(0), c.relu6 = clip && hi == 6.0f;
  return c;
}

// Clip i's bounds (inputs 1 and 2 from opset 11, attributes before; absent: no bound); false
// when a bound is not a constant of one value.
bool Compiler::clip_bounds(int i, float& lo, float& hi) const {
  const auto& n = node(i);
  lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (m_.opset < 11) {
    lo = Attrs{n}.f("min", lo), hi = Attrs{n}.f("max", hi);
    return true;
  }
  for (int q : {1, 2}) {
    if (n.input_size() <= q || n.input(q).empty()) continue;
    if (!constant(n.input(q)) || ref_.at(n.input(q)).elements() != 1) return false;
    (q == 1 ? lo : hi) = ref_.at(n.input(q)).data[0];
  }
  return true;
}

// Whether conv i waits for the other branch of the Add its chain ends in: when that branch is a
// conv (+ BatchNormalization) later in the graph that can run now (a residual block's shortcut
// conv, after the block's convs in torch's order), it is computed first, so it can run beside
// this branch on a stream of its own, and this branch's last conv fuses the Add.
bool Compiler::shortcut_first(int i) const {
  std::string v = node(i).output(0);
  int next = sole_consumer(v);
  if (next >= 0 && node(next).op_type() == "BatchNormalization") v = node(next).output(0), next = sole_consumer(v);
  if (next < 0 || node(next).op_type() != "Add" || node(next).input_size() != 2) return false;
  const std::string& other = node(next).input(node(next).input(0) == v);
  if (available(other) || !producer_.count(other)) return false;
  int head = producer_.at(other);
  if (node(head).op_type() == "BatchNormalization" && producer_.count(node(head).input(0)))
    head = producer_.at(node(head).input(0));
  return node(head).op_type() == "Conv" && head > i && !done_[std::size_t(head)] && available(node(head).input(0));
}

// Conv and its chain as one conv2d (conv_layer).
bool Compiler::conv(int i) {
  const auto& n = node(i);
  if (!available(n.input(0)) || shortcut_first(i)) return false;
  const Attrs a = attrs(i);
  ConvSpec c{n.input(0), weight(i, 1), a.ints("strides", {1, 1}), a.ints("dilations", {1, 1}), {}, a.i("group", 1)};
  c.w.shape = as_2d(c.w.shape);  // a 1-D conv's M x C x K as M x C x 1 x K
  const Dims x = as_2d(values_.at(c.x).shape), kk{c.w.shape[2], c.w.shape[3]};
  // A Pad before it (Compiler::pad) adds to its padding; auto_pad counts the padded map.
  const Dims& before = values_.at(c.x).pads;
  c.p = conv_pads(i, before.empty() ? x : Dims{x[0], x[1], x[2] + before[0] + before[2], x[3] + before[1] + before[3]},
                  kk, c.s, c.d);
  for (std::size_t j = 0; j < before.size(); ++j) c.p[j] += before[j];
  return conv_layer(i, std::move(c));
}

// Node i's conv `c` and the chain after node i as one conv2d, y stored NC1HWC0. Output channels
// that are no whole group of 16 are computed up to one (zero weights, scale and bias: the pad
// channels NC1HWC0 holds as zeros), so the layout is the same whatever cout is.
bool Compiler::conv_layer(int i, ConvSpec c) {
  const Chain ch = conv_chain(i);
  const Dims x = as_2d(values_.at(c.x).shape);
  const std::int64_t groups = c.groups;
  Tensor& w = c.w;
  const Dims kk{w.shape[2], w.shape[3]}, &s = c.s, &d = c.d, &p = c.p;
  if (x.size() != 4 || x[0] != 1)
    fail(i, "the input is " + ref_.at(c.x).shape_str() + "; one image per kernel is lowered (--batch N for N)");
  // A depthwise conv of channels that are no whole group of 16 (MobileNetV3's 72, 120) runs as one
  // over them rounded up: the pad channels, which NC1HWC0 holds as zeros, get zero filters.
  const bool depthwise = groups > 1 && groups == x[1] && w.shape[0] == groups && w.shape[1] == 1;
  // Other groups whose output channels are no whole group of 16 (20 in 2 groups): a dense conv
  // whose weights are zero across groups, as the kernel itself runs groups it cannot extend.
  const bool dense = groups > 1 && w.shape[0] % 16 && !depthwise;
  if (dense) w = block_diagonal(w, groups);
  const std::int64_t cout = (w.shape[0] + 15) / 16 * 16, g = depthwise ? cout : dense ? 1 : groups;
  w.shape[0] = cout, w.data.resize(std::size_t(product(w.shape)), 0.0f);
  Dims xk = x;  // the input as the kernel reads it: a depthwise conv's channels rounded up too
  if (depthwise) xk[1] = cout;
  for (std::size_t j = 0; j < 4; ++j)  // top, left, bottom, right
    if (p[j] > d[j % 2] * (kk[j % 2] - 1))
      fail(i, "padding of " + std::to_string(p[j]) +
                  " (with a Pad before it, if any) past the dilated filter's extent " + "less one (" +
                  std::to_string(d[j % 2] * (kk[j % 2] - 1)) +
                  "): rows or columns that read only padding are not lowered");
  // The small-channel mode reads a graph input stored C0 = 4, which only this conv may read.
  const bool c04 =
      x[1] <= 4 && groups == 1 && ref(c.x).empty() && consumers_.at(c.x).size() == 1 && !outputs_.count(c.x);
  const bool folded = fold_scale(i, ch.bn, w);
  Kernel k{kernel_name(i), "conv2d"};
  for (int j : {i, ch.bn, ch.add, ch.act})
    if (j >= 0) k.nodes.push_back(j), done_[std::size_t(j)] = true;
  k.tensors.push_back(use(i, k, c.x, "x", Layout::Nc1hwc0, c04));
  // y in the residual's type when it is placed already, x itself too (a graph output is f32, but
  // for a shortcut of f16 that the epilogue adds: the kernel adds one of y's type).
  const std::string ydt = ch.add >= 0 && !ref(ch.residual).empty() ? values_.at(ch.residual).dtype : out_dtype(ch.out);
  k.shape = conv_keys(xk, cout, kk, s, d, p, g, c04, ydt);
  k.tensors.push_back(weight_tensor(
      i, k, KTensor{"w", "f16", weight_layout(cout, c04 ? "nc1hwc0_c04" : "nc1hwc0", c04), "", "", "", w.shape, g}, w));
  k.args = {"x", "w", "y"};
  produce(k, ch.out, KTensor{"y", ydt}, Layout::Nc1hwc0);
  conv_epilogue(i, ch.bn, k, cout, folded);
  if (ch.add >= 0) {
    KTensor r = use(ch.add, k, ch.residual, "residual", Layout::Nc1hwc0, false, ydt);
    if (r.dtype != ydt) fail(ch.add, "the shortcut is " + r.dtype + ", the conv's output " + ydt);
    k.tensors.push_back(r), k.args.push_back("residual"), k.shape.push_back({"residual", "true"});
  }
  if (ch.act >= 0) k.shape.push_back({ch.relu6 ? "relu6" : "relu", "true"});
  k.check_inputs = k.args;
  k.check_inputs.erase(k.check_inputs.begin() + 2);  // y
  k.check = {{"op", "conv2d"}, {"atol", "1e-3"}, {"rtol", "1e-3"}};
  std::vector<double> sc, b;
  k.magnitude = max_abs(ref_.at(ch.out).data) + (ch.add >= 0 ? max_abs(ref_.at(ch.residual).data) : 0.0) +
                (conv_scale_bias(i, ch.bn, sc, b) ? max_abs(b) : 0.0);
  place(std::move(k));
  return true;
}

// ConvTranspose (and the chain after it) as the conv it equals: the input with s - 1 zeros put
// between its positions (insert_zeros; CANN's Conv2DBackpropInput dilates its input so), read by
// a conv2d of stride 1 whose weights are the transposed conv's flipped, input and output channels
// swapped, padded (k - 1) d - pad at the start and (k - 1) d - pad + output_padding at the end.
// The pads of output_shape or auto_pad are split as ONNX's reference splits them (host_reference).
bool Compiler::conv_transpose(int i) {
  const auto& n = node(i);
  if (!available(n.input(0)) || shortcut_first(i)) return false;
  const Attrs a = attrs(i);
  const Dims x = as_2d(values_.at(n.input(0)).shape);
  Tensor wt = weight(i, 1);
  wt.shape = as_2d(wt.shape);  // C x M / group x kh x kw
  const std::int64_t g = a.i("group", 1), C = wt.shape[0], mg = wt.shape[1];
  const Dims k{wt.shape[2], wt.shape[3]}, s = a.ints("strides", {1, 1}), op = a.ints("output_padding", {0, 0});
  if (x.size() != 4 || g < 1 || x[1] != C || C % g)
    fail(i, "weights " + ref_.at(n.input(1)).shape_str() + " do not fit the input " + ref_.at(n.input(0)).shape_str() +
                " in " + std::to_string(g) + " groups");
  ConvSpec c{n.input(0), Tensor{{mg * g, C / g, k[0], k[1]}, {}}, {1, 1}, a.ints("dilations", {1, 1}), Dims(4), g};
  const Dims out = a.ints("output_shape", {});
  Dims p = a.ints("pads", {0, 0, 0, 0}), after{0, 0};
  const std::string ap = a.s("auto_pad", "NOTSET");
  for (std::size_t ax = 0; ax < 2; ++ax) {
    const std::int64_t ext = c.d[ax] * (k[ax] - 1), full = s[ax] * (x[2 + ax] - 1) + op[ax] + ext + 1;
    if (!out.empty() || ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      const std::int64_t total = full - (out.empty() ? x[2 + ax] * s[ax] : out[ax]);
      const std::int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      p[ax] = ap == "SAME_UPPER" ? half : total - half, p[ax + 2] = total - p[ax];
    }
    c.p[ax] = ext - p[ax], c.p[ax + 2] = ext - p[ax + 2] + op[ax];
    if (c.p[ax] < 0 || c.p[ax + 2] < 0)
      fail(i, "pads past the dilated filter's extent less one (" + std::to_string(ext) +
                  "): output rows or columns that read no input are not lowered");
    if (c.p[ax] > ext)  // (output_shape or auto_pad past the plain output: a start pad below 0)
      fail(i, "output_shape or auto_pad gives a start pad of " + std::to_string(p[ax]) +
                  ": output rows or columns before the input's first are not lowered");
    // Output rows past what the input reaches (output_padding past the pads): zeros after the map.
    after[ax] = std::max<std::int64_t>(0, c.p[ax + 2] - ext), c.p[ax + 2] -= after[ax];
  }
  const std::int64_t cg = C / g, taps = k[0] * k[1];
  c.w.data.resize(std::size_t(product(c.w.shape)));
  for (std::int64_t o = 0; o < mg * g; ++o)
    for (std::int64_t ci = 0; ci < cg; ++ci)
      for (std::int64_t t = 0; t < taps; ++t)  // tap t of the conv is tap taps - 1 - t of the transposed one
        c.w.data[std::size_t((o * cg + ci) * taps + t)] =
            wt.data[std::size_t(((o / mg * cg + ci) * mg + o % mg) * taps + taps - 1 - t)];
  if (s[0] != 1 || s[1] != 1 || after[0] || after[1]) c.x = insert_zeros(i, n.input(0), s, after);
  return conv_layer(i, std::move(c));
}

// Node i's input v (an NC1HWC0 f16 map) with s - 1 zeros between its positions down and across,
// and `after` rows and columns of zeros after it: the upsample kernel, fill zeros. Returns the new
// value.
std::string Compiler::insert_zeros(int i, const std::string& v, const Dims& s, const Dims& after) {
  const Dims x = as_2d(image_shape(v));
  std::string out = node(i).output(0) + "#zeros";
  Dims full = ref_.at(v).shape;  // (a 1-D map's L is its last axis: as_2d's W)
  full.back() = (full.back() - 1) * s[1] + 1 + after[1];
  if (full.size() == 4) full[2] = (full[2] - 1) * s[0] + 1 + after[0];
  if (!ref_.count(out)) ref_[out] = Tensor{full, {}};
  kernels::UpsampleShape u{std::uint32_t(x[1]), std::uint32_t(x[2]), std::uint32_t(x[3]), std::uint32_t(s[0]),
                           std::uint32_t(s[1])};
  u.zeros = true, u.pad_b = std::uint32_t(after[0]), u.pad_r = std::uint32_t(after[1]);
  // What the upsample kernel takes on the shipped presets' 256 KiB UB (a preset's own is checked at
  // load): two buffers of a row and its widened row, and a zero row.
  const std::uint64_t need = (2 * u.buffer_blocks() + u.ow()) * 32;
  if (x[3] > 2040 || s[1] > 31 || s[0] > 255 || need > 256 * 1024)
    fail(i, "a map " + std::to_string(x[3]) + " wide at strides " + std::to_string(s[0]) + " x " +
                std::to_string(s[1]) + " needs " + std::to_string(need) +
                " B of UB for the upsample kernel that inserts the zeros (256 KiB; strides up to 255 x 31, maps up "
                "to 2040 wide)");
  Kernel k{kernel_name(i, "_zeros"), "upsample"};
  k.nodes = {i}, k.head = 1;
  k.shape = {{"h", num(x[2])},  {"w", num(x[3])},  {"c", num(x[1])},         {"sh", num(s[0])},
             {"sw", num(s[1])}, {"fill", "zeros"}, {"pad_b", num(after[0])}, {"pad_r", num(after[1])}};
  k.tensors.push_back(use(i, k, v, "x", Layout::Nc1hwc0));
  produce(k, out, KTensor{"y", "f16"}, Layout::Nc1hwc0);
  k.args = {"x", "y"};
  k.check_inputs = {"x"};
  k.check = {{"op", "upsample"}};
  place(std::move(k));
  return out;
}

// BatchNormalization bn as y = x x scale + bias per channel, in double: scale = gamma / sqrt(var +
// epsilon), bias = beta + (b - mean) x scale, b the bias before it (a conv's; on entry, else 0).
void Compiler::bn_fold(int bn, std::vector<double>& scale, std::vector<double>& bias) const {
  const Attrs a{node(bn)};
  if (a.i("training_mode", 0)) fail(bn, "training mode is not lowered");
  const double eps = a.f("epsilon", 1e-5f);
  const Tensor &g = weight(bn, 1), &beta = weight(bn, 2), &mean = weight(bn, 3), &var = weight(bn, 4);
  for (const Tensor* t : {&g, &beta, &mean, &var})
    if (t->elements() != scale.size())
      fail(bn, "scale, B, mean and var of " + std::to_string(scale.size()) + " values (one per channel) are lowered");
  for (std::size_t c = 0; c < scale.size(); ++c) {
    scale[c] = double(g.data[c]) / std::sqrt(double(var.data[c]) + eps);
    bias[c] = double(beta.data[c]) + (bias[c] - double(mean.data[c])) * scale[c];
  }
}

// Conv i's bias and its batch norm's (bn_fold): y = conv x scale + bias per real output channel;
// false when it has neither.
bool Compiler::conv_scale_bias(int i, int bn, std::vector<double>& sc, std::vector<double>& b) const {
  // The conv's output channels (a ConvTranspose's weights are C x M / group x ...); the rest: pad channels, 0.
  const Dims& ws = ref_.at(node(i).input(1)).shape;
  const std::size_t real =
      std::size_t(node(i).op_type() == "ConvTranspose" ? ws[1] * Attrs{node(i)}.i("group", 1) : ws[0]);
  sc.assign(real, 1.0), b.assign(real, 0.0);
  const bool has_bias = node(i).input_size() > 2 && !node(i).input(2).empty();
  if (has_bias)
    for (std::size_t c = 0; c < real; ++c) b[c] = weight(i, 2).data[c];
  if (bn >= 0) bn_fold(bn, sc, b);
  return bn >= 0 || has_bias;
}

// The batch norm's scale folded into the conv's weights w (OIHW): w[co] x scale[co], as ATC's
// conv + batch norm fusion does, so the epilogue adds the bias only (one vector pass fewer per
// output element). Not when a channel's scaled weights would leave f16's range (its largest above
// f16's largest, or scaled from a normal value to below f16's smallest normal: a tiny scale,
// which would leave the channel no precision): the epilogue scales then.
bool Compiler::fold_scale(int i, int bn, Tensor& w) const {
  std::vector<double> sc, b;
  if (bn < 0 || !conv_scale_bias(i, bn, sc, b)) return false;
  const std::size_t per = w.data.size() / std::size_t(w.shape[0]);
  constexpr double kF16Max = 65504.0, kF16MinNormal = 6.103515625e-05;  // 2^-14
  for (std::size_t co = 0; co < sc.size(); ++co) {
    const double x = max_abs(w.data.data() + co * per, per);  // the channel's largest weight
    const double y = x * std::abs(sc[co]);
    if (y > kF16Max || (y < kF16MinNormal && x >= kF16MinNormal)) return false;  // f16 would lose the channel
  }
  for (std::size_t co = 0; co < sc.size(); ++co)  // a channel at a time: no division an element
    for (std::size_t e = co * per; e < (co + 1) * per; ++e) w.data[e] = float(double(w.data[e]) * sc[co]);
  return true;
}

// The conv's f32 epilogue tensors: the bias, and the scale unless fold_scale put it in the weights.
void Compiler::conv_epilogue(int i, int bn, Kernel& k, std::int64_t cout, bool folded) {
  std::vector<double> sc, b;
  if (conv_scale_bias(i, bn, sc, b)) epilogue_tensors(i, k, sc, b, bn >= 0 && !folded, cout);
}

// The conv2d epilogue's f32 bias (and, with `scaled`, scale) per channel, pad channels 0.
void Compiler::epilogue_tensors(int i, Kernel& k, const std::vector<double>& sc, const std::vector<double>& b,
                                bool scaled, std::int64_t cout) {
  std::vector<float> scale(sc.begin(), sc.end()), bias(b.begin(), b.end());
  scale.resize(std::size_t(cout), 0.0f), bias.resize(std::size_t(cout), 0.0f);
  k.tensors.push_back(weight_tensor(i, k, KTensor{"bias", "f32", "nd", "", "", "", {cout}}, Tensor{{cout}, bias}));
  k.args.push_back("bias"), k.shape.push_back({"bias", "true"});
  if (!scaled) return;
  k.tensors.push_back(weight_tensor(i, k, KTensor{"scale", "f32", "nd", "", "", "", {cout}}, Tensor{{cout}, scale}));
  k.args.push_back("scale"), k.shape.push_back({"channel_scale", "true"});
}

// A BatchNormalization no conv before it folds (after a pool or an Add, on a graph input): y = x x
// scale + bias per channel (axis 1). On an NC1HWC0 map of whole groups of 16 channels, one pass:
// a depthwise 1 x 1 conv2d of weight 1 whose epilogue applies them (+ the Relu after it); else
// (ND, any rank) an elementwise mul and add by constants of x's shape.
bool Compiler::batch_norm(int i) {
  const auto& n = node(i);
  if (!available(n.input(0))) return false;
  const Value& x = values_.at(n.input(0));
  if (x.shape.size() < 2) fail(i, "an input of " + ref_.at(n.input(0)).shape_str() + " has no channel axis");
  const std::int64_t c = x.shape[1];
  std::vector<double> sc(std::size_t(c), 1.0), b(std::size_t(c), 0.0);
  bn_fold(i, sc, b);
  if (x.layout == Layout::Nc1hwc0 && c % 16 == 0) return bn_conv(i, sc, b);
  Dims per(x.shape.size() - 1, 1);  // C x 1 x ... : one value per channel, broadcast over the rest
  per[0] = c;
  Tensor s_map, b_map;
  expand(Tensor{per, std::vector<float>(sc.begin(), sc.end())}, x.shape, s_map);
  expand(Tensor{per, std::vector<float>(b.begin(), b.end())}, x.shape, b_map);
  const std::string scaled = n.output(0) + "#scaled";
  ref_[scaled] = Tensor{ref_.at(n.output(0)).shape, {}};
  elementwise_kernel(i, 0, "", "mul", {{n.input(0), {}}, {"", s_map}}, scaled);
  elementwise_kernel(i, 1, "_bias", "add", {{scaled, {}}, {"", b_map}}, n.output(0));
  done_[std::size_t(i)] = true;
  return true;
}

// BatchNormalization i (+ a Relu that is the one reader) as a depthwise 1 x 1 conv2d of weight 1:
// the epilogue's scale and bias per channel are the batch norm's.
bool Compiler::bn_conv(int i, const std::vector<double>& sc, const std::vector<double>& b) {
  const auto& n = node(i);
  const Dims& x = values_.at(n.input(0)).shape;
  const std::int64_t c = x[1];
  std::string out = n.output(0);
  const int act = sole_consumer(out);
  const bool relu = act >= 0 && node(act).op_type() == "Relu";
  if (relu) out = node(act).output(0), done_[std::size_t(act)] = true;
  Kernel k{kernel_name(i), "conv2d"};
  k.nodes = {i};
  if (relu) k.nodes.push_back(act);
  k.shape = conv_keys(x, c, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, c, false, out_dtype(out));
  k.tensors.push_back(use(i, k, n.input(0), "x", Layout::Nc1hwc0));
  const Tensor w{{c, 1, 1, 1}, std::vector<float>(std::size_t(c), 1.0f)};
  k.tensors.push_back(weight_tensor(i, k, KTensor{"w", "f16", weight_layout(c, "nc1hwc0"), "", "", "", w.shape, c}, w));
  k.args = {"x", "w", "y"};
  produce(k, out, KTensor{"y", out_dtype(out)}, Layout::Nc1hwc0);
  epilogue_tensors(i, k, sc, b, true, c);
  if (relu) k.shape.push_back({"relu", "true"});
  k.check_inputs = {"x", "w", "bias", "scale"};
  k.check = {{"op", "conv2d"}, {"atol", "1e-3"}, {"rtol", "1e-3"}};
  return finish(i, std::move(k));
}

// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool: the pool kernel; an average whose ONNX divisor is
// not kh x kw at some window (count_include_pad 0 at the padding, ceil_mode past it) is then
// multiplied by a constant map of kh x kw over that divisor (pool_counts).
bool Compiler::pool(int i) {
  const auto& n = node(i);
  if (!available(n.input(0))) return false;
  const Dims x = as_2d(values_.at(n.input(0)).shape);
  const std::string op = n.op_type();
  if (x.size() != 4 || x[0] != 1)
    fail(i, "the input is " + ref_.at(n.input(0)).shape_str() + "; one image per kernel is lowered (--batch N for N)");
  if (n.output_size() > 1) fail(i, "the Indices output is not lowered");
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool")
    return global_pool(i, n.input(0), n.output(0), op == "GlobalMaxPool");
  Kernel k{kernel_name(i), "pool"};
  k.nodes = {i};
  k.shape = {{"pool", op == "AveragePool" ? "avg" : "max"}, {"h", num(x[2])}, {"w", num(x[3])}, {"c", num(x[1])}};
  const Tensor counts = pool_window(i, x, k);
  k.tensors.push_back(use(i, k, n.input(0), "x", Layout::Nc1hwc0));
  if (k.tensors.back().dtype != "f16") fail(i, "the pool kernel takes f16");
  produce(k, n.output(0), KTensor{"y", "f16"}, Layout::Nc1hwc0);
  k.args = {"x", "y"};
  k.check_inputs = {"x"};
  k.check = {{"op", "pool"}, {"atol", num(pool_atol(i))}, {"rtol", "1e-3"}};
  finish(i, std::move(k));
  if (!counts.data.empty()) pool_counts(i, counts);
  return true;
}

// Node i's pool of the whole map x (1 x C x H x W, or 1 x C x L) into value y, 1 x C x 1 x 1: the
// pool kernel's global average, or a max pool whose window is the whole map (up to 255 x 255).
bool Compiler::global_pool(int i, const std::string& x, const std::string& y, bool max) {
  const Dims m = as_2d(values_.at(x).shape);
  Kernel k{kernel_name(i), "pool"};
  k.nodes = {i};
  k.shape = {{"pool", max ? "max" : "global"}, {"h", num(m[2])}, {"w", num(m[3])}, {"c", num(m[1])}};
  if (max && (m[2] > 255 || m[3] > 255))
    fail(i, "a map of " + std::to_string(m[2]) + " x " + std::to_string(m[3]) +
                ": the pool kernel's window is up to 255 x 255");
  if (max) k.shape.push_back({"kh", num(m[2])}), k.shape.push_back({"kw", num(m[3])});
  k.tensors.push_back(use(i, k, x, "x", Layout::Nc1hwc0));
  if (k.tensors.back().dtype != "f16") fail(i, "the pool kernel takes f16");
  produce(k, y, KTensor{"y", "f16"}, Layout::Nc1hwc0);
  k.args = {"x", "y"};
  k.check_inputs = {"x"};
  k.check = {{"op", "pool"}, {"atol", num(pool_atol(i))}, {"rtol", "1e-3"}};
  return finish(i, std::move(k));
}

// Pool i's layer check's atol: an average's window is summed in f16 (as the vector unit adds),
// each of its kh x kw - 1 adds rounding by up to half an f16 step of the running sum, at most
// kh x kw x the input's largest magnitude: over the mean, (kh x kw - 1) x 2^-11 of that magnitude.
double Compiler::pool_atol(int i) const {
  if (node(i).op_type() != "AveragePool") return 1e-3;
  const Dims kk = attrs(i).ints("kernel_shape", {});
  double peak = 0;
  for (float v : ref_.at(node(i).input(0)).data) peak = std::max(peak, double(std::fabs(v)));
  return std::max(1e-3, double(product(kk) - 1) * std::ldexp(1.0, -11) * peak);
}

// The window's shape keys of pool kernel k. A ceil_mode row or column past the padding is
// computed with more padding at the bottom or right (never the maximum; in an average, a 0 the
// divisor map leaves out). Returns, for an average, the map kh x kw / ONNX's divisor per output
// position (the host reference's: the window's positions inside the input, or inside the input
// and its padding with count_include_pad 1), over every channel; empty when it is 1 everywhere.
Tensor Compiler::pool_window(int i, const Dims& x, Kernel& k) const {
  const Attrs a = attrs(i);
  const Dims kk = a.ints("kernel_shape", {}), s = a.ints("strides", {1, 1}), d = a.ints("dilations", {1, 1});
  if (kk.size() != 2) fail(i, "1-D and 2-D windows are lowered");
  if (s[1] > 31)
    fail(i,
         "a stride across of " + std::to_string(s[1]) + ": the pool kernel takes up to 31 (a repeat's block stride)");
  const Dims onnx = conv_pads(i, x, kk, s, d), y = as_2d(ref_.at(node(i).output(0)).shape);
  const Dims span{(kk[0] - 1) * d[0] + 1, (kk[1] - 1) * d[1] + 1};  // rows and columns a window reaches
  Dims p = onnx;
  for (std::size_t ax = 0; ax < 2; ++ax) {
    p[ax + 2] = std::max(p[ax + 2], (y[2 + ax] - 1) * s[ax] + span[ax] - x[2 + ax] - p[ax]);
    if ((x[2 + ax] + p[ax] + p[ax + 2] - span[ax]) / s[ax] + 1 != y[2 + ax])
      fail(i, "an output of " + ref_.at(node(i).output(0)).shape_str() + " is not the pool kernel's for any padding");
  }
  for (auto [key, v] : {std::pair{"kh", kk[0]},
                        {"kw", kk[1]},
                        {"stride_h", s[0]},
                        {"stride_w", s[1]},
                        {"pad_t", p[0]},
                        {"pad_l", p[1]},
                        {"pad_b", p[2]},
                        {"pad_r", p[3]}})
    k.shape.push_back({key, num(v)});
  if (d != Dims{1, 1}) k.shape.insert(k.shape.end(), {{"dil_h", num(d[0])}, {"dil_w", num(d[1])}});
  if (node(i).op_type() != "AveragePool") return {};
  const bool with_pad = a.i("count_include_pad", 0);
  Tensor f{{1, x[1], y[2], y[3]}, std::vector<float>(std::size_t(x[1] * y[2] * y[3]))};
  bool corrected = false;
  for (std::int64_t oh = 0; oh < y[2]; ++oh)
    for (std::int64_t ow = 0; ow < y[3]; ++ow) {
      std::int64_t count = 0;
      for (std::int64_t ti = 0; ti < kk[0]; ++ti)
        for (std::int64_t tj = 0; tj < kk[1]; ++tj) {
          const std::int64_t r = oh * s[0] - onnx[0] + ti * d[0], c = ow * s[1] - onnx[1] + tj * d[1];
          count += with_pad ? r < x[2] + onnx[2] && c < x[3] + onnx[3] : r >= 0 && r < x[2] && c >= 0 && c < x[3];
        }
      const float factor = float(double(kk[0] * kk[1]) / double(std::max<std::int64_t>(count, 1)));
      corrected = corrected || factor != 1.0f;
      for (std::int64_t ch = 0; ch < x[1]; ++ch) f.data[std::size_t((ch * y[2] + oh) * y[3] + ow)] = factor;
    }
  return corrected ? f : Tensor{};
}

// The average's divisor corrected: node i's pooled map times `counts` (kh x kw over ONNX's
// divisor), an elementwise mul by a constant map stored as the map is (NC1HWC0; its pad
// channels 0, as the map's are).
void Compiler::pool_counts(int i, const Tensor& counts) {
  elementwise_kernel(i, 1, "_count", "mul", {{node(i).output(0), {}}, {"", counts}}, node(i).output(0));
}

// Gemm (alpha folded into a weight B, beta x C into the bias; transA and a matrix C: gemm_a,
// gemm_matrix_c) and MatMul: B a matrix
// (a weight, or an activation, read transposed when it is a Transpose of its last two axes), or
// a batch of them as A is (one gemm per head, each on its slice of A, B and C). A bias after a
// MatMul (an Add of a constant row) and a Relu that is the one reader of the result are fused.
// A is read ND: an NC1HWC0 map of one image of 1 x 1 (a global pool's output) holds its
// channels in order, then the pad channels.
bool Compiler::gemm(int i) {
  const auto& n = node(i);
  for (int j = 0; j < n.input_size(); ++j)
    if (!n.input(j).empty() && !is_weight(n.input(j)) && !available(n.input(j))) return false;
  const GemmPlan p = gemm_plan(i, gemm_a(i));
  const Value& av = values_.at(p.a);
  if (av.spatial_map())
    fail(i, "A is an NC1HWC0 feature map of " + std::to_string(av.shape[2]) + " x " + std::to_string(av.shape[3]) +
                "; only 1 x 1 maps are read as ND");
  if (!av.map.empty() && (p.heads != 1 || p.m != 1 || !constant(n.input(1)) || p.matrix_c))
    fail(i, "A flattens an NC1HWC0 feature map: lowered with one row of A, B a weight and no matrix C");
  if (p.matrix_c) ref_[p.out] = Tensor{ref_.at(n.output(0)).shape, {}};  // alpha A B
  for (std::int64_t h = 0; h < p.heads; ++h) gemm_head(i, p, h);
  if (p.matrix_c) gemm_matrix_c(i, p);
  return true;
}

// The value node i's gemm reads as A: the activation; or, when A's values are known at compile
// time (a weight, or a graph input not placed yet, at batch 1), a graph input of its own holding A
// or, with Gemm's transA, A transposed (placed by the gemm as the model hands it to the AI Core).
std::string Compiler::gemm_a(int i) {
  const auto& n = node(i);
  const std::string& a = n.input(0);
  const bool trans = n.op_type() == "Gemm" && Attrs{n}.i("transA", 0);
  if (!trans && !is_weight(a)) return a;
  if (!constant(a))
    fail(i,
         "transA of an activation is not lowered (A^T is computed when the model is compiled: A a weight, or a "
         "graph input at batch 1)");
  if (batch_ > 1)
    fail(i, std::string(trans ? "transA" : "A a weight") +
                " is lowered at batch 1 (A's values are known when the model is compiled: one matrix, not one per "
                "image)");
  std::string name = a + (trans ? "#T" : "#A");
  if (values_.count(name)) return name;
  Tensor t = ref_.at(a);
  if (trans) {
    if (t.shape.size() != 2) fail(i, "transA of A of shape " + t.shape_str() + ": a matrix is lowered");
    const std::int64_t r = t.shape[0], c = t.shape[1];
    Tensor at{{c, r}, std::vector<float>(t.data.size())};
    for (std::int64_t y = 0; y < r; ++y)
      for (std::int64_t x = 0; x < c; ++x) at.data[std::size_t(x * r + y)] = t.data[std::size_t(y * c + x)];
    t = at;
  }
  ref_[name] = t;
  values_[name] = Value{t.shape, Layout::Nd, "f16", std::vector<std::string>(batch_), name, false, 1.0, {}, {}};
  return name;
}

// Gemm's C other than a row (a matrix, a column): the gemm computes alpha A B, then an elementwise
// add of beta C (a constant broadcast to m x n, or an activation of m x n with beta 1).
void Compiler::gemm_matrix_c(int i, const GemmPlan& p) {
  const auto& n = node(i);
  const std::string& c = n.input(2);
  const Dims mn{p.m, p.n};
  if (!constant(c)) {
    if (p.beta != 1.0f || image_shape(c) != mn)
      fail(i, "C, an activation of " + ref_.at(c).shape_str() + ": one of m x n with beta 1 is lowered");
    return elementwise_kernel(i, 1, "_c", "add", {{p.out, {}}, {cast_to(i, c, values_.at(p.out).dtype), {}}},
                              n.output(0));
  }
  Tensor t;
  if (!expand(ref_.at(c), mn, t)) fail(i, "C of shape " + ref_.at(c).shape_str() + " does not broadcast to m x n");
  for (float& x : t.data) x *= p.beta;
  elementwise_kernel(i, 1, "_c", "add", {{p.out, {}}, {"", t}}, n.output(0));
}

// What a MatMul or Gemm computes, reads and fuses.
Compiler::GemmPlan Compiler::gemm_plan(int i, const std::string& av) const {
  const auto& n = node(i);
  const Attrs a{n};
  const bool is_gemm = n.op_type() == "Gemm", op_t = is_gemm && a.i("transB", 0);
  const std::string& b = n.input(1);
  const Dims bsh = constant(b) ? ref_.at(b).shape : values_.at(b).shape, &ash = values_.at(av).shape;
  if (bsh.size() < 2) fail(i, "B of shape " + ref_.at(b).shape_str() + ": a matrix, or a batch of them, is lowered");
  GemmPlan p;
  p.a = av;
  const std::size_t r = bsh.size();
  p.k = op_t ? bsh[r - 1] : bsh[r - 2], p.n = op_t ? bsh[r - 2] : bsh[r - 1];
  p.bt = op_t != (!constant(b) && values_.at(b).transposed);  // B stored n x k
  p.heads = product(bsh, 0, r - 2);
  if (p.k <= 0 || p.n <= 0 || p.heads <= 0 || product(ash) <= 0)
    fail(i, "A of shape " + ref_.at(n.input(0)).shape_str() + ", B of shape " + ref_.at(b).shape_str() +
                ": an empty operand is not lowered");
  p.m = product(ash) / p.k;
  auto batch = [](const Dims& d) {  // the batch dimensions, leading 1s aside
    Dims b(d.begin(), d.end() - std::ptrdiff_t(std::min<std::size_t>(2, d.size())));
    while (!b.empty() && b.front() == 1) b.erase(b.begin());
    return b;
  };
  if (p.heads > 1) {
    if (ash.size() < 3 || batch(ash) != batch(bsh) || ash.back() != p.k)
      fail(i, "A of shape " + ref_.at(n.input(0)).shape_str() + ", B of shape " + ref_.at(b).shape_str() +
                  ": a batched MatMul whose operands have the same batch dimensions is lowered (no broadcasting)");
    p.m = ash[ash.size() - 2];
  }
  p.alpha = is_gemm ? a.f("alpha", 1.0f) : 1.0f;
  p.out = n.output(0);
  if (is_gemm && n.input_size() > 2 && !n.input(2).empty()) {
    p.beta = a.f("beta", 1.0f);
    const Tensor& c = ref_.at(n.input(2));  // a row of n (or a scalar): the gemm's bias
    if ((c.elements() == std::size_t(p.n) && !c.shape.empty() && c.shape.back() == p.n) ||
        (constant(n.input(2)) && c.elements() == 1))
      p.bias_node = i, p.bias_input = 2;
    else
      p.matrix_c = true, p.out = n.output(0) + "#ab";
  }
  if (p.matrix_c) return p;  // a Relu after it reads the sum
  int next = sole_consumer(p.out);
  if (p.bias_node < 0 && p.heads == 1 && next >= 0 && node(next).op_type() == "Add") {
    const int j = node(next).input(0) == p.out ? 1 : 0;
    const std::string& c = node(next).input(j);
    if (constant(c) && !ref_.at(c).shape.empty() && ref_.at(c).elements() == std::size_t(p.n) &&
        ref_.at(c).shape.back() == p.n)
      p.bias_node = next, p.bias_input = j, p.out = node(next).output(0), next = sole_consumer(p.out);
  }
  if (next >= 0 && node(next).op_type() == "Relu") p.act = next, p.out = node(next).output(0);
  return p;
}

// Head h of node i's gemm: its slices of A, B and C (the whole of them with one head).
void Compiler::gemm_head(int i, const GemmPlan& p, std::int64_t h) {
  Kernel k{kernel_name(i, p.heads > 1 ? "_h" + std::to_string(h) : ""), "gemm"};
  k.head = std::size_t(h);
  for (int j : {i, p.bias_node == i ? -1 : p.bias_node, p.act})
    if (j >= 0) k.nodes.push_back(j), done_[std::size_t(j)] = true;
  const std::string a = values_.at(p.a).map.empty() ? cast_to(i, p.a, "f16") : p.a;
  std::int64_t kk = p.k;  // the gemm's k: with A a flattened map, its stored elements
  // A weight B is stored as B^T (weight_layout), as ATC stores a MatMul's weights.
  const bool weight_b = constant(node(i).input(1));
  if (values_.at(a).map.empty()) {
    k.tensors.push_back(slice(use(i, k, a, "a", values_.at(a).layout), p.heads, h, {p.m, p.k}));
    k.tensors.push_back(weight_b
                            ? fractal_b(i, k, p, h)
                            : gemm_operand(i, k, 1, "b", p.alpha, p.bt ? Dims{p.n, p.k} : Dims{p.k, p.n}, p.heads, h));
  } else {
    kk = flat_b(i, k, p);
  }
  for (const KTensor& t : k.tensors)
    if (t.dtype != "f16") fail(i, "operand " + t.name + " is " + t.dtype + "; the cube takes f16");
  const std::string dt = out_dtype(p.out);
  if (h == 0)
    produce(k, p.out, KTensor{"c", dt, "nd", "", "", "", {p.heads * p.m, p.n}}, Layout::Nd);
  else
    k.tensors.push_back(slice(KTensor{"c", dt, "nd", ref(p.out)}, p.heads, h, {p.m, p.n})), k.output = "c";
  const std::string tb = p.bt || weight_b ? "true" : "false", relu = p.act >= 0 ? "true" : "false";
  const std::string bl = weight_b ? weight_layout(p.n, "nd") : "nd";
  k.shape = {{"m", num(p.m)},      {"k", num(kk)},   {"n", num(p.n)}, {"out", dt},
             {"b_transposed", tb}, {"b_layout", bl}, {"relu", relu}};
  k.args = {"a", "b", "c"};
  k.check = {{"op", "gemm"},   {"m", num(p.m)}, {"k", num(kk)},   {"n", num(p.n)}, {"b_transposed", tb},
             {"b_layout", bl}, {"relu", relu},  {"atol", "1e-3"}, {"rtol", "1e-3"}};
  if (p.bias_node >= 0) {
    k.tensors.push_back(
        gemm_operand(p.bias_node, k, p.bias_input, "bias", p.bias_node == i ? p.beta : 1.0f, {p.n}, 1, 0));
    k.args.push_back("bias"), k.shape.push_back({"bias", "true"});
  }
  k.check_inputs = k.args;
  k.check_inputs.erase(k.check_inputs.begin() + 2);
  k.magnitude = max_abs(ref_.at(p.out).data) +
                (p.bias_node >= 0 ? max_abs(ref_.at(node(p.bias_node).input(p.bias_input)).data) : 0.0);
  place(std::move(k));
  out_.layers.back().output = num(p.m) + "x" + num(p.n);  // the head's (head 0's tensor is all of them)
}

// Gemm i's A and B when A flattens an NC1HWC0 map of 1 x C x H x W (a Flatten before a VGG's
// classifier): A is the map's memory as one row of its stored elements, C1 x H x W x 16 in that
// order, and B's rows (of the flattening's c x H x W + h x W + w) are put in the same order, a zero
// row at each pad channel, when the model is compiled, as a framework lays out the weights of a
// fully connected layer after a conv. Returns the gemm's k, the map's stored elements.
std::int64_t Compiler::flat_b(int i, Kernel& k, const GemmPlan& p) {
  const Value& a = values_.at(p.a);
  const auto map =
      platform::Nc1hwc0::of({1, std::uint64_t(a.map[1]), std::uint64_t(a.map[2]), std::uint64_t(a.map[3])});
  const std::int64_t kk = std::int64_t(map.stored()), rows = std::int64_t(map.logical());
  if (a.dtype != "f16") fail(i, "A flattens an NC1HWC0 map of " + a.dtype + "; the cube takes f16");
  k.tensors.push_back(KTensor{"a", a.dtype, "nd", ref(p.a), "", "", {1, kk}});
  const Tensor& b = ref_.at(node(i).input(1));
  Tensor t{Dims{p.n, kk}, std::vector<float>(std::size_t(kk * p.n), 0.0f)};  // B^T
  for (std::int64_t from = 0; from < rows; ++from) {  // the flattening's row -> where the map stores it
    const std::int64_t to = std::int64_t(map.at(std::uint64_t(from)));
    for (std::int64_t col = 0; col < p.n; ++col)
      t.data[std::size_t(col * kk + to)] = p.alpha * b.data[std::size_t(p.bt ? col * p.k + from : from * p.n + col)];
  }
  k.tensors.push_back(weight_tensor(i, k, KTensor{"b", "f16", weight_layout(p.n, "nd"), "", "", "", t.shape}, t));
  return kk;
}

// v in type `to` for node i's kernel: v, or a copy of it (an f32 activation for the cube, an f16
// one for the AI CPU), cast once per value and image by a kernel placed before node i's.
std::string Compiler::cast_to(int i, const std::string& v, const std::string& to) {
  const Value& val = values_.at(v);
  // A graph input not placed yet is placed in f16 by its reader; a scaled view is the reader's
  // to refuse.
  if (val.dtype == to || val.refs[image_].empty() || val.scale != 1.0) return v;
  std::string c = v + "#" + to;
  if (values_.count(c) && !values_.at(c).refs[image_].empty()) return c;
  Kernel k{kernel_name(i, "_cast"), "elementwise"};
  k.nodes = {i};
  k.head = (std::size_t(1) << 20) + casts_[{i, image_}]++;  // the node's kernels other than its own
  ref_[c] = ref_.at(v);
  k.tensors.push_back(use(i, k, v, "x", val.layout, false, val.dtype, true));
  produce(k, c, KTensor{"z", to}, values_.at(v).layout);
  values_.at(c).transposed = values_.at(v).transposed;
  k.shape = {{"op", "cast"},
             {"dtype", k.tensors[0].dtype},
             {"to", to},
             {"n", num(std::int64_t(stored_bytes(k.tensors[1])) / elem_bytes(to))}};
  k.args = {"x", "z"};
  k.check_inputs = {"x"};
  k.check = {{"op", "copy"}};
  place(std::move(k));
  out_.layers.back().ops = {"Cast"};  // inserted for node i, not one of its ops
  return c;
}

// ArgMax and TopK (the last axis, the largest): the AI CPU's kernels of the runtime firmware, as
// CANN runs them on the AI CPU. Their input f32 (cast from f16 first), the indices s32 (exact
// against the host reference: an fp16 network whose two largest are within its rounding may pick
// the other); TopK's values beside them.
bool Compiler::top_k(int i) {
  const auto& n = node(i);
  if (!available(n.input(0))) return false;
  const bool is_topk = n.op_type() == "TopK";
  const Attrs a{n};
  const Value& v = values_.at(n.input(0));
  const Dims shape = image_shape(n.input(0));  // the model's (a 1-D map's 1 x C x L)
  const std::int64_t rank = std::int64_t(shape.size());
  std::int64_t axis = a.i("axis", is_topk ? -1 : 0), k = 1;
  if (axis < 0) axis += rank;
  if (axis != rank - 1) fail(i, "over axis " + std::to_string(axis) + ": the last is lowered (the AI CPU takes rows)");
  if (a.i("select_last_index", 0) || !a.i("largest", 1)) fail(i, "the first largest is lowered (the AI CPU's)");
  if (v.spatial_map()) fail(i, "an NC1HWC0 map larger than 1 x 1");
  if (is_topk) {
    if (!constant(n.input(1))) fail(i, "K must be a constant");
    k = std::int64_t(ref_.at(n.input(1)).data[0]);
    if (k < 1 || k > 64) fail(i, "K = " + std::to_string(k) + ": 1 to 64 is lowered (the AI CPU kernel's)");
  }
  const std::int64_t cols = shape.back(), rows = product(shape) / cols;
  const std::string x = cast_to(i, n.input(0), "f32");
  Kernel kk{kernel_name(i), "aicpu"};
  kk.nodes = {i};
  kk.shape = {{"aicpu", is_topk ? "topk" : "argmax"}};
  kk.tensors.push_back(use(i, kk, x, "x", values_.at(x).layout, false, "f32"));
  if (kk.tensors[0].dtype != "f32") fail(i, "the input is " + kk.tensors[0].dtype + "; the AI CPU kernel takes f32");
  const bool values = is_topk && !n.output(0).empty();
  if (values) produce(kk, n.output(0), KTensor{"values", "f32", "nd", "", "", "", {rows, k}}, Layout::Nd);
  produce(kk, n.output(is_topk ? 1 : 0), KTensor{"indices", "s32", "nd", "", "", "", {rows, k}}, Layout::Nd);
  kk.args = {"x", num(rows), num(cols), num(k), values ? "values" : "0", "indices"};
  kk.check_inputs = {"x"};
  kk.check = {{"op", is_topk ? "topk" : "argmax"}, {"cols", num(cols)}};
  if (is_topk) kk.check.push_back({"k", num(k)});
  return finish(i, std::move(kk));
}

// Gather: rows picked by index on one axis, by the AI CPU's gather of the runtime firmware (CANN
// runs GatherV2 on the AI CPU): an embedding's lookup (a weight by the token ids a graph input
// holds) or a class token's row (x[:, 0]: an activation by a constant). Byte copies: the rows keep
// their type (a weight's: f16 for a layer, f32 for a graph output); the indices are s32. Both
// constant: folded when the model is compiled.
bool Compiler::gather(int i) {
  const auto& n = node(i);
  const std::string &data = n.input(0), &idx = n.input(1);
  for (const std::string& v : {data, idx})
    if (!is_weight(v) && !available(v)) return false;
  const auto per_image = [&](const std::string& v) { return is_weight(v) ? ref_.at(v).shape : image_shape(v); };
  const Dims shape = per_image(data);
  const std::int64_t rank = std::int64_t(shape.size());
  std::int64_t axis = Attrs{n}.i("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    fail(i, "axis " + std::to_string(Attrs{n}.i("axis", 0)) + " of a rank-" + std::to_string(rank) + " input");
  if (!is_weight(data) && batch_ > 1 && (axis == 0 || !is_weight(idx)))
    fail(i, axis == 0 ? "a Gather over the batch axis of an activation is not lowered"
                      : "a Gather of an activation by indices that are not a constant is lowered at a batch of 1");
  if (is_weight(data) && init_.at(data) && integer_type(init_.at(data)->data_type()))
    fail(i, "a table of integers is not lowered (the rows would be held in f16, exact only up to 2048)");
  Kernel k{kernel_name(i), "aicpu"};
  k.nodes = {i};
  k.shape = {{"aicpu", "gather"}};
  // The rows are copied as they are: a graph output no layer reads is f32 (as the model gives it),
  // so an f16 map is cast first; a weight or a graph input not placed yet is placed in that type.
  const std::string want = out_dtype(n.output(0));
  const std::string src = is_weight(data) || want != "f32" ? data : cast_to(i, data, "f32");
  const std::string dt = !is_weight(src) && !ref(src).empty() ? values_.at(src).dtype : want;
  k.tensors.push_back(is_weight(src) ? weight_tensor(i, k, KTensor{"x", dt, "nd", "", "", "", shape}, ref_.at(src))
                                     : use(i, k, src, "x", Layout::Nd, false, dt));
  if (is_weight(idx)) {
    Tensor picked = ref_.at(idx);
    if (picked.shape.empty()) picked.shape = {1};  // a scalar index (x[:, 0]): one element stored
    k.tensors.push_back(weight_tensor(i, k, KTensor{"indices", "s32", "nd", "", "", "", picked.shape}, picked));
  } else {
    // Ids an element-wise reader placed first (input_ids == pad) are f32, exact up to 2^24: cast.
    const bool f32 = !ref(idx).empty() && values_.at(idx).dtype == "f32";
    k.tensors.push_back(use(i, k, f32 ? cast_to(i, idx, "s32") : idx, "indices", Layout::Nd, false, "s32"));
    if (k.tensors.back().dtype != "s32")
      fail(i, "indices computed in " + k.tensors.back().dtype +
                  ": the AI CPU's gather reads s32 (a graph input's, a constant's, an ArgMax's)");
  }
  const std::int64_t outer = product(shape, 0, std::size_t(axis)), rows = shape[std::size_t(axis)];
  const std::int64_t cols = product(shape, std::size_t(axis) + 1), picks = product(per_image(idx));
  produce(k, n.output(0), KTensor{"y", k.tensors[0].dtype, "nd", "", "", "", {outer * picks * cols}}, Layout::Nd);
  k.args = {"y", num(outer), num(picks), num(cols * elem_bytes(k.tensors[0].dtype)), "x", num(rows), "indices"};
  k.check_inputs = {"x", "indices"};
  k.check = {{"op", "gather"}, {"cols", num(cols)}};
  return finish(i, std::move(k));
}

// Head h's slice of a tensor of `heads` slices of `shape` each: an alias of it moved on by h
// slices (a tensor placed here is the whole; head 0 reads its start).
KTensor Compiler::slice(KTensor t, std::int64_t heads, std::int64_t h, const Dims& shape) const {
  if (heads == 1 || t.alias.empty()) return t;
  t.shape = shape;
  t.offset = h * product(shape) * elem_bytes(t.dtype);
  return t;
}

// Node i's weight B for gemm head h: B^T (n x k; the model's k x n transposed here) times alpha, as
// weight_layout stores it.
KTensor Compiler::fractal_b(int i, const Kernel& k, const GemmPlan& p, std::int64_t h) {
  const Tensor& all = ref_.at(node(i).input(1));
  const std::size_t per = std::size_t(p.n * p.k), at = per * std::size_t(h);
  Tensor t{{p.n, p.k}, std::vector<float>(per)};
  for (std::int64_t col = 0; col < p.n; ++col)
    for (std::int64_t r = 0; r < p.k; ++r)
      t.data[std::size_t(col * p.k + r)] = p.alpha * all.data[at + std::size_t(p.bt ? col * p.k + r : r * p.n + col)];
  return weight_tensor(i, k, KTensor{"b", "f16", weight_layout(p.n, "nd"), "", "", "", t.shape}, t);
}

// Gemm's bias (f32) or B (f16; a weight B is fractal_b's) from input j of node i: a weight times
// `factor` (head h's slice of `heads`), written now; or an activation (factor 1), read where it is
// (B transposed or not).
KTensor Compiler::gemm_operand(int i, Kernel& k, int j, const std::string& name, float factor, const Dims& shape,
                               std::int64_t heads, std::int64_t h) {
  const std::string dt = name == "bias" ? "f32" : "f16";
  if (constant(node(i).input(j))) {
    const Tensor& all = ref_.at(node(i).input(j));
    const std::size_t per = all.data.size() / std::size_t(heads);
    Tensor t{shape, std::vector<float>(all.data.begin() + std::ptrdiff_t(per * std::size_t(h)),
                                       all.data.begin() + std::ptrdiff_t(per * std::size_t(h + 1)))};
    for (float& v : t.data) v *= factor;
    if (t.data.size() == 1) t.data.resize(std::size_t(product(shape)), t.data[0]);  // a scalar C: every column
    return weight_tensor(i, k, KTensor{name, dt, "nd", "", "", "", shape}, t);
  }
  if (factor != 1.0f) fail(i, "alpha or beta other than 1 on an input that is not a weight is not lowered");
  // A graph input: converted to dt at load.
  if (values_.at(node(i).input(j)).scale != 1.0)
    fail(i, "operand " + name + " is scaled by a constant (Mul or Div), lowered only into the Softmax that reads it");
  const std::string v = dt == "f16" ? cast_to(i, node(i).input(j), "f16") : node(i).input(j);
  KTensor t = slice(use(i, k, v, name, Layout::Nd, false, dt, true), heads, h, shape);
  if (t.dtype != dt) fail(i, "operand " + name + " is " + t.dtype + " where the gemm kernel takes " + dt);
  return t;
}

// Mul or Div of x by a constant scalar before the Softmax that is its one reader, or before the
// Where of a masked softmax as its scores: a view of x the Softmax folds into its scale (an
// attention's 1 / sqrt(d)); false for any other.
bool Compiler::scale_view(int i) {
  const auto& n = node(i);
  const int c = n.input_size() != 2 ? -1 : constant(n.input(1)) ? 1 : constant(n.input(0)) ? 0 : -1;
  const int next = sole_consumer(n.output(0));
  const bool softmax = next >= 0 && (node(next).op_type() == "Softmax" ||
                                     (masked_softmax_.count(next) && node(next).input(1) == n.output(0)));
  if (c < 0 || ref_.at(n.input(c)).elements() != 1 || (n.op_type() == "Div" && c == 0) || !softmax ||
      !available(n.input(1 - c)))
    return false;
  Value v = values_.at(n.input(1 - c));
  const double f = ref_.at(n.input(c)).data[0];
  v.scale *= n.op_type() == "Mul" ? f : 1.0 / f;
  // A masked softmax takes a positive scale (a Softmax alone refuses another, naming it); another
  // before its Where stays a kernel of its own.
  if (node(next).op_type() == "Where" && !(v.scale > 0)) return false;
  set_view(i, v);
  return true;
}

// The element-wise ops and activations. A binary op takes two activations of one shape, layout
// and type; or an activation and a constant (a weight, or a graph input of another shape) that
// broadcasts to it by numpy's rules, written out at the activation's shape as it is stored (a Div
// by a constant: a Mul by its reciprocal). An activation reads its one input where it is
// (clear_pads keeps an NC1HWC0 map's pad channels 0).
bool Compiler::elementwise(int i) {
  const auto& n = node(i);
  if ((n.op_type() == "Mul" || n.op_type() == "Div") && scale_view(i)) return true;
  static const std::map<std::string, std::string> kOps = {{"Add", "add"},
                                                          {"Sub", "sub"},
                                                          {"Mul", "mul"},
                                                          {"Div", "mul"},
                                                          {"Max", "max"},
                                                          {"Min", "min"},
                                                          {"Relu", "relu"},
                                                          {"Abs", "abs"},
                                                          {"Neg", "neg"},
                                                          {"Sqrt", "sqrt"},
                                                          {"Reciprocal", "rec"},
                                                          {"Log", "log"},
                                                          {"Exp", "exp"},
                                                          {"Sigmoid", "sigmoid"},
                                                          {"Tanh", "tanh"},
                                                          {"Clip", "clip"},
                                                          {"LeakyRelu", "leaky_relu"},
                                                          {"HardSigmoid", "hard_sigmoid"},
                                                          {"HardSwish", "hard_swish"},
                                                          {"Erf", "erf"},
                                                          {"Equal", "eq"},
                                                          {"Less", "lt"},
                                                          {"LessOrEqual", "le"},
                                                          {"Greater", "gt"},
                                                          {"GreaterOrEqual", "ge"},
                                                          {"Not", "not"},
                                                          {"And", "min"},  // of bools held as 0 and 1
                                                          {"Or", "max"},
                                                          {"Xor", "ne"},
                                                          {"Where", "where"}};
  std::string op = kOps.at(n.op_type());
  // A Clip's bounds are parameters; Max and Min take one input or more (one: max(x, x)).
  const unsigned inputs = kernels::elementwise_inputs(op);
  const bool binary = inputs > 1, variadic = op == "max" || op == "min";
  const int operands = binary ? n.input_size() : 1;
  for (int j = 0; j < operands; ++j)
    if (!is_weight(n.input(j)) && !available(n.input(j))) return false;
  if (binary && !variadic && n.input_size() != int(inputs))
    fail(i, "an op of " + std::to_string(inputs) + " operands has " + std::to_string(operands));
  if (scalar_op(i) || channel_gate(i) || silu(i) || where_scalar(i)) return true;
  const Dims full = image_shape(n.output(0));
  std::vector<Operand> in;
  for (int j = 0; j < operands; ++j) in.push_back(operand(i, j, full));
  if (n.op_type() == "Div" && in[1].constant.data.empty()) op = "div";  // by a constant: a Mul by its reciprocal
  expand_operands(i, in, full);
  if (binary && in.size() == 1) in.push_back(in[0]);
  const Params params = activation_params(i);
  elementwise_kernel(i, 0, "", op, {in.begin(), in.begin() + (variadic ? 2 : int(inputs))}, n.output(0), params);
  // More than two: each further kernel takes the result so far and the next input.
  for (std::size_t j = 2; variadic && j < in.size(); ++j)
    elementwise_kernel(i, j - 1, "_" + std::to_string(j), op, {{n.output(0), {}}, in[j]}, n.output(0));
  clear_pads(i, op, params);  // an op whose f(0) is not 0: 0 / 0, 0 == 0 in a map's pad channels
  done_[std::size_t(i)] = true;
  return true;
}

// NC1HWC0's pad channels hold 0, which a conv or a gemm multiplies by its weights' zeros there
// (and an inf or NaN would spread through). Every op keeps them 0 but an activation whose f(0)
// is not 0 (a sigmoid's 0.5, an exp's 1, a clip's lower bound above 0): on a map whose channels
// are no whole groups of 16 it is followed by a Mul, in place, by a map of ones, stored with its
// pad channels 0 as every constant is (f(0) is finite for every op, so the product is 0).
void Compiler::clear_pads(int i, const std::string& op, const Params& params) {
  const std::string& out = node(i).output(0);
  const Value& v = values_.at(out);
  if (v.layout != Layout::Nc1hwc0 || v.shape[1] % 16 == 0) return;
  platform::Reference r;
  for (const auto& [key, value] : params) (key == "alpha" ? r.alpha : r.beta) = std::stod(value);
  const platform::RefCheck* const* check = platform::reference_checks().find(op);
  const double zero = check && (*check)->element ? (*check)->element(r, 0.0, 0.0) : 0.0;
  if (zero == 0.0) return;
  if (!std::isfinite(zero))
    fail(i, "on a feature map of " + std::to_string(v.shape[1]) + " channels (stored in groups of 16), " + op +
                " of the pad channels' zeros is not finite: lowered where the channels fill whole groups");
  const Dims shape = image_shape(out);
  elementwise_kernel(i, 1, "_pads", "mul",
                     {{out, {}}, {"", Tensor{shape, std::vector<float>(std::size_t(product(shape)), 1.0f)}}}, out);
}

// Where whose value (or both) is a constant of one element: where_else, where_then, where_both,
// the value the vector unit's scalar (vdup), not a tensor of it written out at the output's shape
// (GPT-2's mask value over every head's scores; a padding mask's -10000 and 0). Past f16's range
// it is f16's bound (elementwise_kernel).
bool Compiler::where_scalar(int i) {
  const auto& n = node(i);
  if (n.op_type() != "Where") return false;
  // An infinity (masked_fill(-inf)) stays a tensor of it: a scalar parameter is a finite number.
  const auto finite = [](double v) { return std::isfinite(v) ? v : std::nan(""); };
  const double a = finite(constant_scalar(n.input(1))), b = finite(constant_scalar(n.input(2)));
  if (std::isnan(a) && std::isnan(b)) return false;
  const Dims full = image_shape(n.output(0));
  std::vector<Operand> in{operand(i, 0, full)};
  if (std::isnan(a) || std::isnan(b)) in.push_back(operand(i, std::isnan(a) ? 1 : 2, full));
  expand_operands(i, in, full);
  const std::string op = in.size() == 1 ? "where_both" : std::isnan(b) ? "where_then" : "where_else";
  Params params{{"alpha", num(std::isnan(a) ? b : a)}};
  if (in.size() == 1) params.push_back({"beta", num(b)});
  elementwise_kernel(i, 0, "", op, in, n.output(0), params);
  clear_pads(i, op, params);  // beta (where_else: alpha) in the pad channels, where the condition is 0
  done_[std::size_t(i)] = true;
  return true;
}

// x op c, c a constant of one element: the vector unit's scalar op (adds, muls) on x where it is,
// no map of c written out. Not c - x or c / x; not a nonzero add on a map with pad channels (they
// would hold c; the map path's constant holds 0 there); not a reciprocal past f16's range (the
// map path says why).
bool Compiler::scalar_op(int i) {
  const auto& n = node(i);
  const std::string& t = n.op_type();
  if (n.input_size() != 2 || (t != "Add" && t != "Sub" && t != "Mul" && t != "Div")) return false;
  const int c = !std::isnan(constant_scalar(n.input(1))) ? 1 : !std::isnan(constant_scalar(n.input(0))) ? 0 : -1;
  if (c < 0 || (c == 0 && (t == "Sub" || t == "Div"))) return false;
  const std::string& x = n.input(1 - c);
  if (is_weight(x) || image_shape(x) != image_shape(n.output(0))) return false;
  double v = constant_scalar(n.input(c));
  v = t == "Sub" ? -v : t == "Div" ? 1.0 / v : v;
  const bool add = t == "Add" || t == "Sub";
  const Value& xv = values_.at(x);
  if ((add && v != 0 && xv.layout == Layout::Nc1hwc0 && xv.shape[1] % 16) || !std::isfinite(v) ||
      (xv.dtype == "f16" && !(std::fabs(v) <= 65504.0)))
    return false;  // the map path, or its refusal naming why
  elementwise_kernel(i, 0, "", add ? "adds" : "muls", {{x, {}}}, n.output(0), {{"alpha", num(v)}});
  done_[std::size_t(i)] = true;
  return true;
}

// Mul of an NC1HWC0 feature map by a gate of one value per channel, an activation of 1 x C x 1 x 1
// (a squeeze-and-excitation block's: EfficientNet's, MobileNetV3's): the channel_mul kernel, the
// gate read where it is (a 1 x 1 map holds its channels in order, then its pad channels' zeros;
// an ND gate of whole groups of 16 likewise). One pass, exact (one f16 product each).
bool Compiler::channel_gate(int i) {
  const auto& n = node(i);
  if (n.op_type() != "Mul" || n.input_size() != 2) return false;
  int j = 0;
  auto fits = [&](int m) {
    const std::string &map = n.input(m), &gate = n.input(1 - m);
    if (is_weight(map) || is_weight(gate) || ref(map).empty() || ref(gate).empty()) return false;
    const Value &x = values_.at(map), &g = values_.at(gate);
    const Dims xs = image_shape(map), gs = image_shape(gate);
    // One value per channel, in channel order: a 1 x 1 NC1HWC0 map (its pads past them), or ND of
    // C values (a Gemm's, reshaped) when C fills whole groups of 16 (the scale row the conv reads).
    const bool per_channel = gs.size() >= 3 && gs.size() <= 4 && product(gs) == xs[1] && gs[gs.size() - 3] == xs[1];
    const bool stored =
        (g.layout == Layout::Nc1hwc0 || (xs[1] % 16 == 0 && g.map.empty())) && !g.transposed && g.scale == 1.0;
    return x.spatial_map() && x.dtype == "f16" && xs.size() == 4 && per_channel && stored &&
           image_shape(n.output(0)) == xs;
  };
  if (!fits(j) && !fits(j = 1)) return false;
  const std::string &map = n.input(j), &out = n.output(0);
  const Dims x = values_.at(map).shape;
  const std::string gate = cast_to(i, n.input(1 - j), "f16");
  Kernel k{kernel_name(i), "channel_mul"};
  k.nodes = {i};
  k.shape = {{"h", num(x[2])}, {"w", num(x[3])}, {"c", num(x[1])}};
  k.tensors.push_back(use(i, k, map, "x", Layout::Nc1hwc0));
  k.tensors.push_back(use(i, k, gate, "g", values_.at(gate).layout));
  produce(k, out, KTensor{"y", "f16"}, Layout::Nc1hwc0);
  k.args = {"x", "g", "y"};
  k.check_inputs = {"x", "g"};
  k.check = {{"op", "channel_mul"}};
  return finish(i, std::move(k));
}

// The broadcast operands of node i's element-wise op, each expanded to the output's shape `full`
// (expanded), or read as it is where broadcasting adds axes of 1 only. An ND op only: a feature
// map's channels are stored in groups of 16, which a row broadcast does not follow. Where one
// placed operand is f16 (the network's activations), an f32 one (from a graph input's arithmetic:
// an attention mask made from the ids' padding) is cast to f16 first.
void Compiler::expand_operands(int i, std::vector<Operand>& in, const Dims& full) {
  const auto placed = [&](const Operand& o) { return !o.value.empty() && !ref(o.value).empty(); };
  for (Operand& o : in)
    if (placed(o)) o.value = real_valued(i, o.value);
  const bool f16 = std::any_of(in.begin(), in.end(),
                               [&](const Operand& o) { return placed(o) && values_.at(o.value).dtype == "f16"; });
  for (Operand& o : in)
    if (f16 && placed(o) && values_.at(o.value).dtype == "f32") o.value = cast_to(i, o.value, "f16");
  std::vector<std::string> values;
  for (const Operand& o : in) values.push_back(o.value);
  const std::string dt = f16 ? "f16" : placed_form(values).second;  // an input placed by the expand
  for (const Operand& o : in)
    if (!o.broadcast && !o.value.empty() && !ref(o.value).empty() && values_.at(o.value).layout == Layout::Nc1hwc0)
      for (const Operand& b : in)
        if (b.broadcast)
          fail(i, "'" + b.value + "', an activation of " + Tensor{image_shape(b.value), {}}.shape_str() +
                      ", broadcast onto the feature map '" + o.value +
                      "' (stored NC1HWC0): broadcasting an activation onto a map is not lowered (a constant, or a "
                      "gate of one value per channel for a Mul, is)");
  for (std::size_t j = 0; j < in.size(); ++j) {
    if (in[j].broadcast && product(image_shape(in[j].value)) != product(full))
      in[j].value = expanded(i, in[j].value, full, 16 + j, "", dt);
    in[j].broadcast = false;
  }
}

// Placed value v as the element-wise kernel takes it: f16 or f32 as it is; integer indices (an
// ArgMax's, token ids placed s32 for a Gather) cast to f32 once, exact up to 2^24.
std::string Compiler::real_valued(int i, const std::string& v) {
  const std::string& dt = values_.at(v).dtype;
  return dt == "f16" || dt == "f32" ? v : cast_to(i, v, "f32");
}

// Activation v broadcast by numpy's rules to `full` (its image's shape), as a value of its own:
// expand kernels, each copying its input viewed as outer x 1 x inner to outer x rows x inner, one
// per run of adjacent axes broadcast (the last run first: 3 x 1 to 2 x 3 x 6 is 3 x 1 to 3 x 6,
// then to 2 x 3 x 6). `out` names the value (an Expand's output); else it is v#<full>, made once
// per image and read by every op that broadcasts v so.
std::string Compiler::expanded(int i, const std::string& v, const Dims& full, std::size_t head, const std::string& out,
                               const std::string& dtype) {
  std::string name = out.empty() ? v + "#" + Tensor{full, {}}.shape_str() : out;
  if (out.empty() && values_.count(name) && !values_.at(name).refs[image_].empty()) return name;
  const Dims from = image_shape(v);
  if (from.size() > full.size())
    fail(i, "'" + v + "' of " + Tensor{from, {}}.shape_str() + " has more axes than " + Tensor{full, {}}.shape_str());
  Dims have(full.size() - from.size(), 1);
  have.insert(have.end(), from.begin(), from.end());
  for (std::size_t d = 0; d < full.size(); ++d)
    if (have[d] != full[d] && have[d] != 1)
      fail(i, "'" + v + "' of " + Tensor{from, {}}.shape_str() + " does not broadcast to " +
                  Tensor{full, {}}.shape_str() + " (axis " + std::to_string(d) + ")");
  std::string at = v;
  for (std::size_t d = full.size(); have != full; head += 8) {
    while (have[d - 1] == full[d - 1]) --d;  // the last axis broadcast, and the axes of 1 before it
    std::size_t first = d - 1;
    while (first > 0 && have[first - 1] == 1) --first;
    Dims step = have;
    std::copy(full.begin() + std::ptrdiff_t(first), full.begin() + std::ptrdiff_t(d),
              step.begin() + std::ptrdiff_t(first));
    const std::string to = step == full ? name : at + "#" + Tensor{step, {}}.shape_str();
    expand_kernel(i, at, to, step, {product(have, 0, first), product(full, first, d), product(full, d)}, head, dtype);
    at = to, have = step, d = first;
  }
  return name;
}

// Kernel `head` of node i: value x, viewed as outer x 1 x inner (runs), copied to y (of `shape`),
// outer x rows x inner (x placed in `dtype` when it is a graph input not placed yet). The AI Core's expand where it
// takes the rows (runs of one 2- or 4-byte value, or whole blocks), else the AI CPU's (byte copies).
void Compiler::expand_kernel(int i, const std::string& x, const std::string& y, const Dims& shape, const Dims& runs,
                             std::size_t head, const std::string& dtype) {
  const Value& v = values_.at(x);
  if (!ref_.count(y)) {  // a value of its own: its values for the checks (none where x's were dropped)
    Dims all = shape;
    if (batch_ > 1) all[0] = std::int64_t(batch_);
    Tensor t{all, {}};
    if (!ref_.at(x).data.empty()) expand(ref_.at(x), all, t);
    ref_[y] = std::move(t);
  }
  const std::string dt = ref(x).empty() ? dtype : v.dtype;  // a graph input not placed yet: placed in dtype
  const std::int64_t eb = elem_bytes(dt);
  const bool core = (eb == 2 || eb == 4) && (runs[2] == 1 || runs[2] * eb % 32 == 0);
  Kernel k{kernel_name(i, "_x" + std::to_string(head)), core ? "expand" : "aicpu"};
  k.nodes = {i};
  k.head = head;
  k.tensors.push_back(use(i, k, x, "x", Layout::Nd, false, dt));
  produce(k, y, KTensor{"y", dt}, Layout::Nd);
  if (core) {
    k.shape = {{"dtype", dt}, {"outer", num(runs[0])}, {"rows", num(runs[1])}, {"inner", num(runs[2])}};
    k.args = {"x", "y"};
  } else {
    k.shape = {{"aicpu", "expand"}};
    k.args = {"y", "x", num(runs[0]), num(runs[1]), num(runs[2] * eb)};
  }
  k.check_inputs = {"x"};
  k.check = {{"op", "expand"}, {"cols", num(runs[2])}, {"rows", num(runs[1])}};
  place(std::move(k));
}

// Expand of an activation to a shape (a constant): expand kernels (expanded); where it only adds
// axes of 1, a view of it.
bool Compiler::expand_node(int i) {
  const auto& n = node(i);
  if (!available(n.input(0))) return false;
  const Dims full = image_shape(n.output(0));
  if (image_shape(n.input(0)) == full && !outputs_.count(n.output(0)))  // the input itself (a map too)
    return set_view(i, values_.at(n.input(0))), true;
  if (product(image_shape(n.input(0))) == product(full)) return view(i);  // axes of 1 added only
  expanded(i, n.input(0), full, 0, n.output(0));
  done_[std::size_t(i)] = true;
  return true;
}

// Slice of an activation by constant starts, ends, axes and steps (slice_plan): one copy per axis
// sliced (slice_axes); a Slice that takes every element is a view.
bool Compiler::slice_node(int i) {
  const auto& n = node(i);
  for (int j = 1; j < n.input_size(); ++j)
    if (!n.input(j).empty() && !constant(n.input(j)))
      fail(i, "input " + std::to_string(j) + " ('" + n.input(j) +
                  "') is computed from the activations: starts, ends, axes and steps known when the model is "
                  "compiled are lowered");
  if (!available(n.input(0))) return false;
  slice_axes(i, n.input(0), n.output(0), slice_plan(n, m_.opset, ref_.at(n.input(0)).shape, inputs_of(n)), 0, "");
  done_[std::size_t(i)] = true;
  return true;
}

// Split of an activation by constant sizes (split_plan): each output read by a later node or saved
// is its run of the axis, a slice (slice_axes).
bool Compiler::split_node(int i) {
  const auto& n = node(i);
  if (n.input_size() > 1 && !n.input(1).empty() && !constant(n.input(1)))
    fail(i, "split ('" + n.input(1) +
                "') is computed from the activations: sizes known when the model is compiled "
                "are lowered");
  if (!available(n.input(0))) return false;
  const SplitPlan p = split_plan(n, m_.opset, ref_.at(n.input(0)).shape, inputs_of(n));
  std::vector<SliceAxis> plan = whole_axes(ref_.at(n.input(0)).shape);
  for (int q = 0; q < n.output_size(); plan[p.axis].start += plan[p.axis].count, ++q) {
    plan[p.axis].count = p.sizes[std::size_t(q)];
    const std::string& y = n.output(q);
    if (!y.empty() && (consumers_.count(y) || outputs_.count(y)))
      slice_axes(i, n.input(0), y, plan, std::size_t(q) * 8, "_" + std::to_string(q));
  }
  done_[std::size_t(i)] = true;
  return true;
}

// x sliced by `plan` (an entry per axis, the batch's included) into out: one copy per axis that
// takes less than all of it (slice_copy; the last axis first, each copy a value of its own but the
// last), kernels `head` on of node i. One that takes all of x is a view of it, but for a graph
// output (copied: its file is its own) or another output than node i's first. The batch's axis is
// sliced at a batch of 1 only.
void Compiler::slice_axes(int i, const std::string& x, const std::string& out, const std::vector<SliceAxis>& plan,
                          std::size_t head, const std::string& tail) {
  const Dims all = ref_.at(x).shape;
  if (batch_ > 1 && !(plan[0].start == 0 && plan[0].step == 1 && plan[0].count == all[0]))
    fail(i, "axis 0 slices the batch: lowered at a batch of 1");
  std::vector<std::size_t> cut;
  for (std::size_t d = 0; d < plan.size(); ++d)
    if (plan[d].start != 0 || plan[d].step != 1 || plan[d].count != all[d]) cut.push_back(d);
  if (cut.empty() && !outputs_.count(out) && out == node(i).output(0)) return set_view(i, values_.at(x));
  if (cut.empty()) cut.push_back(plan.size() - 1);  // all of x, as a value of its own: a copy
  const Layout place = slice_placement(x);
  std::string at = x;
  for (std::size_t c = cut.size(); c-- > 0; ++head) {
    const std::size_t d = cut[c];
    const std::string to = c == 0 ? out : out + "#a" + std::to_string(d);
    if (!ref_.count(to)) {  // a value of its own: its values for the checks (none where x's were dropped)
      std::vector<SliceAxis> one = whole_axes(ref_.at(at).shape);
      one[d] = plan[d];
      ref_[to] = sliced(ref_.at(at), one);
    }
    slice_copy(i, {at, to, place}, d, plan[d], head, cut.size() > 1 ? tail + "_a" + std::to_string(d) : tail);
    at = to;
  }
}

// Where a graph input not placed yet (or a view of one) is placed by the first slice of it: NC1HWC0
// where a conv or pool reads it or a slice of it (reaches_map: a crop of an image before the first
// conv, a 1-D signal's halves, an image both cropped and read whole), else ND.
Layout Compiler::slice_placement(const std::string& x) const {
  const std::size_t rank = image_shape(x).size();
  return (rank == 3 || rank == 4) && reaches_map(x) ? Layout::Nc1hwc0 : Layout::Nd;
}

// Whether a conv, a ConvTranspose or a pool reads v as its input, directly or through ops that keep
// a map one (element-wise ops, Identity, Cast, Dropout, Pad, Slice, Split), along any path.
bool Compiler::reaches_map(const std::string& v, int depth) const {
  static const std::set<std::string> kKeeps = {"Identity", "Cast", "Dropout", "Pad", "Slice", "Split"};
  if (depth > 8 || !consumers_.count(v)) return false;
  for (int c : consumers_.at(v)) {
    const auto& n = node(c);
    if ((map_reader(n) || n.op_type() == "ConvTranspose") && n.input(0) == v) return true;
    const auto l = lowerings().find(n.op_type());
    if (!kKeeps.count(n.op_type()) && (l == lowerings().end() || l->second != &Compiler::elementwise)) continue;
    for (const std::string& o : n.output())
      if (!o.empty() && reaches_map(o, depth + 1)) return true;
  }
  return false;
}

// The type a graph input not placed yet (or a view of one) is placed in by an ND copy: its own, as
// a copy moves it (s32 for an integer one: token ids, exact to 2^24, as a Gather reads them; f16
// for float16; else f32).
std::string Compiler::placed_type(const std::string& v) const {
  for (const auto* infos : {&g_.input(), &g_.value_info()})
    for (const auto& vi : *infos)
      if (vi.name() == v) {
        const int type = vi.type().tensor_type().elem_type();
        return integer_type(type) ? "s32" : type == onnx::TensorProto::FLOAT16 ? "f16" : "f32";
      }
  return "f32";
}

// Kernel `head` of node i: value io.x sliced along `axis` by `a` into io.y (io.x placed in
// io.place when it is a graph input not placed yet). An ND value is x viewed as outer x dim x
// inner, y's runs a step's inner (all of a step-1 slice's: one run a row); an NC1HWC0 map as its
// stored C1 x H x W x C0, its channels in whole groups of 16 from a group's start (the last group
// may end in the pad channels, as zero in y as in x), its rows and columns any step forward. The
// AI Core's slice kernel where the runs, strides and start are whole 32-byte blocks, else the AI
// CPU's (byte copies, steps backward too).
void Compiler::slice_copy(int i, const SliceIo& io, std::size_t axis, const SliceAxis& a, std::size_t head,
                          const std::string& tail) {
  const bool placed = !ref(io.x).empty();
  const Layout layout = placed ? values_.at(io.x).layout : io.place;
  const bool map = layout == Layout::Nc1hwc0;
  Kernel k{kernel_name(i, tail), ""};
  k.nodes = {i};
  k.head = head;
  const std::string dt = placed ? values_.at(io.x).dtype : map ? "f16" : placed_type(io.x);
  k.tensors.push_back(use(i, k, io.x, "x", layout, false, dt));
  std::int64_t start = a.start, count = a.count;
  Dims dims = image_shape(io.x);
  if (map) map_axis(i, values_.at(io.x).shape, a, axis, start, count, dims);
  const std::int64_t outer = product(dims, 0, axis), dim = dims[axis], inner = product(dims, axis + 1);
  const std::int64_t rows = a.step == 1 ? 1 : count, run = a.step == 1 ? count * inner : inner, eb = elem_bytes(dt);
  const kernels::SliceShape s{*aicore::dtype_from(dt),     std::uint64_t(outer),       std::uint64_t(rows),
                              std::uint64_t(run),          std::uint64_t(dim * inner), std::uint64_t(a.step * inner),
                              std::uint64_t(start * inner)};
  const bool core =
      a.step > 0 && kernels::slice_refusal(s).empty() && outer <= (1 << 24) && rows <= (1 << 24) && run <= (1 << 30);
  k.library = core ? "slice" : "aicpu";
  produce(k, io.y, KTensor{"y", dt}, layout);
  if (core) {
    k.shape = {{"dtype", dt}, {"outer", num(outer)}, {"rows", num(rows)}, {"inner", num(run)}};
    if (outer > 1) k.shape.push_back({"outer_stride", num(dim * inner)});
    if (rows > 1) k.shape.push_back({"row_stride", num(a.step * inner)});
    k.shape.push_back({"start", num(start * inner)});
    k.args = {"x", "y"};
  } else {
    k.shape = {{"aicpu", "slice"}};
    k.args = {"y",           "x",
              num(outer),    num(dim * inner * eb),
              num(rows),     num(a.step * inner * eb),
              num(run * eb), num(start * inner * eb)};
  }
  k.check_inputs = {"x"};
  k.check = {{"op", "slice"}};
  place(std::move(k));
}

// A slice of an NC1HWC0 map (stored 1 x C x H x W; N x C x L as 1 x C x 1 x L) along its logical
// `axis` by `a`, as a slice of its stored C1 x H x W x C0: `axis`, `start` and `count` (channels:
// groups of 16) and `dims` become the stored form's. Refused: the batch's axis, a step backward,
// channels from other than a group's start or at another step than 1.
void Compiler::map_axis(int i, const Dims& s, const SliceAxis& a, std::size_t& axis, std::int64_t& start,
                        std::int64_t& count, Dims& dims) const {
  const std::size_t named = axis;
  if (dims.size() == 3 && axis == 2) axis = 3;
  if (axis == 0) fail(i, "the batch's axis of a feature map is sliced at a batch of 1 only, by a view");
  if (a.step < 0) fail(i, "a step backward along a feature map's axis " + std::to_string(named) + " is not lowered");
  if (axis == 1 && (start % 16 || a.step != 1 || (count % 16 && start + count != s[1])))
    fail(i, "channels from " + std::to_string(start) + ", " + std::to_string(count) + " of them, step " +
                std::to_string(a.step) +
                ": a feature map's channels are sliced in whole groups of 16 (NC1HWC0's C0) from a group's start, "
                "step 1 (the last group may end at the map's last channel)");
  if (axis == 1) start /= 16, count = (count + 15) / 16;
  dims = {(s[1] + 15) / 16, s[2], s[3], 16};
  axis -= 1;
}

// Pow outside a LayerNormalization written out, by a constant scalar exponent: x^2 as x x (RMSNorm's
// x.pow(2), as LLaMA's and T5's exports write it), x^0.5 a square root, x^-1 a reciprocal, x^1 x
// times 1, each the exact power rounded once, as NumPy's; any other (GPT-2's gelu_new x^3, where
// its GELU is not found whole) the kernel's pows, computed in f32 (products for an integral one,
// e^(e ln x) else). On a map whose channels are no whole groups of 16, x^0 is followed by the Mul
// that clears the pad channels, and a negative exponent is refused (0^-1 is an infinity).
bool Compiler::power(int i) {
  const auto& n = node(i);
  const double e = constant_scalar(n.input(1));
  if (!std::isfinite(e))
    fail(i, std::isnan(e) ? std::string("the exponent is not one constant value (a tensor of exponents is not lowered)")
                          : "an exponent of " + num(e) + " (a finite constant is lowered)");
  if (!available(n.input(0))) return false;
  const std::string& x = n.input(0);
  std::string op = e == 2.0 ? "mul" : e == 1.0 ? "muls" : e == 0.5 ? "sqrt" : e == -1.0 ? "rec" : "pows";
  Params params;
  if (op == "muls" || op == "pows") params = {{"alpha", num(e)}};
  if (op == "mul")
    elementwise_kernel(i, 0, "", op, {{x, {}}, {x, {}}}, n.output(0));
  else
    elementwise_kernel(i, 0, "", op, {{x, {}}}, n.output(0), params);
  clear_pads(i, op, params);
  done_[std::size_t(i)] = true;
  return true;
}

// Sigmoid(x) whose one reader is a Mul by x itself (SiLU, Swish: EfficientNet's, YOLOv5's, as
// exporters write x * sigmoid(x)): one silu kernel, one pass (and f(0) = 0, no pads to clear).
bool Compiler::silu(int i) {
  const auto& n = node(i);
  const int mul = n.op_type() == "Sigmoid" ? sole_consumer(n.output(0)) : -1;
  if (mul < 0 || node(mul).op_type() != "Mul" || node(mul).input_size() != 2) return false;
  const auto& m = node(mul);
  if ((m.input(0) == n.output(0) ? m.input(1) : m.input(0)) != n.input(0) || is_weight(n.input(0))) return false;
  elementwise_kernel(i, 0, "", "silu", {{n.input(0), {}}}, m.output(0), {}, {mul});
  done_[std::size_t(i)] = done_[std::size_t(mul)] = true;
  return true;
}

// The patterns found from each node of type `op` (match: node, pattern -> whether it is one), each
// member node mapped to its pattern's index.
template <typename P, typename Match>
void find_patterns(const onnx::GraphProto& g, const std::string& op, Match match, std::vector<P>& found,
                   std::map<int, std::size_t>& member) {
  for (int i = 0; i < g.node_size(); ++i) {
    P p;
    if (g.node(i).op_type() != op || !match(i, p)) continue;
    for (int j : p.nodes) member[j] = found.size();
    found.push_back(std::move(p));
  }
}

double Compiler::constant_scalar(const std::string& v) const {
  if (v.empty() || !constant(v) || ref_.at(v).elements() != 1) return std::nan("");
  return ref_.at(v).data[0];
}

// GELU as exporters write it, x (1 + erf(x / sqrt 2)) / 2: a Div by sqrt 2 (or a Mul by its
// reciprocal), the Erf, an Add of 1, a Mul by x and a Mul by 1/2 (before or after the Mul by x),
// each result read by the next node only. Recorded before lowering, so whichever of its nodes
// comes first lowers all five as one gelu kernel (one pass over the tensor, not five).
void Compiler::find_gelus() {
  find_patterns(
      g_, "Erf", [&](int i, Gelu& p) { return match_gelu(i, p); }, gelus_, gelu_);
  find_patterns(
      g_, "Tanh", [&](int i, Gelu& p) { return match_gelu_tanh(i, p); }, gelus_, gelu_);
}

// An op pointwise_at computes: Add, Sub, Mul, Div, Pow of two inputs, Tanh of one.
namespace {
bool pointwise_op(const onnx::NodeProto& n) {
  static const std::set<std::string> ops{"Add", "Sub", "Mul", "Div", "Pow"};
  return n.op_type() == "Tanh" ? n.input_size() == 1 : ops.count(n.op_type()) && n.input_size() == 2;
}
}  // namespace

// The value of v where x is a, when the nodes from x to v compute from x and constants of one
// element only, by Add, Sub, Mul, Div, Pow and Tanh (in double); none where another input is met.
// `nodes` gathers them.
std::optional<double> Compiler::pointwise_at(const std::string& v, const std::string& x, double a, std::set<int>& nodes,
                                             int depth) const {
  if (v == x) return a;
  if (const double c = constant_scalar(v); !std::isnan(c)) return c;
  const auto p = producer_.find(v);
  if (p == producer_.end() || depth == 0) return std::nullopt;
  const auto& n = node(p->second);
  if (!pointwise_op(n)) return std::nullopt;
  const auto u = pointwise_at(n.input(0), x, a, nodes, depth - 1);
  const auto w = n.input_size() > 1 ? pointwise_at(n.input(1), x, a, nodes, depth - 1) : 0.0;
  if (!u || !w) return std::nullopt;
  nodes.insert(p->second);
  const std::string& op = n.op_type();
  return op == "Add"   ? *u + *w
         : op == "Sub" ? *u - *w
         : op == "Mul" ? *u * *w
         : op == "Div" ? *u / *w
         : op == "Pow" ? std::pow(*u, *w)
                       : std::tanh(*u);
}

// GELU's tanh form, x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2, however an exporter writes it:
// GPT-2's gelu_new (a Pow of 3, x halved first), PyTorch's approximate="tanh" (x x x, halved last),
// a Div by 2. Found by what it computes, not its shape: x is the one input of the Tanh's operand
// (constants of one element aside), the output one to three sole readers after the Tanh, and the
// nodes between compute GELU's tanh form at 17 points from -30 to 100 (within 3e-5 of it, relative
// past 1: an f16 model's constants, 0.044708 and 0.79785, move it by 1.4e-5 at most; a node more
// that adds 4e-4 or scales by 1.0004, or a term in x^8, is no GELU). Every node but the output is
// read inside the pattern only, and x and the output have one shape.
bool Compiler::match_gelu_tanh(int tanh, Gelu& g) const {
  static const double at[] = {-30, -10, -5, -3, -2, -1.25, -0.5, -0.1, 0, 0.2, 0.7, 1.5, 2.5, 4, 10, 30, 100};
  const auto gelu = [](double a) { return a * (1 + std::tanh(0.79788456080286536 * (a + 0.044715 * a * a * a))) / 2; };
  std::vector<std::string> outs{node(tanh).output(0)};
  for (int j = sole_consumer(outs.back()); j >= 0 && outs.size() < 4; j = sole_consumer(outs.back()))
    outs.push_back(node(j).output(0));
  // Each node's outputs read by nodes of the pattern only (the output aside), and none a graph output.
  const auto inside = [&](const std::set<int>& nodes, const std::string& out) {
    for (int j : nodes)
      for (const std::string& v : node(j).output())
        if (v != out && consumers_.count(v) &&
            (outputs_.count(v) ||
             std::any_of(consumers_.at(v).begin(), consumers_.at(v).end(), [&](int c) { return !nodes.count(c); })))
          return false;
    return true;
  };
  for (const std::string& x : pointwise_sources(node(tanh).input(0)))
    for (auto o = outs.rbegin(); o != outs.rend() - 1; ++o) {
      std::set<int> nodes;
      bool same = !is_weight(x);
      for (double a : at) {
        const auto v = same ? pointwise_at(*o, x, a, nodes, 12) : std::nullopt;
        same = v && std::fabs(*v - gelu(a)) <= 3e-5 * std::max(1.0, std::fabs(gelu(a)));
      }
      if (!same || !nodes.count(tanh) || !inside(nodes, *o) || image_shape(*o) != image_shape(x)) continue;
      g.anchor = tanh, g.op = "gelu_tanh", g.x = x, g.out = *o, g.nodes.assign(nodes.begin(), nodes.end());
      return true;
    }
  return false;
}

// The tensors v is computed from through Add, Sub, Mul, Div, Pow and Tanh (v among them, constants
// of one element not), nearest first, up to 16: the candidates for a pattern's input.
std::vector<std::string> Compiler::pointwise_sources(const std::string& v) const {
  std::vector<std::string> found, queue{v};  // breadth first: the nearest first
  std::set<std::string> seen;
  for (std::size_t i = 0; i < queue.size() && found.size() < 16; ++i) {
    const std::string t = queue[i];
    if (!seen.insert(t).second || !std::isnan(constant_scalar(t))) continue;
    found.push_back(t);
    const auto p = producer_.find(t);
    if (p != producer_.end() && pointwise_op(node(p->second)))
      for (const std::string& in : node(p->second).input()) queue.push_back(in);
  }
  return found;
}

bool Compiler::match_gelu(int erf, Gelu& g) const {
  // f16 models hold sqrt 2 as 1.4140625 (1e-4 off)
  auto near = [](double v, double want) { return std::fabs(v - want) <= 1e-3 * want; };
  // Node j's inputs as (the other operand, the constant scalar), with `from` one of them.
  auto split = [&](int j, const std::string& from, std::string& other, double& c) {
    const auto& n = node(j);
    if (n.input_size() != 2) return false;
    const int k = !std::isnan(constant_scalar(n.input(1))) ? 1 : !std::isnan(constant_scalar(n.input(0))) ? 0 : -1;
    if (k < 0) return false;
    other = n.input(1 - k), c = constant_scalar(n.input(k));
    return from.empty() || other == from;
  };
  auto op = [&](int j) { return j < 0 ? std::string() : node(j).op_type(); };
  const std::string& d = node(erf).input(0);
  const auto pd = producer_.find(d);
  double c = 0;
  if (pd == producer_.end() || sole_consumer(d) != erf || !split(pd->second, "", g.x, c) || is_weight(g.x))
    return false;
  const int div = pd->second;
  if (!(op(div) == "Div" && node(div).input(1) != g.x && near(c, std::sqrt(2.0))) &&
      !(op(div) == "Mul" && near(c, std::sqrt(0.5))))
    return false;
  const int add = sole_consumer(node(erf).output(0));
  std::string e;
  if (op(add) != "Add" || !split(add, node(erf).output(0), e, c) || c != 1.0) return false;
  const int mul = sole_consumer(node(add).output(0));
  if (op(mul) != "Mul" || node(mul).input_size() != 2) return false;
  const std::string& a = node(add).output(0);
  const std::string p = node(mul).input(0) == a ? node(mul).input(1) : node(mul).input(0);
  g.anchor = erf, g.nodes = {div, erf, add, mul};
  if (p == g.x) {  // (x times 1 + erf) then halved: a Mul by 0.5 or a Div by 2
    const int half = sole_consumer(node(mul).output(0));
    std::string m;
    if (half < 0 || !split(half, node(mul).output(0), m, c) ||
        !((op(half) == "Mul" && c == 0.5) || (op(half) == "Div" && c == 2.0 && node(half).input(0) == m)))
      return false;
    g.nodes.push_back(half), g.out = node(half).output(0);
    return image_shape(g.out) == image_shape(g.x);  // no constant of higher rank broadcast in
  }
  const auto ph = producer_.find(p);  // x halved first
  std::string hx;
  if (ph == producer_.end() || op(ph->second) != "Mul" || sole_consumer(p) != mul || !split(ph->second, g.x, hx, c) ||
      c != 0.5)
    return false;
  g.nodes.push_back(ph->second), g.out = node(mul).output(0);
  return image_shape(g.out) == image_shape(g.x);
}

bool Compiler::gelu(std::size_t pattern) {
  const Gelu& g = gelus_[pattern];
  if (!available(g.x)) return false;
  std::vector<int> fused;
  for (int j : g.nodes)
    if (j != g.anchor) fused.push_back(j);
  elementwise_kernel(g.anchor, 0, "", g.op, {{g.x, {}}}, g.out, {}, fused);
  for (int j : g.nodes) done_[std::size_t(j)] = true;
  return true;
}

// An activation's alpha and beta as the elementwise kernel and its check take them (ONNX's
// defaults where the attribute is absent); none for the other ops.
Compiler::Params Compiler::activation_params(int i) const {
  const auto& n = node(i);
  const Attrs a{n};
  if (n.op_type() == "LeakyRelu") return {{"alpha", num(a.f("alpha", 0.01f))}};
  if (n.op_type() == "HardSigmoid") return {{"alpha", num(a.f("alpha", 0.2f))}, {"beta", num(a.f("beta", 0.5f))}};
  if (n.op_type() != "Clip") return {};
  float lo = 0, hi = 0;
  if (!clip_bounds(i, lo, hi)) fail(i, "a bound that is not a constant of one value is not lowered");
  return {{"alpha", num(lo)}, {"beta", num(hi)}};
}

// Input j of element-wise node i: an activation of the output's shape `full`, read where it is; or
// a constant (a weight, a graph input of another shape, a Div's divisor known when compiling)
// broadcast to `full` (a divisor as its reciprocal).
Compiler::Operand Compiler::operand(int i, int j, const Dims& full) const {
  const auto& n = node(i);
  const std::string& v = n.input(j);
  const bool divisor = n.op_type() == "Div" && j == 1;
  if (!is_weight(v) && !(constant(v) && (ref_.at(v).shape != full || divisor))) {
    return {v, {}, image_shape(v) != full};
  }
  Tensor c;
  if (!expand(ref_.at(v), full, c))
    fail(i,
         "'" + v + "' of shape " + ref_.at(v).shape_str() + " does not broadcast to " + Tensor{full, {}}.shape_str() +
             (batch_ > 1 ? " (at a batch of " + std::to_string(batch_) + ", a constant is one for every image)" : ""));
  for (float& x : c.data)
    if (divisor) {
      x = 1.0f / x;
      if (!(std::fabs(x) <= 65504.0f))
        fail(i, "a divisor in '" + v + "' is 0 or smaller than 1 / 65504: its reciprocal overflows f16");
    }
  return {"", c};
}

// The layout and type the values placed already have (the last of them); none placed (graph
// inputs only): ND, f32, as the model gives them.
std::pair<Layout, std::string> Compiler::placed_form(const std::vector<std::string>& values) const {
  std::pair<Layout, std::string> form{Layout::Nd, "f32"};
  for (const std::string& v : values)
    if (!v.empty() && !ref(v).empty()) form = {values_.at(v).layout, values_.at(v).dtype};
  return form;
}

// Whether v, through element-wise ops that are each its one reader, is read by a layer of feature
// maps (a conv, a pool) as its input: a model's own normalisation of its image before the first
// conv, (x - mean) / std or x / 255 after a Cast of uint8 pixels.
bool Compiler::feeds_feature_map(const std::string& v) const {
  static const std::set<std::string> kSameValues = {"Cast", "Identity", "Dropout"};  // views of it
  for (std::string at = v;;) {
    const int c = sole_consumer(at);
    if (c < 0) return false;
    const auto& n = node(c);
    if (map_reader(n)) return n.input(0) == at;
    const auto l = lowerings().find(n.op_type());  // the element-wise ops: those the table lowers so
    if (!kSameValues.count(n.op_type()) && (l == lowerings().end() || l->second != &Compiler::elementwise))
      return false;
    at = n.output(0);
  }
}

// Node i's elementwise kernel (its `head`th, named with `tail`): out = a op b, each operand a
// value (read where it is) or a constant of out's shape per image. The values placed already give
// the layout and type; a graph input not placed yet is placed so, or as the model gives it (f32);
// a constant is stored so.
void Compiler::elementwise_kernel(int i, std::size_t head, const std::string& tail, const std::string& op,
                                  const std::vector<Operand>& in, const std::string& out, const Params& params,
                                  const std::vector<int>& fused) {
  Kernel k{kernel_name(i, tail), "elementwise"};
  k.nodes = {i};
  k.nodes.insert(k.nodes.end(), fused.begin(), fused.end());
  k.head = head;
  std::vector<std::string> values;
  for (const Operand& o : in) values.push_back(o.value);
  auto [layout, dt] = placed_form(values);
  // Graph inputs only, the output read as a feature map: the inputs are placed as one (NC1HWC0, f16).
  const bool none_placed =
      std::all_of(values.begin(), values.end(), [&](const std::string& v) { return v.empty() || ref(v).empty(); });
  if (none_placed && image_shape(out).size() == 4 && feeds_feature_map(out)) layout = Layout::Nc1hwc0, dt = "f16";
  const std::vector<std::string> roles = {"x", "y", "w"};
  for (std::size_t j = 0; j < in.size(); ++j) {
    if (!in[j].value.empty()) {
      k.tensors.push_back(use(i, k, in[j].value, roles[j], layout, false, dt));
      continue;
    }
    Tensor c = in[j].constant;
    // Where computes nothing from its values: one past f16's range is f16's bound of its sign
    // (GPT-2's mask value, finfo(float32).min, is -65504, finfo(float16).min, as Hugging Face
    // masks in f16: a row masked whole stays finite, a Softmax of it uniform as in f32, not NaN).
    if (dt == "f16")
      for (float& v : c.data)
        if (std::isfinite(v) && std::fabs(v) > 65504.0f) {
          if (op != "where")
            fail(i, "a constant of " + num(double(v)) + " is past the range of f16, the type of the values it meets");
          v = std::copysign(65504.0f, v);
        }
    Dims shape = layout == Layout::Nc1hwc0 ? as_2d(c.shape) : c.shape;  // stored as the map is
    if (shape.empty()) shape = {1};  // a scalar's one element (its file of shape (), its tensor of 1)
    k.tensors.push_back(weight_tensor(i, k, KTensor{roles[j], dt, layout_name(layout), "", "", "", shape}, c));
  }
  dt = k.tensors[0].dtype;
  for (const KTensor& t : k.tensors)
    if (t.dtype != dt) fail(i, "operands of " + t.dtype + " and " + dt);
  produce(k, out, KTensor{"z", dt}, layout);
  k.shape = {{"op", op}, {"dtype", dt}, {"n", num(std::int64_t(stored_bytes(k.tensors.back())) / elem_bytes(dt))}};
  for (const KTensor& t : k.tensors)
    if (t.name != "z") k.args.push_back(t.name), k.check_inputs.push_back(t.name);
  k.args.push_back("z");
  k.check = {{"op", op}};
  // An op of several roundings (a sigmoid's four), or of a parameter rounded to dtype (leaky_relu's
  // alpha), is within a few steps of dtype of the reference; the others equal it rounded.
  const kernels::ElementwiseOp* e = kernels::elementwise_op(op);
  if (e && !e->exact) k.check.push_back({"atol", "1e-3"}), k.check.push_back({"rtol", "4e-3"});
  for (auto p : params) {
    const double v = std::stod(p.second);  // a Where's value past f16's range: its bound, as its constants'
    if (dt == "f16" && op.rfind("where", 0) == 0 && std::isfinite(v) && std::fabs(v) > 65504.0)
      p.second = num(std::copysign(65504.0, v));
    k.shape.push_back(p), k.check.push_back(p);
  }
  place(std::move(k));
}

// Softmax over rows: the last axis (opset 13 on), or the dimensions from `axis` on (before).
bool Compiler::softmax(int i) {
  const auto& n = node(i);
  if (!available(n.input(0))) return false;
  const Value& xv = values_.at(n.input(0));
  const Dims x = image_shape(n.input(0));  // the model's, one image (a 1-D map's 1 x C x L)
  const std::int64_t r = std::int64_t(x.size());
  std::int64_t axis = Attrs{n}.i("axis", m_.opset >= 13 ? -1 : 1);
  if (axis < 0) axis += r;
  if (axis == 0 && batch_ > 1)
    fail(i, "softmax over the batch axis: the images of a batch of " + std::to_string(batch_) +
                " are lowered one at a time");
  // Over the channels of a feature map (or of a graph input that is one, not placed yet): the
  // softmax_c kernel on the map where it is (opset 13 on: the one axis).
  const bool map = xv.spatial_map();
  const bool unplaced = xv.refs.size() > image_ && xv.refs[image_].empty() && !xv.input.empty();
  if (m_.opset >= 13 && axis == 1 && r >= 3 && x[0] == 1 && product(x, 2) != 1 && (map || unplaced))
    return softmax_channels(i);
  if (map)
    fail(i, "softmax over axis " + std::to_string(axis) +
                " of an NC1HWC0 feature map: its channels (axis 1, opset "
                "13 on) are lowered");
  // From opset 13 the one axis; the last is lowered, and any other the axes after which hold one
  // element each (a classifier's 1 x C x 1 x 1 after a global pool): the same rows.
  if (m_.opset >= 13 && axis != r - 1 && product(x, std::size_t(axis) + 1) != 1)
    fail(i, "softmax over axis " + std::to_string(axis) + " of " + ref_.at(n.input(0)).shape_str() +
                ": the last is lowered, one whose later axes hold one element each, or a feature map's channels");
  const std::int64_t cols = product(x, std::size_t(axis)), rows = product(x) / cols;
  // A Mul or Div by a constant before it is the kernel's scale (an attention's 1 / sqrt(d)).
  const double scale = values_.at(n.input(0)).scale;
  if (values_.at(n.input(0)).transposed)
    fail(i, "the input is a Transpose of its last two axes, lowered only as a MatMul's B (read transposed)");
  if (!(scale > 0)) fail(i, "the input is scaled by " + num(scale) + " before it: the kernel takes a positive scale");
  Kernel k{kernel_name(i), "softmax"};
  k.nodes = {i};
  // A 1 x 1 NC1HWC0 map of one image (a global pool's output) holds its channels in order, the
  // pad channels after them: read where it is, as rows.
  const Layout in = xv.layout;  // ND, or a 1 x 1 map (a spatial one went to softmax_channels or was refused)
  k.tensors.push_back(use(i, k, n.input(0), "x", in, false, "f32", true));  // a graph input: as given, f32
  const std::string dt = k.tensors[0].dtype;
  produce(k, n.output(0), KTensor{"out", dt}, Layout::Nd);
  k.shape = {{"dtype", dt}, {"rows", num(rows)}, {"cols", num(cols)}, {"scale", num(scale)}};
  k.args = {"x", "out"};
  k.check_inputs = {"x"};
  k.check = {{"op", "softmax"}, {"cols", num(cols)}, {"scale", num(scale)}, {"atol", "1e-3"}, {"rtol", "1e-3"}};
  return finish(i, std::move(k));
}

void Compiler::find_masked_softmaxes() {
  find_patterns(
      g_, "Softmax", [&](int i, MaskedSoftmax& p) { return match_masked_softmax(i, p); }, masked_softmaxes_,
      masked_softmax_);
}

// Softmax(Where(c, y, v)) over the last axis, c a weight (GPT-2's causal buffer sliced, folded) and
// v a constant of one element, the Where read by the Softmax only: c without its leading axes of
// one element must be the last axes of y's shape (a mask for every head: 1 x 1 x S x S; or one per
// head), the mask_rows x cols the kernel reads row r % mask_rows of (softmax.hpp). Only where the
// kernel takes it, in f16 and f32 alike (rows of whole 32-byte blocks the UB holds twice and more),
// and where it pays: each row's mask load and select cost a little on a core that takes many rows,
// while the Where and the scale (two passes over the scores, two kernels) cost the most where the
// scores leave the L2 or many cores each take a few rows. Measured on the presets (GPT-2's
// attention, docs/networks.md): with 8 AI Cores or more (ascend910's 32) it paid at every size; with
// 2 (ascend310) from 6 MiB of scores (0.6 - 0.75 of the passes' time), and cost 10 - 17% at 2 MiB
// and under. So: 8 cores or more, or f16 scores of one image past a quarter of the L2.
bool Compiler::match_masked_softmax(int softmax, MaskedSoftmax& p) const {
  const auto& n = node(softmax);
  const auto w = producer_.find(n.input(0));
  if (!o_.target || w == producer_.end() || node(w->second).op_type() != "Where" ||
      sole_consumer(n.input(0)) != softmax)
    return false;
  const auto& where = node(w->second);
  // (an infinite value, masked_fill(-inf), stays a Where: a scalar parameter is a finite number)
  if (!is_weight(where.input(0)) || is_weight(where.input(1)) || !std::isfinite(constant_scalar(where.input(2))))
    return false;
  const Dims y = image_shape(where.input(1));
  Dims c = ref_.at(where.input(0)).shape;
  const std::int64_t r = std::int64_t(y.size());
  std::int64_t axis = Attrs{n}.i("axis", m_.opset >= 13 ? -1 : 1);
  if (axis < 0) axis += r;
  if (r < 2 || axis != r - 1 || image_shape(n.input(0)) != y || c.size() > y.size()) return false;
  c.insert(c.begin(), y.size() - c.size(), 1);
  std::size_t first = 0;  // c's first axis of more than one element
  while (first + 1 < c.size() && c[first] == 1) ++first;
  for (std::size_t j = first; j < c.size(); ++j)
    if (c[j] != y[j]) return false;
  p = {w->second, softmax, product(c) / c.back(), c.back(), {w->second, softmax}};
  if (o_.target->core.cores < 8 && std::uint64_t(product(y)) * 2 <= o_.target->l2_bytes / 4) return false;
  for (aicore::DType t : {aicore::DType::F16, aicore::DType::F32})
    if (!kernels::softmax_masks(o_.target->core,
                                kernels::SoftmaxShape{t, std::uint32_t(product(y) / y.back()), std::uint32_t(y.back()),
                                                      1.0, std::uint32_t(p.mask_rows), 0.0}))
      return false;
  return true;
}

// The softmax kernel of a masked softmax (find_masked_softmaxes): the Where's scores y (a Mul or Div
// by a constant before it the scale), its condition the mask (1 where true), its value the fill (past
// f16's range in f16, f16's bound of its sign, as a Where's value; an infinite one is not matched).
bool Compiler::masked_softmax(std::size_t pattern) {
  const MaskedSoftmax& p = masked_softmaxes_[pattern];
  const auto &n = node(p.softmax), &where = node(p.where);
  const std::string& y = where.input(1);
  if (!available(y)) return false;
  const Value& yv = values_.at(y);
  if (yv.transposed || yv.spatial_map() || !(yv.scale > 0))
    fail(p.softmax, "the scores of a masked softmax are a Transpose, a feature map or scaled by " + num(yv.scale) +
                        ": lowered where they are rows of activations, scaled by a positive constant");
  Kernel k{kernel_name(p.softmax), "softmax"};
  k.nodes = {p.softmax, p.where};
  k.tensors.push_back(use(p.softmax, k, y, "x", Layout::Nd, false, "f32", true));
  const std::string dt = k.tensors[0].dtype;
  Tensor mask{{p.mask_rows, p.cols}, ref_.at(where.input(0)).data};
  for (float& v : mask.data) v = v != 0 ? 1.0f : 0.0f;
  k.tensors.push_back(weight_tensor(p.softmax, k, KTensor{"mask", dt, "nd", "", "", "", mask.shape}, mask));
  double fill = constant_scalar(where.input(2));
  if (dt == "f16" && std::isfinite(fill) && std::fabs(fill) > 65504.0) fill = std::copysign(65504.0, fill);
  produce(k, n.output(0), KTensor{"out", dt}, Layout::Nd);
  const std::int64_t rows = product(image_shape(y)) / p.cols;
  k.shape = {{"dtype", dt},
             {"rows", num(rows)},
             {"cols", num(p.cols)},
             {"scale", num(yv.scale)},
             {"mask_rows", num(p.mask_rows)},
             {"mask_fill", num(fill)}};
  k.args = {"x", "mask", "out"};
  k.check_inputs = {"x", "mask"};
  k.check = {{"op", "softmax"}, {"cols", num(p.cols)}, {"scale", num(yv.scale)}, {"atol", "1e-3"}, {"rtol", "1e-3"}};
  done_[std::size_t(p.where)] = true;
  return finish(p.softmax, std::move(k));
}

// Softmax over the channels (axis 1, opset 13 on) of an NC1HWC0 feature map larger than 1 x 1
// (a segmentation head's per-pixel classes): the softmax_c kernel, on the map where it is.
bool Compiler::softmax_channels(int i) {
  const auto& n = node(i);
  const Dims x = as_2d(image_shape(n.input(0)));  // 1 x C x H x W (a 1-D map's 1 x C x 1 x L)
  Kernel k{kernel_name(i), "softmax_c"};
  k.nodes = {i};
  const double scale = values_.at(n.input(0)).scale;  // a Mul or Div by a constant before it
  if (!(scale > 0)) fail(i, "the input is scaled by " + num(scale) + " before it: the kernel takes a positive scale");
  k.tensors.push_back(use(i, k, n.input(0), "x", Layout::Nc1hwc0, false, "f16", true));
  if (k.tensors[0].dtype != "f16") fail(i, "the input is " + k.tensors[0].dtype + "; the softmax_c kernel takes f16");
  produce(k, n.output(0), KTensor{"y", "f16"}, Layout::Nc1hwc0);
  k.shape = {{"dtype", "f16"}, {"h", num(x[2])}, {"w", num(x[3])}, {"c", num(x[1])}, {"scale", num(scale)}};
  k.args = {"x", "y"};
  k.check_inputs = {"x"};
  k.check = {{"op", "softmax_c"}, {"atol", "1e-3"}, {"rtol", "1e-2"}};
  return finish(i, std::move(k));
}

// Whether v's memory (this image's) holds a graph output other than `except` already.
bool Compiler::holds_an_output(const Value& v, const std::string& except) const {
  if (v.refs[image_].empty()) return false;
  for (const std::string& o : outputs_) {
    const auto it = values_.find(o);
    if (o != except && it != values_.end() && it->second.refs.size() > image_ &&
        it->second.refs[image_] == v.refs[image_])
      return true;
  }
  return false;
}

// Flatten, Reshape, Identity, Dropout (inference), a Cast between float types: the same memory
// under the output's shape, when its bytes are in the order the shape says (ND, or a 1 x 1 NC1HWC0
// map of one image: its channels in order, the pad channels after them). A graph output that is
// a graph input's values is copied (copy_output); so is one whose memory holds another graph output
// already (set_view).
bool Compiler::view(int i) {
  const auto& n = node(i);
  if (!available(n.input(0))) return false;
  Value v = values_.at(n.input(0));
  const bool same = n.op_type() == "Identity" || n.op_type() == "Dropout" || n.op_type() == "Cast";
  if (n.output_size() > 1 && !n.output(1).empty() && (outputs_.count(n.output(1)) || consumers_.count(n.output(1))))
    fail(i, "the mask output is not lowered");
  // A copy keeps the input's layout: a reshape of a placed NC1HWC0 map is the view path's below.
  if (outputs_.count(n.output(0)) && !v.input.empty() && (same || v.refs[image_].empty() || v.layout == Layout::Nd))
    return copy_output(i);
  if (!same && (v.layout == Layout::Nc1hwc0 || !v.map.empty())) {
    const Dims map = v.map.empty() ? v.shape : v.map, out = image_shape(n.output(0));
    if (map[2] * map[3] != 1 && (out.size() != 2 || out[0] != 1))
      fail(i, "a reshape of an NC1HWC0 feature map of " + std::to_string(map[2]) + " x " + std::to_string(map[3]) +
                  " to " + Tensor{out, {}}.shape_str() +
                  " needs a layout change (not lowered; a flattening to 1 x C.H.W that a Gemm or MatMul reads as A "
                  "is)");
    if (map[2] * map[3] != 1) v.map = map;
    v.layout = Layout::Nd;
  }
  set_view(i, v);
  return true;
}

// A graph output that holds a graph input's values (an Identity, Dropout or Cast of it): copied
// by a cast kernel from the f16 the input is placed in (as a conv's input is) to the f32 a float
// output is saved in; one placed in f32 (an element-wise op's input) by a multiply by 1. The input
// is placed by its other readers first (a conv places it NC1HWC0), so the copy waits for those
// that are not views themselves.
bool Compiler::copy_output(int i) {
  const auto& n = node(i);
  const Value& x = values_.at(n.input(0));
  const bool placed = !x.refs[image_].empty();
  static const std::set<std::string> kViews = {"Identity", "Dropout", "Cast",     "Reshape",
                                               "Flatten",  "Squeeze", "Unsqueeze"};
  if (!placed && consumers_.count(n.input(0)))
    for (int c : consumers_.at(n.input(0)))
      if (c != i && !done_[std::size_t(c)] && !kViews.count(node(c).op_type())) return false;
  if (placed && x.dtype == "f32") {  // placed in f32 by an element-wise reader: x times 1, an exact copy
    elementwise_kernel(i, 0, "", "muls", {{n.input(0), {}}}, n.output(0), {{"alpha", "1"}});
    done_[std::size_t(i)] = true;
    return true;
  }
  const std::string from = placed ? x.dtype : "f16", to = "f32";
  const Layout layout = placed ? x.layout : Layout::Nd;
  Kernel k{kernel_name(i), "elementwise"};
  k.nodes = {i};
  k.tensors.push_back(use(i, k, n.input(0), "x", layout, false, from));
  produce(k, n.output(0), KTensor{"z", to}, layout);
  k.shape = {{"op", "cast"},
             {"dtype", from},
             {"to", to},
             {"n", num(std::int64_t(stored_bytes(k.tensors[1])) / elem_bytes(to))}};
  k.args = {"x", "z"};
  k.check_inputs = {"x"};
  k.check = {{"op", "copy"}};
  return finish(i, std::move(k));
}

// Cast to float, float16 or double: the network holds its activations in f16 (as ATC's
// force_fp16 runs an fp16 network), so it is a view of them (exact: f16 widens to f32, and a
// value held in f16 is its own f16 rounding), but for a value held in f32 (an AI CPU op's) cast
// to float16, and integer indices (ArgMax's, TopK's, s32) cast to a float type, which a cast
// kernel converts (to f16, or to f32 for float and double). A Cast of a weight is a weight
// (fold_constant_nodes); one of an activation to bfloat16, an integer type or bool is refused.
bool Compiler::cast(int i) {
  const auto& n = node(i);
  if (!available(n.input(0))) return false;
  using T = onnx::TensorProto;
  const int to = int(attrs(i).i("to", 0));
  if (to == T::BOOL) {  // each nonzero value (a NaN too, as NumPy's bool()) 1, held in the value's type
    const Dims shape = image_shape(n.output(0));
    const std::string x = values_.at(n.input(0)).refs[image_].empty() ? n.input(0) : real_valued(i, n.input(0));
    elementwise_kernel(i, 0, "", "ne", {{x, {}}, {"", Tensor{shape, std::vector<float>(product(shape))}}}, n.output(0));
    done_[std::size_t(i)] = true;
    return true;
  }
  if (to != T::FLOAT && to != T::FLOAT16 && to != T::DOUBLE)
    fail(i, "a Cast of an activation to " + T::DataType_Name(T::DataType(to)) +
                " is not lowered (the network runs in f16; a Cast to float, float16, double or bool is)");
  const Value& x = values_.at(n.input(0));
  const bool real = x.dtype == "f16" || x.dtype == "f32";
  const std::string want = to == T::FLOAT16 ? "f16" : real ? x.dtype : "f32";
  if (want == x.dtype || x.refs[image_].empty()) return view(i);
  set_view(i, values_.at(cast_to(i, n.input(0), want)));
  return true;
}

// Pad, constant 0 on the spatial axes (H and W; a 1-D map's L), read only by a Conv as its input:
// folded into that conv's padding, the value a view of the unpadded map with the pads pending
// (a graph input not placed yet is placed padded instead: the Pad's own values). TF exports and
// PyTorch's ZeroPad2d write it so. Any other Pad is refused.
bool Compiler::pad(int i) {
  const auto& n = node(i);
  if (!available(n.input(0))) return false;
  const Attrs a = attrs(i);
  Dims p = a.ints("pads", {});
  if (m_.opset >= 11) {
    if (n.input_size() < 2 || !constant(n.input(1))) fail(i, "pads that are not a constant are not lowered");
    p.clear();
    for (float v : ref_.at(n.input(1)).data) p.push_back(std::int64_t(v));
  }
  const double value = m_.opset >= 11 ? (n.input_size() > 2 && !n.input(2).empty() ? constant_scalar(n.input(2)) : 0.0)
                                      : a.f("value", 0.0f);
  const std::size_t r = p.size() / 2;
  const int conv = sole_consumer(n.output(0));
  const bool ok = a.s("mode", "constant") == "constant" && value == 0.0 && (r == 3 || r == 4) && p[0] == 0 &&
                  p[1] == 0 && p[r] == 0 && p[r + 1] == 0 && *std::min_element(p.begin(), p.end()) >= 0 && conv >= 0 &&
                  node(conv).op_type() == "Conv" && node(conv).input(0) == n.output(0);
  if (!ok)
    fail(i,
         "a Pad is lowered only as the padding of the Conv that is its one reader (mode constant, value 0, on the "
         "spatial axes)");
  Value v = values_.at(n.input(0));
  const bool unplaced = !v.input.empty() && v.refs[image_].empty();
  const Dims x = v.shape;
  set_view(i, v);
  if (unplaced) return true;
  Value& out = values_.at(n.output(0));
  out.shape = x;
  out.pads = r == 4 ? Dims{p[2], p[3], p[6], p[7]} : Dims{0, p[2], 0, p[5]};
  return true;
}

// What the resize kernel's f16 arithmetic may differ by from its check's sums in double, for an
// input of largest magnitude `mag`: each product and sum rounds by at most half a step of the
// largest partial sum (mag times the weights' absolute sum per axis, squared), 2 taps - 1 of them
// per axis, the first axis's carried through the second's weights. Nearest: exact.
double resize_tolerance(const kernels::ResizeShape& s, double mag) {
  if (s.rule.mode == kernels::ResizeMode::Nearest) return 0;
  mag = std::max(mag, 0x1p-24);  // a map of zeros: its sums are exact
  double spread = 1;
  for (const auto& t :
       {kernels::resize_taps(s.rule, s.scale_h, s.h, s.oh), kernels::resize_taps(s.rule, s.scale_w, s.w, s.ow)})
    for (std::size_t y = 0; y < t.weight.size(); y += t.taps) {
      double sum = 0;
      for (unsigned j = 0; j < t.taps; ++j) sum += std::fabs(t.weight[y + j]);
      spread = std::max(spread, sum);
    }
  // Half an f16 step of the largest partial sum (of a subnormal one at least: 2^-25), twice over:
  // the kernel's input is the f32 reference's rounded to f16, whose magnitude may cross a power of 2.
  const double half_step = std::exp2(std::max(std::floor(std::log2(mag * spread * spread)) - 11, -25.0));
  return 2 * half_step * (2.0 * s.rule.taps() - 1) * (1 + spread);
}

// Resize and Upsample of an f16 NC1HWC0 map (a 1-D one's L as its W) across H and W, N and C
// unscaled. In nearest mode by whole factors, where every output index reads its input index
// divided by the factor (YOLO's and FPN's 2x: asymmetric and floor, half_pixel and
// round_prefer_floor, ... as ONNX maps them back, resize_taps): the upsample kernel, copies
// alone. Any other factor, nearest rounding, linear or cubic mode: the resize kernel, which takes
// ONNX's rule and scales as they are. Anything else is refused by name.
bool Compiler::resize(int i) {
  const auto& n = node(i);
  if (!available(n.input(0))) return false;
  const Value& xv = values_.at(n.input(0));
  const Dims full = ref_.at(n.input(0)).shape;  // the batch's
  auto input = [&](int j) -> const Tensor* {
    return j < n.input_size() && !n.input(j).empty() && constant(n.input(j)) ? &ref_.at(n.input(j)) : nullptr;
  };
  const ResizePlan plan = resize_plan(n, m_.opset, full, input);
  if (batch_ > 1 && !full.empty() && plan.out[0] != full[0])
    fail(i, "its sizes or scales make N " + std::to_string(plan.out[0]) + " where the batch is " +
                std::to_string(full[0]) +
                " (a model exported at batch 1 with constant sizes resizes N too): at --batch, give scales of 1 for "
                "N, or sizes computed from the input's shape");
  if ((full.size() != 3 && full.size() != 4) || plan.scales[0] != 1 || plan.scales[1] != 1 || plan.out[0] != full[0] ||
      plan.out[1] != full[1])
    fail(i, "a Resize of H and W (W alone of N x C x L) is lowered; N and C unscaled");
  const bool unplaced = !xv.input.empty() && xv.refs[image_].empty();  // placed NC1HWC0 f16 here
  if (!unplaced && (xv.layout != Layout::Nc1hwc0 || xv.dtype != "f16"))
    fail(i, "a Resize of an ND or f32 tensor is not lowered (the resize kernels take f16 NC1HWC0 maps)");
  if (plan.rule.mode == kernels::ResizeMode::Nearest && whole_factors(i, full, plan)) return true;
  const Dims x = as_2d(xv.shape);
  const bool two_d = full.size() == 4;
  kernels::ResizeShape s;
  s.c = std::uint32_t(x[1]), s.h = std::uint32_t(x[2]), s.w = std::uint32_t(x[3]);
  s.oh = std::uint32_t(two_d ? plan.out[2] : 1), s.ow = std::uint32_t(plan.out.back());
  s.scale_h = two_d ? plan.scales[2] : 1.0, s.scale_w = plan.scales.back(), s.rule = plan.rule;
  try {  // the target's UB (without one, the run's platform checks it when the scenario is read)
    if (o_.target) kernels::check_resize(o_.target->core, s);
  } catch (const Error& e) {
    fail(i, e.what());
  }
  Kernel k{kernel_name(i), "resize"};
  k.nodes = {i};
  const auto exact = [](double v) {  // ONNX's f32 scale, every digit (the transformation divides by it)
    std::ostringstream o;
    o.precision(17);
    o << v;
    return o.str();
  };
  k.shape = {{"h", num(x[2])},
             {"w", num(x[3])},
             {"c", num(x[1])},
             {"oh", num(std::int64_t(s.oh))},
             {"ow", num(std::int64_t(s.ow))},
             {"mode", kernels::kResizeModes[int(s.rule.mode)]},
             {"transform", kernels::kResizeTransforms[int(s.rule.transform)]},
             {"nearest_mode", kernels::kNearestRoundings[int(s.rule.rounding)]},
             {"cubic_a", exact(s.rule.cubic_a)},
             {"exclude_outside", s.rule.exclude_outside ? "true" : "false"},
             {"scale_h", exact(s.scale_h)},
             {"scale_w", exact(s.scale_w)}};
  k.tensors.push_back(use(i, k, n.input(0), "x", Layout::Nc1hwc0));
  produce(k, n.output(0), KTensor{"y", "f16"}, Layout::Nc1hwc0);
  k.args = {"x", "y"};
  k.check_inputs = {"x"};
  k.check = {{"op", "resize"}, {"atol", num(resize_tolerance(s, max_abs(ref_.at(n.input(0)).data)))}};
  return finish(i, std::move(k));
}

// A nearest Resize whose every output index of H and W reads its index divided by a whole factor:
// the upsample kernel (true); false when the factors are not whole or past what it takes (the
// target's UB too, when compiling for one).
bool Compiler::whole_factors(int i, const Dims& full, const ResizePlan& plan) {
  const auto& n = node(i);
  std::vector<std::int64_t> factor(full.size(), 1);
  bool whole = true;
  for (std::size_t d = 0; whole && d < full.size(); ++d) {
    const std::int64_t out = plan.out[d];
    factor[d] = out % full[d] ? 0 : out / full[d];
    const auto src = kernels::resize_taps(plan.rule, plan.scales[d], std::uint32_t(full[d]), std::uint32_t(out)).index;
    for (std::int64_t y = 0; whole && y < out; ++y) whole = factor[d] && src[std::size_t(y)] == y / factor[d];
  }
  const Dims x = as_2d(values_.at(n.input(0)).shape);
  const std::int64_t fh = full.size() == 4 ? factor[2] : 1, fw = factor.back();
  if (!whole || factor[0] != 1 || factor[1] != 1 || fw > 31 || x[3] > 2040 || fh > 255) return false;
  const kernels::UpsampleShape u{std::uint32_t(x[1]), std::uint32_t(x[2]), std::uint32_t(x[3]), std::uint32_t(fh),
                                 std::uint32_t(fw)};
  try {
    if (o_.target) kernels::check_upsample(o_.target->core, u);
  } catch (const Error&) {
    return false;  // a row too wide for its UB: the resize kernel works in bands
  }
  Kernel k{kernel_name(i), "upsample"};
  k.nodes = {i};
  k.shape = {{"h", num(x[2])}, {"w", num(x[3])}, {"c", num(x[1])}, {"sh", num(fh)}, {"sw", num(fw)}};
  k.tensors.push_back(use(i, k, n.input(0), "x", Layout::Nc1hwc0));
  produce(k, n.output(0), KTensor{"y", "f16"}, Layout::Nc1hwc0);
  k.args = {"x", "y"};
  k.check_inputs = {"x"};
  k.check = {{"op", "upsample"}};
  return finish(i, std::move(k));
}

// Node i's output is v: the same memory under the output's shape. A graph input not placed yet
// is placed by the reader, holding the output's own values (no view of it is left to fold).
void Compiler::set_view(int i, Value v) {
  const std::string& name = node(i).output(0);
  if (outputs_.count(name) && holds_an_output(v, name)) return output_copy(i, v);
  v.shape = stored_shape(name, v.layout);  // an Identity of a 1-D map keeps it 1 x C x 1 x L
  if (!v.input.empty() && v.refs[image_].empty())
    v.input = name, v.transposed = false, v.scale = 1.0;
  else
    v.input.clear();  // placed: a view of the memory that holds it
  Value& out = values_[name];
  std::vector<std::string> refs = out.refs;  // the images before this one
  refs.resize(batch_), refs[image_] = v.refs[image_];
  out = v, out.refs = refs;
  done_[std::size_t(i)] = true;
}

// Graph output node(i).output(0), a view v of input 0 whose memory holds another graph output
// already (r, and an Identity of r, or a Transpose of it that moves axes of 1): each output is saved
// from a tensor of its own, so this one is a copy (copy_output), where input 0 is stored as the
// output reads (ND, or a map of the same shape). A reshape of a map so is refused by name.
void Compiler::output_copy(int i, const Value& v) {
  const auto& n = node(i);
  const Value& x = values_.at(n.input(0));
  if (x.refs[image_] != v.refs[image_] || !x.map.empty() ||
      (x.layout == Layout::Nc1hwc0 && image_shape(n.output(0)) != image_shape(n.input(0))))
    fail(i, "output '" + n.output(0) +
                "' is a view of another graph output's memory (a reshape of its feature map): each output is saved "
                "from a tensor of its own, and a layout change to copy it is not lowered");
  copy_output(i);
}

// A permutation as the transpose kernel's (outer, rows, cols, inner): x's axes in order but for
// two runs of adjacent axes swapped, rows' and cols' (axes of size 1 go anywhere); {0} when the
// axes of more than one element keep their order (the same bytes); empty when it is neither.
Dims block_swap(const Dims& x, const Dims& perm) {
  Dims moved;
  for (std::int64_t p : perm)
    if (x[std::size_t(p)] != 1) moved.push_back(p);
  Dims ax = moved;
  std::sort(ax.begin(), ax.end());
  std::size_t lo = 0, hi = moved.size();
  while (lo < hi && moved[lo] == ax[lo]) ++lo;
  if (lo == hi) return {0};
  while (hi > lo && moved[hi - 1] == ax[hi - 1]) --hi;
  const std::size_t t = std::size_t(std::find(ax.begin(), ax.end(), moved[lo]) - ax.begin());
  for (std::size_t j = 0; j < hi - lo; ++j)  // moved[lo, hi) is ax[t, hi) then ax[lo, t)
    if (moved[lo + j] != ax[j < hi - t ? t + j : lo + j - (hi - t)]) return {};
  const std::size_t a0 = std::size_t(ax[lo]), a1 = std::size_t(ax[t]), end = std::size_t(ax[hi - 1]) + 1;
  return {product(x, 0, a0), product(x, a0, a1), product(x, a1, end), product(x, end)};
}

// Transpose: a view when the axes of more than one element keep their order, or (for MatMuls
// reading it as B, which read it transposed) when only its last two axes swap; else the
// transpose kernel, swapping two runs of adjacent axes whose inner run is whole 32-byte blocks
// (an attention's (0, 2, 1, 3)), then for a MatMul's B its last two axes as a view ((0, 2, 3, 1):
// a head's keys, transposed). A transpose of a weight is a weight (fold_constant_nodes); of a
// graph input not placed yet, placed by its reader as the output's values.
bool Compiler::transpose(int i) {
  const auto& n = node(i);
  const std::string& out = n.output(0);
  if (!available(n.input(0))) return false;
  Value v = values_.at(n.input(0));
  if (!v.input.empty() && v.refs[image_].empty()) return set_view(i, v), true;
  Dims perm = Attrs{n}.ints("perm", {});
  if (perm.empty())  // the axes reversed
    for (std::int64_t a = std::int64_t(v.shape.size()); a-- > 0;) perm.push_back(a);
  if (v.layout != Layout::Nd || v.transposed || v.scale != 1.0)
    fail(i, "the input is stored NC1HWC0, or is itself a view: a transpose of it is not lowered");
  const std::int64_t eb = elem_bytes(v.dtype);
  auto fits = [&](const Dims& sw) { return sw.size() == 1 || (sw.size() == 4 && sw[3] * eb % 32 == 0); };
  bool as_b = consumers_.count(out) && !outputs_.count(out);
  for (int c : as_b ? consumers_.at(out) : std::vector<int>{})
    as_b = as_b && node(c).op_type() == "MatMul" && node(c).input(1) == out && node(c).input(0) != out;
  Dims sw = block_swap(v.shape, perm), back = perm;
  bool last_two = false;
  if (!fits(sw) && as_b && perm.size() >= 2) {
    std::swap(back[perm.size() - 1], back[perm.size() - 2]);
    if (fits(block_swap(v.shape, back))) sw = block_swap(v.shape, back), last_two = true;
  }
  if (sw.empty())
    fail(i, "perm swaps more than two runs of adjacent axes: not lowered (the transpose kernel swaps two)");
  if (!fits(sw))
    fail(i, "the axes after the two it swaps hold " + std::to_string(sw[3]) + " elements, " +
                std::to_string(sw[3] * eb) + " B: the transpose kernel moves whole 32-byte blocks");
  if (sw.size() == 1) {
    v.transposed = last_two;
    return set_view(i, v), true;
  }
  Kernel k{kernel_name(i), "transpose"};
  k.nodes = {i};
  k.tensors.push_back(use(i, k, n.input(0), "x", Layout::Nd));
  Dims stored = image_shape(out);
  if (last_two) std::swap(stored[stored.size() - 1], stored[stored.size() - 2]);
  produce(k, out, KTensor{"y", v.dtype, "nd", "", "", "", stored}, Layout::Nd);
  values_.at(out).transposed = last_two;
  k.shape = {
      {"dtype", v.dtype}, {"outer", num(sw[0])}, {"rows", num(sw[1])}, {"cols", num(sw[2])}, {"inner", num(sw[3])}};
  k.args = {"x", "y"};
  k.check_inputs = {"x"};
  k.check = {{"op", "transpose"}};
  return finish(i, std::move(k));
}

// Concat, when each input's bytes are one run of the output's: along the channels of NC1HWC0
// maps (each input but the last a whole number of 16-channel groups, so its C1 blocks follow the
// one before's), or ND with one element before `axis`. Each input is copied to its place by a
// transpose kernel of one column (MTE2 in, MTE3 out, no arithmetic; a runtime's memcpy on the
// AI Core), its y a slice of the output, which the first copy's kernel holds (tensor "cat").
bool Compiler::concat(int i) {
  const auto& n = node(i);
  for (const auto& in : n.input()) {
    if (is_weight(in)) fail(i, "a weight operand ('" + in + "') is not lowered: the copies take activations");
    if (!available(in)) return false;
  }
  const Dims out = image_shape(n.output(0));
  std::int64_t axis = Attrs{n}.i("axis", 1);
  if (axis < 0) axis += std::int64_t(out.size());
  if (axis == 0 && batch_ > 1) fail(i, "axis 0 joins the batch's images: lowered at batch 1");
  const auto [layout, dt] = placed_form({n.input().begin(), n.input().end()});
  if (layout == Layout::Nc1hwc0 && axis != 1)
    fail(i, "NC1HWC0 feature maps joined along axis " + std::to_string(axis) + ": along the channels is lowered");
  if (layout == Layout::Nd && !concat_runs(i, axis, dt)) return concat_aicpu(i, axis, dt), true;
  std::int64_t offset = 0;
  for (int j = 0; j < n.input_size(); ++j) {
    const Dims shape = image_shape(n.input(j));
    if (layout == Layout::Nc1hwc0 && j + 1 < n.input_size() && shape[1] % 16)
      fail(i, "input " + std::to_string(j) + " has " + std::to_string(shape[1]) +
                  " channels: each but the last is whole groups of 16 (NC1HWC0's C0) to be one run of the output");
    concat_copy(i, j, layout, dt, offset);
  }
  done_[std::size_t(i)] = true;
  return true;
}

// Whether ND Concat i is copies of whole 32-byte blocks, each input one run of the output: one
// element before the axis, each input's bytes whole blocks.
bool Compiler::concat_runs(int i, std::int64_t axis, const std::string& dt) const {
  if (product(image_shape(node(i).output(0)), 0, std::size_t(axis)) != 1) return false;
  for (const auto& in : node(i).input())
    if (product(image_shape(in)) * elem_bytes(dt) % 32) return false;
  return true;
}

// ND Concat i by the AI CPU, as CANN runs the ops the AI Core cannot: byte copies of any size,
// along any axis. Each of the output's rows (the elements before the axis) is the inputs' rows
// side by side.
void Compiler::concat_aicpu(int i, std::int64_t axis, const std::string& dt) {
  const auto& n = node(i);
  if (n.input_size() > 64) fail(i, "more than 64 inputs (the AI CPU kernel's) are not lowered");
  const Dims out = image_shape(n.output(0));
  Kernel k{kernel_name(i), "aicpu"};
  k.nodes = {i};
  k.shape = {{"aicpu", "concat"}};
  std::vector<std::string> args = {"y", num(product(out, 0, std::size_t(axis))), num(std::int64_t(n.input_size()))};
  for (int j = 0; j < n.input_size(); ++j) {
    k.tensors.push_back(use(i, k, n.input(j), "x" + std::to_string(j), Layout::Nd, false, dt));
    if (k.tensors.back().dtype != dt) fail(i, "inputs of " + k.tensors.back().dtype + " and " + dt);
    args.push_back(k.tensors.back().name), k.check_inputs.push_back(k.tensors.back().name);
    args.push_back(num(product(image_shape(n.input(j)), std::size_t(axis)) * elem_bytes(dt)));
  }
  produce(k, n.output(0), KTensor{"y", dt}, Layout::Nd);
  k.args = args;
  k.check = {{"op", "concat"}, {"cols", num(product(out, std::size_t(axis)))}};
  finish(i, std::move(k));
}

// Input j of Concat i copied into the output at `offset` bytes (moved on past it).
void Compiler::concat_copy(int i, int j, Layout layout, const std::string& dt, std::int64_t& offset) {
  const auto& n = node(i);
  const std::string lay = layout_name(layout);
  Kernel k{kernel_name(i, "_" + std::to_string(j)), "transpose"};
  k.nodes = {i};
  k.head = std::size_t(j);
  k.tensors.push_back(use(i, k, n.input(j), "x", layout, false, dt));
  if (k.tensors[0].dtype != dt) fail(i, "inputs of " + k.tensors[0].dtype + " and " + dt);
  if (j == 0) {
    produce(k, n.output(0), KTensor{"cat", dt, lay, "", "", "", stored_shape(n.output(0), layout)}, layout);
    k.holds = "cat";
  }
  const std::int64_t eb = elem_bytes(dt);
  const std::int64_t bytes =
      std::int64_t(stored_bytes(KTensor{"x", dt, lay, "", "", "", stored_shape(n.input(j), layout)}));
  if (bytes % 32)
    fail(i, "input " + std::to_string(j) + " holds " + std::to_string(bytes) + " B: a copy moves whole 32-byte blocks");
  KTensor y{"y", dt, "nd", ref(n.output(0)), "", "", {bytes / eb}};
  y.offset = offset;
  offset += bytes;
  k.tensors.push_back(y);
  k.output = "y", k.produced.push_back("y");
  k.shape = {{"dtype", dt}, {"outer", "1"}, {"rows", num(bytes / 32)}, {"cols", "1"}, {"inner", num(32 / eb)}};
  k.args = {"x", "y"};
  k.check_inputs = {"x"};
  k.check = {{"op", "transpose"}};
  place(std::move(k));
  out_.layers.back().ops = {"Concat"};
}

// LayerNormalization over the axes from `axis` on, as rows of their product: the layernorm
// kernel, gamma and beta in the input's type. The Mean and InvStdDev outputs are not computed.
bool Compiler::layer_norm(int i) {
  const auto& n = node(i);
  if (!available(n.input(0))) return false;
  for (int o = 1; o < n.output_size(); ++o)
    if (!n.output(o).empty() && (consumers_.count(n.output(o)) || outputs_.count(n.output(o))))
      fail(i, "the Mean and InvStdDev outputs are not lowered");
  const Attrs a{n};
  const bool has_b = n.input_size() > 2 && !n.input(2).empty();
  return layernorm_kernel(i, n.input(0), n.output(0), a.i("axis", -1), double(a.f("epsilon", 1e-5f)), &weight(i, 1),
                          has_b ? &weight(i, 2) : nullptr, {});
}

// x normalized over its axes from `axis` on (rows of their product) into out, as node i's layer
// (with the nodes `fused`): the layernorm kernel, gamma and beta in x's type (none: 1 and 0).
bool Compiler::layernorm_kernel(int i, const std::string& x, const std::string& out, std::int64_t axis, double epsilon,
                                const Tensor* gamma, const Tensor* beta, const std::vector<int>& fused) {
  const Dims& xs = values_.at(x).shape;
  if (axis < 0) axis += std::int64_t(xs.size());
  if (axis == 0 && batch_ > 1) fail(i, "axis 0 normalizes across the batch: lowered at batch 1");
  const std::int64_t cols = product(xs, std::size_t(axis)), rows = product(xs) / cols;
  Kernel k{kernel_name(i), "layernorm"};
  k.nodes = {i};
  k.nodes.insert(k.nodes.end(), fused.begin(), fused.end());
  k.tensors.push_back(use(i, k, x, "x", Layout::Nd));
  const std::string dt = k.tensors[0].dtype;
  if (cols * elem_bytes(dt) % 32)
    fail(i,
         "rows of " + std::to_string(cols) + " " + dt + " elements: the layernorm kernel takes whole 32-byte blocks");
  const Tensor ones{{cols}, std::vector<float>(std::size_t(cols), 1.0f)},
      zeros{{cols}, std::vector<float>(std::size_t(cols), 0.0f)};
  const Tensor& g = gamma ? *gamma : ones;
  const Tensor& b = beta ? *beta : zeros;
  if (g.elements() != std::size_t(cols) || b.elements() != std::size_t(cols))
    fail(i, "Scale and B of " + std::to_string(cols) + " elements (the normalized axes') are lowered");
  k.tensors.push_back(weight_tensor(i, k, KTensor{"gamma", dt, "nd", "", "", "", {cols}}, g));
  k.tensors.push_back(weight_tensor(i, k, KTensor{"beta", dt, "nd", "", "", "", {cols}}, b));
  produce(k, out, KTensor{"y", dt}, Layout::Nd);
  const std::string eps = num(epsilon);
  k.shape = {{"dtype", dt}, {"rows", num(rows)}, {"cols", num(cols)}, {"epsilon", eps}};
  k.args = {"x", "gamma", "beta", "y"};
  k.check_inputs = {"x", "gamma", "beta"};
  k.check = {{"op", "layernorm"}, {"cols", num(cols)}, {"epsilon", eps}, {"atol", "2e-2"}, {"rtol", "1e-2"}};
  for (int j : fused) done_[std::size_t(j)] = true;
  return finish(i, std::move(k));
}

// LayerNormalization as PyTorch exports it before opset 17: m = ReduceMean(x) over the last axis,
// d = x - m, v = ReduceMean(d ^ 2) (Pow 2, or d x d), y = d / Sqrt(v + epsilon), then a Mul by gamma
// and an Add of beta (constants of the row's length) if present; each result read by the next node
// only (d by the Pow and the Div). Recorded before lowering, so whichever of its nodes comes first
// lowers them all as one layernorm kernel (ReduceMean has no lowering of its own).
void Compiler::find_layer_norms() {
  find_patterns(
      g_, "ReduceMean", [&](int i, LayerNorm& p) { return match_layer_norm(i, p); }, layer_norms_, layer_norm_);
}

bool Compiler::match_layer_norm(int mean, LayerNorm& p) const {
  auto op = [&](int j) { return j < 0 ? std::string() : node(j).op_type(); };
  // Node j reads `a` and (the other input) `b`; false when it is not a two-input node of a.
  auto other = [&](int j, const std::string& a, std::string& b) {
    if (j < 0 || node(j).input_size() != 2 || (node(j).input(0) != a && node(j).input(1) != a)) return false;
    b = node(j).input(node(j).input(0) == a ? 1 : 0);
    return true;
  };
  auto last_axis = [&](int j) {  // a ReduceMean over the last axis, keeping it (the axes an attribute)
    const Attrs a{node(j)};
    const Dims axes = a.ints("axes", {});
    const std::int64_t r = std::int64_t(ref_.at(node(j).input(0)).shape.size());
    return node(j).input_size() == 1 && a.i("keepdims", 1) == 1 && axes.size() == 1 &&
           (axes[0] == -1 || axes[0] == r - 1);
  };
  p.x = node(mean).input(0);
  if (is_weight(p.x) || !last_axis(mean)) return false;
  const int sub = sole_consumer(node(mean).output(0));
  if (op(sub) != "Sub" || node(sub).input(0) != p.x || node(sub).input(1) != node(mean).output(0)) return false;
  const std::string& d = node(sub).output(0);
  auto it = consumers_.find(d);
  if (outputs_.count(d) || it == consumers_.end()) return false;
  std::vector<int> readers = it->second;  // (a Mul d x d reads it twice)
  readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
  if (readers.size() != 2) return false;
  const int sq = op(readers[0]) == "Div" ? readers[1] : readers[0];
  const int div = sq == readers[0] ? readers[1] : readers[0];
  std::string e;
  const bool pow2 = op(sq) == "Pow" && node(sq).input(0) == d && constant_scalar(node(sq).input(1)) == 2.0;
  if (!pow2 && !(op(sq) == "Mul" && node(sq).input(0) == d && node(sq).input(1) == d)) return false;
  const int var = sole_consumer(node(sq).output(0));
  if (op(var) != "ReduceMean" || !last_axis(var)) return false;
  const int add = sole_consumer(node(var).output(0));
  if (op(add) != "Add" || !other(add, node(var).output(0), e) || std::isnan(p.epsilon = constant_scalar(e)))
    return false;
  const int sqrt = sole_consumer(node(add).output(0));
  if (op(sqrt) != "Sqrt" || op(div) != "Div" || node(div).input(0) != d || node(div).input(1) != node(sqrt).output(0) ||
      sole_consumer(node(sqrt).output(0)) != div)
    return false;
  p.mean = mean, p.nodes = {mean, sub, sq, var, add, sqrt, div}, p.out = node(div).output(0);
  const std::int64_t cols = ref_.at(p.x).shape.back();
  auto row_constant = [&](const std::string& c) {
    return constant(c) && ref_.at(c).elements() == std::size_t(cols) && ref_.at(c).shape.back() == cols;
  };
  for (const auto& [step, into] : {std::pair{"Mul", &p.gamma}, std::pair{"Add", &p.beta}}) {  // gamma, then beta
    const int j = sole_consumer(p.out);
    if (op(j) != step || !other(j, p.out, e) || !row_constant(e)) continue;
    *into = e, p.nodes.push_back(j), p.out = node(j).output(0);
  }
  return true;
}

bool Compiler::layer_norm_pattern(std::size_t pattern) {
  const LayerNorm& p = layer_norms_[pattern];
  if (!available(p.x)) return false;
  const std::vector<int> fused(p.nodes.begin() + 1, p.nodes.end());
  return layernorm_kernel(p.mean, p.x, p.out, -1, p.epsilon, p.gamma.empty() ? nullptr : &ref_.at(p.gamma),
                          p.beta.empty() ? nullptr : &ref_.at(p.beta), fused);
}

// A Pow as power;
// ReduceMean and ReduceMax over the spatial axes of a feature map as its global pool
// (spatial_reduce); ReduceSum, ReduceMean, ReduceMax and ReduceMin over adjacent axes of an ND
// activation as the reduce kernel (axes_reduce).
bool Compiler::reduce(int i) {
  if (node(i).op_type() == "Pow") return power(i);
  if (!available(node(i).input(0))) return false;
  if (spatial_reduce(i)) return true;
  static const std::map<std::string, std::string> kOps = {
      {"ReduceSum", "sum"}, {"ReduceMean", "mean"}, {"ReduceMax", "max"}, {"ReduceMin", "min"}};
  const auto op = kOps.find(node(i).op_type());
  if (op == kOps.end()) return composite_reduce(i);
  return axes_reduce(i, node(i).input(0), node(i).output(0), op->second);
}

// The axes a Reduce op names: its attribute up to opset 12 (ReduceSum) or 17 (the others), then
// a constant input 1; every axis when none are named, unless noop_with_empty_axes.
std::vector<bool> Compiler::reduced_axes(int i, std::size_t rank) const {
  const auto& n = node(i);
  Dims axes;
  if (m_.opset >= (n.op_type() == "ReduceSum" ? 13 : 18)) {
    if (n.input_size() > 1 && !n.input(1).empty()) {
      if (!constant(n.input(1))) fail(i, "the axes are an activation ('" + n.input(1) + "'): a constant is lowered");
      for (float v : ref_.at(n.input(1)).data) axes.push_back(std::int64_t(v));
    }
  } else {
    axes = attrs(i).ints("axes", {});
  }
  std::vector<bool> reduced(rank, axes.empty() && !attrs(i).i("noop_with_empty_axes", 0));
  for (std::int64_t a : axes) reduced[std::size_t(a < 0 ? a + std::int64_t(rank) : a)] = true;
  return reduced;
}

// The run of reduced axes of more than one element, [first, last] (first -1: none); axes of one
// element may lie between them, reduced or not.
std::pair<std::int64_t, std::int64_t> Compiler::reduced_run(int i, const Dims& x) const {
  const std::vector<bool> reduced = reduced_axes(i, x.size());
  std::int64_t first = -1, last = -1;
  for (std::size_t d = 0; d < x.size(); ++d) {
    if (!reduced[d] || x[d] == 1) continue;
    for (std::int64_t e = last + 1; first >= 0 && e < std::int64_t(d); ++e)
      if (!reduced[std::size_t(e)] && x[std::size_t(e)] > 1)
        fail(i, "the axes reduced are not one run of adjacent axes (axis " + std::to_string(e) + " of " +
                    std::to_string(x[std::size_t(e)]) + " lies between): lowered over one run");
    if (first < 0) first = std::int64_t(d);
    last = std::int64_t(d);
  }
  if (batch_ > 1 && !reduced.empty() && reduced[0]) fail(i, "axis 0 joins the batch's images: lowered at batch 1");
  return {first, last};
}

// Node i's sum, mean, maximum or minimum (`op`, the reduce kernel's) of ND activation x over one run
// of adjacent axes, into y: the reduce kernel over x as outer x rows x inner (its `head`th kernel).
// Reducing no axis of more than one element moves no value: the input itself (a copy as a graph
// output), or its reshape when keepdims 0 drops axes.
bool Compiler::axes_reduce(int i, const std::string& xv, const std::string& y, const std::string& op,
                           std::size_t head) {
  const auto& n = node(i);
  const Value& v = values_.at(xv);
  const Dims x = image_shape(xv);
  const auto [first, last] = reduced_run(i, x);
  if (first < 0 && image_shape(n.output(0)) != x) return view(i);  // keepdims 0: a reshape
  if (first < 0 && outputs_.count(n.output(0)) && !v.input.empty()) return copy_output(i);
  if (first < 0) return set_view(i, v), true;
  if (v.layout == Layout::Nc1hwc0 || !v.map.empty())
    fail(i, std::string(op == "sum" || op == "min"
                            ? "over a feature map (stored NC1HWC0) it is not lowered"
                            : "over a feature map (stored NC1HWC0, its channels in groups of 16) it is lowered over "
                              "every spatial axis, as its global pool, not over other axes"));
  if (v.transposed || v.scale != 1.0) fail(i, "the input is a view (a transpose or a scaling) no kernel has made");
  if (v.dtype != "f16" && v.dtype != "f32")
    fail(i, "the input is held in " + v.dtype + ": the reduce kernel takes f16 or f32");
  std::int64_t outer = 1, rows = 1, inner = 1;
  for (std::int64_t d = 0; d < std::int64_t(x.size()); ++d)
    (d < first ? outer : d > last ? inner : rows) *= x[std::size_t(d)];
  if (outer > (1 << 24) || rows > (1 << 24) || inner > (1 << 20))
    fail(i, "x as " + std::to_string(outer) + " x " + std::to_string(rows) + " x " + std::to_string(inner) +
                ": the reduce kernel takes up to 2^24 x 2^24 x 2^20");
  Kernel k{kernel_name(i, head ? "_r" : ""), "reduce"};
  k.nodes = {i};
  k.head = head;
  k.tensors.push_back(use(i, k, xv, "x", Layout::Nd));
  produce(k, y, KTensor{"y", v.dtype, "nd", "", "", "", image_shape(y)}, Layout::Nd);
  k.shape = {{"dtype", v.dtype}, {"reduce", op}, {"outer", num(outer)}, {"rows", num(rows)}, {"inner", num(inner)}};
  k.args = {"x", "y"};
  k.check_inputs = {"x"};
  // A sum in f32 rounded once to the element type: half a step of the result, and the f32 sum's
  // own rounding, rows steps of 2^-24 of the largest partial sum.
  const bool exact = op == "max" || op == "min";
  const double peak = max_abs(ref_.at(xv).data) * (op == "sum" ? double(rows) : 1.0);
  k.check = {{"op", "reduce"},
             {"atol", exact ? "0" : num(std::ldexp(peak, -22) * double(rows))},
             {"rtol", exact ? "0" : "2e-3"}};
  if (head) return place(std::move(k)), true;
  return finish(i, std::move(k));
}

// ReduceSumSquare, ReduceL1, ReduceL2 and ReduceLogSum as the ops they are defined by: x x or |x|
// (an elementwise kernel), the sum (the reduce kernel), then the square root or the logarithm
// (F.normalize's and torch.norm's ReduceL2). ReduceLogSumExp and ReduceProd are refused by name.
bool Compiler::composite_reduce(int i) {
  const auto& n = node(i);
  const std::string& t = n.op_type();
  if (t == "ReduceLogSumExp" || t == "ReduceProd")
    fail(i,
         "it is not lowered (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceSumSquare, ReduceL1, ReduceL2 and "
         "ReduceLogSum are)");
  const std::string &x = n.input(0), &y = n.output(0);
  if (reduced_run(i, image_shape(x)).first < 0)
    fail(i, "it reduces no axis of more than one element: lowered where it reduces one");
  // ReduceL2's and ReduceLogSum's sums pass f16's range long before their results do (a norm of
  // 316 is a sum of 1e5): an f16 x is cast to f32 first, and the op computed in f32.
  const bool wide = (t == "ReduceL2" || t == "ReduceLogSum") && values_.at(x).dtype == "f16";
  std::string sum_in = wide ? cast_to(i, x, "f32") : x, sum_out = y;
  const std::string from = sum_in;
  const Tensor& xs = ref_.at(x);
  if (t != "ReduceLogSum") {  // x x or |x|, a value of its own
    sum_in = x + (t == "ReduceL1" ? "#abs" : "#square");
    Tensor pre{xs.shape, xs.data};
    for (float& e : pre.data) e = t == "ReduceL1" ? std::fabs(e) : e * e;
    ref_[sum_in] = std::move(pre);
    if (t == "ReduceL1")
      elementwise_kernel(i, 1, "_abs", "abs", {{from, {}}}, sum_in);
    else
      elementwise_kernel(i, 1, "_sq", "mul", {{from, {}}, {from, {}}}, sum_in);
  }
  const char* post = t == "ReduceL2" ? "sqrt" : t == "ReduceLogSum" ? "log" : nullptr;
  if (post) {  // the sum, a value of its own
    sum_out = y + "#sum";
    Tensor sum{ref_.at(y).shape, ref_.at(y).data};
    for (float& e : sum.data) e = t == "ReduceL2" ? e * e : std::exp(e);
    ref_[sum_out] = std::move(sum);
  }
  if (!axes_reduce(i, sum_in, sum_out, "sum", 2) || !post) return done_[std::size_t(i)] = true;
  elementwise_kernel(i, 3, "", post, {{sum_out, {}}}, y);
  done_[std::size_t(i)] = true;
  return true;
}

// ReduceMean or ReduceMax over every spatial axis of a feature map (N x C x H x W: axes 2 and 3;
// N x C x L: axis 2), as PyTorch exports x.mean([2, 3]) (ShuffleNetV2's and timm's heads) and TF
// its global pools: the global pool it is. keepdims 0: the pooled 1 x C x 1 x 1 map read as 1 x C
// (a 1 x 1 NC1HWC0 map holds its channels in order), as a Flatten after a global pool is.
bool Compiler::spatial_reduce(int i) {
  const auto& n = node(i);
  if (n.op_type() != "ReduceMean" && n.op_type() != "ReduceMax") return false;
  const Dims x = ref_.at(n.input(0)).shape;
  Dims axes = attrs(i).ints("axes", {});
  if (n.input_size() > 1 && !n.input(1).empty() && constant(n.input(1)))  // opset 18: an input
    for (float v : ref_.at(n.input(1)).data) axes.push_back(std::int64_t(v));
  for (std::int64_t& a : axes) a = a < 0 ? a + std::int64_t(x.size()) : a;
  std::sort(axes.begin(), axes.end());
  const bool spatial = (x.size() == 4 && axes == Dims{2, 3}) || (x.size() == 3 && axes == Dims{2});
  const Value& in = values_.at(n.input(0));  // a feature map, or a graph input a pool places as one
  if (!spatial || !(in.layout == Layout::Nc1hwc0 || (!in.input.empty() && in.refs[image_].empty()))) return false;
  const bool keep = attrs(i).i("keepdims", 1) != 0;
  if (keep) return global_pool(i, n.input(0), n.output(0), n.op_type() == "ReduceMax");
  const std::string map = n.output(0) + "#map";  // the pool's own 1 x C x 1 x 1 output
  ref_[map] = Tensor{{x[0], x[1], 1, 1}, ref_.at(n.output(0)).data};
  global_pool(i, n.input(0), map, n.op_type() == "ReduceMax");
  Value v = values_.at(map);
  v.layout = Layout::Nd;
  set_view(i, v);
  return true;
}

const std::map<std::string, Compiler::Lowering>& Compiler::lowerings() {
  static const std::map<std::string, Lowering> table = {
      {"Conv", &Compiler::conv},
      {"ConvTranspose", &Compiler::conv_transpose},
      {"MaxPool", &Compiler::pool},
      {"AveragePool", &Compiler::pool},
      {"GlobalAveragePool", &Compiler::pool},
      {"GlobalMaxPool", &Compiler::pool},
      {"Gemm", &Compiler::gemm},
      {"MatMul", &Compiler::gemm},
      {"Relu", &Compiler::elementwise},
      {"Add", &Compiler::elementwise},
      {"Sub", &Compiler::elementwise},
      {"Mul", &Compiler::elementwise},
      {"Softmax", &Compiler::softmax},
      {"Flatten", &Compiler::view},
      {"Div", &Compiler::elementwise},
      {"BatchNormalization", &Compiler::batch_norm},
      {"Transpose", &Compiler::transpose},
      {"LayerNormalization", &Compiler::layer_norm},
      {"Concat", &Compiler::concat},
      {"ArgMax", &Compiler::top_k},
      {"TopK", &Compiler::top_k},
      {"Gather", &Compiler::gather},
      {"Reshape", &Compiler::view},
      {"Identity", &Compiler::view},
      {"Dropout", &Compiler::view},
      {"Cast", &Compiler::cast},
      {"Squeeze", &Compiler::view},
      {"Pad", &Compiler::pad},
      {"Resize", &Compiler::resize},
      {"Upsample", &Compiler::resize},
      {"Unsqueeze", &Compiler::view},
      {"Max", &Compiler::elementwise},
      {"Min", &Compiler::elementwise},
      {"Sigmoid", &Compiler::elementwise},
      {"Tanh", &Compiler::elementwise},
      {"LeakyRelu", &Compiler::elementwise},
      {"HardSigmoid", &Compiler::elementwise},
      {"HardSwish", &Compiler::elementwise},
      {"Clip", &Compiler::elementwise},
      {"Abs", &Compiler::elementwise},
      {"Neg", &Compiler::elementwise},
      {"Sqrt", &Compiler::elementwise},
      {"Exp", &Compiler::elementwise},
      {"Erf", &Compiler::elementwise},
      {"Equal", &Compiler::elementwise},
      {"Less", &Compiler::elementwise},
      {"LessOrEqual", &Compiler::elementwise},
      {"Greater", &Compiler::elementwise},
      {"GreaterOrEqual", &Compiler::elementwise},
      {"Not", &Compiler::elementwise},
      {"And", &Compiler::elementwise},
      {"Or", &Compiler::elementwise},
      {"Xor", &Compiler::elementwise},
      {"Where", &Compiler::elementwise},
      {"Reciprocal", &Compiler::elementwise},
      {"Log", &Compiler::elementwise},
      {"Expand", &Compiler::expand_node},
      {"Slice", &Compiler::slice_node},
      {"Split", &Compiler::split_node},
      {"ReduceMean", &Compiler::reduce},
      {"ReduceMax", &Compiler::reduce},
      {"ReduceSum", &Compiler::reduce},
      {"ReduceMin", &Compiler::reduce},
      {"ReduceSumSquare", &Compiler::reduce},
      {"ReduceL1", &Compiler::reduce},
      {"ReduceL2", &Compiler::reduce},
      {"ReduceLogSum", &Compiler::reduce},
      {"ReduceLogSumExp", &Compiler::reduce},
      {"ReduceProd", &Compiler::reduce},
      {"Pow", &Compiler::reduce},
  };
  return table;
}

// Each output's file name (outputs/, reference/): its name with what a file system would read as
// a path ('/' in every PyTorch 2 name, "..") as '_'. A name that needs no change keeps it; a
// changed one that meets another gets _2, _3 (a/b beside a_b).
std::map<std::string, std::string> Compiler::output_files() const {
  const auto safe = platform::file_name_of;
  std::map<std::string, std::string> files;
  std::set<std::string> taken;
  for (const std::string& name : outputs_)
    if (safe(name) == name) files[name] = name, taken.insert(name);
  for (const std::string& name : outputs_) {
    if (files.count(name)) continue;
    std::string unique = safe(name);
    for (int k = 2; taken.count(unique); ++k) unique = safe(name) + "_" + std::to_string(k);
    taken.insert(unique);
    files[name] = unique;
  }
  return files;
}

// Output `t`'s reference as kernel k holds it: where k holds it in f16, a finite value past f16's
// range is f16's bound of its sign, the nearest value f16 holds (rounded it would be an infinity,
// which only an overflow to infinity on the platform meets; a Where's mask value, saturated when
// compiled, meets the bound).
Tensor held_in(Tensor want, const Kernel& k, const std::string& t) {
  for (const KTensor& x : k.tensors)
    if (x.name == t && x.dtype == "f16")
      for (float& v : want.data)
        if (std::isfinite(v) && std::fabs(v) > 65504.0f) v = std::copysign(65504.0f, v);
  return want;
}

// Each graph output, each image: saved after the run (OUT/outputs/NAME.npy, NAME as
// output_files() gives it; with a batch, NAME.bI.npy), and its kernel checked against the host
// reference (an f16 network's tolerance: 2% of the output's largest magnitude, and 2% relative).
void Compiler::finish_outputs() {
  if (o_.reference) fs::create_directories(fs::path(o_.dir) / "reference");
  const std::map<std::string, std::string> files = output_files();
  for (const std::string& name : outputs_)
    for (image_ = 0; image_ < batch_; ++image_) {
      if (!values_.count(name))
        throw Error(m_.path + ": output '" + name + "' is not computed by a layer on the platform", kExitConfig);
      if (values_.at(name).transposed || values_.at(name).scale != 1.0)
        throw Error(m_.path + ": output '" + name +
                        "' is a Transpose or a scaling by a constant that no layer computes (it is folded only into a "
                        "MatMul or Softmax that reads it)",
                    kExitConfig);
      const std::string& r = ref(name);
      const auto dot = r.find('.');
      auto k =
          std::find_if(kernels_.begin(), kernels_.end(), [&](const Kernel& x) { return x.name == r.substr(0, dot); });
      if (r.empty() || k == kernels_.end() || !k->writes(r.substr(dot + 1)))
        throw Error(m_.path + ": output '" + name + "' is not computed by a layer on the platform", kExitConfig);
      const Tensor want = held_in(image_data(name), *k, r.substr(dot + 1));
      const std::string file = files.at(name) + (batch_ > 1 ? ".b" + std::to_string(image_) : "") + ".npy";
      std::vector<std::uint64_t> shape(want.shape.begin(), want.shape.end());
      if (o_.reference)
        platform::write_tensor_file((fs::path(o_.dir) / "reference" / file).string(), aicore::DType::F32, shape,
                                    reinterpret_cast<const std::uint8_t*>(want.data.data()), want.data.size());
      double peak = 0;
      for (float x : want.data)  // an inf (an Exp's overflow) is met only by an inf
        if (std::isfinite(x)) peak = std::max(peak, double(std::fabs(x)));
      // The kernel's own output is checked; another (TopK's values beside its indices) saved.
      // Saved in the output's shape: a view's (a Reshape, a flattened map) holds the same elements in
      // that order (a stored map is saved in its logical order), a scalar's one element as a scalar.
      for (KTensor& t : k->tensors)
        if (t.name == r.substr(dot + 1)) {
          t.save = "outputs/" + file;
          const Dims stored = held(t.shape);
          t.save_shape = stored != want.shape && std::size_t(product(stored)) == want.elements()
                             ? std::optional(want.shape)
                             : std::nullopt;
        }
      // A Concat's output, whole once every copy has run (checks run after the run), is checked so.
      if (k->holds == r.substr(dot + 1)) k->output = k->holds;
      if (k->output != r.substr(dot + 1) || !o_.reference) continue;
      const bool exact = std::any_of(k->tensors.begin(), k->tensors.end(),
                                     [&](const KTensor& t) { return t.name == k->output && t.dtype == "s32"; });
      k->check = {{"expected", path_of("reference/" + file)},  // indices: exact
                  {"atol", exact ? "0" : num(std::max(0.02 * peak, 1e-6))},
                  {"rtol", exact ? "0" : "0.02"}};
      k->check_inputs.clear();
    }
  image_ = 0;
}

// The order a batch's kernels run in: the network in two parts. The first runs image by image,
// so one image's maps stay in the L2 from layer to layer, not the whole batch's; the second runs
// each layer for every image in turn, so its weights come from DRAM once and from the L2 after.
// The second part is the longest tail of layers each of whose own tails holds more bytes of
// weights than of the batch's outputs (the late, wide layers of a CNN; all of a transformer's).
void Compiler::order_batch() {
  if (batch_ == 1) return;
  std::vector<std::uint64_t> weights(layers_, 0), outputs(layers_, 0);
  for (const Kernel& k : kernels_)
    for (const KTensor& t : k.tensors) {
      if (k.image == 0 && t.name == k.output) outputs[k.layer] += stored_bytes(t) * batch_;
      if (k.image == 0 && t.weight()) weights[k.layer] += stored_bytes(t);
    }
  std::size_t split = layers_;
  std::uint64_t w = 0, o = 0;
  for (std::size_t l = layers_; l-- > 0;) {
    w += weights[l], o += outputs[l];
    if (w <= o) break;
    split = l;
  }
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> at;  // (layer, image) -> its kernel
  for (std::size_t j = 0; j < kernels_.size(); ++j) at[{kernels_[j].layer, kernels_[j].image}] = j;
  std::vector<std::size_t> order;
  for (std::size_t b = 0; b < batch_; ++b)
    for (std::size_t l = 0; l < split; ++l) order.push_back(at.at({l, b}));
  for (std::size_t l = split; l < layers_; ++l)
    for (std::size_t b = 0; b < batch_; ++b) order.push_back(at.at({l, b}));
  std::vector<Kernel> kernels;
  std::vector<CompiledLayer> layers;
  for (std::size_t i : order) kernels.push_back(std::move(kernels_[i])), layers.push_back(out_.layers[i]);
  kernels_ = std::move(kernels), out_.layers = std::move(layers);
}

// The tensors that own their memory and are not weights (the arena's candidates), by
// KERNEL.TENSOR, with the kernels that touch them.
std::map<std::string, Compiler::ArenaBuffer> Compiler::arena_buffers() {
  std::map<std::string, ArenaBuffer> buffers;
  for (Kernel& k : kernels_)
    for (KTensor& t : k.tensors)
      if (t.alias.empty() && (t.file.empty() || t.graph_input)) {  // weights are not in it
        const std::string ref = k.name + "." + t.name;
        buffers.emplace(ref,
                        ArenaBuffer{&t, {}, {}, t.graph_input, false, (stored_bytes(t) + 4095) / 4096 * 4096, 0, ref});
      }
  for (std::size_t j = 0; j < kernels_.size(); ++j)
    for (const KTensor& t : kernels_[j].tensors)
      if (auto b = buffers.find(t.alias.empty() ? kernels_[j].name + "." + t.name : t.alias); b != buffers.end()) {
        b->second.touched.push_back(int(j));
        if (kernels_[j].writes(t.name)) b->second.writers.push_back(int(j));
      }
  for (const std::string& name : outputs_)
    for (const std::string& r : values_.at(name).refs) buffers.at(r).kept = true;
  return buffers;
}

// The activation arena: each layer output lives from the kernel that writes it, and each graph
// input from the start (it is loaded before the run), to the last kernel that reads it (a graph
// output: to the end); buffers whose lives do not overlap share memory. Largest first, each at
// the lowest offset free over its life (first fit by size, as TensorFlow Lite's arena planner),
// in whole pages.
void Compiler::plan_arena() {
  using Buffer = ArenaBuffer;
  std::map<std::string, Buffer> buffers = arena_buffers();
  // a's uses all end before b is written (b is never written before the run, a never freed after it).
  auto before = [&](const Buffer& a, const Buffer& b) {
    if (a.kept || b.loaded || b.writers.empty()) return false;
    for (int x : a.touched)
      for (int w : b.writers)
        if (!happens_before(sched_, x, w)) return false;
    return true;
  };
  std::vector<Buffer*> order;
  for (auto& [ref, b] : buffers) order.push_back(&b);
  std::stable_sort(order.begin(), order.end(), [](const Buffer* a, const Buffer* b) { return a->bytes > b->bytes; });
  std::vector<const Buffer*> placed;
  for (Buffer* b : order) {
    for (bool moved = true; moved;) {  // past every placed buffer that overlaps it in time and memory
      moved = false;
      for (const Buffer* p : placed)
        if (p->offset < b->offset + b->bytes && b->offset < p->offset + p->bytes && !before(*p, *b) && !before(*b, *p))
          b->offset = p->offset + p->bytes, moved = true;
    }
    placed.push_back(b);
    b->t->arena = std::int64_t(b->offset);
    out_.arena_bytes = std::max(out_.arena_bytes, b->offset + b->bytes);
  }
}

// The arena's ranges no kernel touches after kernel j, dropped from the L2 as j ends (discard
// tasks for the SDMA engine, after j on its stream): dirty activations no later layer reads,
// which the weights streaming through would otherwise evict and write back to DRAM. ResNet-50 on
// ascend310 at batch 1 wrote 3.7 MB of them, most while stages 3 and 4 wait on the DRAM.
// A range is cut at every buffer's ends; it is dropped after the last kernel that touches a
// buffer over it, once every other such kernel happens before that one (its stream and events),
// and never where a graph output is (read after the run). No kernel writes there later, so
// the discard may land whenever the engine gets to it.
void Compiler::plan_discards() {
  discard_at_.assign(kernels_.size(), {});
  if (o_.discard == Plan::Off || !o_.arena || !o_.target || !o_.target->sdma) return;
  const bool automatic = o_.discard == Plan::Auto;
  std::uint64_t weights = 0;  // with the arena, all the L2 must hold: nothing is evicted, nothing to save
  for (std::size_t j = 0; j < kernels_.size(); ++j) weights += weight_bytes(j);
  if (automatic && out_.arena_bytes + weights <= o_.target->l2_bytes) return;
  std::vector<const ArenaBuffer*> placed;
  const std::map<std::string, ArenaBuffer> buffers = arena_buffers();
  std::vector<std::uint64_t> cuts;
  for (const auto& [ref, b] : buffers)
    if (b.t->arena >= 0) {
      placed.push_back(&b);
      cuts.push_back(std::uint64_t(b.t->arena)), cuts.push_back(std::uint64_t(b.t->arena) + b.bytes);
    }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) discard_range(placed, cuts[i], cuts[i + 1]);
  drop_small_discards(automatic);
}

// The discard of arena bytes [from, to), which no buffer straddles, if it may be (plan_discards).
void Compiler::discard_range(const std::vector<const ArenaBuffer*>& placed, std::uint64_t from, std::uint64_t to) {
  std::vector<const ArenaBuffer*> over;
  int last = -1;
  for (const ArenaBuffer* b : placed)
    if (std::uint64_t(b->t->arena) < to && from < std::uint64_t(b->t->arena) + b->bytes) {
      if (b->kept) return;
      over.push_back(b);
      for (int x : b->touched) last = std::max(last, x);
    }
  if (last < 0) return;
  const ArenaBuffer* owner = nullptr;  // a buffer kernel `last` touches: the discard's name
  for (const ArenaBuffer* b : over)
    for (int x : b->touched) {
      if (x != last && !happens_before(sched_, x, last)) return;
      if (x == last) owner = b;
    }
  const std::uint64_t at = from - std::uint64_t(owner->t->arena), stored = stored_bytes(*owner->t);
  if (at >= stored) return;  // the page's padding past the tensor
  const std::string& name = owner->ref;
  std::vector<Discard>& d = discard_at_[std::size_t(last)];
  const std::uint64_t bytes = std::min(to - from, stored - at);
  if (!d.empty() && d.back().tensor == name && d.back().offset + d.back().bytes == at)
    d.back().bytes += bytes;  // the next range of the same tensor
  else
    d.push_back({name, at, bytes});
}

// The discards worth their task: those that hold a whole line (every range starts on a page,
// and so on a line), and, planned automatically, those the DRAM would take discard_min_ps to
// write back.
void Compiler::drop_small_discards(bool automatic) {
  for (std::vector<Discard>& d : discard_at_)
    d.erase(std::remove_if(d.begin(), d.end(),
                           [&](const Discard& x) {
                             return x.bytes < o_.target->line_bytes ||
                                    (automatic && double(x.bytes) / o_.target->dram_bytes_per_ps < o_.discard_min_ps);
                           }),
            d.end());
}

void emit_tensor(YAML::Emitter& y, const KTensor& t) {
  y << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << t.name << YAML::Key << "dtype"
    << YAML::Value << t.dtype;
  if (!t.alias.empty()) y << YAML::Key << "alias" << YAML::Value << t.alias;
  if (t.offset) y << YAML::Key << "offset" << YAML::Value << t.offset;
  if (t.layout != "nd") y << YAML::Key << "layout" << YAML::Value << t.layout;
  if (t.alias.empty() || !t.shape.empty()) y << YAML::Key << "shape" << YAML::Value << YAML::Flow << held(t.shape);
  if (t.groups != 1) y << YAML::Key << "groups" << YAML::Value << t.groups;
  if (!t.file.empty())
    y << YAML::Key << "file" << YAML::Value << t.file << YAML::Key << "convert" << YAML::Value << true;
  if (!t.save.empty()) y << YAML::Key << "save" << YAML::Value << t.save;
  if (t.save_shape) y << YAML::Key << "save_shape" << YAML::Value << YAML::Flow << *t.save_shape;
  if (t.arena >= 0) y << YAML::Key << "arena" << YAML::Value << t.arena;
  y << YAML::EndMap;
}

void emit_kernel(YAML::Emitter& y, const Kernel& k, bool check) {
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << k.name;
  if (k.library == "aicpu") {
    y << YAML::Key << "aicpu" << YAML::Value << k.shape.at(0).second;
  } else {
    y << YAML::Key << "library" << YAML::Value << k.library << YAML::Key << "shape" << YAML::Value << YAML::Flow
      << YAML::BeginMap;
    for (const auto& [key, v] : k.shape) y << YAML::Key << key << YAML::Value << v;
    y << YAML::EndMap;
  }
  y << YAML::Key << "tensors" << YAML::Value << YAML::BeginSeq;
  for (const KTensor& t : k.tensors) emit_tensor(y, t);
  y << YAML::EndSeq << YAML::Key << "args" << YAML::Value << YAML::Flow << k.args;
  if (check) {
    y << YAML::Key << "check" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [key, v] : k.check) y << YAML::Key << key << YAML::Value << v;
    if (!k.check_inputs.empty()) y << YAML::Key << "inputs" << YAML::Value << YAML::Flow << k.check_inputs;
    y << YAML::Key << "output" << YAML::Value << k.output << YAML::EndMap;
  }
  y << YAML::EndMap;
}

// network: what each kernel runs, for the summary's per-layer table.
void Compiler::emit_network(YAML::Emitter& y) const {
  y << YAML::Key << "network" << YAML::Value << YAML::BeginMap << YAML::Key << "model" << YAML::Value << m_.path
    << YAML::Key << "batch" << YAML::Value << batch_ << YAML::Key << "arena_bytes" << YAML::Value << out_.arena_bytes
    << YAML::Key << "layers" << YAML::Value << YAML::BeginSeq;
  for (const CompiledLayer& l : out_.layers) {
    std::string ops;
    for (const std::string& op : l.ops) ops += (ops.empty() ? "" : "+") + op;
    y << YAML::Flow << YAML::BeginMap << YAML::Key << "kernel" << YAML::Value << l.kernel << YAML::Key << "ops"
      << YAML::Value << ops << YAML::Key << "output" << YAML::Value << l.output << YAML::EndMap;
  }
  y << YAML::EndSeq << YAML::EndMap;
}

// Each kernel's stream and events (schedule.hpp), from what it reads and writes.
std::vector<Scheduled> Compiler::task_streams() {
  std::vector<TaskNode> nodes;
  for (const Kernel& k : kernels_) {
    TaskNode n;
    n.image = k.image, n.aicpu = k.library == "aicpu";
    n.fills_cores = fills_cores(k);
    for (const KTensor& t : k.tensors)
      (k.writes(t.name) ? n.writes.emplace_back() : n.reads.emplace_back()) =
          t.alias.empty() ? k.name + "." + t.name : t.alias;
    nodes.push_back(n);
  }
  std::vector<Scheduled> s = schedule(nodes, int(o_.streams));
  // The runtime's task table (DVP_MAX_TASKS) holds the events too. Past it, the parallel streams
  // go (one stream needs no events). The preloads, planned after, go before them (fit_preloads).
  auto tasks = [&] {
    std::size_t n = s.size();
    for (std::size_t j = 0; j < s.size(); ++j) n += s[j].wait.size() + s[j].record.size();
    return n;
  };
  if (tasks() > kMaxTasks) s = schedule(nodes, 1);
  return s;
}

// Whether kernel k runs one after the branch it would otherwise run beside
// (TaskNode::fills_cores): built for the target's AI Cores as the launcher builds it, it has a
// work unit (an output tile, a band) for every core, and its roofline bound is at least
// CompileOptions::serial_min_ps. A shorter kernel is mostly its start and end (dispatch, the
// first loads, the last writes), which a branch beside it fills: on ascend910 every ResNet-50
// kernel is, and running them one after another costs 4% there (a transformer block 29%).
// Without a target: none.
bool Compiler::fills_cores(const Kernel& k) {
  if (!o_.target || k.library == "aicpu") return false;
  const platform::LibraryKernel* const* lib = platform::library_kernels().find(k.library);
  if (!lib) return false;
  const auto known = fills_cores_.find({k.library, k.shape});  // a batch's images: the same shapes
  if (known != fills_cores_.end()) return known->second;
  const cfg::Origin at{"compiled model", 0, 0};
  cfg::Node node = cfg::Node::map(at, "kernels." + k.name + ".shape");
  for (const auto& [key, v] : k.shape) node.set(key, cfg::Node::scalar(v, at, node.path() + "." + key));
  static const cfg::Spec spec = [] {
    cfg::Spec s("shape", cfg::Type::Section, "");
    platform::KernelLauncher::describe_shape(s);
    return s;
  }();
  std::vector<std::string> errors;
  spec.validate(node, errors);  // its defaults
  bool fills = false;
  try {
    if (errors.empty()) {  // a shape it refuses, the run names
      const aicore::AiCoreConfig& core = o_.target->core;
      const platform::KernelShape shape = (*lib)->read(node);
      fills = platform::library_work(**lib, core, shape).bound_ps(o_.target->dram_bytes_per_ps) >= o_.serial_min_ps &&
              (*lib)->build(core, shape).units >= core.cores;
    }
  } catch (const Error&) {
    // A shape the core cannot run: the run names the kernel and the key at fault.
  }
  return fills_cores_[{k.library, k.shape}] = fills;
}

// The task table with the preloads and discards: past it, they go (the discards first), a
// speed-up only (plan_preloads runs after the streams and the arena, which it weighs).
void Compiler::fit_preloads() {
  auto tasks = [&] {
    std::size_t n = 0;
    for (std::size_t j = 0; j < sched_.size(); ++j)
      n += 1 + sched_[j].wait.size() + sched_[j].record.size() + preloads(j).size() + discards(j).size();
    return n;
  };
  if (tasks() > kMaxTasks) discard_at_.assign(kernels_.size(), {});  // the discards go first
  if (tasks() > kMaxTasks) preload_at_.assign(kernels_.size(), {});
}

// The weights to preload into the L2 as kernel j starts (plan_preloads).
const std::vector<Compiler::PreloadTask>& Compiler::preloads(std::size_t j) const {
  static const std::vector<PreloadTask> none;
  return j < preload_at_.size() ? preload_at_[j] : none;
}

// The arena's ranges dropped from the L2 as kernel j ends (plan_discards).
const std::vector<Compiler::Discard>& Compiler::discards(std::size_t j) const {
  static const std::vector<Discard> none;
  return j < discard_at_.size() ? discard_at_[j] : none;
}

// The bytes of kernel j's own weights.
std::uint64_t Compiler::weight_bytes(std::size_t j) const {
  std::uint64_t b = 0;
  for (const KTensor& t : kernels_[j].tensors)
    if (t.weight()) b += std::uint64_t(product(t.shape) * elem_bytes(t.dtype));
  return b;
}

// Which weights the task scheduler's SDMA engine preloads into the L2, and when: as kernel j
// starts, the weights of the kernels after it, in order, as far ahead as fits in the preload
// window with those preloaded and not yet used. The engine works through them one after another,
// so while the network computes, DRAM streams the weights it will need next instead of waiting
// for each layer to ask. A kernel whose weights are larger than the window is left to stream its
// own: preloading it (all or its first window's worth) competes with the kernel running and
// thrashes the L2 the activations share (ResNet-50 on the 310 at batch 1: 3286 us without
// preloads, 3651 with the large kernels preloaded, 3261 with their first 2 MiB, 2997 without
// them; docs/networks.md).
void Compiler::plan_preloads() {
  preload_at_.assign(kernels_.size(), {});
  if (o_.preload == Plan::Off) return;
  // Auto: the L2 must hold the window beside the activation arena (without one, beside all the
  // activations), or the preloaded lines are evicted before their kernel reads them (ResNet-50 on
  // the 310 at batch 8, whose arena fills it).
  // And the DRAM must take at least preload_min_ps to stream the window at its peak. A preload
  // task costs its stream a dispatch and a completion, and saves the kernel waiting for its
  // weights: on ascend910's HBM, which streams the whole window in 1.7 us, preloads measured a
  // loss (ResNet-50 599 us with every kernel's, 595 with those of 360 KB or more, 583 without);
  // on ascend310's LPDDR4 (61 us) every one measured pays, the smallest too (ResNet-50 2886 ->
  // 2883 us, EfficientNet-B0 2797 -> 2788 with the kernels under 73 KB; docs/networks.md).
  const bool automatic = o_.preload == Plan::Auto;
  const std::uint64_t activations = o_.arena ? out_.arena_bytes : out_.activation_bytes;
  if (automatic && (!o_.target || !o_.target->sdma || activations + o_.preload_window > o_.target->l2_bytes ||
                    double(o_.preload_window) / o_.target->dram_bytes_per_ps < o_.preload_min_ps))
    return;
  std::vector<bool> preloaded(kernels_.size());
  std::vector<std::size_t> reached(kernels_.size());  // 1 + the kernel whose window first passes it
  std::size_t next = 1;                               // the first kernel not yet considered for a preload
  std::uint64_t ahead = 0;                            // bytes preloaded for kernels after the running one
  for (std::size_t j = 0; j < kernels_.size(); ++j) {
    if (next <= j)
      next = j + 1, ahead = 0;
    else if (preloaded[j])
      ahead -= std::min(ahead, weight_bytes(j));  // kernel j uses its own now
    for (; next < kernels_.size(); ++next) {
      const std::uint64_t w = weight_bytes(next);
      if (w > o_.preload_window) {  // streams its own, but for its head and a prefetch (below)
        if (!reached[next]) reached[next] = j + 1;
        continue;
      }
      if (ahead + w > o_.preload_window) break;
      for (const KTensor& t : kernels_[next].tensors)
        if (t.weight()) preload_at_[j].push_back({kernels_[next].name + "." + t.name, 0});
      preloaded[next] = true;
      ahead += w;
    }
  }
  plan_heads(reached, o_.target && o_.target->l2_bytes > activations + o_.preload_window
                          ? o_.target->l2_bytes - activations - o_.preload_window
                          : 0);
}

// The preloads of the kernels whose weights are over the window (plan_preloads), given the kernel
// whose window first passes each (1 + its index; 0: none) and the L2's room for a prefetch.
void Compiler::plan_heads(const std::vector<std::size_t>& reached, std::uint64_t room) {
  // A kernel that streams its own weights gets their first preload_head bytes preloaded as the
  // kernel before it starts, so the DRAM does not pause at the boundary: that kernel's last tiles
  // and the dispatch between them leave it idle for some microseconds, and the large kernel's first
  // reads wait on it (ResNet-50 on ascend310: 2668.2 -> 2650.4 us with 128 KiB; 64 KiB 2655.6,
  // 256 KiB 2650.9, 1 MiB 2672.0, which competes with the kernel before for the DRAM).
  // And the rest of its weights are prefetched: the SDMA engine reads them while no preload is
  // queued, so the DRAM streams them in time the kernels before it leave idle (stage 3's blocks
  // compute while the window is full), not after they end (prefetch_start says from where). Only
  // where no other such kernel runs in between: that one's own reads keep the DRAM busy, and the
  // prefetch would only fill the L2 ahead of it.
  std::optional<std::vector<std::uint64_t>> live;  // live_activations(), once a prefetch needs it
  for (std::size_t b = 1; b < kernels_.size(); ++b)
    if (weight_bytes(b) > o_.preload_window)
      for (const KTensor& t : kernels_[b].tensors)
        if (t.weight()) {  // the first: the weights proper (a bias after them is small)
          const std::string name = kernels_[b].name + "." + t.name;
          preload_at_[b - 1].push_back({name, o_.preload_head});
          const std::uint64_t bytes = std::uint64_t(product(t.shape) * elem_bytes(t.dtype));
          // No large kernel from the one running as it is queued to b; on b's stream (another's
          // order says nothing of when b starts).
          bool clear = reached[b] > 0 && sched_[reached[b] - 1].stream == sched_[b].stream;
          for (std::size_t q = reached[b] - 1; clear && q < b; ++q) clear = weight_bytes(q) <= o_.preload_window;
          if (!clear || bytes <= o_.preload_head) break;
          const std::uint64_t rest = bytes - o_.preload_head;
          if (!live) live = live_activations();
          if (const std::size_t from = prefetch_start(reached[b] - 1, b, rest, *live); from < b)
            preload_at_[from].push_back({name, rest, o_.preload_head, true});
          else if (room)  // else (an L2 that keeps none): what it has room for beside the arena and the window
            // as the window reaches b (ResNet-50 on ascend310: 2650.4 -> 2604.5 us; more room or an
            // earlier start measured worse, the lines evicted before their kernel read them)
            preload_at_[reached[b] - 1].push_back({name, std::min(room, rest), o_.preload_head, true});
          break;
        }
}

// The kernel from which to prefetch the `bytes` after kernel b's head, in an L2 that keeps a
// prefetch's lines until their reader comes (platform.l2.persist_fraction); b: none (not kept, or no
// room as the window reaches b, at `at`). Going back from `at`, up to prefetch_lead kernels, over
// the kernels on b's stream with weights under the window, as long as the L2 holds the prefetch
// beside the window and the live activations of every kernel up to b. All of the weights after
// the head, also past the kept ways (ordinary fills then, which may still hit: ResNet-50 with
// 1/16 of the ways kept 2599.3 us, none 2604.5). The earlier, the more of the DRAM's idle
// time it takes, but the kept lines leave the other lines less room for longer, and the oldest
// preloads, not yet read, are the first the replacement takes. ResNet-50 on ascend310:
// layer4_0_conv2's 4.6 MB from stage 3's first kernel (17 kernels back; stage 2's activations
// leave no room before it) 2604.5 -> 2545.1 us; 9 kernels back 2557.6; with 4 ways kept instead
// of 8 2573.1. EfficientNet-B0's classifier (2.4 MB): 0, 10, 20, 40 kernels back 2448.5, 2446.6,
// 2450.9, 2471.8 us; from 152 back (as far as the room goes) 2489.5, its L2 hits down to 0.75
// from 0.99 in the kernels the kept lines span (docs/networks.md).
std::size_t Compiler::prefetch_start(std::size_t at, std::size_t b, std::uint64_t bytes,
                                     const std::vector<std::uint64_t>& live) const {
  if (!o_.target || !o_.target->l2_keeps_prefetches) return b;
  std::uint64_t most = *std::max_element(live.begin() + std::ptrdiff_t(at), live.begin() + std::ptrdiff_t(b));
  const auto fits = [&](std::uint64_t activations) {
    return activations + o_.preload_window + bytes <= o_.target->l2_bytes;
  };
  if (!fits(most)) return b;
  // Kernel q-1 can take the prefetch too: a small one on b's stream, beside which it fits.
  const auto extends = [&](std::size_t q) {
    return weight_bytes(q - 1) <= o_.preload_window && sched_[q - 1].stream == sched_[b].stream &&
           fits(std::max(most, live[q - 1]));
  };
  for (std::size_t lead = 0; lead < o_.prefetch_lead && at > 0 && extends(at); ++lead)
    most = std::max(most, live[--at]);
  return at;
}

// The activations live in the L2 as each kernel runs: with an arena, its buffers from the kernel
// that first touches each (a graph input: the start) to the last (a graph output: the end);
// without, all of them.
std::vector<std::uint64_t> Compiler::live_activations() {
  if (!o_.arena) return std::vector<std::uint64_t>(kernels_.size(), out_.activation_bytes);
  std::vector<std::uint64_t> live(kernels_.size());
  for (const auto& [ref, buf] : arena_buffers()) {
    if (buf.touched.empty()) continue;
    const auto [lo, hi] = std::minmax_element(buf.touched.begin(), buf.touched.end());
    for (std::size_t j = buf.loaded ? 0 : std::size_t(*lo); j <= (buf.kept ? live.size() - 1 : std::size_t(*hi)); ++j)
      live[j] += buf.bytes;
  }
  return live;
}

// A conv's or GEMM's weights in fractal order that no other kernel reads (the later images of a
// batch alias the first's) are read once: shape weights_once, so they pass by the L2 without
// evicting the activations the next layers read (gemm.cpp's fractal_b). ResNet-50 on ascend310
// at batch 1: 2792.7 -> 2725.5 us (stage 4's 30 MB of weights through an 8 MiB L2). Marking the
// first image's at batch 8 would read them from DRAM eight times.
void Compiler::mark_weights_once() {
  std::set<std::string> aliased;
  for (const Kernel& k : kernels_)
    for (const KTensor& t : k.tensors)
      if (!t.alias.empty()) aliased.insert(t.alias);
  for (Kernel& k : kernels_) {
    const bool fractal = std::any_of(k.shape.begin(), k.shape.end(), [](const auto& kv) {
      return (kv.first == "weights_layout" || kv.first == "b_layout") && kv.second == "fractal_z";
    });
    if (!fractal || (k.library != "conv2d" && k.library != "gemm")) continue;
    bool own = false, shared = false;  // a later image's kernel reads the first's (an alias)
    for (const KTensor& t : k.tensors)
      if (t.weight()) own = true, shared = shared || aliased.count(k.name + "." + t.name);
    if (own && !shared) k.shape.push_back({"weights_once", "true"});
  }
}

// tasks: each kernel on its stream, after the waits it needs and the preload of the next one's
// weights, then the records others wait for, then the discards of what no kernel after it
// touches (after the records: a discard's dispatch need not hold back another stream).
void Compiler::emit_tasks(YAML::Emitter& y) const {
  const std::vector<Scheduled>& s = sched_;
  y << YAML::Key << "tasks" << YAML::Value << YAML::BeginSeq;
  auto event = [&](int stream, const char* what, int e) {
    y << YAML::Flow << YAML::BeginMap << YAML::Key << "stream" << YAML::Value << stream << YAML::Key << what
      << YAML::Value << e << YAML::EndMap;
  };
  for (std::size_t j = 0; j < kernels_.size(); ++j) {
    for (int e : s[j].wait) event(s[j].stream, "wait", e);
    for (const PreloadTask& w : preloads(j)) {
      y << YAML::Flow << YAML::BeginMap << YAML::Key << (w.prefetch ? "prefetch" : "preload") << YAML::Value
        << w.tensor;
      if (w.offset) y << YAML::Key << "offset" << YAML::Value << w.offset;
      if (w.bytes) y << YAML::Key << "bytes" << YAML::Value << w.bytes;
      if (s[j].stream) y << YAML::Key << "stream" << YAML::Value << s[j].stream;
      y << YAML::EndMap;
    }
    y << YAML::Flow << YAML::BeginMap << YAML::Key << "kernel" << YAML::Value << kernels_[j].name;
    if (s[j].stream) y << YAML::Key << "stream" << YAML::Value << s[j].stream;
    y << YAML::EndMap;
    for (int e : s[j].record) event(s[j].stream, "record", e);
    for (const Discard& d : discards(j)) {
      y << YAML::Flow << YAML::BeginMap << YAML::Key << "discard" << YAML::Value << d.tensor;
      if (d.offset) y << YAML::Key << "offset" << YAML::Value << d.offset;
      y << YAML::Key << "bytes" << YAML::Value << d.bytes;
      if (s[j].stream) y << YAML::Key << "stream" << YAML::Value << s[j].stream;
      y << YAML::EndMap;
    }
  }
  y << YAML::EndSeq;
}

// The runtime firmware's cores: control CPU 0, and with AI CPU kernels the first AI CPU, core 4
// on both presets (4 control cores), which runs them all, one at a time (schedule.hpp).
std::vector<int> Compiler::firmware_cores() const {
  for (const Kernel& k : kernels_)
    if (k.library == "aicpu") return {0, 4};
  return {0};
}

// The scenario: the kernels, and their tasks for the runtime firmware.
void Compiler::emit(const std::string& path) const {
  YAML::Emitter y;
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << fs::path(m_.path).stem().string();
  y << YAML::Key << "description" << YAML::Value
    << "Compiled by dvp from " + m_.path + " (" + std::to_string(kernels_.size()) +
           " layers): the runtime firmware on a control CPU submits one task per layer through the task scheduler; " +
           (o_.reference ? "each graph output is checked against the host f32 reference."
                         : "compiled for a timing-only run: no host reference, nothing checked.");
  y << YAML::Key << "platform" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "preset" << YAML::Value
    << o_.preset << YAML::EndMap;
  y << YAML::Key << "firmware" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "image" << YAML::Value
    << "runtime" << YAML::Key << "cores" << YAML::Value << YAML::Flow << firmware_cores() << YAML::EndMap;
  emit_network(y);
  y << YAML::Key << "kernels" << YAML::Value << YAML::BeginSeq;
  for (const Kernel& k : kernels_)
    emit_kernel(y, k, o_.reference && (o_.check_layers || (!k.check.empty() && k.check[0].first == "expected")));
  y << YAML::EndSeq;
  emit_tasks(y);
  y << YAML::Key << "checks" << YAML::Value << YAML::BeginSeq;
  y << YAML::Flow << YAML::BeginMap << YAML::Key << "metric" << YAML::Value << "summary.firmware_exit_code" << YAML::Key
    << "min" << YAML::Value << 0 << YAML::Key << "max" << YAML::Value << 0 << YAML::EndMap;
  y << YAML::Flow << YAML::BeginMap << YAML::Key << "metric" << YAML::Value << "summary.kernel_checks_failed"
    << YAML::Key << "max" << YAML::Value << 0 << YAML::EndMap << YAML::EndSeq << YAML::EndMap;
  std::ofstream f(path);
  f << "# Generated by dvp from " << m_.path << ": do not edit; compile the model again.\n" << y.c_str() << "\n";
  if (!f) throw Error("cannot write " + path, kExitOutput);
}

// Nodes that compute from weights and shapes only are folded, as a framework's graph compiler
// folds them: their outputs are weights whose values are the host reference's, computed with the
// run's own input shapes (so --batch holds): a shape's arithmetic as PyTorch exports
// x.view(x.size(0), -1) (Shape, Gather, Unsqueeze, Concat, then the Reshape it feeds), a Cast of
// a weight, a Sqrt of a constant. Not a node whose output is a graph output: a layer computes
// those.
void Compiler::fold_constant_nodes() {
  for (int i = 0; i < g_.node_size(); ++i) {
    const auto& n = node(i);
    const auto weight_or_none = [&](const std::string& v) { return v.empty() || is_weight(v); };
    const bool from_weights = n.input_size() > 0 && std::all_of(n.input().begin(), n.input().end(), weight_or_none);
    const bool graph_output =
        std::any_of(n.output().begin(), n.output().end(), [&](const std::string& v) { return outputs_.count(v); });
    if (!(from_weights || n.op_type() == "Shape") || graph_output) continue;
    for (const std::string& v : n.output())
      if (!v.empty()) init_[v] = nullptr;  // its values: the host reference's
    done_[std::size_t(i)] = true;
  }
}

// A node that reads or writes a tensor with no elements (weights of 0 output channels, a
// contraction over 0): the host reference takes it, the platform's kernels do not (each shape
// key is at least 1), so it is refused here rather than by the compiled model's own run.
// A Reduce op's axes may be empty (reduce_axes).
void Compiler::refuse_empty() const {
  for (int i = 0; i < g_.node_size(); ++i)
    for (const auto* names : {&node(i).input(), &node(i).output()})
      for (int j = 0; j < names->size(); ++j) {
        const std::string& name = (*names)[j];
        if (names == &node(i).input() && reduce_axes(node(i), j)) continue;
        if (auto t = ref_.find(name); !name.empty() && t != ref_.end() && t->second.elements() == 0)
          fail(i, "tensor '" + name + "' of shape " + t->second.shape_str() +
                      " has no elements: the platform's kernels take at least one");
      }
}

// Node i, lowered by `by` (its op's entry of lowerings()); a member of a pattern found before
// lowering (a GELU, a LayerNormalization written out, a masked softmax) by its pattern, whichever
// member's op comes first in the graph (GPT-2's gelu_new: the Pow; a masked softmax: the Where).
bool Compiler::lower(int i, Lowering by) {
  if (gelu_.count(i)) return gelu(gelu_.at(i));
  if (layer_norm_.count(i)) return layer_norm_pattern(layer_norm_.at(i));
  if (masked_softmax_.count(i)) return masked_softmax(masked_softmax_.at(i));
  return (this->*by)(i);
}

Compiled Compiler::run() {
  fs::create_directories(fs::path(o_.dir) / "tensors");
  read_inputs();
  run_reference(m_, ref_, o_.reference);
  refuse_empty();
  check_output_shapes();
  for (const std::string& name : o_.outputs)
    if (!ref_.count(name) || init_.count(name))
      throw Error("--output " + name + ": " + m_.path + " has no node output of that name", kExitConfig);
  for (const auto& t : g_.initializer()) values_.erase(t.name());
  fold_constant_nodes();
  find_gelus();
  find_layer_norms();
  find_masked_softmaxes();
  // Each node in graph order; one whose input is not computed yet waits, and is tried again.
  for (bool progress = true; progress;) {
    progress = false;
    for (int i = 0; i < g_.node_size(); ++i) {
      if (done_[std::size_t(i)]) continue;
      auto l = lowerings().find(node(i).op_type());
      if (l == lowerings().end()) continue;
      bool lowered = true;  // the images in step: each node's kernels for every image, in order
      for (image_ = 0; image_ < batch_ && lowered; ++image_) lowered = lower(i, l->second);
      image_ = 0;
      progress = lowered || progress;
    }
  }
  // What is left is not fused into a layer before it and has no lowering of its own.
  for (int i = 0; i < g_.node_size(); ++i)
    if (!done_[std::size_t(i)])
      fail(i, lowerings().count(node(i).op_type()) ? "an input is never computed on the platform"
                                                   : "op " + node(i).op_type() + " is not lowered onto the platform");
  finish_outputs();
  order_batch();
  mark_weights_once();
  sched_ = task_streams();
  if (o_.arena) plan_arena();
  plan_preloads();  // after the arena, which an automatic plan leaves room for
  plan_discards();
  fit_preloads();
  for (std::size_t j = 0; j < kernels_.size(); ++j) out_.weight_bytes += weight_bytes(j);
  out_.scenario = (fs::path(o_.dir) / "model.yaml").string();
  emit(out_.scenario);
  return out_;
}

}  // namespace

std::optional<CompileTarget> target_of(const cfg::Node& platform) {
  if (!platform.find("aicore")) return std::nullopt;
  CompileTarget t;
  t.dram_bytes_per_ps = dram::Config::from(platform.at("dram")).peak_bytes_per_ps();
  const cache::L2Config l2 = cache::L2Config::from(platform.at("l2"));
  t.l2_bytes = l2.size_bytes, t.line_bytes = l2.line_bytes;
  t.l2_keeps_prefetches = l2.persist_ways > 0;
  const cfg::Node* ts = platform.find("ts");
  t.sdma = ts && ts->find("sdma");
  t.core = aicore::AiCoreConfig::from(platform.at("aicore"));
  t.core.l2_bytes = t.l2_bytes;
  return t;
}

Compiled compile_model(const Model& m, const CompileOptions& o) {
  try {
    return Compiler(m, o).run();
  } catch (const fs::filesystem_error& e) {
    throw Error(std::string("cannot write the compiled model: ") + e.what(), kExitOutput);
  } catch (const std::bad_alloc&) {
    throw Error(m.path + ": the host's memory ran out compiling it (the host reference holds every tensor as f32)");
  }
}

}  // namespace dvp::network
