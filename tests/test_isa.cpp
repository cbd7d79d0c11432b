// SPDX-License-Identifier: MIT
// The DV ISA: encoding, assembler, disassembler, configuration words.
#include <gtest/gtest.h>

#include <random>

#include "aicore/assembler.hpp"
#include "aicore/kernel_builder.hpp"
#include "common/error.hpp"

using namespace dvp;
using namespace dvp::aicore;

// A random word whose fields are each zero most of the time: many are invalid, some are not.
static std::uint64_t sparse_word(std::mt19937_64& rng, std::uint8_t op) {
  std::uint64_t w = std::uint64_t(op) << 56;
  const unsigned lo[] = {51, 46, 41, 36, 31, 27, 23, 15, 0, 32};
  const unsigned n[] = {5, 5, 5, 5, 5, 4, 4, 8, 15, 4};
  for (unsigned f = 0; f < 10; ++f)
    if (rng() % 3 == 0) w |= (rng() & ((1ull << n[f]) - 1)) << lo[f];
  static const std::uint64_t kImm[] = {0, 0x7, 0x7ff, 0xffffffff};  // none, a pipe, a flag or shift, any
  w |= rng() & kImm[rng() % 4];
  return w;
}

// Every word the decoder accepts encodes back to itself, and its disassembly assembles back to
// it: a word with a field the instruction does not use, or out of range, is refused.
TEST(Isa, EveryAcceptedWordEncodesAndAssemblesBackToItself) {
  std::mt19937_64 rng(1);
  for (std::size_t op = 0; op < op_table().size(); ++op) {
    unsigned accepted = 0;
    for (int k = 0; k < 2000; ++k) {
      const std::uint64_t w = sparse_word(rng, std::uint8_t(op));
      Instr i;
      try {
        i = decode(w);
      } catch (const Error&) {
        continue;
      }
      ++accepted;
      ASSERT_EQ(encode(i), w) << op_table()[op].mnemonic;
      Image img;  // a branch's target lies outside this one-word image: dvdis writes it as an .equ
      img.code = {w};
      const std::string text = disassemble(img);
      Image back;
      ASSERT_NO_THROW(back = assemble(text, "back.s")) << text;
      ASSERT_EQ(back.code.size(), 1u) << text;
      EXPECT_EQ(back.code[0], w) << text;
    }
    EXPECT_GT(accepted, 0u) << op_table()[op].mnemonic;
  }
  EXPECT_THROW(decode(std::uint64_t(0xFF) << 56), Error);
}

