// SPDX-License-Identifier: MIT
#include "tensor_layout.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "common/error.hpp"
#include "kernels/library/gemm.hpp"

namespace dvp::platform {

Nc1hwc0 Nc1hwc0::of(const std::vector<std::uint64_t>& shape, std::uint64_t c0, std::uint64_t groups) {
  if (shape.size() != 3 && shape.size() != 4)
    throw Error("layout nc1hwc0 needs a shape of 3 (C, H, W) or 4 (N, C, H, W) dimensions, got " +
                std::to_string(shape.size()));
  const std::size_t o = shape.size() - 3;
  Nc1hwc0 l{o ? shape[0] : 1, shape[o], shape[o + 1], shape[o + 2], c0};
  if (groups == 1) return l;
  if (shape.size() != 4)
    throw Error("groups " + std::to_string(groups) + " lays out a grouped conv's weights: a shape of 4 dimensions, " +
                "[cout, C / groups, kh, kw]");
  if (l.n % groups || c0 != 16 || l.c > 65535 || l.n > 65535)
    throw Error("groups " + std::to_string(groups) + " takes a grouped conv's weights, cout x C / groups x kh x kw " +
                "in layout nc1hwc0, with groups dividing cout (" + std::to_string(l.n) + ")");
  // The conv2d kernel's own extended groups, from its shape: c = C / groups x groups inputs.
  kernels::ConvShape cv;
  cv.c = std::uint32_t(l.c * groups), cv.cout = std::uint32_t(l.n), cv.groups = std::uint32_t(groups);
  l.groups = groups, l.ext = cv.ext(), l.c1e = cv.c1e();
  return l;
}

Nc1hwc0 Nc1hwc0::fractal_z(const std::vector<std::uint64_t>& shape, std::uint64_t k0, std::uint64_t c0,
                           std::uint64_t groups) {
  if (shape.size() != 2 && shape.size() != 4)
    throw Error(
        "layout fractal_z takes a conv's weights, [cout, C / groups, kh, kw], or a B^T, [n, k]; got a shape of " +
        std::to_string(shape.size()) + " dimensions");
  if (shape.size() == 2 && groups != 1) throw Error("groups lays out a conv's weights: a shape of 4 dimensions");
  // A B^T's rows as n x k x 1 x 1 stored with C0 = k0: k in whole fractal rows.
  Nc1hwc0 l = shape.size() == 4 ? of(shape, c0, groups) : Nc1hwc0{shape[0], shape[1], 1, 1, k0};
  l.k0 = k0;
  return l;
}

Nc1hwc0 Nc1hwc0::named(const std::string& layout, const std::vector<std::uint64_t>& shape, unsigned eb,
                       std::uint64_t groups) {
  const std::uint64_t c0 = layout.size() > 4 && layout.compare(layout.size() - 4, 4, "_c04") == 0 ? 4 : 16;
  return layout.rfind("fractal_z", 0) == 0 ? fractal_z(shape, 32 / eb, c0, groups) : of(shape, c0, groups);
}

std::uint64_t Nc1hwc0::at(std::uint64_t i) const {
  const std::uint64_t x = i % w, y = i / w % h, b = i / w / h / c;
  // The channel within the row: a group's channels sit at its place in the extended group.
  const std::uint64_t ch = i / w / h % c + (groups > 1 ? b / (n / groups) % ext * c : 0);
  const std::uint64_t in_row = ((ch / c0 * h + y) * w + x) * c0 + ch % c0;
  if (!k0) return b * row() + in_row;
  return (in_row / k0 * rows16() + b) * k0 + in_row % k0;  // fractal row, then the row within it
}

bool Nc1hwc0::logical_of(std::uint64_t s, std::uint64_t& i, std::uint64_t& channel) const {
  const std::uint64_t plane = h * w * c0, r = s % row(), hw = r % plane / c0;
  channel = r / plane * c0 + r % c0;
  i = ((s / row() * c + channel) * h + hw / w) * w + hw % w;
  return channel < c;
}

namespace {

// f(i, s) for every logical element i and the place s at() gives it: at()'s arithmetic with its
// divisions taken once per channel, not five per element (a network's weights, tens of millions
// of elements, are laid out so at every load). fractal_z's k0 is 32 bytes of the type, a power of
// two: a shift and a mask. The elements go by blocks of c0 channels, a position of all of them at
// a time: those lie together where they are stored (in NC1HWC0, c0 adjacent elements; in
// fractal_z, runs of k0 in fractal rows: part of a row for int8, a row for fp16, two rows for f32),
// so the stored side is written by runs, not an element a fractal row (rows16 x k0 elements apart)
// for every position. f must not depend on the order.
template <typename F>
void each_place(const Nc1hwc0& l, F&& f) {
  constexpr std::uint64_t kMaxC0 = 64;
  if ((l.k0 & (l.k0 - 1)) || l.c0 > kMaxC0) {
    for (std::uint64_t i = 0; i < l.logical(); ++i) f(i, l.at(i));
    return;
  }
  const unsigned sh = l.k0 ? unsigned(__builtin_ctzll(l.k0)) : 0;
  const std::uint64_t hw = l.h * l.w, row = l.row(), rows16 = l.rows16(), mask = l.k0 ? l.k0 - 1 : 0;
  std::uint64_t first[kMaxC0];  // each channel of the block's place in the row, at (y, x) = (0, 0)
  // fractal_z puts rows b and b + 1 side by side (k0 elements apart): a block of channels is laid
  // out for 16 rows at a time, so the stored side's fractal rows are written whole while in the
  // host's cache (a row at a time wrote k0 elements every rows16 x k0, across the whole tensor).
  const std::uint64_t tile = l.k0 ? 16 : 1;
  // Without groups a block starts a C1 (c0-aligned in the row), so its c0 places are adjacent when a
  // fractal row holds whole blocks (k0 a multiple of c0: fp16 and int8, not f32's 8 of 16).
  const bool adjacent = l.groups <= 1 && (!l.k0 || l.k0 % l.c0 == 0);
  for (std::uint64_t b_lo = 0; b_lo < l.n; b_lo += tile)
    for (std::uint64_t c_lo = 0; c_lo < l.c; c_lo += l.c0)
      for (std::uint64_t b = b_lo; b < std::min(l.n, b_lo + tile); ++b) {
        const std::uint64_t block = std::min(l.c0, l.c - c_lo), i0 = (b * l.c + c_lo) * hw;
        const auto place = [&](std::uint64_t in_row) {
          return l.k0 ? (((in_row >> sh) * rows16 + b) << sh) | (in_row & mask) : b * row + in_row;
        };
        if (adjacent) {  // one place found for the block, not c0; a block is one C1: no division
          for (std::uint64_t yx = 0; yx < hw; ++yx) {
            const std::uint64_t s0 = place(c_lo * hw + yx * l.c0);
            for (std::uint64_t k = 0; k < block; ++k) f(i0 + k * hw + yx, s0 + k);
          }
          continue;
        }
        // A group's channels sit at its place in the extended group.
        const std::uint64_t at_group = l.groups > 1 ? b / (l.n / l.groups) % l.ext * l.c : 0;
        for (std::uint64_t k = 0; k < block; ++k) {
          const std::uint64_t ch = c_lo + k + at_group;
          first[k] = at_group ? ch / l.c0 * hw * l.c0 + ch % l.c0 : c_lo * hw + k;
        }
        for (std::uint64_t yx = 0; yx < hw; ++yx)
          for (std::uint64_t k = 0; k < block; ++k) f(i0 + k * hw + yx, place(first[k] + yx * l.c0));
      }
}

// Elements of `eb` bytes between the logical and the stored order, the size a constant of each
// loop.
void move_elements(const Nc1hwc0& l, const std::uint8_t* from, std::uint8_t* to, unsigned eb, bool to_stored) {
  auto each = [&](auto bytes) {
    constexpr unsigned e = decltype(bytes)::value;
    if (to_stored)
      each_place(l, [&](std::uint64_t i, std::uint64_t s) { std::memcpy(to + s * e, from + i * e, e); });
    else
      each_place(l, [&](std::uint64_t i, std::uint64_t s) { std::memcpy(to + i * e, from + s * e, e); });
  };
  switch (eb) {
    case 1: return each(std::integral_constant<unsigned, 1>());
    case 2: return each(std::integral_constant<unsigned, 2>());
    case 4: return each(std::integral_constant<unsigned, 4>());
    default:
      each_place(l, [&](std::uint64_t i, std::uint64_t s) {
        std::memcpy(to_stored ? to + s * eb : to + i * eb, to_stored ? from + i * eb : from + s * eb, eb);
      });
  }
}

}  // namespace

void Nc1hwc0::scatter(const std::uint8_t* logical_data, std::uint8_t* stored_data, unsigned eb) const {
  std::memset(stored_data, 0, stored() * eb);
  move_elements(*this, logical_data, stored_data, eb, true);
}

void Nc1hwc0::gather(const std::uint8_t* stored_data, std::uint8_t* logical_data, unsigned eb) const {
  move_elements(*this, stored_data, logical_data, eb, false);
}

}  // namespace dvp::platform
