// SPDX-License-Identifier: MIT
// Host reference for scripts/bench-aicore: seconds of an optimized SGEMM (OpenBLAS) of
// n x n x n, the best of three runs.   host_sgemm [N]   (default 2048)
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/version.hpp"

static const char* kUsage =
    "usage: host_sgemm [N]   seconds of the best of three n x n x n SGEMMs (default N 2048)\n"
    "       host_sgemm --version\n";

// N from the command line; 0 when it is not a positive integer (an n of 0 has no c[0] to check).
static int parse_n(const char* s) {
  char* end = nullptr;
  const long n = std::strtol(s, &end, 10);
  return *s && !*end && n > 0 && n <= 65536 ? int(n) : 0;
}

int main(int argc, char** argv) {
  int n = 2048;
  if (argc > 1 && (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h"))) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (argc > 1 && !std::strcmp(argv[1], "--version")) {
    std::printf("host_sgemm %s (%s)\n", dvp::version(), dvp::revision());
    return 0;
  }
  if (argc > 2) {
    std::fprintf(stderr, "host_sgemm: unexpected argument '%s'\n%s", argv[2], kUsage);
    return 2;
  }
  if (argc == 2 && !(n = parse_n(argv[1]))) {
    std::fprintf(stderr, "host_sgemm: N must be a positive integer, got '%s'\n%s", argv[1], kUsage);
    return 2;
  }
  std::vector<float> a(std::size_t(n) * n, 0.5f), b(std::size_t(n) * n, 0.25f), c(std::size_t(n) * n);
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("%.4f\n", best);
  return c[0] == 0.5f * 0.25f * n ? 0 : 1;
}
