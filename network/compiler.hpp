// SPDX-License-Identifier: MIT
// The network compiler: an ONNX graph lowered onto the platform's kernel library, as Ascend's
// offline model compiler (ATC) lowers one onto CANN's. Its output is a compiled model: a folder
// holding a scenario (model.yaml: one library kernel per fused layer, the task list the runtime
// firmware submits through the task scheduler) and the tensors it reads (weights with the batch
// norm folded in, the inputs, and the host reference's outputs the run is checked against).
// `dvp run model.onnx` compiles into OUT/compiled and runs that scenario; `dvp run
// OUT/compiled/model.yaml` runs it again, and it can be read and edited like any scenario.
//
// Lowering (docs/networks.md has the table):
//   Conv (+ BatchNormalization folded into a scale and a bias per channel, + an Add of the
//     block's shortcut, + Relu) -> conv2d, y stored NC1HWC0 for the next layer;
//   a BatchNormalization no conv folds -> a depthwise 1 x 1 conv2d, or elementwise mul and add;
//   MaxPool, AveragePool, GlobalAveragePool -> pool (a 1-D window, as a 1-D Conv, as its 2-D form
//   over N x C x 1 x L: NodeAttrs::one_d); Gemm, MatMul -> gemm (+ elementwise add of
//   a matrix C); Relu, Add, Sub, Mul, Div (activations of one shape, or a constant broadcast to
//   the activation's) -> elementwise; Softmax (last axis) -> softmax; LayerNormalization ->
//   layernorm; Transpose -> transpose or a view; Concat -> a copy per input (transpose kernels of
//   one column) into its slice of the output; ArgMax, TopK -> the AI CPU; Flatten, Reshape,
//   Identity -> a view of the same memory where the layout allows it (a feature map flattened into a
//   Gemm or MatMul: the gemm reads the map as stored, B's rows put in its order).
// Feature maps stay NC1HWC0 f16 between layers; the graph's inputs are converted once, at load
// (an image of 4 channels or fewer to NC1HWC0_C04 for the first conv's small-channel mode). An
// operator, attribute or layout it cannot map is an Error naming the node, its op type and why.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "aicore/aicore_config.hpp"
#include "common/config.hpp"

#include "onnx_model.hpp"

