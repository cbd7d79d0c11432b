// SPDX-License-Identifier: MIT
#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "aicore/numeric.hpp"
#include "common/zero_pages.hpp"

namespace dvp::platform {

double TensorView::load(std::uint64_t i) const {
  return aicore::num::load(data + i * aicore::dtype_bytes(dtype), dtype);
}

std::vector<double> Reference::compute(const std::vector<TensorView>& in, std::uint64_t n_out) const {
  std::vector<std::vector<double>> decoded;
  decoded.reserve(in.size());
  std::vector<TensorView> views = in;
  // An element-wise check reads each input element once, in order: it decodes them a chunk at a
  // time (elementwise_ref), not into whole buffers of 8 bytes a value (fresh pages: kernels/add's
  // two 64 MiB took about a quarter of its host time on this project's VMs, docs/performance.md).
  for (TensorView& v : views)
    if (!v.values && !op->element && !op->chunks) {
      std::vector<double>& d = decoded.emplace_back(made_vector<double>(v.elems));
      aicore::num::load_n(v.data, v.dtype, v.elems, d.data());
      v.values = d.data();
    }
  std::vector<double> out = made_vector<double>(n_out);
  op->compute(*this, views, out);
  return out;
}

namespace {

// v[j] += the sum over k of a[k] x b[j x k_len + k], for eight rows b: eight sums in flight,
// each still added k ascending (the same result bit for bit as one at a time, which waits on
// each add's latency). Its own function, so the sums stay in registers.
__attribute__((noinline)) void dot8(const double* a, const double* b, std::uint64_t k_len, double* v) {
  double v0 = v[0], v1 = v[1], v2 = v[2], v3 = v[3], v4 = v[4], v5 = v[5], v6 = v[6], v7 = v[7];
  const double *b0 = b, *b1 = b0 + k_len, *b2 = b1 + k_len, *b3 = b2 + k_len;
  const double *b4 = b3 + k_len, *b5 = b4 + k_len, *b6 = b5 + k_len, *b7 = b6 + k_len;
  for (std::uint64_t k = 0; k < k_len; ++k) {
    const double x = a[k];
    v0 += x * b0[k], v1 += x * b1[k], v2 += x * b2[k], v3 += x * b3[k];
    v4 += x * b4[k], v5 += x * b5[k], v6 += x * b6[k], v7 += x * b7[k];
  }
  v[0] = v0, v[1] = v1, v[2] = v2, v[3] = v3, v[4] = v4, v[5] = v5, v[6] = v6, v[7] = v7;
}

// x rounded to f16 (nearest even): a step of the f16 epilogue.
double r16(double x) { return aicore::num::f16(aicore::num::to_f16(x)); }

// out[r][c] = bias[c] + sum over k of a[r][k] * b[k][c] (b row-major k x n, or n x k when
// transposed; bias 0 without one), through ReLU if asked, times the scale (as an f32). With the
// f16 epilogue (a bias's vector epilogue in f16): the sum rounded to f16, plus the bias in f16,
// rounded again, as the kernel adds them.
void gemm_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  // B's columns laid out contiguously first, so each dot product runs over two plain rows (the
  // sums in the same order, k ascending, as the loop over B's rows would add them).
  std::vector<double> bt(R.n * R.k);
  const std::uint64_t n16 = (R.n + 15) / 16 * 16, k0 = R.b_k0;
  for (std::uint64_t c = 0; c < R.n; ++c)
    for (std::uint64_t k = 0; k < R.k; ++k)
      bt[c * R.k + k] = in[1].at(R.b_fractal      ? (k / k0 * n16 + c) * k0 + k % k0
                                 : R.b_transposed ? c * R.k + k
                                                  : k * R.n + c);
  std::vector<double> a(R.k);
  const bool half = R.f16_epilogue && R.bias;
  const auto start = [&](std::uint64_t c) { return R.bias && !half ? in[2].at(c) : 0.0; };
  const auto finish = [&](std::uint64_t r, std::uint64_t c, double v) {
    if (half) v = r16(r16(v) + r16(in[2].at(c)));
    out[r * R.n + c] = (R.relu && v < 0 ? 0.0 : v) * double(float(R.scale));
  };
  for (std::uint64_t r = 0; r < R.m; ++r) {
    R.poll();
    for (std::uint64_t k = 0; k < R.k; ++k) a[k] = in[0].at(r * R.k + k);
    std::uint64_t c = 0;
    for (; c + 8 <= R.n; c += 8) {
      double v[8];
      for (int j = 0; j < 8; ++j) v[j] = start(c + j);
      dot8(a.data(), bt.data() + c * R.k, R.k, v);
      for (int j = 0; j < 8; ++j) finish(r, c + j, v[j]);
    }
    for (; c < R.n; ++c) {
      double v = start(c);
      const double* col = bt.data() + c * R.k;
      for (std::uint64_t k = 0; k < R.k; ++k) v += a[k] * col[k];
      finish(r, c, v);
    }
  }
}

// A conv's operands gathered once into plain arrays: x as a plane per channel (x[c][h][w]) from
// NC1HWC0 (C0 16 or 4), and the weights as w[co][ci][i][j], ci the channel's place in co's
// group, from img2col order ((e / C0 x kh + i) x kw + j) x C0 + e % C0, e the channel's place in
// its extended group (or, in fractal_z, fractal row k / 16 of every row in turn).
struct ConvOperands {
  std::vector<double> x, w;
  ConvOperands(const kernels::ConvShape& cv, const TensorView& xv, const TensorView& wv)
      : x(std::uint64_t(cv.c) * cv.h * cv.w), w(std::uint64_t(cv.cout) * cv.cin_g() * cv.kh * cv.kw) {
    const std::uint32_t c0 = cv.c0;
    const std::uint64_t plane = std::uint64_t(cv.h) * cv.w;
    for (std::uint32_t ch = 0; ch < cv.c; ++ch)
      for (std::uint64_t hw = 0; hw < plane; ++hw) x[ch * plane + hw] = xv.at((ch / c0 * plane + hw) * c0 + ch % c0);
    const std::uint64_t n16 = (cv.cout + 15) / 16 * 16;
    std::uint64_t o = 0;
    for (std::uint32_t co = 0; co < cv.cout; ++co)
      for (std::uint32_t ci = 0; ci < cv.cin_g(); ++ci)
        for (std::uint32_t fi = 0; fi < cv.kh; ++fi)
          for (std::uint32_t fj = 0; fj < cv.kw; ++fj) {
            const std::uint32_t e = co / cv.cout_g() % cv.ext() * cv.cin_g() + ci;
            const std::uint64_t k = ((e / c0 * cv.kh + fi) * cv.kw + fj) * c0 + e % c0;
            w[o++] = wv.at(cv.weights_fractal ? (k / 16 * n16 + co) * 16 + k % 16 : co * cv.k() + k);
          }
  }
};

// The convolutions of output position (oh, ow), channels co .. co + N - 1 of one group: the sum
// over the group's channels c, then i, then j, of x[c][h][w] x w[co][c][i][j], zero outside the
// input. N channels at a time share the loads and keep N sums in flight, each in that order.
template <int N>
void conv2d_at(const kernels::ConvShape& cv, const ConvOperands& op, std::int64_t oh, std::int64_t ow, std::uint32_t co,
               double* v) {
  const std::uint32_t g = co / cv.cout_g();
  const std::uint64_t plane = std::uint64_t(cv.h) * cv.w, taps = std::uint64_t(cv.kh) * cv.kw;
  const std::uint64_t per_co = cv.cin_g() * taps;
  for (int j = 0; j < N; ++j) v[j] = 0;
  for (std::uint32_t ci = 0; ci < cv.cin_g(); ++ci) {
    const double* xc = op.x.data() + (g * cv.cin_g() + ci) * plane;
    const double* wc = op.w.data() + std::uint64_t(co) * per_co + ci * taps;
    for (std::uint32_t fi = 0; fi < cv.kh; ++fi) {
      const std::int64_t h = oh * cv.stride_h - cv.pad_t + std::int64_t(fi) * cv.dil_h;
      if (h < 0 || h >= cv.h) continue;
      for (std::uint32_t fj = 0; fj < cv.kw; ++fj) {
        const std::int64_t w = ow * cv.stride_w - cv.pad_l + std::int64_t(fj) * cv.dil_w;
        if (w < 0 || w >= cv.w) continue;
        const double xv = xc[std::uint64_t(h) * cv.w + std::uint64_t(w)];
        for (int j = 0; j < N; ++j) v[j] += xv * wc[j * per_co + fi * cv.kw + fj];
      }
    }
  }
}

// y[p][co] = act(conv x scale[co] + bias[co] + residual[p][co]), the epilogue's inputs after x
// and the weights in the kernel's argument order (bias, scale, residual: those it has); y and
// the residual NHWC, or NC1HWC0 (element (co / 16, p, co % 16)).
void conv2d_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  const kernels::ConvShape& cv = R.conv;
  std::size_t next = 2;
  const TensorView* bias = cv.bias ? &in[next++] : nullptr;
  const TensorView* scale = cv.scale ? &in[next++] : nullptr;
  const TensorView* res = cv.residual ? &in[next++] : nullptr;
  const ConvOperands op(cv, in[0], in[1]);
  const std::uint64_t hw = std::uint64_t(cv.ho()) * cv.wo();
  // The f16 epilogue (ConvShape::f16_epilogue, with a vector epilogue): each step in f16.
  const bool half = cv.f16_epilogue && (scale || bias || res || cv.relu6);
  const auto h = [&](double x) { return half ? r16(x) : x; };
  const auto finish = [&](std::uint64_t p, std::uint64_t co, double v) {
    const std::uint64_t i = cv.out_nc1hwc0 ? (co / 16 * hw + p) * 16 + co % 16 : p * cv.cout + co;
    v = h(v);
    if (scale) v = h(v * h(scale->at(co)));
    if (bias) v = h(v + h(bias->at(co)));
    if (res) v = h(v + res->at(i));
    if (cv.relu || cv.relu6) v = std::max(v, 0.0);
    if (cv.relu6) v = std::min(v, 6.0);
    out[i] = v;
  };
  for (std::uint64_t p = 0; p < hw; ++p) {
    if (p % 64 == 0) R.poll();
    const std::int64_t oh = std::int64_t(p / cv.wo()), ow = std::int64_t(p % cv.wo());
    std::uint32_t co = 0;
    double v[4];
    // Four channels at a time where they share a group (a depthwise conv's do not).
    for (; co + 4 <= cv.cout && co / cv.cout_g() == (co + 3) / cv.cout_g(); co += 4) {
      conv2d_at<4>(cv, op, oh, ow, co, v);
      for (std::uint32_t j = 0; j < 4; ++j) finish(p, co + j, v[j]);
    }
    for (; co < cv.cout; ++co) {
      conv2d_at<1>(cv, op, oh, ow, co, v);
      finish(p, co, v[0]);
    }
  }
}

