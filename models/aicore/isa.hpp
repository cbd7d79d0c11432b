// SPDX-License-Identifier: MIT
// The DV ISA: a project-defined Da Vinci-style instruction set (docs/isa.md, generated from
// the table in isa_table.cpp). Each instruction is one entry of that table: opcode (its
// index), mnemonic, pipe, operand format, immediate kind, what executes it with its details
// (ALU function, access size, buffers, vector operation) and which configured cost it pays.
// The assembler, the disassembler, the decoder, the AI Core model, docs/isa.md and the
// per-instruction profile all read that one entry. Every instruction is one 64-bit word. The scalar unit executes the
// S-pipe instructions itself and issues the others, with their operands read from scalar
// registers, into the queue of their pipe (MTE1, MTE2, MTE3, M, V, FIX).
//
// Word layout (bit 63 first):
//   [63:56] opcode  (its index in the table: the table is append-only)
//   [55:51] a  [50:46] b  [45:41] c  [40:36] d  [35:31] e   register numbers x0..x31
//   [30:27] dt1  [26:23] dt2                                   data types (DType)
//   [22:15] mode                                               rounding, relu, transpose, compare
//   [31:0]  imm (formats with an immediate use it instead of e/dt/mode)
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dvp::aicore {

enum class Pipe : std::uint8_t { S, MTE1, MTE2, MTE3, M, V, FIX };
constexpr int kPipes = 7;
const char* pipe_name(Pipe p);                        // "S", "MTE1", ...
std::optional<Pipe> pipe_from(const std::string& s);  // "s", "mte2", "v", "m", "fix" ...

enum class DType : std::uint8_t { None, F16, BF16, F32, S8, U8, S16, U16, S32, U32 };

// The AI Core's local buffers; kGm stands for global memory (DRAM, outside the core).
enum Buffer : std::uint8_t { kL1, kL0A, kL0B, kL0C, kUB, kBuffers, kGm = 0xff };
const char* buffer_name(Buffer b);
const char* dtype_name(DType t);  // "f16", ...
std::optional<DType> dtype_from(const std::string& s);
unsigned dtype_bytes(DType t);

// Rounding modes of conversions (the vendor's CAST_* names).
enum class Round : std::uint8_t { None, Rint, Floor, Ceil, Round, Trunc, Odd };
enum class Cmp : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge };

// Operand formats.
enum class Format : std::uint8_t {
  None,      // end, nop
  R3,        // rd, rs1, rs2                   a=rd b=rs1 c=rs2
  RI,        // rd, rs1, imm32                 a=rd b=rs1
  LI,        // rd, imm32                      a=rd
  Load,      // rd, imm(rs1)                   a=rd b=rs1
  Store,     // rs2, imm(rs1)                  c=rs2 b=rs1
  Branch,    // rs1, rs2, label                b c, imm = word offset
  Jump,      // label                          imm = word offset
  JumpLink,  // rd, label                      a=rd, imm = word offset
  R1,        // rs1                            b=rs1
  Mfspr,     // rd, spr                        a=rd, imm = spr
  Mtspr,     // spr, rs1                       b=rs1, imm = spr
  Flag,      // src_pipe, dst_pipe, event      imm = src | dst << 4 | event << 8
  Barrier,   // pipe                           imm = pipe
  X,         // issued: up to five registers a..e, dt1, dt2, mode
};

// Mode byte of X instructions.
namespace mode {
constexpr std::uint8_t kRoundMask = 0x07;  // Round
constexpr std::uint8_t kRelu = 0x08;
constexpr std::uint8_t kTranspose = 0x10;
constexpr unsigned kCmpShift = 5;  // Cmp in bits 7:5
}  // namespace mode

// Which suffixes an X instruction accepts after its data types.
enum Suffix : std::uint8_t { kSufRound = 1, kSufRelu = 2, kSufTranspose = 4, kSufCmp = 8 };

// How an instruction's immediate is read: sign-extended, zero-extended, or a shift amount.
enum class Imm : std::uint8_t { None, Signed, Unsigned, Shift };

// What executes an instruction: the scalar unit's handlers, the flag logic, or a pipe's unit.
enum class Exec : std::uint8_t {
  Nop,
  End,
  Alu,
  LoadImm,
  LoadImmHigh,
  Load,
  Store,
  UbLoad,
  UbStore,
  Branch,
  Jump,
  JumpLink,
  JumpReg,
  Mfspr,
  Mtspr,
  SetMask,  // the scalar unit
  SetFlag,
  WaitFlag,
  Barrier,  // synchronisation, in the pipe they name
  Copy,
  Nd2Nz,
  Load2d,
  Load3d,
  Mmad,
  Fixp,
  Vector,  // the pipes' units
  Aipp,    // MTE2's image preprocessing (appended: the table's order is the ABI's)
  Count_
};

