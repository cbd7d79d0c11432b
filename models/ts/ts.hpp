// SPDX-License-Identifier: MIT
// Task scheduler: streams of tasks in submission queues in memory, rung by doorbells; AI Core
// kernels' blocks go onto free AI Cores (by policy), events order streams, completions go to a
// completion queue in memory with an interrupt. It reads and writes the queues only through its
// `mem` socket, so whatever answers for their addresses (DRAM behind the L2, an RTL block) sees
// every access. Register map: docs/peripherals.md; the queue entries: firmware/bsp/dvp_abi.h.
#pragma once
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "aicore/aicore.hpp"
#include "common/config.hpp"
#include "common/stats.hpp"
#include "common/trace.hpp"
#include "dispatch.hpp"
#include "irq/irq_controller.hpp"
#include "mmio/mmio.hpp"
#include "sdma.hpp"

#include <tlm_utils/simple_initiator_socket.h>

extern "C" {
#include "dvp_abi.h"
}

namespace dvp::ts {

struct TsConfig {
  double dispatch_ns = 0;         // reading a task from its queue, and starting one block on a core
  double completion_ns = 0;       // from a task's last block to its completion entry
  MakeDispatch policy = nullptr;  // (dispatch.hpp); null: round_robin
  bool has_sdma = false;          // the sdma: section (preload tasks need it)
  SdmaConfig sdma;
  static void describe(cfg::Spec& s);
  static TsConfig from(const cfg::Node& n);
};

class TaskScheduler : public mmio::Device {
 public:
  // Where it writes the AI Cores' control registers (aicore/aicore_ctrl.hpp): bind to a bus
  // that has core i's block at ctrl_base + i * ctrl_stride.
  tlm_utils::simple_initiator_socket<TaskScheduler> ctrl;
  // Where it reads tasks and DVPP commands and writes completions: a requester on the ring.
  tlm_utils::simple_initiator_socket<TaskScheduler> mem;

  // What it is connected to.
  struct Wiring {
    std::vector<aicore::AiCore*> cores;  // the AI Cores it dispatches to
    std::uint64_t dvpp_rings = 0;        // its rings of DVPP commands (DVP_TS_DVPP_RINGS_OFFSET in DRAM)
    std::uint64_t line_bytes = 128;      // its accesses never cross an L2 line
    irq::IrqController* irq = nullptr;
    unsigned irq_line = 16;                        // its completion interrupt
    unsigned aicpus = 0, aicpu_line = 17;          // AI CPU i's mailbox raises line aicpu_line + i
    std::uint64_t ctrl_base = 0, ctrl_stride = 0;  // core i's control block, on `ctrl`
    double access_ns = 0;                          // one register access
    bool timing_only = false;                      // the SDMA's stashes move no data
  };
  TaskScheduler(sc_core::sc_module_name name, const TsConfig& cfg, Wiring w);
  std::string device_kind() const override { return "ts"; }
  // DVPP, for media tasks: its registers at `regs` on `ctrl`, its completions notified on `done`.
  void attach_dvpp(std::uint64_t regs, const sc_core::sc_event& done);

  struct TaskRecord {
    std::string name;
    unsigned stream = 0, type = 0, blocks = 0;
    Tick submitted = 0, start = 0, end = 0;
    bool fault = false;
    std::string fault_text;
  };
  const std::vector<TaskRecord>& records() const { return records_; }
  // A queue address the firmware gave that is not in DRAM, etc.: the run stops with it.
  const std::string& error() const { return error_; }
  // Its DMA engine, a requester of its own on the ring (null without the sdma: section).
  Sdma* sdma() { return sdma_.get(); }

 private:
  struct Stream {
    std::unique_ptr<mmio::Register> base_lo, base_hi, size, tail, head;
    sc_core::sc_event doorbell;
    bool busy = false;  // a task is running
    Tracer::Lane lane;
  };
  void stream_thread(unsigned s);
  void run_kernel(const dvp_task& t, TaskRecord& rec, dvp_completion& c);
  void run_aicpu(const dvp_task& t, TaskRecord& rec, dvp_completion& c);
  void run_dvpp(const dvp_task& t, TaskRecord& rec, dvp_completion& c);
  bool run_task(unsigned s, const dvp_task& t, TaskRecord& rec, dvp_completion& c);
  void barrier(unsigned s);
  std::uint64_t submit_dvpp(std::uint32_t engine, dvpp_cmd cmd);
  bool await_dvpp(std::uint64_t slot, dvpp_cmd& cmd);
  void write_reg(std::uint64_t addr, std::uint32_t value, sc_core::sc_time& delay, const std::string& what);
  int claim_core();  // a free core by policy, or -1
  // `len` bytes at `addr` through `mem`, the time advancing `delay`; false (and the run
  // stopped, naming `what`) when the access failed.
  bool access(bool write, std::uint64_t addr, void* data, std::uint64_t len, const std::string& what,
              sc_core::sc_time& delay);
  void complete(const dvp_completion& c);
  void update_irq();
  void write_ctrl(unsigned core, std::uint32_t offset, std::uint32_t value, sc_core::sc_time& delay);
  void fail(const std::string& msg);

  TsConfig cfg_;
  std::vector<aicore::AiCore*> cores_;
  std::uint64_t dvpp_rings_, line_bytes_;
  irq::IrqController& irq_;
  unsigned irq_line_;
  std::uint64_t ctrl_base_, ctrl_stride_;
  std::unique_ptr<Dispatch> dispatch_;
  std::vector<bool> core_taken_;
  sc_core::sc_event core_freed_, event_set_, stream_idle_;
  bool events_[DVP_MAX_EVENTS] = {};
  std::vector<std::unique_ptr<Stream>> streams_;
  // AI CPU mailboxes: the task's function and argument table, and where its status comes back.
  struct Mailbox {
    std::unique_ptr<mmio::Register> func, args_lo, args_hi, done;
    bool busy = false, finished = false;
    std::uint32_t status = 0;
    sc_core::sc_event done_ev;
  };
  std::vector<std::unique_ptr<Mailbox>> aicpu_;
  unsigned aicpu_line_;
  sc_core::sc_event aicpu_freed_;
  // DVPP: where its registers are, its completion event, each engine's ring (commands submitted).
  std::uint64_t dvpp_regs_ = 0;
  const sc_core::sc_event* dvpp_done_ = nullptr;
  std::uint32_t dvpp_submitted_[DVPP_ENGINES] = {};
  std::uint64_t dvpp_completions_ = 0;  // DVPP's completions so far
  // A DVPP command's copy and doorbell (per engine), and a completion entry with the tail behind
  // it, are each written whole before another stream's: the accesses take time.
  sc_core::sc_mutex dvpp_submit_[DVPP_ENGINES], completing_;
  mmio::Register cq_base_lo_, cq_base_hi_, cq_size_, cq_tail_, cq_head_, status_, cores_reg_;
  std::vector<TaskRecord> records_;
  std::deque<std::string> slice_names_;
  std::string error_;
  std::unique_ptr<Sdma> sdma_;
  stats::Group stats_;
  std::uint64_t& tasks_;
  std::uint64_t& blocks_;
  std::uint64_t& faults_;
};

}  // namespace dvp::ts
