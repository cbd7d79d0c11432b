// SPDX-License-Identifier: MIT
// The DV ISA's instruction table: one entry per instruction, append only (an opcode is its
// index). Each line is built by the helper of its kind, which fills the format, the executor
// and the cost; the doc string is docs/isa.md's.
#include "alu.hpp"
#include "isa.hpp"
#include "vector_ops.hpp"

namespace dvp::aicore {

namespace {

using F = Format;
constexpr std::uint8_t R = kSufRound, L = kSufRelu, T = kSufTranspose, C = kSufCmp;

OpInfo scalar(const char* m, Format f, Exec x, const char* operands, const char* doc, Imm imm = Imm::None) {
  OpInfo o{m, Pipe::S, f, 0, 0, 0, operands, doc, x, Cost::Scalar};
  o.imm = imm;
  return o;
}
OpInfo alu3(const char* m, AluFn fn, const char* doc, bool divides = false) {
  OpInfo o = scalar(m, F::R3, Exec::Alu, "rd, rs1, rs2", doc);
  o.alu = fn;
  o.divides = divides;
  return o;
}
OpInfo alui(const char* m, AluFn fn, Imm imm, const char* doc) {
  OpInfo o = scalar(m, F::RI, Exec::Alu, "rd, rs1, imm", doc, imm);
  o.alu = fn;
  return o;
}
OpInfo load(const char* m, unsigned size, bool sign, const char* doc) {
  OpInfo o = scalar(m, F::Load, Exec::Load, "rd, imm(rs1)", doc, Imm::Signed);
  o.size = std::uint8_t(size);
  o.sign = sign;
  return o;
}
OpInfo store(const char* m, unsigned size, const char* doc) {
  OpInfo o = scalar(m, F::Store, Exec::Store, "rs2, imm(rs1)", doc, Imm::Signed);
  o.size = std::uint8_t(size);
  return o;
}
OpInfo branch(const char* m, CondFn cond, const char* doc) {
  OpInfo o = scalar(m, F::Branch, Exec::Branch, "rs1, rs2, label", doc, Imm::Signed);
  o.cond = cond;
  return o;
}
OpInfo sync(const char* m, Format f, Exec x, const char* operands, const char* doc) {
  OpInfo o{m, Pipe::S, f, 0, 0, 0, operands, doc, x, Cost::Sync};
  return o;
}
// An issued instruction: `regs` register operands, `dtypes` type suffixes, `suf` other suffixes.
OpInfo issued(const char* m, Pipe p, Exec x, Cost c, unsigned regs, unsigned dtypes, std::uint8_t suf,
              const char* operands, const char* doc, Buffer src = kGm, Buffer dst = kGm) {
  OpInfo o{m, p, F::X, std::uint8_t(regs), std::uint8_t(dtypes), suf, operands, doc, x, c};
  o.src = src;
  o.dst = dst;
  return o;
}
OpInfo copy(const char* m, Pipe p, Buffer src, Buffer dst, const char* doc) {
  return issued(m, p, Exec::Copy, Cost::Transfer, 3, 0, 0, "xdst, xsrc, xcfg", doc, src, dst);
}
OpInfo vector(const char* m, const VecOp& v, unsigned regs, const char* operands, const char* doc,
              Cost c = Cost::Vector, unsigned dtypes = 1, std::uint8_t suf = 0) {
  OpInfo o = issued(m, Pipe::V, Exec::Vector, c, regs, dtypes, suf, operands, doc);
  o.vec = &v;
  return o;
}
constexpr const char* kBin = "xdst, xsrc0, xsrc1, xcfg";
constexpr const char* kScal = "xdst, xsrc, xscalar, xcfg";
constexpr const char* kUn = "xdst, xsrc, xcfg";
constexpr const char* kFix = "xdst, xsrc, xcfg, xscale";
constexpr Cost kHeavy = Cost::VectorComplex;

// Append only: an opcode is its index here.
std::vector<OpInfo> build_table() {  // NOLINT(readability-function-size): the table itself
  return {
      // --- scalar unit (S) ---------------------------------------------------------------
      scalar("nop", F::None, Exec::Nop, "", "no operation"),
      scalar("end", F::None, Exec::End, "",
             "end of kernel: the core stops issuing, waits until every pipe has drained, and reports completion"),
      alu3("add", alu::add, "rd = rs1 + rs2"),
      alu3("sub", alu::sub, "rd = rs1 - rs2"),
      alu3("mul", alu::mul, "rd = rs1 * rs2 (low 64 bits)"),
      alu3("div", alu::div, "rd = rs1 / rs2, signed, rounded toward zero; division by zero stops the core", true),
      alu3("divu", alu::divu, "rd = rs1 / rs2, unsigned; division by zero stops the core", true),
      alu3("rem", alu::rem, "rd = rs1 % rs2, signed; division by zero stops the core", true),
      alu3("and", alu::and_, "rd = rs1 & rs2"),
      alu3("or", alu::or_, "rd = rs1 | rs2"),
      alu3("xor", alu::xor_, "rd = rs1 ^ rs2"),
      alu3("shl", alu::shl, "rd = rs1 << (rs2 & 63)"),
      alu3("shr", alu::shr, "rd = rs1 >> (rs2 & 63), logical"),
      alu3("sra", alu::sra, "rd = rs1 >> (rs2 & 63), arithmetic"),
      alu3("slt", alu::slt, "rd = (rs1 < rs2) signed ? 1 : 0"),
      alu3("sltu", alu::sltu, "rd = (rs1 < rs2) unsigned ? 1 : 0"),
      alu3("min", alu::min, "rd = signed minimum of rs1, rs2"),
      alu3("max", alu::max, "rd = signed maximum of rs1, rs2"),
      alui("addi", alu::add, Imm::Signed, "rd = rs1 + sext(imm)"),
      alui("muli", alu::mul, Imm::Signed, "rd = rs1 * sext(imm)"),
      alui("andi", alu::and_, Imm::Signed, "rd = rs1 & sext(imm)"),
      alui("ori", alu::or_, Imm::Unsigned, "rd = rs1 | zext(imm)"),
      alui("xori", alu::xor_, Imm::Unsigned, "rd = rs1 ^ zext(imm)"),
      alui("shli", alu::shl, Imm::Shift, "rd = rs1 << (imm & 63)"),
      alui("shri", alu::shr, Imm::Shift, "rd = rs1 >> (imm & 63), logical"),
      alui("srai", alu::sra, Imm::Shift, "rd = rs1 >> (imm & 63), arithmetic"),
      alui("slti", alu::slt, Imm::Signed, "rd = (rs1 < sext(imm)) signed ? 1 : 0"),
      scalar("li", F::LI, Exec::LoadImm, "rd, imm", "rd = sext(imm32)", Imm::Signed),
      scalar("lih", F::LI, Exec::LoadImmHigh, "rd, imm", "rd[63:32] = imm32; rd[31:0] unchanged", Imm::Unsigned),
      load("ld.b", 1, true, "rd = sext(8-bit load from GM at rs1 + sext(imm)), through the dCache"),
      load("ld.bu", 1, false, "rd = zext(8-bit load)"),
      load("ld.h", 2, true, "rd = sext(16-bit load); the address must be 2-byte aligned"),
      load("ld.hu", 2, false, "rd = zext(16-bit load)"),
      load("ld.w", 4, true, "rd = sext(32-bit load); 4-byte aligned"),
      load("ld.wu", 4, false, "rd = zext(32-bit load)"),
      load("ld.d", 8, false, "rd = 64-bit load; 8-byte aligned"),
      store("st.b", 1, "store the low 8 bits of rs2 to GM at rs1 + sext(imm), through the dCache"),
      store("st.h", 2, "store 16 bits; 2-byte aligned"),
      store("st.w", 4, "store 32 bits; 4-byte aligned"),
      store("st.d", 8, "store 64 bits; 8-byte aligned"),
      branch("beq", alu::eq, "branch if rs1 == rs2"),
      branch("bne", alu::ne, "branch if rs1 != rs2"),
      branch("blt", alu::lt, "branch if rs1 < rs2, signed"),
      branch("bge", alu::ge, "branch if rs1 >= rs2, signed"),
      branch("bltu", alu::ltu, "branch if rs1 < rs2, unsigned"),
      branch("bgeu", alu::geu, "branch if rs1 >= rs2, unsigned"),
      scalar("jmp", F::Jump, Exec::Jump, "label", "jump", Imm::Signed),
      scalar("jal", F::JumpLink, Exec::JumpLink, "rd, label", "rd = address of the next instruction; jump",
             Imm::Signed),
      scalar("jr", F::R1, Exec::JumpReg, "rs1", "jump to the address in rs1 (must be in the kernel image)"),
      scalar("mfspr", F::Mfspr, Exec::Mfspr, "rd, spr", "rd = special register"),
      scalar("mtspr", F::Mtspr, Exec::Mtspr, "spr, rs1", "special register = rs1 (read-only ones are an error)"),
      scalar("setmaskn", F::R1, Exec::SetMask, "rs1",
             "continuous vector mask: the first rs1 elements of a repeat on (mask0/mask1), the rest off; rs1 in 1..128 "
             "(for an 8-bit type, 2*rs1 elements)"),
      // --- synchronisation ------------------------------------------------------------------
      sync("setflag", F::Flag, Exec::SetFlag, "src_pipe, dst_pipe, event",
           "issued into src_pipe's queue: once every earlier instruction of src_pipe has finished, sets flag "
           "(src_pipe, dst_pipe, event); event 0..7. Setting a flag that is already set is an error"),
      sync("waitflag", F::Flag, Exec::WaitFlag, "src_pipe, dst_pipe, event",
           "issued into dst_pipe's queue: blocks dst_pipe until flag (src_pipe, dst_pipe, event) is set, then clears "
           "it"),
      sync("barrier", F::Barrier, Exec::Barrier, "pipe",
           "issued into pipe's queue: later instructions of that pipe start only after all earlier ones have finished. "
           "barrier s is an error"),
      // --- MTE2: GM -> local buffers ----------------------------------------------------------
      copy("copy.gm2l1", Pipe::MTE2, kGm, kL1, "DataCopy GM -> L1; xcfg is a DataCopyCfg"),
      copy("copy.gm2ub", Pipe::MTE2, kGm, kUB, "DataCopy GM -> UB; xcfg is a DataCopyCfg"),
      copy("copy.gm2l0a", Pipe::MTE2, kGm, kL0A, "DataCopy GM -> L0A; xcfg is a DataCopyCfg"),
      copy("copy.gm2l0b", Pipe::MTE2, kGm, kL0B, "DataCopy GM -> L0B; xcfg is a DataCopyCfg"),
      issued("nd2nz.gm2l1", Pipe::MTE2, Exec::Nd2Nz, Cost::Transfer, 4, 1, 0, "xdst, xsrc, xcfg, xpad",
             "ND matrix in GM -> Nz fractals in L1 (xcfg is an Nd2NzCfg); rows and columns beyond the matrix are "
             "filled with the low dtype bits of xpad",
             kGm, kL1),
      // --- MTE2's image preprocessing (AIPP) -----------------------------------------------------
      // Appended at the end of the table (an opcode is its index): see the last entry.
      // --- MTE1: L1 -> L0A / L0B / UB -----------------------------------------------------------
      issued("load2d.l0a", Pipe::MTE1, Exec::Load2d, Cost::Transfer, 3, 1, T, "xdst, xsrc, xcfg",
             "moves fractals L1 -> L0A (xcfg is a Load2dCfg); .t transposes each fractal", kL1, kL0A),
      issued("load2d.l0b", Pipe::MTE1, Exec::Load2d, Cost::Transfer, 3, 1, T, "xdst, xsrc, xcfg",
             "moves fractals L1 -> L0B (xcfg is a Load2dCfg); .t transposes each fractal", kL1, kL0B),
      issued("load3d.l0a", Pipe::MTE1, Exec::Load3d, Cost::Transfer, 4, 1, 0, "xdst, xsrc, xcfg1, xcfg2",
             "img2col of the feature map in L1 (shape and padding in SPR fmatrix, pad value in padvalue) -> L0A; "
             "xcfg1/xcfg2 are a Load3dCfg",
             kL1, kL0A),
      issued("load3d.l0b", Pipe::MTE1, Exec::Load3d, Cost::Transfer, 4, 1, 0, "xdst, xsrc, xcfg1, xcfg2",
             "img2col -> L0B, as load3d.l0a", kL1, kL0B),
      copy("copy.l12ub", Pipe::MTE1, kL1, kUB, "DataCopy L1 -> UB; xcfg is a DataCopyCfg"),
      // --- MTE3: UB -> GM / L1 ------------------------------------------------------------------
      copy("copy.ub2gm", Pipe::MTE3, kUB, kGm, "DataCopy UB -> GM; xcfg is a DataCopyCfg"),
      copy("copy.ub2l1", Pipe::MTE3, kUB, kL1, "DataCopy UB -> L1; xcfg is a DataCopyCfg"),
      // --- M: cube --------------------------------------------------------------------------------
      issued("mmad", Pipe::M, Exec::Mmad, Cost::Cube, 4, 2, 0, "xc, xa, xb, xcfg",
             "C (L0C, Nz, .dt1 = accumulator type) = or += A (L0A) x B (L0B) (.dt2 = input type); xcfg is an MmadCfg. "
             "Pairs: f32.f16, f32.bf16, s32.s8, f32.f32"),
      // --- FIX: L0C -> GM / L1 / UB ---------------------------------------------------------------
      issued("fixp.l0c2gm", Pipe::FIX, Exec::Fixp, Cost::Fixpipe, 4, 2, L | R, kFix,
             "L0C (Nz, .dt2) -> GM (ND rows, .dt1) with conversion; s32 -> s8/f16 multiply by the f32 in xscale first; "
             ".relu clamps negatives to 0; xcfg is a FixpCfg",
             kL0C, kGm),
      issued("fixp.l0c2l1", Pipe::FIX, Exec::Fixp, Cost::Fixpipe, 4, 2, L | R, kFix, "as fixp.l0c2gm, to L1", kL0C,
             kL1),
      issued("fixp.l0c2ub", Pipe::FIX, Exec::Fixp, Cost::Fixpipe, 4, 2, L | R, kFix,
             "as fixp.l0c2gm, to UB (the 310 / 910 path for epilogues on the vector unit: bias, activations)", kL0C,
             kUB),
      // --- V: vector, on UB -------------------------------------------------------------------------
      vector("vadd", vec::add, 4, kBin, "dst = src0 + src1 per element; xcfg is a VecCfg"),
      vector("vsub", vec::sub, 4, kBin, "dst = src0 - src1"),
      vector("vmul", vec::mul, 4, kBin, "dst = src0 * src1"),
      vector("vdiv", vec::div, 4, kBin, "dst = src0 / src1 (floating types)", kHeavy),
      vector("vmax", vec::max, 4, kBin, "dst = max(src0, src1)"),
      vector("vmin", vec::min, 4, kBin, "dst = min(src0, src1)"),
      vector("vand", vec::and_, 4, kBin, "dst = src0 & src1 (integer types)"),
      vector("vor", vec::or_, 4, kBin, "dst = src0 | src1 (integer types)"),
      vector("vadds", vec::adds, 4, kScal,
             "dst = src + scalar; the scalar is the low dtype bits of xscalar (src0 strides apply to src)"),
      vector("vmuls", vec::muls, 4, kScal, "dst = src * scalar"),
      vector("vmaxs", vec::maxs, 4, kScal, "dst = max(src, scalar)"),
      vector("vmins", vec::mins, 4, kScal, "dst = min(src, scalar)"),
      vector("vabs", vec::abs, 3, kUn, "dst = |src|"),
      vector("vexp", vec::exp, 3, kUn, "dst = e^src (floating types)", kHeavy),
      vector("vln", vec::ln, 3, kUn, "dst = ln(src) (floating types)", kHeavy),
      vector("vsqrt", vec::sqrt, 3, kUn, "dst = sqrt(src)", kHeavy),
      vector("vrsqrt", vec::rsqrt, 3, kUn, "dst = 1 / sqrt(src)", kHeavy),
      vector("vrec", vec::rec, 3, kUn, "dst = 1 / src", kHeavy),
      vector("vrelu", vec::relu, 3, kUn, "dst = max(src, 0)"),
      vector("vlrelu", vec::lrelu, 4, "xdst, xsrc, xalpha, xcfg", "dst = src >= 0 ? src : src * alpha"),
      vector("vcopy", vec::copy, 3, kUn, "dst = src (masked, strided copy)"),
      vector("vconv", vec::conv, 3, kUn,
             "dst (.dt1) = src (.dt2) converted with the rounding suffix (.rint .floor .ceil .round .trunc .odd); "
             "integers saturate. A repeat covers 256 bytes of the wider type",
             Cost::Vector, 2, R),
      vector("vcmp", vec::cmp, 4, kBin,
             "bit i of dst (UB, 16 bytes per repeat) = src0[i] <op> src1[i], op a suffix .eq .ne .lt .le .gt .ge; "
             "masked-off elements give 0; 16- and 32-bit types",
             Cost::Vector, 1, C),
      vector(
          "vsel", vec::sel, 5, "xdst, xsrc0, xsrc1, xsel, xcfg",
          "dst[i] = bit i of the selection bits at xsel (UB, 16 bytes per repeat) ? src0[i] : src1[i]; 16- and 32-bit "
          "types"),
      vector("vcadd", vec::cadd, 3, kUn, "whole-repeat reduction: dst[r] = sum of the masked elements of repeat r"),
      vector("vcmax", vec::cmax, 3, kUn,
             "whole-repeat reduction: dst holds (value, index) pairs, per repeat, of the largest masked element (a "
             "NaN gives way to a number)"),
      vector("vcmin", vec::cmin, 3, kUn, "as vcmax, smallest element"),
      vector("vredsum", vec::redsum, 3, kUn,
             "across-repeat reduction: dst[0] = sum of the masked elements of all repeats"),
      vector("vredmax", vec::redmax, 3, kUn,
             "across-repeat reduction: dst = (value, index) of the largest masked element of all repeats (a NaN "
             "gives way to a number, as in vmax)"),
      vector("vredmin", vec::redmin, 3, kUn, "as vredmax, smallest element"),
      vector("vdup", vec::dup, 3, "xdst, xscalar, xcfg", "dst[i] = scalar (the low dtype bits of xscalar)"),
      vector("vtranspose", vec::transpose, 2, "xdst, xsrc", "16 x 16 transpose of 16-bit elements (512 bytes)"),
      // --- scalar buffer: the scalar unit's stack, in UB (seed 003) ----------------------------
      scalar("ld.ub", F::Load, Exec::UbLoad, "rd, imm(rs1)",
             "rd = 64-bit load from UB at rs1 + sext(imm); 8-byte aligned", Imm::Signed),
      scalar("st.ub", F::Store, Exec::UbStore, "rs2, imm(rs1)",
             "store rs2 (64 bits) to UB at rs1 + sext(imm); 8-byte aligned", Imm::Signed),
      // --- MTE2: AIPP, the image preprocessing of a network's input ----------------------------
      issued("aipp.gm2l1", Pipe::MTE2, Exec::Aipp, Cost::Aipp, 3, 0, 0, "xdst, xsrc, xcfg",
             "a crop (xcfg is an AippCfg) of the u8 picture at xsrc (layout in SPR aipp_src) -> L1 as f16, "
             "h x w positions of c0 channels (NC1HWC0, C1 = 1): each pixel's channels (the chroma of 4:2:0 from its "
             "2 x 2 block), converted by the matrix (aipp_csc0..2) if aipp_src.csc, then (v - mean - min) x var "
             "(aipp_mean, aipp_min, aipp_var) rounded to f16; channels past the picture's are 0",
             kGm, kL1),
  };
}

}  // namespace

// Built on first use, so that code running before main (another file's statics) finds it.
const std::vector<OpInfo>& op_table() {
  static const std::vector<OpInfo> table = build_table();
  return table;
}

}  // namespace dvp::aicore
