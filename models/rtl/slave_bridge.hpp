// SPDX-License-Identifier: MIT
// TLM target -> AXI master pins, driving an RTL slave. A TLM read or write of any length becomes
// INCR bursts of the bus width (at most 256 beats, never across 4 KiB; single beats on
// AXI4-Lite), byte strobes for the bytes it does not cover, one ID per burst so several are
// outstanding, R and B matched by ID. The block clocks the RTL until the last burst is answered;
// the cycles it took are the TLM delay.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include <tlm>

#include "checker.hpp"
#include "port_stats.hpp"

namespace dvp::rtl {

class SlaveBridge {
 public:
  SlaveBridge(const AxiPort& port, AxiChecker& checker, PortStats& stats, const Clock& clock, unsigned outstanding);

  // Starts serving `p` at RTL address `addr` (the region's offset) from the edge at `t` on.
  // Returns false, with the response status set, for an access AXI cannot carry to this RTL: a
  // write of part of a beat to a slave without WSTRB, a streaming (FIXED-address) access.
  bool begin(tlm::tlm_generic_payload& p, std::uint64_t addr, Tick t);
  bool busy() const { return answered_ < bursts_.size(); }
  void sample(Tick edge);
  void drive(Tick next_edge);
  // The response status, once not busy.
  tlm::tlm_response_status status() const { return status_; }
  // Which channel the current access waits on, for a timeout report.
  std::string waiting_on() const;
  // Drives every VALID low (reset, idle).
  void idle();

 private:
  struct Burst {
    std::uint64_t addr;  // bus-aligned
    unsigned beats, id;
    unsigned done = 0;  // beats answered (R) or sent (W)
    unsigned resp = 0;  // the worst response of its beats
    Tick issued = 0;
    bool answered = false;
  };
  // The TLM bytes of beat `k` of burst `b`: [lo, hi) lanes map to data_[off + lane].
  void lanes(const Burst& b, unsigned k, unsigned& lo, unsigned& hi, std::int64_t& off) const;
  bool enabled(std::int64_t i) const;
  void take_read_beat(Tick edge);
  void take_write_response(Tick edge);
  Burst* pop_outstanding(std::map<std::uint32_t, std::deque<unsigned>>& q, Sig id_sig, Tick edge);
  void answered(Burst& b, unsigned resp, Tick edge);
  void drive_address();
  void drive_write();

  const AxiPort& port_;
  AxiChecker& checker_;
  PortStats& stats_;
  Clock clock_;
  unsigned outstanding_;
  bool write_ = false;
  std::uint64_t addr_ = 0, len_ = 0;
  std::uint8_t* data_ = nullptr;
  const std::uint8_t* be_ = nullptr;
  unsigned be_len_ = 0;
  std::vector<std::uint8_t> scratch_, beat_, strb_;
  std::vector<Burst> bursts_;
  std::size_t next_a_ = 0, next_w_ = 0, answered_ = 0;
  unsigned w_beat_ = 0, w_strobed_ = 0;
  bool a_offered_ = false, w_offered_ = false;
  std::map<std::uint32_t, std::deque<unsigned>> waiting_;  // ID -> bursts awaiting R or B, in order
  unsigned next_id_ = 0;
  tlm::tlm_response_status status_ = tlm::TLM_OK_RESPONSE;
};

}  // namespace dvp::rtl
