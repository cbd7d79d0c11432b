// SPDX-License-Identifier: MIT
#include "tgen.hpp"

#include <tlm_utils/tlm_quantumkeeper.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "common/payload.hpp"
#include "common/system.hpp"

namespace dvp::tgen {

using cfg::Type;

namespace {
const cfg::Choices<Pattern> kPatterns = {
    {"sequential", Pattern::Sequential, "consecutive accesses through the region, wrapping"},
    {"strided", Pattern::Strided, "accesses stride_bytes apart, wrapping"},
    {"random", Pattern::Random, "uniform random aligned addresses in the region"},
    {"trace", Pattern::Trace, "the accesses of trace_file, at their times"},
};
}  // namespace

void TgenConfig::describe(cfg::Spec& s) {
  s.param("name", Type::String, "requester name; instances are <name>0, <name>1, ..., no two alike in the scenario");
  s.param("instances", Type::Int, "copies of this requester, each with its own region").range(1, 1024).defaults("1");
  s.param("stops", Type::IntList, "ring stop of each instance (cycled if shorter); empty: spread over the ring")
      .defaults("[]")
      .min(0);
  s.param("pattern", Type::Enum, "address pattern: " + kPatterns.doc()).choices(kPatterns.names());
  s.param("region_offset", Type::Int, "start of the first instance's region, from the DRAM base")
      .unit("B")
      .defaults("0")
      .min(0);
  s.param("region_base", Type::Int,
          "instead of region_offset, the absolute address of the first instance's region: one in DRAM, or in an RTL "
          "block's target region (platform.rtl), where accesses are split at 4 KiB instead of L2 lines")
      .unit("B")
      .optional()
      .min(0);
  s.param("region_bytes", Type::Int, "size of each instance's region; addresses wrap inside it")
      .unit("B")
      .defaults("1048576")
      .min(1);
  s.param("instance_stride_bytes", Type::Int, "distance between instances' regions (default: region_bytes)")
      .unit("B")
      .optional()
      .min(0);
  s.param("access_bytes", Type::Int, "bytes per access; split at L2 line boundaries")
      .unit("B")
      .defaults("64")
      .range(1, 1 << 20);
  s.param("stride_bytes", Type::Int, "distance between accesses (pattern strided)").unit("B").defaults("0").min(0);
  s.param("count", Type::Int, "accesses per instance (pattern trace: ignored)").defaults("1000").min(0);
  s.param("read_fraction", Type::Float, "probability that an access is a read").defaults("1").range(0, 1);
  s.param("outstanding", Type::Int, "requests in flight at most").defaults("16").range(1, 65536);
  s.param("issue_cycles", Type::Int, "cycles between two issues at best").defaults("1").range(0, 1 << 20);
  s.param("clock_mhz", Type::Float, "requester clock").unit("MHz").defaults("1000").range(1, 10000);
  s.param("start_ns", Type::Float, "time of the first issue").unit("ns").defaults("0").range(0, 1e12);
  s.param("seed", Type::Int, "seed of the random pattern and read/write choice").defaults("1").range(0, 9.0e18);
  s.param("verify", Type::Bool, "compare read data with what was written").defaults("false");
  s.param("trace_file", Type::String, "trace to replay (pattern trace), relative to the scenario file").optional();
}

TgenGroup TgenGroup::from(const cfg::Node& t, const std::string& dir) {
  TgenGroup g;
  TgenConfig& c = g.base;
  c.name = t.get_string("name");
  c.pattern = kPatterns.parse(t.at("pattern"));
  c.region_bytes = t.get_uint("region_bytes");
  c.access_bytes = std::uint32_t(t.get_uint("access_bytes"));
  c.stride_bytes = t.get_uint("stride_bytes");
  c.count = t.get_uint("count");
  c.read_fraction = t.get_double("read_fraction");
  c.outstanding = std::uint32_t(t.get_uint("outstanding"));
  c.issue_cycles = std::uint32_t(t.get_uint("issue_cycles"));
  c.clock = Clock(t.get_double("clock_mhz"));
  c.start = ns_to_tick(t.get_double("start_ns"));
  c.seed = t.get_uint("seed");
  c.verify = t.get_bool("verify");
  if (c.pattern == Pattern::Trace) {
    if (!t.has("trace_file")) t.fail("pattern trace needs trace_file");
    std::filesystem::path tf = t.get_string("trace_file");
    if (tf.is_relative()) tf = std::filesystem::path(dir) / tf;
    try {
      c.trace = load_trace(tf.string());
    } catch (const Error& e) {
      t.at("trace_file").fail(e.what());  // names the scenario's key as well as the file and line
    }
  }
  if (c.pattern == Pattern::Strided && c.stride_bytes == 0)
    t.at("stride_bytes").fail("pattern strided needs a non-zero stride_bytes");
  if (c.region_bytes < c.access_bytes)
    t.at("region_bytes").fail("region is smaller than one access (" + std::to_string(c.access_bytes) + " B)");
  g.instances = std::uint32_t(t.get_uint("instances"));
  g.region_offset = t.get_uint("region_offset");
  if (const cfg::Node* b = t.find("region_base")) g.region_base = b->as_uint();
  g.instance_stride = t.has("instance_stride_bytes") ? t.get_uint("instance_stride_bytes") : c.region_bytes;
  g.stops = t.get_uint_list("stops");
  return g;
}

std::uint8_t pattern_byte(std::uint64_t addr) {
  // splitmix64 of the 8-byte word address.
  std::uint64_t z = (addr >> 3) + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return std::uint8_t(z >> ((addr & 7) * 8));
}

std::vector<TraceRecord> load_trace(const std::string& path) {
  // A trace is a regular file: a directory, a FIFO or /dev/zero is named, not read forever.
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) throw Error(path + ": cannot open trace file: no such file");
  if (!std::filesystem::is_regular_file(st)) throw Error(path + ": a trace file must be a regular file");
  errno = 0;
  std::ifstream f(path);
  if (!f) throw Error(path + ": cannot open trace file: " + std::strerror(errno));
  std::vector<TraceRecord> out;
  std::string line;
  int lineno = 0;
  while (std::getline(f, line)) {
    ++lineno;
    auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream is(line);
    std::string t, rw, addr, size;
    if (!(is >> t)) continue;
    auto bad = [&](const std::string& why) {
      throw Error(path + ":" + std::to_string(lineno) + ": " + why + " (expected: <time_ns> R|W <address> <size>)");
    };
    if (!(is >> rw >> addr >> size)) bad("too few fields");
    std::string extra;
    if (is >> extra) bad("unexpected field '" + extra + "'");
    TraceRecord r{};
    try {
      std::size_t pos;
      double ns = std::stod(t, &pos);
      // At most 10^15 ns (11.6 days, as run.max_sim_ns): a time must fit the picosecond tick.
      if (pos != t.size() || !(ns >= 0 && ns <= 1e15)) bad("bad time '" + t + "' (0 .. 1e15 ns)");
      r.time = ns_to_tick(ns);
    } catch (const std::logic_error&) {
      bad("bad time '" + t + "'");
    }
    // Hex with 0x, else decimal: a zero-padded decimal is not octal, a sign is no address.
    const auto number = [&](const std::string& text, const char* what, std::uint64_t& v) {
      const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
      const char* end = text.data() + text.size();
      const auto [p, ec] = std::from_chars(text.data() + (hex ? 2 : 0), end, v, hex ? 16 : 10);
      if (ec != std::errc() || p != end)
        bad(std::string("bad ") + what + " '" + text + "' (hex with 0x or decimal, at most 2^64 - 1)");
    };
    std::uint64_t sz = 0;
    number(addr, "address", r.addr);
    number(size, "size", sz);
    if (sz == 0 || sz > (1u << 20)) bad("bad size '" + size + "' (1 .. 1 MiB)");
    r.size = std::uint32_t(sz);
    if (r.addr > ~std::uint64_t(0) - r.size)  // its end, one past its last byte, would not fit an address
      bad("the access at " + addr + " of " + size + " bytes reaches the top of the address space");
    if (rw == "R" || rw == "r")
      r.write = false;
    else if (rw == "W" || rw == "w")
      r.write = true;
    else
      bad("bad operation '" + rw + "'");
    if (!out.empty() && r.time < out.back().time) bad("time goes backwards");
    out.push_back(r);
  }
  return out;
}

