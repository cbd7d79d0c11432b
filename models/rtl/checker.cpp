// SPDX-License-Identifier: MIT
#include "checker.hpp"

namespace dvp::rtl {

AxiChecker::AxiChecker(const AxiPort& port, stats::Group& stats, const std::string& prefix, Fail fail)
    : port_(port), fail_(std::move(fail)) {
  const bool master = port.role == Role::Master;
  auto add = [&](const char* name, Sig v, Sig r, std::vector<Sig> payload, bool from_master) {
    std::vector<Sig> present;
    for (Sig s : payload)
      if (port.has(s)) present.push_back(s);
    std::uint64_t& stalls = stats.counter(prefix + name + "_stall_cycles",
                                          std::string("cycles the ") + name + " channel had VALID without READY");
    ch_.push_back(Channel{v, r, present, from_master == master, &stalls, false, {}});
  };
  add("aw", AWVALID, AWREADY, {AWADDR, AWID, AWLEN, AWSIZE, AWBURST, AWPROT}, true);
  add("w", WVALID, WREADY, {WDATA, WSTRB, WLAST}, true);
  add("b", BVALID, BREADY, {BID, BRESP}, false);
  add("ar", ARVALID, ARREADY, {ARADDR, ARID, ARLEN, ARSIZE, ARBURST, ARPROT}, true);
  add("r", RVALID, RREADY, {RDATA, RID, RRESP, RLAST}, false);
}

void AxiChecker::snapshot(const Channel& c, std::vector<std::uint8_t>& out) const {
  out.clear();
  for (Sig s : c.payload) {
    const Pin& p = port_[s];
    const std::size_t at = out.size();
    out.resize(at + (p.bits() + 7) / 8);
    p.get_bytes(out.data() + at, unsigned(out.size() - at));
  }
}

// A channel the RTL drives that had VALID without READY at the last edge.
void AxiChecker::check_held(Tick edge, Channel& c) {
  if (!port_.get(c.valid)) return violation(edge, c.valid, "VALID dropped before READY (AXI4 A3.2.1)");
  snapshot(c, scratch_);
  if (scratch_ == c.snap) return;
  std::size_t at = 0;
  for (Sig s : c.payload) {
    const std::size_t n = (port_[s].bits() + 7) / 8;
    if (!std::equal(scratch_.begin() + long(at), scratch_.begin() + long(at + n), c.snap.begin() + long(at)))
      return violation(edge, s, "payload changed while VALID and not READY (AXI4 A3.2.1)");
    at += n;
  }
}

void AxiChecker::sample(Tick edge) {
  for (Channel& c : ch_) {
    if (c.rtl_drives && c.held) check_held(edge, c);
    const bool stalled = port_.get(c.valid) && !port_.get(c.ready);
    if (stalled) ++*c.stalls;
    if (c.rtl_drives && stalled && !c.held) snapshot(c, c.snap);
    c.held = stalled;
  }
}

void AxiChecker::violation(Tick t, Sig s, const std::string& rule) const {
  const Pin& p = port_[s];
  fail_(port_.where + ": AXI protocol violation at " + format_ns(t) + ", signal " + (p ? p.name() : sig_name(s)) +
        " (" + sig_name(s) + "): " + rule);
}

}  // namespace dvp::rtl
