// SPDX-License-Identifier: MIT
// AXI slave pins -> TLM initiator, serving an RTL master. Each burst the RTL starts (INCR, WRAP
// or FIXED, narrow or full width, unaligned starts) becomes TLM transactions into the platform
// (the ring, L2, DRAM) at the edge it was accepted, line by line; the memory system's delay
// decides when each R beat may be presented, and when B is. Reads answer in the order accepted,
// writes too (legal for any set of IDs). Several bursts are outstanding, up to `outstanding`
// per direction; READY goes low when they are.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "checker.hpp"
#include "port_stats.hpp"

namespace dvp::rtl {

class MasterBridge {
 public:
  // Moves [addr, addr + len), which never crosses a line, through the platform from `at` on;
  // returns when it completed and sets `resp` (an AXI response) from the TLM status.
  using Transport =
      std::function<Tick(bool write, std::uint64_t addr, std::uint8_t* data, unsigned len, Tick at, unsigned& resp)>;
  // `timeout_cycles`: how long W beats may wait for their write address.
  MasterBridge(const AxiPort& port, AxiChecker& checker, PortStats& stats, const Clock& clock, unsigned outstanding,
               unsigned line_bytes, Transport transport, std::uint64_t timeout_cycles = 1000000);

  bool busy() const;
  void sample(Tick edge);
  void drive(Tick next_edge);

 private:
  struct Req {
    bool write = false;
    std::uint32_t id = 0;
    std::uint64_t addr = 0;
    unsigned len = 0, size = 0;
    Burst burst = kIncr;
    Tick accepted = 0;
    std::uint64_t lo = 0;  // the bytes the burst touches: [lo, lo + span)
    // Its data: by address, or for a FIXED burst (every beat at one address: a FIFO, a
    // register) beat after beat, `stride` bytes each, each beat its own TLM transaction.
    std::uint64_t span = 0, stride = 0;
    std::vector<std::uint8_t> bytes, mask;
    std::vector<Tick> beat_ready;  // reads: when each beat's bytes are back
    Tick ready = 0;                // writes: when B may go
    unsigned beats = 0, resp = kOkay;
  };
  struct WBeat {
    std::vector<std::uint8_t> data, strb;
    bool last;
  };
  bool accept(Req& r, Sig base, Tick edge);
  bool legal(const Req& r, Sig base, Tick edge);
  void span(Req& r) const;
  void issue_read(Req& r, Tick edge);
  void write_beat(Req& r, const WBeat& w, Tick edge);
  void issue_write(Req& r, Tick edge);
  void write_runs(Req& r, std::uint64_t from, std::uint64_t to, Tick edge);
  std::size_t at(const Req& r, unsigned beat, std::uint64_t addr) const {
    return std::size_t(beat * r.stride + (addr - r.lo));
  }
  void take_w(Tick edge);
  void drive_r(Tick next_edge);

  const AxiPort& port_;
  AxiChecker& checker_;
  PortStats& stats_;
  Clock clock_;
  unsigned outstanding_, line_bytes_;
  Transport transport_;
  std::deque<Req> reads_, writes_, responses_;
  std::deque<WBeat> early_w_;  // W beats before their AW (AXI allows it)
  std::uint64_t timeout_cycles_, orphan_cycles_ = 0;
  bool r_offered_ = false, b_offered_ = false;
  std::vector<std::uint8_t> beat_;
};

}  // namespace dvp::rtl
