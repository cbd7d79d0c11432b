// SPDX-License-Identifier: MIT
// Bare mode: runs AI Core kernels straight from a scenario, before (and without) the CPUs and
// the task scheduler. For each entry of `kernels:` it places the kernel image, the tensors
// and the argument table in DRAM, runs the blocks on the cores (in waves when there are more
// blocks than cores), reads the outputs back through the cache hierarchy and compares them
// with a plain C++ reference.
#pragma once
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "aicore/aicore.hpp"
#include "common/config.hpp"
#include "common/stats.hpp"
#include "dram/storage.hpp"
#include "host_jobs.hpp"
#include "library.hpp"

extern "C" {
#include "dvp_abi.h"
}

namespace dvp::platform {

class KernelLauncher : public sc_core::sc_module {
 public:
  // A ring requester: reads results through L2 (debug transport) so dirty lines are seen.
  tlm_utils::simple_initiator_socket<KernelLauncher> socket;

  // `core_cfg`: library kernels are built (tiled) for this core configuration.
  // The media jobs (dvpp:) as kernels see them: a job's task (tasks: {dvpp: NAME}: fills the task's
  // engine and command address, false when there is no such job), a job's output buffer (a
  // tensor's dvpp: NAME: its DRAM offset and bytes, false when there is no such job), and the
  // lowest DRAM offset their buffers and queues take (kernels are placed below it).
  // A job's output buffer and the picture laid out in it.
  struct MediaBuffer {
    std::uint64_t offset = 0, bytes = 0;                                          // DRAM offset, capacity
    std::uint32_t format = 0, width = 0, height = 0, stride_w = 0, stride_h = 0;  // enum dvpp_format
  };
  struct MediaJobs {
    std::function<bool(const std::string& job, dvp_task& task)> task;
    std::function<bool(const std::string& job, MediaBuffer& out)> output;
    // When a job's last command completed (kTickMax: not run); bare mode: whether all have, and
    // the event that says they have.
    std::function<Tick(const std::string& job)> completed;
    std::function<bool()> done;
    const sc_core::sc_event* finished = nullptr;
    std::uint64_t floor = ~std::uint64_t(0);
  };
  KernelLauncher(sc_core::sc_module_name n, const cfg::Node& kernels, const std::string& scenario_dir,
                 std::vector<aicore::AiCore*> cores, const aicore::AiCoreConfig& core_cfg, dram::Storage& dram,
                 std::uint64_t dram_base, bool functional, const cfg::Node* tasks, MediaJobs media);
  ~KernelLauncher() override;

  static void describe(cfg::Spec& kernel_entry);
  static void describe_tasks(cfg::Spec& task_entry);
  static void describe_shape(cfg::Spec& shape);
  static void describe_conv_shape(cfg::Spec& shape);
  static void describe_row_shape(cfg::Spec& shape);
  static void describe_resize_shape(cfg::Spec& shape);
  static void describe_aipp_shape(cfg::Spec& shape);
  static void describe_tensors(cfg::Spec& tensor_entry);
  static void describe_check(cfg::Spec& check);
  // Firmware mode (the scenario has tasks:): the kernels are placed in DRAM and listed in the
  // job table at construction; the firmware runs them; this checks their outputs afterwards,
  // with each kernel's (start, end) from the task scheduler.
  bool firmware_mode() const { return firmware_mode_; }
  bool has_aicpu_tasks() const { return aicpu_tasks_; }
  // Tells the runtime (through the job table) which cores are control CPUs.
  void set_control_cores(unsigned n);
  void check_after_firmware(const std::vector<std::pair<std::string, std::pair<Tick, Tick>>>& times);

  // After the run: writes each tensor with save: (relative to `out_dir`) and, if `all_dir` is
  // given, every kernel's tensors there as KERNEL.TENSOR.npy; returns the files written.
  // Throws OutputError naming a file that cannot be written.
  unsigned save_tensors(const std::string& out_dir, const std::string& all_dir);
  bool saves_tensors(const std::string& all_dir) const;

