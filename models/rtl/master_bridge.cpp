// SPDX-License-Identifier: MIT
#include "master_bridge.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace dvp::rtl {

MasterBridge::MasterBridge(const AxiPort& port, AxiChecker& checker, PortStats& stats, const Clock& clock,
                           unsigned outstanding, unsigned line_bytes, Transport transport, std::uint64_t timeout_cycles)
    : port_(port),
      checker_(checker),
      stats_(stats),
      clock_(clock),
      outstanding_(outstanding),
      line_bytes_(line_bytes),
      transport_(std::move(transport)),
      timeout_cycles_(timeout_cycles) {
  beat_.resize(port.data_bytes);
  for (Sig s : {RVALID, BVALID, ARREADY, AWREADY, WREADY}) port_.set(s, 0);
}

bool MasterBridge::busy() const {
  return !reads_.empty() || !writes_.empty() || !responses_.empty() || !early_w_.empty() || port_.get(ARVALID) ||
         port_.get(AWVALID) || port_.get(WVALID);
}

// The burst's address channel (base = AWADDR or ARADDR; ID, LEN, SIZE, BURST follow it).
bool MasterBridge::accept(Req& r, Sig base, Tick edge) {
  r.addr = port_.get(base), r.id = std::uint32_t(port_.get(Sig(base + 1)));
  r.len = unsigned(port_.get(Sig(base + 2))), r.size = unsigned(port_.get(Sig(base + 3), port_.size_log2));
  r.burst = Burst(port_.get(Sig(base + 4), kIncr)), r.accepted = edge;
  return legal(r, base, edge);
}

// The burst rules of AXI4 A3.4.1 the RTL master could break.
bool MasterBridge::legal(const Req& r, Sig base, Tick edge) {
  const std::uint64_t nb = std::uint64_t(1) << r.size, aligned = r.addr & ~(nb - 1);
  const std::uint64_t last = aligned + nb * (r.len + 1) - 1;
  std::string rule;
  if (nb > port_.data_bytes)
    rule = "AxSIZE of " + std::to_string(nb) + " B is wider than the data bus";
  else if (r.burst == 3)
    rule = "AxBURST = 3 is reserved";
  else if (r.burst == kIncr && aligned / 4096 != last / 4096)
    rule = "burst crosses a 4 KiB boundary";
  else if (r.burst == kWrap && (r.addr % nb || (r.len != 1 && r.len != 3 && r.len != 7 && r.len != 15)))
    rule = "WRAP burst unaligned or not 2, 4, 8 or 16 beats";
  else if (r.burst == kFixed && r.len > 15)
    rule = "FIXED burst longer than 16 beats";
  if (rule.empty()) return true;
  checker_.violation(edge, base, rule + " (AXI4 A3.4.1), address " + hex(r.addr) + ", AxLEN " + std::to_string(r.len));
  return false;
}

// The bytes the burst touches, [lo, lo + size).
void MasterBridge::span(Req& r) const {
  std::uint64_t lo = ~std::uint64_t(0), hi = 0;
  const unsigned bus = port_.data_bytes;
  for (unsigned k = 0; k <= r.len; ++k) {
    const Beat b = beat_of(r.addr, r.size, r.len, r.burst, k, bus);
    const std::uint64_t base = b.addr - b.addr % bus;
    lo = std::min(lo, base + b.lane_lo), hi = std::max(hi, base + b.lane_hi);
  }
  r.lo = lo, r.span = hi - lo;
  r.stride = r.burst == kFixed ? r.span : 0;
  r.bytes.assign(r.burst == kFixed ? r.span * (r.len + 1) : r.span, 0);
}

void MasterBridge::issue_read(Req& r, Tick edge) {
  span(r);
  struct Piece {
    std::uint64_t lo, hi;
    Tick done;
  };
  std::vector<Piece> pieces;
  if (r.burst == kFixed) {  // a beat a transaction, in order; each within one beat of the bus
    Tick ready = edge;
    for (unsigned k = 0; k <= r.len; ++k) {
      unsigned resp = kOkay;
      ready = std::max(ready, transport_(false, r.lo, r.bytes.data() + k * r.stride, unsigned(r.span), edge, resp));
      r.resp = std::max(r.resp, resp);
      r.beat_ready.push_back(ready);
    }
    return;
  }
  for (std::uint64_t a = r.lo, end = r.lo + r.bytes.size(); a < end;) {
    const auto n = unsigned(std::min<std::uint64_t>(end - a, line_bytes_ - a % line_bytes_));
    unsigned resp = kOkay;
    pieces.push_back(Piece{a, a + n, transport_(false, a, r.bytes.data() + (a - r.lo), n, edge, resp)});
    r.resp = std::max(r.resp, resp);
    a += n;
  }
  // A beat may go once every line it takes bytes from is back, and after the beat before it.
  const unsigned bus = port_.data_bytes;
  Tick ready = edge;
  for (unsigned k = 0; k <= r.len; ++k) {
    const Beat b = beat_of(r.addr, r.size, r.len, r.burst, k, bus);
    const std::uint64_t base = b.addr - b.addr % bus, lo = base + b.lane_lo, hi = base + b.lane_hi;
    for (const Piece& p : pieces)
      if (p.lo < hi && p.hi > lo) ready = std::max(ready, p.done);
    r.beat_ready.push_back(ready);
  }
}

