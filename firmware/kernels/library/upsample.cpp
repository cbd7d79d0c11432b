// SPDX-License-Identifier: MIT
#include "upsample.hpp"

#include "aicore/kernel_builder.hpp"
#include "common/error.hpp"

#include <algorithm>
#include <tuple>

namespace dvp::kernels {

using namespace aicore;

void check_upsample(const AiCoreConfig& cfg, const UpsampleShape& s) {
  if (!s.c || !s.h || !s.w || !s.sh || !s.sw) throw Error("upsample: c, h, w, sh and sw are at least 1");
  if (s.sw > 31)
    throw Error("upsample: sw " + std::to_string(s.sw) + ": a repeat's stride of 8 x sw blocks is up to 255");
  if (s.w / 8 > 255) throw Error("upsample: a row of " + std::to_string(s.w) + " positions is over 255 vector repeats");
  // Two buffers of the row and the widened row (and with zeros a zero row beside them).
  const std::uint64_t need = 2 * s.buffer_blocks() * 32 + (s.zeros ? s.ow() * 32 : 0);
  if (need > cfg.size[kUB] || s.ow() > 65535)
    throw Error(
        "upsample: a row of " + std::to_string(s.w) + " positions " +
        (s.zeros ? "with zeros inserted every " + std::to_string(s.sw) : "widened " + std::to_string(s.sw) + " times") +
        " needs " + std::to_string(need) + " B of UB (" + std::to_string(cfg.size[kUB]) +
        "), or its row is past one copy's 65535 blocks");
}

namespace {

struct Row {
  KernelBuilder& k;
  const UpsampleShape& s;
  Reg X, Y, t, src, dst, in, out, mask, b;

  std::int64_t zero_at = 0;  // with zeros: the UB's zero row