TrafficGenerator::TrafficGenerator(sc_core::sc_module_name name, const TgenConfig& cfg, std::uint32_t line_bytes,
                                   bool timing_only)
    : sc_module(name),
      socket("socket"),
      cfg_(cfg),
      line_bytes_(line_bytes),
      timing_only_(timing_only),
      rng_(cfg.seed * 0x9E3779B97F4A7C15ull + 0x1234567),
      buf_(line_bytes),
      lane_(system_of(*this).tracer().lane("requesters", this->name())),
      stats_(*this),
      transactions_(stats_.counter("transactions", "memory transactions (line-sized pieces) completed")),
      reads_(stats_.counter("reads", "read transactions")),
      writes_(stats_.counter("writes", "write transactions")),
      bytes_read_(stats_.counter("bytes_read", "bytes read")),
      bytes_written_(stats_.counter("bytes_written", "bytes written")),
      latency_ps_(stats_.counter("latency_ps_total", "sum of transaction latencies, ps")),
      max_latency_ps_(stats_.counter("max_latency_ps", "longest transaction latency, ps")),
      verify_errors_(
          stats_.counter("verify_errors", "read bytes that differ from what was written", stats::Group::Counts::Data)),
      verified_bytes_(
          stats_.counter("verified_bytes", "read bytes compared with written data", stats::Group::Counts::Data)) {
  SC_HAS_PROCESS(TrafficGenerator);
  SC_THREAD(run);
  stats_.formula("avg_latency_ns", "mean transaction latency (issue to completion)",
                 [this] { return transactions_ ? double(latency_ps_) / double(transactions_) / 1000.0 : 0.0; });
  stats_.formula("achieved_GBps", "bytes / (last completion - first issue)", [this] {
    if (last_done_ <= first_issue_ || first_issue_ == kTickMax) return 0.0;
    return double(bytes_read_ + bytes_written_) / double(last_done_ - first_issue_) * 1000.0;
  });
}