// setflag, waitflag and barrier: issued into the pipe they name, whatever their own pipe.
inline bool is_sync(Exec x) { return x == Exec::SetFlag || x == Exec::WaitFlag || x == Exec::Barrier; }

// Which configured cost an instruction pays (platform.aicore; docs/isa.md names the keys).
enum class Cost : std::uint8_t { Scalar, Sync, Transfer, Cube, Fixpipe, Vector, VectorComplex, Aipp };
const char* cost_doc(Cost c);

using AluFn = std::uint64_t (*)(std::uint64_t a, std::uint64_t b);
using CondFn = bool (*)(std::uint64_t a, std::uint64_t b);
struct VecOp;  // vector_ops.hpp: the element-wise meaning of a vector instruction

struct OpInfo {
  const char* mnemonic;
  Pipe pipe;
  Format format;
  std::uint8_t regs;      // X: number of register operands
  std::uint8_t dtypes;    // X: number of data-type suffixes (0, 1 or 2)
  std::uint8_t suffixes;  // X: accepted Suffix bits
  const char* operands;   // operand names, for the assembler's messages and docs
  const char* doc;        // what it does (docs/isa.md)
  Exec exec;
  Cost cost;
  Imm imm = Imm::None;
  AluFn alu = nullptr;          // Alu: rd = alu(rs1, rs2 or the immediate)
  bool divides = false;         // Alu: a zero divisor stops the core
  CondFn cond = nullptr;        // Branch: taken when cond(rs1, rs2)
  std::uint8_t size = 0;        // Load / Store: bytes
  bool sign = false;            // Load: sign-extends
  Buffer src = kGm, dst = kGm;  // Copy, Load2d, Load3d, Fixp: from and to
  const VecOp* vec = nullptr;   // Vector
};

const std::vector<OpInfo>& op_table();
std::optional<std::uint8_t> find_opcode(const std::string& mnemonic);

// Special registers (mfspr / mtspr).
enum class Spr : std::uint8_t {
  CoreId,
  BlockId,
  BlockDim,
  ArgBase,
  Status,
  Mask0,
  Mask1,
  Fmatrix,
  PadValue,
  Ctrl,
  Cycle,
  AippSrc,   // AIPP: the source picture and the output's channels (AippSrc below)
  AippCsc0,  // AIPP: colour conversion matrix and biases (AippCsc below)
  AippCsc1,
  AippCsc2,
  AippMean,  // AIPP: per-channel mean (u16 x 3), min (f16 x 3), reciprocal of the variance (f16 x 3)
  AippMin,
  AippVar,
  Count_
};
constexpr unsigned kAippSprs = 7;  // AippSrc .. AippVar, read at issue by aipp.gm2l1
const char* spr_name(Spr s);
std::optional<Spr> spr_from(const std::string& s);
const char* spr_doc(Spr s);

struct Instr {
  std::uint8_t op = 0;
  std::uint8_t a = 0, b = 0, c = 0, d = 0, e = 0;
  DType dt1 = DType::None, dt2 = DType::None;
  std::uint8_t mode = 0;
  std::int32_t imm = 0;

  const OpInfo& info() const { return op_table()[op]; }
  bool operator==(const Instr& o) const;
};

std::uint64_t encode(const Instr& i);
// Throws dvp::Error on an opcode outside the table or a field out of range (a data type, pipe,
// event, special register, rounding mode or comparison that does not exist, or a non-zero field
// the instruction does not use), naming the field and its value.
Instr decode(std::uint64_t word);

