// SPDX-License-Identifier: MIT
#include "axi.hpp"

#include <cctype>

#include "common/error.hpp"

namespace dvp::rtl {

namespace {

enum class Width { One, Len, Size, Burst, Resp, Prot, Addr, Data, Strb, Id };

struct SigSpec {
  const char* name;
  bool from_master;  // the master drives it
  bool required;     // without it the interface cannot work (others take the spec's default)
  bool axi4_only;    // not part of AXI4-Lite
  Width width;
};

// AXI4 (IHI 0022) signals the bridges use. Optional ones take the defaults of the
// specification's table A9-1 / "default signal values": AxLEN 0, AxSIZE the bus width, AxBURST
// INCR, IDs 0, xRESP OKAY, WSTRB all ones; xLAST is required once the interface has AxLEN.
constexpr SigSpec kSpec[kSigs] = {
    {"awvalid", true, true, false, Width::One},   {"awready", false, true, false, Width::One},
    {"awaddr", true, true, false, Width::Addr},   {"awid", true, false, true, Width::Id},
    {"awlen", true, false, true, Width::Len},     {"awsize", true, false, true, Width::Size},
    {"awburst", true, false, true, Width::Burst}, {"awprot", true, false, false, Width::Prot},
    {"wvalid", true, true, false, Width::One},    {"wready", false, true, false, Width::One},
    {"wdata", true, true, false, Width::Data},    {"wstrb", true, false, false, Width::Strb},
    {"wlast", true, false, true, Width::One},     {"bvalid", false, true, false, Width::One},
    {"bready", true, true, false, Width::One},    {"bid", false, false, true, Width::Id},
    {"bresp", false, false, false, Width::Resp},  {"arvalid", true, true, false, Width::One},
    {"arready", false, true, false, Width::One},  {"araddr", true, true, false, Width::Addr},
    {"arid", true, false, true, Width::Id},       {"arlen", true, false, true, Width::Len},
    {"arsize", true, false, true, Width::Size},   {"arburst", true, false, true, Width::Burst},
    {"arprot", true, false, false, Width::Prot},  {"rvalid", false, true, false, Width::One},
    {"rready", true, true, false, Width::One},    {"rdata", false, true, false, Width::Data},
    {"rid", false, false, true, Width::Id},       {"rresp", false, false, false, Width::Resp},
    {"rlast", false, false, true, Width::One},
};

std::string upper(std::string s) {
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The RTL's port for AXI signal `s`: the scenario's map, else prefix + name in lower or upper case.
Pin find(const Model& m, const AxiBinding& b, const SigSpec& s, std::string& tried) {
  if (auto it = b.ports.find(s.name); it != b.ports.end()) return tried = it->second, m.pin(it->second);
  tried = b.prefix + s.name;
  if (Pin p = m.pin(tried)) return p;
  if (Pin p = m.pin(b.prefix + upper(s.name))) return p;
  return m.pin(upper(b.prefix) + upper(s.name));
}

// What is wrong with a pin's width, or "".
std::string width_error(const SigSpec& s, unsigned bits, unsigned data_bits) {
  auto want = [&](unsigned w) {
    return bits == w ? std::string() : "is " + std::to_string(bits) + " bits, AXI says " + std::to_string(w);
  };
  switch (s.width) {
    case Width::One: return want(1);
    case Width::Len: return want(8);
    case Width::Size: return want(3);
    case Width::Burst:
    case Width::Resp: return want(2);
    case Width::Prot: return want(3);
    case Width::Strb: return want(data_bits / 8);
    case Width::Addr: return bits >= 1 && bits <= 64 ? "" : "is " + std::to_string(bits) + " bits (1 to 64 supported)";
    case Width::Id: return bits >= 1 && bits <= 32 ? "" : "is " + std::to_string(bits) + " bits (1 to 32 supported)";
    case Width::Data:
      return bits == 32 || bits == 64 || bits == 128 || bits == 256 || bits == 512
                 ? ""
                 : "is " + std::to_string(bits) + " bits (32, 64, 128, 256 or 512 supported)";
  }
  return "";
}

Protocol pick_protocol(const Model& m, const AxiBinding& b, const std::string& where) {
  if (b.protocol == "axi4") return Protocol::Axi4;
  if (b.protocol == "axi4lite") return Protocol::Axi4Lite;
  if (b.protocol != "auto")
    throw Error(where + ": protocol '" + b.protocol + "': use axi4, axi4lite or auto", kExitConfig);
  std::string tried;
  return find(m, b, kSpec[AWLEN], tried) || find(m, b, kSpec[ARLEN], tried) ? Protocol::Axi4 : Protocol::Axi4Lite;
}

}  // namespace

const char* sig_name(Sig s) { return kSpec[s].name; }

AxiPort bind_axi(const Model& m, const AxiBinding& b, Role role, const std::string& where) {
  AxiPort a;
  a.where = where, a.role = role, a.protocol = pick_protocol(m, b, where);
  std::string problems, tried;
  if (Pin d = find(m, b, kSpec[WDATA], tried)) a.data_bytes = d.bits() / 8;
  for (unsigned i = 0; i < kSigs; ++i) {
    const SigSpec& s = kSpec[i];
    if (a.protocol == Protocol::Axi4Lite && s.axi4_only) continue;
    Pin p = find(m, b, s, tried);
    const bool last = (i == WLAST || i == RLAST) && a.protocol == Protocol::Axi4;
    if (!p && b.ports.count(s.name)) {
      problems += "\n  ports: " + std::string(s.name) + " names " + tried + ", which the RTL does not have";
      continue;
    }
    if (!p) {
      if (s.required || last) problems += "\n  missing " + tried + " (" + upper(s.name) + ")";
      continue;
    }
    const bool rtl_drives = s.from_master == (role == Role::Master);
    if (p.is_input() == rtl_drives)
      problems += "\n  " + tried + " is an " + (p.is_input() ? "input" : "output") + "; an AXI " +
                  (role == Role::Slave ? "slave" : "master") + (rtl_drives ? " drives it" : " receives it");
    if (std::string w = width_error(s, p.bits(), a.data_bytes * 8); !w.empty()) problems += "\n  " + tried + " " + w;
    a.pin[i] = p;
  }
  if (a.pin[RDATA] && a.pin[WDATA] && a.pin[RDATA].bits() != a.pin[WDATA].bits())
    problems += "\n  rdata and wdata differ in width";
  for (Sig id : {AWID, BID, ARID, RID})
    if (a.pin[id]) a.id_bits = std::max(a.id_bits, a.pin[id].bits());
  if (a.pin[AWADDR]) a.addr_bits = a.pin[AWADDR].bits();
  while ((1u << a.size_log2) < a.data_bytes) ++a.size_log2;
  if (!problems.empty())
    throw Error(where + ": not an AXI " + (a.protocol == Protocol::Axi4 ? "4" : "4-Lite") + " " +
                    (role == Role::Slave ? "slave" : "master") + " interface:" + problems +
                    "\n  (its ports: " + m.port_names() + "; name them with prefix: or ports:)",
                kExitConfig);
  return a;
}

Beat beat_of(std::uint64_t start, unsigned size_log2, unsigned len, Burst burst, unsigned beat, unsigned bus_bytes) {
  const std::uint64_t nb = std::uint64_t(1) << size_log2, aligned = start & ~(nb - 1);
  std::uint64_t a = start;
  if (burst != kFixed && beat > 0) {
    a = aligned + beat * nb;
    if (burst == kWrap) {
      const std::uint64_t total = nb * (len + 1), boundary = start / total * total;
      if (a >= boundary + total) a = boundary + (a - boundary) % total;
    }
  }
  const unsigned lo = unsigned(a % bus_bytes);
  const unsigned hi = unsigned((a & ~(nb - 1)) % bus_bytes + nb);
  return Beat{a, lo, hi};
}

}  // namespace dvp::rtl
