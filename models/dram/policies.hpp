// SPDX-License-Identifier: MIT
// The DRAM controller's policies, each an interface with its implementations named in one
// table (cfg::Choices) that gives the schema its choices and the configuration its factory.
// Adding a policy is a class here (or in its own file) and one line in its table.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "bank_state.hpp"
#include "common/config.hpp"
#include "common/time.hpp"

namespace dvp::dram {

struct Config;

// The order a channel's column commands and data keep (platform.dram.scheduler).
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // The earliest column command for a burst whose bank allows one at `cas`.
  virtual Tick earliest_cas(Tick cas) const = 0;
  // The earliest start of its data, which the bank and bus allow at `data`.
  virtual Tick earliest_data(Tick data) const = 0;
  // The burst took its slots: column command at `cas`, data on the bus until `data_end`.
  virtual void issued(Tick cas, Tick data_end) = 0;
  // Whether `count` bursts issued one after another, column commands `ccd` apart from `cas`, each
  // one's data `lat` after its command and on the bus no longer than `ccd`, would each get those
  // slots (earliest_cas and earliest_data answering them, issued() between): a run of row hits.
  virtual bool keeps_run(Tick cas, Tick ccd, std::uint32_t count, Tick lat) const = 0;
};
using MakeScheduler = std::unique_ptr<Scheduler> (*)(const Config&);
const cfg::Choices<MakeScheduler>& schedulers();

// When a rank refreshes and what that costs its banks (platform.dram.refresh).
class Refresh {
 public:
  virtual ~Refresh() = default;
  // Performs the refreshes of `rank` due up to `t`: they close its banks and hold off their
  // activates. Returns how many.
  virtual std::uint64_t until(RankState& rank, BankState* banks, std::uint32_t bank_count, Tick t) = 0;
  // The refreshes due up to `end` with no traffic, counted for the statistics.
  virtual std::uint64_t idle_until(RankState& rank, Tick end) = 0;
  virtual bool enabled() const = 0;
};
using MakeRefresh = std::unique_ptr<Refresh> (*)(const Config&);
const cfg::Choices<MakeRefresh>& refresh_policies();

}  // namespace dvp::dram
