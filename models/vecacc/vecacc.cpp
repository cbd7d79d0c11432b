// SPDX-License-Identifier: MIT
#include "vecacc.hpp"

#include <algorithm>
#include <cstring>

#include "common/payload.hpp"
#include "common/system.hpp"
#include "irq/irq_controller.hpp"
#include "vecacc_regs.h"

namespace dvp::vecacc {

using cfg::Type;

void VecaccConfig::describe(cfg::Spec& s) {
  s.param("model", Type::Enum, "tlm: the C++ model; rtl: vecacc.v Verilated, behind the AXI bridges")
      .choices({"tlm", "rtl"})
      .defaults("tlm");
  s.param("base", Type::Int, "address of its registers (in the CPUs' MMIO window)")
      .unit("B")
      .defaults("0x10100000")
      .min(0);
  s.param("stop", Type::Int, "ring stop of its bus interface").defaults("0").min(0);
  s.param("irq", Type::Int, "interrupt line of its done interrupt").defaults("2").range(0, 31);
  s.param("clock_mhz", Type::Float, "its clock (assumption: an example block)")
      .unit("MHz")
      .defaults("1000")
      .range(1, 10000);
  s.param("data_bits", Type::Enum, "its AXI4 master's data bus (rtl: the plug-in's, checked)")
      .choices({"64", "128", "256", "512"})
      .defaults("128");
  s.param("max_beats", Type::Int, "the longest burst it makes (rtl: the plug-in's MAX_BEATS)")
      .defaults("16")
      .range(1, 256);
  s.param("phase_cycles", Type::Int,
          "tlm: cycles its control spends per bus phase before the data (vecacc.v: a cycle to raise VALID, one for "
          "the handshake)")
      .defaults("2")
      .range(0, 1000);
  s.param("plugin", Type::String,
          "rtl: the plug-in; a plain name is one the project builds (build/rtl/<name>.so), a path is relative to the "
          "scenario")
      .defaults("vecacc");
  s.param("waves", Type::String, "rtl: an FST waveform of the block, relative to the output folder").optional();
}

VecaccConfig VecaccConfig::from(const cfg::Node& n) {
  VecaccConfig c;
  c.rtl = n.get_string("model") == "rtl";
  c.base = n.get_uint("base"), c.stop = std::uint32_t(n.get_uint("stop")), c.irq = std::uint32_t(n.get_uint("irq"));
  c.clock = Clock(n.get_double("clock_mhz"));
  c.bus_bytes = std::uint32_t(std::stoul(n.get_string("data_bits")) / 8);
  c.max_beats = std::uint32_t(n.get_uint("max_beats")), c.phase_cycles = std::uint32_t(n.get_uint("phase_cycles"));
  c.plugin = n.get_string("plugin");
  if (const cfg::Node* w = n.find("waves")) c.waves = w->as_string();
  if (c.base % VECACC_SIZE) n.at("base").fail("must be a multiple of " + std::to_string(VECACC_SIZE));
  return c;
}

Vecacc::Vecacc(sc_core::sc_module_name name, const VecaccConfig& cfg, unsigned line_bytes, double access_ns)
    : Device(name, VECACC_SIZE, access_ns),
      mem("mem"),
      cfg_(cfg),
      line_bytes_(line_bytes),
      ctrl_(*this, "CTRL", VECACC_CTRL, 0, "bit 0: start (ignored while busy), bit 1: interrupt enable"),
      status_(*this, "STATUS", VECACC_STATUS, 0, "bit 0: busy, bit 1: done (write 1 to clear), bit 2: error"),
      src_a_lo_(*this, "SRC_A_LO", VECACC_SRC_A_LO, 0, "first vector, low 32 bits"),
      src_a_hi_(*this, "SRC_A_HI", VECACC_SRC_A_HI, 0, "first vector, high 32 bits"),
      src_b_lo_(*this, "SRC_B_LO", VECACC_SRC_B_LO, 0, "second vector, low 32 bits"),
      src_b_hi_(*this, "SRC_B_HI", VECACC_SRC_B_HI, 0, "second vector, high 32 bits"),
      dst_lo_(*this, "DST_LO", VECACC_DST_LO, 0, "result, low 32 bits"),
      dst_hi_(*this, "DST_HI", VECACC_DST_HI, 0, "result, high 32 bits"),
      count_(*this, "COUNT", VECACC_COUNT, 0, "int32 elements"),
      op_(*this, "OP", VECACC_OP, 0, "0: a + b, 1: a * SCALE"),
      scale_(*this, "SCALE", VECACC_SCALE, 0, "the factor of OP 1"),
      cycles_(*this, "CYCLES", VECACC_CYCLES, 0, "clock cycles the last operation took"),
      id_(*this, "ID", VECACC_ID, VECACC_ID_VALUE, "0x7ecacc01"),
      stats_(*this),
      ops_(stats_.counter("operations", "operations done")),
      elements_(stats_.counter("elements", "elements written")),
      busy_ps_(stats_.counter("busy_ps", "time spent operating")),
      lane_(system_of(*this).tracer().lane(this->name(), "engine")) {
  ctrl_.on_write([this](std::uint32_t v) {
    ctrl_.value = v & VECACC_IRQ_ENABLE;
    set_irq();
    if ((v & VECACC_START) && !busy_) busy_ = true, done_ = false, start_.notify(now() - sc_core::sc_time_stamp());
  });
  status_.on_read(
      [this] { return (busy_ ? VECACC_BUSY : 0) | (done_ ? VECACC_DONE : 0) | (error_ ? VECACC_ERROR : 0); });
  status_.on_write([this](std::uint32_t v) {
    if (v & VECACC_DONE) done_ = false, set_irq();
  });
  cycles_.read_only(), id_.read_only();
  SC_HAS_PROCESS(Vecacc);
  SC_THREAD(run);
}

void Vecacc::set_irq() {
  const bool level = done_ && (ctrl_.value & VECACC_IRQ_ENABLE);
  if (irq_ && level != irq_level_) irq_->set_line(irq_line_, irq_level_ = level);
}

void Vecacc::run() {
  for (;;) {
    wait(start_);
    operate();
  }
}

// Beats of the next chunk, as vecacc.v counts them: what is left, at most max_beats, and none
// across a 4 KiB boundary of any of the three vectors.
std::uint32_t Vecacc::chunk_beats(std::uint64_t a, std::uint64_t b, std::uint64_t d, std::uint32_t left) const {
  const std::uint32_t per_beat = cfg_.bus_bytes / 4;
  std::uint64_t n = std::min<std::uint64_t>((left + per_beat - 1) / per_beat, cfg_.max_beats);
  for (std::uint64_t x : {a, b, d}) n = std::min<std::uint64_t>(n, (4096 - x % 4096) / cfg_.bus_bytes);
  return std::uint32_t(n);
}

// One bus phase as vecacc.v makes it, from the edge `start` its previous phase ended on:
// `phase_cycles` to the address handshake; reads then ask for every line at once and take each
// line's beats, one an edge, from the first edge it is back; writes send their beats, one an edge
// after the handshake, and the bridge writes the lines after the last; the response is taken on
// the first edge after the memory system has them all. Returns the edge of the last beat (reads)
// or of the response (writes).
Tick Vecacc::phase(bool write, std::uint64_t addr, std::uint8_t* data, std::uint32_t bytes, Tick start, bool& ok) {
  tlm::tlm_generic_payload p;
  const Tick issue = start + cfg_.clock.cycles(cfg_.phase_cycles);
  const auto beats = [this](std::uint32_t n) { return cfg_.clock.cycles((n + cfg_.bus_bytes - 1) / cfg_.bus_bytes); };
  const Tick sent = write ? issue + beats(bytes) : issue;
  Tick free_edge = issue + cfg_.clock.period(), back_all = sent;  // reads: the next edge a beat may take
  for (std::uint32_t off = 0; off < bytes;) {
    const auto piece = std::uint32_t(std::min<std::uint64_t>(bytes - off, line_bytes_ - (addr + off) % line_bytes_));
    prepare(p, write, addr + off, data + off, piece);
    sc_core::sc_time d = to_sc(sent - now_tick());
    mem->b_transport(p, d);
    ok = ok && p.get_response_status() == tlm::TLM_OK_RESPONSE;
    const Tick back = cfg_.clock.align_up(now_tick() + to_tick(d));
    back_all = std::max(back_all, back);
    free_edge = std::max(free_edge, back) + beats(piece);
    off += piece;
  }
  return write ? std::max(back_all, sent + cfg_.clock.period()) : free_edge - cfg_.clock.period();
}

void Vecacc::operate() {
  const auto addr = [](const mmio::Register& lo, const mmio::Register& hi) {
    return std::uint64_t(hi.value) << 32 | lo.value;
  };
  std::uint64_t a = addr(src_a_lo_, src_a_hi_), b = addr(src_b_lo_, src_b_hi_), d = addr(dst_lo_, dst_hi_);
  std::uint32_t left = count_.value;
  const Tick start = cfg_.clock.align_up(now_tick());
  Tick t = start;
  // As vecacc.v: an unaligned vector is refused; a read error is noted and the work goes on; a
  // write error ends it.
  bool read_ok = true, ok = (a | b | d) % cfg_.bus_bytes == 0;
  const bool adding = op_.value == 0;
  while (ok && left) {
    const std::uint32_t beats = chunk_beats(a, b, d, left), bytes = beats * cfg_.bus_bytes;
    const std::uint32_t n = std::min(left, bytes / 4);
    a_.assign(bytes, 0), b_.assign(bytes, 0), out_.assign(n * 4, 0);
    t = phase(false, a, a_.data(), bytes, t, read_ok);
    if (adding) t = phase(false, b, b_.data(), bytes, t, read_ok);
    for (std::uint32_t i = 0; i < n; ++i) {
      std::uint32_t x, y;
      std::memcpy(&x, &a_[4 * i], 4), std::memcpy(&y, &b_[4 * i], 4);
      const std::uint32_t r = adding ? x + y : x * scale_.value;
      std::memcpy(&out_[4 * i], &r, 4);
    }
    t = phase(true, d, out_.data(), n * 4, t, ok);
    a += bytes, b += bytes, d += bytes, left -= n, elements_ += n;
    if (t > now_tick() + to_tick(tlm::tlm_global_quantum::instance().get())) wait(to_sc(t - now_tick()));
  }
  if (t > now_tick()) wait(to_sc(t - now_tick()));
  cycles_.value = std::uint32_t((t - start) / cfg_.clock.period());
  ++ops_, busy_ps_ += t - start;
  ok = ok && read_ok;
  lane_.slice(ok ? "operation" : "error", start, t);
  busy_ = false, done_ = true, error_ = !ok;
  set_irq();
}

}  // namespace dvp::vecacc