// A window over NC1HWC0: output element (c1, oh, ow, c0); its taps dil apart; positions in the
// padding are left out of a max and add 0 to an average, which divides by the whole window.
void pool_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  const kernels::PoolShape& ps = R.pool;
  const bool max = ps.mode == "max";
  for (std::uint64_t i = 0; i < out.size(); ++i) {
    const std::uint64_t c0 = i % 16, ow = i / 16 % ps.wo(), oh = i / 16 / ps.wo() % ps.ho(),
                        c1 = i / 16 / ps.wo() / ps.ho();
    double acc = max ? -INFINITY : 0.0;
    for (std::uint32_t fi = 0; fi < ps.kh; ++fi)
      for (std::uint32_t fj = 0; fj < ps.kw; ++fj) {
        const std::int64_t y = std::int64_t(oh * ps.stride_h + fi * ps.dil_h) - ps.pad_t;
        const std::int64_t x = std::int64_t(ow * ps.stride_w + fj * ps.dil_w) - ps.pad_l;
        if (y < 0 || x < 0 || y >= ps.h || x >= ps.w) continue;
        const double v = in[0].at(((c1 * ps.h + std::uint64_t(y)) * ps.w + std::uint64_t(x)) * 16 + c0);
        acc = max ? std::max(acc, v) : acc + v;
      }
    out[i] = max ? acc : acc / double(ps.kh * ps.kw);
  }
}

