// SPDX-License-Identifier: MIT
#include "rtl_config.hpp"

#include <filesystem>

namespace dvp::rtl {

using cfg::Type;

namespace {

void describe_axi(cfg::Spec& s, const char* prefix) {
  s.param("prefix", Type::String, "the ports' common prefix; AXI names follow in lower or upper case").defaults(prefix);
  s.param("protocol", Type::Enum, "axi4, axi4lite, or auto: AXI4 when the RTL has AxLEN")
      .choices({"auto", "axi4", "axi4lite"})
      .defaults("auto");
  cfg::Spec& m = s.section("ports", "RTL port names that do not follow prefix + AXI name, by AXI name").optional();
  for (unsigned i = 0; i < kSigs; ++i) m.param(sig_name(Sig(i)), Type::String, "the RTL's port").optional();
}

AxiBinding read_axi(const cfg::Node& n) {
  AxiBinding b;
  b.prefix = n.get_string("prefix");
  b.protocol = n.get_string("protocol");
  if (const cfg::Node* m = n.find("ports"))
    for (const auto& [k, v] : m->entries()) b.ports[k] = v.as_string();
  return b;
}

}  // namespace

std::string RtlConfig::plugin_path(const std::string& p, const std::string& dir, const std::string& builtin) {
  namespace fs = std::filesystem;
  if (p.find('/') == std::string::npos) return (fs::path(builtin) / (p + ".so")).string();
  return fs::path(p).is_absolute() || dir.empty() ? p : (fs::path(dir) / p).lexically_normal().string();
}

void RtlConfig::describe(cfg::Spec& s) {
  s.param("name", Type::String, "the block's name (its module is soc.rtl.<name>)");
  s.param("plugin", Type::String,
          "the plug-in built by dvp-verilate: a path (with a '/': ./my_top.so) is relative to the scenario file; a "
          "plain name is one the project builds (build/rtl/<name>.so)");
  s.param("clock_mhz", Type::Float, "the RTL's clock").unit("MHz").range(0.001, 100000);
  s.param("clock_port", Type::String, "the clock input (auto: clk, aclk, clock or ACLK)").defaults("auto");
  s.param("reset_port", Type::String, "the reset input (auto: rst_n, aresetn, ARESETn, rst, reset; none: no reset)")
      .defaults("auto");
  s.param("reset_active_low", Type::Bool, "reset is active low (default: from the name, *n / *_n)").optional();
  s.param("reset_cycles", Type::Int, "cycles reset is held at time 0").defaults("4").range(0, 1000000);
  s.param("clock_gating", Type::Enum,
          "gated: the clock runs only while the block has work (a transaction in flight, its busy output, a "
          "VALID it drives, idle_cycles after the last); always_on: every cycle")
      .choices({"gated", "always_on"})
      .defaults("gated");
  s.param("busy_port", Type::String, "an output that keeps the clock running while high (auto: busy, if present)")
      .defaults("auto");
  s.param("idle_cycles", Type::Int, "cycles the gated clock runs on after the last activity")
      .defaults("16")
      .range(0, 1000000000);
  s.param("timeout_cycles", Type::Int, "an access the RTL leaves unanswered this long stops the run")
      .defaults("1000000")
      .range(1, 1e15);
  s.param("outstanding", Type::Int, "bursts in flight per bridge and direction").defaults("8").range(1, 256);
  s.param("stop", Type::Int, "ring stop of the block's initiator and target").defaults("0").min(0);
  s.param("waves", Type::String, "write an FST waveform of the block here (relative to the output folder)").optional();
  s.param("irq", Type::Int, "interrupt line the irq output drives (needs platform.cpu)").optional().range(0, 1023);
  s.param("irq_port", Type::String, "the interrupt output").defaults("irq");
  cfg::Spec& t =
      s.section("target", "an AXI4 / AXI4-Lite slave interface the platform reaches at an address").optional();
  t.param("base", Type::Int, "first address; accesses reach the RTL as offsets from it").unit("B").min(0);
  t.param("size", Type::Int, "bytes of the region").unit("B").range(1, 1e15);
  describe_axi(t, "s_axi_");
  describe_axi(s.section("initiator", "an AXI4 / AXI4-Lite master interface into the ring").optional(), "m_axi_");
}

RtlConfig RtlConfig::from(const cfg::Node& n, const std::string& dir, const std::string& builtin) {
  RtlConfig c;
  c.name = n.get_string("name");
  c.plugin = plugin_path(n.get_string("plugin"), dir, builtin);
  c.clock = Clock(n.get_double("clock_mhz"));
  c.clock_port = n.get_string("clock_port"), c.reset_port = n.get_string("reset_port");
  if (const cfg::Node* r = n.find("reset_active_low")) c.reset_active_low = r->as_bool();
  c.reset_cycles = std::uint32_t(n.get_uint("reset_cycles"));
  c.always_on = n.get_string("clock_gating") == "always_on";
  c.busy_port = n.get_string("busy_port"), c.irq_port = n.get_string("irq_port");
  c.idle_cycles = std::uint32_t(n.get_uint("idle_cycles"));
  c.timeout_cycles = n.get_uint("timeout_cycles");
  c.outstanding = std::uint32_t(n.get_uint("outstanding"));
  c.stop = std::uint32_t(n.get_uint("stop"));
  if (const cfg::Node* w = n.find("waves")) c.waves = w->as_string();
  if (const cfg::Node* i = n.find("irq")) c.irq = std::uint32_t(i->as_uint());
  if (const cfg::Node* t = n.find("target")) {
    c.has_target = true, c.target = read_axi(*t);
    c.target_base = t->get_uint("base"), c.target_size = t->get_uint("size");
  }
  if (const cfg::Node* i = n.find("initiator")) c.has_initiator = true, c.initiator = read_axi(*i);
  if (!c.has_target && !c.has_initiator)
    n.fail("an RTL block needs a target: (the platform reaches it) or an initiator: (it reaches the platform)");
  return c;
}

}  // namespace dvp::rtl
