// Bare mode: runs AI Core kernels straight from a scenario, before (and without) the CPUs and
// the task scheduler. For each entry of `kernels:` it places the kernel image, the tensors
// and the argument table in DRAM, runs the blocks on the cores (in waves when there are more
// blocks than cores), reads the outputs back through the cache hierarchy and compares them
// with a plain C++ reference.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "aicore/aicore.hpp"
#include "common/config.hpp"
#include "common/stats.hpp"
#include "dram/storage.hpp"

namespace dvp::platform {

class KernelLauncher : public sc_core::sc_module {
 public:
  // A ring requester: reads results through L2 (debug transport) so dirty lines are seen.
  tlm_utils::simple_initiator_socket<KernelLauncher> socket;

  // `core_cfg`: library kernels are built (tiled) for this core configuration.
  KernelLauncher(sc_core::sc_module_name n, const cfg::Node& kernels, const std::string& scenario_dir,
                 std::vector<aicore::AiCore*> cores, const aicore::AiCoreConfig& core_cfg, dram::Storage& dram,
                 std::uint64_t dram_base, bool functional, const cfg::Node* tasks = nullptr);
  ~KernelLauncher() override;

  static void describe(cfg::Spec& kernel_entry);
  static void describe_tasks(cfg::Spec& task_entry);
  // Firmware mode (the scenario has tasks:): the kernels are placed in DRAM and listed in the
  // job table at construction; the firmware runs them; this checks their outputs afterwards,
  // with each kernel's (start, end) from the task scheduler.
  bool firmware_mode() const { return firmware_mode_; }
  bool has_aicpu_tasks() const { return aicpu_tasks_; }
  // Tells the runtime (through the job table) which cores are control CPUs.
  void set_control_cores(unsigned n);
  void check_after_firmware(const std::vector<std::pair<std::string, std::pair<Tick, Tick>>>& times);

  bool done() const { return done_; }
  // The first AI Core fault, naming kernel, block and core; the run stops at it.
  const std::string& fault() const { return fault_; }
  unsigned checks_failed() const { return failed_; }
  struct Result {
    std::string name;
    unsigned blocks = 0, cores = 0;
    Tick start = 0, end = 0;
    bool checked = false, passed = true;
    std::string detail;
    std::string tiling;  // library kernels: the tiling chosen for this configuration
  };
  const std::vector<Result>& results() const { return results_; }

 private:
  struct Tensor {
    std::string name;
    aicore::DType dtype;
    std::uint64_t elems, addr;
  };
  struct Kernel;
  void read_code(Kernel* K, const cfg::Node& k, const std::string& dir, bool with_tasks);
  void read_library_shape(Kernel* K, const cfg::Node& shape);
  void read_tensors(Kernel* K, const cfg::Node& k);
  static int tensor_index(const Kernel* K, const std::string& name, const cfg::Node& where);
  static void check_library_args(const Kernel* K, const cfg::Node& k);
  static void build_library(Kernel* K, const cfg::Node& shape, const aicore::AiCoreConfig& core_cfg);
  static void read_check(Kernel* K, const cfg::Node& c);
  static void check_reference_sizes(const Kernel* K, const cfg::Node& c);
  void layout(Kernel* K, const cfg::Node& k);
  void run();
  void place(Kernel* K);
  void check(Kernel* K, Result& r);
  void write_job_table(const cfg::Node& tasks);
  std::vector<std::uint8_t> read_back(std::uint64_t addr, std::uint64_t len);

  std::vector<std::unique_ptr<Kernel>> kernels_;
  std::vector<aicore::AiCore*> cores_;
  dram::Storage& dram_;
  std::uint64_t base_, next_;
  bool functional_;
  bool firmware_mode_;
  bool aicpu_tasks_ = false;
  bool done_ = false;
  std::string fault_;
  std::string current_;  // kernel running
  unsigned failed_ = 0;
  std::vector<Result> results_;
  stats::Group stats_;
};

}  // namespace dvp::platform