// Over the channels of each position of an NC1HWC0 map: channel ch of position q is element
// ((ch / 16) x h x w + q) x 16 + ch % 16, times the scale (as the kernel's f16) first; the pad
// channels stay as they are in the input.
void softmax_c_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  const kernels::ChannelSoftmaxShape& s = R.softmax_c;
  const std::uint64_t hw = s.positions();
  const double k = aicore::num::f16(aicore::num::to_f16(s.scale));
  const auto at = [&](std::uint32_t ch, std::uint64_t q) { return ((std::uint64_t(ch) / 16) * hw + q) * 16 + ch % 16; };
  for (std::uint64_t i = 0; i < out.size(); ++i) out[i] = in[0].at(i);  // the pad channels
  for (std::uint64_t q = 0; q < hw; ++q) {
    double mx = -INFINITY, sum = 0;
    for (std::uint32_t ch = 0; ch < s.c; ++ch) mx = std::max(mx, k * in[0].at(at(ch, q)));
    for (std::uint32_t ch = 0; ch < s.c; ++ch) sum += std::exp(k * in[0].at(at(ch, q)) - mx);
    for (std::uint32_t ch = 0; ch < s.c; ++ch) out[at(ch, q)] = std::exp(k * in[0].at(at(ch, q)) - mx) / sum;
  }
}

// An NC1HWC0 map times one value per channel: y[c1][p][c0] = x[c1][p][c0] x g[c1 x 16 + c0].
void channel_mul_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  const std::uint64_t group = R.channel_mul.positions() * 16;
  for (std::uint64_t e = 0; e < out.size(); ++e) out[e] = in[0].at(e) * in[1].at(e / group * 16 + e % 16);
}

// Nearest-neighbour upsampling of an NC1HWC0 map: y[c1][h][w][c0] = x[c1][h / sh][w / sw][c0];
// with zeros, x[c1][h / sh][w / sw][c0] where sh divides h and sw divides w (inside the map, not
// in the zeros after it), else 0.
void upsample_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  const kernels::UpsampleShape& s = R.upsample;
  const std::uint64_t ho = s.oh(), wo = s.ow();
  for (std::uint64_t e = 0; e < out.size(); ++e) {
    const std::uint64_t c0 = e % 16, x = e / 16 % wo, y = e / 16 / wo % ho, c1 = e / 16 / wo / ho;
    const bool hole = s.zeros && (y % s.sh || x % s.sw || y / s.sh >= s.h || x / s.sw >= s.w);
    out[e] = hole ? 0.0 : in[0].at(((c1 * s.h + y / s.sh) * s.w + x / s.sw) * 16 + c0);
  }
}

// Resize of an NC1HWC0 map as a plain loop over every output element and every pair of its row's
// and its position's taps (resize_taps: ONNX's), weights rounded to f16 as the kernel holds them,
// sums in double.
void resize_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  const kernels::ResizeShape& s = R.resize;
  const kernels::ResizeTaps rows = kernels::resize_taps(s.rule, s.scale_h, s.h, s.oh);
  const kernels::ResizeTaps cols = kernels::resize_taps(s.rule, s.scale_w, s.w, s.ow);
  const unsigned T = rows.taps;
  for (std::uint64_t e = 0; e < out.size(); ++e) {
    const std::uint64_t c0 = e % 16, x = e / 16 % s.ow, y = e / 16 / s.ow % s.oh, c1 = e / 16 / s.ow / s.oh;
    double sum = 0;
    for (unsigned i = 0; i < T; ++i)
      for (unsigned j = 0; j < T; ++j) {
        const std::uint64_t r = rows.index[y * T + i], c = cols.index[x * T + j];
        sum +=
            r16(rows.weight[y * T + i]) * r16(cols.weight[x * T + j]) * in[0].at(((c1 * s.h + r) * s.w + c) * 16 + c0);
      }
    out[e] = sum;
  }
}

// Each row of x times the scale (as an f32): exp(x - max) / sum of exp(x - max).
// With a mask (a second input of mask_rows rows), row r's values where mask row r % mask_rows is 0
// are mask_fill in place of x times the scale.
void softmax_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  const std::uint64_t cols = R.cols;
  const double s = double(float(R.scale));
  std::vector<double> row(cols);
  for (std::uint64_t r0 = 0; r0 < out.size(); r0 += cols) {
    const std::uint64_t m0 = in.size() > 1 ? r0 / cols % R.mask_rows * cols : 0;
    for (std::uint64_t c = 0; c < cols; ++c)
      row[c] = in.size() > 1 && in[1].at(m0 + c) == 0 ? R.mask_fill : s * in[0].at(r0 + c);
    double mx = -INFINITY, sum = 0;
    for (std::uint64_t c = 0; c < cols; ++c) mx = std::max(mx, row[c]);
    for (std::uint64_t c = 0; c < cols; ++c) sum += std::exp(row[c] - mx);
    for (std::uint64_t c = 0; c < cols; ++c) out[r0 + c] = std::exp(row[c] - mx) / sum;
  }
}

