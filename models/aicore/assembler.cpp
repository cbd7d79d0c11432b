// SPDX-License-Identifier: MIT
#include "assembler.hpp"

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/error.hpp"

namespace dvp::aicore {

// --- image ------------------------------------------------------------------------------------

std::vector<std::uint8_t> Image::bytes() const {
  std::vector<std::uint8_t> b(32 + code.size() * 8, 0);
  std::memcpy(b.data(), "DVK1", 4);
  auto put32 = [&](std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b[at + i] = std::uint8_t(v >> (8 * i));
  };
  put32(4, 1);
  put32(8, entry);
  put32(12, std::uint32_t(code.size() * 8));
  for (std::size_t i = 0; i < code.size(); ++i)
    for (int k = 0; k < 8; ++k) b[32 + i * 8 + k] = std::uint8_t(code[i] >> (8 * k));
  return b;
}

Image Image::from_bytes(const std::vector<std::uint8_t>& b, const std::string& name) {
  auto get32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= std::uint32_t(b[at + i]) << (8 * i);
    return v;
  };
  if (b.size() < 32 || std::memcmp(b.data(), "DVK1", 4) != 0)
    throw Error(name + ": not a DV kernel image (no DVK1 header)");
  if (get32(4) != 1) throw Error(name + ": kernel image version " + std::to_string(get32(4)) + ", expected 1");
  const std::uint32_t n = get32(12);
  if (n % 8 || 32 + std::size_t(n) != b.size())
    throw Error(name + ": code size " + std::to_string(n) + " does not match the file (" + std::to_string(b.size()) +
                " bytes)");
  Image img;
  img.entry = get32(8);
  if (img.entry % 8 || img.entry >= n) throw Error(name + ": entry " + hex(img.entry) + " is not an instruction");
  img.code.resize(n / 8);
  for (std::size_t i = 0; i < img.code.size(); ++i)
    for (int k = 0; k < 8; ++k) img.code[i] |= std::uint64_t(b[32 + i * 8 + k]) << (8 * k);
  return img;
}

Image Image::load(const std::string& path) {
  // A kernel image is a regular file of at most 64 MiB (8 Mi instructions): a device or a
  // directory is named, not read forever.
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw Error(path + ": not a regular file");
  if (std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) > (64u << 20))
    throw Error(path + ": larger than 64 MiB, not a kernel image");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open");
  std::vector<std::uint8_t> b((std::istreambuf_iterator<char>(f)), {});
  return from_bytes(b, path);
}

void Image::save(const std::string& path) const {
  std::ofstream f(path, std::ios::binary);
  auto b = bytes();
  f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  if (!f) throw Error(path + ": cannot write");
}

// --- assembler --------------------------------------------------------------------------------

