// SPDX-License-Identifier: MIT
// A DRAM controller (a memory node on the ring): a TLM-2.0 target that owns a group of
// channels, splits each request into bursts, times them on its channels and moves the data
// in the shared backing store. Statistics go to one group per channel
// (<name>.ch<i>) and one for the controller.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "address_map.hpp"
#include "channel.hpp"
#include "common/stats.hpp"
#include "common/trace.hpp"
#include "storage.hpp"

namespace dvp::dram {

class Controller : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Controller> socket;

  // `index`: which controller this is; it owns channels [index*n, index*n+n).
  Controller(sc_core::sc_module_name name, const Config& cfg, const AddressMapper& map, Storage& storage,
             std::uint64_t base, unsigned index);

  const Config& config() const { return cfg_; }
  unsigned first_channel() const { return first_channel_; }
  Channel& channel(unsigned local) { return *channels_[local]; }
  const Channel& channel(unsigned local) const { return *channels_[local]; }
  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  // Drains the write queues at `now`; returns when the last queued write completes.
  Tick drain_writes(Tick now);
  // Closes the books at the end of a run: idle refreshes up to `end`.
  void finish(Tick end);
  // DMI on all of DRAM (also `socket`'s): the Arm cores' direct pointer is granted here.
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi);

 private:
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& p);

  Config cfg_;
  const AddressMapper& map_;
  Storage& storage_;
  std::uint64_t base_;
  unsigned first_channel_;
  std::vector<std::unique_ptr<Channel>> channels_;
  std::vector<std::unique_ptr<stats::Group>> channel_stats_;
  std::vector<Tracer::Lane> lanes_;
  stats::Group stats_;
  std::uint64_t& requests_;
  std::uint64_t& bytes_read_;
  std::uint64_t& bytes_written_;
  std::uint64_t& latency_ps_total_;
  std::vector<std::uint64_t*> ch_bytes_read_, ch_bytes_written_;
  struct QueuedWrite {
    DramAddress a;
    Tick arrival;
    bool close;
    std::uint64_t seq;  // this write's number on its channel
  };
  struct WriteQueue {
    std::vector<QueuedWrite> pending;
    std::vector<Tick> done;  // ring: when write seq left the queue for DRAM (index seq % size)
    std::uint64_t seq = 0;
    Tick last_done = 0;
  };
  std::vector<WriteQueue> write_q_;   // per local channel
  std::vector<Channel::Result> run_;  // what a run of bursts to one row got (reused)
  std::uint64_t& write_drains_;
  Tick drain(unsigned local, Tick at);
};

}  // namespace dvp::dram
