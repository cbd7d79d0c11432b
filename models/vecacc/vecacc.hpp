// SPDX-License-Identifier: MIT
// vecacc, the TLM model: the twin of vecacc.v (the worked example of RTL co-simulation,
// docs/rtl-cosim.md). Same registers (vecacc_regs.h), same work in the same chunks (at most
// max_beats beats of the bus, never across 4 KiB), same values; its time comes from the clock,
// the bus width and the cycles its control spends per bus phase, and from the ring's answers to
// its requests. platform.vecacc.model picks this model or the Verilog behind the bridges.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "common/config.hpp"
#include "common/stats.hpp"
#include "common/time.hpp"
#include "common/trace.hpp"
#include "mmio/mmio.hpp"

namespace dvp::irq {
class IrqController;
}

namespace dvp::vecacc {

struct VecaccConfig {
  bool rtl = false;  // model: rtl
  std::uint64_t base = 0;
  std::uint32_t stop = 0, irq = 2;
  Clock clock;
  std::uint32_t bus_bytes = 16, max_beats = 16, phase_cycles = 2;
  std::string plugin, waves;

  static void describe(cfg::Spec& s);
  static VecaccConfig from(const cfg::Node& n);
};

class Vecacc : public mmio::Device {
 public:
  tlm_utils::simple_initiator_socket<Vecacc> mem;  // to the ring

  // `line_bytes`: the largest request the ring takes. Its data moves in timing-only runs too:
  // the firmware reads what it wrote, as it reads what the RTL twin wrote.
  Vecacc(sc_core::sc_module_name name, const VecaccConfig& cfg, unsigned line_bytes, double access_ns);
  std::string device_kind() const override { return "vecacc"; }
  void connect_irq(irq::IrqController* irq, unsigned line) { irq_ = irq, irq_line_ = line; }

 private:
  void run();
  void operate();
  std::uint32_t chunk_beats(std::uint64_t a, std::uint64_t b, std::uint64_t d, std::uint32_t left) const;
  Tick phase(bool write, std::uint64_t addr, std::uint8_t* data, std::uint32_t bytes, Tick start, bool& ok);
  void set_irq();

  VecaccConfig cfg_;
  unsigned line_bytes_;
  mmio::Register ctrl_, status_, src_a_lo_, src_a_hi_, src_b_lo_, src_b_hi_, dst_lo_, dst_hi_, count_, op_, scale_,
      cycles_, id_;
  bool busy_ = false, done_ = false, error_ = false;
  sc_core::sc_event start_;
  irq::IrqController* irq_ = nullptr;
  unsigned irq_line_ = 0;
  bool irq_level_ = false;
  std::vector<std::uint8_t> a_, b_, out_;
  stats::Group stats_;
  std::uint64_t &ops_, &elements_, &busy_ps_;
  Tracer::Lane lane_;
};

}  // namespace dvp::vecacc
