#include "channel.hpp"

#include <algorithm>

namespace dvp::dram {

Channel::Channel(const Config& c) : cfg_(c), clock_(c.clock) {
  const Geometry& g = c.geo;
  banks_.resize(std::size_t(g.ranks) * g.banks());
  counters_.resize(banks_.size());
  ranks_.resize(g.ranks);
  for (auto& r : ranks_) {
    r.last_act_bg.assign(g.bank_groups, 0);
    r.next_refresh = cyc(c.t.tREFI);
  }
  cas_bg_.assign(std::size_t(g.ranks) * g.bank_groups, Timeline(clock_.period()));
  bus_ = Timeline(clock_.period());
  // Data bus occupancy of one burst: BL/2 clocks (double data rate), or tCCD_S if longer.
  burst_ticks_ = cyc(std::max<std::uint32_t>(g.burst_length / 2, c.t.tCCD_S));
  // Turnarounds on the data bus: read data -> write data needs tRTW clocks between them;
  // write data -> read data needs tWTR before the READ command, plus tRL until its data.
  bus_.set_turnaround(cyc(c.t.tRTW), cyc(std::uint64_t(c.t.tWTR) + c.t.tRL));
}

void Channel::refresh_until(Rank& r, std::uint32_t rank, Tick t) {
  if (!cfg_.refresh) return;
  const Timing& tm = cfg_.t;
  while (r.next_refresh <= t) {
    // All-bank refresh: precharge every open bank, then tRFC with no ACT in the rank.
    Tick due = r.next_refresh;
    Tick start = due;
    Bank* b0 = &banks_[std::size_t(rank) * cfg_.geo.banks()];
    for (std::uint32_t i = 0; i < cfg_.geo.banks(); ++i) {
      Bank& b = b0[i];
      if (b.open_row >= 0) {
        start = std::max(start, std::max(due, b.ready_pre) + cyc(tm.tRP));
        b.open_row = -1;
      }
      start = std::max(start, b.ready_act);  // an ACT in flight must finish its tRC
    }
    Tick end = start + cyc(tm.tRFC);
    for (std::uint32_t i = 0; i < cfg_.geo.banks(); ++i) b0[i].ready_act = std::max(b0[i].ready_act, end);
    r.next_refresh += cyc(tm.tREFI);
    ++refreshes;
  }
}

void Channel::finish(Tick end) {
  if (!cfg_.refresh) return;
  for (auto& r : ranks_)
    while (r.next_refresh <= end) {
      r.next_refresh += cyc(cfg_.t.tREFI);
      ++refreshes;
    }
}

Tick Channel::activate(Rank& r, Bank& b, std::uint32_t bg, Tick earliest) {
  const Timing& tm = cfg_.t;
  Tick act = std::max(earliest, b.ready_act);
  if (r.any_act) {
    act = std::max(act, r.last_act + cyc(tm.tRRD_S));
    act = std::max(act, r.last_act_bg[bg] + cyc(tm.tRRD_L));
    if (r.acts >= 4) act = std::max(act, r.faw[r.faw_idx] + cyc(tm.tFAW));
  }
  act = clock_.align_up(act);
  r.faw[r.faw_idx] = act;
  r.faw_idx = (r.faw_idx + 1) & 3;
  ++r.acts;
  r.last_act = std::max(r.last_act, act);
  r.last_act_bg[bg] = std::max(r.last_act_bg[bg], act);
  r.any_act = true;
  b.act = act;
  b.ready_pre = act + cyc(tm.tRAS);
  b.ready_act = act + cyc(tm.tRC);
  return act;
}

Channel::Result Channel::access(bool write, std::uint32_t rank, std::uint32_t bg, std::uint32_t bank,
                                std::uint32_t row, Tick arrival, bool close_row) {
  const Timing& tm = cfg_.t;
  const std::uint32_t bank_index = rank * cfg_.geo.banks() + bg * cfg_.geo.banks_per_group + bank;
  Rank& r = ranks_[rank];
  Bank& b = banks_[bank_index];
  Tick t = clock_.align_up(arrival);
  refresh_until(r, rank, t);

  RowOutcome outcome;
  Tick cas;
  if (b.open_row == std::int64_t(row)) {
    outcome = RowOutcome::Hit;
    cas = std::max(t, b.act + cyc(tm.tRCD));
  } else {
    Tick act_earliest = t;
    if (b.open_row >= 0) {
      outcome = RowOutcome::Conflict;
      act_earliest = clock_.align_up(std::max(t, b.ready_pre)) + cyc(tm.tRP);
    } else {
      outcome = RowOutcome::Miss;
    }
    Tick act = activate(r, b, bg, act_earliest);
    b.open_row = row;
    cas = act + cyc(tm.tRCD);
  }
  // Column commands to one bank stay in order.
  if (b.any_cas) cas = std::max(cas, b.last_cas + cyc(tm.tCCD_L));
  const bool fcfs = cfg_.scheduler == SchedulerPolicy::Fcfs;
  if (fcfs && (reads + writes) > 0) cas = std::max(cas, last_cas_ + cyc(tm.tCCD_S));

  // Find a CAS slot in the bank group (tCCD_L apart) whose data slot is free on the bus.
  const Tick lat = cyc(write ? tm.tWL : tm.tRL);
  const std::uint8_t kind = write ? 1 : 0;
  Timeline& slots = cas_bg_[std::size_t(rank) * cfg_.geo.bank_groups + bg];
  const Tick ccd_l = cyc(tm.tCCD_L);
  for (;;) {
    cas = slots.find(cas, ccd_l);
    Tick data_earliest = cas + lat;
    if (fcfs) data_earliest = std::max(data_earliest, last_data_end_);
    Tick data = bus_.find(data_earliest, burst_ticks_, kind);
    if (data == cas + lat) break;
    cas = clock_.align_up(data - lat);
  }
  slots.reserve_at(cas, ccd_l);
  bus_.reserve_at(cas + lat, burst_ticks_, kind);

  const Tick data_start = cas + lat;
  const Tick done = data_start + cyc(cfg_.geo.burst_length / 2);
  b.last_cas = std::max(b.last_cas, cas);
  b.any_cas = true;
  last_cas_ = std::max(last_cas_, cas);
  last_data_end_ = std::max(last_data_end_, data_start + burst_ticks_);
  b.ready_pre = std::max(b.ready_pre, write ? done + cyc(tm.tWR) : cas + cyc(tm.tRTP));
  if (close_row) {
    // Auto-precharge: the bank closes as soon as tRAS / tRTP / tWR allow.
    b.ready_act = std::max(b.ready_act, b.ready_pre + cyc(tm.tRP));
    b.open_row = -1;
  }

  BankCounters& bc = counters_[bank_index];
  switch (outcome) {
    case RowOutcome::Hit: ++row_hits; ++bc.hits; break;
    case RowOutcome::Miss: ++row_misses; ++bc.misses; break;
    case RowOutcome::Conflict: ++row_conflicts; ++bc.conflicts; break;
  }
  if (write) ++writes; else ++reads;
  return Result{cas, data_start, done, outcome};
}

}  // namespace dvp::dram