void TrafficGenerator::next_access(std::uint64_t i, std::uint64_t& addr, bool& write, std::uint32_t& size,
                                   Tick& not_before) {
  auto next_rand = [this] {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return rng_;
  };
  not_before = 0;
  if (cfg_.pattern == Pattern::Trace) {
    const TraceRecord& r = cfg_.trace[i];
    addr = r.addr;
    write = r.write;
    size = r.size;
    not_before = r.time;
    return;
  }
  size = cfg_.access_bytes;
  const std::uint64_t slots = std::max<std::uint64_t>(1, cfg_.region_bytes / cfg_.access_bytes);
  std::uint64_t off = 0;
  switch (cfg_.pattern) {
    case Pattern::Sequential: off = (i % slots) * cfg_.access_bytes; break;
    case Pattern::Strided: off = (i * cfg_.stride_bytes) % (slots * cfg_.access_bytes); break;
    case Pattern::Random: off = (next_rand() % slots) * cfg_.access_bytes; break;
    default: break;
  }
  addr = cfg_.region_base + off;
  write = cfg_.read_fraction < 1.0 && double(next_rand() >> 11) * 0x1.0p-53 >= cfg_.read_fraction;
}

void TrafficGenerator::check_read(std::uint64_t addr, const std::uint8_t* data, std::uint32_t len) {
  if (!written_.count(addr)) return;
  verified_bytes_ += len;
  for (std::uint32_t b = 0; b < len; ++b) {
    if (data[b] != pattern_byte(addr + b)) {
      if (!verify_errors_) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "%s: read of %s returned 0x%02x at byte %u, wrote 0x%02x", name(),
                      hex(addr + b).c_str(), data[b], b, pattern_byte(addr + b));
        first_error_ = msg;
      }
      ++verify_errors_;
    }
  }
}

