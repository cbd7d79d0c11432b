// SPDX-License-Identifier: MIT
// The .npy format (numpy.lib.format): the magic "\x93NUMPY", a major and minor version byte, the
// header length (u16 in 1.0, u32 in 2.0 and 3.0), then the header: a Python dict literal with
// 'descr', 'fortran_order' and 'shape', padded with spaces to a 64-byte boundary and ended by a
// newline; the elements follow.
#include "tensor_file.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "aicore/numeric.hpp"
#include "common/error.hpp"

namespace dvp::platform {

namespace fs = std::filesystem;
using aicore::DType;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::uint64_t kMaxHeader = 1 << 20;  // NumPy writes a few hundred bytes

// A reader of the header's dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class DictReader {
 public:
  DictReader(std::string text, const std::string& name) : s_(std::move(text)), name_(name) {}
  NpyHeader read();

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(name_ + ": not a NumPy .npy header (" + what + " at byte " + std::to_string(i_) + " of the header)");
  }
  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool take(char c) {
    space();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(std::string("expected '") + c + "'");
  }
  std::string string();
  std::string word();
  std::vector<std::uint64_t> tuple();
  std::string s_;
  std::size_t i_ = 0;
  const std::string& name_;
};

std::string DictReader::string() {
  space();
  if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) fail("expected a string");
  const char q = s_[i_++];
  const std::size_t end = s_.find(q, i_);
  if (end == std::string::npos) fail("an unterminated string");
  std::string v = s_.substr(i_, end - i_);
  i_ = end + 1;
  return v;
}

std::string DictReader::word() {
  space();
  const std::size_t b = i_;
  while (i_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[i_]))) ++i_;
  return s_.substr(b, i_ - b);
}

std::vector<std::uint64_t> DictReader::tuple() {
  expect('(');
  std::vector<std::uint64_t> v;
  while (!take(')')) {
    const std::string w = word();
    if (w.empty() || !std::all_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; }))
      fail("a shape entry that is not a whole number");
    if (w.size() > 19)
      fail("a shape entry of " + std::to_string(w.size()) + " digits (a .npy shape holds at most 2^62 elements)");
    v.push_back(std::stoull(w));
    if (v.size() > 32) fail("more than 32 dimensions");
    if (!take(',')) {
      expect(')');
      break;
    }
  }
  return v;
}

NpyHeader DictReader::read() {
  NpyHeader h;
  bool descr = false, order = false, shape = false;
  expect('{');
  while (!take('}')) {
    const std::string key = string();
    expect(':');
    if (key == "descr") {
      space();
      if (i_ < s_.size() && s_[i_] == '[') fail("a structured type (records are not tensors)");
      h.descr = string();
      descr = true;
    } else if (key == "fortran_order") {
      const std::string w = word();
      if (w != "False" && w != "True") fail("fortran_order that is neither True nor False");
      if (w == "True")
        throw Error(name_ + ": holds a Fortran-order (column-major) array; save it in C order (np.ascontiguousarray)");
      order = true;
    } else if (key == "shape") {
      h.shape = tuple();
      shape = true;
    } else {
      fail("an unknown key '" + key + "'");
    }
    if (!take(',')) {
      expect('}');
      break;
    }
  }
  if (!descr || !order || !shape) fail("a missing descr, fortran_order or shape");
  return h;
}

// '<f4' -> little-endian float of 4 bytes; '|u1' -> unsigned byte; '?' or '|b1' -> bool.
void read_descr(NpyHeader& h, const std::string& name) {
  const std::string& d = h.descr;
  if (d == "?" || d == "|b1") {
    h.kind = 'b', h.itemsize = 1;
    return;
  }
  if (d.size() != 3 || std::string("<>|=").find(d[0]) == std::string::npos ||
      std::string("fiu").find(d[1]) == std::string::npos || d[2] < '1' || d[2] > '8')
    throw Error(name + ": element type '" + d +
                "' is not a number the platform holds (it takes f2, f4, f8, i1..i8, u1..u8, b1)");
  h.kind = d[1];
  h.itemsize = unsigned(d[2] - '0');
  h.big_endian = d[0] == '>';
  const bool ok = h.kind == 'f' ? (h.itemsize == 2 || h.itemsize == 4 || h.itemsize == 8)
                                : (h.itemsize == 1 || h.itemsize == 2 || h.itemsize == 4 || h.itemsize == 8);
  if (!ok) throw Error(name + ": element type '" + d + "' has no platform counterpart");
}

