// SPDX-License-Identifier: MIT
#include "cpu_config.hpp"

#include <algorithm>

namespace dvp::cpu {

using cfg::Type;

void CpuConfig::describe(cfg::Spec& s) {
  s.param("control_cores", Type::Int, "control CPU cores (they run the runtime firmware)").range(1, 16);
  s.param("aicpu_cores", Type::Int, "AI CPU cores (they run AI CPU kernels)").defaults("0").range(0, 15);
  s.param("clock_mhz", Type::Float, "core clock").unit("MHz").range(1, 10000);
  s.param("cpi", Type::Float, "cycles per instruction (every instruction costs the same)")
      .defaults("1")
      .range(0.1, 100);
  s.param("quantum_ns", Type::Float,
          "how far a core runs ahead of the rest of the SoC before it syncs and checks for interrupts")
      .unit("ns")
      .defaults("1000")
      .range(1, 1e6);
  s.param("mmio_access_ns", Type::Float, "one peripheral register access").unit("ns").defaults("20").range(0, 1e6);
  s.param("timer_mhz", Type::Float,
          "system counter frequency: the system timer's COUNT and the cores' generic timer (CNTFRQ_EL0, CNTVCT_EL0)")
      .unit("MHz")
      .defaults("100")
      .range(0.001, 10000);
  s.param("mmio_base", Type::Int, "address of the peripherals' window (irq, timer, simctrl, uarts)")
      .unit("B")
      .defaults("0x10000000")
      .min(0);
  s.param("stop", Type::Int, "ring stop where the cores' cache fills and write-backs enter the ring")
      .defaults("0")
      .min(0);
  cfg::Spec& l1 = s.section("l1",
                            "Each core's private L1 caches: DRAM loads, stores and instruction fetches are timed "
                            "through them; misses and write-backs go through the ring, L2 and DRAM");
  l1.param("timing", Type::Bool,
           "time DRAM accesses through the L1 caches (false: they cost nothing, for the fastest host speed)")
      .defaults("true");
  l1.param("icache_kib", Type::Int, "instruction cache size").unit("KiB").defaults("32").range(1, 1024).power_of_two();
  l1.param("icache_ways", Type::Int, "instruction cache associativity").defaults("4").range(1, 64).power_of_two();
  l1.param("dcache_kib", Type::Int, "data cache size").unit("KiB").defaults("32").range(1, 1024).power_of_two();
  l1.param("dcache_ways", Type::Int, "data cache associativity").defaults("4").range(1, 64).power_of_two();
  l1.param("line_bytes", Type::Int, "cache line (the size of a fill or write-back)")
      .unit("B")
      .defaults("64")
      .range(16, 512)
      .power_of_two();
  l1.param("prefetch_lines", Type::Int,
           "lines the data prefetcher keeps ahead of a sequential stream of misses (0: no prefetcher)")
      .defaults("0")
      .range(0, 64);
}

CpuConfig CpuConfig::from(const cfg::Node& n) {
  CpuConfig c;
  c.control_cores = unsigned(n.get_uint("control_cores"));
  c.aicpu_cores = unsigned(n.get_uint("aicpu_cores"));
  if (c.cores() > 16) n.at("aicpu_cores").fail("at most 16 cores in all (control_cores + aicpu_cores)");
  c.clock = Clock(n.get_double("clock_mhz"));
  c.cpi = n.get_double("cpi");
  c.quantum = ns_to_tick(n.get_double("quantum_ns"));
  c.mmio_access_ns = n.get_double("mmio_access_ns");
  c.timer_mhz = n.get_double("timer_mhz");
  c.counter = Clock(c.timer_mhz);
  c.mmio_base = n.get_uint("mmio_base");
  c.stop = std::uint32_t(std::min<std::uint64_t>(n.get_uint("stop"), ~0u));
  const cfg::Node& l1 = n.at("l1");
  c.l1.timing = l1.get_bool("timing");
  c.l1.icache_bytes = std::uint32_t(l1.get_uint("icache_kib") * 1024);
  c.l1.icache_ways = std::uint32_t(l1.get_uint("icache_ways"));
  c.l1.dcache_bytes = std::uint32_t(l1.get_uint("dcache_kib") * 1024);
  c.l1.dcache_ways = std::uint32_t(l1.get_uint("dcache_ways"));
  c.l1.line_bytes = std::uint32_t(l1.get_uint("line_bytes"));
  c.l1.prefetch_lines = std::uint32_t(l1.get_uint("prefetch_lines"));
  auto check_ways = [&](const char* size_key, const char* ways_key, std::uint32_t bytes, std::uint32_t ways) {
    if (std::uint64_t(ways) * c.l1.line_bytes > bytes)
      l1.at(ways_key).fail(std::to_string(ways) + " ways of " + std::to_string(c.l1.line_bytes) +
                           " B lines do not fit in " + l1.at(size_key).text() + " KiB");
  };
  check_ways("icache_kib", "icache_ways", c.l1.icache_bytes, c.l1.icache_ways);
  check_ways("dcache_kib", "dcache_ways", c.l1.dcache_bytes, c.l1.dcache_ways);
  return c;
}

}  // namespace dvp::cpu
