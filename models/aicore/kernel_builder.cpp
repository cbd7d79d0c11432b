// SPDX-License-Identifier: MIT
#include "kernel_builder.hpp"

#include "common/error.hpp"

namespace dvp::aicore {

namespace {
std::uint8_t op(const char* m) {
  auto o = find_opcode(m);
  if (!o) throw Error(std::string("kernel builder: no instruction '") + m + "'");
  return *o;
}
}  // namespace

KernelBuilder::KernelBuilder() {
  // Two scratch registers hold configuration words for the instruction that follows.
  scratch_[0] = reg();
  scratch_[1] = reg();
}

Reg KernelBuilder::reg() {
  for (std::uint8_t r = 1; r < 32; ++r)
    if (!(used_ & (1u << r))) {
      used_ |= 1u << r;
      return Reg{r};
    }
  throw Error("kernel builder: all 31 scalar registers are in use");
}

void KernelBuilder::release(Reg r) { used_ &= ~(1u << r.n); }

void KernelBuilder::Li(Reg d, std::int64_t v) {
  Instr lo;
  lo.op = op("li");
  lo.a = d.n;
  lo.imm = std::int32_t(std::uint32_t(std::uint64_t(v)));
  emit(lo);
  if (v != std::int64_t(std::int32_t(v))) {  // li sign-extends; set the upper half too
    Instr hi;
    hi.op = op("lih");
    hi.a = d.n;
    hi.imm = std::int32_t(std::uint32_t(std::uint64_t(v) >> 32));
    emit(hi);
  }
}

Reg KernelBuilder::Const(std::int64_t v) {
  Reg r = reg();
  Li(r, v);
  return r;
}

Reg KernelBuilder::cfg_reg(std::uint64_t value) {
  Reg r = scratch_[next_scratch_];
  next_scratch_ ^= 1;
  Li(r, std::int64_t(value));
  return r;
}

void KernelBuilder::Op(const char* m, Reg d, Reg a, Reg b) {
  Instr i;
  i.op = op(m);
  if (i.info().format != Format::R3) throw Error(std::string("kernel builder: ") + m + " is not a register op");
  i.a = d.n, i.b = a.n, i.c = b.n;
  emit(i);
}

void KernelBuilder::OpI(const char* m, Reg d, Reg a, std::int32_t imm) {
  Instr i;
  i.op = op(m);
  if (i.info().format != Format::RI) throw Error(std::string("kernel builder: ") + m + " is not an immediate op");
  i.a = d.n, i.b = a.n, i.imm = imm;
  emit(i);
}

void KernelBuilder::LoadGm(Reg d, Reg base, std::int32_t off) {
  Instr i;
  i.op = op("ld.d");
  i.a = d.n, i.b = base.n, i.imm = off;
  emit(i);
}

void KernelBuilder::LoadUb(Reg d, Reg base, std::int32_t off) {
  Instr i;
  i.op = op("ld.ub");
  i.a = d.n, i.b = base.n, i.imm = off;
  emit(i);
}

void KernelBuilder::StoreUb(Reg v, Reg base, std::int32_t off) {
  Instr i;
  i.op = op("st.ub");
  i.c = v.n, i.b = base.n, i.imm = off;
  emit(i);
}

void KernelBuilder::StoreGm(Reg v, Reg base, std::int32_t off) {
  Instr i;
  i.op = op("st.d");
  i.c = v.n, i.b = base.n, i.imm = off;
  emit(i);
}

void KernelBuilder::GetSpr(Reg d, Spr s) {
  Instr i;
  i.op = op("mfspr");
  i.a = d.n, i.imm = std::int32_t(s);
  emit(i);
}

void KernelBuilder::SetSpr(Spr s, Reg v) {
  Instr i;
  i.op = op("mtspr");
  i.b = v.n, i.imm = std::int32_t(s);
  emit(i);
}

void KernelBuilder::SetMaskCount(Reg n) {
  Instr i;
  i.op = op("setmaskn");
  i.b = n.n;
  emit(i);
}

Label KernelBuilder::NewLabel() {
  label_pos_.push_back(-1);
  return Label{int(label_pos_.size() - 1)};
}

void KernelBuilder::Bind(Label l) { label_pos_.at(std::size_t(l.id)) = int(code_.size()); }

void KernelBuilder::Branch(const char* m, Reg a, Reg b, Label l) {
  Instr i;
  i.op = op(m);
  if (i.info().format != Format::Branch) throw Error(std::string("kernel builder: ") + m + " is not a branch");
  i.b = a.n, i.c = b.n;
  fixups_.push_back({code_.size(), l.id});
  emit(i);
}

void KernelBuilder::Jump(Label l) {
  Instr i;
  i.op = op("jmp");
  fixups_.push_back({code_.size(), l.id});
  emit(i);
}

Instr KernelBuilder::x(const char* m, std::vector<Reg> regs, DType dt1, DType dt2, std::uint8_t mode) {
  Instr i;
  i.op = op(m);
  const OpInfo& info = i.info();
  if (regs.size() != info.regs)
    throw Error(std::string("kernel builder: ") + m + " takes " + std::to_string(info.regs) + " registers (" +
                info.operands + ")");
  std::uint8_t* r[5] = {&i.a, &i.b, &i.c, &i.d, &i.e};
  for (std::size_t k = 0; k < regs.size(); ++k) *r[k] = regs[k].n;
  i.dt1 = dt1, i.dt2 = dt2, i.mode = mode;
  return i;
}

void KernelBuilder::DataCopy(Pos dst, Reg d, Pos src, Reg s, const DataCopyCfg& p) {
  DataCopy(dst, d, src, s, cfg_reg(p.pack()));
}

void KernelBuilder::DataCopy(Pos dst, Reg d, Pos src, Reg s, Reg c) {
  const char* m = nullptr;
  if (src == Pos::GM)
    m = dst == Pos::L1    ? "copy.gm2l1"
        : dst == Pos::UB  ? "copy.gm2ub"
        : dst == Pos::L0A ? "copy.gm2l0a"
        : dst == Pos::L0B ? "copy.gm2l0b"
                          : nullptr;
  else if (src == Pos::L1 && dst == Pos::UB)
    m = "copy.l12ub";
  else if (src == Pos::UB)
    m = dst == Pos::GM ? "copy.ub2gm" : dst == Pos::L1 ? "copy.ub2l1" : nullptr;
  if (!m) throw Error("kernel builder: DataCopy has no path between these positions");
  emit(x(m, {d, s, c}));
}

void KernelBuilder::Nd2Nz(DType t, Reg dst, Reg src, const Nd2NzCfg& p, Reg pad) {
  Nd2Nz(t, dst, src, cfg_reg(p.pack()), pad);
}

void KernelBuilder::Nd2Nz(DType t, Reg dst, Reg src, Reg cfg, Reg pad) {
  emit(x("nd2nz.gm2l1", {dst, src, cfg, pad}, t));
}

void KernelBuilder::Aipp(Reg dst, Reg src, Reg cfg) { emit(x("aipp.gm2l1", {dst, src, cfg})); }

void KernelBuilder::LoadData(Pos dst, DType t, Reg d, Reg s, const Load2dCfg& p, bool transpose) {
  if (dst != Pos::L0A && dst != Pos::L0B) throw Error("kernel builder: LoadData goes to L0A or L0B");
  Reg c = cfg_reg(p.pack());
  emit(x(dst == Pos::L0A ? "load2d.l0a" : "load2d.l0b", {d, s, c}, t, DType::None, transpose ? mode::kTranspose : 0));
}

void KernelBuilder::LoadData3D(Pos dst, DType t, Reg d, Reg s, const Load3dCfg& filter, Reg window) {
  if (dst != Pos::L0A && dst != Pos::L0B) throw Error("kernel builder: LoadData3D goes to L0A or L0B");
  Reg c = cfg_reg(filter.pack1());
  emit(x(dst == Pos::L0A ? "load3d.l0a" : "load3d.l0b", {d, s, c, window}, t));
}

void KernelBuilder::Mmad(DType acc, DType in, Reg c, Reg a, Reg b, const MmadCfg& p) {
  Reg cfg = cfg_reg(p.pack());
  emit(x("mmad", {c, a, b, cfg}, acc, in));
}

void KernelBuilder::Mmad(DType acc, DType in, Reg c, Reg a, Reg b, Reg cfg) {
  emit(x("mmad", {c, a, b, cfg}, acc, in));
}

void KernelBuilder::Fixpipe(Pos dst, DType out, DType acc, Reg d, Reg s, const FixpCfg& p, Reg scale, bool relu,
                            Round round) {
  Fixpipe(dst, out, acc, d, s, cfg_reg(p.pack()), scale, relu, round);
}

void KernelBuilder::Fixpipe(Pos dst, DType out, DType acc, Reg d, Reg s, Reg c, Reg scale, bool relu, Round round) {
  if (dst != Pos::GM && dst != Pos::L1 && dst != Pos::UB) throw Error("kernel builder: Fixpipe goes to GM, L1 or UB");
  emit(x(dst == Pos::GM   ? "fixp.l0c2gm"
         : dst == Pos::L1 ? "fixp.l0c2l1"
                          : "fixp.l0c2ub",
         {d, s, c, scale}, out, acc, std::uint8_t(std::uint8_t(round) | (relu ? mode::kRelu : 0))));
}

void KernelBuilder::Vector(const char* o, DType t, std::vector<Reg> operands, const VecCfg& p) {
  const std::string m = std::string("v") + o;
  Reg c = cfg_reg(p.pack());
  operands.push_back(c);
  emit(x(m.c_str(), operands, t));
}

void KernelBuilder::Vector(const char* o, DType t, std::vector<Reg> operands, Reg cfg) {
  const std::string m = std::string("v") + o;
  operands.push_back(cfg);
  emit(x(m.c_str(), operands, t));
}

void KernelBuilder::Transpose16(Reg d, Reg s) { emit(x("vtranspose", {d, s}, DType::F16)); }

void KernelBuilder::Cast(DType to, DType from, Reg d, Reg s, const VecCfg& p, Round r) {
  Reg c = cfg_reg(p.pack());
  emit(x("vconv", {d, s, c}, to, from, std::uint8_t(r)));
}

void KernelBuilder::Compare(Cmp c, DType t, Reg bits, Reg a, Reg b, const VecCfg& p) {
  Reg r = cfg_reg(p.pack());
  emit(x("vcmp", {bits, a, b, r}, t, DType::None, std::uint8_t(unsigned(c) << mode::kCmpShift)));
}

void KernelBuilder::SetFlag(Pipe src, Pipe dst, int event) {
  Instr i;
  i.op = op("setflag");
  i.imm = int(src) | int(dst) << 4 | event << 8;
  emit(i);
}

void KernelBuilder::WaitFlag(Pipe src, Pipe dst, int event) {
  Instr i;
  i.op = op("waitflag");
  i.imm = int(src) | int(dst) << 4 | event << 8;
  emit(i);
}

void KernelBuilder::PipeBarrier(Pipe p) {
  if (p == Pipe::S) throw Error("kernel builder: PipeBarrier on the scalar pipe is not allowed");
  Instr i;
  i.op = op("barrier");
  i.imm = int(p);
  emit(i);
}

void KernelBuilder::End() {
  Instr i;
  i.op = op("end");
  emit(i);
}

Image KernelBuilder::Build() {
  for (auto [at, label] : fixups_) {
    const int target = label_pos_.at(std::size_t(label));
    if (target < 0) throw Error("kernel builder: a branch to a label that was never bound");
    code_[at].imm = target - int(at);
  }
  Image img;
  for (const Instr& i : code_) img.code.push_back(encode(i));
  return img;
}

}  // namespace dvp::aicore