// Each row: (x - mean) / sqrt(variance + epsilon) x gamma + beta (the variance's divisor: cols).
void layernorm_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  const std::uint64_t cols = R.cols;
  for (std::uint64_t r0 = 0; r0 < out.size(); r0 += cols) {
    double mean = 0, var = 0;
    for (std::uint64_t c = 0; c < cols; ++c) mean += in[0].at(r0 + c);
    mean /= double(cols);
    for (std::uint64_t c = 0; c < cols; ++c) var += (in[0].at(r0 + c) - mean) * (in[0].at(r0 + c) - mean);
    const double rstd = 1.0 / std::sqrt(var / double(cols) + R.epsilon);
    for (std::uint64_t c = 0; c < cols; ++c) out[r0 + c] = (in[0].at(r0 + c) - mean) * rstd * in[1].at(c) + in[2].at(c);
  }
}

// Indices of the k largest of each row of `cols` (argmax: k = 1), largest first, ties to the
// lower index, in the AI CPU kernels' order (IEEE's total order of the f32 values: +NaN above
// +inf, -NaN below -inf, -0 below +0).
std::uint32_t order_key(double v) {
  const float f = float(v);
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}

void top_rows(std::uint64_t kk, std::uint64_t cols, const TensorView& in0, std::vector<double>& out) {
  std::vector<std::uint32_t> key(cols);
  std::vector<std::uint64_t> best(cols);
  for (std::uint64_t r = 0; r * kk < out.size(); ++r) {
    for (std::uint64_t j = 0; j < cols; ++j) key[j] = order_key(in0.at(r * cols + j)), best[j] = j;
    // A stable sort's first kk (equal keys stay in index order): partly, when kk is small.
    const auto larger = [&](std::uint64_t a, std::uint64_t b) { return key[a] > key[b]; };
    if (kk < cols && kk <= 64)
      std::partial_sort(
          best.begin(), best.begin() + std::ptrdiff_t(kk), best.end(),
          [&](std::uint64_t a, std::uint64_t b) { return key[a] > key[b] || (key[a] == key[b] && a < b); });
    else
      std::stable_sort(best.begin(), best.end(), larger);
    for (std::uint64_t m = 0; m < kk && m < cols && r * kk + m < out.size(); ++m) out[r * kk + m] = double(best[m]);
  }
}

void topk_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  top_rows(R.k, R.cols, in[0], out);
}
void argmax_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  top_rows(1, R.cols, in[0], out);
}

// An input's elements [i, i + n) as doubles: its decoded values where it has them, else decoded
// into `chunk` (n at most kDecodeChunk), in one call (no dispatch per element).
const double* chunk_of(const TensorView& v, std::uint64_t i, std::uint64_t n, double* chunk) {
  if (v.values) return v.values + i;
  aicore::num::load_n(v.data + i * aicore::dtype_bytes(v.dtype), v.dtype, n, chunk);
  return chunk;
}

void elementwise_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  // On the heap: a check runs on a SystemC thread's stack.
  std::vector<double> chunk_a(kDecodeChunk), chunk_b(kDecodeChunk);
  for (std::uint64_t i0 = 0; i0 < out.size(); i0 += kDecodeChunk) {
    const std::uint64_t n = std::min(kDecodeChunk, out.size() - i0);
    const double* a = chunk_of(in[0], i0, n, chunk_a.data());
    const double* b = in.size() > 1 ? chunk_of(in[1], i0, n, chunk_b.data()) : nullptr;
    for (std::uint64_t j = 0; j < n; ++j) out[i0 + j] = R.op->element(R, a[j], b ? b[j] : 0.0);
  }
}

// Where: out[i] = in0[i] != 0 ? in1[i] : in2[i], each input decoded a chunk at a time.
void where_ref(const Reference&, const std::vector<TensorView>& in, std::vector<double>& out) {
  std::vector<double> chunk(3 * kDecodeChunk);
  for (std::uint64_t i0 = 0; i0 < out.size(); i0 += kDecodeChunk) {
    const std::uint64_t n = std::min(kDecodeChunk, out.size() - i0);
    const double* c = chunk_of(in[0], i0, n, chunk.data());
    const double* x = chunk_of(in[1], i0, n, chunk.data() + kDecodeChunk);
    const double* y = chunk_of(in[2], i0, n, chunk.data() + 2 * kDecodeChunk);
    for (std::uint64_t j = 0; j < n; ++j) out[i0 + j] = c[j] != 0 ? x[j] : y[j];
  }
}

// What is compared and what the inputs must hold.
std::uint64_t all(const Reference&, std::uint64_t out) { return out; }
std::uint64_t gemm_count(const Reference& r, std::uint64_t) { return r.m * r.n; }
std::uint64_t conv_count(const Reference& r, std::uint64_t) {
  return std::uint64_t(r.conv.ho()) * r.conv.wo() * r.conv.cout;
}
std::uint64_t softmax_c_count(const Reference& r, std::uint64_t) {
  return std::uint64_t(r.softmax_c.c1()) * 16 * r.softmax_c.positions();
}
std::uint64_t pool_count(const Reference& r, std::uint64_t) {
  return std::uint64_t(r.pool.c1()) * 16 * r.pool.ho() * r.pool.wo();
}
using Needs = std::vector<std::pair<std::uint64_t, const char*>>;
// softmax: x like the output; a mask of mask_rows rows of cols.
Needs softmax_inputs(const Reference& r, std::uint64_t out) { return {{out, "x"}, {r.mask_rows * r.cols, "mask"}}; }
Needs like_output(const Reference& r, std::uint64_t out) { return Needs(r.op->max_inputs, {out, "input"}); }
// topk and argmax: k results (argmax 1) of each row of cols, so ceil(out / k) rows in.
// y[o][c][r][i] = x[o][r][c][i].
void transpose_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  const kernels::TransposeShape& t = R.transpose;
  for (std::uint64_t e = 0; e < out.size(); ++e) {
    const std::uint64_t i = e % t.inner, r = e / t.inner % t.rows, c = e / t.inner / t.rows % t.cols;
    const std::uint64_t o = e / t.inner / t.rows / t.cols;
    out[e] = in[0].at(((o * t.rows + r) * t.cols + c) * t.inner + i);
  }
}