namespace dvp::network {

// Weight preloads and discards (CompileOptions::preload, ::discard): planned where the compiler's
// cost model says they pay (Auto), wherever they can be (On: --preload, --discard), or not at all
// (Off: --no-preload, --no-discard).
enum class Plan { Auto, On, Off };

// The platform a model is compiled for, from its resolved configuration: what the automatic
// preload plan weighs (target_of).
struct CompileTarget {
  double dram_bytes_per_ps = 0;  // the DRAM's peak
  std::uint64_t l2_bytes = 0;
  bool l2_keeps_prefetches = false;  // it keeps a prefetch's lines until read (persist_fraction > 0)
  std::uint32_t line_bytes = 128;    // the L2's line: a discard drops whole lines only
  bool sdma = false;                 // the task scheduler has the SDMA engine preloads need
  aicore::AiCoreConfig core;         // the AI Cores the kernels are built for (their work units: streams)
};
// A resolved platform: section's target; none without AI Cores (no kernel to compile for).
std::optional<CompileTarget> target_of(const cfg::Node& platform);

struct CompileOptions {
  std::string dir;                            // the compiled model's folder (created)
  std::map<std::string, std::string> inputs;  // a graph input -> its .npy or .pb file
  // The values saved after the run and checked against the host reference: graph outputs or any
  // node's output (a layer's, not fused into the next); empty: the graph outputs.
  std::vector<std::string> outputs;
  std::uint64_t seed = 1;  // inputs not given: uniform in [-1, 1) from this seed
  // Images per inference: the graph inputs' first dimension (the model's 1 or symbolic), each
  // layer a kernel per image.
  std::uint64_t batch = 1;
  // Streams the task list may use (1..8): independent branches run side by side (schedule.hpp).
  std::uint64_t streams = 8;
  bool check_layers = false;  // every layer checked against the platform's reference loop
  // The host reference's values, written to reference/ and checked against after the run. Off
  // (a timing-only run, which moves and checks no data): the compiled model has no checks, and
  // the reference runs for its shapes and constants only, without the network's arithmetic (the
  // most of a compile's host time: ResNet-50's 4 GMAC in double).
  bool reference = true;
  // Layer outputs share an activation arena by liveness; off: each its own memory, so every
  // layer's tensors can be read after the run (--check-layers, --save-tensors).
  bool arena = true;
  // The weights of the kernels ahead are preloaded into the L2 while a kernel runs (preload tasks
  // for the task scheduler's SDMA engine, platform.ts.sdma), at most preload_window bytes ahead
  // (a kernel whose weights are larger streams its own). Auto (the default) preloads where the
  // target says they pay: a platform with the SDMA engine, room in its L2 for the window beside
  // the activation arena, and a DRAM that takes at least preload_min_ps to stream the window at
  // its peak. ResNet-50 on ascend310 at batch 1 is 9% faster with preloads, but 0.3-2.7% slower
  // at batch 8 (its arena fills the L2) and on ascend910 (its HBM streams the window in 1.7 us:
  // docs/networks.md). Without a target, Auto preloads nothing.
  Plan preload = Plan::Auto;
  std::uint64_t preload_window = 2ull << 20;
  std::uint64_t preload_head = 128ull << 10;  // of a kernel's weights over the window (plan_preloads)
  // In an L2 that keeps a prefetch's lines (platform.l2.persist_fraction), the prefetch of such a
  // kernel's weights goes at most this many kernels before the window reaches it (prefetch_start).
  std::size_t prefetch_lead = 18;
  double preload_min_ps = 2e6;
  // In the arena, activations no later layer reads are dropped from the L2 after their last
  // reader (discard tasks for the same engine), so the weights streaming through do not write
  // them back to DRAM. Each task costs its stream a dispatch and a completion. Auto: where the L2
  // cannot hold the arena and all the weights (else nothing is evicted), the ranges the DRAM
  // would take at least discard_min_ps to write back at its peak (on ascend910's HBM, 2.4 MB).
  // On: every range. Both need the arena and a target with the engine.
  Plan discard = Plan::Auto;
  double discard_min_ps = 2e6;
  // A kernel whose blocks take every AI Core and whose roofline bound is at least this long runs
  // after the branch beside it, not on a stream of its own (TaskNode::fills_cores): two of them
  // side by side share the cores and break each other's DRAM and L2 streams.
  double serial_min_ps = 10e6;
  std::optional<CompileTarget> target;
  // As ATC's --precision_mode: force_fp16 (its default for inference) runs a conv's or Gemm's
  // vector epilogue (bias, scale, shortcut, activation) in f16 where its output is f16 (the
  // kernels' epilogue: f16); allow_fp32_to_fp16 runs it in f32 and rounds once.
  std::string precision_mode = "force_fp16";
  std::string preset = "ascend310";  // the scenario's preset (--preset overrides it)
  bool absolute_paths = false;       // the scenario names its files by absolute paths
};

// One kernel of the compiled model: the ONNX nodes it runs.
struct CompiledLayer {
  std::string kernel, library;
  std::vector<std::string> nodes, ops;  // the ONNX nodes it runs and their op types
  std::string output;                   // its output's logical shape: 1x64x56x56
};

struct Compiled {
  std::string scenario;  // DIR/model.yaml
  std::vector<CompiledLayer> layers;
  std::uint64_t weight_bytes = 0;      // as stored (f16 weights, f32 scales and biases)
  std::uint64_t activation_bytes = 0;  // every layer output, as stored
  std::uint64_t arena_bytes = 0;       // the activation arena (peak activation memory; 0: no arena)
  // What the user should know and need not fix: a graph output whose shape, as its nodes define
  // it, is not the one the model declares (check_output_shapes).
  std::vector<std::string> notes;
};

// Lowers `m` (loaded by load_model) and writes the compiled model. Throws dvp::Error naming
// the model file and node at fault.
Compiled compile_model(const Model& m, const CompileOptions& o);

}  // namespace dvp::network
