// SPDX-License-Identifier: MIT
// One L2 slice, a home node: a TLM target for requests from the ring and a TLM initiator
// toward memory (through the ring) for fills and dirty write-backs. Write-back,
// write-allocate; a full-line write miss allocates without reading memory.
//
// Timing: the slice's data port is a timeline (bytes_per_cycle); a hit costs hit_cycles plus
// the port transfer; a miss takes an MSHR (the earliest free one when all are busy), looks up
// the tag (hit_cycles), fetches the line through the ring, and returns the data. A later
// request to a line whose fill is still in flight waits for that fill. A stash (a DMA engine's
// preload, common/payload.hpp) looks up the tag and, on a miss, fills the line as a read miss
// does; it answers without data when the line is in (at once when it already was), and is counted
// apart from the requests, so the hit rate stays the kernels'.
#pragma once
#include <array>
#include <queue>
#include <utility>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "cache_array.hpp"
#include "common/stats.hpp"
#include "common/timeline.hpp"
#include "l2_config.hpp"
#include "line_set.hpp"

namespace dvp::cache {

class L2Slice : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<L2Slice> target;     // from the ring (requests)
  tlm_utils::simple_initiator_socket<L2Slice> memory;  // to the ring (fills, write-backs)

  L2Slice(sc_core::sc_module_name name, const L2Config& cfg, unsigned index, bool functional);

  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_ + bypasses_; }  // allocating or not
  std::uint64_t evictions() const { return evictions_; }
  std::uint64_t writebacks() const { return writebacks_; }
  std::uint64_t kept_stashes() const { return kept_; }

  // Byte address ranges [lo, hi).
  using AddressRanges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  // Set-up that writes DRAM behind the caches (a bare-mode kernel's memory, written at its start)
  // has the lines of what it wrote dropped, dirty or not, as a driver invalidates the caches over
  // device memory it writes: a request then reads what set-up wrote, not a copy from before.
  // Lines are rounded out, so a range must own every line it touches (set-up writes whole pages).
  // Every slice is given every range: each drops the lines the slice hash gives it (its `index`).
  // Takes no simulated time; returns how many lines were dropped.
  std::uint64_t invalidate(const AddressRanges& ranges);
  // A debug read of the bytes [lo, hi) in bulk, after the caller has copied memory's into `out`
  // (out[0] is lo's): the bytes of every line the slice holds with data in the range, written over
  // them. What transport_dbg answers, a line at a time through the ring; a check's read-back of a
  // whole tensor takes this way (the platform gives each line to its slice: one hash and one
  // lookup a line, not a ring transaction per 128 B). Changes nothing: no statistics, no
  // replacement state, no simulated time.
  void overlay(std::uint64_t lo, std::uint64_t hi, std::uint8_t* out);

 private:
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  // One request, as the slice handles it.
  struct Request {
    std::uint64_t line_addr;
    std::uint32_t set;
    bool write;
    unsigned len;
    bool timing_only;    // no bytes move (the request says so, or the slice holds none)
    Tick arrival, xfer;  // at the slice; the port time of its data
  };
  Tick hit(const Request& r, int way);    // returns when the data is through
  Tick miss(const Request& r, int& way);  // allocates `way`; returns when the data is through
  Tick fill(const Request& r, int& way);  // allocates `way`; returns when the line is in
  Tick take_mshr(const Request& r);       // when the miss goes on
  Tick discard(const Request& r);         // drops the line, unwritten; returns when done
  Tick pass_by(const Request& r, tlm::tlm_generic_payload& p, unsigned offset);  // a NoAllocate read miss
  Tick stash(const Request& r, bool persist);                                    // returns when the line is in
  Tick evict(const Request& r, int way, Tick at);  // the victim's write-back; when the fill may start
  void move_data(tlm::tlm_generic_payload& p, const Request& r, int way, unsigned offset);
  unsigned transport_dbg(tlm::tlm_generic_payload& p);
  // Memory access of one line at time `at`; returns its completion time.
  Tick memory_access(bool write, std::uint64_t line_addr, std::uint8_t* data, Tick at, bool timing_only);
  void drop(std::uint32_t set, int way);  // invalidate's: empties the way, counted

  static constexpr unsigned kMaxLineBytes = 512;  // l2_config's largest line_bytes

  L2Config cfg_;
  SliceHash hash_;
  CacheArray array_;
  Timeline port_;
  using FreeTimes = std::priority_queue<Tick, std::vector<Tick>, std::greater<Tick>>;
  FreeTimes mshr_free_;  // when each MSHR frees
  FreeTimes wb_free_;    // when each write-back buffer frees
  tlm::tlm_generic_payload mem_req_;
  std::vector<std::uint8_t> scratch_;
  stats::Group stats_;
  std::uint64_t &reads_, &writes_, &hits_, &misses_, &bypasses_, &evictions_, &writebacks_, &fill_wait_,
      &mshr_stall_ps_, &wb_stall_ps_, &stashes_, &stash_fills_, &kept_, &discards_, &discarded_dirty_;
  std::uint64_t &invalidated_, &invalidated_dirty_;
  unsigned index_;  // this slice's number: the lines the slice hash gives it are its own
  Tick last_memory_done_ = 0;
  bool filled_ = false;  // a line was ever brought in (invalidate has something to scan)
  // Lines a discard dropped and nothing has written since: their bytes are stale. A read of one
  // is an error (a discard placed before a reader), named here, since with firmware the slice
  // keeps tags only and the bytes would still read back right.
  LineSet discarded_;
  void check_not_discarded(const Request& r) const;

 public:
  // Completion of the last memory access this slice issued (write-backs are posted).
  Tick last_memory_done() const { return last_memory_done_; }
};

}  // namespace dvp::cache