  bool done() const { return done_; }
  // The first AI Core fault, naming kernel, block and core; the run stops at it.
  const std::string& fault() const { return fault_; }
  unsigned checks_failed() const { return failed_; }
  // Host seconds spent writing kernels' tensors into DRAM and checking their outputs against
  // references: work that is not simulation, reported apart so a benchmark can say its share.
  double host_setup_seconds() const { return host_setup_s_; }
  double host_check_seconds() const { return host_check_s_; }
  // Host seconds a second host thread spent beside the simulation (setting up bare-mode kernels'
  // tensors ahead, computing references while their kernels run), not in host_seconds.
  double host_worker_seconds() const { return jobs_.worker_seconds(); }
  // Checks whose reference the worker was given, and whose inputs read back as it had them
  // (whether it or the check computed the values first: the same values).
  unsigned early_references() const { return early_same_; }
  // An output against its reference, element by element.
  struct Comparison {
    std::uint64_t count = 0, over = 0;  // elements compared, and over atol + rtol x |reference|
    double atol = 0, rtol = 0;
    double max_abs = 0, max_rel = 0;  // max rel: over elements whose reference is not 0
    std::int64_t worst = -1;          // furthest past (all within: closest to) its tolerance; -1: all equal
    double have = 0, want = 0;        // the worst element's value and reference
  };
  struct Result {
    std::string name;
    unsigned blocks = 0, cores = 0;
    Tick start = 0, end = 0;
    bool checked = false, passed = true;
    std::string detail;
    Comparison comparison;
    std::string tiling;     // library kernels: the tiling chosen for this configuration
    bool has_work = false;  // library kernels: the least work, for the roofline
    KernelWork work;
  };
  using AddressRanges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;  // bus addresses [lo, hi)
  // Drops the caches' copies of address ranges (the platform's L2 slices), taking no simulated
  // time. place() writes a kernel's memory straight into DRAM, in bare mode while the run goes
  // on: a traffic generator or an RTL master may have left lines of it in the L2, dirty, and a
  // kernel would read those instead of its tensors.
  void set_invalidate(std::function<void(const AddressRanges&)> f) { invalidate_ = std::move(f); }
  // Reads [addr, addr + len) as a debug read would see it (the caches' lines over memory's bytes)
  // in bulk, taking no simulated time; false where it cannot (not all DRAM), and read_back then
  // reads through the ring, 128 bytes at a time. The platform's: DRAM and the L2 slices.
  using BulkRead = std::function<bool(std::uint64_t addr, std::uint8_t* out, std::uint64_t len)>;
  void set_bulk_read(BulkRead f) { bulk_read_ = std::move(f); }
  // Reads [addr, addr + len) (bus addresses) as a check does: in bulk, else through the ring.
  // Throws, naming the address, where nothing answers.
  void read_back_into(std::uint64_t addr, std::uint8_t* out, std::uint64_t len);
  // Where each kernel's memory is, for `dvp map`: its image, tensors and argument table (bus
  // addresses), kernel by kernel (an arena tensor lies after every kernel's own memory). `how`
  // says where a tensor's contents come from: an init (written at its kernel's start), a file
  // (at load), a dvpp job, or the memory it shares (what earlier kernels left there).
  struct Placed {
    std::string what, how;
    std::uint64_t base, bytes;
  };
  std::vector<Placed> memory_map() const;
  // The DRAM's peak bandwidth, for the kernels' roofline bounds (0: no memory bound).
  void set_dram_peak(double bytes_per_ps) { dram_bytes_per_ps_ = bytes_per_ps; }
  double dram_peak() const { return dram_bytes_per_ps_; }
  const std::vector<Result>& results() const { return results_; }
  // The least time the kernels can take, one after another: the sum of their roofline bounds
  // (0 for kernels without a library's work, as the AI CPU's), and how many there are.
  double work_bound_ps() const;
  std::size_t kernel_count() const { return kernels_.size(); }

