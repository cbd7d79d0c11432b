// SPDX-License-Identifier: MIT
// Parameters of the DRAM subsystem (platform.dram), read once and validated.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "common/fidelity.hpp"
#include "common/time.hpp"
#include "policies.hpp"

namespace dvp::dram {

enum class Standard { Lpddr4, Hbm2 };
enum class PagePolicy { Open, Closed };

// JEDEC-style timing, all in DRAM clock cycles (tCK).
struct Timing {
  std::uint32_t tRCD, tRP, tRAS, tRL, tWL, tCCD_S, tCCD_L, tRRD_S, tRRD_L, tFAW, tWR, tWTR, tRTP, tRFC, tREFI, tRTW;
  // ACT to ACT in one bank. Not a key of its own: a separate tRC at least tRAS + tRP (the only
  // valid kind) left tRAS with no effect, as the next ACT always waited for tRC.
  std::uint32_t tRC() const { return tRAS + tRP; }
};

struct Geometry {
  std::uint32_t channels;  // total, over all controllers
  std::uint32_t ranks, bank_groups, banks_per_group, rows, columns;
  std::uint32_t bus_width_bits, burst_length;
  std::uint32_t banks() const { return bank_groups * banks_per_group; }
  std::uint32_t bus_bytes() const { return bus_width_bits / 8; }
  std::uint32_t burst_bytes() const { return bus_bytes() * burst_length; }
  std::uint32_t bursts_per_row() const { return columns / burst_length; }
  std::uint64_t row_bytes() const { return std::uint64_t(columns) * bus_bytes(); }
  std::uint64_t channel_bytes() const { return std::uint64_t(ranks) * banks() * rows * row_bytes(); }
  std::uint64_t capacity() const { return channel_bytes() * channels; }
};

struct Config {
  Standard standard = Standard::Lpddr4;
  std::string type;  // its name: lpddr4 | hbm2
  std::uint32_t controllers = 1;
  std::uint32_t channels_per_controller = 1;
  Geometry geo{};
  Timing t{};
  std::uint32_t data_rate_mtps = 0;
  Clock clock;  // tCK = 2 / data rate (double data rate)
  std::uint32_t frontend_cycles = 0;
  PagePolicy page = PagePolicy::Open;
  MakeScheduler scheduler = nullptr;  // each channel makes its own (policies.hpp)
  MakeRefresh refresh = nullptr;
  bool bank_xor = false;                   // bank index ^= XOR-fold of the row (bank_hash: xor)
  bool channel_xor = false;                // channel ^= XOR-fold of the bits above it (channel_hash: xor)
  std::uint32_t write_queue = 0;           // write bursts buffered before a drain; 0: no buffering
  std::vector<std::string> mapping;        // LSB first, after the burst offset
  Fidelity fidelity = Fidelity::Detailed;  // platform.memory.fidelity (the platform sets it)

  static void describe(cfg::Spec& s);
  static Config from(const cfg::Node& n);  // validates cross-field rules, names the key

  double peak_bytes_per_ps() const {  // whole subsystem
    return double(geo.channels) * geo.bus_bytes() * 2.0 / double(clock.period());
  }
  double peak_GBps() const { return peak_bytes_per_ps() * 1000.0; }
};

}  // namespace dvp::dram
