// SPDX-License-Identifier: MIT
// One DRAM channel: banks with their open rows, the rank-level activation limits, refresh,
// and the shared data bus. Plain C++ (no SystemC process): the controller calls access() for
// each burst and gets the time its data transfer ends.
//
// Timing style (see docs/models.md#dram): every bank keeps its state in the order bursts are
// handed to it; the data bus and the per-bank-group CAS slots are gap-aware timelines.
// Under `frfcfs` a burst that is ready (a row hit, or a bank that is idle) takes the earliest
// free data-bus slot even if bursts handed in earlier to other banks, still waiting for their
// precharge or activate, get theirs later: ready bursts overtake waiting ones, as a first-
// ready FCFS scheduler would let them. Under `fcfs` every burst's column command and data
// come strictly after those of the burst before it.
#pragma once
#include <cstdint>
#include <vector>

#include <memory>

#include "bank_state.hpp"
#include "common/budget.hpp"
#include "common/timeline.hpp"
#include "dram_config.hpp"
#include "policies.hpp"

namespace dvp::dram {

enum class RowOutcome : std::uint8_t { Hit, Miss, Conflict };

struct BankCounters {
  std::uint64_t hits = 0, misses = 0, conflicts = 0;
};

// One burst handed to a channel: where it goes and when it may start.
struct Burst {
  bool write = false;
  std::uint32_t rank = 0, bank_group = 0, bank = 0, row = 0;
  Tick arrival = 0;        // controller front-end latency already added
  bool close_row = false;  // precharge right after it (closed page, last burst to the row)
};

class Channel {
 public:
  explicit Channel(const Config& c);

  struct Result {
    Tick cas;         // column command issue time
    Tick data_start;  // first beat on the bus
    Tick done;        // last beat on the bus
    RowOutcome outcome;
  };

  Result access(const Burst& b);
  // The `n` bursts of a request that fall in one row of one bank, one after another (`b` is the
  // first; its close_row stands for the last): out[i] is what access() would have answered for
  // burst i, booked one by one. The bursts after the first are row hits that usually take the
  // slots tCCD_L after each other; when the timelines and the scheduler give them exactly those,
  // they are booked in one step (one CAS interval, one data interval when bursts fill tCCD_L).
  void access_run(const Burst& b, std::uint32_t n, Result* out);

  // Counts the refreshes that fall due up to `end` with no traffic (for stats).
  void finish(Tick end);

  // Statistics.
  std::uint64_t reads = 0, writes = 0;
  std::uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0, refreshes = 0;
  std::uint64_t booked_in_one_step = 0;  // bursts access_run's short way took (host speed; not a statistic)
  Tick data_busy() const { return fast() ? cyc(fast_data_cycles_) : bus_.busy_total(); }
  const std::vector<BankCounters>& bank_counters() const { return counters_; }

 private:
  Tick cyc(std::uint64_t n) const { return clock_.cycles(n); }
  Tick activate(RankState& r, BankState& b, std::uint32_t bank_group, Tick earliest);
  // The earliest CAS the bank allows a burst (refresh, PRE, ACT, column order); opens its row.
  Tick open_row(const Burst& burst, BankState& b, RowOutcome& outcome);
  // The column command and data slots for a burst whose bank allows its CAS at `cas`.
  Tick place(const Burst& b, Tick cas);
  // What follows a burst's column command at `cas`: its data, the bank's state, the counters.
  Result issue(const Burst& burst, BankState& b, std::uint32_t bank_index, Tick cas, RowOutcome outcome);
  void column_done(const Burst& burst, BankState& b, Tick cas, Tick done);
  // access_run's short way for bursts 1 .. n-1 after out[0]; returns how many bursts are done
  // (1: none of them).
  std::uint32_t run_in_one_step(const Burst& b, std::uint32_t n, Result* out);
  std::uint32_t hits_in_place(const Burst& b, std::uint32_t n, const Result* out);
  std::uint32_t bank_index(const Burst& b) const {
    return b.rank * cfg_.geo.banks() + b.bank_group * cfg_.geo.banks_per_group + b.bank;
  }
  Timeline& cas_slots(const Burst& b) { return cas_bg_[std::size_t(b.rank) * cfg_.geo.bank_groups + b.bank_group]; }
  void count(RowOutcome outcome, std::uint32_t bank_index, bool write, std::uint64_t bursts = 1);
  // The fast fidelity (common/fidelity.hpp): the `n` bursts of a run to one row as access_run
  // answers them, from the bank's row state, its ACT and PRE bounds, refresh, and a data-bus budget.
  bool fast() const { return cfg_.fidelity == Fidelity::Fast; }
  void run_fast(const Burst& b, std::uint32_t n, Result* out);
  std::uint64_t book_bus(std::uint64_t want, bool write, std::uint32_t n);

  Config cfg_;
  Clock clock_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<Refresh> refresh_;
  std::vector<BankState> banks_;  // rank-major
  std::vector<RankState> ranks_;
  std::vector<BankCounters> counters_;
  std::vector<Timeline> cas_bg_;        // per rank x bank group: CAS slots tCCD_L wide
  Timeline bus_;                        // data bus; kind 0 read, 1 write
  Tick burst_ticks_ = 0;                // data-bus occupancy of one burst
  Budget fast_bus_;                     // the data bus in the fast fidelity, in clocks
  bool fast_write_ = false;             // its last run's direction (in the order they come)
  std::uint64_t fast_last_start_ = 0;   // and its data's start and end, in clocks
  std::uint64_t fast_last_end_ = 0;     // (0: none yet)
  std::uint64_t fast_data_cycles_ = 0;  // clocks it carried data
};

}  // namespace dvp::dram
