// SPDX-License-Identifier: MIT
#include "ring.hpp"

#include "common/error.hpp"
#include "common/payload.hpp"

namespace dvp::ring {

Ring::Ring(sc_core::sc_module_name name, const RingConfig& cfg)
    : sc_module(name),
      targets_in("targets_in"),
      initiators_out("initiators_out"),
      timing_(cfg),
      stats_(*this),
      transactions_(stats_.counter("transactions", "transactions routed")),
      unmapped_(stats_.counter("unmapped", "transactions to an address with no target")) {
  targets_in.register_b_transport(this, &Ring::b_transport);
  targets_in.register_transport_dbg(this, &Ring::transport_dbg);
  targets_in.register_get_direct_mem_ptr(this, &Ring::get_direct_mem_ptr);
  stats_.formula("max_link_busy_fraction", "busiest link channel: busy time / simulated time",
                 [this] { return max_link_busy_fraction(); });
  stats_.json("links", "per link and channel: bytes and busy fraction", [this] {
    nlohmann::json a = nlohmann::json::array();
    const std::uint32_t n = timing_.config().stops;
    Tick now = now_tick();
    const char* ch_names[] = {"req", "rsp", "dat"};
    for (std::size_t i = 0; i < timing_.links(); ++i) {
      std::uint32_t from = std::uint32_t(i % n);
      unsigned dir = unsigned(i / n);
      std::uint32_t to = dir == 0 ? (from + 1) % n : (from + n - 1) % n;
      nlohmann::json l = {{"from", from}, {"to", to}, {"dir", dir == 0 ? "cw" : "ccw"}};
      for (unsigned c = 0; c < kChannels; ++c) {
        l[std::string(ch_names[c]) + "_bytes"] = timing_.link_stats(i).bytes[c];
        l[std::string(ch_names[c]) + "_busy_fraction"] =
            now ? double(timing_.link_busy(i, Channel(c))) / double(now) : 0.0;
      }
      a.push_back(l);
    }
    return a;
  });
}

double Ring::max_link_busy_fraction() const {
  Tick now = now_tick();
  if (!now) return 0.0;
  Tick worst = 0;
  for (std::size_t i = 0; i < timing_.links(); ++i)
    for (unsigned c = 0; c < kChannels; ++c) worst = std::max(worst, timing_.link_busy(i, Channel(c)));
  return double(worst) / double(now);
}

void Ring::b_transport(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  const int dst = router_ ? router_(p.get_address(), unsigned(id)) : -1;
  if (dst < 0) {
    ++unmapped_;
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  ++transactions_;
  const std::uint32_t s = src_stops_[id], d = dst_stops_[dst];
  const std::uint32_t hdr = timing_.config().header_bytes;
  const std::uint32_t len = p.get_data_length();
  const Tick now = now_tick();
  Tick t = now + to_tick(delay);
  if (p.is_write()) {
    // Request and its data travel together on their own channels; the target starts when
    // both have arrived.
    Tick a = timing_.transfer(s, d, kReq, hdr, t);
    Tick b = timing_.transfer(s, d, kDat, len, t);
    t = std::max(a, b);
  } else {
    t = timing_.transfer(s, d, kReq, hdr, t);
  }
  delay = to_sc(t - now);
  initiators_out[dst]->b_transport(p, delay);
  if (p.get_response_status() != tlm::TLM_OK_RESPONSE) return;
  t = now_tick() + to_tick(delay);
  // A write's answer, a stash's (the data stays in the L2) and a discard's is a response flit; a
  // read's is its data.
  const bool no_data = p.is_write() || is_stash(p) || is_discard(p);
  t = no_data ? timing_.transfer(d, s, kRsp, hdr, t) : timing_.transfer(d, s, kDat, len, t);
  delay = to_sc(t - now_tick());
}

unsigned Ring::transport_dbg(int id, tlm::tlm_generic_payload& p) {
  const int dst = router_ ? router_(p.get_address(), unsigned(id)) : -1;
  if (dst < 0) return 0;
  return initiators_out[dst]->transport_dbg(p);
}

bool Ring::get_direct_mem_ptr(int id, tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi) {
  // DMI would bypass the L2 (and so its dirty lines): the ring grants none. CPUs that want DMI
  // to DRAM get it from the platform's DRAM port, not through the cache hierarchy.
  return false;
}

}  // namespace dvp::ring