 private:
  struct Tensor {
    std::string name;
    aicore::DType dtype;
    std::uint64_t elems, addr;
  };
  struct Kernel;
  struct TensorSpec;
  void range_entry(const cfg::Node& t, dvp_task& d, std::string& name);
  void read_code(Kernel* K, const cfg::Node& k, const std::string& dir, bool with_tasks);
  void read_tensors(Kernel* K, const cfg::Node& k, const std::string& dir);
  static void read_tensor_file(TensorSpec& s, const cfg::Node& t, const std::string& dir);
  static void read_layout(TensorSpec& s, const cfg::Node& t);
  std::uint64_t tensor_elements(TensorSpec& s, const cfg::Node& t) const;
  void read_alias(TensorSpec& s, const cfg::Node& t);
  void read_arena(TensorSpec& s, const cfg::Node& t);
  std::uint64_t take(std::uint64_t bytes, const cfg::Node& at, const std::string& what);
  void place_arena(const cfg::Node& kernels);
  void load_file(TensorSpec& s, const cfg::Node& t);
  void read_media(TensorSpec& s, const cfg::Node& t);
  void check_media_layout(const Kernel* K, const cfg::Node& k) const;
  bool media_in_time(const Kernel* K, Result& r) const;
  const Tensor& alias_of(const TensorSpec& s) const;
  std::uint64_t alias_bytes(const TensorSpec& s) const;  // the aliased memory from the offset on
  static int tensor_index(const Kernel* K, const std::string& name, const cfg::Node& where);
  static void check_library_args(const Kernel* K, const cfg::Node& k);
  static void check_aicpu_args(const Kernel* K, const cfg::Node& k);
  static void check_aicpu_slice(const Kernel* K, const cfg::Node& k);
  static void slice_check_shape(Kernel* K, const cfg::Node& c);
  static void check_arg_layout(const TensorSpec& s, const LibraryArg& w, const std::string& role, const cfg::Node& a);
  static void build_library(Kernel* K, const cfg::Node& shape, const aicore::AiCoreConfig& core_cfg, bool by_tasks,
                            bool blocks_given);
  static void read_check(Kernel* K, const cfg::Node& c, const std::string& dir);
  static void read_check_shape(Kernel* K, const cfg::Node& c);
  static void read_expected(Kernel* K, const cfg::Node& e, const std::string& dir);
  static void check_reference_sizes(const Kernel* K, const cfg::Node& c);
  void layout(Kernel* K, const cfg::Node& k);
  void run();
  void place(Kernel* K);
  void check(Kernel* K, Result& r);
  void check_compute_bound(Result& r);
  std::vector<double> reference_values(Kernel* K, std::uint64_t count);
  static std::vector<double> rounded_reference(const Kernel* K, const std::vector<std::vector<std::uint8_t>>& in,
                                               std::uint64_t count);
  static bool inputs_set_up(const Kernel& K);
  std::string contents(const TensorSpec& s) const;
  static bool set_up_at_start(const TensorSpec& s);
  static bool generated(const TensorSpec& s);
  static std::vector<std::uint8_t> initial_bytes(const TensorSpec& s);
  void post_setup(Kernel* K);
  void post_reference(Kernel* K);
  void start_of_simulation() override;
  void write_job_table(const cfg::Node& tasks);
  void task_entry(const cfg::Node& t, dvp_task& d, std::string& name);
  std::vector<std::uint8_t> read_back(std::uint64_t addr, std::uint64_t len);
  // [addr, addr + len) read back into piece_ (len at most kPieceBytes for a check's reads).
  const std::uint8_t* read_piece(std::uint64_t addr, std::uint64_t len);
  bool holds(std::uint64_t addr, const std::vector<std::uint8_t>& bytes);  // memory holds these bytes there
  static void compare_element(Comparison& c, double& worst_excess, std::uint64_t i, double have, double w);
  static constexpr std::uint64_t kPieceBytes = std::uint64_t(1) << 20;
  std::vector<std::uint8_t> piece_;
  std::vector<std::uint8_t> load_buffer_;  // load_file's logical form of a laid-out tensor, while loading
  std::vector<double> got_;                // a chunk of the output, decoded
  static Result result_of(const Kernel& K);
  nlohmann::json results_json() const;

  std::vector<std::unique_ptr<Kernel>> kernels_;
  std::atomic<bool> stopping_{false};  // the launcher is going: a reference being computed ends
  HostJobs jobs_;                      // after kernels_: its jobs hold kernels, so it stops first
  std::vector<aicore::AiCore*> cores_;
  dram::Storage& dram_;
  std::uint64_t base_, next_;
  std::function<void(const AddressRanges&)> invalidate_;
  BulkRead bulk_read_;
  std::uint64_t arena_bytes_ = 0;  // the activation arena: its tensors' furthest end
  bool functional_;
  bool firmware_mode_;
  MediaJobs media_;
  std::map<std::string, std::string> task_kernel_;  // a kernel task's name (as reports cut it) -> its kernel
  bool aicpu_tasks_ = false;
  bool done_ = false;
  std::string fault_;
  std::string current_;  // kernel running
  unsigned failed_ = 0;
  double host_setup_s_ = 0, host_check_s_ = 0;
  unsigned early_same_ = 0;
  static constexpr std::uint64_t kEarlyBytes = std::uint64_t(1) << 30;  // post_reference's budget
  std::uint64_t early_held_ = 0;
  double dram_bytes_per_ps_ = 0;
  std::vector<Result> results_;
  stats::Group stats_;
};

}  // namespace dvp::platform
