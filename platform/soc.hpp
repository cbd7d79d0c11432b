// SPDX-License-Identifier: MIT
// The netlist: builds the SoC from a resolved scenario. Requesters, the ring, the L2 slices
// (home nodes) and the DRAM controllers (memory nodes) are sc_modules with TLM-2.0 sockets;
// the SoC binds them through the ring and tells it where each one sits and how to route.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "aicore/aicore.hpp"
#include "aicore/aicore_ctrl.hpp"
#include "cache/l2_slice.hpp"
#include "common/system.hpp"
#include "cpu/arm_cpu.hpp"
#include "dram/controller.hpp"
#include "dvpp/dvpp.hpp"
#include "launcher.hpp"
#include "media_launcher.hpp"
#include "ring/ring.hpp"
#include "rtl/rtl_block.hpp"
#include "scenario.hpp"
#include "simctrl/simctrl.hpp"
#include "tgen/tgen.hpp"
#include "timer/timer.hpp"
#include "ts/ts.hpp"
#include "uart/uart.hpp"
#include "vecacc/vecacc.hpp"

namespace dvp::platform {

// A plain level of the SystemC hierarchy (soc.l2, soc.dram, soc.requesters). SystemC parents
// a module to the one whose constructor is running, so the children are built by `build`
// inside this constructor.
struct Level : sc_core::sc_module {
  template <typename Build>
  Level(sc_core::sc_module_name n, Build build) : sc_module(n) {
    build();
  }
};

struct AddressRegion {
  std::string name;
  std::uint64_t base, size;
  std::string target;  // what serves it
  bool built;
};

// The SoC is the system its models report into (System: its trace, statistics and protocol
// record), so two SoCs in one process keep theirs apart.
class Soc : public sc_core::sc_module, public System {
 public:
  Soc(sc_core::sc_module_name name, const Scenario& s);

  const dram::Config& dram_config() const { return dram_cfg_; }
  const cache::L2Config& l2_config() const { return l2_cfg_; }
  const ring::RingConfig& ring_config() const { return ring_cfg_; }
  std::uint64_t dram_base() const { return dram_base_; }
  bool timing_only() const { return timing_only_; }

  ring::Ring& ring() { return *ring_; }
  const std::vector<std::unique_ptr<cache::L2Slice>>& l2_slices() const { return l2_; }
  const std::vector<std::unique_ptr<dram::Controller>>& controllers() const { return mcs_; }
  const std::vector<std::unique_ptr<tgen::TrafficGenerator>>& requesters() const { return gens_; }
  dram::Storage& storage() { return *storage_; }
  const std::vector<std::unique_ptr<aicore::AiCore>>& aicores() const { return cores_; }
  const aicore::AiCoreConfig* aicore_config() const { return has_aicore_ ? &aicore_cfg_ : nullptr; }
  KernelLauncher* launcher() { return launcher_.get(); }
  const KernelLauncher* launcher() const { return launcher_.get(); }
  // The CPU subsystem (platform.cpu): cores, peripherals; empty without one.
  const std::vector<std::unique_ptr<cpu::ArmCpu>>& cpus() const { return cpus_; }
  const std::vector<std::unique_ptr<uart::Uart>>& uarts() const { return uarts_; }
  simctrl::SimCtrl* simctrl() { return simctrl_.get(); }
  ts::TaskScheduler* ts() { return ts_.get(); }
  // DVPP (platform.dvpp) and its bare-mode launcher (dvpp: entries), or null.
  dvpp::Dvpp* dvpp() { return dvpp_.get(); }
  MediaLauncher* media() { return media_.get(); }
  const cpu::CpuConfig* cpu_config() const { return cpus_.empty() ? nullptr : &cpu_cfg_; }
  // The peripherals' bus (its devices and their addresses), or null without CPUs.
  const mmio::MmioBus* mmio_bus() const { return mmio_bus_.get(); }
  // The RTL blocks (platform.rtl), in the scenario's order.
  const std::vector<std::unique_ptr<rtl::RtlBlock>>& rtl_blocks() const { return rtl_; }
  // Every RTL block: platform.rtl's, and vecacc when it runs as RTL.
  std::vector<const rtl::RtlBlock*> all_rtl() const {
    std::vector<const rtl::RtlBlock*> v;
    for (const auto& b : rtl_) v.push_back(b.get());
    if (vecacc_rtl_) v.push_back(vecacc_rtl_.get());
    return v;
  }
  // The run's output folder (for waveforms).
  void set_output_dir(const std::string& dir) {
    for (auto& b : rtl_) b->set_output_dir(dir);
    if (vecacc_rtl_) vecacc_rtl_->set_output_dir(dir);
  }
  // The first CPU fault, or "".
  const std::string& cpu_fault() const { return cpu_fault_; }