void MasterBridge::write_beat(Req& r, const WBeat& w, Tick edge) {
  const Beat b = beat_of(r.addr, r.size, r.len, r.burst, r.beats, port_.data_bytes);
  const std::uint64_t base = b.addr - b.addr % port_.data_bytes;
  for (unsigned l = b.lane_lo; l < b.lane_hi; ++l)
    if (w.strb[l / 8] >> (l % 8) & 1) {
      r.bytes[at(r, r.beats, base + l)] = w.data[l], r.mask[at(r, r.beats, base + l)] = 1;
      ++stats_.bytes;
    }
  ++stats_.beats;
  if (port_.has(WLAST) && w.last != (r.beats == r.len))
    checker_.violation(edge, WLAST,
                       w.last ? "WLAST high before the burst's last beat" : "WLAST low on the burst's last beat");
  if (++r.beats > r.len) issue_write(r, edge);
}

// The strobed bytes go out as runs of contiguous bytes, each within a line; a FIXED burst's beat
// by beat, in order.
void MasterBridge::issue_write(Req& r, Tick edge) {
  r.ready = edge;
  if (r.burst == kFixed)
    for (unsigned k = 0; k <= r.len; ++k) write_runs(r, k * r.stride, (k + 1) * r.stride, edge);
  else
    write_runs(r, 0, r.bytes.size(), edge);
  responses_.push_back(std::move(r));
  writes_.pop_front();
}

// The strobed runs of r.bytes[from, to), which hold the bytes from r.lo on.
void MasterBridge::write_runs(Req& r, std::uint64_t from, std::uint64_t to, Tick edge) {
  for (std::uint64_t i = from; i < to;) {
    if (!r.mask[i]) {
      ++i;
      continue;
    }
    const std::uint64_t a = r.lo + (i - from);
    std::uint64_t n = 1;
    while (i + n < to && r.mask[i + n] && (a + n) % line_bytes_) ++n;
    unsigned resp = kOkay;
    r.ready = std::max(r.ready, transport_(true, a, r.bytes.data() + i, unsigned(n), edge, resp));
    r.resp = std::max(r.resp, resp);
    i += n;
  }
}

void MasterBridge::take_w(Tick edge) {
  WBeat w{std::vector<std::uint8_t>(port_.data_bytes), std::vector<std::uint8_t>((port_.data_bytes + 7) / 8, 0xff),
          bool(port_.get(WLAST, 1))};
  port_[WDATA].get_bytes(w.data.data(), port_.data_bytes);
  if (port_.has(WSTRB)) port_[WSTRB].get_bytes(w.strb.data(), unsigned(w.strb.size()));
  if (writes_.empty()) return early_w_.push_back(std::move(w));
  write_beat(writes_.front(), w, edge);
}

void MasterBridge::sample(Tick edge) {
  if (r_offered_ && port_.get(RREADY)) {
    Req& r = reads_.front();
    ++stats_.beats;
    if (++r.beats > r.len) {
      ++stats_.reads, stats_.bytes += r.bytes.size(), stats_.errors += r.resp >= kSlvErr;
      stats_.burst_done(clock_.to_cycles_floor(edge - r.accepted));
      reads_.pop_front();
    }
  }
  if (b_offered_ && port_.get(BREADY)) {
    const Req& r = responses_.front();
    ++stats_.writes, stats_.errors += r.resp >= kSlvErr;
    stats_.burst_done(clock_.to_cycles_floor(edge - r.accepted));
    responses_.pop_front();
  }
  if (port_.get(ARVALID) && port_.get(ARREADY)) {
    Req r;
    if (accept(r, ARADDR, edge)) issue_read(r, edge), reads_.push_back(std::move(r));
  }
  if (port_.get(AWVALID) && port_.get(AWREADY)) {
    Req r;
    r.write = true;
    if (accept(r, AWADDR, edge)) span(r), r.mask.assign(r.bytes.size(), 0), writes_.push_back(std::move(r));
    while (!writes_.empty() && !early_w_.empty()) {
      WBeat w = std::move(early_w_.front());
      early_w_.pop_front();
      write_beat(writes_.front(), w, edge);
    }
  }
  if (port_.get(WVALID) && port_.get(WREADY)) take_w(edge);
  orphan_cycles_ = early_w_.empty() ? 0 : orphan_cycles_ + 1;
  if (orphan_cycles_ == timeout_cycles_)
    checker_.violation(
        edge, WVALID,
        "write data waited " + std::to_string(timeout_cycles_) + " cycles for its write address (timeout_cycles)");
}

void MasterBridge::drive_r(Tick next_edge) {
  r_offered_ = !reads_.empty() && reads_.front().beat_ready[reads_.front().beats] <= next_edge;
  port_.set(RVALID, r_offered_);
  if (!r_offered_) return;
  const Req& r = reads_.front();
  const Beat b = beat_of(r.addr, r.size, r.len, r.burst, r.beats, port_.data_bytes);
  const std::uint64_t base = b.addr - b.addr % port_.data_bytes;
  std::fill(beat_.begin(), beat_.end(), 0);
  for (unsigned l = b.lane_lo; l < b.lane_hi; ++l) beat_[l] = r.bytes[at(r, r.beats, base + l)];
  port_[RDATA].set_bytes(beat_.data(), port_.data_bytes);
  port_.set(RID, r.id), port_.set(RRESP, r.resp), port_.set(RLAST, r.beats == r.len);
}

void MasterBridge::drive(Tick next_edge) {
  drive_r(next_edge);
  b_offered_ = !responses_.empty() && responses_.front().ready <= next_edge;
  port_.set(BVALID, b_offered_);
  if (b_offered_) port_.set(BID, responses_.front().id), port_.set(BRESP, responses_.front().resp);
  port_.set(ARREADY, reads_.size() < outstanding_);
  port_.set(AWREADY, writes_.size() + responses_.size() < outstanding_);
  port_.set(WREADY, early_w_.size() < 256);  // a burst's worth of data ahead of its address
}

}  // namespace dvp::rtl
