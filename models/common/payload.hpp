// SPDX-License-Identifier: MIT
// Helpers on the TLM generic payload shared by all models.
#pragma once
#include <algorithm>
#include <cstdint>

#include <tlm>

namespace dvp {

// Marks a transaction as timing-only: targets account its time and traffic but move no
// data (fast what-if sweeps). Ignorable: a target that does not know it just moves data.
// Instances belong to the module that attaches them (usually one static object), never to a
// payload: a payload's destructor calls free() on what is still attached, so free() must not
// delete.
struct TimingOnly : tlm::tlm_extension<TimingOnly> {
  tlm::tlm_extension_base* clone() const override { return new TimingOnly; }
  void copy_from(const tlm::tlm_extension_base&) override {}
  void free() override {}
};

inline bool is_timing_only(const tlm::tlm_generic_payload& p) { return p.get_extension<TimingOnly>() != nullptr; }

// Marks a read as a stash (CHI's StashOnce to the home node): the L2 slice that is the line's
// home brings the line in from memory if it does not hold it, and answers without data, so a
// DMA engine can fill the L2 ahead of the kernels that read it (models/sdma). A target that does
// not know it (DRAM with no L2 before it) just reads, into the requester's scratch buffer.
// Instances belong to the module that attaches them, as TimingOnly's.
struct Stash : tlm::tlm_extension<Stash> {
  tlm::tlm_extension_base* clone() const override { return new Stash; }
  void copy_from(const tlm::tlm_extension_base&) override {}
  void free() override {}
};

inline bool is_stash(const tlm::tlm_generic_payload& p) { return p.get_extension<Stash>() != nullptr; }

// Readies `p` for one plain access (no byte enables, one streaming beat, response pending).
inline void prepare(tlm::tlm_generic_payload& p, bool write, std::uint64_t addr, unsigned char* data, unsigned len) {
  p.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  p.set_address(addr);
  p.set_data_ptr(data);
  p.set_data_length(len);
  p.set_streaming_width(len);
  p.set_byte_enable_ptr(nullptr);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

// A control structure (a queue entry, a command, a completion) read or written by a model through
// its socket, so whatever answers for the address (DRAM behind the L2, an RTL memory) sees the
// access and the value is the coherent one. The pieces never cross a `line`-byte boundary (the
// L2 takes one line per request) and are issued together at `delay`, which comes back as the
// time the last one completed. Returns the first failed piece's response, else TLM_OK_RESPONSE.
template <class Socket>
tlm::tlm_response_status access_lines(Socket& socket, bool write, std::uint64_t addr, void* data, std::uint64_t len,
                                      std::uint64_t line, sc_core::sc_time& delay) {
  tlm::tlm_generic_payload p;
  // Absolute times: a target may wait inside b_transport, moving "now" between pieces.
  const sc_core::sc_time start = sc_core::sc_time_stamp() + delay;
  sc_core::sc_time done = start;
  auto* bytes = static_cast<unsigned char*>(data);
  for (std::uint64_t off = 0; off < len;) {
    const std::uint64_t piece = std::min(len - off, line - (addr + off) % line);
    prepare(p, write, addr + off, bytes + off, unsigned(piece));
    const sc_core::sc_time& now = sc_core::sc_time_stamp();
    sc_core::sc_time d = start > now ? start - now : sc_core::SC_ZERO_TIME;
    socket->b_transport(p, d);
    if (p.get_response_status() != tlm::TLM_OK_RESPONSE) return p.get_response_status();
    done = std::max(done, sc_core::sc_time_stamp() + d);
    off += piece;
  }
  delay = done - sc_core::sc_time_stamp();
  return tlm::TLM_OK_RESPONSE;
}

}  // namespace dvp