  std::vector<AddressRegion> address_map() const;
  // What the ring's debug reads answer for [addr, addr + len), in bulk (the launcher's checks):
  // DRAM's bytes with the L2 slices' lines over them. False, reading nothing, unless all of it is
  // DRAM outside every RTL block's region.
  bool bulk_read(std::uint64_t addr, std::uint8_t* out, std::uint64_t len) const;
  // Ring placement, for `dvp map`.
  struct Placement {
    std::string who;
    std::uint32_t stop;
    std::string role;
  };
  const std::vector<Placement>& placement() const { return placement_; }

 private:
  int route(std::uint64_t addr, unsigned src) const;

  dram::Config dram_cfg_;
  cache::L2Config l2_cfg_;
  ring::RingConfig ring_cfg_;
  std::uint64_t dram_base_;
  bool timing_only_;
  bool tlm_checks_ = false;  // debug.tlm_checks: a base-protocol checker on every binding
  std::unique_ptr<dram::AddressMapper> mapper_;
  std::unique_ptr<dram::Storage> storage_;
  cache::SliceHash hash_;

  std::unique_ptr<ring::Ring> ring_;
  std::unique_ptr<Level> l2_level_, dram_level_, req_level_, aicore_level_;
  aicore::AiCoreConfig aicore_cfg_;
  bool has_aicore_ = false;
  std::vector<std::unique_ptr<aicore::AiCore>> cores_;
  std::unique_ptr<KernelLauncher> launcher_;
  std::vector<std::unique_ptr<cache::L2Slice>> l2_;
  std::vector<std::unique_ptr<dram::Controller>> mcs_;
  std::vector<std::unique_ptr<tgen::TrafficGenerator>> gens_;

  // The build steps, in order.
  void read_config(const Scenario& s);
  void check_cross_rules(const cfg::Node& plat) const;
  void build_memory_system(const Scenario& s);
  void build_aicores(const cfg::Node& plat);
  KernelLauncher::MediaJobs media_jobs() const;
  void build_launcher(const Scenario& s);
  void build_cpus(const cfg::Node& cpu, const cfg::Node* firmware, const Scenario& s);
  void build_peripherals(const cfg::Node& cpu, const Scenario& s);
  void build_task_scheduler(const cfg::Node& cpu, const cfg::Node& ts);
  void build_arm_cores();
  void load_firmware(const cfg::Node& firmware, const Scenario& s);
  std::vector<char> read_image(const cfg::Node& firmware, const std::string& path, bool named) const;
  std::uint64_t place_raw(const cfg::Node& firmware, const std::vector<char>& bytes);  // returns the start
  std::uint64_t place_elf(const cfg::Node& firmware, const std::vector<char>& bytes, const std::string& path);
  void build_requesters(const Scenario& s);
  std::uint32_t requester_split(const tgen::TgenConfig& c, const cfg::Node& t, std::uint32_t i) const;
  void build_dvpp(const cfg::Node& d, const Scenario& s);
  void wire_dvpp(const cfg::Node& plat);
  void build_rtl(const cfg::Node& list, const Scenario& s);
  std::unique_ptr<rtl::RtlBlock> make_rtl(const rtl::RtlConfig& c, const cfg::Node& n, const cfg::Node& base_key);
  void place_rtl_target(rtl::RtlBlock& b, const cfg::Node& base_key);
  void check_in_mmio_window(std::uint64_t base, std::uint64_t size, const cfg::Node& key) const;
  void claim_irq_line(unsigned line, const cfg::Node& key);
  void build_vecacc(const cfg::Node& n);
  std::vector<unsigned> irq_lines_taken_;
  std::unique_ptr<vecacc::Vecacc> vecacc_;
  std::unique_ptr<rtl::RtlBlock> vecacc_rtl_;
  std::unique_ptr<Level> rtl_level_;
  std::vector<std::unique_ptr<rtl::RtlBlock>> rtl_;
  struct RtlRoute {
    std::uint64_t base, size;
    int dst;
  };
  std::vector<RtlRoute> rtl_routes_;  // ring destinations of the RTL targets
  cpu::CpuConfig cpu_cfg_;
  std::unique_ptr<Level> cpu_level_, periph_level_;
  std::unique_ptr<mmio::MmioBus> mmio_bus_;
  std::unique_ptr<irq::IrqController> irq_;
  std::unique_ptr<timer::Timer> timer_;
  std::unique_ptr<simctrl::SimCtrl> simctrl_;
  std::unique_ptr<ts::TaskScheduler> ts_;
  std::unique_ptr<dvpp::Dvpp> dvpp_;
  std::unique_ptr<MediaLauncher> media_;
  std::vector<std::unique_ptr<aicore::AiCoreCtrl>> aicore_ctrl_;
  std::vector<std::unique_ptr<uart::Uart>> uarts_;
  std::vector<std::unique_ptr<cpu::ArmCpu>> cpus_;
  std::string cpu_fault_;

  std::vector<int> hn_dst_, mn_dst_;  // ring destination index of each slice / controller
  std::vector<bool> src_is_hn_;
  std::vector<Placement> placement_;
};

}  // namespace dvp::platform
