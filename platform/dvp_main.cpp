// SPDX-License-Identifier: MIT
// dvp: the davinci-vp command line.
//   dvp run SCENARIO [--preset NAME] [--set k=v]... [--out DIR] [--save-tensors DIR] [--timing-only] [--no-trace]
//           [--quiet]
//   dvp run MODEL.onnx [--input NAME=FILE]... [--output NAME]... [--batch N] [--check-layers] [run's options]
//   dvp compile MODEL.onnx [--out DIR] [--input NAME=FILE]... [--output NAME]... [--batch N] [--check-layers]
//               [--preset NAME]
//   dvp config SCENARIO [--preset NAME] [--set k=v]... [--origins]
//   dvp map SCENARIO [--preset NAME] [--set k=v]...
//   dvp sweep STUDY.yaml [--jobs N] [--out DIR] [--resume] [--emit parallel|slurm] [--point N] [--sensitivity]
//   dvp collect DIR       (a study's results.csv from its point folders)
//   dvp diff RUN_A RUN_B [--threshold PCT] [--max-increase KEY=PCT]... [--max-decrease KEY=PCT]...
//   dvp plot DIR [--y METRIC --x KEY --hue KEY --kind line|bar|heatmap] [--roofline] [--pipes]
//   dvp schema            (the config reference, markdown)
//   dvp regs header|markdown  (the peripherals' register maps)
//   dvp help | --help | --version
#include <systemc>

#include <boost/program_options.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>

#include <malloc.h>
#include <unistd.h>

#include "common/config.hpp"
#include "common/error.hpp"
#include "common/version.hpp"
#include "compiler.hpp"
#include "peripherals.hpp"
#include "results.hpp"
#include "run.hpp"
#include "scenario.hpp"
#include "schema.hpp"
#include "soc.hpp"
#include "study.hpp"
#include "sweep.hpp"
#include "watchdog.hpp"

namespace po = boost::program_options;
using namespace dvp;

namespace {
// A count on the command line (--batch, --streams, --jobs, --point): digits only. Boost reads an
// unsigned "-1" as 4294967295.
struct Count {
  unsigned value = 0;
};
// Found by argument-dependent lookup: how program_options reads a Count.
void validate(boost::any& v, const std::vector<std::string>& values, Count*, int) {
  po::validators::check_first_occurrence(v);
  const std::string& s = po::validators::get_single_string(values);
  unsigned long long n = 0;
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, n);
  if (s.empty() || ec != std::errc() || p != end || n > std::numeric_limits<unsigned>::max())
    throw po::invalid_option_value(s);
  v = Count{unsigned(n)};
}
}  // namespace

static const char* kUsage =
    "usage: dvp <command> [options]\n"
    "commands:\n"
    "  run SCENARIO      run a scenario; writes stats.json, summary.txt, trace.json\n"
    "  run MODEL.onnx    compile an ONNX model (into OUT/compiled) and run it through the firmware\n"
    "  compile MODEL.onnx  lower an ONNX model onto the kernel library: a scenario and its tensors (--out DIR)\n"
    "  config SCENARIO   print the fully resolved configuration\n"
    "  map SCENARIO      print the address map and ring placement\n"
    "  sweep STUDY.yaml  run a what-if study: each point a dvp run (--jobs N at once) into OUT/points,\n"
    "                    the table in OUT/results.csv; --emit parallel|slurm writes the commands instead\n"
    "  collect DIR       rebuild a study's results.csv / results.json from its point folders\n"
    "  diff RUN_A RUN_B  every statistic that changed between two runs, largest change first\n"
    "  plot DIR          a study's metric against its parameters (--y METRIC [--x KEY] [--hue KEY] [--kind\n"
    "                    line|bar|heatmap]), or a run's roofline (--roofline) or pipe use (--pipes): PNG and SVG\n"
    "  schema            print the configuration reference (markdown)\n"
    "  regs header       print the peripherals' register header for the firmware (C)\n"
    "  regs markdown     print the peripherals' register maps (markdown)\n"
    "  help              this help (also --help); --version prints the version\n"
    "exit codes: 0 ok, 1 a check failed, 2 bad config or command line, 3 simulation error or limit,\n"
    "            4 the scenario asks for a part not built yet, 5 an output could not be written,\n"
    "            130/143 stopped by SIGINT/SIGTERM (outputs written when stopped while simulating)\n"
    "environment: DVP_PRESETS   folder of the presets (default: share/davinci-vp/presets beside bin/)\n"
    "             DVP_FIRMWARE  folder of the firmware images a scenario names (default: share/davinci-vp/firmware\n"
    "                           beside bin/)\n"
    "             GLIBC_TUNABLES  a run or compile of a model of 8 MiB or more starts again with\n"
    "                           glibc.malloc.hugetlb=1 added (its heap on huge pages) where the host's transparent\n"
    "                           huge pages are 'madvise', unless it names that tunable\n";