// y[o][i] = the sum, mean, maximum or minimum over r of x[o][r][i], in double.
void reduce_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  const kernels::ReduceShape& s = R.reduce;
  for (std::uint64_t e = 0; e < out.size(); ++e) {
    const std::uint64_t o = e / s.inner, i = e % s.inner;
    double acc = in[0].at(o * s.rows * s.inner + i);
    for (std::uint64_t r = 1; r < s.rows; ++r) {
      const double v = in[0].at((o * s.rows + r) * s.inner + i);
      acc = s.op == kernels::ReduceOp::Max   ? std::fmax(acc, v)
            : s.op == kernels::ReduceOp::Min ? std::fmin(acc, v)
                                             : acc + v;
    }
    out[e] = s.op == kernels::ReduceOp::Mean ? acc / s.rows : acc;
  }
}
// x holds rows times the output's elements.
Needs reduce_inputs(const Reference& r, std::uint64_t out) { return {{out * r.reduce.rows, "x"}}; }

// concat: the output's rows of cols are the inputs' rows side by side (each input's rows its
// elements over the output's row count).
void concat_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  const std::uint64_t rows = out.size() / R.cols;
  std::uint64_t e = 0;
  for (std::uint64_t r = 0; r < rows; ++r)
    for (const TensorView& x : in)
      for (std::uint64_t i = 0, len = x.elems / rows; i < len && e < out.size(); ++i) out[e++] = x.at(r * len + i);
  while (e < out.size()) out[e++] = NAN;  // inputs of fewer elements than the output: never equal
}
// concat, gather: inputs of any size (their references check what they read and give NaN past it).
Needs any_size_inputs(const Reference&, std::uint64_t) { return {}; }

// gather: the output's rows of cols are x's rows at the indices (in1, s32; negative from the end),
// for each outer block: outer = output rows / indices, x_rows = x's rows / outer. An index out of
// range, or sizes that do not divide so, give NaN: never equal.
void gather_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  const std::uint64_t n = in[1].elems, rows = R.cols ? out.size() / R.cols : 0, outer = n ? rows / n : 0;
  const std::uint64_t x_rows = outer ? in[0].elems / R.cols / outer : 0;
  std::fill(out.begin(), out.end(), NAN);
  if (!outer || outer * n * R.cols != out.size() || outer * x_rows * R.cols != in[0].elems) return;
  for (std::uint64_t o = 0; o < outer; ++o)
    for (std::uint64_t i = 0; i < n; ++i) {
      const double v = in[1].at(i);
      const double row = v < 0 ? v + double(x_rows) : v;
      if (!(row >= 0 && row < double(x_rows))) continue;
      const std::uint64_t from = (o * x_rows + std::uint64_t(row)) * R.cols, to = (o * n + i) * R.cols;
      for (std::uint64_t c = 0; c < R.cols; ++c) out[to + c] = in[0].at(from + c);
    }
}

// expand: the output's rows (o, r) of cols, r < rows, are the input's row o (numpy broadcasting
// of outer x 1 x cols to outer x rows x cols). Sizes that do not divide so give NaN: never equal.
void expand_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  const std::uint64_t row = R.rows * R.cols, outer = row ? out.size() / row : 0;
  std::fill(out.begin(), out.end(), NAN);
  if (!outer || outer * row != out.size() || in[0].elems != outer * R.cols) return;
  for (std::uint64_t o = 0, e = 0; o < outer; ++o)
    for (std::uint64_t r = 0; r < R.rows; ++r)
      for (std::uint64_t c = 0; c < R.cols; ++c) out[e++] = in[0].at(o * R.cols + c);
}

// slice: y[o][r][i] = x[start + o outer_stride + r row_stride + i] (a row_stride past 2^63 wraps
// round: the AI CPU's step backward). An element outside x gives NaN: never equal.
void slice_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  const kernels::SliceShape& s = R.slice;
  std::uint64_t e = 0;  // rows of runs, no division per element: the checks' share of host time
  for (std::uint64_t o = 0; o < s.outer && e < out.size(); ++o)
    for (std::uint64_t r = 0, first = s.start + o * s.outer_stride; r < s.rows && e < out.size(); ++r)
      for (std::uint64_t i = 0, at = first + r * s.row_stride; i < s.inner && e < out.size(); ++i, ++at)
        out[e++] = at < in[0].elems ? in[0].at(at) : NAN;
}
std::uint64_t slice_count(const Reference& r, std::uint64_t) { return r.slice.y_elems(); }

