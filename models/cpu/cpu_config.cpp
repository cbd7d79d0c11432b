#include "cpu_config.hpp"

namespace dvp::cpu {

using cfg::Type;

void CpuConfig::describe(cfg::Spec& s) {
  s.param("control_cores", Type::Int, "control CPU cores (they run the runtime firmware)").range(1, 16);
  s.param("aicpu_cores", Type::Int, "AI CPU cores (they run AI CPU kernels)").defaults("0").range(0, 15);
  s.param("clock_mhz", Type::Float, "core clock").unit("MHz").range(1, 10000);
  s.param("cpi", Type::Float, "cycles per instruction (every instruction costs the same)").defaults("1").range(0.1, 100);
  s.param("quantum_ns", Type::Float,
          "how far a core runs ahead of the rest of the SoC before it syncs and checks for interrupts")
      .unit("ns").defaults("1000").range(1, 1e6);
  s.param("mmio_access_ns", Type::Float, "one peripheral register access").unit("ns").defaults("20").range(0, 1e6);
  s.param("timer_mhz", Type::Float, "system counter frequency: the system timer's COUNT and the cores' generic timer (CNTFRQ_EL0, CNTVCT_EL0)").unit("MHz").defaults("100").range(0.001, 10000);
  s.param("mmio_base", Type::Int, "address of the peripherals' window (irq, timer, simctrl, uarts)")
      .unit("B").defaults("0x10000000").min(0);
}

CpuConfig CpuConfig::from(const cfg::Node& n) {
  CpuConfig c;
  c.control_cores = unsigned(n.get_uint("control_cores"));
  c.aicpu_cores = unsigned(n.get_uint("aicpu_cores"));
  if (c.cores() > 16) n.at("aicpu_cores").fail("at most 16 cores in all (control_cores + aicpu_cores)");
  c.clock = Clock(n.get_double("clock_mhz"));
  c.cpi = n.get_double("cpi");
  c.quantum = Tick(n.get_double("quantum_ns") * 1000.0 + 0.5);
  c.mmio_access_ns = n.get_double("mmio_access_ns");
  c.timer_mhz = n.get_double("timer_mhz");
  c.counter = Clock(c.timer_mhz);
  c.mmio_base = n.get_uint("mmio_base");
  return c;
}

}  // namespace dvp::cpu
