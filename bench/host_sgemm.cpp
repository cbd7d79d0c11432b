// Host reference for scripts/bench-aicore: seconds of an optimized SGEMM (OpenBLAS) of
// n x n x n, the best of three runs.   host_sgemm N
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 2048;
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