// layernorm: x like the output, gamma and beta a row each.
Needs layernorm_inputs(const Reference& r, std::uint64_t out) {
  return {{out, "input"}, {r.cols, "gamma"}, {r.cols, "beta"}};
}
Needs row_inputs(const Reference& r, std::uint64_t out) {
  const std::uint64_t k = r.op->name == std::string("topk") ? std::max<std::uint64_t>(r.k, 1) : 1;
  return {{(out + k - 1) / k * r.cols, "input"}};
}
// A B^T (or a conv's weights) of `rows` rows of k in fractal order: whole fractals of 16 rows by
// k0 columns.
std::uint64_t fractal_elems(std::uint64_t rows, std::uint64_t k, std::uint64_t k0) {
  return (rows + 15) / 16 * 16 * ((k + k0 - 1) / k0 * k0);
}
Needs gemm_inputs(const Reference& r, std::uint64_t) {
  return {{r.m * r.k, "input"}, {r.b_fractal ? fractal_elems(r.n, r.k, r.b_k0) : r.k * r.n, "input"}, {r.n, "bias"}};
}
Needs conv_inputs(const Reference& r, std::uint64_t) {
  const kernels::ConvShape& c = r.conv;
  Needs n{{std::uint64_t(c.c1()) * c.c0 * c.h * c.w, "input"},
          {c.weights_fractal ? fractal_elems(c.cout, c.k(), 16) : std::uint64_t(c.cout) * c.k(), "weights"}};
  if (c.bias) n.push_back({c.cout, "bias"});
  if (c.scale) n.push_back({c.cout, "scale"});
  if (c.residual) n.push_back({std::uint64_t(c.ho()) * c.wo() * c.cout, "residual"});
  return n;
}
Needs softmax_c_inputs(const Reference& r, std::uint64_t) { return {{softmax_c_count(r, 0), "input"}}; }
std::uint64_t upsample_count(const Reference& r, std::uint64_t) { return r.upsample.out_elems(); }
std::uint64_t channel_mul_count(const Reference& r, std::uint64_t) { return r.channel_mul.elems(); }
Needs channel_mul_inputs(const Reference& r, std::uint64_t) {
  return {{r.channel_mul.elems(), "map"}, {std::uint64_t(r.channel_mul.c1()) * 16, "gate"}};
}
Needs upsample_inputs(const Reference& r, std::uint64_t) { return {{r.upsample.in_elems(), "input"}}; }
std::uint64_t resize_count(const Reference& r, std::uint64_t) { return r.resize.out_elems(); }
Needs resize_inputs(const Reference& r, std::uint64_t) { return {{r.resize.in_elems(), "input"}}; }
Needs pool_inputs(const Reference& r, std::uint64_t) {
  return {{std::uint64_t(r.pool.c1()) * 16 * r.pool.h * r.pool.w, "input"}};
}

// AIPP, written from its definition (docs/isa.md, aipp.gm2l1): pixel (h, w)'s channels, the
// chroma of 4:2:0 from its 2 x 2 block; the Q8 matrix in integers, floored, clamped to a byte;
// then (v - mean - min) x var_reci in double (the model's f32 and one f16 rounding are within
// the check's tolerance); channels past the picture's are 0.
void aipp_ref(const Reference& R, const std::vector<TensorView>& in, std::vector<double>& out) {
  const kernels::AippShape& a = R.aipp;
  const TensorView& x = in[0];
  const std::uint64_t plane = std::uint64_t(a.pitch) * a.plane_rows;
  std::fill(out.begin(), out.end(), 0.0);
  for (std::uint64_t h = 0; h < a.h; ++h)
    for (std::uint64_t w = 0; w < a.w; ++w) {
      double px[3] = {0, 0, 0};
      if (a.format == 6) {
        for (int c = 0; c < 3; ++c) px[c] = x.at((h * a.pitch + w) * 3 + c);
      } else {
        px[0] = x.at(h * a.pitch + w);
        if (a.format != 5) {  // NV12: U then V; NV21: V then U
          const std::uint64_t uv = plane + h / 2 * a.pitch + w / 2 * 2;
          px[1] = x.at(uv + (a.format == 2 ? 1 : 0));
          px[2] = x.at(uv + (a.format == 2 ? 0 : 1));
        }
      }
      double v[3] = {px[0], px[1], px[2]};
      for (int c = 0; a.csc && c < 3; ++c) {
        std::int64_t sum = 0;
        for (int k = 0; k < 3; ++k) sum += a.matrix.m[c][k] * (std::int64_t(px[k]) - a.matrix.in_bias[k]);
        v[c] = double(
            std::clamp<std::int64_t>((sum >= 0 ? sum / 256 : -((-sum + 255) / 256)) + a.matrix.out_bias[c], 0, 255));
      }
      for (unsigned c = 0; c < a.channels(); ++c)
        out[(h * a.w + w) * a.c0 + c] = (v[c] - a.mean[c] - aicore::num::f16(a.min[c])) * aicore::num::f16(a.var[c]);
    }
}
std::uint64_t aipp_count(const Reference& r, std::uint64_t) { return r.aipp.out_elems(); }
Needs aipp_inputs(const Reference& r, std::uint64_t) { return {{r.aipp.in_bytes(), "picture"}}; }

using Element = double (*)(const Reference&, double, double);
RefCheck elementwise(const char* name, unsigned inputs, Element f, std::vector<const char*> needs = {}) {
  return RefCheck{name, inputs, inputs, std::move(needs), all, like_output, elementwise_ref, f};
}
// max and min as the vector unit's vmax and vmin (IEEE maxNum, minNum): a NaN gives way to a number.
double gate(double v) { return std::fmax(0.0, std::fmin(1.0, v)); }

