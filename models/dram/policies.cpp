// SPDX-License-Identifier: MIT
#include "policies.hpp"

#include <algorithm>

#include "dram_config.hpp"

namespace dvp::dram {

namespace {

// First ready, first come: a burst whose bank is ready takes the earliest free slots, ahead of
// bursts handed in earlier that still wait for their precharge or activate.
class FrFcfs : public Scheduler {
 public:
  explicit FrFcfs(const Config&) {}
  Tick earliest_cas(Tick cas) const override { return cas; }
  Tick earliest_data(Tick data) const override { return data; }
  void issued(Tick, Tick) override {}
  bool keeps_run(Tick, Tick, std::uint32_t, Tick) const override { return true; }
};

// Strictly in arrival order: each burst's column command and data come after the last ones.
class Fcfs : public Scheduler {
 public:
  explicit Fcfs(const Config& c) : ccd_s_(c.clock.cycles(c.t.tCCD_S)) {}
  Tick earliest_cas(Tick cas) const override { return any_ ? std::max(cas, last_cas_ + ccd_s_) : cas; }
  Tick earliest_data(Tick data) const override { return std::max(data, last_data_end_); }
  void issued(Tick cas, Tick data_end) override {
    any_ = true;
    last_cas_ = std::max(last_cas_, cas);
    last_data_end_ = std::max(last_data_end_, data_end);
  }
  // The first burst in its slots is the last issued when the next asks: the next comes ccd after
  // it (in order when ccd >= tCCD_S), its data ccd after the first's, past the first's end.
  bool keeps_run(Tick cas, Tick ccd, std::uint32_t count, Tick lat) const override {
    return earliest_cas(cas) == cas && earliest_data(cas + lat) == cas + lat && (count == 1 || ccd >= ccd_s_);
  }

 private:
  Tick ccd_s_;
  bool any_ = false;
  Tick last_cas_ = 0, last_data_end_ = 0;
};

// All-bank refresh every tREFI: precharge every open bank (tRP), then tRFC with no activate.
class AllBank : public Refresh {
 public:
  explicit AllBank(const Config& c)
      : clock_(c.clock),
        rp_(c.clock.cycles(c.t.tRP)),
        rfc_(c.clock.cycles(c.t.tRFC)),
        refi_(c.clock.cycles(c.t.tREFI)) {}
  std::uint64_t until(RankState& r, BankState* banks, std::uint32_t n, Tick t) override {
    std::uint64_t count = 0;
    for (; r.next_refresh <= t; r.next_refresh += refi_, ++count) {
      const Tick due = r.next_refresh;
      Tick start = due;
      for (std::uint32_t i = 0; i < n; ++i) {
        BankState& b = banks[i];
        if (b.open_row >= 0) {
          start = std::max(start, std::max(due, b.ready_pre) + rp_);
          b.open_row = -1;
        }
        start = std::max(start, b.ready_act);  // an ACT in flight must finish its tRC
      }
      const Tick end = start + rfc_;
      for (std::uint32_t i = 0; i < n; ++i) banks[i].ready_act = std::max(banks[i].ready_act, end);
    }
    return count;
  }
  std::uint64_t idle_until(RankState& r, Tick end) override {
    std::uint64_t count = 0;
    for (; r.next_refresh <= end; r.next_refresh += refi_) ++count;
    return count;
  }
  bool enabled() const override { return true; }

 private:
  Clock clock_;
  Tick rp_, rfc_, refi_;
};

// No refresh (what-if: the bandwidth refresh costs).
class NoRefresh : public Refresh {
 public:
  explicit NoRefresh(const Config&) {}
  std::uint64_t until(RankState&, BankState*, std::uint32_t, Tick) override { return 0; }
  std::uint64_t idle_until(RankState&, Tick) override { return 0; }
  bool enabled() const override { return false; }
};

template <typename P, typename I>
std::unique_ptr<I> make(const Config& c) {
  return std::make_unique<P>(c);
}

}  // namespace

const cfg::Choices<MakeScheduler>& schedulers() {
  static const cfg::Choices<MakeScheduler> table = {
      {"frfcfs", make<FrFcfs, Scheduler>,
       "ready (row-hit) bursts of other banks overtake waiting ones (first ready, first come)"},
      {"fcfs", make<Fcfs, Scheduler>, "strictly in arrival order"},
  };
  return table;
}

const cfg::Choices<MakeRefresh>& refresh_policies() {
  static const cfg::Choices<MakeRefresh> table = {
      {"all_bank", make<AllBank, Refresh>, "every tREFI the rank precharges all banks and refreshes for tRFC"},
      {"none", make<NoRefresh, Refresh>, "no refresh (a what-if: what refresh costs)"},
  };
  return table;
}

}  // namespace dvp::dram
