// SPDX-License-Identifier: MIT
// Tensor files: NumPy .npy (format versions 1.0, 2.0 and 3.0, C order, either byte order) and
// raw binary (little-endian elements of the tensor's type, nothing else). The platform's
// element types map onto NumPy's: f16 <f2, f32 <f4, s8 |i1, u8 |u1, s16 <i2, u16 <u2, s32 <i4,
// u32 <u4; NumPy has no bfloat16, so a bf16 tensor's file is <u2 holding the bf16 bit patterns
// (x.view(np.uint16) of an ml_dtypes bfloat16 array, or (f32 bits >> 16) rounded).
//
// Every problem (a missing file, a wrong magic, a header that is not NumPy's, a type the
// platform cannot hold, a shape that disagrees, a truncated file) is a dvp::Error naming the
// file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "aicore/isa.hpp"

namespace dvp::platform {

// What a .npy header says.
struct NpyHeader {
  char kind = 0;          // NumPy's type kind: 'f' float, 'i' signed, 'u' unsigned, 'b' bool
  unsigned itemsize = 0;  // bytes per element
  bool big_endian = false;
  std::vector<std::uint64_t> shape;  // () for a 0-d array: one element
  std::uint64_t data_offset = 0;     // where the elements start in the file
  std::string descr;                 // as written, for messages ('<f4')
  std::uint64_t elements() const;
  std::uint64_t data_bytes() const { return elements() * itemsize; }
};

// Parses the header at the start of `bytes` (at least the whole header; `n` may be the whole
// file). `name` names the file in errors.
NpyHeader parse_npy_header(const std::uint8_t* bytes, std::size_t n, const std::string& name);
// Reads only the header of the file at `path`.
NpyHeader read_npy_header(const std::string& path);

// The NumPy type of a platform type (bf16: <u2), and whether a file's type is it.
std::string npy_descr(aicore::DType t);
bool npy_matches(const NpyHeader& h, aicore::DType t);

// Reads a file's elements into `out` (`count` elements of type `t`), converting from the file's
// type if `convert` (a numeric conversion, rounded to nearest even) or requiring the exact type
// if not. `h` is the file's header (.npy), or null for a raw file of exactly count elements.
void read_tensor_data(const std::string& path, const NpyHeader* h, aicore::DType t, std::uint64_t count, bool convert,
                      std::uint8_t* out);

// Writes `count` elements of type `t` as a .npy file of the given shape (empty: a scalar's when
// count is 1, else one dimension of count elements), or as raw bytes if the path does not end in
// .npy. Throws dvp::Error naming
// the file if it cannot be written.
void write_tensor_file(const std::string& path, aicore::DType t, const std::vector<std::uint64_t>& shape,
                       const std::uint8_t* data, std::uint64_t count);

bool is_npy_path(const std::string& path);
// A kernel's, a tensor's or a graph output's name as a file name: what a file system could misread
// (a '/', a space) becomes '_'; letters, digits, '.', '-' and '_' stay.
std::string file_name_of(const std::string& name);

}  // namespace dvp::platform
