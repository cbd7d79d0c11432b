// SPDX-License-Identifier: MIT
#include "rtl_block.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "common/error.hpp"
#include "common/payload.hpp"
#include "common/system.hpp"
#include "irq/irq_controller.hpp"

namespace dvp::rtl {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The port `want`, or with "auto" the first of `autos` the model has; "none": no port.
Pin pick(const Model& m, const std::string& want, std::initializer_list<const char*> autos) {
  if (want == "none") return Pin();
  if (want != "auto") return m.pin(want);
  for (const char* a : autos)
    if (Pin p = m.pin(a)) return p;
  return Pin();
}

}  // namespace

RtlBlock::RtlBlock(sc_core::sc_module_name name, const RtlConfig& cfg, unsigned line_bytes)
    : sc_module(name),
      target("target"),
      mem("mem"),
      cfg_(cfg),
      model_(std::make_unique<Model>(cfg.plugin, this->name())),
      stats_(*this),
      cycles_(stats_.counter("cycles", "RTL clock cycles run (the clock is stopped while the block is idle)")),
      wakeups_(stats_.counter("wakeups", "times the gated clock started again")),
      accesses_(stats_.counter("target_accesses", "TLM accesses served through the target bridge")) {
  find_control_pins();
  const std::string where = "rtl " + cfg.name + " (" + model_->top() + " in " + cfg.plugin + ")";
  auto fail_fn = [this](const std::string& w) { fail(w); };
  if (cfg.has_target) {
    tport_ =
        std::make_unique<AxiPort>(bind_axi(*model_, cfg.target, Role::Slave, where + " target " + cfg.target.prefix));
    if (tport_->addr_bits < 64 && cfg.target_size > (std::uint64_t(1) << tport_->addr_bits))
      throw Error(tport_->where + ": a " + std::to_string(tport_->addr_bits) + "-bit address reaches " +
                      std::to_string(std::uint64_t(1) << tport_->addr_bits) + " bytes, less than the region's " +
                      std::to_string(cfg.target_size) + ": the rest would alias",
                  kExitConfig);
    tstats_ = std::make_unique<PortStats>(stats_, "target.");
    tcheck_ = std::make_unique<AxiChecker>(*tport_, stats_, "target.", fail_fn);
    slave_ = std::make_unique<SlaveBridge>(*tport_, *tcheck_, *tstats_, cfg.clock, cfg.outstanding);
    target.register_b_transport(this, &RtlBlock::b_transport);
  }
  if (cfg.has_initiator) {
    iport_ = std::make_unique<AxiPort>(
        bind_axi(*model_, cfg.initiator, Role::Master, where + " initiator " + cfg.initiator.prefix));
    istats_ = std::make_unique<PortStats>(stats_, "initiator.");
    icheck_ = std::make_unique<AxiChecker>(*iport_, stats_, "initiator.", fail_fn);
    master_ = std::make_unique<MasterBridge>(
        *iport_, *icheck_, *istats_, cfg.clock, cfg.outstanding, line_bytes,
        [this](bool w, std::uint64_t a, std::uint8_t* d, unsigned n, Tick at, unsigned& r) {
          return transport(w, a, d, n, at, r);
        },
        cfg.timeout_cycles);
  }
  Tracer& tr = system_of(*this).tracer();
  clock_lane_ = tr.lane(this->name(), "clock");
  if (cfg.has_target) target_lane_ = tr.lane(this->name(), "target");
  SC_HAS_PROCESS(RtlBlock);
  SC_THREAD(run);
}

RtlBlock::~RtlBlock() = default;