void TrafficGenerator::run() {
  static TimingOnly timing_only_ext;
  tlm_utils::tlm_quantumkeeper qk;
  qk.reset();
  if (cfg_.start) wait(to_sc(cfg_.start));
  tlm::tlm_generic_payload p;
  p.set_data_ptr(buf_.data());
  p.set_byte_enable_ptr(nullptr);
  if (timing_only_) p.set_extension(&timing_only_ext);
  std::priority_queue<Tick, std::vector<Tick>, std::greater<Tick>> in_flight;
  const Tick issue_gap = cfg_.clock.cycles(cfg_.issue_cycles);
  const Tick quantum = to_tick(tlm::tlm_global_quantum::instance().get());
  Tick local = now_tick();
  const std::uint64_t count = cfg_.pattern == Pattern::Trace ? cfg_.trace.size() : cfg_.count;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t addr;
    bool write;
    std::uint32_t size;
    Tick not_before;
    next_access(i, addr, write, size, not_before);
    local = std::max(local, not_before);
    // Split at line boundaries: one transaction per piece.
    for (std::uint64_t a = addr, end = addr + size; a < end;) {
      std::uint32_t piece = std::uint32_t(std::min<std::uint64_t>(end - a, line_bytes_ - (a & (line_bytes_ - 1))));
      Tick issue = local;
      if (in_flight.size() >= cfg_.outstanding) {
        issue = std::max(issue, in_flight.top());
        in_flight.pop();
      }
      p.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
      p.set_address(a);
      p.set_data_length(piece);
      p.set_streaming_width(piece);
      p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      if (write && !timing_only_)
        for (std::uint32_t b = 0; b < piece; ++b) buf_[b] = pattern_byte(a + b);
      sc_core::sc_time d = to_sc(issue - now_tick());
      socket->b_transport(p, d);
      if (p.get_response_status() != tlm::TLM_OK_RESPONSE)
        return system_of(*this).fail(
            std::string(name()) + ": " + (write ? "write" : "read") + " of " + std::to_string(piece) + " bytes at " +
            hex(a) + " failed: " + p.get_response_string() +
            (p.get_response_status() == tlm::TLM_ADDRESS_ERROR_RESPONSE ? " (no memory or device mapped there)" : ""));
      const Tick done = now_tick() + to_tick(d);
      if (write) {
        ++writes_;
        bytes_written_ += piece;
        if (cfg_.verify && !timing_only_) written_.insert(a);
      } else {
        ++reads_;
        bytes_read_ += piece;
        if (cfg_.verify && !timing_only_) check_read(a, buf_.data(), piece);
      }
      ++transactions_;
      const Tick lat = done - issue;
      latency_ps_ += lat;
      max_latency_ps_ = std::max<std::uint64_t>(max_latency_ps_, lat);
      first_issue_ = std::min(first_issue_, issue);
      last_done_ = std::max(last_done_, done);
      lane_.slice(write ? "write" : "read", issue, done);
      in_flight.push(done);
      local = issue + issue_gap;
      a += piece;
      // Give other processes their turn once this requester is a quantum ahead.
      if (local >= now_tick() + quantum) wait(to_sc(local - now_tick()));
    }
  }
  // Wait for the last completion so simulated time covers all of this requester's work.
  if (last_done_ > now_tick()) wait(to_sc(last_done_ - now_tick()));
  finished_ = true;
}

}  // namespace dvp::tgen
