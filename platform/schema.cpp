// SPDX-License-Identifier: MIT
#include "schema.hpp"

#include "watchdog.hpp"

#include "aicore/aicore_config.hpp"
#include "cache/l2_config.hpp"
#include "common/fidelity.hpp"
#include "cpu/cpu_config.hpp"
#include "dram/dram_config.hpp"
#include "dvpp/dvpp_config.hpp"
#include "launcher.hpp"
#include "media_launcher.hpp"
#include "ring/ring_timing.hpp"
#include "rtl/rtl_config.hpp"
#include "tgen/tgen.hpp"
#include "ts/ts.hpp"
#include "vecacc/vecacc.hpp"

namespace dvp::platform {

using cfg::Type;

// The SoC: platform:, every model's keys.
static void describe_platform(cfg::Spec& p) {
  p.param("preset", Type::String, "preset to start from (scenarios/presets/<preset>.yaml)").optional();
  p.param("name", Type::String, "name of the SoC this configuration describes");
  cfg::Spec& sim = p.section("sim", "Simulation kernel settings");
  sim.param("quantum_ns", Type::Float, "temporal-decoupling quantum: how far an initiator may run ahead")
      .unit("ns")
      .range(0.001, 1e9);
  cfg::Spec& mem = p.section("memory", "Address map, and how the memory path is timed");
  mem.param("dram_base", Type::Int, "address of the first DRAM byte").unit("B").min(0);
  mem.param("fidelity", Type::Enum, "timing of the memory path (ring, DRAM): " + memory_fidelities().doc())
      .choices(memory_fidelities().names())
      .defaults("detailed");
  ring::RingConfig::describe(p.section("ring", "Ring interconnect (CHI-like: requesters, home nodes, memory nodes)"));
  cache::L2Config::describe(p.section("l2", "L2 / last-level cache; its slices are the ring's home nodes"));
  dram::Config::describe(p.section("dram", "DRAM controllers, channels and devices (LPDDR4 / HBM2)"));
  aicore::AiCoreConfig::describe(
      p.section("aicore", "AI Cores (Da Vinci): pipes, buffers, caches and rates; requesters on the ring").optional());

  cpu::CpuConfig::describe(
      p.section("cpu", "Arm CPU clusters (control CPU and AI CPU, AArch64 on Unicorn) and their peripherals")
          .optional());
  ts::TsConfig::describe(
      p.section("ts", "Task scheduler: streams, dispatch onto the AI Cores, completions").optional());
  dvpp::DvppConfig::describe(
      p.section("dvpp", "DVPP media engines: channels, rates and limits per engine; a requester on the ring")
          .optional());
  rtl::RtlConfig::describe(p.object_list(
      "rtl",
      "RTL blocks: Verilog built by dvp-verilate into a plug-in, behind AXI4 / AXI4-Lite bridges (docs/rtl-cosim.md)"));
  vecacc::VecaccConfig::describe(
      p.section("vecacc",
                "vecacc, the worked example of RTL co-simulation: a vector engine as a TLM model or as its Verilog")
          .optional());
}

// model: (an ONNX network the scenario runs) and network: (what a compiled one's kernels are).
static void describe_network(cfg::Spec& root) {
  cfg::Spec& model =
      root.section("model",
                   "An ONNX network the scenario runs: compiled (as by dvp compile) into OUT/compiled, its kernels and "
                   "tasks under the scenario's own keys (docs/networks.md)");
  model.optional();
  model.param("onnx", Type::String, "the ONNX model file (relative to the scenario)");
  model
      .param("inputs", Type::StringList,
             "graph inputs from files: NAME=FILE (.npy or .pb, relative to the scenario); "
             "the others seeded uniform in [-1, 1)")
      .optional();
  model
      .param("outputs", Type::StringList,
             "the values saved (OUT/outputs/NAME.npy) and checked against the host reference: graph outputs or any "
             "node's output (that layer is then not fused into the next); default: the graph outputs")
      .optional();
  model.param("batch", Type::Int, "images per inference (the inputs' first dimension)").defaults("1").min(1);
  model.param("seed", Type::Int, "the seed of inputs not given").defaults("1").min(0);
  model.param("streams", Type::Int, "task scheduler streams independent branches may run on").defaults("8").range(1, 8);
  model.param("check_layers", Type::Bool, "check every layer against the platform's reference loop").defaults("false");
  model
      .param("preload", Type::Enum,
             "weight preloads into the L2 while a layer runs (the task scheduler's SDMA): auto, where the compiler "
             "expects them to pay on the platform (an SDMA engine, L2 room beside the activation arena, a DRAM that "
             "takes 2 us or more to stream the 2 MiB window at its peak); true, every layer's that fits the window; "
             "false, none (docs/networks.md)")
      .defaults("auto")
      .choices({"auto", "true", "false"});
  model
      .param("discard", Type::Enum,
             "activations no later layer uses dropped from the L2 after the last one that does, unwritten (the task "
             "scheduler's SDMA, discard tasks), with the activation arena: auto, where the compiler expects them to "
             "pay (an L2 too small for the arena and the weights; ranges the DRAM takes 2 us or more to write back at "
             "its peak); true, every such range; false, none (docs/networks.md)")
      .defaults("auto")
      .choices({"auto", "true", "false"});
  model
      .param("precision_mode", Type::Enum,
             "as ATC's --precision_mode: force_fp16 (its default for inference) runs the layers' vector epilogues "
             "(bias, scale, shortcut, activation after a conv or Gemm of f16 output) in f16; allow_fp32_to_fp16 runs "
             "them in f32 and rounds once (slower, closer to an f32 reference)")
      .defaults("force_fp16")
      .choices({"force_fp16", "allow_fp32_to_fp16"});

  cfg::Spec& net = root.section(
      "network", "What a compiled network's kernels are (written by dvp compile): the summary's per-layer table");
  net.optional();
  net.param("model", Type::String, "the ONNX model it was compiled from");
  net.param("batch", Type::Int, "images per inference").defaults("1").min(1);
  net.param("arena_bytes", Type::Int, "the activation arena: peak activation memory").unit("B").defaults("0").min(0);
  cfg::Spec& layer = net.object_list("layers", "one per kernel, in task order");
  layer.param("kernel", Type::String, "the kernel (kernels: name) that runs the layer");
  layer.param("ops", Type::String, "the ONNX op types it runs, fused (Conv+BatchNormalization+Relu)");
  layer.param("output", Type::String, "its output's logical shape (1x64x56x56)");
}

static cfg::Spec build() {
  cfg::Spec root("", Type::Section, "A scenario file.");
  root.param("name", Type::String, "scenario name; outputs go to out/<name> by default");
  root.param("description", Type::String, "one paragraph on what the scenario shows").optional();

  describe_platform(root.section("platform", "The SoC: a preset, then any key below overridden."));
  cfg::Spec& fw = root.section("firmware", "A firmware image for the Arm CPUs, loaded into DRAM before the run");
  fw.optional();
  fw.param("image", Type::String,
           "a name (a firmware the project builds: build/firmware/<name>.bin, or $DVP_FIRMWARE/<name>.bin) or a "
           "path (one with a '/'), absolute or relative to the scenario file, to a raw image or to an AArch64 ELF "
           "executable (placed by its program headers, started at its entry point)");
  fw.param("load", Type::Int,
           "a raw image: address it is loaded at and the cores start at, 4-byte aligned (default: dram_base)")
      .unit("B")
      .optional()
      .min(0);
  fw.param("cores", Type::IntList, "the cores that start there, each once (default: [0], the first control core)")
      .optional();

  tgen::TgenConfig::describe(root.object_list("traffic", "Traffic generators (requesters on the ring)"));

  KernelLauncher::describe(root.object_list(
      "kernels", "AI Core kernels run in bare mode (no CPUs): image, tensors, arguments, reference check"));

  MediaLauncher::describe(root.object_list(
      "dvpp", "Media jobs run on DVPP in bare mode (no firmware): input file, engine, output format, check"));

  KernelLauncher::describe_tasks(root.object_list(
      "tasks", "Tasks the runtime firmware submits to the task scheduler (needs firmware: and kernels:)"));

  describe_network(root);

  cfg::Spec& chk = root.object_list("checks", "Pass/fail conditions on results; dvp run exits 1 if one fails");
  chk.param("metric", Type::String, "summary.<key>, or <module>.<counter> as in stats.json (e.g. soc.l2.hn0.hit_rate)");
  chk.param("min", Type::Float, "lowest passing value (a check has min, max or both)").optional();
  chk.param("max", Type::Float, "highest passing value, at least min").optional();

  cfg::Spec& dbg = root.section("debug", "Checks for model developers");
  dbg.param("tlm_checks", Type::Bool,
            "put a TLM-2.0 base-protocol checker on every binding of the netlist; a violation stops the run "
            "naming binding, rule and address")
      .defaults("false");

  cfg::Spec& run = root.section("run", "How to run");
  run.param("timing_only", Type::Bool, "move no data: timing and traffic only").defaults("false");
  run.param("max_sim_ns", Type::Float,
            "stop with an error when simulated time passes this (unset: no limit, but a compiled network gets 10x the "
            "sum of its kernels' roofline bounds + 200 us per kernel + 1 ms)")
      .unit("ns")
      .optional()
      .range(1, 1e15);
  run.param("max_wall_seconds", Type::Float,
            "stop with an error when host time since dvp started passes this, in any phase (0: no limit)")
      .unit("s")
      .defaults(std::to_string(int(kDefaultMaxWallSeconds)))
      .range(0, 1e7);
  run.param("save_tensors", Type::String,
            "after the run, write every kernel's tensors into this directory as KERNEL.TENSOR.npy (dvp run "
            "--save-tensors DIR)")
      .optional();
  run.param("trace", Type::Bool, "write trace.json").defaults("true");
  run.param("trace_max_slices_per_lane", Type::Int, "cap on slices per trace lane").defaults("20000").min(1);
  return root;
}

const cfg::Spec& scenario_schema() {
  static const cfg::Spec s = build();
  return s;
}

const std::vector<NotBuilt>& not_built_parts() {
  static const std::vector<NotBuilt> v = {};
  return v;
}

}  // namespace dvp::platform