namespace {

std::string trim(const std::string& s) {
  std::size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(trim(cur));
  return out;
}

bool is_ident(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

struct Line {
  int number;
  std::string mnemonic;  // lower case, with suffixes
  std::vector<std::string> operands;
  std::uint64_t pc;
};

class Assembler {
 public:
  Assembler(const std::string& file) : file_(file) {}

  Image run(const std::string& text) {
    parse(text);
    Image img;
    for (const Line& l : lines_) emit(l, img.code);
    if (!entry_label_.empty()) img.entry = std::uint32_t(label(entry_label_, entry_line_));
    if (img.code.empty()) fail(0, "no instructions");
    return img;
  }

 private:
  [[noreturn]] void fail(int line, const std::string& msg) const {
    throw Error(file_ + ":" + std::to_string(line) + ": " + msg);
  }

  void parse(const std::string& text) {
    std::istringstream in(text);
    std::string raw;
    std::uint64_t pc = 0;
    for (int n = 1; std::getline(in, raw); ++n) {
      std::string s = raw;
      for (const char* c : {"#", ";", "//"}) {
        auto p = s.find(c);
        if (p != std::string::npos) s.resize(p);
      }
      s = trim(s);
      // Labels, possibly several, before an instruction.
      for (auto colon = s.find(':'); colon != std::string::npos && is_ident(trim(s.substr(0, colon)));
           colon = s.find(':')) {
        std::string name = trim(s.substr(0, colon));
        if (labels_.count(name) || equs_.count(name)) fail(n, "'" + name + "' is defined twice");
        labels_[name] = pc;
        s = trim(s.substr(colon + 1));
      }
      if (s.empty()) continue;
      auto sp = s.find_first_of(" \t");
      std::string head = s.substr(0, sp);
      for (auto& c : head) c = char(std::tolower(static_cast<unsigned char>(c)));
      std::string rest = sp == std::string::npos ? "" : trim(s.substr(sp));
      std::vector<std::string> ops = rest.empty() ? std::vector<std::string>{} : split(rest, ',');
      if (head == ".equ") {
        if (ops.size() != 2 || !is_ident(ops[0])) fail(n, "expected .equ NAME, value");
        if (labels_.count(ops[0]) || equs_.count(ops[0])) fail(n, "'" + ops[0] + "' is defined twice");
        equs_[ops[0]] = value(ops[1], n);
        continue;
      }
      if (head == ".entry") {
        if (ops.size() != 1) fail(n, "expected .entry label");
        entry_label_ = ops[0];
        entry_line_ = n;
        continue;
      }
      if (head[0] == '.') fail(n, "unknown directive '" + head + "'");
      lines_.push_back(Line{n, head, ops, pc});
      pc += (head == "li64" ? 16 : 8);
    }
  }

  // A number, an .equ name, or terms joined by + and -.
  std::int64_t value(const std::string& expr, int line) const {
    std::int64_t total = 0;
    std::string term;
    int sign = 1;
    auto flush = [&]() {
      std::string t = trim(term);
      if (t.empty()) fail(line, "missing value in '" + expr + "'");
      std::int64_t v;
      if (std::isdigit(static_cast<unsigned char>(t[0]))) {
        try {
          std::size_t used;
          v = std::int64_t(std::stoull(t, &used, 0));
          if (used != t.size()) throw std::invalid_argument(t);
        } catch (const std::exception&) {
          fail(line, "bad number '" + t + "'");
        }
      } else if (equs_.count(t)) {
        v = equs_.at(t);
      } else {
        fail(line, "unknown name '" + t + "'");
      }
      // Numbers are 64-bit patterns (0xffffffffffffffff is -1); a sum past 64 bits is an error,
      // not a silent wrap.
      const bool over = sign > 0 ? __builtin_add_overflow(total, v, &total) : __builtin_sub_overflow(total, v, &total);
      if (over) fail(line, "'" + trim(expr) + "' overflows 64 bits");
      term.clear();
    };
    std::string e = trim(expr);
    for (std::size_t i = 0; i < e.size(); ++i) {
      char c = e[i];
      if ((c == '+' || c == '-') && trim(term).empty() && i == 0) {
        sign = c == '-' ? -1 : 1;
      } else if ((c == '+' || c == '-') && !trim(term).empty()) {
        flush();
        sign = c == '-' ? -1 : 1;
      } else {
        term += c;
      }
    }
    flush();
    return total;
  }

  // A branch target: a label, or an .equ name giving a byte offset in the image (how dvdis
  // writes a target outside the image, where no label can stand).
  std::uint64_t label(const std::string& name, int line) const {
    if (auto it = labels_.find(trim(name)); it != labels_.end()) return it->second;
    if (auto it = equs_.find(trim(name)); it != equs_.end()) return std::uint64_t(it->second);
    fail(line, "undefined label '" + trim(name) + "'");
  }

  std::uint8_t reg(const std::string& s, int line) const {
    std::string t = trim(s);
    if (t == "zero") return 0;
    if (t.size() >= 2 && t[0] == 'x') {
      try {
        std::size_t used;
        unsigned long r = std::stoul(t.substr(1), &used, 10);
        if (used == t.size() - 1 && r < 32) return std::uint8_t(r);
      } catch (const std::exception&) {}
    }
    fail(line, "expected a register x0..x31, got '" + t + "'");
  }

  std::int32_t imm32(const std::string& s, int line, std::int64_t lo, std::int64_t hi) const {
    std::int64_t v = value(s, line);
    if (v < lo || v > hi)
      fail(line, "immediate " + std::to_string(v) + " out of range " + std::to_string(lo) + ".." + std::to_string(hi));
    return std::int32_t(std::uint32_t(std::uint64_t(v)));
  }

  Pipe pipe(const std::string& s, int line) const {
    std::string t = trim(s);
    for (auto& c : t) c = char(std::tolower(static_cast<unsigned char>(c)));
    static const std::map<std::string, Pipe> aliases = {
        {"scalar", Pipe::S}, {"cube", Pipe::M}, {"vector", Pipe::V}, {"fixp", Pipe::FIX}, {"fixpipe", Pipe::FIX}};
    if (auto a = aliases.find(t); a != aliases.end()) return a->second;
    if (auto p = pipe_from(t)) return *p;
    fail(line, "expected a pipe (s, mte1, mte2, mte3, m, v, fix), got '" + trim(s) + "'");
  }

  void need(const Line& l, std::size_t n, const char* what) const {
    if (l.operands.size() != n)
      fail(l.number, l.mnemonic + " takes " + std::to_string(n) + " operand" + (n == 1 ? "" : "s") + " (" + what +
                         "), got " + std::to_string(l.operands.size()));
  }

  static constexpr std::int64_t kS32Lo = -(std::int64_t(1) << 31), kS32Hi = (std::int64_t(1) << 31) - 1;
  static constexpr std::int64_t kU32Hi = (std::int64_t(1) << 32) - 1;

  void emit(const Line& l, std::vector<std::uint64_t>& code) {
    if (l.mnemonic == "li64") return emit_li64(l, code);
    // The mnemonic is the longest dotted prefix found in the table; the rest are suffixes.
    std::vector<std::string> parts = split(l.mnemonic, '.');
    std::optional<std::uint8_t> op;
    std::size_t used = 0;
    for (std::size_t k = parts.size(); k >= 1 && !op; --k) {
      std::string m = parts[0];
      for (std::size_t j = 1; j < k; ++j) m += "." + parts[j];
      if ((op = find_opcode(m))) used = k;
    }
    if (!op) fail(l.number, "unknown instruction '" + l.mnemonic + "'");
    Instr i;
    i.op = *op;
    const OpInfo& info = i.info();
    const std::vector<std::string> suffixes(parts.begin() + std::ptrdiff_t(used), parts.end());
    if (info.format != Format::X && !suffixes.empty())
      fail(l.number, std::string(info.mnemonic) + " takes no suffix ('." + suffixes[0] + "')");
    const OperandReader read = kReaders[std::size_t(info.format)];
    need(l, read.count < 0 ? info.regs : std::size_t(read.count), info.operands);
    (this->*read.fn)(l, i);
    if (info.format == Format::X) suffixes_of(l, suffixes, i);
    code.push_back(encode(i));
  }

  void emit_li64(const Line& l, std::vector<std::uint64_t>& code) {  // pseudo: li + lih
    need(l, 2, "rd, imm64");
    const std::uint64_t v = std::uint64_t(value(l.operands[1], l.number));
    Instr lo, hi;
    lo.op = *find_opcode("li");
    lo.a = reg(l.operands[0], l.number);
    lo.imm = std::int32_t(std::uint32_t(v));
    hi.op = *find_opcode("lih");
    hi.a = lo.a;
    hi.imm = std::int32_t(std::uint32_t(v >> 32));
    code.push_back(encode(lo));
    code.push_back(encode(hi));
  }

  // The operands of each format: how many (-1: the instruction's register count) and the
  // reader that fills the instruction's fields from them.
  struct OperandReader {
    int count;
    void (Assembler::*fn)(const Line&, Instr&);
  };
  static const OperandReader kReaders[];

  // An immediate of the kind the instruction reads (OpInfo::imm).
  std::int32_t immediate(const std::string& s, const Instr& i, int n) {
    switch (i.info().imm) {
      case Imm::Shift: return imm32(s, n, 0, 63);
      case Imm::Unsigned: return imm32(s, n, kS32Lo, kU32Hi);
      default: {
        const std::int64_t v = value(s, n);
        if (i.info().format == Format::LI && (v < kS32Lo || v > kS32Hi))
          fail(n, std::string(i.info().mnemonic) + " takes a signed 32-bit immediate; " + std::to_string(v) +
                      " needs li64");
        return imm32(s, n, kS32Lo, kS32Hi);
      }
    }
  }
  std::int32_t branch_offset(const Line& l, const std::string& target) {
    const std::int64_t bytes = std::int64_t(label(target, l.number) - l.pc);  // wraps like the pc
    if (bytes % 8)
      fail(l.number, "branch target '" + trim(target) + "' is not on an instruction (a multiple of 8 bytes)");
    if (bytes / 8 < kS32Lo || bytes / 8 > kS32Hi)
      fail(l.number, "branch target '" + trim(target) + "' is out of reach");
    return std::int32_t(bytes / 8);
  }
  void r_none(const Line&, Instr&) {}
  void r_r3(const Line& l, Instr& i) {
    i.a = reg(l.operands[0], l.number), i.b = reg(l.operands[1], l.number), i.c = reg(l.operands[2], l.number);
  }
  void r_ri(const Line& l, Instr& i) {
    i.a = reg(l.operands[0], l.number), i.b = reg(l.operands[1], l.number);
    i.imm = immediate(l.operands[2], i, l.number);
  }
  void r_li(const Line& l, Instr& i) {
    i.a = reg(l.operands[0], l.number);
    i.imm = immediate(l.operands[1], i, l.number);
  }
  void r_memory(const Line& l, Instr& i) {  // rd, imm(rs1) or rs2, imm(rs1)
    const std::string& m = l.operands[1];
    const auto lp = m.find('('), rp = m.rfind(')');
    if (lp == std::string::npos || rp == std::string::npos || rp < lp || trim(m.substr(rp + 1)) != "")
      fail(l.number, "expected imm(rs1), got '" + m + "'");
    const std::string off = trim(m.substr(0, lp));
    i.imm = off.empty() ? 0 : imm32(off, l.number, kS32Lo, kS32Hi);
    i.b = reg(m.substr(lp + 1, rp - lp - 1), l.number);
    (i.info().format == Format::Load ? i.a : i.c) = reg(l.operands[0], l.number);
  }
  void r_branch(const Line& l, Instr& i) {
    i.b = reg(l.operands[0], l.number), i.c = reg(l.operands[1], l.number);
    i.imm = branch_offset(l, l.operands[2]);
  }
  void r_jump(const Line& l, Instr& i) { i.imm = branch_offset(l, l.operands[0]); }
  void r_jump_link(const Line& l, Instr& i) {
    i.a = reg(l.operands[0], l.number);
    i.imm = branch_offset(l, l.operands[1]);
  }
  void r_r1(const Line& l, Instr& i) { i.b = reg(l.operands[0], l.number); }
  void r_spr(const Line& l, Instr& i) {
    const bool from = i.info().format == Format::Mfspr;
    const std::string name = trim(l.operands[from ? 1 : 0]);
    const auto spr = spr_from(name);
    if (!spr) fail(l.number, "unknown special register '" + name + "'");
    i.imm = std::int32_t(*spr);
    (from ? i.a : i.b) = reg(l.operands[from ? 0 : 1], l.number);
  }
  void r_flag(const Line& l, Instr& i) {
    const Pipe src = pipe(l.operands[0], l.number), dst = pipe(l.operands[1], l.number);
    const std::int32_t ev = imm32(l.operands[2], l.number, 0, 7);
    if (src == dst) fail(l.number, "a flag joins two different pipes");
    i.imm = std::int32_t(src) | std::int32_t(dst) << 4 | ev << 8;
  }
  void r_barrier(const Line& l, Instr& i) {
    i.imm = std::int32_t(pipe(l.operands[0], l.number));
    if (Pipe(i.imm) == Pipe::S) fail(l.number, "barrier on the scalar pipe is not allowed");
  }
  void r_x(const Line& l, Instr& i) {
    std::uint8_t* r[5] = {&i.a, &i.b, &i.c, &i.d, &i.e};
    for (unsigned k = 0; k < i.info().regs; ++k) *r[k] = reg(l.operands[k], l.number);
  }

  // The suffixes of an issued instruction: data types, then rounding, .relu, .t, compare.
  void suffixes_of(const Line& l, const std::vector<std::string>& suffixes, Instr& i) {
    const OpInfo& info = i.info();
    const int n = l.number;
    std::size_t s = 0;
    for (unsigned k = 0; k < info.dtypes; ++k, ++s) {
      if (s >= suffixes.size())
        fail(n, std::string(info.mnemonic) + " needs " + std::to_string(info.dtypes) + " data type suffix" +
                    (info.dtypes > 1 ? "es" : "") + ", e.g. ." + (info.dtypes > 1 ? "f32.f16" : "f16"));
      const auto t = dtype_from(suffixes[s]);
      if (!t) fail(n, "unknown data type '." + suffixes[s] + "'");
      (k == 0 ? i.dt1 : i.dt2) = *t;
    }
    bool has_cmp = false;
    for (; s < suffixes.size(); ++s) {
      const std::string& x = suffixes[s];
      static const char* rounds[] = {"rint", "floor", "ceil", "round", "trunc", "odd"};
      static const char* cmps[] = {"eq", "ne", "lt", "le", "gt", "ge"};
      bool ok = false;
      for (int k = 0; k < 6 && !ok; ++k)
        if (x == rounds[k] && (info.suffixes & kSufRound))
          i.mode = std::uint8_t((i.mode & ~mode::kRoundMask) | (k + 1)), ok = true;
      for (int k = 0; k < 6 && !ok; ++k)
        if (x == cmps[k] && (info.suffixes & kSufCmp))
          i.mode |= std::uint8_t(k << mode::kCmpShift), ok = has_cmp = true;
      if (!ok && x == "relu" && (info.suffixes & kSufRelu)) i.mode |= mode::kRelu, ok = true;
      if (!ok && x == "t" && (info.suffixes & kSufTranspose)) i.mode |= mode::kTranspose, ok = true;
      if (!ok) fail(n, std::string(info.mnemonic) + " does not take the suffix '." + x + "'");
    }
    if ((info.suffixes & kSufCmp) && !has_cmp)
      fail(n, std::string(info.mnemonic) + " needs a compare suffix (.eq .ne .lt .le .gt .ge)");
  }

  std::string file_;
  std::vector<Line> lines_;
  std::map<std::string, std::uint64_t> labels_;
  std::map<std::string, std::int64_t> equs_;
  std::string entry_label_;
  int entry_line_ = 0;
};

// Indexed by Format.
const Assembler::OperandReader Assembler::kReaders[] = {
    {0, &Assembler::r_none},       // None
    {3, &Assembler::r_r3},         // R3
    {3, &Assembler::r_ri},         // RI
    {2, &Assembler::r_li},         // LI
    {2, &Assembler::r_memory},     // Load
    {2, &Assembler::r_memory},     // Store
    {3, &Assembler::r_branch},     // Branch
    {1, &Assembler::r_jump},       // Jump
    {2, &Assembler::r_jump_link},  // JumpLink
    {1, &Assembler::r_r1},         // R1
    {2, &Assembler::r_spr},        // Mfspr
    {2, &Assembler::r_spr},        // Mtspr
    {3, &Assembler::r_flag},       // Flag
    {1, &Assembler::r_barrier},    // Barrier
    {-1, &Assembler::r_x},         // X
};

}  // namespace

Image assemble(const std::string& text, const std::string& file) { return Assembler(file).run(text); }

std::string disassemble(const Image& img) {
  std::vector<Instr> ins;
  std::set<std::uint64_t> targets;
  for (std::size_t k = 0; k < img.code.size(); ++k) {
    Instr i;
    try {
      i = decode(img.code[k]);
    } catch (const Error& e) {
      throw Error("offset " + hex(k * 8) + ": " + e.what());
    }
    Format f = i.info().format;
    if (f == Format::Branch || f == Format::Jump || f == Format::JumpLink)
      targets.insert(std::uint64_t(std::int64_t(k * 8) + std::int64_t(i.imm) * 8));
    ins.push_back(i);
  }
  if (img.entry) targets.insert(img.entry);
  auto name = [](std::uint64_t pc) {
    char b[24];
    std::snprintf(b, sizeof b, "L%04llx", (unsigned long long)pc);
    return std::string(b);
  };
  std::ostringstream os;
  os << "# " << img.code.size() << " instructions\n";
  // A target outside the image has no instruction to carry its label: an .equ gives its offset.
  for (auto t : targets)
    if (t >= img.code.size() * 8) os << ".equ " << name(t) << ", " << hex(t) << "  # outside the image\n";
  if (img.entry) os << ".entry " << name(img.entry) << "\n";
  for (std::size_t k = 0; k < ins.size(); ++k) {
    const std::uint64_t pc = k * 8;
    if (targets.count(pc)) os << name(pc) << ":\n";
    Format f = ins[k].info().format;
    std::string tgt;
    if (f == Format::Branch || f == Format::Jump || f == Format::JumpLink)
      tgt = name(std::uint64_t(std::int64_t(pc) + std::int64_t(ins[k].imm) * 8));
    char addr[32];
    std::snprintf(addr, sizeof addr, "  # %04llx", (unsigned long long)pc);
    os << "    " << format_instr(ins[k], pc, tgt) << addr << "\n";
  }
  return os.str();
}

}  // namespace dvp::aicore
