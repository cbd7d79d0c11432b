// SPDX-License-Identifier: MIT
// A TLM-2.0 base-protocol checker: a pass-through module that sits on one binding (initiator
// socket -> checker -> target socket) and checks each transaction against the rules of the
// blocking and debug transport interfaces and of DMI (IEEE 1666-2011, clause 14). A broken
// request is answered GENERIC_ERROR and not passed on. One project rule is stricter than the
// standard: a target must set the response status (none of ours may leave it INCOMPLETE).
//
//   request   command READ, WRITE or IGNORE; a data pointer and a non-zero length (but for
//             IGNORE); response
//             status INCOMPLETE on entry; streaming width > 0; byte enables 0x00 / 0xff only,
//             with a non-zero length when given; dmi_allowed false on entry; address + length
//             within 64 bits; the payload not already in flight (no reuse before it returns);
//             gp_option not FULL_PAYLOAD_ACCEPTED (the target's answer)
//   response  the status set (not INCOMPLETE); command, data pointer, data length, byte
//             enables and streaming width unchanged; the contents of a write's data and of
//             the byte-enable array unchanged; gp_option unchanged, or FULL_PAYLOAD answered
//             FULL_PAYLOAD_ACCEPTED; the end (the time after the call plus the delay) not
//             before the start (the call's time plus the delay given)
//   debug     command READ, WRITE or IGNORE; a data pointer unless the length is 0; at most the
//             length transferred
//   DMI       a grant has a pointer, a range holding the address and the access asked for;
//             a refusal still a range holding the address; an
//             invalidation a range with start <= end
//
// `bind_checked` puts a checker on a binding when checks are on (debug.tlm_checks) and binds
// straight through otherwise, so a run without checks has no extra hop. A violation stops the
// simulation; first_violation() names the binding, the rule, the command and address.
#pragma once
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "common/system.hpp"

namespace dvp::tlmcheck {

class Checker : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Checker> target;        // the initiator binds here
  tlm_utils::simple_initiator_socket<Checker> initiator;  // bound to the target

  // What it finds goes into the record of its system (System::protocol(): the first
  // violation, the number seen and the transactions checked, over every checker).
  Checker(sc_core::sc_module_name name, std::string binding);

 private:
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& p);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi);
  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end);

  bool check_request(const tlm::tlm_generic_payload& p);  // false: a violation (not forwarded)
  void check_request_rules(const tlm::tlm_generic_payload& p);
  // What a target must leave as it found it: the attributes, and the bytes of a write's data
  // and of the byte enables.
  struct Snapshot {
    tlm::tlm_generic_payload attributes;
    std::vector<unsigned char> data, byte_enables;
    explicit Snapshot(const tlm::tlm_generic_payload& p);
  };
  void check_response(const tlm::tlm_generic_payload& p, const Snapshot& before, const sc_core::sc_time& delay_in,
                      const sc_core::sc_time& delay_out);
  void violation(const tlm::tlm_generic_payload* p, const std::string& rule);

  System::ProtocolRecord& record_;
  const std::string binding_;  // "initiator -> target", for messages
  std::set<const tlm::tlm_generic_payload*> in_flight_;
};

// The checkers a module put on its bindings: it owns them, as it owns its sockets.
using Checkers = std::vector<std::unique_ptr<Checker>>;

// Binds `i` to `t`, through a new checker in `owner` named after `who` when `checks` is on.
template <typename I, typename T>
void bind_checked(I& i, T& t, bool checks, const std::string& who, Checkers& owner) {
  if (!checks) {
    i.bind(t);
    return;
  }
  owner.push_back(std::make_unique<Checker>(sc_core::sc_gen_unique_name("tlm_checker"), who));
  i.bind(owner.back()->target);
  owner.back()->initiator.bind(t);
}

}  // namespace dvp::tlmcheck
