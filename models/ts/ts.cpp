// SPDX-License-Identifier: MIT
#include "ts.hpp"

#include <cstring>

#include "common/error.hpp"
#include "common/payload.hpp"
#include "common/system.hpp"

namespace dvp::ts {

using cfg::Type;

void TsConfig::describe(cfg::Spec& s) {
  s.param("dispatch_ns", Type::Float,
          "taking a task read from its queue (the read itself goes through the memory system); starting one block "
          "on an AI Core")
      .unit("ns")
      .defaults("100")
      .range(0, 1e9);
  s.param("completion_ns", Type::Float,
          "from a task's end to writing its completion entry (the write goes through the memory system; the "
          "interrupt follows it)")
      .unit("ns")
      .defaults("100")
      .range(0, 1e9);
  s.param("policy", Type::Enum, "which free AI Core takes the next block: " + dispatch_policies().doc())
      .choices(dispatch_policies().names())
      .defaults("round_robin");
  SdmaConfig::describe(s.section("sdma",
                                 "its system DMA engine, which serves preload tasks (weights into the L2 ahead of "
                                 "their kernel) and discard tasks (the L2's copies of memory no task reads again "
                                 "dropped, unwritten); a requester on the ring at the CPUs' stop")
                           .optional());
}

TsConfig TsConfig::from(const cfg::Node& n) {
  TsConfig c;
  c.dispatch_ns = n.get_double("dispatch_ns");
  c.completion_ns = n.get_double("completion_ns");
  c.policy = dispatch_policies().parse(n.at("policy"));
  if (const cfg::Node* d = n.find("sdma")) c.has_sdma = true, c.sdma = SdmaConfig::from(*d);
  return c;
}

// Each task type's name in reports, by enum dvp_task_type.
static const char* task_kind(unsigned type) {
  static const char* const kinds[] = {"?",     "aicore", "record",  "wait",    "barrier",
                                      "aicpu", "dvpp",   "preload", "discard", "prefetch"};
  return type < std::size(kinds) ? kinds[type] : "?";
}

TaskScheduler::TaskScheduler(sc_core::sc_module_name name, const TsConfig& cfg, Wiring w)
    : Device(name, 0x500, w.access_ns),
      ctrl("ctrl"),
      mem("mem"),
      cfg_(cfg),
      cores_(std::move(w.cores)),
      dvpp_rings_(w.dvpp_rings),
      line_bytes_(w.line_bytes),
      irq_(*w.irq),
      irq_line_(w.irq_line),
      ctrl_base_(w.ctrl_base),
      ctrl_stride_(w.ctrl_stride),
      dispatch_((cfg.policy ? cfg.policy : *dispatch_policies().find("round_robin"))()),
      core_taken_(cores_.size(), false),
      aicpu_line_(w.aicpu_line),
      cq_base_lo_(*this, "CQ_BASE_LO", 0x0, 0, "completion queue address, low 32 bits"),
      cq_base_hi_(*this, "CQ_BASE_HI", 0x4, 0, "completion queue address, high 32 bits"),
      cq_size_(*this, "CQ_SIZE", 0x8, 0, "completion queue entries (struct dvp_completion)"),
      cq_tail_(*this, "CQ_TAIL", 0xc, 0, "entries written by the scheduler (read-only, counts up)"),
      cq_head_(*this, "CQ_HEAD", 0x10, 0,
               "entries the firmware has consumed (counts up); the interrupt "
               "line is high while CQ_TAIL != CQ_HEAD"),
      status_(*this, "STATUS", 0x14, 0, "bit 0: completions pending (CQ_TAIL != CQ_HEAD)"),
      cores_reg_(*this, "CORES", 0x18, std::uint32_t(cores_.size()), "AI Cores the scheduler dispatches to"),
      stats_(*this),
      tasks_(stats_.counter("tasks", "tasks completed")),
      blocks_(stats_.counter("blocks", "AI Core blocks dispatched")),
      faults_(stats_.counter("faults", "tasks completed with an AI Core fault")) {
  stats_.json("task_records",
              "every task in completion order: stream, name, kind (aicore, record, wait, barrier, aicpu, dvpp, "
              "preload, discard), blocks, "
              "submitted_ns, start_ns, end_ns, time_ns, result",
              [this] {
                nlohmann::json a = nlohmann::json::array();
                for (const TaskRecord& r : records_)
                  a.push_back({{"stream", r.stream},
                               {"name", r.name},
                               {"kind", task_kind(r.type)},
                               {"blocks", r.blocks},
                               {"submitted_ns", double(r.submitted) / 1e3},
                               {"start_ns", double(r.start) / 1e3},
                               {"end_ns", double(r.end) / 1e3},
                               {"time_ns", double(r.end - r.start) / 1e3},
                               {"result", r.fault ? "FAULT " + r.fault_text : "ok"}});
                return a;
              });
  if (cfg_.has_sdma)
    sdma_ = std::make_unique<Sdma>("sdma", cfg_.sdma, line_bytes_, w.timing_only,
                                   [this](const std::string& m) { fail(m); });
  cq_tail_.read_only();
  cores_reg_.read_only();
  status_.on_read([this] { return std::uint32_t(cq_tail_.value != cq_head_.value); }).read_only();
  cq_head_.on_write([this](std::uint32_t v) {
    cq_head_.value = v;
    update_irq();
  });
  if (w.aicpus > 15 || w.aicpu_line + w.aicpus > irq::IrqController::kLines)
    throw Error(std::string(this->name()) + ": " + std::to_string(w.aicpus) +
                " AI CPUs do not fit the interrupt lines");
  for (unsigned i = 0; i < w.aicpus; ++i) {
    auto mb = std::make_unique<Mailbox>();
    const std::string n = std::to_string(i), b = "AI CPU " + n + ": ";
    const std::uint32_t off = 0x400 + 0x10 * i;
    mb->func = std::make_unique<mmio::Register>(*this, "AICPU" + n + "_FUNC", off, 0,
                                                b + "the task's function (enum dvp_aicpu_func)");
    mb->args_lo = std::make_unique<mmio::Register>(*this, "AICPU" + n + "_ARGS_LO", off + 4, 0,
                                                   b + "its argument table, low 32 bits");
    mb->args_hi = std::make_unique<mmio::Register>(*this, "AICPU" + n + "_ARGS_HI", off + 8, 0,
                                                   b + "its argument table, high 32 bits");
    mb->done = std::make_unique<mmio::Register>(*this, "AICPU" + n + "_DONE", off + 12, 0,
                                                b + "write the task's status (0: ok) when it is done; lowers the line");
    for (mmio::Register* r : {mb->func.get(), mb->args_lo.get(), mb->args_hi.get()}) r->read_only();
    Mailbox* m = mb.get();
    mb->done->on_read([] { return 0u; }).on_write([this, m, i](std::uint32_t v) {
      if (!m->busy) return;  // nothing assigned: ignored
      m->status = v;
      m->finished = true;
      irq_.set_line(aicpu_line_ + i, false);
      m->done_ev.notify(now() - sc_core::sc_time_stamp());  // at the write's time, not the core's quantum start
    });
    aicpu_.push_back(std::move(mb));
  }
  for (unsigned s = 0; s < DVP_MAX_STREAMS; ++s) {
    auto st = std::make_unique<Stream>();
    const std::string n = std::to_string(s), b = "stream " + n + ": ";
    const std::uint32_t off = 0x100 + 0x40 * s;
    st->base_lo = std::make_unique<mmio::Register>(*this, "SQ" + n + "_BASE_LO", off, 0,
                                                   b + "submission queue address, low 32 bits");
    st->base_hi = std::make_unique<mmio::Register>(*this, "SQ" + n + "_BASE_HI", off + 4, 0,
                                                   b + "submission queue address, high 32 bits");
    st->size = std::make_unique<mmio::Register>(*this, "SQ" + n + "_SIZE", off + 8, 0,
                                                b + "submission queue entries (struct dvp_task)");
    st->tail =
        std::make_unique<mmio::Register>(*this, "SQ" + n + "_TAIL", off + 12, 0,
                                         b + "doorbell: tasks submitted (counts up); writing it wakes the stream");
    st->head = std::make_unique<mmio::Register>(*this, "SQ" + n + "_HEAD", off + 16, 0, b + "tasks taken (read-only)");
    st->head->read_only();
    Stream* sp = st.get();
    st->tail->on_write([this, sp](std::uint32_t v) {
      sp->tail->value = v;
      sp->doorbell.notify(now() - sc_core::sc_time_stamp());  // at the write's time, not the core's quantum start
    });
    st->lane = system_of(*this).tracer().lane(this->name(), "stream " + n);
    streams_.push_back(std::move(st));
    sc_core::sc_spawn_options opt;
    sc_core::sc_spawn([this, s] { stream_thread(s); }, ("stream" + n).c_str(), &opt);
  }
}

bool TaskScheduler::access(bool write, std::uint64_t addr, void* data, std::uint64_t len, const std::string& what,
                           sc_core::sc_time& delay) {
  const tlm::tlm_response_status st = access_lines(mem, write, addr, data, len, line_bytes_, delay);
  if (st == tlm::TLM_OK_RESPONSE) return true;
  tlm::tlm_generic_payload p;
  p.set_response_status(st);
  fail(std::string(write ? "writing " : "reading ") + what + " at " + hex(addr) + " (" + std::to_string(len) +
       " bytes) failed: " + p.get_response_string());
  return false;
}

void TaskScheduler::fail(const std::string& msg) {
  if (error_.empty()) error_ = std::string(name()) + ": " + msg;
  sc_core::sc_stop();
}

void TaskScheduler::update_irq() { irq_.set_line(irq_line_, cq_tail_.value != cq_head_.value); }

int TaskScheduler::claim_core() {
  const int c = dispatch_->pick(core_taken_);
  if (c >= 0) core_taken_[c] = true;
  return c;
}

void TaskScheduler::stream_thread(unsigned s) {
  Stream& st = *streams_[s];
  const sc_core::sc_time dispatch(cfg_.dispatch_ns, sc_core::SC_NS), completion(cfg_.completion_ns, sc_core::SC_NS);
  for (;;) {
    while (st.head->value == st.tail->value) {
      st.busy = false;
      stream_idle_.notify(sc_core::SC_ZERO_TIME);
      wait(st.doorbell);
    }
    st.busy = true;
    const Tick submitted = now_tick();
    const std::uint64_t base = std::uint64_t(st.base_hi->value) << 32 | st.base_lo->value;
    if (!st.size->value)
      return fail("stream " + std::to_string(s) + " rang its doorbell with SQ" + std::to_string(s) + "_SIZE 0");
    const std::uint64_t slot = st.head->value % st.size->value;
    dvp_task t;
    sc_core::sc_time fetch = sc_core::SC_ZERO_TIME;
    if (!access(false, base + slot * sizeof t, &t, sizeof t, "stream " + std::to_string(s) + "'s queue entry", fetch))
      return;
    wait(fetch + dispatch);
    ++st.head->value;
    TaskRecord rec;
    rec.name = std::string(t.name, strnlen(t.name, sizeof t.name));
    rec.stream = s;
    rec.type = t.type;
    rec.submitted = submitted;
    rec.start = now_tick();
    dvp_completion c{};
    c.id = t.id;
    c.start_ns = rec.start / 1000;
    if (!run_task(s, t, rec, c)) return;
    wait(completion);
    rec.end = now_tick();
    c.end_ns = rec.end / 1000;
    // The trace keeps the name's pointer: names live as long as the scheduler.
    slice_names_.push_back(rec.name);
    st.lane.slice(slice_names_.back().c_str(), rec.submitted, rec.end);
    records_.push_back(rec);
    ++tasks_;
    complete(c);
  }
}

// One task, by its type; false when it stopped the run (a fault is the task's completion).
bool TaskScheduler::run_task(unsigned s, const dvp_task& t, TaskRecord& rec, dvp_completion& c) {
  auto refuse = [&](const std::string& why) {
    fail("task '" + rec.name + "' " + why);
    return false;
  };
  switch (t.type) {
    case DVP_TASK_KERNEL: run_kernel(t, rec, c); return true;
    case DVP_TASK_DVPP:
      if (!dvpp_done_) return refuse("is a DVPP command, but the platform has no DVPP");
      run_dvpp(t, rec, c);
      return true;
    case DVP_TASK_AICPU:
      if (aicpu_.empty()) return refuse("is an AI CPU kernel, but the platform has no AI CPU cores");
      run_aicpu(t, rec, c);
      return true;
    case DVP_TASK_RECORD:
    case DVP_TASK_WAIT:
      if (t.event >= DVP_MAX_EVENTS)
        return refuse("names event " + std::to_string(t.event) + " (0.." + std::to_string(DVP_MAX_EVENTS - 1) + ")");
      if (t.type == DVP_TASK_RECORD) {
        events_[t.event] = true;
        event_set_.notify(sc_core::SC_ZERO_TIME);
      } else {
        while (!events_[t.event]) wait(event_set_);
        events_[t.event] = false;
      }
      return true;
    case DVP_TASK_BARRIER: barrier(s); return true;
    case DVP_TASK_PRELOAD:
      if (!sdma_) return refuse("is a preload, but the task scheduler has no SDMA engine (platform.ts.sdma)");
      sdma_->preload(t.args, t.code_bytes, rec.name);
      return true;
    case DVP_TASK_PREFETCH:
      if (!sdma_) return refuse("is a prefetch, but the task scheduler has no SDMA engine (platform.ts.sdma)");
      sdma_->prefetch(t.args, t.code_bytes, rec.name);
      return true;
    case DVP_TASK_DISCARD:
      if (!sdma_) return refuse("is a discard, but the task scheduler has no SDMA engine (platform.ts.sdma)");
      sdma_->discard(t.args, t.code_bytes, rec.name);
      return true;
    default:
      return refuse("has type " + std::to_string(t.type) +
                    " (1 kernel, 2 record, 3 wait, 4 barrier, 5 AI CPU kernel, 6 DVPP command, 7 preload, 8 discard, 9 "
                    "prefetch)");
  }
}

// Waits until every other stream has nothing queued or running.
void TaskScheduler::barrier(unsigned s) {
  for (;;) {
    bool others = false;
    for (unsigned o = 0; o < DVP_MAX_STREAMS; ++o)
      if (o != s && (streams_[o]->busy || streams_[o]->head->value != streams_[o]->tail->value)) others = true;
    if (!others) return;
    wait(stream_idle_);
  }
}

void TaskScheduler::run_kernel(const dvp_task& t, TaskRecord& rec, dvp_completion& c) {
  rec.blocks = t.blocks;
  const sc_core::sc_time dispatch(cfg_.dispatch_ns, sc_core::SC_NS);
  std::vector<int> mine;  // cores running this task's blocks
  std::vector<unsigned> block_of(cores_.size());
  unsigned next = 0, running = 0;
  auto reap = [&] {
    for (std::size_t i = 0; i < mine.size();) {
      aicore::AiCore* core = cores_[unsigned(mine[i])];
      if (core->busy()) {
        ++i;
        continue;
      }
      if (core->fault() && !rec.fault) {
        rec.fault = true;
        rec.fault_text = "block " + std::to_string(block_of[unsigned(mine[i])]) + ": " + core->fault()->str();
        c.status = DVP_FAULT;
        c.fault_core = core->id();
        c.fault_block = block_of[unsigned(mine[i])];
        c.fault_pc = core->fault()->pc;
        std::strncpy(c.fault_reason, core->fault()->reason.c_str(), sizeof c.fault_reason - 1);
      }
      core_taken_[unsigned(mine[i])] = false;
      core_freed_.notify(sc_core::SC_ZERO_TIME);
      mine.erase(mine.begin() + long(i));
      --running;
    }
  };
  while (next < t.blocks || running) {
    reap();  // blocks that ended while this one was dispatching too: their events are past
    // Start blocks on free cores, one dispatch latency each.
    for (int core; next < t.blocks && (core = claim_core()) >= 0;) {
      wait(dispatch);
      // The block goes to the core through its control registers, then START.
      const unsigned c = unsigned(core);
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      write_ctrl(c, 0x00, std::uint32_t(t.image), d);
      write_ctrl(c, 0x04, std::uint32_t(t.image >> 32), d);
      write_ctrl(c, 0x08, std::uint32_t(t.code_bytes), d);
      write_ctrl(c, 0x0c, t.entry, d);
      write_ctrl(c, 0x10, next, d);
      write_ctrl(c, 0x14, t.blocks, d);
      write_ctrl(c, 0x18, std::uint32_t(t.args), d);
      write_ctrl(c, 0x1c, std::uint32_t(t.args >> 32), d);
      // A fault ends the block; the task reports it (reap below) and the run goes on.
      cores_[c]->set_fault_handler([](const aicore::Fault&) {});
      if (d > sc_core::SC_ZERO_TIME) wait(d);
      d = sc_core::SC_ZERO_TIME;
      write_ctrl(c, 0x20, 1, d);
      if (!error_.empty()) return;
      block_of[c] = next++;
      mine.push_back(core);
      ++running;
      ++blocks_;
    }
    bool ended = false;
    for (int m : mine) ended |= !cores_[unsigned(m)]->busy();
    if (ended) continue;
    sc_core::sc_event_or_list any;
    any |= core_freed_;
    for (int m : mine) any |= cores_[unsigned(m)]->finished();
    wait(any);
  }
  if (rec.fault) ++faults_;
}

namespace {
// What the runtime's AI CPU kernels mean by a status (dvp_abi.h), for the fault's text.
std::string aicpu_status_text(std::uint32_t status) {
  switch (status) {
    case DVP_AICPU_BAD_ARGS: return " (sizes the kernel does not take)";
    case DVP_AICPU_BAD_INDEX: return " (an index out of range)";
    case DVP_AICPU_NO_FUNCTION: return " (no such AI CPU function)";
    default: return "";
  }
}
}  // namespace

void TaskScheduler::run_aicpu(const dvp_task& t, TaskRecord& rec, dvp_completion& c) {
  // The first free AI CPU takes it: its mailbox holds the task and its line goes high; the
  // firmware there runs the function and writes DONE.
  unsigned i = 0;
  for (;;) {
    for (i = 0; i < aicpu_.size() && aicpu_[i]->busy; ++i) {}
    if (i < aicpu_.size()) break;
    wait(aicpu_freed_);
  }
  Mailbox& m = *aicpu_[i];
  m.busy = true;
  m.finished = false;
  wait(sc_core::sc_time(cfg_.dispatch_ns, sc_core::SC_NS));
  m.func->value = t.entry;
  m.args_lo->value = std::uint32_t(t.args);
  m.args_hi->value = std::uint32_t(t.args >> 32);
  irq_.set_line(aicpu_line_ + i, true);
  while (!m.finished) wait(m.done_ev);
  rec.blocks = 1;
  if (m.status) {
    rec.fault = true;
    rec.fault_text =
        "AI CPU " + std::to_string(i) + " returned status " + std::to_string(m.status) + aicpu_status_text(m.status);
    c.status = DVP_FAULT;
    c.fault_core = i;
    std::strncpy(c.fault_reason, rec.fault_text.c_str(), sizeof c.fault_reason - 1);
    ++faults_;
  }
  m.busy = false;
  aicpu_freed_.notify(sc_core::SC_ZERO_TIME);
}

void TaskScheduler::attach_dvpp(std::uint64_t regs, const sc_core::sc_event& done) {
  dvpp_regs_ = regs;
  dvpp_done_ = &done;
  // Completions counted as they are notified: one that comes while a stream reads its entry's
  // status is not lost (the stream sees the count move and reads again instead of waiting).
  sc_core::sc_spawn_options opt;
  opt.spawn_method();
  opt.set_sensitivity(&done);
  opt.dont_initialize();
  sc_core::sc_spawn([this] { ++dvpp_completions_; }, "dvpp_completions", &opt);
}

// A media command: the scheduler reads it, writes a copy into the engine's ring (the
// scheduler's, in the job table's area) and rings the engine's doorbell; the task ends when DVPP
// has written the copy's status, and the results go back into the task's command. A status
// other than done is the task's fault.
void TaskScheduler::run_dvpp(const dvp_task& t, TaskRecord& rec, dvp_completion& c) {
  if (t.entry >= DVPP_ENGINES)
    return fail("task '" + rec.name + "' names DVPP engine " + std::to_string(t.entry) + " (0.." +
                std::to_string(DVPP_ENGINES - 1) + ")");
  const std::string what = "task '" + rec.name + "''s DVPP command";
  dvpp_cmd cmd;
  sc_core::sc_time d(cfg_.dispatch_ns, sc_core::SC_NS);
  if (!access(false, t.args, &cmd, sizeof cmd, what, d)) return;
  wait(d);
  const std::uint64_t slot = submit_dvpp(t.entry, cmd);
  if (!slot || !await_dvpp(slot, cmd)) return;
  d = sc_core::SC_ZERO_TIME;
  if (!access(true, t.args, &cmd, sizeof cmd, what, d)) return;
  wait(d);
  rec.blocks = 1;
  const auto status = dvpp_status(cmd.status);
  if (status == DVPP_DONE) return;
  rec.fault = true;
  rec.fault_text = "DVPP engine " + std::to_string(t.entry) + ": " + dvpp_status_name(status);
  c.status = DVP_FAULT;
  std::strncpy(c.fault_reason, rec.fault_text.c_str(), sizeof c.fault_reason - 1);
  ++faults_;
}

// The copy into the next slot of `engine`'s ring, then its doorbell: one stream at a time per
// engine, so the slots fill and the doorbell counts in order. Returns the slot (0: failed).
std::uint64_t TaskScheduler::submit_dvpp(std::uint32_t engine, dvpp_cmd cmd) {
  const std::uint64_t ring = dvpp_rings_ + std::uint64_t(engine) * DVP_TS_DVPP_RING_ENTRIES * sizeof(dvpp_cmd);
  sc_core::sc_mutex& lock = dvpp_submit_[engine];
  lock.lock();
  const std::uint32_t n = dvpp_submitted_[engine]++;
  const std::uint64_t slot = ring + (n % DVP_TS_DVPP_RING_ENTRIES) * sizeof(dvpp_cmd);
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  cmd.status = DVPP_PENDING;
  if (!access(true, slot, &cmd, sizeof cmd, "the DVPP ring's entry", d)) return 0;
  const std::uint64_t regs = dvpp_regs_ + 0x100 + 0x40 * engine;  // Dvpp::kEngineBase, kEngineStride
  if (n == 0) {
    write_reg(regs, std::uint32_t(ring), d, "SQ_BASE_LO");
    write_reg(regs + 4, std::uint32_t(ring >> 32), d, "SQ_BASE_HI");
    write_reg(regs + 8, DVP_TS_DVPP_RING_ENTRIES, d, "SQ_SIZE");
  }
  write_reg(regs + 0xc, n + 1, d, "SQ_TAIL");
  wait(d);
  lock.unlock();
  return error_.empty() ? slot : 0;
}

// The slot's status read now and after each DVPP completion until it is set; `cmd` gets it.
bool TaskScheduler::await_dvpp(std::uint64_t slot, dvpp_cmd& cmd) {
  for (;;) {
    const std::uint64_t seen = dvpp_completions_;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    if (!access(false, slot, &cmd, sizeof cmd, "the DVPP ring's entry", d)) return false;
    wait(d);
    if (cmd.status != DVPP_PENDING) return true;
    if (dvpp_completions_ == seen) wait(*dvpp_done_);
  }
}

void TaskScheduler::write_reg(std::uint64_t addr, std::uint32_t value, sc_core::sc_time& delay,
                              const std::string& what) {
  tlm::tlm_generic_payload p;
  prepare(p, true, addr, reinterpret_cast<unsigned char*>(&value), 4);
  ctrl->b_transport(p, delay);
  if (p.get_response_status() != tlm::TLM_OK_RESPONSE)
    fail("writing DVPP's " + what + " at " + hex(addr) + " failed: " + p.get_response_string());
}

void TaskScheduler::write_ctrl(unsigned core, std::uint32_t offset, std::uint32_t value, sc_core::sc_time& delay) {
  tlm::tlm_generic_payload p;
  prepare(p, true, ctrl_base_ + core * ctrl_stride_ + offset, reinterpret_cast<unsigned char*>(&value), 4);
  ctrl->b_transport(p, delay);
  if (p.get_response_status() != tlm::TLM_OK_RESPONSE)
    fail("writing AI Core " + std::to_string(core) + "'s control register at " + hex(p.get_address()) +
         " failed: " + p.get_response_string());
}

void TaskScheduler::complete(const dvp_completion& c) {
  completing_.lock();  // (a failed run stops; the lock is not taken again)
  const std::uint64_t base = std::uint64_t(cq_base_hi_.value) << 32 | cq_base_lo_.value;
  if (!cq_size_.value) return fail("a task completed but CQ_SIZE is 0 (the firmware set up no completion queue)");
  if (cq_tail_.value - cq_head_.value >= cq_size_.value)
    return fail("the completion queue is full (" + std::to_string(cq_size_.value) +
                " entries the firmware has not consumed): raise CQ_SIZE or consume faster");
  dvp_completion entry = c;
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  if (!access(true, base + (cq_tail_.value % cq_size_.value) * sizeof entry, &entry, sizeof entry,
              "the completion queue entry", d))
    return;
  wait(d);  // the entry is in memory before the tail moves and the interrupt rises
  ++cq_tail_.value;
  update_irq();
  completing_.unlock();
}

}  // namespace dvp::ts
