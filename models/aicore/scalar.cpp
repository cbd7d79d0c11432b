// SPDX-License-Identifier: MIT
// The scalar unit's instructions: one handler per executor kind of the ISA table, chosen by the
// instruction's table entry (no mnemonic is looked at). Each costs scalar_cycles; loads and
// stores add what the dCache takes.
#include <cstring>

#include "aicore.hpp"
#include "common/error.hpp"

namespace dvp::aicore {

namespace {
// The immediate as the instruction reads it (OpInfo::imm).
std::uint64_t immediate(const Instr& in) {
  return in.info().imm == Imm::Unsigned ? std::uint64_t(std::uint32_t(in.imm)) : std::uint64_t(std::int64_t(in.imm));
}
}  // namespace

// Indexed by executor kind; the kinds the scalar unit does not execute are null.
const std::array<AiCore::ScalarUnit, std::size_t(Exec::Count_)> AiCore::kScalarUnits = [] {
  std::array<ScalarUnit, std::size_t(Exec::Count_)> u{};
  u[int(Exec::Nop)] = &AiCore::s_nop;
  u[int(Exec::Alu)] = &AiCore::s_alu;
  u[int(Exec::LoadImm)] = u[int(Exec::LoadImmHigh)] = &AiCore::s_load_imm;
  u[int(Exec::Load)] = &AiCore::s_load;
  u[int(Exec::Store)] = &AiCore::s_store;
  u[int(Exec::UbLoad)] = u[int(Exec::UbStore)] = &AiCore::s_ub_access;
  u[int(Exec::Branch)] = &AiCore::s_branch;
  u[int(Exec::Jump)] = u[int(Exec::JumpLink)] = u[int(Exec::JumpReg)] = &AiCore::s_jump;
  u[int(Exec::Mfspr)] = &AiCore::s_mfspr;
  u[int(Exec::Mtspr)] = &AiCore::s_mtspr;
  u[int(Exec::SetMask)] = &AiCore::s_set_mask;
  return u;
}();

bool AiCore::exec_scalar(const Instr& in, std::uint64_t pc, std::uint64_t& next, Tick& t) {
  t += cfg_.clock.cycles(cfg_.scalar_cycles);
  const ScalarUnit unit = kScalarUnits[std::size_t(in.info().exec)];
  if (!unit) {
    raise(pc, &in, "is not a scalar instruction");
    return false;
  }
  return (this->*unit)(Step{in, pc, next, t});
}

void AiCore::set_reg(unsigned r, std::uint64_t v) {
  if (r) x_[r] = v;  // x0 reads 0 and ignores writes
}

bool AiCore::s_nop(const Step&) { return true; }

bool AiCore::s_alu(const Step& s) {
  const OpInfo& info = s.in.info();
  const std::uint64_t b = info.format == Format::R3 ? x_[s.in.c] : immediate(s.in);
  if (info.divides && b == 0) {
    raise(s.pc, &s.in, "division by zero");
    return false;
  }
  set_reg(s.in.a, info.alu(x_[s.in.b], b));
  return true;
}

bool AiCore::s_load_imm(const Step& s) {
  const std::uint64_t imm = immediate(s.in);
  set_reg(s.in.a, s.in.info().exec == Exec::LoadImm ? imm : (x_[s.in.a] & 0xffffffffull) | (imm << 32));
  return true;
}

bool AiCore::s_load(const Step& s) {
  const OpInfo& info = s.in.info();
  std::uint64_t v;
  if (!dcache(false, x_[s.in.b] + immediate(s.in), info.size, v, s.t, s.pc, s.in)) return false;
  if (info.sign) {
    const unsigned sh = 64 - 8 * info.size;
    v = std::uint64_t(std::int64_t(v << sh) >> sh);
  }
  set_reg(s.in.a, v);
  return true;
}

bool AiCore::s_store(const Step& s) {
  std::uint64_t v = x_[s.in.c];
  return dcache(true, x_[s.in.b] + immediate(s.in), s.in.info().size, v, s.t, s.pc, s.in);
}

bool AiCore::s_ub_access(const Step& s) {
  // The scalar unit's stack in UB (seed 003): 64-bit words, 8-byte aligned.
  const std::uint64_t addr = x_[s.in.b] + immediate(s.in);
  if (addr % 8 || addr + 8 > cfg_.size[kUB]) {
    raise(s.pc, &s.in,
          "UB address " + hex(addr) +
              (addr % 8 ? " is not 8-byte aligned" : " is outside UB (" + std::to_string(cfg_.size[kUB]) + " bytes)"));
    return false;
  }
  if (s.in.info().exec == Exec::UbLoad) {
    std::uint64_t v;
    std::memcpy(&v, buf_[kUB].data() + addr, 8);
    set_reg(s.in.a, v);
  } else {
    std::memcpy(buf_[kUB].data() + addr, &x_[s.in.c], 8);
  }
  return true;
}

bool AiCore::s_branch(const Step& s) {
  if (s.in.info().cond(x_[s.in.b], x_[s.in.c])) s.next = std::uint64_t(std::int64_t(s.pc) + std::int64_t(s.in.imm) * 8);
  return true;
}

bool AiCore::s_jump(const Step& s) {
  const Exec x = s.in.info().exec;
  if (x == Exec::JumpReg) {
    s.next = x_[s.in.b];
    return true;
  }
  if (x == Exec::JumpLink) set_reg(s.in.a, s.pc + 8);
  s.next = std::uint64_t(std::int64_t(s.pc) + std::int64_t(s.in.imm) * 8);
  return true;
}

namespace {
// AIPP's registers, aipp_src .. aipp_var: plain read-write words.
bool aipp_spr(std::int32_t s) { return s >= int(Spr::AippSrc) && s < int(Spr::AippSrc) + int(kAippSprs); }
}  // namespace

bool AiCore::s_mfspr(const Step& s) {
  std::uint64_t r = 0;
  if (aipp_spr(s.in.imm)) {
    set_reg(s.in.a, aipp_[std::size_t(s.in.imm - int(Spr::AippSrc))]);
    return true;
  }
  switch (Spr(s.in.imm)) {
    case Spr::CoreId: r = id_; break;
    case Spr::BlockId: r = launch_.block_id; break;
    case Spr::BlockDim: r = launch_.block_dim; break;
    case Spr::ArgBase: r = launch_.arg_base; break;
    case Spr::Mask0: r = mask_[0]; break;
    case Spr::Mask1: r = mask_[1]; break;
    case Spr::Fmatrix: r = fmatrix_; break;
    case Spr::PadValue: r = padvalue_; break;
    case Spr::Cycle: r = cfg_.clock.to_cycles_floor(s.t - start_time_); break;
    default: break;  // status, ctrl: read 0
  }
  set_reg(s.in.a, r);
  return true;
}

bool AiCore::s_mtspr(const Step& s) {
  const std::uint64_t a = x_[s.in.b];
  if (aipp_spr(s.in.imm)) {
    aipp_[std::size_t(s.in.imm - int(Spr::AippSrc))] = a;
    return true;
  }
  switch (Spr(s.in.imm)) {
    case Spr::Mask0: mask_[0] = a; break;
    case Spr::Mask1: mask_[1] = a; break;
    case Spr::Fmatrix: fmatrix_ = a; break;
    case Spr::PadValue: padvalue_ = a; break;
    case Spr::Ctrl: break;
    default:
      raise(s.pc, &s.in, std::string("special register ") + spr_name(Spr(s.in.imm)) + " is read-only");
      return false;
  }
  return true;
}

bool AiCore::s_set_mask(const Step& s) {
  const std::uint64_t a = x_[s.in.b];
  if (a < 1 || a > 128) {
    raise(s.pc, &s.in, "continuous mask of " + std::to_string(a) + " elements (must be 1..128)");
    return false;
  }
  mask_[0] = a >= 64 ? ~0ull : (1ull << a) - 1;
  mask_[1] = a <= 64 ? 0 : a == 128 ? ~0ull : (1ull << (a - 64)) - 1;
  return true;
}

}  // namespace dvp::aicore
