// SPDX-License-Identifier: MIT
// Helpers on the TLM generic payload shared by all models.
#pragma once
#include <algorithm>
#include <cstdint>

#include <tlm>

namespace dvp {

// A mark on a transaction: an extension that carries nothing but its presence. Instances belong
// to the module that attaches them (usually one static object), never to a payload: a payload's
// destructor calls free() on what is still attached, so free() must not delete.
template <class Tag>
struct Mark : tlm::tlm_extension<Mark<Tag>> {
  tlm::tlm_extension_base* clone() const override { return new Mark; }
  void copy_from(const tlm::tlm_extension_base&) override {}
  void free() override {}
};
template <class M>
bool marked(const tlm::tlm_generic_payload& p) {
  return p.get_extension<M>() != nullptr;
}

// Timing-only: targets account its time and traffic but move no data (fast what-if sweeps).
// Ignorable: a target that does not know it just moves data.
using TimingOnly = Mark<struct TimingOnlyTag>;
inline bool is_timing_only(const tlm::tlm_generic_payload& p) { return marked<TimingOnly>(p); }

// A stash (CHI's StashOnce to the home node), on a read: the L2 slice that is the line's home
// brings the line in from memory if it does not hold it, and answers without data, so a DMA
// engine can fill the L2 ahead of the kernels that read it (models/ts/sdma). A target that does
// not know it (DRAM with no L2 before it) just reads, into the requester's scratch buffer.
using Stash = Mark<struct StashTag>;
inline bool is_stash(const tlm::tlm_generic_payload& p) { return marked<Stash>(p); }

// A dataless request that drops the home node's copy of the line, dirty or not, without writing
// it back (CHI's MakeInvalid): the DMA engine's cache maintenance for memory no one reads again
// (models/ts/sdma). Sent as a read of the whole line; a target that does not know it (DRAM with
// no L2 before it) just reads, into the requester's scratch buffer, which is harmless.
using Discard = Mark<struct DiscardTag>;
inline bool is_discard(const tlm::tlm_generic_payload& p) { return marked<Discard>(p); }

// A read that does not allocate in the L2 when it misses there (CHI's Allocate attribute clear):
// the home node fetches the line from memory for the requester and keeps no copy, so data read
// once (a layer's weights) does not evict data that is read again (the activations). A hit is
// served as any read. Ignorable: a target that does not know it just reads.
using NoAllocate = Mark<struct NoAllocateTag>;
inline bool is_no_allocate(const tlm::tlm_generic_payload& p) { return marked<NoAllocate>(p); }

// On a stash: the home node keeps the line (its replacement passes over it) until a requester
// reads or writes it, within the ways its set may keep (platform.l2.persist_fraction): data fetched
// long before its reader, such as a layer's weights prefetched while the DRAM is idle, is not
// evicted by the lines that come in meanwhile. Ignorable: a target that does not know it stashes.
using Persist = Mark<struct PersistTag>;
inline bool is_persist(const tlm::tlm_generic_payload& p) { return marked<Persist>(p); }

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