void RtlBlock::find_control_pins() {
  const Model& m = *model_;
  auto need = [&](const Pin& p, const std::string& key, const std::string& want, bool input) {
    const std::string what = "rtl " + cfg_.name + " (" + m.top() + " in " + cfg_.plugin + "): ";
    if (!p)
      throw Error(
          what + "no " + key + " port" + (want == "auto" ? "" : " named " + want) + "; its ports: " + m.port_names(),
          kExitConfig);
    if (p.is_input() != input || p.bits() != 1)
      throw Error(what + key + " port " + p.name() + " must be a 1-bit " + (input ? "input" : "output"), kExitConfig);
  };
  clk_ = pick(m, cfg_.clock_port, {"clk", "aclk", "clock", "ACLK", "i_clk"});
  need(clk_, "clock_port", cfg_.clock_port, true);
  rst_ =
      pick(m, cfg_.reset_port, {"rst_n", "aresetn", "ARESETn", "resetn", "rstn", "rst", "reset", "areset", "ARESET"});
  if (rst_ || (cfg_.reset_port != "auto" && cfg_.reset_port != "none")) need(rst_, "reset_port", cfg_.reset_port, true);
  if (rst_) {
    const std::string n = lower(rst_.name());
    rst_low_ = cfg_.reset_active_low.value_or(n.size() > 1 && n.back() == 'n');
  }
  busy_ = pick(m, cfg_.busy_port, {"busy"});
  if (busy_ || (cfg_.busy_port != "auto" && cfg_.busy_port != "none")) need(busy_, "busy_port", cfg_.busy_port, false);
  if (cfg_.irq) {
    irq_pin_ = m.pin(cfg_.irq_port);
    need(irq_pin_, "irq_port", cfg_.irq_port, false);
  }
}

// Reset held for reset_cycles edges from time 0, then released; the bridges idle meanwhile.
void RtlBlock::reset() {
  const Tick period = cfg_.clock.period();
  if (rst_) rst_.set(rst_low_ ? 0 : 1);
  clk_.set(0);
  model_->eval(0);
  model_->dump(0);
  for (std::uint32_t i = 0; i < cfg_.reset_cycles; ++i) {
    next_edge_ += period;
    clk_.set(1), model_->eval(next_edge_), model_->dump(next_edge_);
    clk_.set(0), model_->eval(next_edge_ + period / 2), model_->dump(next_edge_ + period / 2);
  }
  if (rst_) rst_.set(rst_low_ ? 1 : 0);
  next_edge_ += period;
  model_->eval(next_edge_ - period / 2);
}

bool RtlBlock::has_work() const {
  return !failed_ &&
         (cfg_.always_on || idle_ < cfg_.idle_cycles || (master_ && master_->busy()) || (busy_ && busy_.get()));
}

// One clock cycle: the handshakes at the rising edge, the edge, the bridges' inputs for the next
// one, the falling edge (the RTL's combinational outputs settle on the new inputs).
void RtlBlock::cycle() {
  if (in_cycle_) return fail("rtl " + cfg_.name + ": clocked again from inside its own cycle (a target that waits)");
  in_cycle_ = true;
  const Tick edge = next_edge_, period = cfg_.clock.period();
  if (tcheck_) tcheck_->sample(edge);
  if (icheck_) icheck_->sample(edge);
  bool active = (slave_ && slave_->busy()) || (master_ && master_->busy());
  if (slave_) slave_->sample(edge);
  if (master_) master_->sample(edge);
  clk_.set(1), model_->eval(edge), model_->dump(edge);
  if (const char* said = model_->stopped())
    fail("rtl " + cfg_.name + ": the design stopped at " + format_ns(edge) + ": " + said);
  if (slave_) slave_->drive(edge + period);
  if (master_) master_->drive(edge + period);
  clk_.set(0), model_->eval(edge + period / 2), model_->dump(edge + period / 2);
  active = active || (busy_ && busy_.get());
  if (irq_pin_ && irq_ && bool(irq_pin_.get()) != irq_level_) {
    irq_level_ = !irq_level_;
    irq_->set_line(irq_line_, irq_level_);
  }
  idle_ = active ? 0 : idle_ + 1;
  next_edge_ = edge + period, ++cycles_;
  in_cycle_ = false;
}