// The element-wise checks, each out[i] = element(r, in0[i], in1[i]).
struct ElementwiseChecks {
  RefCheck add, sub, mul, div, max, min, relu, copy, exp, abs, sqrt, rec, log, neg, adds, muls, pows, erf, gelu,
      gelu_tanh, sigmoid, silu, tanh, leaky_relu, hard_sigmoid, hard_swish, clip, eq, ne, lt, le, gt, ge, logical_not,
      where_else, where_then, where_both;
};
double truth(bool b) { return b ? 1.0 : 0.0; }
const ElementwiseChecks& elementwise_checks() {
  using R = const Reference&;
  static const ElementwiseChecks c{
      elementwise("add", 2, [](R, double a, double b) { return a + b; }),
      elementwise("sub", 2, [](R, double a, double b) { return a - b; }),
      elementwise("mul", 2, [](R, double a, double b) { return a * b; }),
      elementwise("div", 2, [](R, double a, double b) { return a / b; }),
      elementwise("max", 2, [](R, double a, double b) { return std::fmax(a, b); }),
      elementwise("min", 2, [](R, double a, double b) { return std::fmin(a, b); }),
      elementwise("relu", 1, [](R, double a, double) { return a > 0 ? a : 0.0; }),
      elementwise("copy", 1, [](R, double a, double) { return a; }),
      elementwise("exp", 1, [](R, double a, double) { return std::exp(a); }),
      elementwise("abs", 1, [](R, double a, double) { return std::fabs(a); }),
      elementwise("sqrt", 1, [](R, double a, double) { return std::sqrt(a); }),
      elementwise("rec", 1, [](R, double a, double) { return 1 / a; }),
      elementwise("log", 1, [](R, double a, double) { return std::log(a); }),
      elementwise("neg", 1, [](R, double a, double) { return -a; }),
      elementwise("adds", 1, [](R r, double a, double) { return a + r.alpha; }, {"alpha"}),
      elementwise("muls", 1, [](R r, double a, double) { return r.alpha * a; }, {"alpha"}),
      elementwise("pows", 1, [](R r, double a, double) { return std::pow(a, r.alpha); }, {"alpha"}),
      elementwise("erf", 1, [](R, double a, double) { return std::erf(a); }),
      elementwise("gelu", 1, [](R, double a, double) { return a * (1 + std::erf(a / std::sqrt(2.0))) / 2; }),
      elementwise("gelu_tanh", 1,  // x (1 + tanh u) / 2 as x / (1 + e^-2u): 1 + tanh u cancels as u nears -18
                  [](R, double a, double) {
                    return a / (1 + std::exp(-2 * std::sqrt(2 / M_PI) * (a + 0.044715 * a * a * a)));
                  }),
      elementwise("sigmoid", 1, [](R, double a, double) { return 1 / (1 + std::exp(-a)); }),
      elementwise("silu", 1, [](R, double a, double) { return a / (1 + std::exp(-a)); }),
      elementwise("tanh", 1, [](R, double a, double) { return std::tanh(a); }),
      elementwise("leaky_relu", 1, [](R r, double a, double) { return a >= 0 ? a : r.alpha * a; }, {"alpha"}),
      elementwise("hard_sigmoid", 1, [](R r, double a, double) { return gate(r.alpha * a + r.beta); },
                  {"alpha", "beta"}),
      elementwise("hard_swish", 1, [](R, double a, double) { return a * gate(a / 6 + 0.5); }),
      elementwise("clip", 1, [](R r, double a, double) { return std::fmin(std::fmax(a, r.alpha), r.beta); },
                  {"alpha", "beta"}),
      elementwise("eq", 2, [](R, double a, double b) { return truth(a == b); }),
      elementwise("ne", 2, [](R, double a, double b) { return truth(a != b); }),
      elementwise("lt", 2, [](R, double a, double b) { return truth(a < b); }),
      elementwise("le", 2, [](R, double a, double b) { return truth(a <= b); }),
      elementwise("gt", 2, [](R, double a, double b) { return truth(a > b); }),
      elementwise("ge", 2, [](R, double a, double b) { return truth(a >= b); }),
      elementwise("not", 1, [](R, double a, double) { return truth(a == 0); }),
      elementwise("where_else", 2, [](R r, double a, double b) { return a != 0 ? b : r.alpha; }, {"alpha"}),
      elementwise("where_then", 2, [](R r, double a, double b) { return a != 0 ? r.alpha : b; }, {"alpha"}),
      elementwise("where_both", 1, [](R r, double a, double) { return a != 0 ? r.alpha : r.beta; }, {"alpha", "beta"})};
  return c;
}

using CheckOptions = std::vector<cfg::Choices<const RefCheck*>::Option>;

// The element-wise checks' options: each out[i] from the inputs' elements at i.
CheckOptions elementwise_options() {
  const ElementwiseChecks& e = elementwise_checks();
  static const RefCheck where{"where", 3, 3, {}, all, like_output, where_ref, nullptr, false, true};
  return {
      {"add", &e.add, "out[i] = in0[i] + in1[i]"},
      {"sub", &e.sub, "out[i] = in0[i] - in1[i]"},
      {"mul", &e.mul, "out[i] = in0[i] * in1[i]"},
      {"div", &e.div, "out[i] = in0[i] / in1[i]"},
      {"max", &e.max, "out[i] = max(in0[i], in1[i]) (as vmax: a NaN gives way to a number)"},
      {"min", &e.min, "out[i] = min(in0[i], in1[i]) (likewise)"},
      {"relu", &e.relu, "out[i] = max(in0[i], 0)"},
      {"copy", &e.copy, "out[i] = in0[i] (a cast: rounded to the output type)"},
      {"exp", &e.exp, "out[i] = e^in0[i]"},
      {"abs", &e.abs, "out[i] = |in0[i]|"},
      {"sqrt", &e.sqrt, "out[i] = sqrt(in0[i])"},
      {"rec", &e.rec, "out[i] = 1 / in0[i]"},
      {"log", &e.log, "out[i] = ln(in0[i])"},
      {"neg", &e.neg, "out[i] = -in0[i]"},
      {"adds", &e.adds, "out[i] = in0[i] + alpha"},
      {"muls", &e.muls, "out[i] = alpha in0[i]"},
      {"pows", &e.pows, "out[i] = in0[i]^alpha"},
      {"erf", &e.erf, "out[i] = erf(in0[i])"},
      {"gelu", &e.gelu, "out[i] = in0[i] (1 + erf(in0[i] / sqrt 2)) / 2"},
      {"gelu_tanh", &e.gelu_tanh, "out[i] = in0[i] (1 + tanh(sqrt(2 / pi) (in0[i] + 0.044715 in0[i]^3))) / 2"},
      {"sigmoid", &e.sigmoid, "out[i] = 1 / (1 + e^-in0[i])"},
      {"silu", &e.silu, "out[i] = in0[i] / (1 + e^-in0[i])"},
      {"tanh", &e.tanh, "out[i] = tanh(in0[i])"},
      {"leaky_relu", &e.leaky_relu, "out[i] = in0[i] >= 0 ? in0[i] : alpha in0[i]"},
      {"hard_sigmoid", &e.hard_sigmoid, "out[i] = max(0, min(1, alpha in0[i] + beta))"},
      {"hard_swish", &e.hard_swish, "out[i] = in0[i] max(0, min(1, in0[i] / 6 + 1 / 2))"},
      {"clip", &e.clip, "out[i] = min(max(in0[i], alpha), beta)"},
      {"eq", &e.eq, "out[i] = in0[i] == in1[i] ? 1 : 0"},
      {"ne", &e.ne, "out[i] = in0[i] != in1[i] ? 1 : 0"},
      {"lt", &e.lt, "out[i] = in0[i] < in1[i] ? 1 : 0"},
      {"le", &e.le, "out[i] = in0[i] <= in1[i] ? 1 : 0"},
      {"gt", &e.gt, "out[i] = in0[i] > in1[i] ? 1 : 0"},
      {"ge", &e.ge, "out[i] = in0[i] >= in1[i] ? 1 : 0"},
      {"not", &e.logical_not, "out[i] = in0[i] == 0 ? 1 : 0"},
      {"where", &where, "out[i] = in0[i] != 0 ? in1[i] : in2[i]"},
      {"where_else", &e.where_else, "out[i] = in0[i] != 0 ? in1[i] : alpha"},
      {"where_then", &e.where_then, "out[i] = in0[i] != 0 ? alpha : in1[i]"},
      {"where_both", &e.where_both, "out[i] = in0[i] != 0 ? alpha : beta"},
  };
}

}  // namespace