// One element of the file's type (already in host, little-endian, order) as a double.
double file_value(const std::uint8_t* p, const NpyHeader& h) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, p, h.itemsize);
  if (h.kind == 'b') return bits ? 1.0 : 0.0;
  if (h.kind == 'f') {
    if (h.itemsize == 2) return aicore::num::f16(std::uint16_t(bits));
    if (h.itemsize == 4) return aicore::num::f32(std::uint32_t(bits));
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  if (h.kind == 'u') return double(bits);
  const unsigned shift = 64 - 8 * h.itemsize;  // sign-extend
  return double(std::int64_t(bits << shift) >> shift);
}

// (6,) for one dimension, (2, 3) for two: Python's tuple syntax.
std::string shape_tuple(const std::vector<std::uint64_t>& s) {
  std::string t = "(";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.size() == 1 ? ",)" : ")");
}

void swap_bytes(std::uint8_t* p, std::uint64_t count, unsigned size) {
  for (std::uint64_t i = 0; i < count; ++i) std::reverse(p + i * size, p + (i + 1) * size);
}

std::ifstream open_in(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw Error(path + ": is a directory, not a tensor file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open: " + std::strerror(errno));
  return f;
}

}  // namespace

std::uint64_t NpyHeader::elements() const {
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) {
    if (d && n > (std::uint64_t(1) << 62) / d) throw Error("a .npy shape of more than 2^62 elements");
    n *= d;
  }
  return n;
}

NpyHeader parse_npy_header(const std::uint8_t* b, std::size_t n, const std::string& name) {
  if (n < 10 || std::memcmp(b, kMagic, 6) != 0)
    throw Error(name + ": not a NumPy .npy file (it does not start with \\x93NUMPY)");
  const unsigned major = b[6];
  if (major < 1 || major > 3)
    throw Error(name + ": .npy format version " + std::to_string(major) + "." + std::to_string(b[7]) +
                " (the platform reads 1.0, 2.0 and 3.0)");
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (n < 8 + len_bytes) throw Error(name + ": truncated in its .npy header");
  std::uint64_t len = b[8] | (std::uint64_t(b[9]) << 8);
  if (major > 1) len |= (std::uint64_t(b[10]) << 16) | (std::uint64_t(b[11]) << 24);
  const std::uint64_t start = 8 + len_bytes;
  if (len > kMaxHeader) throw Error(name + ": a .npy header of " + std::to_string(len) + " bytes (at most 1 MiB)");
  if (start + len > n) throw Error(name + ": truncated in its .npy header");
  NpyHeader h = DictReader(std::string(reinterpret_cast<const char*>(b + start), len), name).read();
  read_descr(h, name);
  h.data_offset = start + len;
  try {
    (void)h.elements();
  } catch (const Error& e) {
    throw Error(name + ": " + e.what());
  }
  return h;
}

NpyHeader read_npy_header(const std::string& path) {
  std::ifstream f = open_in(path);
  std::vector<std::uint8_t> head(12);
  f.read(reinterpret_cast<char*>(head.data()), 12);
  head.resize(std::size_t(f.gcount()));
  if (head.size() >= 10 && std::memcmp(head.data(), kMagic, 6) == 0 && head[6] >= 1 && head[6] <= 3) {
    // The length field says how much more to read (bounded before any allocation).
    std::uint64_t len = head[8] | (std::uint64_t(head[9]) << 8);
    if (head[6] > 1 && head.size() == 12) len |= (std::uint64_t(head[10]) << 16) | (std::uint64_t(head[11]) << 24);
    if (len <= kMaxHeader) {
      head.resize(12 + len);
      f.read(reinterpret_cast<char*>(head.data() + 12), std::streamsize(len));
      head.resize(12 + std::size_t(f.gcount()));
    }
  }
  NpyHeader h = parse_npy_header(head.data(), head.size(), path);
  std::error_code ec;
  const std::uint64_t size = fs::file_size(path, ec);
  if (!ec && size != h.data_offset + h.data_bytes())
    throw Error(path + ": " + (size < h.data_offset + h.data_bytes() ? "truncated: " : "has trailing bytes: ") +
                std::to_string(size - h.data_offset) + " bytes of data, the header's shape needs " +
                std::to_string(h.data_bytes()));
  return h;
}

std::string npy_descr(DType t) {
  switch (t) {
    case DType::F16: return "<f2";
    case DType::F32: return "<f4";
    case DType::S8: return "|i1";
    case DType::U8: return "|u1";
    case DType::S16: return "<i2";
    case DType::BF16:  // bit patterns (NumPy has no bfloat16)
    case DType::U16: return "<u2";
    case DType::S32: return "<i4";
    case DType::U32: return "<u4";
    default: return "";
  }
}

bool npy_matches(const NpyHeader& h, DType t) {
  const std::string want = npy_descr(t);
  if (want.empty() || h.kind != want[1] || h.itemsize != unsigned(want[2] - '0')) return false;
  return true;  // either byte order: the reader swaps
}

