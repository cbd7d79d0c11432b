// SPDX-License-Identifier: MIT
// The pins of one AXI4 or AXI4-Lite interface on an RTL model, found by name (a prefix such as
// s_axi_ or m_axi_, or a map from the scenario) and checked against the AXI specification's
// widths and directions: one table of signals, one binding function, one clear error.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "model.hpp"

namespace dvp::rtl {

enum class Protocol { Axi4, Axi4Lite };
// Which side of the interface the RTL is on.
enum class Role { Slave, Master };

// The AXI signals the bridges use, in the specification's names (lower case).
enum Sig : unsigned {
  AWVALID,
  AWREADY,
  AWADDR,
  AWID,
  AWLEN,
  AWSIZE,
  AWBURST,
  AWPROT,
  WVALID,
  WREADY,
  WDATA,
  WSTRB,
  WLAST,
  BVALID,
  BREADY,
  BID,
  BRESP,
  ARVALID,
  ARREADY,
  ARADDR,
  ARID,
  ARLEN,
  ARSIZE,
  ARBURST,
  ARPROT,
  RVALID,
  RREADY,
  RDATA,
  RID,
  RRESP,
  RLAST,
  kSigs
};
const char* sig_name(Sig s);  // "awvalid"

// AXI burst types (AxBURST).
enum Burst : unsigned { kFixed = 0, kIncr = 1, kWrap = 2 };
// Responses (xRESP).
enum Resp : unsigned { kOkay = 0, kExOkay = 1, kSlvErr = 2, kDecErr = 3 };

struct AxiPort {
  std::string where;  // "rtl acc0 port s_axi_", for messages
  Protocol protocol = Protocol::Axi4;
  Role role = Role::Slave;
  unsigned data_bytes = 4, addr_bits = 32, id_bits = 0;
  unsigned size_log2 = 2;  // AxSIZE of a full-width beat: log2(data_bytes)
  std::array<Pin, kSigs> pin;
  const Pin& operator[](Sig s) const { return pin[s]; }
  bool has(Sig s) const { return bool(pin[s]); }
  // A signal's value, or the specification's default when the RTL has no such port.
  std::uint64_t get(Sig s, std::uint64_t dflt = 0) const { return pin[s] ? pin[s].get() : dflt; }
  void set(Sig s, std::uint64_t v) const {
    if (pin[s]) pin[s].set(v);
  }
  unsigned max_beats() const { return protocol == Protocol::Axi4 ? 256 : 1; }
};

struct AxiBinding {
  std::string prefix;                        // s_axi_, m_axi_ ...
  std::map<std::string, std::string> ports;  // AXI name (awvalid) -> RTL port name
  std::string protocol = "auto";             // axi4, axi4lite, auto (AXI4 when it has AxLEN)
};

// Finds and checks the pins; throws dvp::Error (exit code 2) listing every port that is missing,
// has the wrong width or the wrong direction.
AxiPort bind_axi(const Model& m, const AxiBinding& b, Role role, const std::string& where);

// The byte address of beat `beat` of a burst, and the byte lanes it uses (AXI4 A3.4.1).
struct Beat {
  std::uint64_t addr;         // the first byte the beat moves
  unsigned lane_lo, lane_hi;  // byte lanes [lo, hi) of the data bus
};
Beat beat_of(std::uint64_t start, unsigned size_log2, unsigned len, Burst burst, unsigned beat, unsigned bus_bytes);

}  // namespace dvp::rtl
