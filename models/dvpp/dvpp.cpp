// SPDX-License-Identifier: MIT
#include "dvpp.hpp"

#include <algorithm>
#include <cstring>
#include <queue>

#include "common/error.hpp"
#include "common/payload.hpp"
#include "common/system.hpp"

namespace dvp::dvpp {

// One engine: its registers, its channels' trace lanes, its statistics.
struct Dvpp::Engine {
  const EngineConfig* cfg = nullptr;
  std::unique_ptr<mmio::Register> base_lo, base_hi, size, tail, head, done, errors, ack, channels;
  sc_core::sc_event doorbell;
  std::vector<Tracer::Lane> lanes;
  std::unique_ptr<stats::Group> stats;
  std::uint64_t *frames = nullptr, *failed = nullptr, *pixels = nullptr, *bytes_in = nullptr, *bytes_out = nullptr,
                *busy_ps = nullptr;
  Tick first = kTickMax, last = 0;  // the first command's start, the last one's end
  Tick shared_free = 0;             // when the engine's shared pixel rate is next free
};

namespace {

std::unique_ptr<mmio::Register> reg(mmio::Device& d, const std::string& engine, const char* name, std::uint32_t off,
                                    std::uint32_t reset, const std::string& doc) {
  std::string upper = engine;
  for (char& ch : upper) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  return std::make_unique<mmio::Register>(d, upper + "_" + name, off, reset, engine + ": " + doc);
}

}  // namespace

Dvpp::Dvpp(sc_core::sc_module_name name, const DvppConfig& cfg, const Wiring& w)
    : Device(name, kSize, w.access_ns),
      mem("mem"),
      cfg_(cfg),
      w_(w),
      engines_reg_(*this, "BUILT", 0x0, 0, "bit e: engine e (enum dvpp_engine) is built"),
      irq_status_(*this, "IRQ_STATUS", 0x4, 0,
                  "bit e: engine e has completions not yet acknowledged (DONE != ACK); the line is high while any "
                  "bit is"),
      scratch_(w.line_bytes) {
  engines_reg_.read_only();
  irq_status_.read_only();
  for (const EngineConfig& c : cfg_.engines) {
    auto e = std::make_unique<Engine>();
    e->cfg = &c;
    const std::string n = c.codec->name;
    const std::uint32_t off = kEngineBase + kEngineStride * std::uint32_t(c.codec->engine);
    e->base_lo = reg(*this, n, "SQ_BASE_LO", off, 0, "submission queue address, low 32 bits");
    e->base_hi = reg(*this, n, "SQ_BASE_HI", off + 0x4, 0, "submission queue address, high 32 bits");
    e->size = reg(*this, n, "SQ_SIZE", off + 0x8, 0, "submission queue entries (struct dvpp_cmd)");
    e->tail = reg(*this, n, "SQ_TAIL", off + 0xc, 0, "doorbell: commands submitted (counts up)");
    e->head = reg(*this, n, "SQ_HEAD", off + 0x10, 0, "commands taken by a channel (read-only)");
    e->done = reg(*this, n, "DONE", off + 0x14, 0, "commands completed, with or without error (read-only)");
    e->errors = reg(*this, n, "ERRORS", off + 0x18, 0, "commands completed with an error status (read-only)");
    e->ack =
        reg(*this, n, "ACK", off + 0x1c, 0, "completions the firmware has seen; the interrupt stays while DONE != ACK");
    e->channels = reg(*this, n, "CHANNELS", off + 0x20, c.channels, "channels (read-only)");
    for (mmio::Register* r : {e->head.get(), e->done.get(), e->errors.get(), e->channels.get()}) r->read_only();
    Engine* ep = e.get();
    e->tail->on_write([this, ep](std::uint32_t v) {
      ep->tail->value = v;
      ep->doorbell.notify(now() - sc_core::sc_time_stamp());  // at the write's time
    });
    e->ack->on_write([this, ep](std::uint32_t v) {
      ep->ack->value = v;
      update_irq();
    });
    e->stats = std::make_unique<stats::Group>(system_of(*this).stats(), std::string(this->name()) + "." + n);
    stats::Group& g = *e->stats;
    e->frames = &g.counter("frames", "pictures written by commands completed without error (VDEC: a stream's frames)");
    e->failed = &g.counter("errors", "commands completed with an error status");
    e->pixels = &g.counter("pixels", "pixels of the pictures written");
    e->bytes_in = &g.counter("bytes_in", "input bytes read");
    e->bytes_out = &g.counter("bytes_out", "output bytes written");
    e->busy_ps = &g.counter("busy_ps", "channel time spent on commands, summed over channels");
    g.formula("fps", "frames per second achieved: frames / (last end - first start)",
              [ep] { return ep->last > ep->first ? double(*ep->frames) * 1e12 / double(ep->last - ep->first) : 0.0; });
    g.formula("busy_fraction", "busy_ps / (channels x (last end - first start))", [ep] {
      return ep->last > ep->first ? double(*ep->busy_ps) / (double(ep->cfg->channels) * double(ep->last - ep->first))
                                  : 0.0;
    });
    engines_reg_.value |= 1u << c.codec->engine;
    for (unsigned ch = 0; ch < c.channels; ++ch) {
      e->lanes.push_back(system_of(*this).tracer().lane(this->name(), n + " ch" + std::to_string(ch)));
      sc_core::sc_spawn([this, ep, ch] { channel_thread(*ep, ch); }, (n + "_ch" + std::to_string(ch)).c_str());
    }
    engines_.push_back(std::move(e));
  }
}

Dvpp::~Dvpp() = default;

std::uint32_t Dvpp::done(dvpp_engine e) const {
  for (const auto& p : engines_)
    if (p->cfg->codec->engine == e) return p->done->value;
  return 0;
}

void Dvpp::fail(const std::string& msg) {
  if (error_.empty()) error_ = std::string(name()) + ": " + msg;
  sc_core::sc_stop();
}

void Dvpp::update_irq() {
  std::uint32_t bits = 0;
  for (const auto& e : engines_)
    if (e->done->value != e->ack->value) bits |= 1u << e->cfg->codec->engine;
  irq_status_.value = bits;
  if (w_.irq) w_.irq->set_line(w_.irq_line, bits != 0);
}

void Dvpp::channel_thread(Engine& e, unsigned ch) {
  for (;;) {
    while (e.head->value == e.tail->value) wait(e.doorbell);
    const std::string who = std::string(e.cfg->codec->name) + " channel " + std::to_string(ch);
    if (!e.size->value) return fail(who + ": the doorbell rang with " + e.size->name() + " 0");
    if (e.tail->value - e.head->value > e.size->value)  // counts up; behind, or more than a ring ahead
      return fail(who + ": " + e.tail->name() + " " + std::to_string(e.tail->value) + " is not within " +
                  e.size->name() + " (" + std::to_string(e.size->value) + ") of " + e.head->name() + " (" +
                  std::to_string(e.head->value) + ")");
    const std::uint64_t base = std::uint64_t(e.base_hi->value) << 32 | e.base_lo->value;
    const std::uint64_t at = base + std::uint64_t(e.head->value % e.size->value) * sizeof(dvpp_cmd);
    ++e.head->value;
    run_command(e, ch, at);
    if (!error_.empty()) return;
  }
}

// One command: the input read and decoded, the picture written as it comes out, the result.
void Dvpp::run_command(Engine& e, unsigned ch, std::uint64_t at) {
  dvpp_cmd cmd;
  const std::string who = std::string(e.cfg->codec->name) + " channel " + std::to_string(ch);
  if (!command_io(false, at, cmd, who)) return;
  const EngineConfig& c = *e.cfg;
  Frame f{c.codec->engine, ch, cmd.tag, DVPP_PENDING, "", 0, 0, 0, 0, 0, now_tick(), 0};
  const Tick setup_end = f.start + Tick(std::llround(c.setup_us * 1e6));
  Tick end = setup_end;
  Decoded d;
  if (cmd.in_addr % c.addr_align || cmd.out_addr % c.addr_align)
    d = refuse(DVPP_ERR_ALIGN, std::string(cmd.in_addr % c.addr_align ? "the input at " + hex(cmd.in_addr)
                                                                      : "the output at " + hex(cmd.out_addr)) +
                                   " is not on a multiple of " + std::to_string(c.addr_align) + " bytes");
  else
    d = decode(c, cmd, end, f.in_bytes);
  const Picture& p = d.picture;
  if (d.status == DVPP_DONE && p.bytes.size() > cmd.out_size)
    d.status = DVPP_ERR_OUT_SIZE, d.reason = "the picture (" + std::to_string(p.bytes.size()) +
                                             " B) does not fit the output buffer (" + std::to_string(cmd.out_size) +
                                             " B)";
  if (d.status == DVPP_DONE) {
    bool ok = true;
    end = std::max(end, write_frames(e, d, cmd.out_addr, f.start, f.in_bytes, ok));
    if (!ok) d.status = DVPP_ERR_BUS, d.reason = "writing the output at " + hex(cmd.out_addr) + " failed";
    std::uint64_t written = d.spans.empty() ? p.bytes.size() : 0;  // a paste writes its spans only
    for (const auto& span : d.spans) written += span.second;
    f.out_bytes = ok ? written : 0, f.frames = ok ? d.frames : 0;
  }
  if (end > now_tick()) wait(to_sc(end - now_tick()));
  f.status = d.status, f.reason = d.reason, f.width = p.width, f.height = p.height;
  cmd.format = p.format, cmd.width = p.width, cmd.height = p.height, cmd.stride_w = p.stride_w;
  cmd.stride_h = p.stride_h, cmd.out_bytes = f.out_bytes, cmd.frames = f.frames;
  f.end = now_tick();
  cmd.status = f.status;
  cmd.start_ns = f.start / 1000, cmd.end_ns = f.end / 1000, cmd.channel = f.channel;
  if (!command_io(true, at, cmd, who)) return;
  finish(e, f);
}

// The command at `at` read or written whole (through the ring, whatever the run's fidelity: the
// engine must know its work and the firmware its result), the channel waiting for it.
bool Dvpp::command_io(bool write, std::uint64_t at, dvpp_cmd& cmd, const std::string& who) {
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  const tlm::tlm_response_status st = access_lines(mem, write, at, &cmd, sizeof cmd, w_.line_bytes, d);
  if (st != tlm::TLM_OK_RESPONSE) {
    tlm::tlm_generic_payload p;
    p.set_response_status(st);
    fail(who + ": " + (write ? "writing the result into" : "reading") + " the queue entry at " + hex(at) +
         " failed: " + p.get_response_string());
    return false;
  }
  wait(d);
  return true;
}

// The pictures, frame after frame: each takes the channel's frame time (and its turn at the
// engine's shared pixel rate, if it has one) from the end of the one before, its stripes written
// as its pixels come out. A frame's share of the bitstream (read by a decoder, written by an
// encoder) bounds its time from below at max_mbps. Returns when the last frame is done and written.
Tick Dvpp::write_frames(Engine& e, const Decoded& d, std::uint64_t addr, Tick start, std::uint64_t in_bytes, bool& ok) {
  const EngineConfig& c = *e.cfg;
  const Picture& p = d.picture;
  const std::uint64_t frame_bytes = p.bytes.size() / d.frames;  // an encoder's: the stream's share
  const std::uint64_t pixels = d.work_pixels ? d.work_pixels : std::uint64_t(p.width) * p.height;
  const std::uint64_t read = d.stream_bytes ? d.stream_bytes : in_bytes;
  const std::uint64_t stream = !c.codec->picture_out ? p.bytes.size() : c.codec->bitstream_in ? read : 0;
  const Tick frame = c.frame_ps(pixels, stream / d.frames);
  const Tick setup = Tick(std::llround(c.setup_us * 1e6));
  Tick t = start, end = start;
  for (std::uint32_t i = 0; i < d.frames && ok; ++i) {
    Tick done = t + frame;
    if (const Tick shared = c.shared_ps(pixels)) {
      e.shared_free = std::max(t, e.shared_free) + shared;
      done = std::max(done, e.shared_free);
    }
    const std::uint64_t off = i * frame_bytes, len = i + 1 == d.frames ? p.bytes.size() - off : frame_bytes;
    const Tick written = d.spans.empty() ? write_out(p.bytes.data() + off, len, addr + off, t + setup, done, ok)
                                         : write_spans(d, addr, t + setup, done, ok);
    end = std::max(done, written);
    t = done;  // the next frame's pixels start; this one's last writes drain meanwhile
  }
  return end;
}

// Only the picture's spans (a paste into a canvas that keeps the rest): span k of n leaves at the
// start of its n-th of [from, to), as the pixels come out. Returns when the last write completed.
Tick Dvpp::write_spans(const Decoded& d, std::uint64_t addr, Tick from, Tick to, bool& ok) {
  Tick done = from;
  const std::uint64_t n = d.spans.size();
  for (std::uint64_t k = 0; k < n && ok; ++k) {
    const auto& [off, len] = d.spans[k];
    const Tick start = from + (to - from) * k / n;
    done = std::max(done, write_out(d.picture.bytes.data() + off, len, addr + off, start, start, ok));
  }
  return done;
}

// The input through the ring (with its bytes even in a timing-only run: the codec needs them),
// then the codec.
// `read_done`: raised to when the last byte arrived.
Decoded Dvpp::decode(const EngineConfig& c, const dvpp_cmd& cmd, Tick& read_done, std::uint64_t& in_read) {
  if (!cmd.in_size) return refuse(DVPP_ERR_CORRUPT, "an empty input (in_size 0)");
  if (cmd.out_format > DVPP_FMT_P010)
    return refuse(DVPP_ERR_FORMAT, "output format " + std::to_string(cmd.out_format) + " is no enum dvpp_format");
  if (cmd.in_size > c.max_input_bytes)
    return refuse(DVPP_ERR_SIZE, "the input (" + std::to_string(cmd.in_size) + " B) is larger than the engine takes (" +
                                     std::to_string(c.max_input_bytes) + " B: max_input_kib)");
  // 64 bytes more, zero: libswscale's vector loads may read a little past a picture's last row.
  std::vector<std::uint8_t> in(cmd.in_size + 64, 0);
  bool ok = true;
  read_done = std::max(read_done, dma(false, cmd.in_addr, in.data(), cmd.in_size, now_tick(), ok, true));
  if (!ok) return refuse(DVPP_ERR_BUS, "reading the input at " + hex(cmd.in_addr) + " failed");
  in_read = cmd.in_size;
  return c.codec->decode(Request{in.data(), cmd.in_size, cmd}, c.limits);
}

// The picture in 16 stripes, stripe i written from the start of its share of [from, to): the
// engine's output leaves as its pixels come out. Returns when the last write completed.
Tick Dvpp::write_out(const std::uint8_t* data, std::uint64_t total, std::uint64_t addr, Tick from, Tick to, bool& ok) {
  constexpr std::uint64_t kStripes = 16;
  const std::uint64_t line = w_.line_bytes;
  const std::uint64_t stripe = std::max<std::uint64_t>(line, (total / kStripes + line - 1) / line * line);
  Tick done = from;
  // A write's payload is only read from; TLM's data pointer is not const.
  std::uint8_t* bytes = const_cast<std::uint8_t*>(data);
  for (std::uint64_t off = 0, i = 0; off < total && ok; off += stripe, ++i) {
    const Tick start = from + (to - from) * std::min(i, kStripes - 1) / kStripes;
    done = std::max(done, dma(true, addr + off, bytes + off, std::min(stripe, total - off), start, ok, w_.functional));
  }
  return done;
}

// [addr, addr + len) through the ring from `start` on, in requests that never cross an L2 line,
// at bus_bytes_per_cycle, at most `outstanding` in flight, with their bytes if `carry` (else
// timing-only). Returns when the last completed; `ok` false when one failed.
Tick Dvpp::dma(bool write, std::uint64_t addr, std::uint8_t* data, std::uint64_t len, Tick start, bool& ok,
               bool carry) {
  static TimingOnly timing_only;
  tlm::tlm_generic_payload p;
  if (!carry) p.set_extension(&timing_only);
  std::priority_queue<Tick, std::vector<Tick>, std::greater<>> in_flight;
  const Tick quantum = to_tick(tlm::tlm_global_quantum::instance().get());
  Tick issue = std::max(start, now_tick()), done = issue;
  for (std::uint64_t off = 0; off < len;) {
    const std::uint64_t a = addr + off;
    const auto piece = std::uint32_t(std::min<std::uint64_t>(len - off, w_.line_bytes - a % w_.line_bytes));
    if (in_flight.size() >= cfg_.outstanding) {
      issue = std::max(issue, in_flight.top());
      in_flight.pop();
    }
    if (issue >= now_tick() + quantum) wait(to_sc(issue - now_tick()));
    prepare(p, write, a, carry ? data + off : scratch_.data(), piece);
    sc_core::sc_time d = to_sc(issue - now_tick());
    mem->b_transport(p, d);
    if (p.get_response_status() != tlm::TLM_OK_RESPONSE) return ok = false, now_tick();
    const Tick c = now_tick() + to_tick(d);
    in_flight.push(c);
    done = std::max(done, c);
    issue += cfg_.clock.cycles((piece + cfg_.bus_bytes_per_cycle - 1) / cfg_.bus_bytes_per_cycle);
    off += piece;
  }
  return std::max(done, issue);
}

// The command's result is in memory: the counters, the interrupt.
void Dvpp::finish(Engine& e, const Frame& f) {
  const bool ok = f.status == DVPP_DONE;
  if (ok)
    *e.frames += f.frames;
  else
    ++*e.failed;
  if (ok) *e.pixels += std::uint64_t(f.width) * f.height * f.frames;
  *e.bytes_in += f.in_bytes, *e.bytes_out += f.out_bytes, *e.busy_ps += f.end - f.start;
  e.first = std::min(e.first, f.start), e.last = std::max(e.last, f.end);
  e.lanes[f.channel].slice(ok ? "frame" : "error", f.start, f.end);
  ++e.done->value;
  if (!ok) ++e.errors->value;
  frames_.push_back(f);
  update_irq();
  completion_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace dvp::dvpp