static std::string decode_error(std::uint64_t w) {
  try {
    decode(w);
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

// The corrupted kernel images a fuzzer found: each field out of range is a named error.
TEST(Isa, OutOfRangeFieldsAreNamedErrors) {
  const auto op = [](const char* m) { return std::uint64_t(*find_opcode(m)) << 56; };
  const Instr vadd = decode(encode(Instr{*find_opcode("vadd"), 1, 2, 3, 4, 0, DType::F16}));
  for (unsigned dt = 10; dt < 16; ++dt) {
    const std::uint64_t w = (encode(vadd) & ~(0xfull << 27)) | std::uint64_t(dt) << 27;
    EXPECT_NE(decode_error(w).find("field dt1 = " + std::to_string(dt) + ": no such data type"), std::string::npos)
        << decode_error(w);
  }
  EXPECT_NE(decode_error(op("setflag") | 7).find("field src_pipe = 7: no such pipe"), std::string::npos);
  EXPECT_NE(decode_error(op("setflag") | 0x70).find("field dst_pipe = 7"), std::string::npos);
  EXPECT_NE(decode_error(op("setflag") | 0x900).find("field event = 9: events are 0..7"), std::string::npos);
  EXPECT_NE(decode_error(op("barrier") | 9).find("field pipe = 9"), std::string::npos);
  EXPECT_NE(decode_error(op("end") | 1).find("field imm = 1: unused"), std::string::npos);
  EXPECT_NE(decode_error(op("add") | std::uint64_t(5) << 36).find("field d = 5"), std::string::npos);
}

TEST(Isa, ConfigurationWordsKeepEveryFieldAtItsLimits) {
  DataCopyCfg d{4095, 65535, 65535, 65535};
  EXPECT_EQ(DataCopyCfg::unpack(d.pack()).block_count, 4095u);
  EXPECT_EQ(DataCopyCfg::unpack(d.pack()).dst_gap, 65535u);
  DataCopyCfg d2{1, 2, 3, 4};
  auto u = DataCopyCfg::unpack(d2.pack());
  EXPECT_EQ(std::tie(u.block_count, u.block_len, u.src_gap, u.dst_gap), std::make_tuple(1u, 2u, 3u, 4u));
  EXPECT_FALSE(u.no_alloc);
  DataCopyCfg d3{4095, 65535, 65535, 65535, true};  // the L2 hint beside full fields
  auto u3 = DataCopyCfg::unpack(d3.pack());
  EXPECT_TRUE(u3.no_alloc);
  EXPECT_EQ(std::tie(u3.block_count, u3.block_len, u3.src_gap, u3.dst_gap),
            std::make_tuple(4095u, 65535u, 65535u, 65535u));
  EXPECT_EQ(d3.pack() >> 60, 1u);
  VecCfg v{255, 1, 2, 3, 250, 251, 252};
  auto vu = VecCfg::unpack(v.pack());
  EXPECT_EQ(std::tie(vu.repeat, vu.dst_blk, vu.src0_blk, vu.src1_blk, vu.dst_rep, vu.src0_rep, vu.src1_rep),
            std::make_tuple(255u, 1u, 2u, 3u, 250u, 251u, 252u));
  MmadCfg m{4095, 17, 4000, false};
  auto mu = MmadCfg::unpack(m.pack());
  EXPECT_EQ(std::tie(mu.m, mu.k, mu.n, mu.init), std::make_tuple(4095u, 17u, 4000u, false));
  Load3dCfg l{3, 5, 2, 1, 2, 1, 64, 10, 288, 32, 1024};
  auto lu = Load3dCfg::unpack(l.pack1(), l.pack2());
  EXPECT_EQ(std::tie(lu.kh, lu.kw, lu.stride_h, lu.channels, lu.k_ext, lu.m_ext),
            std::make_tuple(3u, 5u, 2u, 64u, 288u, 1024u));
  Fmatrix f{224, 224, 1, 2, 3, 4};
  auto fu = Fmatrix::unpack(f.pack());
  EXPECT_EQ(std::tie(fu.w, fu.h, fu.pad_l, fu.pad_b), std::make_tuple(224u, 224u, 1u, 4u));
}

namespace {
// One line of every format, with every kind of operand and suffix.
const char* kProgram = R"(
# every format once
.equ N, 128
.entry start
helper:
    add  x1, x2, x3
    jr   x31
start:
    nop
    li   x4, -5
    li   x5, N
    li64 x6, 0x123456789abc
    lih  x7, 0xffffffff
    ori  x8, x8, 0xfffff000
    shli x9, x9, 63
    ld.w x10, -16(x11)
    st.d x12, 8(x13)
    ld.ub x14, 0(x15)
    mfspr x16, blockid
    mtspr mask0, x17
    setmaskn x18
loop:
    addi x5, x5, -1
    bne  x5, zero, loop
    jal  x31, helper
    copy.gm2ub x1, x2, x3
    nd2nz.gm2l1.f16 x1, x2, x3, x4
    load2d.l0b.f16.t x1, x2, x3
    load3d.l0a.f16 x1, x2, x3, x4
    mmad.f32.f16 x1, x2, x3, x4
    fixp.l0c2gm.f16.f32.relu x1, x2, x3, x4
    fixp.l0c2gm.s8.s32.round x1, x2, x3, x4
    vadd.f16 x1, x2, x3, x4
    vconv.s32.f32.floor x1, x2, x3
    vcmp.f32.ge x1, x2, x3, x4
    vsel.f16 x1, x2, x3, x4, x5
    vtranspose.f16 x1, x2
    setflag mte2, v, 7
    waitflag mte2, v, 7
    barrier cube
    beq x0, x0, done
done:
    end
)";
}  // namespace

TEST(Assembler, DisassemblyAssemblesBackToTheSameImage) {
  Image a = assemble(kProgram, "prog.s");
  EXPECT_EQ(a.entry, 2u * 8);
  std::string text = disassemble(a);
  Image b = assemble(text, "dis.s");
  EXPECT_EQ(a.code, b.code) << text;
  EXPECT_EQ(a.entry, b.entry);
  EXPECT_EQ(a.bytes(), Image::from_bytes(a.bytes(), "x").bytes());
  // A few encodings checked field by field.
  Instr li64lo = decode(a.code[5]), li64hi = decode(a.code[6]);
  EXPECT_EQ(std::uint32_t(li64lo.imm), 0x56789abcu);
  EXPECT_EQ(std::uint32_t(li64hi.imm), 0x1234u);
  Instr fix = decode(b.code[24]);  // words: helper 0-1, start 2, li64 5-6, loop 16
  EXPECT_STREQ(fix.info().mnemonic, "fixp.l0c2gm");
  EXPECT_EQ(fix.dt1, DType::F16);
  EXPECT_EQ(fix.dt2, DType::F32);
  EXPECT_TRUE(fix.mode & mode::kRelu);
  Instr br = decode(a.code[17]);  // bne x5, zero, loop: one instruction back
  EXPECT_EQ(br.imm, -1);
}

namespace {
void expect_error(const std::string& src, const std::string& what) {
  try {
    assemble(src, "k.s");
    ADD_FAILURE() << "no error for: " << src;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}
}  // namespace

TEST(Assembler, ErrorsNameFileAndLine) {
  expect_error("nop\n\n  frob x1, x2\n", "k.s:3: unknown instruction 'frob'");
  expect_error("add x1, x2\n", "k.s:1: add takes 3 operands (rd, rs1, rs2), got 2");
  expect_error("add x1, x2, x32\n", "k.s:1: expected a register x0..x31, got 'x32'");
  expect_error("beq x1, x2, nowhere\n", "k.s:1: undefined label 'nowhere'");
  expect_error("a:\na:\nend\n", "k.s:2: 'a' is defined twice");
  expect_error("li x1, 0x80000000\n", "k.s:1: li takes a signed 32-bit immediate; 2147483648 needs li64");
  expect_error("vadd x1, x2, x3, x4\n", "k.s:1: vadd needs 1 data type suffix, e.g. .f16");
  expect_error("vadd.f16.relu x1, x2, x3, x4\n", "k.s:1: vadd does not take the suffix '.relu'");
  expect_error("vadd.f17 x1, x2, x3, x4\n", "k.s:1: unknown data type '.f17'");
  expect_error("vcmp.f16 x1, x2, x3, x4\n", "needs a compare suffix");
  expect_error("barrier s\n", "k.s:1: barrier on the scalar pipe is not allowed");
  expect_error("setflag v, v, 0\n", "k.s:1: a flag joins two different pipes");
  expect_error("setflag mte2, v, 8\n", "k.s:1: immediate 8 out of range 0..7");
  expect_error("mfspr x1, banana\n", "k.s:1: unknown special register 'banana'");
  expect_error("ld.w x1, x2\n", "k.s:1: expected imm(rs1), got 'x2'");
  expect_error("add.f16 x1, x2, x3\n", "k.s:1: add takes no suffix ('.f16')");
  expect_error("# nothing\n", "k.s:0: no instructions");
  expect_error(".equ A, 0x7fffffffffffffff + 1\nend\n", "k.s:1: '0x7fffffffffffffff + 1' overflows 64 bits");
}

TEST(Image, MalformedImagesAreRejectedWithTheirName) {
  Image a = assemble("end\n", "e.s");
  auto b = a.bytes();
  b[0] = 'X';
  EXPECT_THROW(Image::from_bytes(b, "bad.dvk"), Error);
  b = a.bytes();
  b.pop_back();
  try {
    Image::from_bytes(b, "short.dvk");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("short.dvk: code size 8 does not match"), std::string::npos) << e.what();
  }
}

TEST(KernelBuilder, EmitsTheSameImageAsTheAssemblerForTheSameProgram) {
  KernelBuilder k;  // x1 and x2 are its scratch registers for configuration words
  Reg base = k.reg(), a = k.reg();
  k.GetSpr(base, Spr::ArgBase);
  k.LoadGm(a, base, 0);
  Reg n = k.Const(5);
  k.Loop(n, [&] {
    k.DataCopy(Pos::UB, KernelBuilder::zero(), Pos::GM, a, DataCopyCfg{1, 8, 0, 0});
    k.SetFlag(Pipe::MTE2, Pipe::V, 0);
    k.WaitFlag(Pipe::MTE2, Pipe::V, 0);
    k.Add(DType::F16, KernelBuilder::zero(), KernelBuilder::zero(), KernelBuilder::zero(), VecCfg{});
    k.PipeBarrier(Pipe::V);
  });
  k.Mmad(DType::F32, DType::F16, a, a, a, MmadCfg{16, 16, 16, true});
  k.Fixpipe(Pos::GM, DType::F16, DType::F32, a, a, FixpCfg{16, 16, 16}, KernelBuilder::zero(), true, Round::Rint);
  k.End();
  Image built = k.Build();
  Image text = assemble(R"(
    mfspr x3, argbase
    ld.d  x4, 0(x3)
    li    x5, 5
    beq   x5, x0, out
top:
    li    x1, 0x8001
    copy.gm2ub x0, x4, x1
    setflag mte2, v, 0
    waitflag mte2, v, 0
    li64  x2, 0x0008080801010101
    vadd.f16 x0, x0, x0, x2
    barrier v
    addi  x5, x5, -1
    bne   x5, x0, top
out:
    li64  x1, 0x1010010010
    mmad.f32.f16 x4, x4, x4, x1
    li64  x2, 0x0000001000100010
    fixp.l0c2gm.f16.f32.rint.relu x4, x4, x2, x0
    end
)",
                        "same.s");
  EXPECT_EQ(built.code, text.code) << disassemble(built);
}