// The peripherals' window as the CPUs see it: each device, where it sits, what it is.
static void print_mmio(const platform::Soc& soc) {
  const mmio::MmioBus* bus = soc.mmio_bus();
  if (!bus) {
    std::printf("  MMIO: none (no CPU subsystem, platform.cpu); any other address gets an address error.\n");
    return;
  }
  std::vector<mmio::MmioBus::Region> regions = bus->regions();
  std::sort(regions.begin(), regions.end(), [](auto& a, auto& b) { return a.base < b.base; });
  std::printf("\nMMIO devices (register maps: docs/peripherals.md); any other address gets an address error\n");
  std::printf("  %-12s %-18s %-18s %s\n", "device", "base", "end", "kind");
  for (auto& r : regions)
    std::printf("  %-12s 0x%016llx 0x%016llx %s\n", r.name.c_str(), (unsigned long long)r.base,
                (unsigned long long)(r.base + r.size - 1), r.kind.c_str());
}

static int print_map(const platform::Scenario& s) {
  platform::Soc soc("soc", s);
  std::printf("address map (%s)\n", s.root.at("platform").get_string("name").c_str());
  std::printf("  %-18s %-18s %-10s %s\n", "base", "end", "region", "served by");
  for (auto& r : soc.address_map())
    std::printf("  0x%016llx 0x%016llx %-10s %s\n", (unsigned long long)r.base,
                (unsigned long long)(r.base + r.size - 1), r.name.c_str(), r.target.c_str());
  print_mmio(soc);
  std::printf("\nring placement (%u stops, %s)\n", soc.ring_config().stops, soc.ring().timing().routing().what());
  for (auto& p : soc.placement()) std::printf("  stop %3u  %-32s %s\n", p.stop, p.who.c_str(), p.role.c_str());
  if (const platform::KernelLauncher* l = soc.launcher(); l && !l->memory_map().empty()) {
    std::printf("\nkernel memory (in DRAM; a tensor's bytes as stored)\n");
    std::printf("  %-18s %-18s %-32s %s\n", "base", "end", "what", "contents");
    for (const auto& p : l->memory_map())
      if (p.bytes)
        std::printf("  0x%016llx 0x%016llx %-32s %s\n", (unsigned long long)p.base,
                    (unsigned long long)(p.base + p.bytes - 1), p.what.c_str(), p.how.c_str());
      else
        std::printf("  0x%016llx %-18s %-32s %s\n", (unsigned long long)p.base, "(empty)", p.what.c_str(),
                    p.how.c_str());
  }
  return kExitOk;
}

// The rule the time keys follow (a unit test holds the schema to it); written into the reference.
static const char* kUnitsRule =
    "\nUnits of time: a simulated time or duration is a number of nanoseconds (a float, so\n"
    "picoseconds can be given: `0.5` is 500 ps) and its key ends in `_ns` (`quantum_ns`, `start_ns`,\n"
    "`max_sim_ns`, ...); host time is in seconds and its key ends in `_seconds`. Latencies of clocked\n"
    "logic are counts of that clock (`_cycles`; the DRAM timings, named as JEDEC names them, in tCK).\n"
    "No configuration key is in picoseconds: `_ps` names are found only in `stats.json`, for counters\n"
    "that add up simulated time in the simulator's integer tick, 1 ps (`idle_ps`, `max_latency_ps`);\n"
    "the figures derived from them and the summary are in ns.\n";

// What each command takes: how many arguments (and what they are), and which options.
struct Command {
  const char* name;
  std::size_t args;
  const char* arg_doc;
  std::vector<std::string> options;
};
static const std::vector<Command> kCommands = {
    {"run",
     1,
     "a scenario file",
     {"preset", "set", "out", "save-tensors", "timing-only", "no-trace", "check", "quiet", "input", "output",
      "check-layers", "batch", "streams", "preload", "no-preload", "discard", "no-discard", "precision-mode"}},
    {"compile",
     1,
     "an ONNX model",
     {"preset", "out", "input", "output", "check-layers", "batch", "streams", "preload", "no-preload", "discard",
      "no-discard", "precision-mode"}},
    {"config", 1, "a scenario file", {"preset", "set", "timing-only", "check", "origins"}},
    {"map", 1, "a scenario file", {"preset", "set"}},
    {"sweep", 1, "a study file", {"out", "jobs", "resume", "emit", "point", "sensitivity", "quiet"}},
    {"collect", 1, "a study's folder", {}},
    {"diff", 2, "two run folders", {"threshold", "max-increase", "max-decrease"}},
    {"plot", 1, "a study's or a run's folder", {"x", "y", "hue", "kind", "roofline", "pipes", "tornado"}},
    {"schema", 0, "", {}},
    {"regs", 1, "header or markdown", {}},
    {"help", 0, "", {}},
};

