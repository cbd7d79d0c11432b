// SPDX-License-Identifier: MIT
#include "aipp.hpp"

#include <algorithm>
#include <numeric>

#include "aicore/kernel_builder.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

std::uint64_t AippShape::in_bytes() const {
  const std::uint64_t plane = std::uint64_t(pitch) * plane_rows;
  return format == 6 ? 3 * plane : format == 5 ? plane : plane + std::uint64_t(pitch) * ((plane_rows + 1) / 2);
}

AippCsc aipp_yuv_to_rgb(unsigned csc) {
  // Rows R, G, B; columns Y, U, V; Q8 (256 = 1.0), the coefficients of each standard rounded.
  static const std::int16_t kMatrix[3][3][3] = {
      {{256, 0, 359}, {256, -88, -183}, {256, 454, 0}},   // BT.601 full range (JFIF)
      {{298, 0, 409}, {298, -100, -208}, {298, 516, 0}},  // BT.601 limited range
      {{298, 0, 459}, {298, -55, -136}, {298, 541, 0}},   // BT.709 limited range
  };
  if (csc > 2) throw Error("aipp: colour conversion " + std::to_string(csc) + " is no enum dvpp_csc");
  AippCsc c;
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) c.m[r][k] = kMatrix[csc][r][k];
  c.in_bias[0] = csc == 0 ? 0 : 16, c.in_bias[1] = c.in_bias[2] = 128;
  return c;
}

namespace {

// Rows a band must be a multiple of so that its output is whole 32-byte blocks.
std::uint32_t row_granule(const AippShape& s) {
  const std::uint64_t row = std::uint64_t(s.w) * s.c0 * 2;
  return std::uint32_t(32 / std::gcd<std::uint64_t>(row, 32));
}

void check_aipp(const AippShape& s) {
  if (!s.h || !s.w) throw Error("aipp: h and w must be at least 1");
  if (s.format != 1 && s.format != 2 && s.format != 5 && s.format != 6)
    throw Error("aipp: the picture is nv12, nv21, yuv400 or rgb888");
  if (s.c0 != 16 && s.c0 != 4) throw Error("aipp: c0 is 16, or 4 (the small-channel mode)");
  if (s.pitch < s.w || s.plane_rows < s.h || s.pitch > 65535 || s.plane_rows > 65535)
    throw Error("aipp: the picture's pitch (" + std::to_string(s.pitch) + ") and plane rows (" +
                std::to_string(s.plane_rows) + ") must hold its " + std::to_string(s.w) + " x " + std::to_string(s.h) +
                " pixels, and be at most 65535");
  if (s.csc && s.format == 5) throw Error("aipp: a grey picture has no colours to convert");
  if ((s.format == 1 || s.format == 2) && (s.pitch % 2 || s.plane_rows % 2))
    throw Error("aipp: a 4:2:0 picture's pitch (" + std::to_string(s.pitch) + ") and plane rows (" +
                std::to_string(s.plane_rows) + ") are even (its U V pairs cover two columns and two rows)");
  if (s.h < row_granule(s))
    throw Error("aipp: with c0 = 4 a " + std::to_string(s.w) + "-wide picture needs at least " +
                std::to_string(row_granule(s)) + " rows (its output is copied in 32-byte blocks)");
}

}  // namespace

std::uint32_t aipp_band_rows(const AiCoreConfig& cfg, const AippShape& s) {
  check_aipp(s);
  const std::uint64_t row = std::uint64_t(s.w) * s.c0 * 2, room = std::min(cfg.size[kL1], cfg.size[kUB]);
  const std::uint32_t q = row_granule(s);
  // A copy moves at most 65535 blocks of 32 bytes.
  std::uint64_t rows = std::min<std::uint64_t>({room / row, 65535ull * 32 / row, s.h}) / q * q;
  if (!rows)
    throw Error("aipp: " + std::to_string(q) + " output rows of a " + std::to_string(s.w) + "-wide picture (" +
                std::to_string(q * row) + " B) do not fit L1 and UB (" + std::to_string(room) + " B)");
  return std::uint32_t(rows);
}

