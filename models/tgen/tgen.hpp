// SPDX-License-Identifier: MIT
// A requester that generates memory traffic: sequential, strided or random reads and writes,
// or the replay of a text trace (docs/scenarios.md#trace-files). It is a TLM-2.0 initiator
// with temporal decoupling: it issues while fewer than `outstanding` requests are in flight,
// runs ahead of SystemC time by up to the global quantum, and splits every access at L2
// line boundaries (one memory transaction per piece).
//
// Written data is a function of the address only (pattern_byte), so with `verify` every read
// of bytes this generator wrote is compared with what was written, even across generators.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_set>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "common/config.hpp"
#include "common/stats.hpp"
#include "common/trace.hpp"

namespace dvp::tgen {

enum class Pattern { Sequential, Strided, Random, Trace };

struct TraceRecord {
  Tick time;
  bool write;
  std::uint64_t addr;
  std::uint32_t size;
};

// Reads a trace file; errors name the file and line.
std::vector<TraceRecord> load_trace(const std::string& path);

struct TgenConfig {
  std::string name;
  Pattern pattern = Pattern::Sequential;
  std::uint64_t region_base = 0;  // absolute address
  std::uint64_t region_bytes = 0;
  std::uint32_t access_bytes = 64;
  std::uint64_t stride_bytes = 0;
  std::uint64_t count = 0;
  double read_fraction = 1.0;
  std::uint32_t outstanding = 16;
  std::uint32_t issue_cycles = 1;
  Clock clock;
  Tick start = 0;
  std::uint64_t seed = 1;
  bool verify = false;
  std::vector<TraceRecord> trace;  // pattern Trace

  // The keys of one entry of a scenario's `traffic:` list.
  static void describe(cfg::Spec& s);
};

// One entry of a scenario's `traffic:` list: the configuration every instance shares, and how
// instances differ (region, seed, stop). Read and checked once, naming the key at fault.
struct TgenGroup {
  TgenConfig base;  // region_base relative to the DRAM base is region_offset
  std::uint32_t instances = 1;
  std::uint64_t region_offset = 0;
  std::optional<std::uint64_t> region_base;  // absolute, instead of region_offset (a device's region)
  std::uint64_t instance_stride = 0;
  std::vector<std::uint64_t> stops;  // empty: spread over the ring

  // `dir`: the scenario's directory, for a relative trace_file.
  static TgenGroup from(const cfg::Node& t, const std::string& dir);
};

std::uint8_t pattern_byte(std::uint64_t addr);

class TrafficGenerator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<TrafficGenerator> socket;

  TrafficGenerator(sc_core::sc_module_name name, const TgenConfig& cfg, std::uint32_t line_bytes, bool timing_only);

  bool done() const { return finished_; }
  bool verifying() const { return cfg_.verify && !timing_only_; }
  std::uint64_t verify_errors() const { return verify_errors_; }
  const std::string& first_error() const { return first_error_; }
  std::uint64_t transactions() const { return transactions_; }
  Tick last_done() const { return last_done_; }
  std::uint64_t latency_ps_total() const { return latency_ps_; }

 private:
  void run();
  void next_access(std::uint64_t i, std::uint64_t& addr, bool& write, std::uint32_t& size, Tick& not_before);
  void check_read(std::uint64_t addr, const std::uint8_t* data, std::uint32_t len);

  TgenConfig cfg_;
  std::uint32_t line_bytes_;
  bool timing_only_;
  std::uint64_t rng_;
  bool finished_ = false;
  std::vector<std::uint8_t> buf_;
  std::unordered_set<std::uint64_t> written_;  // chunk addresses this generator wrote
  std::string first_error_;
  Tracer::Lane lane_;
  stats::Group stats_;
  std::uint64_t &transactions_, &reads_, &writes_, &bytes_read_, &bytes_written_, &latency_ps_, &max_latency_ps_,
      &verify_errors_, &verified_bytes_;
  Tick first_issue_ = kTickMax, last_done_ = 0;
};

}  // namespace dvp::tgen