// "" when the command line fits the command; else what is wrong, naming the stray word.
static std::string misuse(const Command& c, const std::vector<std::string>& args, const po::variables_map& vm) {
  static const char* const kCount[] = {"no argument", "one argument", "two arguments"};
  if (args.size() > c.args)
    return std::string(c.name) + " takes " + kCount[c.args] + (c.args ? " (" + std::string(c.arg_doc) + ")" : "") +
           ", got '" + args[c.args] + "'";
  for (auto& kv : vm)
    if (kv.first != "command" && kv.first != "args" &&
        std::find(c.options.begin(), c.options.end(), kv.first) == c.options.end())
      return std::string(c.name) + " does not take --" + kv.first;
  return "";
}

static po::options_description options(std::vector<std::string>& sets, std::string& preset, std::string& out) {
  po::options_description opts("options");
  opts.add_options()("help,h", "this help")("version", "print the version")("preset", po::value(&preset),
                                                                            "preset to use instead of the scenario's")(
      "set", po::value(&sets)->composing(), "override a key: dotted.key=value (repeatable)")(
      "out", po::value(&out), "output directory (default out/<scenario name>)")(
      "save-tensors", po::value<std::string>(),
      "after the run, write every kernel's tensors into DIR as KERNEL.TENSOR.npy")(
      "timing-only", "move no data (an ONNX model compiles without the host reference's values: nothing is checked)")(
      "no-trace", "do not write trace.json")("check", po::value<std::vector<std::string>>()->composing(),
                                             "add a check: metric>=value or metric<=value (repeatable)")(
      "quiet", "print only errors")("origins", "config: show where each value came from")(
      "input", po::value<std::vector<std::string>>()->composing(),
      "an ONNX model's input: NAME=FILE (.npy or a TensorProto .pb; default seeded uniform [-1, 1)) (repeatable)")(
      "check-layers", "an ONNX model: check every layer against the platform's reference loop, not only the outputs")(
      "output", po::value<std::vector<std::string>>()->composing(),
      "an ONNX model: a value to save and check against the host reference (a graph output or any node's output; "
      "default: the graph outputs) (repeatable)")(
      "batch", po::value<Count>(), "an ONNX model: images per inference (the inputs' first dimension; default 1)")(
      "streams", po::value<Count>(),
      "an ONNX model: task scheduler streams its independent branches may run on, 1 to 8 (default 8)")(
      "preload",
      "an ONNX model: preload the weights of every layer ahead that fits the window into the L2 while a layer runs "
      "(the task scheduler's SDMA engine). Default: the compiler preloads those it expects to pay on the platform "
      "(docs/networks.md)")("no-preload", "an ONNX model: no weight preloads")(
      "discard",
      "an ONNX model: drop every activation no later layer uses from the L2 after the last one that does, unwritten "
      "(the SDMA engine's discard tasks). Default: those the compiler expects to pay on the platform "
      "(docs/networks.md)")("no-discard", "an ONNX model: no discards")(
      "precision-mode", po::value<std::string>(),
      "an ONNX model: force_fp16 (default, as ATC's: the layers' vector epilogues run in f16) or "
      "allow_fp32_to_fp16 (they run in f32 and round once)")("jobs", po::value<Count>(),
                                                             "sweep: points run at once (default 1)")(
      "resume", "sweep: skip the points OUT has run already")(
      "emit", po::value<std::string>(), "sweep: write the commands for GNU parallel or Slurm (parallel|slurm)")(
      "point", po::value<Count>(), "sweep: run point N of the study alone (an emitted command's body)")(
      "sensitivity", "sweep: each sensitivity parameter / and x its factor, one at a time; prints the tornado")(
      "threshold", po::value<double>(), "diff: hide changes under this many percent")(
      "max-increase", po::value<std::vector<std::string>>()->composing(),
      "diff: KEY=PCT, exit 1 when KEY grows by more than PCT percent (repeatable)")(
      "max-decrease", po::value<std::vector<std::string>>()->composing(),
      "diff: KEY=PCT, exit 1 when KEY falls by more than PCT percent (repeatable)")(
      "x", po::value<std::string>(), "plot: the parameter across (default: the study's first)")(
      "y", po::value<std::string>(), "plot: the metric (a column of results.csv)")(
      "hue", po::value<std::string>(), "plot: a line or bar group per value of this parameter")(
      "kind", po::value<std::string>(), "plot: line, bar or heatmap (default line)")(
      "roofline", "plot: a run's kernels on the platform's roofline")("pipes", "plot: a run's AI Core pipe use")(
      "tornado", "plot: a --sensitivity study's tornado (sensitivity.csv)");
  return opts;
}

