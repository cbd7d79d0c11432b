// SPDX-License-Identifier: MIT
#include "controller.hpp"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "common/payload.hpp"
#include "common/system.hpp"

namespace dvp::dram {

namespace {
bool same_row(const DramAddress& x, const DramAddress& y) {
  return x.channel == y.channel && x.rank == y.rank && x.bank_group == y.bank_group && x.bank == y.bank &&
         x.row == y.row;
}
}  // namespace

Controller::Controller(sc_core::sc_module_name name, const Config& cfg, const AddressMapper& map, Storage& storage,
                       std::uint64_t base, unsigned index)
    : sc_module(name),
      socket("socket"),
      cfg_(cfg),
      map_(map),
      storage_(storage),
      base_(base),
      first_channel_(index * cfg.channels_per_controller),
      stats_(*this),
      requests_(stats_.counter("requests", "requests served")),
      bytes_read_(stats_.counter("bytes_read", "bytes read")),
      bytes_written_(stats_.counter("bytes_written", "bytes written")),
      latency_ps_total_(stats_.counter("latency_ps_total", "sum of request latencies (arrival to last data), ps")),
      write_drains_(stats_.counter("write_drains", "times a channel's write queue was drained")) {
  write_q_.resize(cfg.channels_per_controller);
  for (auto& q : write_q_) q.done.assign(cfg.write_queue, 0);
  socket.register_b_transport(this, &Controller::b_transport);
  socket.register_transport_dbg(this, &Controller::transport_dbg);
  socket.register_get_direct_mem_ptr(this, &Controller::get_direct_mem_ptr);
  for (unsigned i = 0; i < cfg.channels_per_controller; ++i) {
    channels_.push_back(std::make_unique<Channel>(cfg));
    Channel* ch = channels_.back().get();
    auto g = std::make_unique<stats::Group>(system_of(*this).stats(),
                                            std::string(this->name()) + ".ch" + std::to_string(first_channel_ + i));
    ch_bytes_read_.push_back(&g->counter("bytes_read", "bytes read on this channel"));
    ch_bytes_written_.push_back(&g->counter("bytes_written", "bytes written on this channel"));
    std::uint64_t* br = ch_bytes_read_.back();
    std::uint64_t* bw = ch_bytes_written_.back();
    g->formula("reads", "read bursts", [ch] { return double(ch->reads); });
    g->formula("writes", "write bursts", [ch] { return double(ch->writes); });
    g->formula("row_hits", "bursts to the open row", [ch] { return double(ch->row_hits); });
    g->formula("row_misses", "bursts to a closed bank (ACT needed)", [ch] { return double(ch->row_misses); });
    g->formula("row_conflicts", "bursts to another row than the open one (PRE + ACT)",
               [ch] { return double(ch->row_conflicts); });
    g->formula("row_hit_rate", "row hits / bursts", [ch] {
      double n = double(ch->reads + ch->writes);
      return n ? double(ch->row_hits) / n : 0.0;
    });
    g->formula("refreshes", "all-bank refreshes", [ch] { return double(ch->refreshes); });
    g->formula("data_bus_busy_fraction", "fraction of simulated time the data bus carried data", [ch] {
      Tick now = now_tick();
      return now ? double(ch->data_busy()) / double(now) : 0.0;
    });
    g->formula("achieved_GBps", "bytes moved / simulated time", [br, bw] {
      Tick now = now_tick();
      return now ? double(*br + *bw) / double(now) * 1000.0 : 0.0;
    });
    const std::uint64_t burst_bytes = cfg.geo.burst_bytes();
    g->json("banks", "per bank (rank-major): row hits, misses, conflicts, bytes", [ch, burst_bytes] {
      nlohmann::json a = nlohmann::json::array();
      for (auto& b : ch->bank_counters())
        a.push_back({{"hits", b.hits},
                     {"misses", b.misses},
                     {"conflicts", b.conflicts},
                     {"bytes", (b.hits + b.misses + b.conflicts) * burst_bytes}});
      return a;
    });
    channel_stats_.push_back(std::move(g));
    lanes_.push_back(
        system_of(*this).tracer().lane("dram", std::string(this->name()) + ".ch" + std::to_string(first_channel_ + i)));
  }
  stats_.formula("avg_latency_ns", "mean request latency at this controller",
                 [this] { return requests_ ? double(latency_ps_total_) / double(requests_) / 1000.0 : 0.0; });
}

void Controller::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  const std::uint64_t addr = p.get_address();
  const unsigned len = p.get_data_length();
  if (addr < base_ || addr + len > base_ + storage_.size() || len == 0) {
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (p.get_byte_enable_ptr()) {
    p.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  const bool write = p.is_write();
  const Tick arrival = now_tick() + to_tick(delay);
  const Tick start = arrival + cfg_.clock.cycles(cfg_.frontend_cycles);
  const std::uint64_t off = addr - base_;
  const unsigned bb = map_.burst_bits();
  const std::uint64_t first = off >> bb, last = (off + len - 1) >> bb;
  Tick done = start;
  DramAddress a = map_.decode(first << bb);
  for (std::uint64_t burst = first; burst <= last;) {
    if (a.channel < first_channel_ || a.channel >= first_channel_ + channels_.size())
      throw Error(std::string(name()) + ": address " + hex(addr) + " maps to channel " + std::to_string(a.channel) +
                  ", which this controller does not own (ring routing and DRAM address mapping disagree)");
    const unsigned local = a.channel - first_channel_;
    // The run of bursts from here to the same row of the same bank (a line's, mostly); `next`
    // is the address of the burst after it (when it is one of this request's). A posted write's
    // run is its one burst.
    const bool posted = write && cfg_.write_queue;
    std::uint64_t end = burst + 1;
    DramAddress next{};
    if (posted) {
      if (end <= last) next = map_.next_burst(a, end);
    } else {
      // The column slice's steps keep the row; a burst past them is decoded and compared.
      while ((end = std::min(last + 1, map_.column_run_end(end - 1))) <= last) {
        next = map_.decode(end << bb);
        if (!same_row(next, a)) break;
        ++end;
      }
    }
    // Closed page: precharge after the last burst of this request to this row.
    const bool close = cfg_.page == PagePolicy::Closed && (end > last || !same_row(next, a));
    if (posted) {
      // Posted: the burst enters the write queue once it has a free entry (write seq - size has
      // left for DRAM) and the request is done when it is in; a full queue drains at once.
      WriteQueue& q = write_q_[local];
      const std::uint64_t seq = q.seq++;
      const Tick in = seq >= cfg_.write_queue ? std::max(start, q.done[seq % cfg_.write_queue]) : start;
      done = std::max(done, in);
      q.pending.push_back(QueuedWrite{a, in, close, seq});
      if (q.pending.size() >= cfg_.write_queue) drain(local, in);
    } else {
      const auto n = std::uint32_t(end - burst);
      run_.resize(std::max<std::size_t>(run_.size(), n));
      channels_[local]->access_run(Burst{write, a.rank, a.bank_group, a.bank, a.row, start, close}, n, run_.data());
      for (std::uint32_t i = 0; i < n; ++i) {
        done = std::max(done, run_[i].done);
        lanes_[local].slice(write ? "write" : "read", run_[i].data_start, run_[i].done);
      }
    }
    // The bytes of the request that fall in these bursts.
    const std::uint64_t lo = std::max(off, burst << bb), hi = std::min(off + len, end << bb);
    *(write ? ch_bytes_written_ : ch_bytes_read_)[local] += hi - lo;
    burst = end;
    a = next;
  }
  (write ? bytes_written_ : bytes_read_) += len;
  ++requests_;
  latency_ps_total_ += done - arrival;
  if (!is_timing_only(p)) {
    if (write)
      std::memcpy(storage_.write_at(off, len), p.get_data_ptr(), len);
    else
      storage_.read(off, p.get_data_ptr(), len);
  }
  delay = to_sc(done - now_tick());
  p.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned Controller::transport_dbg(tlm::tlm_generic_payload& p) {
  const std::uint64_t addr = p.get_address();
  const unsigned len = p.get_data_length();
  if (addr < base_ || addr + len > base_ + storage_.size()) return 0;
  if (p.is_write())
    std::memcpy(storage_.write_at(addr - base_, len), p.get_data_ptr(), len);
  else
    storage_.read(addr - base_, p.get_data_ptr(), len);
  p.set_response_status(tlm::TLM_OK_RESPONSE);
  return len;
}

bool Controller::get_direct_mem_ptr(tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi) {
  // DMI covers the whole DRAM space; the bytes are shared by all controllers. Its holder writes
  // where the controller does not see it: every page counts as written from now on (storage.hpp).
  dmi.allow_read_write();
  dmi.set_dmi_ptr(storage_.data());
  dmi.set_start_address(base_);
  dmi.set_end_address(base_ + storage_.size() - 1);
  dmi.set_read_latency(
      sc_core::sc_time::from_value(cfg_.clock.cycles(cfg_.frontend_cycles + cfg_.t.tRCD + cfg_.t.tRL)));
  dmi.set_write_latency(sc_core::sc_time::from_value(cfg_.clock.cycles(cfg_.frontend_cycles + cfg_.t.tWL)));
  return true;
}

Tick Controller::drain(unsigned local, Tick at) {
  // All queued writes of the channel at once, grouped by bank and row (in order of arrival
  // within a group) so each open row takes all its writes: the write half of FR-FCFS.
  WriteQueue& wq = write_q_[local];
  auto& q = wq.pending;
  std::stable_sort(q.begin(), q.end(), [](const QueuedWrite& x, const QueuedWrite& y) {
    return std::tie(x.a.rank, x.a.bank_group, x.a.bank, x.a.row) <
           std::tie(y.a.rank, y.a.bank_group, y.a.bank, y.a.row);
  });
  Tick last = at;
  for (const QueuedWrite& w : q) {
    Channel::Result r = channels_[local]->access(
        Burst{true, w.a.rank, w.a.bank_group, w.a.bank, w.a.row, std::max(at, w.arrival), w.close});
    last = std::max(last, r.done);
    wq.done[w.seq % cfg_.write_queue] = r.done;
    lanes_[local].slice("write", r.data_start, r.done);
  }
  q.clear();
  wq.last_done = std::max(wq.last_done, last);
  ++write_drains_;
  return last;
}

Tick Controller::drain_writes(Tick now) {
  Tick last = now;
  for (unsigned i = 0; i < write_q_.size(); ++i) {
    if (!write_q_[i].pending.empty()) drain(i, now);
    last = std::max(last, write_q_[i].last_done);
  }
  return last;
}

void Controller::finish(Tick end) {
  for (auto& ch : channels_) ch->finish(end);
}

}  // namespace dvp::dram
