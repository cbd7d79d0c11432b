// SPDX-License-Identifier: MIT
// The ring interconnect as a TLM-2.0 module. Initiators (requesters, and home nodes for their
// memory traffic) bind to `targets_in`; home nodes, memory nodes and MMIO devices are bound
// to `initiators_out`. The platform tells the ring which stop each socket sits on and how to
// route an address; the ring adds the request, data and response transfer times.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <systemc>
#include <tlm>

#include "common/stats.hpp"
#include "ring_timing.hpp"
#include "tlmcheck/checker.hpp"

namespace dvp::ring {

class Ring : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Ring> targets_in;
  tlm_utils::multi_passthrough_initiator_socket<Ring> initiators_out;

  // Returns the index of the destination (in the order connect_target was called) for an
  // address coming from source `src`, or -1 when nothing is mapped there.
  using Router = std::function<int(std::uint64_t addr, unsigned src)>;

  Ring(sc_core::sc_module_name name, const RingConfig& cfg);

  // Binds an initiator socket to the ring at `stop`; returns its source index.
  // With checks on, each binding gets a TLM base-protocol checker (debug.tlm_checks).
  void set_tlm_checks(bool on) { tlm_checks_ = on; }

  template <typename Socket>
  unsigned connect_initiator(Socket& s, std::uint32_t stop, const std::string& who) {
    tlmcheck::bind_checked(s, targets_in, tlm_checks_, who + " -> ring", checkers_);
    src_stops_.push_back(stop);
    src_names_.push_back(who);
    return unsigned(src_stops_.size() - 1);
  }
  // Binds a target socket at `stop`; returns its destination index.
  template <typename Socket>
  unsigned connect_target(Socket& s, std::uint32_t stop, const std::string& who) {
    tlmcheck::bind_checked(initiators_out, s, tlm_checks_, "ring -> " + who, checkers_);
    dst_stops_.push_back(stop);
    dst_names_.push_back(who);
    return unsigned(dst_stops_.size() - 1);
  }
  void set_router(Router r) { router_ = std::move(r); }
  unsigned sources() const { return unsigned(src_stops_.size()); }

  RingTiming& timing() { return timing_; }
  double max_link_busy_fraction() const;

 private:
  void b_transport(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  unsigned transport_dbg(int id, tlm::tlm_generic_payload& p);
  bool get_direct_mem_ptr(int id, tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi);

  RingTiming timing_;
  Router router_;
  std::vector<std::uint32_t> src_stops_, dst_stops_;
  std::vector<std::string> src_names_, dst_names_;
  stats::Group stats_;
  std::uint64_t &transactions_, &unmapped_;
  bool tlm_checks_ = false;
  tlmcheck::Checkers checkers_;
};

}  // namespace dvp::ring
