// SPDX-License-Identifier: MIT
#include "channel.hpp"

#include <algorithm>

namespace dvp::dram {

Channel::Channel(const Config& c) : cfg_(c), clock_(c.clock), scheduler_(c.scheduler(c)), refresh_(c.refresh(c)) {
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
  // assumption (fast fidelity): a window of 32 clocks (4 LPDDR4 bursts, 16 HBM2 ones), the size
  // that came closest to the detailed mode over the shipped scenarios (32 - 512 tried,
  // docs/performance.md).
  fast_bus_ = Budget(32, Budget::Packing::FromEarliestStart, clock_.period());
}

void Channel::finish(Tick end) {
  for (auto& r : ranks_) refreshes += refresh_->idle_until(r, end);
}

Tick Channel::activate(RankState& r, BankState& b, std::uint32_t bg, Tick earliest) {
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
  b.ready_act = act + cyc(tm.tRC());
  return act;
}

Tick Channel::place(const Burst& b, Tick cas) {
  // A CAS slot in the bank group (tCCD_L apart) whose data slot is free on the bus, in the
  // order the scheduler keeps.
  const Tick lat = cyc(b.write ? cfg_.t.tWL : cfg_.t.tRL);
  const std::uint8_t kind = b.write ? 1 : 0;
  Timeline& slots = cas_slots(b);
  const Tick ccd_l = cyc(cfg_.t.tCCD_L);
  cas = scheduler_->earliest_cas(cas);
  for (;;) {
    cas = slots.find(cas, ccd_l);
    const Tick data = bus_.find(scheduler_->earliest_data(cas + lat), burst_ticks_, kind);
    if (data == cas + lat) break;
    cas = clock_.align_up(data - lat);
  }
  slots.reserve_at(cas, ccd_l);
  bus_.reserve_at(cas + lat, burst_ticks_, kind);
  scheduler_->issued(cas, cas + lat + burst_ticks_);
  return cas;
}

Channel::Result Channel::access(const Burst& burst) {
  if (fast()) {
    Result r;
    run_fast(burst, 1, &r);
    return r;
  }
  const std::uint32_t index = bank_index(burst);
  BankState& b = banks_[index];
  RowOutcome outcome;
  const Tick cas = open_row(burst, b, outcome);
  return issue(burst, b, index, place(burst, cas), outcome);
}

// The earliest CAS of a burst as its bank allows it, refresh done first: at once on a row hit
// (once tRCD has passed since the ACT), else after the bank's PRE (a conflict) and its ACT, and
// after the bank's last column command (they stay in order); the row is open after it.
Tick Channel::open_row(const Burst& burst, BankState& b, RowOutcome& outcome) {
  const Timing& tm = cfg_.t;
  RankState& r = ranks_[burst.rank];
  const Tick t = clock_.align_up(burst.arrival);
  refreshes += refresh_->until(r, &banks_[std::size_t(burst.rank) * cfg_.geo.banks()], cfg_.geo.banks(), t);
  Tick cas;
  if (b.open_row == std::int64_t(burst.row)) {
    outcome = RowOutcome::Hit;
    cas = std::max(t, b.act + cyc(tm.tRCD));
  } else {
    Tick act_earliest = t;
    outcome = b.open_row >= 0 ? RowOutcome::Conflict : RowOutcome::Miss;
    if (b.open_row >= 0) act_earliest = clock_.align_up(std::max(t, b.ready_pre)) + cyc(tm.tRP);
    cas = activate(r, b, burst.bank_group, act_earliest) + cyc(tm.tRCD);
    b.open_row = burst.row;
  }
  if (b.any_cas) cas = std::max(cas, b.last_cas + cyc(tm.tCCD_L));
  return cas;
}

Channel::Result Channel::issue(const Burst& burst, BankState& b, std::uint32_t bank_index, Tick cas,
                               RowOutcome outcome) {
  const Timing& tm = cfg_.t;
  const Tick data_start = cas + cyc(burst.write ? tm.tWL : tm.tRL);
  const Tick done = data_start + cyc(cfg_.geo.burst_length / 2);
  column_done(burst, b, cas, done);
  count(outcome, bank_index, burst.write);
  return Result{cas, data_start, done, outcome};
}

// The bank's state after a column command at `cas` whose data ends at `done`.
void Channel::column_done(const Burst& burst, BankState& b, Tick cas, Tick done) {
  const Timing& tm = cfg_.t;
  b.last_cas = std::max(b.last_cas, cas);
  b.any_cas = true;
  b.ready_pre = std::max(b.ready_pre, burst.write ? done + cyc(tm.tWR) : cas + cyc(tm.tRTP));
  if (burst.close_row) {
    // Auto-precharge: the bank closes as soon as tRAS / tRTP / tWR allow.
    b.ready_act = std::max(b.ready_act, b.ready_pre + cyc(tm.tRP));
    b.open_row = -1;
  }
}

void Channel::access_run(const Burst& burst, std::uint32_t n, Result* out) {
  if (fast()) return run_fast(burst, n, out);
  Burst each = burst;
  each.close_row = burst.close_row && n == 1;
  out[0] = access(each);
  for (std::uint32_t i = n > 1 ? run_in_one_step(burst, n, out) : 1; i < n; ++i) {
    each.close_row = burst.close_row && i == n - 1;
    out[i] = access(each);
  }
}

std::uint32_t Channel::run_in_one_step(const Burst& burst, std::uint32_t n, Result* out) {
  // Burst i (i >= 1) would be a row hit (burst 0 opened the row and left it open; a refresh
  // due by the run's arrival came before burst 0) whose bank allows its CAS tCCD_L after burst
  // i - 1's: bank order (tCCD_L) is the latest of its bounds, as burst i - 1's CAS is at or past
  // the others (arrival, ACT + tRCD). place() gives it that slot when the bank group's CAS slot
  // and the data slot behind it are free there and the scheduler does not hold it back. The
  // bursts of one run neither overlap nor need turnarounds between them, so each check holds
  // with the run's earlier bursts booked too: all of them are checked at once (fits_every,
  // keeps_run), and when one would go elsewhere, burst by burst up to it.
  const Tick ccd_l = cyc(cfg_.t.tCCD_L), lat = cyc(burst.write ? cfg_.t.tWL : cfg_.t.tRL);
  if (burst_ticks_ > ccd_l) return 1;  // a burst's data would overlap the next one's
  const std::uint8_t kind = burst.write ? 1 : 0;
  Timeline& slots = cas_slots(burst);
  const Tick first = out[0].cas + ccd_l;
  const std::uint32_t rest = n - 1;
  const bool all = scheduler_->keeps_run(first, ccd_l, rest, lat) && slots.fits_every(first, ccd_l, ccd_l, rest) &&
                   bus_.fits_every(first + lat, burst_ticks_, ccd_l, rest, kind);
  const std::uint32_t i = all ? n : hits_in_place(burst, n, out);
  // What issue() answers for each, and the bank's state and counters as its calls one by one
  // leave them: the bank's bounds only grow with the CAS, so the last burst's set them all.
  const Tick beats = cyc(cfg_.geo.burst_length / 2);
  for (std::uint32_t k = 1; k < i; ++k) {
    const Tick cas = out[k - 1].cas + ccd_l;
    out[k] = Result{cas, cas + lat, cas + lat + beats, RowOutcome::Hit};
  }
  if (i > 1) {
    Burst last = burst;
    last.close_row = burst.close_row && i == n;
    column_done(last, banks_[bank_index(burst)], out[i - 1].cas, out[i - 1].done);
    count(RowOutcome::Hit, bank_index(burst), burst.write, i - 1);
  }
  if (all) scheduler_->issued(out[n - 1].cas, out[n - 1].data_start + burst_ticks_);
  // Their slots: one CAS interval (they touch), one data interval where the bursts fill tCCD_L;
  // the same bits, busy total and ends as a reservation each, and the window as their checks
  // left it.
  booked_in_one_step += i - 1;
  slots.reserve_every(first, ccd_l, ccd_l, i - 1);
  bus_.reserve_every(first + lat, burst_ticks_, ccd_l, i - 1, kind);
  return i;
}

std::uint32_t Channel::hits_in_place(const Burst& burst, std::uint32_t n, const Result* out) {
  // How many of the run (burst 0 included) take their slots tCCD_L apart, checked burst by
  // burst: the scheduler's answer, the CAS slot and the data slot of each.
  const Tick ccd_l = cyc(cfg_.t.tCCD_L), lat = cyc(burst.write ? cfg_.t.tWL : cfg_.t.tRL);
  const std::uint8_t kind = burst.write ? 1 : 0;
  Timeline& slots = cas_slots(burst);
  std::uint32_t i = 1;
  for (Tick cas = out[0].cas + ccd_l; i < n; ++i, cas += ccd_l) {
    if (!slots.fits_at(cas, ccd_l) || scheduler_->earliest_cas(cas) != cas ||
        scheduler_->earliest_data(cas + lat) != cas + lat || !bus_.fits_at(cas + lat, burst_ticks_, kind))
      break;
    scheduler_->issued(cas, cas + lat + burst_ticks_);
  }
  return i;
}

void Channel::count(RowOutcome outcome, std::uint32_t bank_index, bool write, std::uint64_t bursts) {
  BankCounters& bc = counters_[bank_index];
  switch (outcome) {
    case RowOutcome::Hit:
      row_hits += bursts;
      bc.hits += bursts;
      break;
    case RowOutcome::Miss:
      row_misses += bursts;
      bc.misses += bursts;
      break;
    case RowOutcome::Conflict:
      row_conflicts += bursts;
      bc.conflicts += bursts;
      break;
  }
  (write ? writes : reads) += bursts;
}

// The fast fidelity keeps each bank's open row, its ACT / PRE bounds (tRCD, tRP, tRAS, tRC, tRTP,
// tWR) and column order (tCCD_L), the rank's activation limits (tRRD, tFAW) and refresh as access()
// does. The data bus is a budget: its throughput is kept, its exact gaps are not. Left out, as what
// costs a search: the bank group's CAS slots shared by its banks (with them as a budget too, the
// shipped scenarios came out further from the detailed mode, not closer: docs/performance.md) and
// the scheduler (its reordering, and fcfs's strict order).
void Channel::run_fast(const Burst& burst, std::uint32_t n, Result* out) {
  const Timing& tm = cfg_.t;
  const std::uint32_t index = bank_index(burst);
  BankState& b = banks_[index];
  RowOutcome outcome;
  const Tick cas = open_row(burst, b, outcome);
  // The run's bursts follow each other tCCD_L apart (one bank), or back to back when a burst is
  // longer. The bus counts their cycles as one booking at the first burst; where tCCD_L is longer
  // than a burst (HBM2), the bursts are given their spaced times, so another bank's data may be
  // given times that overlap them: a budget keeps the bus's cycles per window, not each burst's
  // place in it. (Bursts booked one by one queued each behind the window's other bookings: 18%
  // off on kernels/add-asm.)
  const std::uint64_t lat = burst.write ? tm.tWL : tm.tRL;
  const Tick step = std::max(cyc(tm.tCCD_L), burst_ticks_);
  const Tick data = cyc(book_bus(cas / clock_.period() + lat, burst.write, n));
  for (std::uint32_t i = 0; i < n; ++i) {
    const Tick at = data + i * step;
    out[i] = Result{at - cyc(lat), at, at + cyc(cfg_.geo.burst_length / 2), i ? RowOutcome::Hit : outcome};
    count(out[i].outcome, index, burst.write);
  }
  fast_last_start_ = data / clock_.period();
  fast_last_end_ = out[n - 1].done / clock_.period();
  column_done(burst, b, out[n - 1].cas, out[n - 1].done);
}

// The data-bus cycles of `n` bursts from clock `want` on; returns their first clock. Placed at or
// after the other direction's last run's start and less than a turnaround (tRTW; tWTR + tRL) after
// its end, the data waits for the rest of the turnaround, booked as bus time too (the bus's
// direction is its last run's, in the order the runs come; a run placed before it pays none).
std::uint64_t Channel::book_bus(std::uint64_t want, bool write, std::uint32_t n) {
  const std::uint64_t cycles = n * (burst_ticks_ / clock_.period());
  std::uint64_t data = fast_bus_.reserve(want, cycles);
  if (fast_last_end_ && fast_write_ != write && data >= fast_last_start_) {
    const std::uint64_t turn = write ? cfg_.t.tRTW : std::uint64_t(cfg_.t.tWTR) + cfg_.t.tRL;
    if (data < fast_last_end_ + turn) {
      const std::uint64_t gap = std::min(turn, fast_last_end_ + turn - data);
      fast_bus_.reserve(data + cycles, gap);
      data += gap;
    }
  }
  fast_write_ = write;
  fast_data_cycles_ += cycles;
  return data;
}

}  // namespace dvp::dram
