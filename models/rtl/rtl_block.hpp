// SPDX-License-Identifier: MIT
// An RTL block: a Verilated model (a plug-in) behind the platform's TLM sockets. Its target
// socket serves accesses through an AXI4 / AXI4-Lite slave bridge, its initiator socket carries
// its AXI master's bursts into the ring, its irq output drives an interrupt line.
//
// The block owns the RTL's clock. It runs while the block has work (an access being served, a
// burst in flight, a VALID the RTL drives, its busy output, idle_cycles after the last of
// these, or always) and stops otherwise, so a scenario that rarely touches the RTL pays for
// it rarely. The RTL runs ahead of SystemC by at most a quantum and syncs at each crossing: an
// access from the platform first brings the RTL to the access's time, then clocks it until the
// answer (the cycles are the access's delay); a burst it starts enters the ring at the edge it
// was accepted. Direct memory pointers are refused: every access crosses the bridge.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>

#include "checker.hpp"
#include "common/stats.hpp"
#include "common/trace.hpp"
#include "master_bridge.hpp"
#include "model.hpp"
#include "rtl_config.hpp"
#include "slave_bridge.hpp"

namespace dvp::irq {
class IrqController;
}

namespace dvp::rtl {

class RtlBlock : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<RtlBlock, 32, tlm::tlm_base_protocol_types, 0,
                                             sc_core::SC_ZERO_OR_MORE_BOUND>
      target;
  tlm_utils::simple_initiator_socket_optional<RtlBlock> mem;

  // `line_bytes`: the largest request the ring takes (an L2 line; never crossed).
  RtlBlock(sc_core::sc_module_name name, const RtlConfig& cfg, unsigned line_bytes);
  ~RtlBlock() override;

  const RtlConfig& config() const { return cfg_; }
  // The run's output folder: a relative `waves` path is in it.
  void set_output_dir(const std::string& dir) { out_dir_ = dir; }
  // Records whether accesses through the next binding of `target` carry absolute addresses
  // (the ring) or offsets from the region's base (the peripherals' bus).
  void note_binding(bool absolute) { absolute_.push_back(absolute); }
  void connect_irq(irq::IrqController* irq, unsigned line) { irq_ = irq, irq_line_ = line; }
  const Model& model() const { return *model_; }
  // The AXI4 master's data bus in bytes (0 without an initiator).
  unsigned initiator_data_bytes() const { return iport_ ? iport_->data_bytes : 0; }
  std::uint64_t cycles() const { return cycles_; }

 private:
  void find_control_pins();
  void run();
  void reset();
  void cycle();
  bool has_work() const;
  void catch_up(Tick t);
  void fail(const std::string& what);
  void b_transport(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  Tick transport(bool write, std::uint64_t addr, std::uint8_t* data, unsigned len, Tick at, unsigned& resp);
  void start_of_simulation() override;
  void end_of_simulation() override;

  RtlConfig cfg_;
  std::string out_dir_ = ".";
  std::unique_ptr<Model> model_;
  Pin clk_, rst_, busy_, irq_pin_;
  bool rst_low_ = true;
  stats::Group stats_;
  std::uint64_t &cycles_, &wakeups_, &accesses_;
  std::unique_ptr<AxiPort> tport_, iport_;
  std::unique_ptr<PortStats> tstats_, istats_;
  std::unique_ptr<AxiChecker> tcheck_, icheck_;
  std::unique_ptr<SlaveBridge> slave_;
  std::unique_ptr<MasterBridge> master_;
  std::vector<bool> absolute_;
  irq::IrqController* irq_ = nullptr;
  unsigned irq_line_ = 0;
  bool irq_level_ = false;
  Tick next_edge_ = 0;      // the next rising edge the RTL will see
  std::uint64_t idle_ = 0;  // cycles since the last activity
  bool in_cycle_ = false, failed_ = false;
  sc_core::sc_event wake_;
  Tracer::Lane clock_lane_, target_lane_;
  Tick clocked_from_ = 0;
  tlm::tlm_generic_payload req_;
};

}  // namespace dvp::rtl
