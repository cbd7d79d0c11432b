// SPDX-License-Identifier: MIT
#include "arch_timer.hpp"

#include <cmath>

#include <sysc/kernel/sc_dynamic_processes.h>

namespace dvp::cpu {

namespace {
constexpr std::uint64_t kEnable = 1, kImask = 2, kIstatus = 4;
}

ArchTimer::ArchTimer(const Clock& counter, unsigned cpu, irq::IrqController& irq)
    : counter_(counter), cpu_(cpu), irq_(irq) {
  for (unsigned k : {kPhys, kVirt}) {
    sc_core::sc_spawn_options opt;
    opt.spawn_method();
    opt.dont_initialize();
    opt.set_sensitivity(&timers_[k].due);
    sc_core::sc_spawn([this, k] { update(k, now_tick()); }, k == kPhys ? "cntp" : "cntv", &opt);
  }
}

std::optional<std::pair<unsigned, ArchTimer::Field>> ArchTimer::decode(const SysReg& r) {
  // CNTP_* are op0 3, op1 3, CRn 14, CRm 2; CNTV_* CRm 3; op2 0 TVAL, 1 CTL, 2 CVAL.
  if (r.op0 != 3 || r.op1 != 3 || r.crn != 14 || (r.crm != 2 && r.crm != 3) || r.op2 > 2) return std::nullopt;
  static constexpr Field kByOp2[] = {kTval, kCtl, kCval};
  return std::make_pair(r.crm == 2 ? unsigned(kPhys) : unsigned(kVirt), kByOp2[r.op2]);
}

std::optional<std::uint64_t> ArchTimer::read(const SysReg& r, Tick t) const {
  if (r.op0 == 3 && r.op1 == 3 && r.crn == 14 && r.crm == 0) {
    if (r.op2 == 0) return std::uint64_t(std::llround(1e12 / double(counter_.period())));  // CNTFRQ_EL0, Hz
    if (r.op2 == 1 || r.op2 == 2) return count_at(t);                                      // CNTPCT, CNTVCT
    return std::nullopt;
  }
  const auto f = decode(r);
  if (!f) return std::nullopt;
  const Timer& tm = timers_[f->first];
  switch (f->second) {
    case kCtl: return (tm.ctl & (kEnable | kImask)) | (condition(f->first, t) ? kIstatus : 0);
    case kCval: return tm.cval;
    case kTval: return std::uint64_t(std::uint32_t(tm.cval - count_at(t)));  // low 32 bits of CVAL - count
  }
  return std::nullopt;
}

bool ArchTimer::write(const SysReg& r, std::uint64_t v, Tick t) {
  const auto f = decode(r);
  if (!f) return false;
  Timer& tm = timers_[f->first];
  switch (f->second) {
    case kCtl: tm.ctl = v & (kEnable | kImask); break;
    case kCval: tm.cval = v; break;
    case kTval: tm.cval = count_at(t) + std::uint64_t(std::int64_t(std::int32_t(std::uint32_t(v)))); break;
  }
  update(f->first, t);
  return true;
}

bool ArchTimer::condition(unsigned k, Tick t) const {
  return (timers_[k].ctl & kEnable) && count_at(t) >= timers_[k].cval;
}

Tick ArchTimer::next_interrupt() const {
  Tick next = kTickMax;
  for (const Timer& tm : timers_) {
    if ((tm.ctl & (kEnable | kImask)) != kEnable) continue;
    const unsigned __int128 at = static_cast<unsigned __int128>(tm.cval) * counter_.period();
    if (at < next) next = Tick(at);
  }
  return next;
}

void ArchTimer::sync(Tick t) {
  for (unsigned k : {kPhys, kVirt})
    if (timers_[k].ctl & kEnable) update(k, t);
}

void ArchTimer::update(unsigned k, Tick t) {
  Timer& tm = timers_[k];
  // The core only looks at its interrupts between quanta, after its local time `t`: driving
  // the line now, not at t, is not observable.
  irq_.set_private_line(cpu_, irq::IrqController::kLines + k, condition(k, t) && !(tm.ctl & kImask));
  tm.due.cancel();
  if (!(tm.ctl & kEnable) || count_at(t) >= tm.cval) return;
  // The first instant the count reaches CVAL; past ~2^64 ps it never comes.
  const unsigned __int128 at = static_cast<unsigned __int128>(tm.cval) * counter_.period();
  if (at > kTickMax) return;
  tm.due.notify(to_sc(Tick(at) - now_tick()));
}

}  // namespace dvp::cpu
