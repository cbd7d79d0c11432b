// SPDX-License-Identifier: MIT
#include "tensor_layout.hpp"

#include <cstring>

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

void Nc1hwc0::scatter(const std::uint8_t* logical_data, std::uint8_t* stored_data, unsigned eb) const {
  std::memset(stored_data, 0, stored() * eb);
  for (std::uint64_t i = 0; i < logical(); ++i) std::memcpy(stored_data + at(i) * eb, logical_data + i * eb, eb);
}

void Nc1hwc0::gather(const std::uint8_t* stored_data, std::uint8_t* logical_data, unsigned eb) const {
  for (std::uint64_t i = 0; i < logical(); ++i) std::memcpy(logical_data + i * eb, stored_data + at(i) * eb, eb);
}

}  // namespace dvp::platform