// The file's element type as one the AI Core has, whose elements num::load_n decodes as
// file_value does; None for the others (8-byte and bool elements).
static DType file_dtype(const NpyHeader& h) {
  for (DType t : {DType::F16, DType::F32, DType::S8, DType::U8, DType::S16, DType::U16, DType::S32, DType::U32})
    if (npy_matches(h, t)) return t;
  return DType::None;
}

void read_tensor_data(const std::string& path, const NpyHeader* h, DType t, std::uint64_t count, bool convert,
                      std::uint8_t* out) {
  std::ifstream f = open_in(path);
  const unsigned eb = aicore::dtype_bytes(t);
  if (!h) {  // raw: exactly the tensor's bytes
    std::error_code ec;
    const std::uint64_t size = fs::file_size(path, ec);
    if (ec || size != count * eb)
      throw Error(path + ": a raw tensor file of " + (ec ? std::string("unknown size") : std::to_string(size)) +
                  " bytes; the tensor (" + std::to_string(count) + " x " + aicore::dtype_name(t) + ") needs " +
                  std::to_string(count * eb));
    f.read(reinterpret_cast<char*>(out), std::streamsize(count * eb));
    if (std::uint64_t(f.gcount()) != count * eb) throw Error(path + ": truncated while reading");
    return;
  }
  f.seekg(std::streamoff(h->data_offset));
  const bool same = npy_matches(*h, t);
  if (same) {
    f.read(reinterpret_cast<char*>(out), std::streamsize(count * eb));
    if (std::uint64_t(f.gcount()) != count * eb) throw Error(path + ": truncated while reading");
    if (h->big_endian) swap_bytes(out, count, eb);
    return;
  }
  if (!convert) throw Error(path + ": holds " + h->descr + ", not " + aicore::dtype_name(t));
  // Converted in pieces through a double, rounded once to the tensor's type: each piece decoded
  // and stored with the types chosen once (a network's weights are tens of millions of them); f32
  // into f16, a network's weights, directly. The buffers are not zeroed first (a 1 MiB piece and
  // its doubles were cleared for every file, a bias of 64 elements too).
  const std::uint64_t per = std::min<std::uint64_t>(count, (std::uint64_t(1) << 20) / h->itemsize);
  const DType from = file_dtype(*h);
  const bool direct = from == DType::F32 && t == DType::F16;
  std::unique_ptr<std::uint8_t[]> piece(new std::uint8_t[per * h->itemsize]);
  std::unique_ptr<double[]> values(direct ? nullptr : new double[per]);
  for (std::uint64_t i = 0; i < count; i += per) {
    const std::uint64_t n = std::min(per, count - i);
    f.read(reinterpret_cast<char*>(piece.get()), std::streamsize(n * h->itemsize));
    if (std::uint64_t(f.gcount()) != n * h->itemsize) throw Error(path + ": truncated while reading");
    if (h->big_endian) swap_bytes(piece.get(), n, h->itemsize);
    if (direct) {
      aicore::num::f16_from_f32_n(piece.get(), out + i * eb, n);
      continue;
    }
    if (from != DType::None)
      aicore::num::load_n(piece.get(), from, n, values.get());
    else
      for (std::uint64_t j = 0; j < n; ++j) values[j] = file_value(piece.get() + j * h->itemsize, *h);
    aicore::num::store_n(out + i * eb, t, values.get(), n);
  }
}

std::string file_name_of(const std::string& name) {
  std::string f = name;
  for (char& c : f)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return f;
}

bool is_npy_path(const std::string& path) { return path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0; }

void write_tensor_file(const std::string& path, DType t, const std::vector<std::uint64_t>& shape,
                       const std::uint8_t* data, std::uint64_t count) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw OutputError(path + ": cannot write: " + std::strerror(errno));
  if (is_npy_path(path)) {
    std::string dict = "{'descr': '" + npy_descr(t) + "', 'fortran_order': False, 'shape': " +
                       shape_tuple(shape.empty() && count != 1 ? std::vector<std::uint64_t>{count} : shape) + ", }";
    // Padded with spaces so that the data starts on a 64-byte boundary, ended by a newline.
    const std::size_t total = (10 + dict.size() + 1 + 63) / 64 * 64;
    dict.append(total - 10 - dict.size() - 1, ' ');
    dict += '\n';
    const std::uint16_t len = std::uint16_t(dict.size());
    f.write(kMagic, 6);
    f.put(1), f.put(0);
    f.put(char(len & 0xff)), f.put(char(len >> 8));
    f << dict;
  }
  f.write(reinterpret_cast<const char*>(data), std::streamsize(count * aicore::dtype_bytes(t)));
  f.close();
  if (!f) throw OutputError(path + ": write failed: " + std::strerror(errno));
}

}  // namespace dvp::platform