  // Row `unit` (c1 x h + r) through buffer `buf`, whose input part starts at UB `base`.
  void move(Reg unit, int buf, std::int64_t base) {
    const std::int64_t w = s.w, wide = std::int64_t(s.ow());
    // unit = c1 x h + r: src = X + unit x w x 32; dst = Y + ((c1 x h + r) x sh) x wide x 32 (with
    // zeros: Y + (c1 x oh + r x sh) x wide x 32).
    k.Li(t, w * 32);
    k.Mul(src, unit, t);
    k.Add(src, src, X);
    if (s.zeros) {
      zero_dst(unit);
    } else {
      k.Li(t, std::int64_t(s.sh) * wide * 32);
      k.Mul(dst, unit, t);
      k.Add(dst, dst, Y);
    }
    k.Li(in, base);
    k.Li(out, base + w * 32);
    k.WaitFlag(Pipe::MTE3, Pipe::MTE2, buf);  // the buffer's last rows are written
    k.DataCopy(Pos::UB, in, Pos::GM, src, DataCopyCfg{1, s.w, 0, 0});
    k.SetFlag(Pipe::MTE2, Pipe::V, buf);
    k.WaitFlag(Pipe::MTE2, Pipe::V, buf);
    widen();
    k.SetFlag(Pipe::V, Pipe::MTE3, buf);
    k.WaitFlag(Pipe::V, Pipe::MTE3, buf);
    if (s.zeros) {
      zero_rows(unit, wide);
    } else {
      for (std::uint32_t i = 0; i < s.sh; ++i) {
        k.DataCopy(Pos::GM, dst, Pos::UB, out, DataCopyCfg{1, std::uint32_t(wide), 0, 0});
        if (i + 1 < s.sh) k.Li(t, wide * 32), k.Add(dst, dst, t);
      }
    }
    k.SetFlag(Pipe::MTE3, Pipe::MTE2, buf);
  }
  // With zeros: dst = Y + (c1 x oh + r x sh) x ow x 32, unit = c1 x h + r (b and mask: temporaries).
  void zero_dst(Reg unit) {
    k.Li(t, s.h);
    k.Op("divu", b, unit, t);  // c1
    k.Mul(mask, b, t);
    k.Op("sub", mask, unit, mask);  // r
    k.Li(t, std::int64_t(s.oh()));
    k.Mul(dst, b, t);
    k.Li(t, s.sh);
    k.Mul(mask, mask, t);
    k.Add(dst, dst, mask);  // c1 x oh + r x sh
    k.Li(t, std::int64_t(s.ow()) * 32);
    k.Mul(dst, dst, t);
    k.Add(dst, dst, Y);
  }
  // With zeros: the row, then sh - 1 zero rows, or pad_b after its plane's last (r = h - 1).
  void zero_rows(Reg unit, std::int64_t wide) {
    k.DataCopy(Pos::GM, dst, Pos::UB, out, DataCopyCfg{1, std::uint32_t(wide), 0, 0});
    if (s.sh == 1 && s.pad_b == 0) return;
    Label last = k.NewLabel(), done = k.NewLabel();
    k.Li(t, s.h);
    k.Op("rem", b, unit, t);
    k.Li(t, s.h - 1);
    k.Branch("beq", b, t, last);
    zero_copies(s.sh - 1, wide);
    k.Jump(done);
    k.Bind(last);
    zero_copies(s.pad_b, wide);
    k.Bind(done);
  }
  // `n` zero rows after dst's (dst moves past them).
  void zero_copies(std::uint32_t n, std::int64_t wide) {
    if (n) k.Li(b, zero_at);
    for (std::uint32_t i = 0; i < n; ++i) {
      k.Li(t, wide * 32), k.Add(dst, dst, t);
      k.DataCopy(Pos::GM, dst, Pos::UB, b, DataCopyCfg{1, std::uint32_t(wide), 0, 0});
    }
  }
  // Each of the row's blocks sw times: for offset j, 8 blocks a repeat into every sw-th block
  // from block j (the row's last blocks, under a repeat, with a shorter mask). `src` is free now:
  // the copy in took its value when it was issued.
  void widen() {
    const std::uint32_t full = s.w / 8, tail = s.w % 8;
    const VecCfg spread{full, s.sw, 1, 1, 8 * s.sw, 8, 8};
    for (std::uint32_t j = 0; j < (s.zeros ? 1 : s.sw); ++j) {
      k.Li(t, std::int64_t(j) * 32);
      k.Add(b, out, t);
      if (full) {
        k.Li(mask, 128);
        k.SetMaskCount(mask);
        k.Vector("copy", DType::F16, {b, in}, spread);
      }
      if (!tail) continue;
      k.Li(mask, tail * 16);
      k.SetMaskCount(mask);
      k.Li(t, std::int64_t(full) * 256);
      k.Add(src, in, t);
      k.Li(t, std::int64_t(full) * 256 * s.sw);
      k.Add(b, b, t);
      k.Vector("copy", DType::F16, {b, src}, VecCfg{1, s.sw, 1, 1, 8 * s.sw, 8, 8});
    }
  }
  // With zeros: `blocks` 32-byte blocks of f16 zeros at UB `at` (8 a repeat, the rest under a mask).
  void zero(std::int64_t at, std::uint64_t blocks) {
    for (const auto& [from, count, lanes] :
         {std::tuple{std::uint64_t(0), blocks / 8, 128u},
          std::tuple{blocks / 8 * 8, blocks % 8 ? std::uint64_t(1) : 0, 16u * std::uint32_t(blocks % 8)}})
      for (std::uint64_t r = 0; r < count; r += 255) {
        k.Li(mask, lanes);
        k.SetMaskCount(mask);
        k.Li(b, at + std::int64_t((from + r * 8) * 32));
        k.Vector("dup", DType::F16, {b, KernelBuilder::zero()},
                 VecCfg{std::uint32_t(std::min<std::uint64_t>(255, count - r)), 1, 1, 1, 8, 8, 8});
      }
  }
};

}  // namespace

Image upsample_kernel(const AiCoreConfig& cfg, const UpsampleShape& s) {
  check_upsample(cfg, s);
  KernelBuilder k;
  Reg arg = k.reg(), X = k.reg(), Y = k.reg();
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(X, arg, 0);
  k.LoadGm(Y, arg, 8);
  Row r{k, s, X, Y, k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg(), k.reg()};
  // The second buffer at half the UB; with zeros right after the first (a buffer is the row and
  // the widened row), the zero row after both, and the widened rows and the zero row zeroed.
  const std::int64_t row = std::int64_t(s.buffer_blocks()) * 32;
  const std::int64_t second = s.zeros ? row : std::int64_t(cfg.size[kUB] / 2 / 32 * 32);
  if (s.zeros) {
    r.zero_at = 2 * row;
    for (std::int64_t at : {std::int64_t(s.w) * 32, second + std::int64_t(s.w) * 32, r.zero_at}) r.zero(at, s.ow());
  }
  k.RoundRobinTwoBuffers(arg, k.Const(std::int64_t(s.c1()) * s.h), k.reg(), k.reg(), k.reg(),
                         [&](Reg unit, int buf) { r.move(unit, buf, buf ? second : 0); });
  k.End();
  return k.Build();
}

}  // namespace dvp::kernels
