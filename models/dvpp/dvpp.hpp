// SPDX-License-Identifier: MIT
// DVPP, the media engines: one device with MMIO registers (a submission queue per engine in
// memory, its doorbell, counters of commands taken, done and failed, one interrupt line) and a
// TLM initiator on the ring through which its channels read their commands and inputs and
// write their outputs and results, competing with the AI Cores for the L2 and DRAM. Nothing
// else reaches memory: whatever answers for an address (DRAM, an RTL block) sees every access. An engine has `channels`
// hardware instances; each takes the next command, reads the input, decodes it (codec.hpp: real pixels from
// libjpeg-turbo / libpng), and writes the picture in stripes as its pixels come out over the frame's time (DvppConfig:
// the published per-channel rate). A bad input is a status in the command and a count in ERRORS; the other channels go
// on. Register map: docs/peripherals.md; the command: struct dvpp_cmd in firmware/bsp/dvp_abi.h.
#pragma once
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "common/stats.hpp"
#include "common/trace.hpp"
#include "dvpp_config.hpp"
#include "irq/irq_controller.hpp"
#include "mmio/mmio.hpp"

namespace dvp::dvpp {

class Dvpp : public mmio::Device {
 public:
  tlm_utils::simple_initiator_socket<Dvpp> mem;  // to the ring: commands, inputs, outputs, results

  struct Wiring {
    irq::IrqController* irq = nullptr;  // none in bare mode
    unsigned irq_line = 31;
    std::uint32_t line_bytes = 128;  // requests never cross an L2 line
    bool functional = true;          // false: timing-only, outputs move no bytes
    double access_ns = 0;            // one register access
  };
  Dvpp(sc_core::sc_module_name name, const DvppConfig& cfg, const Wiring& w);
  ~Dvpp() override;
  std::string device_kind() const override { return "dvpp"; }
  // Its interrupt line (the interrupt controller is built after it).
  void connect_irq(irq::IrqController* irq, unsigned line) {
    w_.irq = irq;
    w_.irq_line = line;
  }

  // Register offsets.
  static constexpr std::uint32_t kEngineBase = 0x100, kEngineStride = 0x40, kSize = 0x400;

  // One command as it ran.
  struct Frame {
    dvpp_engine engine;
    unsigned channel;
    std::uint32_t tag;
    dvpp_status status;
    std::string reason;
    std::uint32_t width = 0, height = 0, frames = 0;  // frames: pictures written
    std::uint64_t in_bytes = 0, out_bytes = 0;
    Tick start = 0, end = 0;
  };
  const std::vector<Frame>& frames() const { return frames_; }
  // Commands completed by `e` (its DONE register); notified at every completion.
  std::uint32_t done(dvpp_engine e) const;
  const sc_core::sc_event& completion() const { return completion_; }
  const DvppConfig& config() const { return cfg_; }
  // A queue entry that cannot be read or written: the run stops with it.
  const std::string& error() const { return error_; }

 private:
  struct Engine;
  void channel_thread(Engine& e, unsigned ch);
  void run_command(Engine& e, unsigned ch, std::uint64_t at);
  Decoded decode(const EngineConfig& c, const dvpp_cmd& cmd, Tick& read_done, std::uint64_t& in_read);
  Tick write_spans(const Decoded& d, std::uint64_t addr, Tick from, Tick to, bool& ok);
  Tick write_frames(Engine& e, const Decoded& d, std::uint64_t addr, Tick start, std::uint64_t in_bytes, bool& ok);
  Tick write_out(const std::uint8_t* data, std::uint64_t len, std::uint64_t addr, Tick from, Tick to, bool& ok);
  Tick dma(bool write, std::uint64_t addr, std::uint8_t* data, std::uint64_t len, Tick start, bool& ok, bool carry);
  bool command_io(bool write, std::uint64_t at, dvpp_cmd& cmd, const std::string& who);
  void finish(Engine& e, const Frame& f);
  void update_irq();
  void fail(const std::string& msg);

  DvppConfig cfg_;
  Wiring w_;
  std::vector<std::unique_ptr<Engine>> engines_;
  mmio::Register engines_reg_, irq_status_;
  std::vector<Frame> frames_;
  std::vector<std::uint8_t> scratch_;
  sc_core::sc_event completion_;
  std::string error_;
};

}  // namespace dvp::dvpp