namespace {

// The SPRs of the shape's conversion.
void set_aipp_sprs(KernelBuilder& k, const AippShape& s, Reg t) {
  std::uint64_t w[kAippSprs] = {AippSrc{s.pitch, s.plane_rows, s.format, s.csc, s.c0}.pack()};
  s.matrix.pack(&w[1]);
  for (int c = 0; c < 3; ++c) {
    w[4] |= std::uint64_t(s.mean[c]) << (16 * c);
    w[5] |= std::uint64_t(s.min[c]) << (16 * c);
    w[6] |= std::uint64_t(s.var[c]) << (16 * c);
  }
  for (unsigned i = 0; i < kAippSprs; ++i) {
    k.Li(t, std::int64_t(w[i]));
    k.SetSpr(Spr(unsigned(Spr::AippSrc) + i), t);
  }
}

struct BandRegs {
  Reg x, y, first_row, l1, ub, cfg, gm, t;
};

// One band of `rows` rows from the row in r.first_row: converted into L1 (once the last band's
// copy to UB has read it), to UB (once MTE3 has sent the last one), to GM.
void band(KernelBuilder& k, const AippShape& s, std::uint32_t rows, const BandRegs& r) {
  const std::uint64_t bytes = std::uint64_t(rows) * s.w * s.c0 * 2;
  k.Li(r.cfg, std::int64_t(AippCfg{0, 0, s.w, rows}.pack()));
  k.OpI("shli", r.t, r.first_row, 16);
  k.Add(r.cfg, r.cfg, r.t);
  k.Li(r.t, std::int64_t(s.w) * s.c0 * 2);
  k.Mul(r.gm, r.first_row, r.t);
  k.Add(r.gm, r.gm, r.y);
  k.WaitFlag(Pipe::MTE1, Pipe::MTE2, 0);
  k.Aipp(r.l1, r.x, r.cfg);
  k.SetFlag(Pipe::MTE2, Pipe::MTE1, 0);
  k.WaitFlag(Pipe::MTE2, Pipe::MTE1, 0);
  k.WaitFlag(Pipe::MTE3, Pipe::MTE1, 0);
  const DataCopyCfg copy{1, std::uint32_t(bytes / 32), 0, 0};
  k.DataCopy(Pos::UB, r.ub, Pos::L1, r.l1, copy);
  k.SetFlag(Pipe::MTE1, Pipe::MTE2, 0);
  k.SetFlag(Pipe::MTE1, Pipe::MTE3, 0);
  k.WaitFlag(Pipe::MTE1, Pipe::MTE3, 0);
  k.DataCopy(Pos::GM, r.gm, Pos::UB, r.ub, copy);
  k.SetFlag(Pipe::MTE3, Pipe::MTE1, 0);
}

}  // namespace

// Bands of `rows` rows round-robin to the blocks; the rows left after the whole bands are a last
// band that ends at the picture's last row, started early enough to be whole 32-byte blocks (it
// recomputes a few rows of the band before it, the same values).
Image aipp_kernel(const AiCoreConfig& cfg, const AippShape& s) {
  const std::uint32_t rows = aipp_band_rows(cfg, s), full = s.h / rows, left = s.h % rows;
  const std::uint32_t q = row_granule(s), last = (left + q - 1) / q * q;
  KernelBuilder k;
  BandRegs r{k.reg(), k.reg(), k.reg(), k.Const(0), k.Const(0), k.reg(), k.reg(), k.reg()};
  Reg arg = k.reg(), g = k.reg(), dim = k.reg(), end = k.Const(full);
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(r.x, arg, 0);
  k.LoadGm(r.y, arg, 8);
  set_aipp_sprs(k, s, r.t);
  k.GetSpr(g, Spr::BlockId);
  k.GetSpr(dim, Spr::BlockDim);
  k.SetFlag(Pipe::MTE1, Pipe::MTE2, 0);  // L1 is free
  k.SetFlag(Pipe::MTE3, Pipe::MTE1, 0);  // UB is free
  k.RoundRobin(g, end, dim, [&] {
    k.Li(r.t, rows);
    k.Mul(r.first_row, g, r.t);
    band(k, s, rows, r);
  });
  if (left) {  // the block that would take band `full` next
    Label skip = k.NewLabel();
    k.GetSpr(g, Spr::BlockId);
    k.Li(r.t, full);
    k.Op("rem", r.t, r.t, dim);
    k.Branch("bne", g, r.t, skip);
    k.Li(r.first_row, s.h - last);
    band(k, s, last, r);
    k.Bind(skip);
  }
  k.WaitFlag(Pipe::MTE1, Pipe::MTE2, 0);
  k.WaitFlag(Pipe::MTE3, Pipe::MTE1, 0);
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
