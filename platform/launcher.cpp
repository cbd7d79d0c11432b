#include "launcher.hpp"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "aicore/assembler.hpp"
#include "aicore/numeric.hpp"
#include "common/error.hpp"
#include "common/payload.hpp"
#include "kernels/library/elementwise.hpp"
#include "kernels/library/gemm.hpp"
#include "kernels/library/pool.hpp"
#include "kernels/library/softmax.hpp"
#include "reference.hpp"

extern "C" {
#include "dvp_abi.h"  // the job table (shared with the firmware)
}

namespace dvp::platform {

using cfg::Type;
namespace fs = std::filesystem;

void KernelLauncher::describe_tasks(cfg::Spec& t) {
  t.param("name", Type::String, "the task's name in reports (default: the kernel's name, or record / wait N)")
      .optional();
  t.param("stream", Type::Int, "the stream it is submitted to; tasks of one stream run in order")
      .defaults("0").range(0, DVP_MAX_STREAMS - 1);
  t.param("kernel", Type::String, "an AI Core kernel: the name of a kernels: entry (its blocks)").optional();
  t.param("record", Type::Int, "set this event").optional().range(0, DVP_MAX_EVENTS - 1);
  t.param("wait", Type::Int, "wait until this event is set, then clear it").optional().range(0, DVP_MAX_EVENTS - 1);
  t.param("barrier", Type::Bool, "wait until every other stream has nothing queued or running").optional();
}

void KernelLauncher::describe(cfg::Spec& k) {
  k.param("name", Type::String, "kernel name, for reports");
  k.param("source", Type::String, "DV assembly file, assembled at load (relative to the scenario)").optional();
  k.param("image", Type::String, "kernel image built by dvas (relative to the scenario)").optional();
  k.param("aicpu", Type::Enum,
          "an AI CPU kernel of the runtime firmware (needs firmware: and tasks:); args: x (f32), rows, cols, k, "
          "values (f32), indices (s32)")
      .choices({"topk", "argmax"}).optional();
  k.param("library", Type::Enum, "a kernel of the kernel library, built (tiled) for the configured core")
      .choices({"gemm", "elementwise", "softmax", "conv2d", "pool"}).optional();
  cfg::Spec& sh = k.section("shape", "Problem shape of a library kernel");
  sh.optional();
  sh.param("m", Type::Int, "gemm: rows of A and C (a multiple of 16)").optional().range(16, 1 << 20);
  sh.param("k", Type::Int, "gemm: columns of A, rows of B (a multiple of 16)").optional().range(16, 1 << 20);
  sh.param("n", Type::Int, "gemm: columns of B and C; elementwise: elements").optional().range(16, 1ull << 34);
  sh.param("op", Type::Enum, "elementwise: the operation")
      .choices({"add", "sub", "mul", "max", "min", "relu", "exp", "abs", "sqrt", "cast"}).optional();
  sh.param("to", Type::Enum, "elementwise cast: the output type").choices({"f16", "bf16", "f32", "s8", "s32"}).optional();
  sh.param("dtype", Type::Enum, "elementwise, softmax: element type (of the input for a cast)")
      .choices({"f16", "bf16", "f32", "s8", "s32"}).defaults("f16");
  sh.param("rows", Type::Int, "softmax: rows").optional().range(1, 1 << 24);
  for (const char* key : {"h", "w", "c", "cout"})
    sh.param(key, Type::Int, "conv2d: input height, width, channels (x16), output channels (x16)").optional().range(1, 65535);
  for (const char* key : {"kh", "kw", "stride_h", "stride_w", "dil_h", "dil_w"})
    sh.param(key, Type::Int, "conv2d: filter size, stride, dilation").defaults("1").range(1, 255);
  sh.param("pool", Type::Enum, "pool: max or avg").choices({"max", "avg"}).optional();
  for (const char* key : {"pad_t", "pad_b", "pad_l", "pad_r"})
    sh.param(key, Type::Int, "conv2d: zero padding").defaults("0").range(0, 255);
  sh.param("cols", Type::Int, "softmax: elements per row").optional().range(1, 1 << 20);
  sh.param("in", Type::Enum, "gemm: type of A and B").choices({"f16", "bf16", "s8"}).defaults("f16");
  sh.param("out", Type::Enum, "gemm: type of C (f16 / bf16 inputs: f32, f16 or bf16; s8 inputs: s32)")
      .choices({"f32", "f16", "bf16", "s32"}).defaults("f32");
  sh.param("relu", Type::Bool, "gemm: negative results become 0").defaults("false");
  sh.param("b_transposed", Type::Bool, "gemm: B is stored transposed, n x k (required for s8)").defaults("false");
  sh.param("bias", Type::Bool,
           "gemm: C = A x B + bias; a fourth argument, n values of the accumulator type (f32; s32 for s8)")
      .defaults("false");
  k.param("cores", Type::Int, "cores to run on (default: all)").optional().range(1, 256);
  k.param("blocks", Type::Int, "task blocks (block ids 0..blocks-1; default: cores); more blocks than cores run in waves")
      .optional().range(1, 65535);
  cfg::Spec& t = k.object_list("tensors", "Tensors placed in DRAM before the launch");
  t.param("name", Type::String, "tensor name, used in args and check");
  t.param("dtype", Type::Enum, "element type").choices({"f16", "bf16", "f32", "s8", "u8", "s16", "u16", "s32", "u32"});
  t.param("elements", Type::Int, "number of elements").range(1, 1ull << 34);
  t.param("init", Type::Enum, "initial contents").choices({"zeros", "random", "arange"}).defaults("zeros");
  t.param("alias", Type::String,
          "KERNEL.TENSOR: this tensor is an earlier kernel's tensor (same memory, not initialised): how one "
          "kernel's output feeds the next").optional();
  t.param("seed", Type::Int, "seed of init: random").defaults("1").range(0, 9.0e18);
  t.param("min", Type::Float, "lowest value of init: random").defaults("-1");
  t.param("max", Type::Float, "highest value of init: random").defaults("1");
  k.param("args", Type::StringList,
          "the argument table at argbase, 8 bytes each: a tensor name gives its GM address, a number its value");
  cfg::Spec& c = k.section("check", "Compare an output tensor with a C++ reference computed from the inputs");
  c.optional();
  c.param("op", Type::Enum,
          "reference: element-wise out[i] = op(in0[i], in1[i]), or gemm out = in0 x in1 (+ in2, a bias row); "
          "topk / argmax: the indices of each row's k largest (ties: lower index first)")
      .choices({"add", "sub", "mul", "max", "min", "relu", "copy", "exp", "gemm", "softmax", "conv2d", "pool", "topk",
                "argmax"});
  c.param("cols", Type::Int, "softmax, topk, argmax: elements per row").optional().range(1, 1 << 20);
  c.param("m", Type::Int, "gemm: rows of in0 and out").optional().range(1, 1 << 20);
  c.param("k", Type::Int, "gemm: columns of in0, rows of in1; topk: how many").optional().range(1, 1 << 20);
  c.param("n", Type::Int, "gemm: columns of in1 and out").optional().range(1, 1 << 20);
  c.param("b_transposed", Type::Bool, "gemm: in1 is stored n x k").defaults("false");
  c.param("relu", Type::Bool, "gemm: the reference goes through ReLU").defaults("false");
  c.param("inputs", Type::StringList, "input tensor names (one or two)");
  c.param("output", Type::String, "output tensor name");
  c.param("atol", Type::Float, "absolute tolerance").defaults("0").min(0);
  c.param("rtol", Type::Float, "relative tolerance").defaults("0").min(0);
}

struct KernelLauncher::Kernel {
  std::string name;
  std::string tiling;
  aicore::Image image;
  unsigned cores = 1, blocks = 1;
  struct TensorSpec {
    Tensor t;
    std::string init;
    std::uint64_t seed;
    double lo, hi;
    int alias_kernel = -1, alias_tensor = -1;  // another kernel's tensor (same memory)
  };
  std::vector<TensorSpec> tensors;
  std::string library;  // a library kernel: which one, and its shape (conv2d and pool: in ref)
  kernels::GemmShape gemm;
  kernels::SoftmaxShape softmax;
  kernels::ElementwiseShape elementwise;
  std::vector<std::pair<int, std::uint64_t>> args;  // (tensor index or -1, value)
  bool check = false;
  Reference ref;  // the check's reference; conv2d and pool share the kernel's shape with it
  std::vector<int> inputs;
  int output = -1;
  double atol = 0, rtol = 0;
  bool is_conv = false, is_pool = false;
  std::uint64_t image_addr = 0, code_bytes = 0, argtab = 0;  // DRAM offsets once placed
  std::uint32_t aicpu_func = 0;  // an AI CPU kernel (enum dvp_aicpu_func): no image
};

KernelLauncher::KernelLauncher(sc_core::sc_module_name n, const cfg::Node& kernels, const std::string& dir,
                               std::vector<aicore::AiCore*> cores, const aicore::AiCoreConfig& core_cfg,
                               dram::Storage& dram, std::uint64_t dram_base, bool functional, const cfg::Node* tasks)
    : sc_module(n), socket("socket"), cores_(std::move(cores)), dram_(dram), base_(dram_base),
      next_(tasks ? 2 * DVP_JOB_TABLE_OFFSET : 0),  // with firmware: its 16 MiB, then the job table's
      functional_(functional),
      firmware_mode_(tasks != nullptr),
      stats_(this->name()) {
  for (const cfg::Node& k : kernels.items()) {
    kernels_.push_back(std::make_unique<Kernel>());
    Kernel* K = kernels_.back().get();
    K->name = k.get_string("name");
    read_code(K, k, dir, tasks != nullptr);
    K->cores = k.has("cores") ? unsigned(k.get_uint("cores")) : unsigned(cores_.size());
    if (K->cores > cores_.size())
      k.at("cores").fail("asks for " + std::to_string(K->cores) + " cores; the SoC has " + std::to_string(cores_.size()));
    K->blocks = k.has("blocks") ? unsigned(k.get_uint("blocks")) : K->cores;
    read_tensors(K, k);
    for (const cfg::Node& a : k.at("args").items()) {
      const std::string& s = a.as_string();
      if (!s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-'))
        K->args.push_back({-1, std::uint64_t(a.as_int())});
      else
        K->args.push_back({tensor_index(K, s, a), 0});
    }
    if (!K->library.empty()) {
      // Sizes first: a shape its tensors cannot hold is an error before any tiling or building.
      check_library_args(K, k);
      build_library(K, k.at("shape"), core_cfg);
    }
    if (const cfg::Node* c = k.find("check")) read_check(K, *c);
    layout(K, k);
  }
  stats_.json("kernels", "per kernel: blocks, cores, start and end (ns), result of the check", [this] {
    nlohmann::json a = nlohmann::json::array();
    for (auto& r : results_)
      a.push_back({{"name", r.name}, {"blocks", r.blocks}, {"cores", r.cores}, {"start_ns", double(r.start) / 1000.0},
                   {"end_ns", double(r.end) / 1000.0}, {"checked", r.checked}, {"passed", r.passed},
                   {"detail", r.detail}, {"tiling", r.tiling}});
    return a;
  });
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
    k.fail("give exactly one of source (assembly), image (dvas output), library (a library kernel) or aicpu (an "
           "AI CPU kernel)");
  if (k.has("aicpu")) {
    if (!with_tasks) k.at("aicpu").fail("an AI CPU kernel runs on the AI CPU: the scenario needs firmware: {image: runtime} and tasks:");
    K->aicpu_func = k.get_string("aicpu") == "topk" ? DVP_AICPU_TOPK : DVP_AICPU_ARGMAX;
    K->tiling = "AI CPU";
  } else if (k.has("library")) {
    if (!k.has("shape")) k.fail("a library kernel needs its shape:");
    K->library = k.get_string("library");
    read_library_shape(K, k.at("shape"));
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

void KernelLauncher::read_library_shape(Kernel* K, const cfg::Node& sh) {
  const std::string& lib = K->library;
  const std::vector<const char*> keys = lib == "gemm"      ? std::vector<const char*>{"m", "k", "n"}
                                        : lib == "softmax" ? std::vector<const char*>{"rows", "cols"}
                                        : lib == "conv2d"  ? std::vector<const char*>{"h", "w", "c", "cout"}
                                        : lib == "pool"    ? std::vector<const char*>{"pool", "h", "w", "c"}
                                                           : std::vector<const char*>{"op", "n"};
  for (const char* key : keys)
    if (!sh.has(key)) sh.fail(lib + " needs shape." + key);
  auto u = [&](const char* key) { return std::uint32_t(sh.get_uint(key)); };
  if (lib == "gemm") {
    // shape.n admits an element-wise length; a GEMM's dimensions are 32-bit, and their
    // products are bounded by the tensors they must fit.
    for (const char* key : {"m", "k", "n"})
      if (sh.get_uint(key) > (1u << 20))
        sh.at(key).fail("gemm takes m, k and n up to 1048576, got " + std::to_string(sh.get_uint(key)));
    K->gemm = kernels::GemmShape{u("m"), u("k"), u("n"), *aicore::dtype_from(sh.get_string("out")),
                                 *aicore::dtype_from(sh.get_string("in")), sh.get_bool("b_transposed"),
                                 sh.get_bool("relu"), sh.get_bool("bias")};
  } else if (lib == "conv2d") {
    K->ref.conv = kernels::ConvShape{u("h"), u("w"), u("c"), u("cout"), u("kh"), u("kw"), u("stride_h"), u("stride_w"),
                                     u("dil_h"), u("dil_w"), u("pad_t"), u("pad_b"), u("pad_l"), u("pad_r")};
    K->is_conv = true;
    const kernels::ConvShape& c = K->ref.conv;
    if (c.h + c.pad_t + c.pad_b < c.dil_h * (c.kh - 1) + 1 || c.w + c.pad_l + c.pad_r < c.dil_w * (c.kw - 1) + 1)
      sh.fail("conv2d: the dilated filter is larger than the padded input");
  } else if (lib == "pool") {
    K->ref.pool = kernels::PoolShape{sh.get_string("pool"), u("h"), u("w"), u("c"), u("kh"), u("kw"), u("stride_h"),
                                     u("stride_w")};
    K->is_pool = true;
    if (K->ref.pool.h < K->ref.pool.kh || K->ref.pool.w < K->ref.pool.kw) sh.fail("pool: the window is larger than the input");
  } else if (lib == "softmax") {
    K->softmax = kernels::SoftmaxShape{*aicore::dtype_from(sh.get_string("dtype")), u("rows"), u("cols")};
  } else {
    K->elementwise = kernels::ElementwiseShape{sh.get_string("op"), *aicore::dtype_from(sh.get_string("dtype")),
                                               sh.get_uint("n"),
                                               sh.has("to") ? *aicore::dtype_from(sh.get_string("to")) : aicore::DType::None};
    if (K->elementwise.op == "cast" && !sh.has("to")) sh.fail("a cast needs shape.to");
  }
}

// What each argument of a library kernel must be: a tensor of at least `elems` elements of
// `dtype` (the argument tables of firmware/kernels/library/*.hpp).
struct LibraryArg {
  const char* role;
  aicore::DType dtype;
  std::uint64_t elems;
};

static std::vector<LibraryArg> library_args(const std::string& lib, const kernels::GemmShape& g,
                                            const kernels::ConvShape& c, const kernels::PoolShape& p,
                                            const kernels::SoftmaxShape& sm, const kernels::ElementwiseShape& e) {
  using aicore::DType;
  if (lib == "gemm") {
    std::vector<LibraryArg> a{{"A", g.in, std::uint64_t(g.m) * g.k}, {"B", g.in, std::uint64_t(g.k) * g.n},
                              {"C", g.out, std::uint64_t(g.m) * g.n}};
    if (g.bias) a.push_back({"bias", g.in == DType::S8 ? DType::S32 : DType::F32, g.n});
    return a;
  }
  if (lib == "conv2d")
    return {{"x", DType::F16, std::uint64_t(c.c) * c.h * c.w},
            {"weights", DType::F16, std::uint64_t(c.cout) * c.k()},
            {"y", DType::F32, std::uint64_t(c.ho()) * c.wo() * c.cout}};
  if (lib == "pool")
    return {{"x", DType::F16, std::uint64_t(p.c) * p.h * p.w}, {"y", DType::F16, std::uint64_t(p.c) * p.ho() * p.wo()}};
  if (lib == "softmax") return {{"x", sm.dtype, std::uint64_t(sm.rows) * sm.cols}, {"out", sm.dtype, std::uint64_t(sm.rows) * sm.cols}};
  std::vector<LibraryArg> a{{"x", e.dtype, e.n}};
  if (kernels::elementwise_binary(e.op)) a.push_back({"y", e.dtype, e.n});
  a.push_back({"z", e.op == "cast" ? e.to : e.dtype, e.n});
  return a;
}

// A library kernel reads and writes exactly its shape's elements: each argument must be a
// tensor of the kernel's type holding them, or the kernel would run past it in DRAM.
void KernelLauncher::check_library_args(const Kernel* K, const cfg::Node& k) {
  const cfg::Node& args = k.at("args");
  const std::vector<LibraryArg> want = library_args(K->library, K->gemm, K->ref.conv, K->ref.pool, K->softmax, K->elementwise);
  if (args.items().size() != want.size())
    args.fail("library " + K->library + (K->library == "gemm" && K->gemm.bias ? " with a bias" : "") + " takes " +
              std::to_string(want.size()) + " arguments, got " + std::to_string(args.items().size()));
  for (std::size_t i = 0; i < want.size(); ++i) {
    const LibraryArg& w = want[i];
    const cfg::Node& a = args.items()[i];
    const std::string role = K->library + "'s " + w.role + " (argument " + std::to_string(i + 1) + ")";
    if (K->args[i].first < 0) a.fail(role + " is a tensor; got the number " + a.as_string());
    const Tensor& t = K->tensors[std::size_t(K->args[i].first)].t;
    if (t.dtype != w.dtype)
      a.fail(role + ": tensor '" + t.name + "' is " + aicore::dtype_name(t.dtype) + ", the kernel takes " +
             aicore::dtype_name(w.dtype));
    if (t.elems < w.elems)
      a.fail(role + ": tensor '" + t.name + "' has " + std::to_string(t.elems) + " elements, the shape needs " +
             std::to_string(w.elems));
  }
}

void KernelLauncher::build_library(Kernel* K, const cfg::Node& sh, const aicore::AiCoreConfig& core_cfg) {
  try {
    if (K->library == "gemm") {
      K->tiling = kernels::gemm_tiling(core_cfg, K->gemm).str();
      K->image = kernels::gemm_kernel(core_cfg, K->gemm);
    } else if (K->library == "conv2d") {
      K->tiling = kernels::gemm_tiling(core_cfg, kernels::conv2d_gemm_shape(K->ref.conv)).str() + " (img2col)";
      K->image = kernels::conv2d_kernel(core_cfg, K->ref.conv);
    } else if (K->library == "pool") {
      K->tiling = "one channel group (16) per turn";
      K->image = kernels::pool_kernel(core_cfg, K->ref.pool);
    } else if (K->library == "softmax") {
      K->tiling = "one row at a time";
      K->image = kernels::softmax_kernel(core_cfg, K->softmax);
    } else {
      K->tiling = std::to_string(kernels::elementwise_tile_bytes(core_cfg, K->elementwise)) + " B tiles";
      K->image = kernels::elementwise_kernel(core_cfg, K->elementwise);
    }
  } catch (const Error& e) {
    sh.fail(e.what());
  }
}

void KernelLauncher::read_tensors(Kernel* K, const cfg::Node& k) {
  const cfg::Node* ts = k.find("tensors");
  if (!ts) return;
  for (const cfg::Node& t : ts->items()) {
    Kernel::TensorSpec s;
    s.t.name = t.get_string("name");
    s.t.dtype = *aicore::dtype_from(t.get_string("dtype"));
    s.t.elems = t.get_uint("elements");
    s.init = t.get_string("init");
    s.seed = t.get_uint("seed");
    s.lo = t.get_double("min");
    s.hi = t.get_double("max");
    if (t.has("alias")) {
      // An earlier kernel's tensor: found now, addressed when the kernels are placed.
      const std::string a = t.get_string("alias");
      const auto dot = a.find('.');
      for (std::size_t ki = 0; dot != std::string::npos && ki + 1 < kernels_.size(); ++ki)
        if (kernels_[ki]->name == a.substr(0, dot))
          for (std::size_t ti = 0; ti < kernels_[ki]->tensors.size(); ++ti)
            if (kernels_[ki]->tensors[ti].t.name == a.substr(dot + 1)) {
              s.alias_kernel = int(ki);
              s.alias_tensor = int(ti);
            }
      if (s.alias_kernel < 0) t.at("alias").fail("no tensor '" + a + "' in an earlier kernel (write KERNEL.TENSOR)");
      const Tensor& o = kernels_[std::size_t(s.alias_kernel)]->tensors[std::size_t(s.alias_tensor)].t;
      if (o.elems * aicore::dtype_bytes(o.dtype) < s.t.elems * aicore::dtype_bytes(s.t.dtype))
        t.at("alias").fail("'" + a + "' is smaller than this tensor");
    }
    K->tensors.push_back(s);
  }
}

void KernelLauncher::read_check(Kernel* K, const cfg::Node& c) {
  K->check = true;
  Reference& R = K->ref;
  R.op = c.get_string("op");
  for (const cfg::Node& i : c.at("inputs").items()) K->inputs.push_back(tensor_index(K, i.as_string(), i));
  const bool with_bias = R.op == "gemm" && K->inputs.size() == 3;
  if (K->inputs.size() != (R.unary() ? 1u : 2u) && !with_bias)
    c.at("inputs").fail(R.op + " takes " + (R.unary() ? "one input" : R.op == "gemm" ? "two inputs (three with a bias)" : "two inputs"));
  K->output = tensor_index(K, c.get_string("output"), c.at("output"));
  K->atol = c.get_double("atol");
  K->rtol = c.get_double("rtol");
  if (R.op == "conv2d" && !K->is_conv) c.fail("check op conv2d needs a library: conv2d kernel (it uses its shape)");
  if (R.op == "pool" && !K->is_pool) c.fail("check op pool needs a library: pool kernel (it uses its shape)");
  if (R.op == "softmax" || R.op == "topk" || R.op == "argmax") {
    if (!c.has("cols")) c.fail(R.op + " needs cols");
    R.cols = c.get_uint("cols");
  }
  if (R.op == "topk") {
    if (!c.has("k")) c.fail("topk needs k");
    R.k = c.get_uint("k");
  }
  if (R.op == "gemm") {
    for (const char* key : {"m", "k", "n"})
      if (!c.has(key)) c.fail(std::string("gemm needs ") + key);
    R.m = c.get_uint("m"), R.k = c.get_uint("k"), R.n = c.get_uint("n");
    R.b_transposed = c.get_bool("b_transposed");
    R.relu = c.get_bool("relu");
    R.bias = with_bias;
  }
  check_reference_sizes(K, c);
}

// Every tensor the reference reads or compares must be large enough for its shape.
void KernelLauncher::check_reference_sizes(const Kernel* K, const cfg::Node& c) {
  const Reference& R = K->ref;
  auto need = [&](int t, std::uint64_t elems, const char* what) {
    if (K->tensors[t].t.elems < elems)
      c.fail(std::string(what) + " '" + K->tensors[t].t.name + "' has " + std::to_string(K->tensors[t].t.elems) +
             " elements, " + R.op + " needs " + std::to_string(elems));
  };
  const std::uint64_t out_elems = K->tensors[K->output].t.elems;
  if (R.op == "gemm") {
    need(K->inputs[0], R.m * R.k, "input");
    need(K->inputs[1], R.k * R.n, "input");
    if (R.bias) need(K->inputs[2], R.n, "bias");
  } else if (R.op == "conv2d") {
    need(K->inputs[0], std::uint64_t(R.conv.c) * R.conv.h * R.conv.w, "input");
    need(K->inputs[1], std::uint64_t(R.conv.cout) * R.conv.k(), "weights");
  } else if (R.op == "pool") {
    need(K->inputs[0], std::uint64_t(R.pool.c) * R.pool.h * R.pool.w, "input");
  } else {
    if (R.op == "softmax" && (R.cols == 0 || out_elems % R.cols))
      c.at("cols").fail("the output's " + std::to_string(out_elems) + " elements are not whole rows");
    for (int i : K->inputs) need(i, out_elems, "input");
  }
  need(K->output, R.count(out_elems), "output");
}

// Where the image, the tensors and the argument table go in DRAM, decided at load in launch
// order: what does not fit is an error naming it, before anything runs or is filled.
void KernelLauncher::layout(Kernel* K, const cfg::Node& k) {
  auto take = [&](std::uint64_t bytes, const cfg::Node& at, const std::string& what) {
    const std::uint64_t end = next_ + ((bytes + 4095) & ~std::uint64_t(4095));
    if (end > dram_.size())
      at.fail(what + " (" + std::to_string(bytes) + " B) does not fit in DRAM: " + std::to_string(dram_.size()) +
              " B, of which " + std::to_string(next_) + " B are taken by what comes before it");
    const std::uint64_t at_offset = next_;
    next_ = end;
    return at_offset;
  };
  if (!K->aicpu_func) {
    K->code_bytes = K->image.bytes().size() - 32;  // the image less its header
    K->image_addr = take(K->code_bytes + 32, k, "the kernel image");
  }
  for (std::size_t i = 0; i < K->tensors.size(); ++i) {
    Kernel::TensorSpec& s = K->tensors[i];
    if (s.alias_kernel >= 0) {  // an earlier kernel's memory
      s.t.addr = kernels_[std::size_t(s.alias_kernel)]->tensors[std::size_t(s.alias_tensor)].t.addr;
      continue;
    }
    s.t.addr = take(s.t.elems * aicore::dtype_bytes(s.t.dtype), k.at("tensors").items()[i], "tensor '" + s.t.name + "'");
  }
  K->argtab = take(8 * K->args.size() + 8, k.at("args"), "the argument table");
}

std::vector<std::uint8_t> KernelLauncher::read_back(std::uint64_t addr, std::uint64_t len) {
  std::vector<std::uint8_t> out(len);
  tlm::tlm_generic_payload p;
  for (std::uint64_t off = 0; off < len;) {
    // Debug reads through the ring reach the L2 slice that may hold the line dirty.
    const std::uint64_t chunk = std::min<std::uint64_t>(len - off, 128 - (addr + off) % 128);
    prepare(p, false, addr + off, out.data() + off, unsigned(chunk));
    if (socket->transport_dbg(p) != chunk) throw Error(std::string(name()) + ": cannot read back " + hex(addr + off));
    off += chunk;
  }
  return out;
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
    const int kinds = int(t.has("kernel")) + int(t.has("record")) + int(t.has("wait")) + int(t.has("barrier"));
    if (kinds != 1) t.fail("a task is exactly one of kernel: NAME, record: EVENT, wait: EVENT or barrier: true");
    std::string name;
    if (t.has("kernel")) {
      const std::string k = t.get_string("kernel");
      Kernel* K = nullptr;
      for (auto& x : kernels_)
        if (x->name == k) K = x.get();
      if (!K) t.at("kernel").fail("no kernel named '" + k + "' in kernels:");
      d.type = K->aicpu_func ? DVP_TASK_AICPU : DVP_TASK_KERNEL;
      aicpu_tasks_ |= K->aicpu_func != 0;
      if (K->aicpu_func) d.entry = K->aicpu_func;
      d.image = base_ + K->image_addr;
      d.code_bytes = K->code_bytes;
      if (!K->aicpu_func) d.entry = K->image.entry;
      d.blocks = K->aicpu_func ? 1 : K->blocks;
      d.args = base_ + K->argtab;
      name = k;
    } else if (t.has("barrier")) {
      d.type = DVP_TASK_BARRIER;
      name = "barrier";
    } else {
      const bool rec = t.has("record");
      d.type = rec ? DVP_TASK_RECORD : DVP_TASK_WAIT;
      d.event = std::uint32_t(t.get_uint(rec ? "record" : "wait"));
      name = std::string(rec ? "record " : "wait ") + std::to_string(d.event);
    }
    if (t.has("name")) name = t.get_string("name");
    std::strncpy(d.name, name.c_str(), sizeof d.name - 1);
    d.id = std::uint32_t(table.size());
    table.push_back(d);
  }
  dvp_job_table head{DVP_JOB_MAGIC, table.size(), streams, 0};
  const std::uint64_t bytes = sizeof head + table.size() * sizeof(dvp_task);
  if (DVP_JOB_TABLE_OFFSET + bytes > 2 * DVP_JOB_TABLE_OFFSET) tasks.fail("too many tasks for the job table's 16 MiB");
  std::memcpy(dram_.data() + DVP_JOB_TABLE_OFFSET, &head, sizeof head);
  std::memcpy(dram_.data() + DVP_JOB_TABLE_OFFSET + sizeof head, table.data(), table.size() * sizeof(dvp_task));
}

void KernelLauncher::set_control_cores(unsigned n) {
  const std::uint64_t v = n;
  std::memcpy(dram_.data() + DVP_JOB_TABLE_OFFSET + offsetof(dvp_job_table, control_cores), &v, 8);
}

void KernelLauncher::place(Kernel* K) {
  // Image, tensors and argument table, written straight into DRAM (at the offsets layout()
  // chose) before the launch.
  if (!K->aicpu_func) {
    const auto code = K->image.bytes();
    std::memcpy(dram_.data() + K->image_addr, code.data() + 32, code.size() - 32);
  }
  for (auto& s : K->tensors) {
    const unsigned eb = aicore::dtype_bytes(s.t.dtype);
    if (s.alias_kernel >= 0) continue;  // an earlier kernel's memory, filled there
    std::uint8_t* p = dram_.data() + s.t.addr;
    std::uint64_t z = s.seed * 0x9E3779B97F4A7C15ull + 1;
    const bool arange = s.init == "arange", random = s.init == "random";
    for (std::uint64_t i = 0; i < s.t.elems; ++i) {
      double v = 0;
      if (arange) v = double(i % 2048);
      if (random) {
        z ^= z << 13, z ^= z >> 7, z ^= z << 17;
        v = s.lo + (s.hi - s.lo) * double(z >> 11) * 0x1.0p-53;
      }
      aicore::num::store(p + i * eb, s.t.dtype, v);
    }
  }
  for (std::size_t i = 0; i < K->args.size(); ++i) {
    std::uint64_t v = K->args[i].first >= 0 ? base_ + K->tensors[K->args[i].first].t.addr : K->args[i].second;
    std::memcpy(dram_.data() + K->argtab + 8 * i, &v, 8);
  }
}

void KernelLauncher::check(Kernel* K, Result& r) {
  if (K->check && !functional_) {
    r.detail = "not checked: a timing-only run moves no data";
  } else if (K->check) {
    r.checked = true;
    const Tensor& out = K->tensors[K->output].t;
    const unsigned ob = aicore::dtype_bytes(out.dtype);
    auto got = read_back(base_ + out.addr, out.elems * ob);
    std::vector<std::vector<std::uint8_t>> in;
    for (int i : K->inputs) {
      const Tensor& t = K->tensors[i].t;
      in.push_back(read_back(base_ + t.addr, t.elems * aicore::dtype_bytes(t.dtype)));
    }
    std::vector<TensorView> views;
    for (std::size_t j = 0; j < in.size(); ++j) views.push_back(TensorView{in[j].data(), K->tensors[K->inputs[j]].t.dtype});
    const std::uint64_t count = K->ref.count(out.elems);
    const std::vector<double> ref = K->ref.compute(views, count);
    std::uint64_t bad = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
      std::uint8_t rounded[8];
      aicore::num::store(rounded, out.dtype, ref[i]);  // the reference, rounded once to the output type
      const double want = aicore::num::load(rounded, out.dtype);
      const double have = aicore::num::load(got.data() + i * ob, out.dtype);
      // Equal values pass first: infinities (an fp16 overflow) have no finite difference.
      const bool ok = have == want || (std::isnan(want) && std::isnan(have)) ||
                      std::fabs(have - want) <= K->atol + K->rtol * std::fabs(want);
      if (!ok) {
        if (!bad) {
          std::ostringstream os;
          os << out.name << "[" << i << "] = " << have << ", reference " << want;
          r.detail = os.str();
        }
        ++bad;
      }
    }
    r.passed = bad == 0;
    if (bad) {
      r.detail = std::to_string(bad) + " of " + std::to_string(count) + " elements differ; first: " + r.detail;
      ++failed_;
    } else {
      r.detail = std::to_string(count) + " elements match the reference";
    }
  }
}

void KernelLauncher::run() {
  if (firmware_mode_) return;  // the firmware runs the kernels through the task scheduler
  for (auto& K : kernels_) {
    current_ = K->name;
    place(K.get());
    Result r;
    r.name = K->name;
    r.blocks = K->blocks;
    r.cores = K->cores;
    r.tiling = K->tiling;
    r.start = now_tick();
    // Blocks go onto free cores in order of block id: the first `cores` at once, then each
    // next block onto the first core to finish.
    unsigned next_block = 0;
    while (next_block < K->blocks || std::any_of(cores_.begin(), cores_.begin() + K->cores,
                                                 [](aicore::AiCore* c) { return c->busy(); })) {
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
    check(K.get(), r);
    results_.push_back(r);
  }
  done_ = true;
}

void KernelLauncher::check_after_firmware(const std::vector<std::pair<std::string, std::pair<Tick, Tick>>>& times) {
  for (auto& K : kernels_) {
    Result r;
    r.name = K->name;
    r.blocks = K->blocks;
    r.cores = K->cores;
    r.tiling = K->tiling;
    for (auto& [name, t] : times)
      if (name == K->name) r.start = t.first, r.end = t.second;
    check(K.get(), r);
    results_.push_back(r);
  }
  done_ = true;
}

KernelLauncher::~KernelLauncher() = default;  // here, where Kernel is complete

}  // namespace dvp::platform