// Configuration words: the packed operands of the issued instructions, built by the scalar
// code (or the kernel builder) in a register. docs/isa.md lists their fields.
struct DataCopyCfg {  // DataCopy: blockCount x blockLen (32 B units), gaps in 32 B units
  std::uint32_t block_count = 1, block_len = 1, src_gap = 0, dst_gap = 0;
  // A read from GM that does not allocate in the L2 when it misses there (CHI's Allocate attribute
  // clear): data read once, such as a layer's weights, passes by without evicting what stays.
  bool no_alloc = false;
  std::uint64_t pack() const;
  static DataCopyCfg unpack(std::uint64_t w);
};
struct VecCfg {  // vector repeat parameters (strides in 32 B blocks)
  std::uint32_t repeat = 1, dst_blk = 1, src0_blk = 1, src1_blk = 1, dst_rep = 8, src0_rep = 8, src1_rep = 8;
  std::uint64_t pack() const;
  static VecCfg unpack(std::uint64_t w);
};
struct MmadCfg {  // C[m x n] (+)= A[m x k] * B[k x n]
  std::uint32_t m = 0, k = 0, n = 0;
  bool init = true;  // true: C = A*B; false: C += A*B
  std::uint64_t pack() const;
  static MmadCfg unpack(std::uint64_t w);
};
struct Load2dCfg {                                        // fractal moves L1 -> L0A/L0B
  std::uint32_t repeat = 1, src_stride = 1, dst_gap = 0;  // in fractals
  std::uint64_t pack() const;
  static Load2dCfg unpack(std::uint64_t w);
};
struct Load3dCfg {  // img2col L1 -> L0A/L0B; the feature map shape and padding are in SPR fmatrix
  std::uint32_t kh = 1, kw = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, channels = 16;
  std::uint32_t k_start = 0, k_ext = 0, m_start = 0, m_ext = 0;
  std::uint64_t pack1() const;
  std::uint64_t pack2() const;
  static Load3dCfg unpack(std::uint64_t w1, std::uint64_t w2);
};
struct Fmatrix {  // SPR fmatrix: input feature map for load3d
  std::uint32_t w = 0, h = 0, pad_l = 0, pad_r = 0, pad_t = 0, pad_b = 0;
  std::uint64_t pack() const;
  static Fmatrix unpack(std::uint64_t w);
};
struct FixpCfg {                               // L0C (Nz, 16x16 fractals) -> GM / L1 (ND rows)
  std::uint32_t m = 0, n = 0, dst_stride = 0;  // dst_stride: elements between output rows
  // The height of the matrix in L0C, in fractals (16 rows), when it is taller than the m rows
  // read out (an edge tile of a GEMM computed whole); 0: ceil(m / 16).
  std::uint32_t src_fractals = 0;
  std::uint64_t pack() const;
  static FixpCfg unpack(std::uint64_t w);
};
struct Nd2NzCfg {                                                  // ND matrix in GM -> Nz fractals in L1
  std::uint32_t rows = 0, cols = 0, src_stride = 0, dst_rows = 0;  // dst_rows: padded height (multiple of 16)
  std::uint64_t pack() const;
  static Nd2NzCfg unpack(std::uint64_t w);
};

// AIPP (aipp.gm2l1), the AI Core's image preprocessing on the way from GM to L1. SPR aipp_src:
// the source picture's layout; aipp_csc0..2 the colour conversion, aipp_mean / aipp_min /
// aipp_var the per-channel normalisation; xcfg the crop loaded. docs/isa.md gives the formula.
struct AippSrc {
  std::uint32_t pitch = 0;       // pixels from a row of the picture to the next (RGB888: 3 bytes each)
  std::uint32_t plane_rows = 0;  // rows of the Y plane: the chroma plane starts pitch x plane_rows bytes on
  std::uint32_t format = 0;      // enum dvpp_format: 1 NV12, 2 NV21, 5 YUV400, 6 RGB888
  bool csc = false;              // apply the matrix (else the pixel's channels as they are)
  std::uint32_t c0 = 16;         // channels per output position: 16, or 4 (the small-channel C04 mode)
  std::uint64_t pack() const;
  static AippSrc unpack(std::uint64_t w);
};
struct AippCsc {              // out_c = clamp(((sum_j m[c][j] x (in_j - in_bias_j)) >> 8) + out_bias_c, 0, 255)
  std::int16_t m[3][3] = {};  // Q8: 256 is 1.0
  std::uint8_t in_bias[3] = {}, out_bias[3] = {};
  void pack(std::uint64_t w[3]) const;
  static AippCsc unpack(const std::uint64_t w[3]);
};
struct AippCfg {  // the crop of the source loaded: rows y.., columns x.., w x h positions
  std::uint32_t x = 0, y = 0, w = 0, h = 0;
  std::uint64_t pack() const;
  static AippCfg unpack(std::uint64_t w);
};

// Text of one instruction, as the assembler reads it. `label_for(target_pc)` names branch
// targets; without it targets print as relative offsets (.+N).
std::string format_instr(const Instr& i, std::uint64_t pc, const std::string& target_label = "");

// docs/isa.md, generated from the table.
std::string isa_markdown();

}  // namespace dvp::aicore
