// SPDX-License-Identifier: MIT
// Bare mode for DVPP (the scenario's `dvpp:` entries): runs media jobs on the engines without
// firmware, through the device's own registers and command queues. Each entry's input file goes
// into DRAM with an output buffer; its command goes `frames` times into its engine's queue, and
// one doorbell per engine starts them at time 0. After the run each output is read back through
// the L2 and compared with the host library's decode of the same file (bit for bit), or its
// status with the one the entry expects; outputs can be saved.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "common/config.hpp"
#include "dram/storage.hpp"
#include "dvpp/dvpp.hpp"

extern "C" {
#include "dvp_abi.h"
}

namespace dvp::platform {

class MediaLauncher : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<MediaLauncher> regs;    // to DVPP's registers
  tlm_utils::simple_initiator_socket<MediaLauncher> socket;  // a ring requester: read-back through L2

  // `regs_base`: where DVPP's registers are on `regs`. With `firmware`, the jobs are placed and
  // their commands written, for tasks (tasks: {dvpp: NAME}) to submit; nothing runs them here.
  MediaLauncher(sc_core::sc_module_name n, const cfg::Node& entries, const std::string& scenario_dir, dvpp::Dvpp& dvpp,
                dram::Storage& dram, std::uint64_t dram_base, std::uint64_t regs_base, bool functional, bool firmware);
  ~MediaLauncher() override;

  static void describe(cfg::Spec& entry);
  static void describe_vpc(cfg::Spec& entry);
  static void describe_video(cfg::Spec& entry);

  struct Result {
    std::string name, engine, input;
    std::uint32_t commands = 0, frames = 0;  // submitted; pictures written
    dvpp_status status = DVPP_PENDING;       // of the first command; every command the same
    std::string reason;
    std::uint32_t width = 0, height = 0;
    dvpp_format format = DVPP_FMT_NATIVE;
    Tick start = 0, end = 0;      // the first frame's start, the last one's end
    std::uint64_t out_bytes = 0;  // the engine's output of its last command
    bool checked = false, passed = true;
    std::string detail;
  };
  bool done() const { return done_; }
  // Firmware mode: the task that submits job `name` (its engine and command), false if none.
  bool task_of(const std::string& name, dvp_task& task) const;
  // A job's output buffer (a picture engine's): its DRAM offset and capacity, and the picture's
  // layout in it; false when no job of that name writes a picture.
  struct Output {
    std::uint64_t offset = 0, bytes = 0;
    const dvpp::Picture* picture = nullptr;
  };
  bool output_of(const std::string& name, Output& out) const;
  // When job `name`'s last command completed; kTickMax while one has not.
  Tick completed(const std::string& name) const;
  // Bare mode: notified when every job has completed (done()).
  const sc_core::sc_event& finished() const { return finished_; }
  // The lowest DRAM offset the jobs' inputs, outputs, commands and queues take.
  std::uint64_t floor() const { return top_; }
  // After the run: each entry's status and its check (reads the outputs back).
  const std::vector<Result>& check();
  unsigned checks_failed() const { return failed_; }
  // The outputs with save: (relative to `out_dir`); returns the files written.
  unsigned save(const std::string& out_dir);

 private:
  struct Job;
  void read_entry(const cfg::Node& e, const std::string& dir);
  void read_input(Job& j, const cfg::Node& e, const std::string& dir);
  void read_vpc(Job& j, const cfg::Node& e);
  void read_canvas(Job& j, const cfg::Node& e);
  Job& jobs_of(const Job* j);
  void add_paste(Job& canvas, const Job& q, const cfg::Node& e);
  Tick end_of(const Job& j) const;
  static void read_stream(Job& j, const cfg::Node& e);
  static void check_annex_b(const Job& j, const cfg::Node& e, const std::string& kind);
  static void read_yuv(Job& j, const cfg::Node& e, const std::string& path);
  void place(Job& j, const cfg::Node& e);
  void place_command(Job& j, const cfg::Node& e);
  void reserve_queues(const cfg::Node& entries);
  void preload_outputs();
  void run();
  void write_reg(std::uint32_t offset, std::uint32_t value);
  void debug(bool write, std::uint64_t addr, std::uint8_t* data, std::uint64_t len);
  void write_through(std::uint64_t addr, dvpp_cmd cmd);
  std::vector<std::uint8_t> read_back(std::uint64_t addr, std::uint64_t len);
  void check_job(Job& j, Result& r);
  void check_from_picture(Job& j, Result& r, const dvpp::Picture& have, const std::string& pic);
  dvpp::Picture canvas_reference(const Job& j, const dvpp::Picture& like) const;

  std::vector<std::unique_ptr<Job>> jobs_;
  dvpp::Dvpp& dvpp_;
  dram::Storage& dram_;
  std::uint64_t base_, regs_base_, top_;  // DRAM base; inputs and buffers go down from top_
  struct Queue {
    const dvpp::EngineConfig* engine;
    std::uint64_t at, size;  // DRAM offset, commands
    std::uint32_t count = 0;
  };
  std::vector<Queue> queues_;  // bare mode: one per engine with jobs
  sc_core::sc_event finished_;
  unsigned waves_ = 0;
  bool functional_;
  bool done_ = false, checked_ = false;
  unsigned failed_ = 0;
  std::vector<Result> results_;
};

}  // namespace dvp::platform
