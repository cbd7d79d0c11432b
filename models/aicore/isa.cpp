// SPDX-License-Identifier: MIT
#include "isa.hpp"

#include <sstream>

#include "common/error.hpp"

namespace dvp::aicore {

namespace {

const char* kPipeNames[kPipes] = {"S", "MTE1", "MTE2", "MTE3", "M", "V", "FIX"};
const char* kDTypes[] = {"", "f16", "bf16", "f32", "s8", "u8", "s16", "u16", "s32", "u32"};
const unsigned kDTypeBytes[] = {0, 2, 2, 4, 1, 1, 2, 2, 4, 4};
const char* kRounds[] = {"", "rint", "floor", "ceil", "round", "trunc", "odd"};
const char* kCmps[] = {"eq", "ne", "lt", "le", "gt", "ge"};
const char* kSprs[][2] = {
    {"coreid", "index of this AI Core (read-only)"},
    {"blockid", "block index of the task block running on this core (read-only)"},
    {"blockdim", "number of blocks of the running kernel (read-only)"},
    {"argbase", "GM address of the kernel's argument table (read-only)"},
    {"status", "bit 0: a pipe fault is pending (read-only)"},
    {"mask0",
     "vector mask, elements 0..63 of a repeat (bit i = element i; for 8-bit types bit i covers elements 2i and 2i+1)"},
    {"mask1", "vector mask, elements 64..127 (8-bit types: 128..255)"},
    {"fmatrix", "load3d feature map: W[15:0] H[31:16] pad_l[39:32] pad_r[47:40] pad_t[55:48] pad_b[63:56]"},
    {"padvalue", "load3d padding value (low 16 bits)"},
    {"ctrl", "reserved, reads 0"},
    {"cycle", "core clock cycles since the kernel started (read-only)"},
    {"aipp_src",
     "AIPP source: pitch[15:0] (pixels a row; RGB888: x 3 bytes) plane_rows[31:16] (the chroma plane follows "
     "pitch x plane_rows bytes of Y) format[35:32] (enum dvpp_format: 1 nv12, 2 nv21, 5 yuv400, 6 rgb888) csc[36] "
     "c0_4[37] (4 channels a position, else 16)"},
    {"aipp_csc0", "AIPP matrix, s16 Q8 each: m00[15:0] m01[31:16] m02[47:32] m10[63:48]"},
    {"aipp_csc1", "AIPP matrix: m11[15:0] m12[31:16] m20[47:32] m21[63:48]"},
    {"aipp_csc2",
     "AIPP matrix m22[15:0]; input biases (u8) [23:16] [31:24] [39:32]; output biases [47:40] [55:48] [63:56]"},
    {"aipp_mean", "AIPP channel means, u16: [15:0] [31:16] [47:32]"},
    {"aipp_min", "AIPP channel minimums, f16: [15:0] [31:16] [47:32]"},
    {"aipp_var", "AIPP channel reciprocals of the variance, f16: [15:0] [31:16] [47:32]"},
};

std::uint64_t bits(std::uint64_t v, unsigned lo, unsigned n) { return (v & ((1ull << n) - 1)) << lo; }
std::uint32_t field(std::uint64_t w, unsigned lo, unsigned n) { return std::uint32_t((w >> lo) & ((1ull << n) - 1)); }

}  // namespace

const char* pipe_name(Pipe p) { return kPipeNames[int(p)]; }

std::optional<Pipe> pipe_from(const std::string& s) {
  std::string u;
  for (char c : s) u += char(std::toupper(static_cast<unsigned char>(c)));
  for (int i = 0; i < kPipes; ++i)
    if (u == kPipeNames[i]) return Pipe(i);
  return std::nullopt;
}

// Data types come from decoded (range-checked) words or the assembler's names; out of range is
// a programming error, answered without reading past the tables.
const char* dtype_name(DType t) { return unsigned(t) <= unsigned(DType::U32) ? kDTypes[int(t)] : "?"; }
unsigned dtype_bytes(DType t) { return unsigned(t) <= unsigned(DType::U32) ? kDTypeBytes[int(t)] : 0; }

std::optional<DType> dtype_from(const std::string& s) {
  for (int i = 1; i < int(sizeof kDTypes / sizeof *kDTypes); ++i)
    if (s == kDTypes[i]) return DType(i);
  return std::nullopt;
}

std::optional<std::uint8_t> find_opcode(const std::string& m) {
  const std::vector<OpInfo>& ops = op_table();
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (m == ops[i].mnemonic) return std::uint8_t(i);
  return std::nullopt;
}

const char* buffer_name(Buffer b) {
  static const char* n[] = {"L1", "L0A", "L0B", "L0C", "UB"};
  return b < kBuffers ? n[b] : "GM";
}

const char* cost_doc(Cost c) {
  switch (c) {
    case Cost::Scalar: return "`scalar_cycles`";
    case Cost::Sync: return "`issue_cycles`, then the wait for the flag or the pipe";
    case Cost::Transfer:
      return "`mte_startup_cycles` + bytes / the path's rate (`gm_read_bytes_per_cycle`, `l1_to_l0a_bytes_per_cycle`, "
             "...; "
             "GM through the ring, L2 and DRAM)";
    case Cost::Cube: return "`cube_startup_cycles` + cube steps (m, k, n over `cube_m/k/n`) x `cube_cycles_per_step`";
    case Cost::Fixpipe:
      return "`mte_startup_cycles` + per row n x 4 bytes / `fixp_bytes_per_cycle`, then the row's write (GM: "
             "`gm_write_bytes_per_cycle`)";
    case Cost::Vector: return "`vector_startup_cycles` + repeats x `vector_cycles_per_repeat`";
    case Cost::VectorComplex: return "`vector_startup_cycles` + repeats x `vector_complex_cycles_per_repeat`";
    case Cost::Aipp:
      return "`mte_startup_cycles` + the crop's rows read at `gm_read_bytes_per_cycle` (GM through the ring, L2 and "
             "DRAM), and no less than its pixels at `aipp_pixels_per_cycle`";
  }
  return "";
}

const char* spr_name(Spr s) { return kSprs[int(s)][0]; }
const char* spr_doc(Spr s) { return kSprs[int(s)][1]; }

std::optional<Spr> spr_from(const std::string& s) {
  for (int i = 0; i < int(Spr::Count_); ++i)
    if (s == kSprs[i][0]) return Spr(i);
  return std::nullopt;
}

bool Instr::operator==(const Instr& o) const {
  return op == o.op && a == o.a && b == o.b && c == o.c && d == o.d && e == o.e && dt1 == o.dt1 && dt2 == o.dt2 &&
         mode == o.mode && imm == o.imm;
}

std::uint64_t encode(const Instr& i) {
  std::uint64_t w = bits(i.op, 56, 8) | bits(i.a, 51, 5) | bits(i.b, 46, 5) | bits(i.c, 41, 5) | bits(i.d, 36, 5);
  if (i.info().format == Format::X)
    w |= bits(i.e, 31, 5) | bits(std::uint8_t(i.dt1), 27, 4) | bits(std::uint8_t(i.dt2), 23, 4) | bits(i.mode, 15, 8);
  else
    w |= std::uint32_t(i.imm);
  return w;
}

namespace {

// The operand fields each non-X format uses; every other field of the word must be zero, so
// that a word decodes only if the assembler could have written it.
struct FieldUse {
  bool a, b, c, d, imm;
};
FieldUse field_use(Format f) {
  switch (f) {
    case Format::None: return {false, false, false, false, false};
    case Format::R3: return {true, true, true, false, false};
    case Format::RI:
    case Format::Load: return {true, true, false, false, true};
    case Format::LI:
    case Format::JumpLink:
    case Format::Mfspr: return {true, false, false, false, true};
    case Format::Store:
    case Format::Branch: return {false, true, true, false, true};
    case Format::Jump:
    case Format::Flag:
    case Format::Barrier: return {false, false, false, false, true};
    case Format::R1: return {false, true, false, false, false};
    case Format::Mtspr: return {false, true, false, false, true};
    case Format::X: break;
  }
  return {true, true, true, true, false};
}

[[noreturn]] void bad_field(const Instr& i, std::uint64_t w, const std::string& field, std::uint64_t v,
                            const std::string& why) {
  throw Error(std::string(i.info().mnemonic) + " word " + hex(w) + ": field " + field + " = " + std::to_string(v) +
              ": " + why);
}

void check_immediate(const Instr& i, std::uint64_t w) {
  const std::uint32_t u = std::uint32_t(i.imm);
  switch (i.info().format) {
    case Format::RI:
      if (i.info().imm == Imm::Shift && u > 63) bad_field(i, w, "imm", u, "shift amounts are 0..63");
      break;
    case Format::Mfspr:
    case Format::Mtspr:
      if (u >= unsigned(Spr::Count_)) bad_field(i, w, "spr", u, "no such special register");
      break;
    case Format::Barrier:
      if (u >= unsigned(kPipes)) bad_field(i, w, "pipe", u, "no such pipe (0..6)");
      if (u == unsigned(Pipe::S)) bad_field(i, w, "pipe", u, "barrier on the scalar pipe is not allowed");
      break;
    case Format::Flag:
      if ((u & 15) >= unsigned(kPipes)) bad_field(i, w, "src_pipe", u & 15, "no such pipe (0..6)");
      if (((u >> 4) & 15) >= unsigned(kPipes)) bad_field(i, w, "dst_pipe", (u >> 4) & 15, "no such pipe (0..6)");
      if (((u >> 8) & 15) >= 8) bad_field(i, w, "event", (u >> 8) & 15, "events are 0..7");
      if (u >> 12) bad_field(i, w, "imm[31:12]", u >> 12, "unused bits must be zero");
      if ((u & 15) == ((u >> 4) & 15)) bad_field(i, w, "dst_pipe", (u >> 4) & 15, "a flag joins two different pipes");
      break;
    default: break;
  }
}

void check_x(const Instr& i, std::uint64_t w) {
  const OpInfo& info = i.info();
  const std::uint8_t regs[] = {i.a, i.b, i.c, i.d, i.e};
  static const char* kRegNames[] = {"a", "b", "c", "d", "e"};
  for (unsigned r = info.regs; r < 5; ++r)
    if (regs[r])
      bad_field(i, w, kRegNames[r], regs[r], "the instruction has " + std::to_string(info.regs) + " register operands");
  const DType dts[] = {i.dt1, i.dt2};
  for (unsigned k = 0; k < 2; ++k) {
    const unsigned v = unsigned(dts[k]);
    const std::string name = k ? "dt2" : "dt1";
    if (k >= info.dtypes && v)
      bad_field(i, w, name, v, "the instruction takes " + std::to_string(info.dtypes) + " data types");
    if (k < info.dtypes && (v == 0 || v > unsigned(DType::U32))) bad_field(i, w, name, v, "no such data type (1..9)");
  }
  const unsigned round = i.mode & mode::kRoundMask, cmp = i.mode >> mode::kCmpShift;
  if (round && !(info.suffixes & kSufRound))
    bad_field(i, w, "mode.round", round, "the instruction has no rounding mode");
  if (round > unsigned(Round::Odd)) bad_field(i, w, "mode.round", round, "no such rounding mode (1..6)");
  if ((i.mode & mode::kRelu) && !(info.suffixes & kSufRelu))
    bad_field(i, w, "mode.relu", 1, "the instruction has no relu");
  if ((i.mode & mode::kTranspose) && !(info.suffixes & kSufTranspose))
    bad_field(i, w, "mode.transpose", 1, "the instruction has no transpose");
  if (cmp && !(info.suffixes & kSufCmp)) bad_field(i, w, "mode.cmp", cmp, "the instruction has no comparison");
  if (cmp > unsigned(Cmp::Ge)) bad_field(i, w, "mode.cmp", cmp, "no such comparison (0..5)");
  if (w & 0x7fff) bad_field(i, w, "bits[14:0]", w & 0x7fff, "unused bits must be zero");
}

void check_fields(const Instr& i, std::uint64_t w) {
  if (i.info().format == Format::X) return check_x(i, w);
  const FieldUse u = field_use(i.info().format);
  const std::pair<bool, std::uint8_t> regs[] = {{u.a, i.a}, {u.b, i.b}, {u.c, i.c}, {u.d, i.d}};
  static const char* kRegNames[] = {"a", "b", "c", "d"};
  for (unsigned r = 0; r < 4; ++r)
    if (!regs[r].first && regs[r].second)
      bad_field(i, w, kRegNames[r], regs[r].second, "unused by this format: must be zero");
  if (field(w, 32, 4)) bad_field(i, w, "bits[35:32]", field(w, 32, 4), "unused bits must be zero");
  if (!u.imm && i.imm) bad_field(i, w, "imm", std::uint32_t(i.imm), "unused by this format: must be zero");
  check_immediate(i, w);
}

}  // namespace

Instr decode(std::uint64_t w) {
  Instr i;
  i.op = std::uint8_t(w >> 56);
  if (i.op >= op_table().size()) throw Error("undefined opcode " + std::to_string(i.op) + " in word " + hex(w));
  i.a = std::uint8_t(field(w, 51, 5));
  i.b = std::uint8_t(field(w, 46, 5));
  i.c = std::uint8_t(field(w, 41, 5));
  i.d = std::uint8_t(field(w, 36, 5));
  if (i.info().format == Format::X) {
    i.e = std::uint8_t(field(w, 31, 5));
    i.dt1 = DType(field(w, 27, 4));
    i.dt2 = DType(field(w, 23, 4));
    i.mode = std::uint8_t(field(w, 15, 8));
  } else {
    i.imm = std::int32_t(std::uint32_t(w));
  }
  check_fields(i, w);
  return i;
}

// --- configuration words ----------------------------------------------------------------------

// A field's value in its n bits; one that does not fit is an Error naming it, not a value
// silently cut (a pool row of 2048 positions once asked for 262 repeats and got 6).
std::uint64_t fitted(std::uint64_t v, unsigned lo, unsigned n, const char* word, const char* name) {
  if (v >> n)
    throw Error(std::string(word) + " " + name + " " + std::to_string(v) + " does not fit its " + std::to_string(n) +
                " bits (at most " + std::to_string((1ull << n) - 1) + ")");
  return bits(v, lo, n);
}

std::uint64_t DataCopyCfg::pack() const {
  const char* w = "DataCopyCfg";
  return fitted(block_count, 0, 12, w, "block_count") | fitted(block_len, 12, 16, w, "block_len") |
         fitted(src_gap, 28, 16, w, "src_gap") | fitted(dst_gap, 44, 16, w, "dst_gap") | bits(no_alloc, 60, 1);
}
DataCopyCfg DataCopyCfg::unpack(std::uint64_t w) {
  return DataCopyCfg{field(w, 0, 12), field(w, 12, 16), field(w, 28, 16), field(w, 44, 16), field(w, 60, 1) != 0};
}
std::uint64_t VecCfg::pack() const {
  const char* w = "VecCfg";
  return fitted(repeat, 0, 8, w, "repeat") | fitted(dst_blk, 8, 8, w, "dst_blk") |
         fitted(src0_blk, 16, 8, w, "src0_blk") | fitted(src1_blk, 24, 8, w, "src1_blk") |
         fitted(dst_rep, 32, 8, w, "dst_rep") | fitted(src0_rep, 40, 8, w, "src0_rep") |
         fitted(src1_rep, 48, 8, w, "src1_rep");
}
VecCfg VecCfg::unpack(std::uint64_t w) {
  return VecCfg{field(w, 0, 8),  field(w, 8, 8),  field(w, 16, 8), field(w, 24, 8),
                field(w, 32, 8), field(w, 40, 8), field(w, 48, 8)};
}
std::uint64_t MmadCfg::pack() const {
  return bits(m, 0, 12) | bits(k, 12, 12) | bits(n, 24, 12) | bits(init ? 1 : 0, 36, 1);
}
MmadCfg MmadCfg::unpack(std::uint64_t w) {
  return MmadCfg{field(w, 0, 12), field(w, 12, 12), field(w, 24, 12), field(w, 36, 1) != 0};
}
std::uint64_t Load2dCfg::pack() const { return bits(repeat, 0, 8) | bits(src_stride, 8, 16) | bits(dst_gap, 24, 16); }
Load2dCfg Load2dCfg::unpack(std::uint64_t w) { return Load2dCfg{field(w, 0, 8), field(w, 8, 16), field(w, 24, 16)}; }
std::uint64_t Load3dCfg::pack1() const {
  return bits(kh, 0, 8) | bits(kw, 8, 8) | bits(stride_h, 16, 8) | bits(stride_w, 24, 8) | bits(dil_h, 32, 8) |
         bits(dil_w, 40, 8) | bits(channels, 48, 16);
}
std::uint64_t Load3dCfg::pack2() const {
  return bits(k_start, 0, 16) | bits(k_ext, 16, 16) | bits(m_start, 32, 16) | bits(m_ext, 48, 16);
}
Load3dCfg Load3dCfg::unpack(std::uint64_t w1, std::uint64_t w2) {
  return Load3dCfg{field(w1, 0, 8),   field(w1, 8, 8),   field(w1, 16, 8),  field(w1, 24, 8),
                   field(w1, 32, 8),  field(w1, 40, 8),  field(w1, 48, 16), field(w2, 0, 16),
                   field(w2, 16, 16), field(w2, 32, 16), field(w2, 48, 16)};
}
std::uint64_t Fmatrix::pack() const {
  return bits(w, 0, 16) | bits(h, 16, 16) | bits(pad_l, 32, 8) | bits(pad_r, 40, 8) | bits(pad_t, 48, 8) |
         bits(pad_b, 56, 8);
}
Fmatrix Fmatrix::unpack(std::uint64_t v) {
  return Fmatrix{field(v, 0, 16), field(v, 16, 16), field(v, 32, 8), field(v, 40, 8), field(v, 48, 8), field(v, 56, 8)};
}
std::uint64_t AippSrc::pack() const {
  return bits(pitch, 0, 16) | bits(plane_rows, 16, 16) | bits(format, 32, 4) | bits(csc, 36, 1) | bits(c0 == 4, 37, 1);
}
AippSrc AippSrc::unpack(std::uint64_t w) {
  return AippSrc{field(w, 0, 16), field(w, 16, 16), field(w, 32, 4), field(w, 36, 1) != 0, field(w, 37, 1) ? 4u : 16u};
}
void AippCsc::pack(std::uint64_t w[3]) const {
  auto s16 = [](std::int16_t v) { return std::uint64_t(std::uint16_t(v)); };
  w[0] = s16(m[0][0]) | s16(m[0][1]) << 16 | s16(m[0][2]) << 32 | s16(m[1][0]) << 48;
  w[1] = s16(m[1][1]) | s16(m[1][2]) << 16 | s16(m[2][0]) << 32 | s16(m[2][1]) << 48;
  w[2] = s16(m[2][2]) | bits(in_bias[0], 16, 8) | bits(in_bias[1], 24, 8) | bits(in_bias[2], 32, 8) |
         bits(out_bias[0], 40, 8) | bits(out_bias[1], 48, 8) | bits(out_bias[2], 56, 8);
}
AippCsc AippCsc::unpack(const std::uint64_t w[3]) {
  AippCsc c;
  for (int i = 0; i < 9; ++i) c.m[i / 3][i % 3] = std::int16_t(field(w[i / 4], 16 * (i % 4), 16));
  for (int i = 0; i < 3; ++i) {
    c.in_bias[i] = std::uint8_t(field(w[2], 16 + 8 * i, 8));
    c.out_bias[i] = std::uint8_t(field(w[2], 40 + 8 * i, 8));
  }
  return c;
}
std::uint64_t AippCfg::pack() const { return bits(x, 0, 16) | bits(y, 16, 16) | bits(w, 32, 16) | bits(h, 48, 16); }
AippCfg AippCfg::unpack(std::uint64_t v) {
  return AippCfg{field(v, 0, 16), field(v, 16, 16), field(v, 32, 16), field(v, 48, 16)};
}
std::uint64_t FixpCfg::pack() const {
  return bits(m, 0, 16) | bits(n, 16, 16) | bits(dst_stride, 32, 24) | bits(src_fractals, 56, 8);
}
FixpCfg FixpCfg::unpack(std::uint64_t w) {
  return FixpCfg{field(w, 0, 16), field(w, 16, 16), field(w, 32, 24), field(w, 56, 8)};
}
std::uint64_t Nd2NzCfg::pack() const {
  return bits(rows, 0, 16) | bits(cols, 16, 16) | bits(src_stride, 32, 16) | bits(dst_rows, 48, 16);
}
Nd2NzCfg Nd2NzCfg::unpack(std::uint64_t w) {
  return Nd2NzCfg{field(w, 0, 16), field(w, 16, 16), field(w, 32, 16), field(w, 48, 16)};
}

// --- text -----------------------------------------------------------------------------------

std::string format_instr(const Instr& i, std::uint64_t pc, const std::string& target) {
  const OpInfo& op = i.info();
  std::ostringstream os;
  os << op.mnemonic;
  auto x = [](unsigned r) { return "x" + std::to_string(r); };
  auto tgt = [&]() {
    if (!target.empty()) return target;
    return std::string(".") + (i.imm >= 0 ? "+" : "") + std::to_string(std::int64_t(i.imm) * 8);
  };
  switch (op.format) {
    case Format::None: break;
    case Format::R3: os << " " << x(i.a) << ", " << x(i.b) << ", " << x(i.c); break;
    case Format::RI: os << " " << x(i.a) << ", " << x(i.b) << ", " << i.imm; break;
    case Format::LI:  // li sign-extends: print it signed so it reads back; lih sets raw bits
      if (op.imm == Imm::Signed)
        os << " " << x(i.a) << ", " << i.imm;
      else
        os << " " << x(i.a) << ", " << hex(std::uint32_t(i.imm));
      break;
    case Format::Load: os << " " << x(i.a) << ", " << i.imm << "(" << x(i.b) << ")"; break;
    case Format::Store: os << " " << x(i.c) << ", " << i.imm << "(" << x(i.b) << ")"; break;
    case Format::Branch: os << " " << x(i.b) << ", " << x(i.c) << ", " << tgt(); break;
    case Format::Jump: os << " " << tgt(); break;
    case Format::JumpLink: os << " " << x(i.a) << ", " << tgt(); break;
    case Format::R1: os << " " << x(i.b); break;
    case Format::Mfspr:
      os << " " << x(i.a) << ", " << (std::uint32_t(i.imm) < unsigned(Spr::Count_) ? spr_name(Spr(i.imm)) : "?");
      break;
    case Format::Mtspr:
      os << " " << (std::uint32_t(i.imm) < unsigned(Spr::Count_) ? spr_name(Spr(i.imm)) : "?") << ", " << x(i.b);
      break;
    case Format::Flag: {
      auto p = [](unsigned v) {
        std::string s = v < unsigned(kPipes) ? kPipeNames[v] : "?";
        for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
        return s;
      };
      os << " " << p(i.imm & 15) << ", " << p((i.imm >> 4) & 15) << ", " << ((i.imm >> 8) & 15);
      break;
    }
    case Format::Barrier: {
      std::string s = std::uint32_t(i.imm) < unsigned(kPipes) ? kPipeNames[i.imm] : "?";
      for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
      os << " " << s;
      break;
    }
    case Format::X: {
      if (i.dt1 != DType::None) os << "." << dtype_name(i.dt1);
      if (i.dt2 != DType::None) os << "." << dtype_name(i.dt2);
      if ((op.suffixes & kSufRound) && (i.mode & mode::kRoundMask)) os << "." << kRounds[i.mode & mode::kRoundMask];
      if ((op.suffixes & kSufRelu) && (i.mode & mode::kRelu)) os << ".relu";
      if ((op.suffixes & kSufTranspose) && (i.mode & mode::kTranspose)) os << ".t";
      if (op.suffixes & kSufCmp) os << "." << kCmps[(i.mode >> mode::kCmpShift) % 6];
      const std::uint8_t r[5] = {i.a, i.b, i.c, i.d, i.e};
      for (unsigned k = 0; k < op.regs; ++k) os << (k ? ", " : " ") << x(r[k]);
      break;
    }
  }
  return os.str();
}

namespace {

// docs/isa.md's prose: the machine model, the word layout, the syntax (before the special
// registers), the matrix formats and the configuration words (before the instructions).
const char* const kIsaIntro =
    "# DV ISA reference\n\n"
    "Generated by `dvdis --isa` from the instruction table (models/aicore/isa_table.cpp); tests/ check that this\n"
    "file matches it. The DV ISA is davinci-vp's own Da Vinci-style encoding: the real chips' encoding is\n"
    "not public, but the instruction classes, pipes, operands and rules are those of the hardware\n"
    "(../shared/reference/hardware-facts.md, seeds 000, 001, 003, 004).\n\n"
    "## Machine model\n\n"
    "- 32 scalar registers `x0`..`x31`, 64 bits; `x0` reads 0 and ignores writes.\n"
    "- Every instruction is one little-endian 64-bit word; the pc counts bytes.\n"
    "- The scalar unit (pipe S) executes S instructions in order. Every other instruction is *issued*:\n"
    "  its register operands (and the special registers it uses: mask0/mask1, fmatrix, padvalue) are read\n"
    "  at issue, and it joins the in-order queue of its pipe (MTE1, MTE2,\n"
    "  MTE3, M = cube, V = vector, FIX = FixPipe). A full queue stalls issue. Pipes run in parallel;\n"
    "  `setflag` / `waitflag` and `barrier` order them.\n"
    "- Buffers: L1, L0A, L0B, L0C, UB (byte addresses from 0 within each). Alignment: UB and L1 32 B,\n"
    "  L0A and L0B 512 B, L0C 64 B. An access out of range or misaligned stops the core with its core,\n"
    "  pc, instruction and address.\n"
    "- GM is the SoC's DRAM, reached through the core's bus interface (ring, L2, DRAM).\n\n"
    "## Word layout\n\n"
    "| bits | field |\n|---|---|\n"
    "| 63:56 | opcode (index in the table below) |\n"
    "| 55:51, 50:46, 45:41, 40:36 | registers a, b, c, d |\n"
    "| 35:31 | register e (issued instructions) |\n"
    "| 30:27, 26:23 | dt1, dt2 (issued instructions): 0 none, 1 f16, 2 bf16, 3 f32, 4 s8, 5 u8, 6 s16, 7 u16, 8 s32, 9 "
    "u32 |\n"
    "| 22:15 | mode (issued instructions): 2:0 rounding (0 none, 1 rint, 2 floor, 3 ceil, 4 round, 5 trunc, 6 odd), 3 "
    "relu, 4 transpose, 7:5 compare (0 eq, 1 ne, 2 lt, 3 le, 4 gt, 5 ge) |\n"
    "| 31:0 | imm (scalar, branch, flag and spr formats): branch and jump offsets count instructions from the branch "
    "|\n\n"
    "`setflag`/`waitflag` imm: src pipe [3:0], dst pipe [7:4], event [11:8]; pipes numbered S 0, MTE1 1,\n"
    "MTE2 2, MTE3 3, M 4, V 5, FIX 6.\n\n"
    "## Assembly syntax\n\n"
    "```\n"
    "# comment (also ; and //)\n"
    ".equ TILE, 256          # a named constant\n"
    "loop:                   # a label\n"
    "    li     x1, TILE\n"
    "    li64   x2, 0x123456789   # pseudo: li + lih\n"
    "    vadd.f16 x3, x4, x5, x6\n"
    "    vconv.f16.f32.rint x3, x4, x6\n"
    "    setflag mte2, v, 0\n"
    "    bne    x1, x0, loop\n"
    "    end\n"
    "```\n\n"
    "Suffixes of issued instructions come in order: data types (as many as the instruction takes), then\n"
    "rounding, `.relu`, `.t`, compare.\n\n"
    "## Special registers\n\n| spr | meaning |\n|---|---|\n";
const char* const kIsaFormats =
    "\n## Matrix formats\n\n"
    "k0 = 32 bytes / element size (fp16 and bf16 16, int8 32, fp32 8). A fractal is 16 rows x k0\n"
    "columns (512 bytes) for cube inputs, 16 x 16 of the accumulator type (1024 bytes) in L0C.\n\n"
    "| where | layout |\n|---|---|\n"
    "| GM | ND: row-major, `src_stride` elements between rows |\n"
    "| L1 (`nd2nz`) | Nz: a matrix of R rows (padded to `dst_rows`) x C columns (padded to a multiple of k0); fractal "
    "(rb, cb) at byte (cb x dst_rows/16 + rb) x 512, row-major inside |\n"
    "| L1 (`load3d`) | a feature map as C1 x H x W x C0 (C0 = k0): element (c, h, w) at ((c / C0 x H + h) x W + w) x "
    "32 + (c mod C0) x size; img2col column k = ((c1 x kh + i) x kw + j) x C0 + c0, row p = ho x Wo + wo |\n"
    "| L0A | A (m x k) as zZ: fractal (i, j) covering rows 16i.. and k k0 j.. at (i x kf + j) x 512, row-major inside "
    "|\n"
    "| L0B | B (k x n) as zN, held as fractals of B transposed: fractal (l, j) covering n 16l.. and k k0 j.. at (l x "
    "kf + j) x 512, 16 (n) x k0 (k) row-major inside |\n"
    "| L0C | C (m x n) as Nz: fractal (i, l) at (l x mf + i) x 1024, 16 x 16 row-major inside |\n\n"
    "kf = ceil(k / k0), mf = ceil(m / 16), nf = ceil(n / 16). An fp16 B stored row-major (k x n) in GM\n"
    "reaches L0B's order through `nd2nz` (rows = k) and one `load2d.l0b.t`; A reaches zZ with one\n"
    "`load2d.l0a` per row of fractals (src_stride = dst_rows / 16). `mmad` adds the exact dot products\n"
    "of its m x k x n to L0C, rounded once to the accumulator type (int32 wraps).\n"
    "\n## Configuration words\n\n"
    "Issued instructions take their shape from 64-bit configuration words in registers.\n\n"
    "| word | fields (bit ranges) |\n|---|---|\n"
    "| DataCopyCfg | block_count [11:0] (1..4095), block_len [27:12] (32 B units, 1..65535), src_gap [43:28], dst_gap "
    "[59:44] (32 B units), no_alloc [60] (a GM read that misses in the L2 does not allocate there) |\n"
    "| VecCfg | repeat [7:0] (1..255), dst_blk [15:8], src0_blk [23:16], src1_blk [31:24], dst_rep [39:32], src0_rep "
    "[47:40], src1_rep [55:48] (32 B units) |\n"
    "| MmadCfg | m [11:0], k [23:12], n [35:24] (0..4095), init [36] (1: C = A x B, 0: C += A x B) |\n"
    "| Load2dCfg | repeat [7:0] (fractals), src_stride [23:8] (fractals), dst_gap [39:24] (fractals) |\n"
    "| Load3dCfg word 1 | kh [7:0], kw [15:8], stride_h [23:16], stride_w [31:24], dil_h [39:32], dil_w [47:40], "
    "channels [63:48] |\n"
    "| Load3dCfg word 2 | k_start [15:0], k_ext [31:16], m_start [47:32], m_ext [63:48] |\n"
    "| FixpCfg | m [15:0], n [31:16], dst_stride [55:32] (elements between output rows), src_fractals [63:56] (the "
    "L0C matrix's height in 16-row fractals when taller than m; 0: ceil(m / 16)) |\n"
    "| Nd2NzCfg | rows [15:0], cols [31:16] (elements), src_stride [47:32] (elements between source rows), dst_rows "
    "[63:48] (padded height, a multiple of 16) |\n"
    "| AippCfg | x [15:0], y [31:16] (the crop's first column and row in the picture), w [47:32], h [63:48] |\n\n"
    "## AIPP\n\n"
    "`aipp.gm2l1` converts a crop of a u8 picture in GM (NV12, NV21, grey or RGB888 at SPR aipp_src's pitch; the\n"
    "chroma plane of 4:2:0 after plane_rows rows of Y) into f16 in L1: position (r, c) of the crop at\n"
    "((r x w + c) x c0 + channel) x 2 bytes. A pixel's channels are (Y, U, V) (U V: its 2 x 2 block's pair) or (R, G,\n"
    "B) or (Y). With aipp_src.csc, out_k = clamp(((sum over j of m_kj x (in_j - in_bias_j)) >> 8) + out_bias_k, 0, "
    "255),\nan arithmetic shift (floor); then y_k = (out_k - mean_k - min_k) x var_k computed in f32 and rounded once "
    "to f16;\nchannels past the picture's are 0. Time: `mte_startup_cycles`, then each row of the crop read (its Y or "
    "RGB\nbytes; a chroma row with the first row and every even row after it) at `gm_read_bytes_per_cycle` through the "
    "ring, L2 and DRAM, and no "
    "less\nthan the crop's pixels at `aipp_pixels_per_cycle`. This is CANN's AIPP: the matrix, biases, means, minimums "
    "and\nreciprocals of the variance are its aipp configuration's.\n\n"
    "## Instructions\n\nCost: what the instruction's time is made of, in cycles of the AI Core clock (keys "
    "of\n`platform.aicore`).\n\n| opcode | mnemonic | pipe | operands | suffixes | meaning | cost "
    "|\n|---|---|---|---|---|---|---|\n";

std::string suffix_text(const OpInfo& o) {
  std::string suf = o.dtypes == 1 ? ".dt" : o.dtypes == 2 ? ".dt1.dt2" : "";
  if (o.suffixes & kSufRound) suf += " .round";
  if (o.suffixes & kSufRelu) suf += " .relu";
  if (o.suffixes & kSufTranspose) suf += " .t";
  if (o.suffixes & kSufCmp) suf += " .cmp";
  return suf;
}

}  // namespace

std::string isa_markdown() {
  std::ostringstream os;
  os << kIsaIntro;
  for (int s = 0; s < int(Spr::Count_); ++s) os << "| `" << spr_name(Spr(s)) << "` | " << spr_doc(Spr(s)) << " |\n";
  os << kIsaFormats;
  const std::vector<OpInfo>& ops = op_table();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpInfo& o = ops[i];
    os << "| " << i << " | `" << o.mnemonic << "` | " << pipe_name(o.pipe) << " | " << o.operands << " | "
       << suffix_text(o) << " | " << o.doc << " | " << cost_doc(o.cost) << " |\n";
  }
  return os.str();
}

}  // namespace dvp::aicore
