// SPDX-License-Identifier: MIT
#include "checker.hpp"

#include <algorithm>
#include <cstdio>

namespace dvp::tlmcheck {

namespace {
const char* command_name(tlm::tlm_command c) {
  switch (c) {
    case tlm::TLM_READ_COMMAND: return "read";
    case tlm::TLM_WRITE_COMMAND: return "write";
    case tlm::TLM_IGNORE_COMMAND: return "ignore";
  }
  return "bad command";
}

std::string hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}
}  // namespace

Checker::Checker(sc_core::sc_module_name name, std::string binding)
    : sc_module(name),
      target("target"),
      initiator("initiator"),
      record_(system_of(*this).protocol()),
      binding_(std::move(binding)) {
  target.register_b_transport(this, &Checker::b_transport);
  target.register_transport_dbg(this, &Checker::transport_dbg);
  target.register_get_direct_mem_ptr(this, &Checker::get_direct_mem_ptr);
  initiator.register_invalidate_direct_mem_ptr(this, &Checker::invalidate_direct_mem_ptr);
}

// The first violation stops the run: what follows a broken transaction proves nothing.
void Checker::violation(const tlm::tlm_generic_payload* p, const std::string& rule) {
  System::ProtocolRecord& r = record_;
  if (!r.violations++) {
    r.first = "TLM base protocol on " + binding_ + ": " + rule;
    if (p) r.first += " (" + std::string(command_name(p->get_command())) + " at " + hex(p->get_address()) + ")";
    sc_core::sc_stop();
  }
}

bool Checker::check_request(const tlm::tlm_generic_payload& p) {
  const std::uint64_t before = record_.violations;
  check_request_rules(p);
  return record_.violations == before;
}

void Checker::check_request_rules(const tlm::tlm_generic_payload& p) {
  const tlm::tlm_command c = p.get_command();
  if (c != tlm::TLM_READ_COMMAND && c != tlm::TLM_WRITE_COMMAND && c != tlm::TLM_IGNORE_COMMAND)
    return violation(&p, "command " + std::to_string(int(c)) + " is not READ, WRITE or IGNORE");
  // An IGNORE command moves no data: its pointer and length may be anything (14.11, 14.12).
  if (c != tlm::TLM_IGNORE_COMMAND && !p.get_data_ptr()) return violation(&p, "no data pointer");
  if (c != tlm::TLM_IGNORE_COMMAND && p.get_data_length() == 0) return violation(&p, "data length 0");
  if (p.get_response_status() != tlm::TLM_INCOMPLETE_RESPONSE)
    return violation(&p, "response status " + p.get_response_string() + " on entry (must be INCOMPLETE)");
  if (p.get_streaming_width() == 0) return violation(&p, "streaming width 0");
  if (p.is_dmi_allowed()) return violation(&p, "DMI allowed set on entry (the target sets it)");
  if (p.get_address() + p.get_data_length() - 1 < p.get_address()) return violation(&p, "address + length past 2^64");
  if (const unsigned char* be = p.get_byte_enable_ptr()) {
    if (p.get_byte_enable_length() == 0) return violation(&p, "byte enables with length 0");
    for (unsigned i = 0; i < p.get_byte_enable_length(); ++i)
      if (be[i] != TLM_BYTE_ENABLED && be[i] != TLM_BYTE_DISABLED)
        return violation(&p, "byte enable " + std::to_string(i) + " is " + hex(be[i]) + " (0x00 or 0xff)");
  }
  if (in_flight_.count(&p)) return violation(&p, "the payload is sent again before its transaction returned");
  if (p.get_gp_option() == tlm::TLM_FULL_PAYLOAD_ACCEPTED)
    return violation(&p, "gp_option FULL_PAYLOAD_ACCEPTED on entry (the target's answer to FULL_PAYLOAD)");
}

Checker::Snapshot::Snapshot(const tlm::tlm_generic_payload& p) {
  attributes.set_command(p.get_command());
  attributes.set_data_ptr(p.get_data_ptr());
  attributes.set_data_length(p.get_data_length());
  attributes.set_byte_enable_ptr(p.get_byte_enable_ptr());
  attributes.set_byte_enable_length(p.get_byte_enable_length());
  attributes.set_streaming_width(p.get_streaming_width());
  attributes.set_gp_option(p.get_gp_option());
  if (p.is_write()) data.assign(p.get_data_ptr(), p.get_data_ptr() + p.get_data_length());
  if (const unsigned char* be = p.get_byte_enable_ptr()) byte_enables.assign(be, be + p.get_byte_enable_length());
}