// NAME=FILE into `inputs`; false when it is not of that form.
static bool input_arg(const std::string& a, std::map<std::string, std::string>& inputs, const std::string& dir = "") {
  const auto eq = a.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == a.size()) return false;
  const std::filesystem::path file = a.substr(eq + 1);
  inputs[a.substr(0, eq)] = (file.is_relative() && !dir.empty() ? std::filesystem::path(dir) / file : file).string();
  return true;
}

// How the command line compiles an ONNX model into DIR (dvp compile's --out, or OUT/compiled
// for dvp run).
static network::CompileOptions cli_options(const po::variables_map& vm, const std::string& preset,
                                           const std::string& dir) {
  network::CompileOptions co;
  co.dir = dir;
  if (!preset.empty()) co.preset = preset;
  co.check_layers = vm.count("check-layers") > 0;
  co.reference = vm.count("timing-only") == 0;  // a timing-only run checks nothing
  if (vm.count("batch")) co.batch = vm["batch"].as<Count>().value;
  if (vm.count("batch") && co.batch == 0) throw Error("--batch 0: a batch is at least 1 image", kExitConfig);
  if (vm.count("streams")) co.streams = vm["streams"].as<Count>().value;
  if (vm.count("preload") && vm.count("no-preload"))
    throw Error("give --preload or --no-preload, not both", kExitConfig);
  co.preload = vm.count("preload")      ? network::Plan::On
               : vm.count("no-preload") ? network::Plan::Off
                                        : network::Plan::Auto;
  if (vm.count("discard") && vm.count("no-discard"))
    throw Error("give --discard or --no-discard, not both", kExitConfig);
  co.discard = vm.count("discard")      ? network::Plan::On
               : vm.count("no-discard") ? network::Plan::Off
                                        : network::Plan::Auto;
  if (vm.count("precision-mode")) co.precision_mode = vm["precision-mode"].as<std::string>();
  if (co.precision_mode != "force_fp16" && co.precision_mode != "allow_fp32_to_fp16")
    throw Error("--precision-mode " + co.precision_mode + ": give force_fp16 or allow_fp32_to_fp16", kExitConfig);
  if (co.streams < 1 || co.streams > 8)
    throw Error("--streams " + std::to_string(co.streams) + ": the task scheduler has streams 1 to 8", kExitConfig);
  co.arena = !co.check_layers && !vm.count("save-tensors");  // every layer's tensors kept for the checks
  if (vm.count("input"))
    for (const std::string& a : vm["input"].as<std::vector<std::string>>())
      if (!input_arg(a, co.inputs)) throw Error("--input " + a + ": give NAME=FILE", kExitConfig);
  if (vm.count("output")) co.outputs = vm["output"].as<std::vector<std::string>>();
  return co;
}

// How a scenario's model: key compiles its model into OUT/compiled (files relative to the
// scenario; the compiled scenario names its own by absolute paths, as it is merged under this one).
static network::CompileOptions model_options(const platform::Scenario& s, const po::variables_map& vm,
                                             const std::string& out) {
  const cfg::Node& m = s.root.at("model");
  network::CompileOptions co;
  co.dir = (std::filesystem::path(out.empty() ? "out/" + s.root.get_string("name") : out) / "compiled").string();
  if (!s.preset.empty()) co.preset = s.preset;
  co.batch = m.get_uint("batch"), co.seed = m.get_uint("seed"), co.check_layers = m.get_bool("check_layers");
  co.streams = m.get_uint("streams");  // --preload is an ONNX file's
  auto plan = [&](const char* key) {
    const std::string v = m.get_string(key);
    return v == "true" ? network::Plan::On : v == "false" ? network::Plan::Off : network::Plan::Auto;
  };
  co.preload = plan("preload"), co.discard = plan("discard");
  co.target = network::target_of(s.root.at("platform"));
  co.precision_mode = m.get_string("precision_mode");
  co.arena = !co.check_layers && !vm.count("save-tensors") && !s.root.at("run").has("save_tensors");
  co.absolute_paths = true;
  co.reference = !s.root.at("run").get_bool("timing_only");  // a timing-only run checks nothing
  if (m.has("inputs"))
    for (const std::string& a : m.get_string_list("inputs"))
      if (!input_arg(a, co.inputs, s.dir)) m.at("inputs").fail("'" + a + "': give NAME=FILE");
  if (m.has("outputs")) co.outputs = m.get_string_list("outputs");
  return co;
}

