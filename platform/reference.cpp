#include "reference.hpp"

#include <algorithm>
#include <cmath>

#include "aicore/numeric.hpp"

namespace dvp::platform {

double TensorView::at(std::uint64_t i) const { return aicore::num::load(data + i * aicore::dtype_bytes(dtype), dtype); }

bool Reference::unary() const {
  return op == "relu" || op == "copy" || op == "exp" || op == "softmax" || op == "pool" || op == "topk" ||
         op == "argmax";
}

std::uint64_t Reference::count(std::uint64_t out_elems) const {
  if (op == "gemm") return m * n;
  if (op == "conv2d") return std::uint64_t(conv.ho()) * conv.wo() * conv.cout;
  if (op == "pool") return std::uint64_t(pool.c) * pool.ho() * pool.wo();
  return out_elems;
}

namespace {

// out[r][c] = bias[c] + sum over k of a[r][k] * b[k][c] (b row-major k x n, or n x k when
// transposed; bias 0 without one).
void gemm_ref(const Reference& R, const TensorView& a, const TensorView& b, const TensorView* bias,
              std::vector<double>& out) {
  for (std::uint64_t r = 0; r < R.m; ++r)
    for (std::uint64_t c = 0; c < R.n; ++c) {
      double v = bias ? bias->at(c) : 0.0;
      for (std::uint64_t k = 0; k < R.k; ++k) v += a.at(r * R.k + k) * b.at(R.b_transposed ? c * R.k + k : k * R.n + c);
      out[r * R.n + c] = R.relu && v < 0 ? 0.0 : v;
    }
}

// y[p][co] = sum over c, i, j of x[c][h][w] * wt[co][k]: x in NC1HWC0, k in img2col order
// ((c / 16 * kh + i) * kw + j) * 16 + c % 16, zero outside the input.
void conv2d_ref(const kernels::ConvShape& cv, const TensorView& x, const TensorView& wt, std::vector<double>& out) {
  for (std::uint64_t p = 0; p < std::uint64_t(cv.ho()) * cv.wo(); ++p)
    for (std::uint64_t co = 0; co < cv.cout; ++co) {
      const std::int64_t oh = std::int64_t(p / cv.wo()), ow = std::int64_t(p % cv.wo());
      double v = 0;
      for (std::uint32_t ch = 0; ch < cv.c; ++ch)
        for (std::uint32_t fi = 0; fi < cv.kh; ++fi)
          for (std::uint32_t fj = 0; fj < cv.kw; ++fj) {
            const std::int64_t h = oh * cv.stride_h - cv.pad_t + std::int64_t(fi) * cv.dil_h;
            const std::int64_t w = ow * cv.stride_w - cv.pad_l + std::int64_t(fj) * cv.dil_w;
            if (h < 0 || w < 0 || h >= cv.h || w >= cv.w) continue;
            const std::uint64_t xi = ((ch / 16 * cv.h + std::uint64_t(h)) * cv.w + std::uint64_t(w)) * 16 + ch % 16;
            const std::uint64_t k = ((ch / 16 * cv.kh + fi) * cv.kw + fj) * 16 + ch % 16;
            v += x.at(xi) * wt.at(co * cv.k() + k);
          }
      out[p * cv.cout + co] = v;
    }
}

// A window over NC1HWC0: output element (c1, oh, ow, c0).
void pool_ref(const kernels::PoolShape& ps, const TensorView& x, std::vector<double>& out) {
  for (std::uint64_t i = 0; i < out.size(); ++i) {
    const std::uint64_t c0 = i % 16, ow = i / 16 % ps.wo(), oh = i / 16 / ps.wo() % ps.ho(),
                        c1 = i / 16 / ps.wo() / ps.ho();
    double acc = ps.mode == "max" ? -INFINITY : 0.0;
    for (std::uint32_t fi = 0; fi < ps.kh; ++fi)
      for (std::uint32_t fj = 0; fj < ps.kw; ++fj) {
        const double v = x.at(((c1 * ps.h + oh * ps.stride_h + fi) * ps.w + ow * ps.stride_w + fj) * 16 + c0);
        acc = ps.mode == "max" ? std::max(acc, v) : acc + v;
      }
    out[i] = ps.mode == "max" ? acc : acc / double(ps.kh * ps.kw);
  }
}

// Each row: exp(x - max) / sum of exp(x - max).
void softmax_ref(std::uint64_t cols, const TensorView& x, std::vector<double>& out) {
  for (std::uint64_t r0 = 0; r0 < out.size(); r0 += cols) {
    double mx = -INFINITY, sum = 0;
    for (std::uint64_t c = 0; c < cols; ++c) mx = std::max(mx, x.at(r0 + c));
    for (std::uint64_t c = 0; c < cols; ++c) sum += std::exp(x.at(r0 + c) - mx);
    for (std::uint64_t c = 0; c < cols; ++c) out[r0 + c] = std::exp(x.at(r0 + c) - mx) / sum;
  }
}

}  // namespace

std::vector<double> Reference::compute(const std::vector<TensorView>& in, std::uint64_t n_out) const {
  std::vector<double> out(n_out);
  if (op == "gemm") return gemm_ref(*this, in[0], in[1], bias ? &in[2] : nullptr, out), out;
  if (op == "conv2d") return conv2d_ref(conv, in[0], in[1], out), out;
  if (op == "pool") return pool_ref(pool, in[0], out), out;
  if (op == "softmax") return softmax_ref(cols, in[0], out), out;
  if (op == "topk" || op == "argmax") {
    // Indices of the k largest of each row of `cols`, largest first, ties to the lower index.
    const std::uint64_t kk = op == "argmax" ? 1 : k;
    for (std::uint64_t r = 0; r * kk < n_out; ++r) {
      std::vector<std::uint64_t> idx(cols);
      for (std::uint64_t j = 0; j < cols; ++j) idx[j] = j;
      std::stable_sort(idx.begin(), idx.end(),
                       [&](std::uint64_t a, std::uint64_t b) { return in[0].at(r * cols + a) > in[0].at(r * cols + b); });
      for (std::uint64_t m = 0; m < kk && r * kk + m < n_out; ++m) out[r * kk + m] = double(idx[m]);
    }
    return out;
  }
  for (std::uint64_t i = 0; i < n_out; ++i) {
    const double a = in[0].at(i), b = in.size() > 1 ? in[1].at(i) : 0.0;
    double v = 0;
    if (op == "add") v = a + b;
    else if (op == "sub") v = a - b;
    else if (op == "mul") v = a * b;
    else if (op == "max") v = std::max(a, b);
    else if (op == "min") v = std::min(a, b);
    else if (op == "relu") v = a > 0 ? a : 0.0;
    else if (op == "copy") v = a;
    else if (op == "exp") v = std::exp(a);
    out[i] = v;
  }
  return out;
}

}  // namespace dvp::platform
