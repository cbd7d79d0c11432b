// SPDX-License-Identifier: MIT
// The C++ kernel builder: writes DV ISA kernels with functions named after the vendor's
// primitives (DataCopy, LoadData, Mmad, Fixpipe, vector ops with repeat parameters, SetFlag /
// WaitFlag, PipeBarrier) and scalar control flow, and produces the same binary image the
// assembler would for the same instructions. The kernel library is written with it, so its
// tiling can be computed from the core's configuration when the kernel is built.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "assembler.hpp"
#include "common/error.hpp"
#include "isa.hpp"

namespace dvp::aicore {

struct Reg {
  std::uint8_t n = 0;
};
struct Label {
  int id = -1;
};
// Where a DataCopy reads or writes.
enum class Pos : std::uint8_t { GM, L1, L0A, L0B, UB };

class KernelBuilder {
 public:
  KernelBuilder();

  // --- registers and constants ---------------------------------------------------------------
  Reg reg();  // a free register (x1..x31); throws when none is left
  void release(Reg r);
  static Reg zero() { return Reg{0}; }
  void Li(Reg d, std::int64_t v);  // li, or li + lih when it does not fit 32 bits
  Reg Const(std::int64_t v);       // a new register holding v

  // --- scalar ----------------------------------------------------------------------------------
  void Op(const char* mnemonic, Reg d, Reg a, Reg b);              // add, sub, mul, divu, and, ... (R3)
  void OpI(const char* mnemonic, Reg d, Reg a, std::int32_t imm);  // addi, shli, ... (RI)
  void Add(Reg d, Reg a, Reg b) { Op("add", d, a, b); }
  void Mul(Reg d, Reg a, Reg b) { Op("mul", d, a, b); }
  void Addi(Reg d, Reg a, std::int32_t i) { OpI("addi", d, a, i); }
  void LoadGm(Reg d, Reg base, std::int32_t off);   // ld.d through the dCache
  void StoreGm(Reg v, Reg base, std::int32_t off);  // st.d
  void LoadUb(Reg d, Reg base, std::int32_t off);   // ld.ub: 64 bits from UB
  void StoreUb(Reg v, Reg base, std::int32_t off);  // st.ub: 64 bits to UB
  void GetSpr(Reg d, Spr s);                        // mfspr
  void SetSpr(Spr s, Reg v);                        // mtspr
  void SetMaskCount(Reg n);                         // continuous mask: first n elements
  Label NewLabel();
  void Bind(Label l);
  void Branch(const char* mnemonic, Reg a, Reg b, Label l);  // beq, bne, blt, bge, bltu, bgeu
  void Jump(Label l);
  // Runs `body` `count` times (count held in a register, which the loop counts down; a count
  // of 0 skips the body).
  template <typename Body>
  void Loop(Reg count, Body body) {
    Label top = NewLabel(), out = NewLabel();
    Branch("beq", count, zero(), out);
    Bind(top);
    body();
    Addi(count, count, -1);
    Branch("bne", count, zero(), top);
    Bind(out);
  }

  // Work shared out by block id: runs `body` for item = first, first + step, ... while
  // item < end (unsigned); `item` advances by `step` after each body.
  template <typename Body>
  void RoundRobin(Reg item, Reg end, Reg step, Body body) {
    Label top = NewLabel(), out = NewLabel();
    Bind(top);
    Branch("bgeu", item, end, out);
    body();
    Add(item, item, step);
    Jump(top);
    Bind(out);
  }
  // Work shared out by block id two items a turn, one per UB buffer, so one item's copies in
  // overlap the other's copies out: body(item, 0) for item = blockid, then body(item + blockdim,
  // 1) when that is under `end`; item advances by 2 x blockdim. Both buffers start free (the
  // MTE3 -> MTE2 flag of each set) and are waited for at the end. `dim`, `step`, `next`: scratch.
  template <typename Body>
  void RoundRobinTwoBuffers(Reg item, Reg end, Reg dim, Reg step, Reg next, Body body) {
    GetSpr(item, Spr::BlockId);
    GetSpr(dim, Spr::BlockDim);
    Add(step, dim, dim);
    for (int b = 0; b < 2; ++b) SetFlag(Pipe::MTE3, Pipe::MTE2, b);
    RoundRobin(item, end, step, [&] {
      body(item, 0);
      Label none = NewLabel();
      Add(next, item, dim);
      Branch("bgeu", next, end, none);
      body(next, 1);
      Bind(none);
    });
    for (int b = 0; b < 2; ++b) WaitFlag(Pipe::MTE3, Pipe::MTE2, b);
  }