// Compiles `model` (a path) with `co`; returns the scenario written.
static std::string compile(const std::string& model, const network::CompileOptions& co, bool quiet) {
  const network::Compiled c = network::compile_model(network::load_model(model), co);
  if (!quiet)
    for (const std::string& n : c.notes) std::cerr << "dvp: note: " << n << "\n";
  if (!quiet)
    std::cout << "compiled " << model << ": " << c.layers.size() << " layers, weights " << c.weight_bytes / 1024
              << " KiB, activations " << c.activation_bytes / 1024 << " KiB"
              << (c.arena_bytes ? " in an arena of " + std::to_string(c.arena_bytes / 1024) + " KiB" : std::string())
              << " -> " << c.scenario << "\n";
  return c.scenario;
}

static bool is_onnx(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0;
}

// Weight preloads need the task scheduler's SDMA engine; a platform without one (a user's own)
// runs the model without them (the compiled preloads are a speed-up, not part of the result).
static bool without_sdma(const platform::Scenario& s, bool quiet) {
  const cfg::Node* ts = s.root.at("platform").find("ts");
  if (ts && ts->find("sdma")) return false;
  if (!quiet)
    std::cerr << "dvp: note: the platform has no SDMA engine (platform.ts.sdma): the model runs without weight "
                 "preloads and discards\n";
  return true;
}

// run, config and map: load the scenario, then do the command.
static int scenario_command(const std::string& cmd, const std::string& scenario, const po::variables_map& vm,
                            const std::string& preset, const std::vector<std::string>& sets, const std::string& out) {
  platform::Overrides ov{preset, sets, vm.count("timing-only") > 0,
                         vm.count("check") ? vm["check"].as<std::vector<std::string>>() : std::vector<std::string>{},
                         ""};
  platform::Scenario s;
  platform::Watchdog* guard = platform::Watchdog::current();
  if (guard) guard->phase("loading the scenario");
  try {
    const bool quiet = vm.count("quiet") > 0 || cmd != "run";  // config and map print only what they show
    if (is_onnx(scenario)) {
      const std::string dir =
          (std::filesystem::path(out.empty() ? "out/" + std::filesystem::path(scenario).stem().string() : out) /
           "compiled")
              .string();
      network::CompileOptions co = cli_options(vm, preset, dir);
      const platform::Scenario target = platform::resolve_platform(co.preset, ov);
      co.preset = target.preset;  // --set platform.preset too: the compiled scenario names what runs
      co.target = network::target_of(target.root.at("platform"));
      s = platform::load_scenario(compile(scenario, co, quiet), ov);
      if ((co.preload == network::Plan::On || co.discard == network::Plan::On) && without_sdma(s, quiet)) {
        co.preload = co.discard = network::Plan::Off;
        s = platform::load_scenario(compile(scenario, co, true), ov);
      }
    } else {
      // A model's kernels, tasks and checks come with its compile: a --set of their items waits for it.
      platform::Overrides before = ov;
      before.sets.erase(std::remove_if(before.sets.begin(), before.sets.end(), platform::sets_an_item),
                        before.sets.end());
      s = platform::load_scenario(scenario, before);
      if (!s.root.find("model") && before.sets.size() != ov.sets.size()) s = platform::load_scenario(scenario, ov);
      if (const cfg::Node* m = s.root.find("model")) {  // its network, compiled, under the scenario's keys
        const std::filesystem::path onnx = m->get_string("onnx");
        const std::string file = (onnx.is_relative() ? std::filesystem::path(s.dir) / onnx : onnx).string();
        network::CompileOptions co = model_options(s, vm, out);
        if ((co.preload == network::Plan::On || co.discard == network::Plan::On) && without_sdma(s, quiet))
          co.preload = co.discard = network::Plan::Off;
        ov.under = compile(file, co, quiet);
        s = platform::load_scenario(scenario, ov);
      }
    }
  } catch (const Error& e) {
    // What goes wrong while loading is the scenario's to fix, whatever raised it.
    std::cerr << "dvp: " << e.what() << "\n";
    return e.exit_code() == kExitSimError ? kExitConfig : e.exit_code();
  }
  if (guard) guard->set_limit(s.root.at("run").get_double("max_wall_seconds"));
  if (cmd == "config") {
    std::cout << "# resolved configuration of " << scenario << (s.preset.empty() ? "" : " (preset " + s.preset + ")")
              << "\n"
              << cfg::dump(s.root, vm.count("origins") > 0);
    return kExitOk;
  }
  if (vm.count("no-trace")) cfg::set_dotted(s.root, "run.trace=false");
  if (cmd == "map") return print_map(s);
  platform::RunOptions ro{out, vm.count("quiet") > 0,
                          vm.count("save-tensors") ? vm["save-tensors"].as<std::string>() : std::string()};
  return platform::run_scenario(s, ro).exit_code;
}

