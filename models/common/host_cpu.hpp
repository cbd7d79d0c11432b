// SPDX-License-Identifier: MIT
// What the host's processor offers beyond the x86-64 baseline the build targets, each asked once: a
// conversion or a sum takes its wider vector path where the host has one, and the baseline's
// elsewhere, with the same results (each such path is checked against the baseline's).
#pragma once

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace dvp::host_cpu {

#if defined(__x86_64__)
inline bool avx() {
  static const bool has = __builtin_cpu_supports("avx");
  return has;
}
inline bool avx512f() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}
inline bool f16c() {  // F16C's instructions take AVX's registers
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return avx() && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
  }();
  return has;
}
#else
constexpr bool avx() { return false; }
constexpr bool avx512f() { return false; }
constexpr bool f16c() { return false; }
#endif

}  // namespace dvp::host_cpu
