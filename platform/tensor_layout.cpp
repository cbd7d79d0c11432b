// SPDX-License-Identifier: MIT
#include "tensor_layout.hpp"

#include <cstring>

#include "common/error.hpp"

namespace dvp::platform {

Nc1hwc0 Nc1hwc0::of(const std::vector<std::uint64_t>& shape) {
  if (shape.size() != 3 && shape.size() != 4)
    throw Error("layout nc1hwc0 needs a shape of 3 (C, H, W) or 4 (N, C, H, W) dimensions, got " +
                std::to_string(shape.size()));
  const std::size_t o = shape.size() - 3;
  return Nc1hwc0{o ? shape[0] : 1, shape[o], shape[o + 1], shape[o + 2]};
}

std::uint64_t Nc1hwc0::at(std::uint64_t i) const {
  const std::uint64_t x = i % w, y = i / w % h, ch = i / w / h % c, b = i / w / h / c;
  return (((b * c1() + ch / 16) * h + y) * w + x) * 16 + ch % 16;
}

void Nc1hwc0::scatter(const std::uint8_t* logical_data, std::uint8_t* stored_data, unsigned eb) const {
  std::memset(stored_data, 0, stored() * eb);
  for (std::uint64_t i = 0; i < logical(); ++i) std::memcpy(stored_data + at(i) * eb, logical_data + i * eb, eb);
}

void Nc1hwc0::gather(const std::uint8_t* stored_data, std::uint8_t* logical_data, unsigned eb) const {
  for (std::uint64_t i = 0; i < logical(); ++i) std::memcpy(logical_data + i * eb, stored_data + at(i) * eb, eb);
}

}  // namespace dvp::platform