// dvp plot: the plotting script (python3-matplotlib) with the same options; returns its exit code.
static int plot(const std::string& dir, const po::variables_map& vm) {
  const std::string python = study::python3();
  std::vector<std::string> argv{python, platform::plot_script(), dir};
  for (const char* o : {"x", "y", "hue", "kind"})
    if (vm.count(o)) argv.insert(argv.end(), {std::string("--") + o, vm[o].as<std::string>()});
  for (const char* o : {"roofline", "pipes", "tornado"})
    if (vm.count(o)) argv.emplace_back(std::string("--") + o);
  std::vector<char*> a;
  for (std::string& s : argv) a.push_back(s.data());
  a.push_back(nullptr);
  std::cout.flush();
  ::execvp(python.c_str(), a.data());
  std::cerr << "dvp: cannot run " << python << " " << argv[1] << ": " << std::strerror(errno) << "\n";
  return kExitConfig;
}

// KEY=PCT (a --max-increase / --max-decrease gate) into `limits`, as a fraction.
static void gate_arg(const po::variables_map& vm, const char* opt, std::map<std::string, double>& limits) {
  if (!vm.count(opt)) return;
  for (const std::string& a : vm[opt].as<std::vector<std::string>>()) {
    const auto eq = a.find('=');
    char* end = nullptr;
    const double pct = eq == std::string::npos ? 0 : std::strtod(a.c_str() + eq + 1, &end);
    if (eq == std::string::npos || eq == 0 || end == a.c_str() + eq + 1 || *end || pct < 0)
      throw Error(std::string("--") + opt + " " + a + ": give KEY=PERCENT (summary.simulated_ns=5)", kExitConfig);
    limits[a.substr(0, eq)] = pct / 100;
  }
}

// sweep, collect and diff: what-if studies (study/).
static int study_command(const std::string& cmd, const std::vector<std::string>& args, const po::variables_map& vm,
                         const std::string& out) {
  if (cmd == "collect") {
    const std::size_t bad = study::collect(args[0]);
    std::cout << "wrote " << args[0] << "/results.csv and results.json" << (bad ? ", " : "")
              << (bad ? std::to_string(bad) + " points not run or failed" : std::string()) << "\n";
    return bad ? kExitCheckFailed : kExitOk;
  }
  if (cmd == "diff") {
    study::DiffOptions o;
    if (vm.count("threshold")) o.threshold = vm["threshold"].as<double>() / 100;
    gate_arg(vm, "max-increase", o.max_increase);
    gate_arg(vm, "max-decrease", o.max_decrease);
    return study::diff(args[0], args[1], o);
  }
  study::Study s = study::load_study(args[0]);
  const std::string dir = out.empty() ? "out/" + s.name : out;
  if (vm.count("sensitivity")) study::sensitivity_points(s);
  if (platform::Watchdog* guard = platform::Watchdog::current()) {
    guard->set_limit(0);  // each point has its own limit; a study may run for days
    guard->phase("running a study", true);
  }
  if (vm.count("point")) return study::run_point(s, dir, vm["point"].as<Count>().value);
  study::validate_points(s);
  if (vm.count("emit")) {
    study::emit(s, dir, vm["emit"].as<std::string>());
    return kExitOk;
  }
  study::SweepOptions o{dir, vm.count("jobs") ? vm["jobs"].as<Count>().value : 1u, vm.count("resume") > 0,
                        vm.count("quiet") > 0};
  const int rc = study::sweep(s, o);
  if (vm.count("sensitivity") && rc != 130 && rc != 143) {
    study::print_tornado(s, dir);
    study::plot(dir, {"--tornado"});
  }
  return rc;
}

