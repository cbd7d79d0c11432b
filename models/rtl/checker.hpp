// SPDX-License-Identifier: MIT
// The AXI protocol checker on one bridge port. Each clock edge it looks at all five channels:
// counts the cycles each one stalls (VALID without READY), and on the channels the RTL drives
// checks the handshake rules of AXI4 A3.2.1: once VALID is up it stays up until READY, and the
// payload holds still meanwhile. The bridges report the rules that need their state (WLAST on
// the wrong beat, a burst across 4 KiB, a response to an ID with nothing outstanding) through
// violation(). A violation stops the run naming time, port, signal and rule.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "axi.hpp"
#include "common/stats.hpp"
#include "common/time.hpp"

namespace dvp::rtl {

class AxiChecker {
 public:
  using Fail = std::function<void(const std::string&)>;
  AxiChecker(const AxiPort& port, stats::Group& stats, const std::string& prefix, Fail fail);

  // Called just before the rising edge at `edge`, when every signal has settled.
  void sample(Tick edge);
  void violation(Tick t, Sig s, const std::string& rule) const;

 private:
  struct Channel {
    Sig valid, ready;
    std::vector<Sig> payload;
    bool rtl_drives;
    std::uint64_t* stalls;
    bool held = false;  // VALID without READY at the last edge
    std::vector<std::uint8_t> snap;
  };
  void snapshot(const Channel& c, std::vector<std::uint8_t>& out) const;
  void check_held(Tick edge, Channel& c);

  const AxiPort& port_;
  Fail fail_;
  std::vector<Channel> ch_;
  std::vector<std::uint8_t> scratch_;
};

}  // namespace dvp::rtl