void Checker::check_response(const tlm::tlm_generic_payload& p, const Snapshot& before,
                             const sc_core::sc_time& delay_in, const sc_core::sc_time& delay_out) {
  const tlm::tlm_generic_payload& b = before.attributes;
  if (p.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE)
    return violation(&p, "the target left the response status INCOMPLETE");
  if (p.get_command() != b.get_command()) return violation(&p, "the command changed on the way back");
  if (p.get_data_ptr() != b.get_data_ptr() || p.get_data_length() != b.get_data_length())
    return violation(&p, "the data pointer or length changed on the way back");
  if (p.get_byte_enable_ptr() != b.get_byte_enable_ptr() || p.get_byte_enable_length() != b.get_byte_enable_length())
    return violation(&p, "the byte enables changed on the way back");
  if (p.get_streaming_width() != b.get_streaming_width())
    return violation(&p, "the streaming width changed on the way back");
  if (!before.data.empty() && !std::equal(before.data.begin(), before.data.end(), p.get_data_ptr()))
    return violation(&p, "the target changed the data of a write");
  if (!before.byte_enables.empty() &&
      !std::equal(before.byte_enables.begin(), before.byte_enables.end(), p.get_byte_enable_ptr()))
    return violation(&p, "the target changed the byte-enable array");
  const bool accepted =
      b.get_gp_option() == tlm::TLM_FULL_PAYLOAD && p.get_gp_option() == tlm::TLM_FULL_PAYLOAD_ACCEPTED;
  if (p.get_gp_option() != b.get_gp_option() && !accepted)
    return violation(&p, "gp_option changed on the way back to " + std::to_string(int(p.get_gp_option())) +
                             " (a target may only answer FULL_PAYLOAD with FULL_PAYLOAD_ACCEPTED)");
  // A target may wait and take the time waited off the delay; the end may not come before the
  // start (the call's time plus its annotation).
  if (delay_out < delay_in)
    return violation(&p, "the transaction ends before it was issued (at " + delay_out.to_string() +
                             " past the call, issued at " + delay_in.to_string() + ")");
}

void Checker::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  ++record_.checked;
  if (!check_request(p)) {
    // Never pass a broken request on: the target could write through a null pointer before
    // the stop takes effect.
    p.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  const Snapshot before(p);
  // Copies: the current time and the delay both move while the target runs.
  // NOLINTNEXTLINE(performance-unnecessary-copy-initialization)
  const sc_core::sc_time called = sc_core::sc_time_stamp();
  const sc_core::sc_time delay_in = delay;
  in_flight_.insert(&p);
  initiator->b_transport(p, delay);
  in_flight_.erase(&p);
  // Both ends as times past the call: the target's waits count toward the end.
  check_response(p, before, delay_in, sc_core::sc_time_stamp() - called + delay);
}

unsigned Checker::transport_dbg(tlm::tlm_generic_payload& p) {
  const tlm::tlm_command c = p.get_command();
  if (c != tlm::TLM_READ_COMMAND && c != tlm::TLM_WRITE_COMMAND && c != tlm::TLM_IGNORE_COMMAND) {
    violation(&p, "debug: command " + std::to_string(int(c)) + " is not READ, WRITE or IGNORE");
    return 0;
  }
  if (p.get_data_length() && !p.get_data_ptr()) {
    violation(&p, "debug: no data pointer");
    return 0;
  }
  const unsigned n = initiator->transport_dbg(p);
  if (n > p.get_data_length())
    violation(&p, "debug: " + std::to_string(n) + " bytes transferred of " + std::to_string(p.get_data_length()));
  return n;
}

bool Checker::get_direct_mem_ptr(tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi) {
  const std::uint64_t a = p.get_address();
  const bool granted = initiator->get_direct_mem_ptr(p, dmi);
  if (dmi.get_start_address() > a || dmi.get_end_address() < a)
    violation(&p, "DMI: the range " + hex(dmi.get_start_address()) + ".." + hex(dmi.get_end_address()) +
                      " does not hold the address");
  else if (granted && !dmi.get_dmi_ptr())
    violation(&p, "DMI granted with no pointer");
  else if (granted && p.is_read() && !dmi.is_read_allowed())
    violation(&p, "DMI granted for a read without read access");
  else if (granted && p.is_write() && !dmi.is_write_allowed())
    violation(&p, "DMI granted for a write without write access");
  return granted;
}

void Checker::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
  if (start > end) violation(nullptr, "DMI invalidation of " + hex(start) + ".." + hex(end) + " (start past end)");
  target->invalidate_direct_mem_ptr(start, end);
}

}  // namespace dvp::tlmcheck