TEST(KernelBuilder, RejectsMisuse) {
  KernelBuilder k;
  EXPECT_THROW(k.PipeBarrier(Pipe::S), Error);
  EXPECT_THROW(k.DataCopy(Pos::L0A, k.zero(), Pos::UB, k.zero(), DataCopyCfg{}), Error);
  EXPECT_THROW(k.Vector("add", DType::F16, {k.zero()}, VecCfg{}), Error);
  Label never = k.NewLabel();
  k.Jump(never);
  EXPECT_THROW(k.Build(), Error);
  for (int i = 0; i < 29; ++i) k.reg();
  EXPECT_THROW(k.reg(), Error);
}

// The instruction table is the one place an instruction is defined: every entry carries what
// its executor needs, so no instruction reaches the model without its meaning.
TEST(Isa, EveryTableEntryCarriesWhatItsExecutorNeeds) {
  const auto& ops = op_table();
  ASSERT_FALSE(ops.empty());
  for (const OpInfo& o : ops) {
    SCOPED_TRACE(o.mnemonic);
    EXPECT_NE(std::string(o.doc), "");
    switch (o.exec) {
      case Exec::Alu: EXPECT_NE(o.alu, nullptr); break;
      case Exec::Branch: EXPECT_NE(o.cond, nullptr); break;
      case Exec::Load:
      case Exec::Store: EXPECT_TRUE(o.size == 1 || o.size == 2 || o.size == 4 || o.size == 8); break;
      case Exec::Vector:
        ASSERT_NE(o.vec, nullptr);
        EXPECT_EQ(o.pipe, Pipe::V);
        break;
      case Exec::Copy: EXPECT_TRUE(o.src != o.dst && (o.src != kGm || o.dst != kGm)); break;
      case Exec::Load2d:
      case Exec::Load3d: EXPECT_TRUE(o.src == kL1 && (o.dst == kL0A || o.dst == kL0B)); break;
      case Exec::Fixp: EXPECT_EQ(o.src, kL0C); break;
      default: break;
    }
    // Issued instructions run in a pipe, scalar ones (and the flags they order) in S.
    EXPECT_EQ(o.pipe == Pipe::S, o.format != Format::X) << "pipe and format disagree";
    EXPECT_EQ(o.cost == Cost::Sync, is_sync(o.exec));
  }
  // The immediates are read as the table says: shifts are 0..63, or/xor/lih zero-extend.
  EXPECT_EQ(op_table()[*find_opcode("shli")].imm, Imm::Shift);
  EXPECT_EQ(op_table()[*find_opcode("ori")].imm, Imm::Unsigned);
  EXPECT_EQ(op_table()[*find_opcode("addi")].imm, Imm::Signed);
}