// The block's own process: the gated clock, a quantum at a time.
void RtlBlock::run() {
  const Tick quantum = to_tick(tlm::tlm_global_quantum::instance().get());
  clocked_from_ = next_edge_;
  for (;;) {
    if (failed_) return;
    if (!has_work()) {
      if (next_edge_ > clocked_from_) clock_lane_.slice("clocked", clocked_from_, next_edge_);
      wait(wake_);
      ++wakeups_;
      next_edge_ = std::max(next_edge_, cfg_.clock.align_up(now_tick()));
      clocked_from_ = next_edge_;
      continue;
    }
    const Tick horizon = now_tick() + std::max(quantum, cfg_.clock.period());
    while (has_work() && next_edge_ <= horizon) cycle();
    if (next_edge_ > now_tick()) wait(to_sc(next_edge_ - now_tick()));
  }
}

// An access at `t` meets the RTL at `t`: a block with work runs up to it; an idle one skips to it.
void RtlBlock::catch_up(Tick t) {
  while (next_edge_ < t && has_work()) cycle();
  next_edge_ = std::max(next_edge_, cfg_.clock.align_up(t));
}

void RtlBlock::b_transport(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  std::uint64_t addr = p.get_address();
  if (std::size_t(id) < absolute_.size() && absolute_[std::size_t(id)]) addr -= cfg_.target_base;
  if (in_cycle_ && !failed_)
    fail("rtl " + cfg_.name + ": its initiator reached its own target (" + hex(p.get_address()) +
         ") through the platform; a block cannot serve itself within a clock cycle");
  if (failed_) return p.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
  if (addr >= cfg_.target_size || p.get_data_length() > cfg_.target_size - addr)
    return p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  if (p.get_data_length() == 0) return p.set_response_status(tlm::TLM_OK_RESPONSE);
  catch_up(now_tick() + to_tick(delay));
  const Tick start = next_edge_, period = cfg_.clock.period();
  if (!slave_->begin(p, addr, start)) return p.set_response_status(slave_->status());
  model_->eval(start - period / 2);
  for (std::uint64_t n = 0; slave_->busy() && !failed_; ++n) {
    if (n == cfg_.timeout_cycles)
      fail(tport_->where + ": " + slave_->waiting_on() + " for " + std::to_string(n) + " cycles (timeout_cycles)");
    else
      cycle();
  }
  if (failed_) return slave_->idle(), p.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
  p.set_response_status(slave_->status());
  ++accesses_;
  const Tick done = next_edge_ - period;
  target_lane_.slice(p.is_write() ? "write" : "read", start, done);
  delay = to_sc(done > now_tick() ? done - now_tick() : 0);
  idle_ = 0;
  wake_.notify(sc_core::SC_ZERO_TIME);
}

Tick RtlBlock::transport(bool write, std::uint64_t addr, std::uint8_t* data, unsigned len, Tick at, unsigned& resp) {
  prepare(req_, write, addr, data, len);
  sc_core::sc_time d = to_sc(at > now_tick() ? at - now_tick() : 0);
  mem->b_transport(req_, d);
  const tlm::tlm_response_status s = req_.get_response_status();
  resp = s == tlm::TLM_OK_RESPONSE ? kOkay : s == tlm::TLM_ADDRESS_ERROR_RESPONSE ? kDecErr : kSlvErr;
  return now_tick() + to_tick(d);
}

void RtlBlock::fail(const std::string& what) {
  if (failed_) return;
  failed_ = true;
  system_of(*this).fail(what);
}

// The waveform starts before reset, so it shows the whole run.
void RtlBlock::start_of_simulation() {
  if (!cfg_.waves.empty()) try {
      const std::filesystem::path w(cfg_.waves);
      model_->trace_open(w.is_absolute() ? w.string() : (std::filesystem::path(out_dir_) / w).string());
    } catch (const Error& e) {
      fail(e.what());
    }
  reset();
}

void RtlBlock::end_of_simulation() {
  if (next_edge_ > clocked_from_ && !has_work()) clock_lane_.slice("clocked", clocked_from_, next_edge_);
  model_->finish();
}

}  // namespace dvp::rtl
