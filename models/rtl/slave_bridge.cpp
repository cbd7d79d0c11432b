// SPDX-License-Identifier: MIT
#include "slave_bridge.hpp"

#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#include "common/payload.hpp"

namespace dvp::rtl {

SlaveBridge::SlaveBridge(const AxiPort& port, AxiChecker& checker, PortStats& stats, const Clock& clock,
                         unsigned outstanding)
    : port_(port), checker_(checker), stats_(stats), clock_(clock), outstanding_(outstanding) {
  beat_.resize(port.data_bytes);
  strb_.resize((port.data_bytes + 7) / 8);
  idle();
  port_.set(RREADY, 1), port_.set(BREADY, 1);
}

void SlaveBridge::idle() {
  for (Sig s : {AWVALID, WVALID, ARVALID}) port_.set(s, 0);
}

bool SlaveBridge::begin(tlm::tlm_generic_payload& p, std::uint64_t addr, Tick t) {
  write_ = p.is_write(), addr_ = addr, len_ = p.get_data_length();
  data_ = p.get_data_ptr();
  if (is_timing_only(p) || !data_) scratch_.assign(len_, 0), data_ = scratch_.data();
  be_ = p.get_byte_enable_ptr(), be_len_ = be_ ? p.get_byte_enable_length() : 0;
  if (!be_len_) be_ = nullptr;
  status_ = tlm::TLM_OK_RESPONSE;
  bursts_.clear(), waiting_.clear();
  next_a_ = next_w_ = answered_ = 0, w_beat_ = 0;
  const unsigned bus = port_.data_bytes;
  if (p.get_streaming_width() < len_) return status_ = tlm::TLM_BURST_ERROR_RESPONSE, false;
  // Without WSTRB every byte of a beat is written: only whole beats can go.
  if (write_ && !port_.has(WSTRB) && (be_ || addr % bus || len_ % bus))
    return status_ = tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE, false;
  // IDs the narrower of AWID / ARID can carry (the slave echoes what it got).
  unsigned id_bits = 0;
  for (Sig s : {AWID, ARID})
    if (port_.has(s)) id_bits = id_bits ? std::min(id_bits, port_[s].bits()) : port_[s].bits();
  const std::uint64_t id_span = std::uint64_t(1) << std::min(id_bits, 16u);
  for (std::uint64_t a = addr & ~std::uint64_t(bus - 1), end = addr + len_; a < end;) {
    const std::uint64_t want = (end - a + bus - 1) / bus, page = (4096 - a % 4096) / bus;
    const auto beats = unsigned(std::min<std::uint64_t>({want, page, port_.max_beats()}));
    bursts_.push_back(Burst{a, beats, unsigned(next_id_++ % id_span)});
    a += std::uint64_t(beats) * bus;
  }
  for (Burst& b : bursts_) b.issued = t;
  drive_address(), drive_write();
  return true;
}

void SlaveBridge::lanes(const Burst& b, unsigned k, unsigned& lo, unsigned& hi, std::int64_t& off) const {
  const std::uint64_t beat = b.addr + std::uint64_t(k) * port_.data_bytes;
  lo = unsigned(std::max(beat, addr_) - beat);
  hi = unsigned(std::min(beat + port_.data_bytes, addr_ + len_) - beat);
  off = std::int64_t(beat) - std::int64_t(addr_);
}

bool SlaveBridge::enabled(std::int64_t i) const { return !be_ || be_[std::size_t(i) % be_len_] == 0xff; }

// Responses first: a response at the edge its address or last data is taken on breaks AXI4
// A3.3.1 (the slave must see them first), and is caught as one to nothing outstanding.
void SlaveBridge::sample(Tick edge) {
  if (port_.get(RVALID)) take_read_beat(edge);
  if (port_.get(BVALID)) take_write_response(edge);
  if (a_offered_ && port_.get(write_ ? AWREADY : ARREADY)) {
    bursts_[next_a_].issued = edge;
    waiting_[bursts_[next_a_].id].push_back(unsigned(next_a_));
    ++next_a_, a_offered_ = false;
  }
  if (w_offered_ && port_.get(WREADY)) {
    ++stats_.beats, stats_.bytes += w_strobed_, w_offered_ = false;
    ++bursts_[next_w_].done;
    if (++w_beat_ == bursts_[next_w_].beats) ++next_w_, w_beat_ = 0;
  }
}

// The oldest burst outstanding on the ID the slave answers with; a violation when none is.
SlaveBridge::Burst* SlaveBridge::pop_outstanding(std::map<std::uint32_t, std::deque<unsigned>>& q, Sig id_sig,
                                                 Tick edge) {
  const auto id = std::uint32_t(port_.get(id_sig));
  auto it = q.find(id);
  if (it == q.end() || it->second.empty() || write_ != (id_sig == BID)) {
    checker_.violation(edge, id_sig, "response to ID " + std::to_string(id) + ", which has no burst outstanding");
    return nullptr;
  }
  return &bursts_[it->second.front()];
}

void SlaveBridge::take_read_beat(Tick edge) {
  Burst* b = pop_outstanding(waiting_, RID, edge);
  if (!b) return;
  unsigned lo, hi;
  std::int64_t off;
  lanes(*b, b->done, lo, hi, off);
  port_[RDATA].get_bytes(beat_.data(), port_.data_bytes);
  for (unsigned l = lo; l < hi; ++l)
    if (enabled(off + l)) data_[off + l] = beat_[l];
  ++stats_.beats, stats_.bytes += hi - lo;
  b->resp = std::max(b->resp, unsigned(port_.get(RRESP)));
  const bool last = ++b->done == b->beats;
  if (port_.has(RLAST) && bool(port_.get(RLAST)) != last)
    return checker_.violation(edge, RLAST,
                              last ? "RLAST low on the burst's last beat" : "RLAST high before the burst's last beat");
  if (last) waiting_[b->id].pop_front(), answered(*b, b->resp, edge);
}

void SlaveBridge::take_write_response(Tick edge) {
  Burst* b = pop_outstanding(waiting_, BID, edge);
  if (!b) return;
  if (b->done < b->beats)
    return checker_.violation(edge, BVALID, "write response before the burst's last data beat (AXI4 A3.3.1)");
  waiting_[b->id].pop_front();
  answered(*b, unsigned(port_.get(BRESP)), edge);
}

void SlaveBridge::answered(Burst& b, unsigned resp, Tick edge) {
  b.answered = true, ++answered_;
  ++(write_ ? stats_.writes : stats_.reads);
  stats_.burst_done(clock_.to_cycles_floor(edge - b.issued));
  if (resp >= kSlvErr) {
    ++stats_.errors;
    status_ = resp == kDecErr ? tlm::TLM_ADDRESS_ERROR_RESPONSE : tlm::TLM_GENERIC_ERROR_RESPONSE;
  }
}

void SlaveBridge::drive(Tick) {
  drive_address();
  drive_write();
}

void SlaveBridge::drive_address() {
  const Sig valid = write_ ? AWVALID : ARVALID;
  const bool room = next_a_ - answered_ < outstanding_;
  a_offered_ = next_a_ < bursts_.size() && room;
  port_.set(valid, a_offered_);
  port_.set(write_ ? ARVALID : AWVALID, 0);
  if (!a_offered_) return;
  const Burst& b = bursts_[next_a_];
  const Sig base = write_ ? AWADDR : ARADDR;  // AxADDR, AxID, AxLEN, AxSIZE, AxBURST, AxPROT in order
  port_.set(base, b.addr);
  port_.set(Sig(base + 1), b.id);
  port_.set(Sig(base + 2), b.beats - 1);
  port_.set(Sig(base + 3), port_.size_log2);
  port_.set(Sig(base + 4), kIncr);
  port_.set(Sig(base + 5), 0);
}

// W beats go in burst order as soon as the burst's address is offered: AXI forbids waiting for
// AWREADY before WVALID (a slave may wait for WVALID first).
void SlaveBridge::drive_write() {
  w_offered_ = write_ && next_w_ < bursts_.size() && next_w_ <= next_a_ && (next_w_ < next_a_ || a_offered_);
  port_.set(WVALID, w_offered_);
  if (!w_offered_) return;
  const Burst& b = bursts_[next_w_];
  unsigned lo, hi;
  std::int64_t off;
  lanes(b, w_beat_, lo, hi, off);
  std::fill(beat_.begin(), beat_.end(), 0);
  std::fill(strb_.begin(), strb_.end(), 0);
  w_strobed_ = 0;
  for (unsigned l = lo; l < hi; ++l)
    if (enabled(off + l)) beat_[l] = data_[off + l], strb_[l / 8] |= std::uint8_t(1u << (l % 8)), ++w_strobed_;
  port_[WDATA].set_bytes(beat_.data(), port_.data_bytes);
  if (port_.has(WSTRB)) port_[WSTRB].set_bytes(strb_.data(), unsigned(strb_.size()));
  port_.set(WLAST, w_beat_ + 1 == b.beats);
}

std::string SlaveBridge::waiting_on() const {
  const char* ch = next_a_ < bursts_.size()             ? (write_ ? "AWREADY" : "ARREADY")
                   : write_ && next_w_ < bursts_.size() ? "WREADY"
                                                        : (write_ ? "BVALID" : "RVALID");
  return std::string(write_ ? "a write" : "a read") + " of " + std::to_string(len_) + " B at " + hex(addr_) +
         ", waiting for " + ch + " (" + std::to_string(answered_) + " of " + std::to_string(bursts_.size()) +
         " bursts answered)";
}

}  // namespace dvp::rtl