const cfg::Choices<const RefCheck*>& reference_checks() {
  static const RefCheck gemm{"gemm", 2, 3, {"m", "k", "n"}, gemm_count, gemm_inputs, gemm_ref};
  static const RefCheck conv2d{"conv2d", 2, 5, {}, conv_count, conv_inputs, conv2d_ref};
  static const RefCheck pool{"pool", 1, 1, {}, pool_count, pool_inputs, pool_ref};
  static const RefCheck softmax{"softmax", 1, 2, {"cols"}, all, softmax_inputs, softmax_ref, nullptr, true};
  static const RefCheck softmax_c{"softmax_c", 1, 1, {}, softmax_c_count, softmax_c_inputs, softmax_c_ref};
  static const RefCheck upsample{"upsample", 1, 1, {}, upsample_count, upsample_inputs, upsample_ref};
  static const RefCheck resize{"resize", 1, 1, {}, resize_count, resize_inputs, resize_ref};
  static const RefCheck channel_mul{"channel_mul", 2, 2, {}, channel_mul_count, channel_mul_inputs, channel_mul_ref};
  static const RefCheck layernorm{"layernorm", 3, 3, {"cols"}, all, layernorm_inputs, layernorm_ref, nullptr, true};
  static const RefCheck transpose{"transpose", 1, 1, {}, all, like_output, transpose_ref};
  static const RefCheck reduce{"reduce", 1, 1, {}, all, reduce_inputs, reduce_ref};
  static const RefCheck topk{"topk", 1, 1, {"cols", "k"}, all, row_inputs, topk_ref};
  static const RefCheck argmax{"argmax", 1, 1, {"cols"}, all, row_inputs, argmax_ref};
  static const RefCheck concat{"concat", 1, 64, {"cols"}, all, any_size_inputs, concat_ref, nullptr, true};
  static const RefCheck gather{"gather", 2, 2, {"cols"}, all, any_size_inputs, gather_ref};
  static const RefCheck expand{"expand", 1, 1, {"cols", "rows"}, all, any_size_inputs, expand_ref};
  static const RefCheck slice{"slice", 1, 1, {}, slice_count, any_size_inputs, slice_ref};
  static const RefCheck aipp{"aipp", 1, 1, {}, aipp_count, aipp_inputs, aipp_ref};
  static const cfg::Choices<const RefCheck*> table = [] {
    CheckOptions o = elementwise_options();
    o.insert(
        o.end(),
        {
            {"gemm", &gemm, "out = in0 x in1 (+ in2, a bias row; ReLU with relu: true)"},
            {"conv2d", &conv2d, "the convolution of the conv2d kernel's shape, through its epilogue"},
            {"pool", &pool, "the pooling of the pool kernel's shape"},
            {"softmax", &softmax, "softmax of each row of cols (a second input: the kernel's mask, mask_rows x cols)"},
            {"softmax_c", &softmax_c, "softmax over the channels of each position, from the softmax_c kernel's shape"},
            {"channel_mul", &channel_mul,
             "the map in0 times in1's value of each channel, from the channel_mul kernel's shape"},
            {"upsample", &upsample, "each position of the map copied sh x sw times, from the upsample kernel's shape"},
            {"resize", &resize,
             "each output element the sum of its taps' inputs times their weights (f16), from the resize kernel's "
             "shape"},
            {"layernorm", &layernorm, "each row of cols normalized (mean 0, variance 1 + epsilon), times in1 plus in2"},
            {"transpose", &transpose, "the transpose kernel's two axes swapped, from its shape"},
            {"reduce", &reduce, "the sum, mean, maximum or minimum over the reduce kernel's rows, from its shape"},
            {"topk", &topk, "the indices of each row's k largest (ties: lower index first)"},
            {"argmax", &argmax, "the index of each row's largest (ties: lower index first)"},
            {"concat", &concat,
             "the inputs' rows side by side: rows of cols (each input's rows: its elements over the rows)"},
            {"gather", &gather, "x's rows of cols at the indices (in1), for each outer block of x"},
            {"expand", &expand, "x's rows of cols, each repeated `rows` times in order (numpy broadcasting)"},
            {"slice", &slice,
             "runs of x: out[o][r][i] = in0[start + o outer_stride + r row_stride + i], from the slice kernel's shape "
             "or "
             "the AI CPU slice's arguments"},
            {"aipp", &aipp, "the aipp kernel's picture converted and normalised, from its definition"},
        });
    return cfg::Choices<const RefCheck*>(std::move(o));
  }();
  return table;
}

}  // namespace dvp::platform
