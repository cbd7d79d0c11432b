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

#include "common/timeline.hpp"
#include "dram_config.hpp"

namespace dvp::dram {

enum class RowOutcome : std::uint8_t { Hit, Miss, Conflict };

struct BankCounters {
  std::uint64_t hits = 0, misses = 0, conflicts = 0;
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

  // One burst at `arrival` (controller front-end latency already added by the caller).
  // `close_row`: precharge right after this burst (closed-page policy, last burst to the row).
  Result access(bool write, std::uint32_t rank, std::uint32_t bank_group, std::uint32_t bank, std::uint32_t row,
                Tick arrival, bool close_row);

  // Counts the refreshes that fall due up to `end` with no traffic (for stats).
  void finish(Tick end);

  // Statistics.
  std::uint64_t reads = 0, writes = 0;
  std::uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0, refreshes = 0;
  Tick data_busy() const { return bus_.busy_total(); }
  const std::vector<BankCounters>& bank_counters() const { return counters_; }

 private:
  struct Bank {
    std::int64_t open_row = -1;
    Tick act = 0;        // last ACT
    Tick ready_act = 0;  // earliest next ACT (tRC, tRP, refresh)
    Tick ready_pre = 0;  // earliest PRE (tRAS, tRTP, tWR)
    Tick last_cas = 0;
    bool any_cas = false;
  };
  struct Rank {
    Tick faw[4] = {0, 0, 0, 0};  // last four ACTs, oldest at faw_idx
    unsigned faw_idx = 0;
    unsigned acts = 0;
    Tick last_act = 0;
    std::vector<Tick> last_act_bg;
    bool any_act = false;
    Tick next_refresh = 0;
  };

  Tick cyc(std::uint64_t n) const { return clock_.cycles(n); }
  void refresh_until(Rank& r, std::uint32_t rank, Tick t);
  Tick activate(Rank& r, Bank& b, std::uint32_t bank_group, Tick earliest);

  Config cfg_;
  Clock clock_;
  std::vector<Bank> banks_;  // rank-major
  std::vector<Rank> ranks_;
  std::vector<BankCounters> counters_;
  std::vector<Timeline> cas_bg_;  // per rank x bank group: CAS slots tCCD_L wide
  Timeline bus_;                  // data bus; kind 0 read, 1 write
  Tick last_cas_ = 0, last_data_end_ = 0;  // fcfs order
  Tick burst_ticks_ = 0;                   // data-bus occupancy of one burst
};

}  // namespace dvp::dram