  // Work shared out by block id, each item copied in (in(item, buf)), then worked on and copied
  // out (out(item, buf)), on `buffers` UB buffers (1 or 2; the flags between in and out are the
  // caller's). With two, a core's items alternate between them and the next item's in is issued
  // before this one's out: the scalar unit issues in order into pipe queues, so a copy in issued
  // after an item's work would wait for that work to be queued, not overlap it. With one, each
  // item's in follows the out before it. `dim`, `step`, `next`: scratch.
  template <typename In, typename Out>
  void RoundRobinPipelined(int buffers, Reg item, Reg end, Reg dim, Reg step, Reg next, In in, Out out) {
    if (buffers != 1 && buffers != 2) throw Error("RoundRobinPipelined: 1 or 2 buffers");
    GetSpr(item, Spr::BlockId);
    GetSpr(dim, Spr::BlockDim);
    if (buffers == 2) Add(step, dim, dim);
    auto if_item = [&](Reg i, auto body) {
      Label none = NewLabel();
      Branch("bgeu", i, end, none);
      body();
      Bind(none);
    };
    if_item(item, [&] { in(item, 0); });
    RoundRobin(item, end, buffers == 2 ? step : dim, [&] {  // item is in buffer 0 (or on its way)
      Add(next, item, dim);
      if (buffers == 2) if_item(next, [&] { in(next, 1); });
      out(item, 0);
      if (buffers == 2) Add(next, item, step);
      if_item(next, [&] { in(next, 0); });
      if (buffers != 2) return;
      Add(next, item, dim);
      if_item(next, [&] { out(next, 1); });
    });
  }

  // --- vendor primitives ----------------------------------------------------------------------
  void DataCopy(Pos dst, Reg dst_addr, Pos src, Reg src_addr, const DataCopyCfg& p);
  void Nd2Nz(DType t, Reg dst_l1, Reg src_gm, const Nd2NzCfg& p, Reg pad = zero());
  void Nd2Nz(DType t, Reg dst_l1, Reg src_gm, Reg cfg, Reg pad = zero());  // configuration computed at run time
  // AIPP: the crop `cfg` (an AippCfg) of the picture at `src_gm` -> f16 in L1, as SPRs aipp_* say.
  void Aipp(Reg dst_l1, Reg src_gm, Reg cfg);
  void LoadData(Pos dst, DType t, Reg dst_addr, Reg src_l1, const Load2dCfg& p, bool transpose = false);
  // img2col: the filter (word 1) fixed, the window of the matrix (word 2) in a register.
  void LoadData3D(Pos dst, DType t, Reg dst_addr, Reg src_l1, const Load3dCfg& filter, Reg window);
  void Mmad(DType acc, DType in, Reg c, Reg a, Reg b, const MmadCfg& p);
  void Mmad(DType acc, DType in, Reg c, Reg a, Reg b, Reg cfg);  // configuration computed at run time
  void Fixpipe(Pos dst, DType out, DType acc, Reg dst_addr, Reg src_l0c, const FixpCfg& p, Reg scale = zero(),
               bool relu = false, Round round = Round::None);
  void Fixpipe(Pos dst, DType out, DType acc, Reg dst_addr, Reg src_l0c, Reg cfg, Reg scale = zero(), bool relu = false,
               Round round = Round::None);                               // configuration computed at run time
  void DataCopy(Pos dst, Reg dst_addr, Pos src, Reg src_addr, Reg cfg);  // configuration computed at run time
  // Vector: `op` is the mnemonic without the v (Add, Exp, ...: "add", "exp"); operands as the
  // ISA lists them, the VecCfg last.
  void Vector(const char* op, DType t, std::vector<Reg> operands, const VecCfg& p);
  void Vector(const char* op, DType t, std::vector<Reg> operands, Reg cfg);  // a VecCfg computed at run time
  void Transpose16(Reg d, Reg s);  // vtranspose: 16 x 16 16-bit elements, UB s -> UB d
  void Add(DType t, Reg dst, Reg a, Reg b, const VecCfg& p) { Vector("add", t, {dst, a, b}, p); }
  void Mul(DType t, Reg dst, Reg a, Reg b, const VecCfg& p) { Vector("mul", t, {dst, a, b}, p); }
  void Cast(DType to, DType from, Reg dst, Reg src, const VecCfg& p, Round r = Round::Rint);
  // vcmp: bit i of bits (16 bytes a repeat) = a[i] <c> b[i].
  void Compare(Cmp c, DType t, Reg bits, Reg a, Reg b, const VecCfg& p);
  void SetFlag(Pipe src, Pipe dst, int event);
  void WaitFlag(Pipe src, Pipe dst, int event);
  void PipeBarrier(Pipe p);
  void End();

  // Resolves labels; the builder can be used only once.
  Image Build();
  std::size_t size() const { return code_.size(); }

 private:
  void emit(const Instr& i) { code_.push_back(i); }
  Instr x(const char* mnemonic, std::vector<Reg> regs, DType dt1 = DType::None, DType dt2 = DType::None,
          std::uint8_t mode = 0);
  Reg cfg_reg(std::uint64_t value);  // a scratch register holding a configuration word

  std::vector<Instr> code_;
  std::vector<int> label_pos_;                       // instruction index, -1 while unbound
  std::vector<std::pair<std::size_t, int>> fixups_;  // (instruction, label)
  std::uint32_t used_ = 1;                           // bit mask of allocated registers (x0 always)
  Reg scratch_[2];
  int next_scratch_ = 0;
};

}  // namespace dvp::aicore