static int command(const Command& c, const std::vector<std::string>& args, const po::variables_map& vm,
                   const std::string& preset, const std::vector<std::string>& sets, const std::string& out) {
  const std::string cmd = c.name;
  if (cmd == "schema") {
    std::cout << "# Configuration reference\n\nGenerated by `dvp schema` from the keys each model declares; "
                 "tests/ check that this file matches it.\n"
              << kUnitsRule << platform::scenario_schema().markdown();
    return kExitOk;
  }
  if (cmd == "regs") {
    // The peripherals' register maps: a C header for the firmware, or the markdown document.
    const std::string what = args.empty() ? "" : args[0];
    if (what == "header")
      std::cout << platform::peripherals_header(0x10000000);
    else if (what == "markdown")
      std::cout << platform::peripherals_markdown();
    else {
      std::cerr << "dvp: regs takes header or markdown\n" << kUsage;
      return kExitConfig;
    }
    return kExitOk;
  }
  if (args.empty()) {
    std::cerr << "dvp: " << cmd << " needs a scenario file\n" << kUsage;
    return kExitConfig;
  }
  if (cmd == "plot") return plot(args[0], vm);
  if (cmd == "sweep" || cmd == "collect" || cmd == "diff") {
    if (cmd == "diff" && args.size() < 2) {
      std::cerr << "dvp: diff needs two run folders (RUN_A RUN_B)\n" << kUsage;
      return kExitConfig;
    }
    try {
      return study_command(cmd, args, vm, out);
    } catch (const Error& e) {
      std::cerr << "dvp: " << e.what() << "\n";
      return e.exit_code() == kExitSimError ? kExitConfig : e.exit_code();
    }
  }
  if (cmd == "compile") {
    if (!is_onnx(args[0])) throw Error("compile takes an ONNX model (MODEL.onnx), got " + args[0], kExitConfig);
    try {  // as dvp run: what goes wrong in the model or its inputs is the user's to fix
      const std::string dir = out.empty() ? "out/" + std::filesystem::path(args[0]).stem().string() + "/compiled" : out;
      network::CompileOptions co = cli_options(vm, preset, dir);
      co.target = network::target_of(platform::resolve_platform(co.preset, {}).root.at("platform"));
      compile(args[0], co, vm.count("quiet") > 0);
    } catch (const Error& e) {
      std::cerr << "dvp: " << e.what() << "\n";
      return e.exit_code() == kExitSimError ? kExitConfig : e.exit_code();
    }
    return kExitOk;
  }
  for (const char* model_only : {"input", "output", "batch", "streams", "check-layers", "preload", "no-preload",
                                 "discard", "no-discard", "precision-mode"})
    if (vm.count(model_only) && !is_onnx(args[0])) {
      std::cerr << "dvp: --" << model_only << " is for an ONNX model (MODEL.onnx), not " << args[0] << "\n";
      return kExitConfig;
    }
  return scenario_command(cmd, args[0], vm, preset, sets, out);
}

int sc_main(int argc, char* argv[]) {
  // The kernel's own info messages ("Simulation stopped by user") are not the user's business.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  // First, before any thread exists: the guard takes SIGINT/SIGTERM and keeps the wall-clock limit.
  platform::Watchdog guard(platform::kDefaultMaxWallSeconds, platform::kStopGraceSeconds);
  guard.start();
  std::vector<std::string> sets, args;
  std::string cmd, preset, out;
  po::options_description opts = options(sets, preset, out);
  po::options_description hidden;
  hidden.add_options()("command", po::value(&cmd))("args", po::value(&args));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("command", 1).add("args", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "dvp: " << e.what() << "\n" << kUsage << opts;
    return kExitConfig;
  }
  if (vm.count("version")) {
    std::cout << "dvp " << dvp::version() << " (" << dvp::revision() << ")\n";
    return kExitOk;
  }
  if (vm.count("help") || cmd.empty()) {
    std::cout << kUsage << opts;
    return cmd.empty() && !vm.count("help") ? kExitConfig : kExitOk;
  }
  auto c = std::find_if(kCommands.begin(), kCommands.end(), [&](const Command& k) { return cmd == k.name; });
  if (c == kCommands.end()) {
    std::cerr << "dvp: unknown command '" << cmd << "'\n" << kUsage;
    return kExitConfig;
  }
  if (std::string m = misuse(*c, args, vm); !m.empty()) {
    std::cerr << "dvp: " << m << "\n" << kUsage;
    return kExitConfig;
  }
  if (cmd == "help") {
    std::cout << kUsage << opts;
    return kExitOk;
  }
  try {
    return command(*c, args, vm, preset, sets, out);
  } catch (const Error& e) {
    // A configuration error names its file and line itself.
    std::cerr << "dvp: " << (e.exit_code() == kExitConfig ? "" : "error: ") << e.what() << "\n";
    return e.exit_code();
  } catch (const sc_core::sc_report& e) {
    std::cerr << "dvp: error: " << e.what() << "\n";
    return kExitSimError;
  } catch (const std::exception& e) {
    std::cerr << "dvp: error: " << e.what() << "\n";
    return kExitSimError;
  }
}

// Whether a scenario file may have a top-level key model:, read as text: a compiled network's
// scenario (tens to hundreds of KB) is not parsed for nothing. The root's keys start at the column
// of its first line that holds one: at column 0, a line there that starts with model, or with
// anything but a plain key (a quoted or complex key, a flow map, a document marker), may be one; a
// root indented, or begun some other way, is parsed.
static bool may_name_a_model(const std::string& path) {
  std::ifstream f(path);
  bool first = true;
  for (std::string line; std::getline(f, line);) {
    const std::size_t at = line.find_first_not_of(" \t\r");
    if (at == std::string::npos || line[at] == '#') continue;  // blank, or a comment
    if (at > 0) {
      if (first) return true;  // an indented root
      continue;                // a nested line
    }
    first = false;
    if (line.rfind("model", 0) == 0 || !(std::isalnum(static_cast<unsigned char>(line[0])) || line[0] == '_'))
      return true;
  }
  return false;
}

// An ONNX model's run or compile fills hundreds of MiB of fresh heap once (the file parsed, its
// weights converted, every activation's reference), and the host's first touch of each 4 KiB page
// is a page fault: about 100,000 of them for ResNet-50, a quarter of its wall time here. glibc's
// malloc puts its heap on transparent huge pages (a fault per 2 MiB) with the tunable
// glibc.malloc.hugetlb=1, which it reads only as a process starts; so such a command starts
// itself again with it, for a model file of 8 MiB or more named on its command line or by a
// scenario's model.onnx (a second start costs about 30 ms, and huge pages gain nothing on a small
// heap: a 3 MiB transformer ran no faster), where the host's transparent huge pages are "madvise" (the tunable's way to
// ask for them; under "always" the heap has them already). Not when GLIBC_TUNABLES already names it (the user's choice,
// or this process's second start), under valgrind, whose tool an exec would leave, nor when started through the dynamic
// loader (ld-linux ./dvp: /proc/self/exe is the loader). Where the exec fails, the command runs as it is; nothing
// simulated depends on the host's pages.
static bool large_model(const std::string& a) {
  std::error_code ec;
  if (is_onnx(a)) return std::filesystem::file_size(a, ec) >= (8u << 20) && !ec;
  const std::string ext = std::filesystem::path(a).extension().string();
  if ((ext != ".yaml" && ext != ".yml") || !std::filesystem::is_regular_file(a, ec) || !may_name_a_model(a))
    return false;
  try {  // a scenario's model.onnx, relative to it; a file that does not parse is the run's to refuse
    const cfg::Node scenario = cfg::load_file(a);
    const cfg::Node* onnx = scenario.find("model");
    onnx = onnx && onnx->is_map() ? onnx->find("onnx") : nullptr;
    if (!onnx || !onnx->is_scalar()) return false;
    const std::filesystem::path m = onnx->as_string();
    return is_onnx(m.string()) &&
           large_model((m.is_absolute() ? m : std::filesystem::path(a).parent_path() / m).string());
  } catch (const std::exception&) {
    return false;
  }
}

static void heap_on_huge_pages(int argc, char* argv[]) {
  // The command is the first argument that names one (options may come before it).
  const auto command = std::find_if(argv + 1, argv + argc, [](const char* a) {
    return std::strcmp(a, "run") == 0 || std::strcmp(a, "compile") == 0;
  });
  if (command == argv + argc) return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, "glibc.malloc.hugetlb")) return;
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload && std::strstr(preload, "vgpreload")) return;
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  if (!std::getline(thp, mode) || mode.find("[madvise]") == std::string::npos) return;
  std::error_code ec;
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe", ec).filename().string();
  if (ec || exe.rfind("ld-", 0) == 0) return;
  // Last, as the costliest (a scenario is parsed): a large model.
  if (std::none_of(command + 1, argv + argc, [](const char* a) { return large_model(a); })) return;
  const std::string before = tunables ? tunables : "";
  const std::string with = (before.empty() ? "" : before + ":") + "glibc.malloc.hugetlb=1";
  if (setenv("GLIBC_TUNABLES", with.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  if (tunables)  // the exec failed: run as it is, with the environment as it was
    setenv("GLIBC_TUNABLES", before.c_str(), 1);
  else
    unsetenv("GLIBC_TUNABLES");
}

// libsystemc's own main() prints the kernel banner before sc_main runs; a tool's output
// should hold only what the user asked for, so dvp has its own main.
int main(int argc, char* argv[]) {
  heap_on_huge_pages(argc, argv);
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  // Buffers of up to 64 MiB (tensors read back, references, scratch) come from the heap and go
  // back to it, not to the OS: by default each one over 128 KiB is a fresh mapping whose every
  // page faults on first touch (a third of a firmware scenario's check time; issue 13).
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  const int code = sc_core::sc_elab_and_sim(argc, argv);
  if (code == 128 + SIGINT || code == 128 + SIGTERM) {  // stopped by a signal, outputs written
    std::fflush(nullptr);
    dvp::platform::exit_process(code);
  }
  return code;
}
