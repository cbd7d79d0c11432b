// SPDX-License-Identifier: MIT
#include "host_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <system_error>
#include <thread>

#include "common/error.hpp"
#include "common/host_cpu.hpp"
#include "kernels/library/resize.hpp"

namespace dvp::network {

namespace {

using Shape = std::vector<std::int64_t>;

// One node being run: its inputs, attributes and outputs by name.
struct Op {
  const onnx::NodeProto& n;
  Tensors& v;
  std::int64_t opset;
  bool one_d = false;  // a 1-D window op run as its 2-D form (NodeAttrs::one_d)
  int index = 0;       // in the graph: an unnamed node is '#index', as the compiler names it
  // The output's shape only, its values left zero: a contraction whose values nothing asks for
  // (run_reference without values).
  bool shapes_only = false;
  std::string who() const {
    return "node '" + (n.name().empty() ? "#" + std::to_string(index) : n.name()) + "' (" + n.op_type() + ")";
  }
  bool has_in(int i) const { return i < n.input_size() && !n.input(i).empty(); }
  // A malformed model is an Error naming the node, never an access out of bounds.
  void need(bool ok, const std::string& what) const {
    if (!ok) throw Error(who() + ": " + what);
  }
  const Tensor& in(int i, std::size_t rank) const {
    const Tensor& t = in(i);
    need(t.shape.size() == rank,
         "input " + std::to_string(i) + " is " + t.shape_str() + ", not of rank " + std::to_string(rank));
    return t;
  }
  // `a` (negative: from the end) as an index into `rank` dimensions, [0, rank + extra).
  std::size_t axis(std::int64_t a, std::size_t rank, std::size_t extra = 0) const {
    const std::int64_t r = a < 0 ? a + std::int64_t(rank) : a;
    need(r >= 0 && r < std::int64_t(rank + extra), "axis " + std::to_string(a) + " is out of range");
    return std::size_t(r);
  }
  const Tensor& in(int i) const {
    auto it = has_in(i) ? v.find(n.input(i)) : v.end();
    if (it == v.end()) throw Error(who() + ": input " + std::to_string(i) + " has no value");
    return it->second;
  }
  // Output i, of `shape`, zeroed. The host holds every value of the run at once: at most
  // Tensor::kMaxElements of them (a broadcast of two 64 Ki vectors to 2^32 outputs asked for 16
  // GiB and ran out of the host's memory).
  Tensor& out(int i, Shape shape) {
    Tensor& t = v[n.output(i)];
    t.shape = std::move(shape);
    std::size_t held = 0;
    for (const auto& [name, other] : v) held += &other == &t ? 0 : other.data.size();
    need(t.elements() <= Tensor::kMaxElements - std::min(held, Tensor::kMaxElements),
         "its output " + t.shape_str() + " would make the host reference hold over 2^31 values (8 GiB) at once");
    t.data.assign(t.elements(), 0.0f);
    return t;
  }
  NodeAttrs attrs() const { return NodeAttrs{n, one_d}; }
  std::int64_t i(const char* name, std::int64_t dflt) const { return attrs().i(name, dflt); }
  float f(const char* name, float dflt) const { return attrs().f(name, dflt); }
  std::string s(const char* name, const std::string& dflt) const { return attrs().s(name, dflt); }
  Shape ints(const char* name, const Shape& dflt) const { return attrs().ints(name, dflt); }
};

std::int64_t count(const Shape& s, std::size_t from = 0, std::size_t to = SIZE_MAX) {
  std::int64_t c = 1;
  for (std::size_t k = from; k < std::min(to, s.size()); ++k) c *= s[k];
  return c;
}

// Element-wise with numpy broadcasting (ONNX's multidirectional broadcasting).
// The next index of a tensor of `dims`, in row-major order (the last axis fastest).
void next_index(std::vector<std::int64_t>& idx, const Shape& dims) {
  for (std::size_t d = idx.size(); d-- > 0;)
    if (++idx[d] < dims[d])
      return;
    else
      idx[d] = 0;
}

// a fn b, broadcast by numpy's rules.
Tensor combine(const Op& op, const Tensor& a, const Tensor& b, const std::function<float(float, float)>& fn) {
  const std::size_t rank = std::max(a.shape.size(), b.shape.size());
  Shape sa(rank - a.shape.size(), 1), sb(rank - b.shape.size(), 1), so(rank);
  sa.insert(sa.end(), a.shape.begin(), a.shape.end());
  sb.insert(sb.end(), b.shape.begin(), b.shape.end());
  for (std::size_t k = 0; k < rank; ++k) {
    if (sa[k] != sb[k] && sa[k] != 1 && sb[k] != 1)
      throw Error(op.who() + ": shapes " + a.shape_str() + " and " + b.shape_str() + " do not broadcast");
    so[k] = std::max(sa[k], sb[k]);
  }
  Tensor o{so, {}};
  op.need(o.elements() <= Tensor::kMaxElements, "its output " + o.shape_str() + " would hold over 2^31 values");
  o.data.assign(o.elements(), 0.0f);
  std::vector<std::int64_t> idx(rank, 0);
  for (std::size_t e = 0; e < o.data.size(); ++e) {
    std::int64_t ia = 0, ib = 0;
    for (std::size_t k = 0; k < rank; ++k) {
      ia = ia * sa[k] + (sa[k] == 1 ? 0 : idx[k]);
      ib = ib * sb[k] + (sb[k] == 1 ? 0 : idx[k]);
    }
    o.data[e] = fn(a.data[std::size_t(ia)], b.data[std::size_t(ib)]);
    next_index(idx, so);
  }
  return o;
}

// in0 fn in1 fn ... (Max and Min take one input or more; the others two).
void broadcast(Op& op, const std::function<float(float, float)>& fn) {
  Tensor acc = op.in(0);
  for (int j = 1; j < op.n.input_size(); ++j) acc = combine(op, acc, op.in(j), fn);
  op.out(0, acc.shape).data = std::move(acc.data);
}

float truth(bool b) { return b ? 1.0f : 0.0f; }  // ONNX's bool, held as 0 and 1

// Where(c, x, y): x where c is true, else y, the three broadcast together by numpy's rules.
void where(Op& op) {
  const auto first = [](float a, float) { return a; };
  const auto zeros = [](const Tensor& t) { return Tensor{t.shape, std::vector<float>(t.data.size(), 0.0f)}; };
  const Tensor full = combine(op, combine(op, zeros(op.in(0)), zeros(op.in(1)), first), zeros(op.in(2)), first);
  const Tensor c = combine(op, op.in(0), full, first), x = combine(op, op.in(1), full, first),
               y = combine(op, op.in(2), full, first);
  Tensor& o = op.out(0, full.shape);
  for (std::size_t e = 0; e < o.data.size(); ++e) o.data[e] = c.data[e] != 0 ? x.data[e] : y.data[e];
}

void unary(Op& op, const std::function<float(float)>& fn) {
  const Tensor& x = op.in(0);
  Tensor& y = op.out(0, x.shape);
  for (std::size_t e = 0; e < x.data.size(); ++e) y.data[e] = fn(x.data[e]);
}

// f(0) ... f(units - 1), units independent of one another, shared out among the host's cores
// (unit u on thread u mod threads) when they are worth a thread: `work` multiply-adds a unit.
void each_of(std::int64_t units, std::uint64_t work, const std::function<void(std::int64_t)>& f) {
  const std::int64_t cores = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  const std::int64_t threads = std::uint64_t(units) * work < (1u << 22) ? 1 : std::min(cores, units);
  auto run = [&](std::int64_t first) {
    for (std::int64_t u = first; u < units; u += threads) f(u);
  };
  std::vector<std::thread> helpers;
  try {
    for (std::int64_t t = 1; t < threads; ++t) helpers.emplace_back(run, t);
  } catch (const std::system_error&) {  // no thread to be had: all of it here, the same values
    for (std::thread& h : helpers) h.join();
    for (std::int64_t u = 0; u < units; ++u) f(u);
    return;
  }
  run(0);
  for (std::thread& h : helpers) h.join();
}

// out(r, c, the sum over q = 0, 1, ... k - 1 of a(r, q) b[q n + c]) in double, for an m x k A (a
// read through `a`) and a row-major k x n B: each of A's rows times B's rows in turn into a row of
// sums. Each sum takes the same additions in the same order as a dot product per element (the
// products of floats exact in double): bit for bit its result, with B read a row at a time, not
// a column (a vocabulary's logits read a 50257-wide B down its columns, a cache miss a product).
// Blocks of 16 rows go to the host's cores (each_of); `out` is called for distinct (r, c) at once.
template <typename A, typename Out>
void product_rows(std::int64_t m, std::int64_t k, std::int64_t n, A a, const float* b, Out out) {
  constexpr std::int64_t kRows = 16;
  each_of((m + kRows - 1) / kRows, std::uint64_t(kRows * k * n), [&](std::int64_t block) {
    std::vector<double> sums(static_cast<std::size_t>(n));
    for (std::int64_t r = block * kRows; r < std::min(m, (block + 1) * kRows); ++r) {
      std::fill(sums.begin(), sums.end(), 0.0);
      for (std::int64_t q = 0; q < k; ++q) {
        const double x = a(r, q);
        const float* row = b + q * n;
        for (std::int64_t c = 0; c < n; ++c) sums[std::size_t(c)] += x * row[c];
      }
      for (std::int64_t c = 0; c < n; ++c) out(r, c, sums[std::size_t(c)]);
    }
  });
}

// numpy matmul: 1-D operands promoted, batch dimensions broadcast.
void matmul(Op& op) {
  Tensor a = op.in(0), b = op.in(1);
  op.need(!a.shape.empty() && !b.shape.empty(), "a scalar operand");
  const bool a1 = a.shape.size() == 1, b1 = b.shape.size() == 1;
  if (a1) a.shape.insert(a.shape.begin(), 1);
  if (b1) b.shape.push_back(1);
  const std::int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back(), n = b.shape.back();
  if (b.shape[b.shape.size() - 2] != k)
    throw Error(op.who() + ": " + a.shape_str() + " x " + b.shape_str() + ": inner dimensions differ");
  const Shape ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  const std::size_t rank = std::max(ba.size(), bb.size());
  Shape pa(rank - ba.size(), 1), pb(rank - bb.size(), 1), batch(rank);
  pa.insert(pa.end(), ba.begin(), ba.end());
  pb.insert(pb.end(), bb.begin(), bb.end());
  for (std::size_t d = 0; d < rank; ++d) {
    op.need(pa[d] == pb[d] || pa[d] == 1 || pb[d] == 1,
            "batch dimensions of " + a.shape_str() + " and " + b.shape_str() + " do not broadcast");
    batch[d] = std::max(pa[d], pb[d]);
  }
  Shape so = batch;
  if (!a1) so.push_back(m);
  if (!b1) so.push_back(n);
  Tensor& o = op.out(0, so);
  if (op.shapes_only) return;
  for (std::int64_t t = 0; t < count(batch); ++t) {
    std::int64_t ia = 0, ib = 0, rest = t;
    for (std::size_t d = rank; d-- > 0;) {
      const std::int64_t x = rest % batch[d];
      rest /= batch[d];
      ia += (pa[d] == 1 ? 0 : x) * count(pa, d + 1);
      ib += (pb[d] == 1 ? 0 : x) * count(pb, d + 1);
    }
    product_rows(
        m, k, n, [&](std::int64_t r, std::int64_t q) { return a.data[std::size_t((ia * m + r) * k + q)]; },
        &b.data[std::size_t(ib * k * n)],
        [&](std::int64_t r, std::int64_t c, double v) { o.data[std::size_t((t * m + r) * n + c)] = float(v); });
  }
}

void gemm(Op& op) {
  const Tensor &a = op.in(0, 2), &b = op.in(1, 2);
  const bool ta = op.i("transA", 0), tb = op.i("transB", 0);
  const float alpha = op.f("alpha", 1), beta = op.f("beta", 1);
  const std::int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
  const std::int64_t n = tb ? b.shape[0] : b.shape[1];
  op.need((tb ? b.shape[1] : b.shape[0]) == k, a.shape_str() + " x " + b.shape_str() + ": inner dimensions differ");
  const Tensor* c = op.has_in(2) ? &op.in(2) : nullptr;
  if (c) {
    const Shape& cs = c->shape;
    const bool rows = cs.size() < 2 || cs[0] == 1 || cs[0] == m, cols = cs.empty() || cs.back() == 1 || cs.back() == n;
    op.need(cs.size() <= 2 && rows && cols,
            "C " + c->shape_str() + " does not broadcast to " + std::to_string(m) + "x" + std::to_string(n));
  }
  Tensor& o = op.out(0, {m, n});
  if (op.shapes_only) return;
  const auto store = [&](std::int64_t r, std::int64_t col, double acc) {
    double bias = 0;
    if (c) {  // unidirectional broadcast of C to (m, n)
      const Shape& cs = c->shape;
      const std::int64_t cr = cs.size() == 2 && cs[0] != 1 ? r : 0;
      const std::int64_t cc = !cs.empty() && cs.back() != 1 ? col : 0;
      bias = c->data[std::size_t(cs.size() == 2 ? cr * cs[1] + cc : cc)];
    }
    o.data[std::size_t(r * n + col)] = float(alpha * acc + beta * bias);
  };
  const auto a_at = [&](std::int64_t r, std::int64_t q) { return a.data[std::size_t(ta ? q * m + r : r * k + q)]; };
  if (!tb) return product_rows(m, k, n, a_at, b.data.data(), store);
  for (std::int64_t r = 0; r < m; ++r)  // B's rows are the columns: each sum reads one in order
    for (std::int64_t col = 0; col < n; ++col) {
      double acc = 0;
      for (std::int64_t q = 0; q < k; ++q) acc += double(a_at(r, q)) * b.data[std::size_t(col * k + q)];
      store(r, col, acc);
    }
}

// Pads of a 2-D window op from auto_pad or pads: {top, left, bottom, right}; the window's
// attributes checked on the way.
Shape pads_2d(const Op& op, const Shape& in, const Shape& k, const Shape& s, const Shape& d) {
  const std::string ap = op.s("auto_pad", "NOTSET");
  Shape p = op.ints("pads", {0, 0, 0, 0});
  auto positive = [](const Shape& v) { return std::all_of(v.begin(), v.end(), [](std::int64_t x) { return x > 0; }); };
  op.need(k.size() == 2 && s.size() == 2 && d.size() == 2 && p.size() == 4,
          "kernel, strides and dilations of 2 values and pads of 4 are implemented");
  op.need(positive(k) && positive(s) && positive(d), "a kernel, stride or dilation of 0 or less");
  op.need(std::all_of(p.begin(), p.end(), [](std::int64_t x) { return x >= 0; }), "negative pads");
  if (ap == "VALID") return {0, 0, 0, 0};
  if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
    for (int a = 0; a < 2; ++a) {
      const std::int64_t out = (in[a] + s[a] - 1) / s[a];
      const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * s[a] + (k[a] - 1) * d[a] + 1 - in[a]);
      const std::int64_t small = total / 2;
      p[a] = ap == "SAME_UPPER" ? small : total - small;
      p[a + 2] = total - p[a];
    }
  }
  return p;
}

// The geometry of a Conv's one group, as gather_taps reads it.
struct ConvShape {
  std::int64_t C, H, W, cg, kh, kw, sh, sw, dh, dw, pad_t, pad_l, OW;
};
// A unit's output positions: as many as keep its taps within 512 KiB (the host's L2 holds them while
// each block of 4 channels reads them again), 16 to 512 (4 rows of sums in at most 16 KiB).
std::int64_t conv_tile(std::int64_t taps) { return std::clamp<std::int64_t>(65536 / taps / 8 * 8, 16, 512); }
constexpr std::int64_t kConvRows = 4;     // output channels summed together: a tap's value read once for 4
constexpr std::int64_t kConvBlock = 256;  // output channels a unit sums (a multiple of kConvRows)

// The taps of output positions [first, first + cols) of one group (`x`: its first input plane), in
// double: patch[q * cols + j] is tap q = (c, i, j) in that order of position first + j, or 0 where
// the window lies in the padding (ONNX pads with zeros: 0 x a finite weight leaves a sum as it was, but
// for a -0 sum, which becomes +0).
void gather_taps(const ConvShape& s, const float* x, std::int64_t first, std::int64_t cols,
                 std::vector<double>& patch) {
  patch.resize(std::size_t(s.cg * s.kh * s.kw * cols));
  double* out = patch.data();
  for (std::int64_t c = 0; c < s.cg; ++c)
    for (std::int64_t i = 0; i < s.kh; ++i)
      for (std::int64_t j = 0; j < s.kw; ++j, out += cols)
        // By output rows: a row's positions read one input row, sw apart, those whose column lies
        // inside it as a run (no test a position).
        for (std::int64_t e = 0, oh = first / s.OW, ow = first % s.OW, run = 0; e < cols; e += run, ow = 0, ++oh) {
          const std::int64_t h = oh * s.sh - s.pad_t + i * s.dh;
          run = std::min(cols - e, s.OW - ow);
          const std::int64_t col = ow * s.sw - s.pad_l + j * s.dw;   // the first position's
          std::int64_t lo = col >= 0 ? 0 : (s.sw - 1 - col) / s.sw;  // the first inside, the first past
          std::int64_t hi = col >= s.W ? 0 : std::min(run, (s.W - col + s.sw - 1) / s.sw);
          if (h < 0 || h >= s.H) lo = hi = 0;
          lo = std::min(lo, run), hi = std::max(lo, std::min(hi, run));
          const std::int64_t at = (c * s.H + h) * s.W + col;  // an index, not a pointer: it may lie outside
          std::fill(out + e, out + e + lo, 0.0);
          for (std::int64_t k = lo; k < hi; ++k) out[e + k] = double(x[at + k * s.sw]);
          std::fill(out + e + hi, out + e + run, 0.0);
        }
}

// Vectors of doubles made and filled; always inlined (as four_channel_sums is) into callers compiled
// for the vectors' instructions, so no call passes one: the compilers' note that an AVX vector's
// return differs in ABI without AVX does not apply to them.
#if defined(__GNUC__)  // clang too
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
template <typename V>
__attribute__((always_inline)) inline V load_doubles(const double* at) {
  V v;
  std::memcpy(&v, at, sizeof v);
  return v;
}
template <typename V>
__attribute__((always_inline)) inline V splat(double x) {
  V v;
  for (std::size_t i = 0; i < sizeof(V) / sizeof(double); ++i) v[i] = x;
  return v;
}

// sums[r * cols + e] += w4[q * 4 + r] x patch[q * cols + e] for q = 0, 1, ... taps - 1 in that order
// (w4: four channels' weights in double, a tap's four together), for positions [from, e) of the e
// returned: each sum takes its terms in the plain loop's order (the products of floats exact in
// double). Two vectors of positions of each channel are held in registers across all the taps, so a
// sum is read and written once, not once a tap. V is a vector of doubles: SSE2's two (the x86-64
// baseline), AVX's four or AVX-512's eight: each sum's steps are the plain loop's (a product exact,
// then added), so its bits are the same on every host. Inlined into each caller, to be compiled for
// its instructions.
template <typename V>
__attribute__((always_inline)) inline std::int64_t four_channel_sums(const double* w4, std::int64_t taps,
                                                                     const double* patch, std::int64_t cols,
                                                                     double* sums, std::int64_t from) {
  constexpr std::int64_t n = sizeof(V) / sizeof(double);
  std::int64_t e = from;
  for (; e + 2 * n <= cols; e += 2 * n) {
    double* s0 = sums + e;
    double *s1 = s0 + cols, *s2 = s1 + cols, *s3 = s2 + cols;
    // The accumulators named, not an array: the compiler keeps them in registers.
    V a0 = load_doubles<V>(s0), b0 = load_doubles<V>(s0 + n), a1 = load_doubles<V>(s1), b1 = load_doubles<V>(s1 + n);
    V a2 = load_doubles<V>(s2), b2 = load_doubles<V>(s2 + n), a3 = load_doubles<V>(s3), b3 = load_doubles<V>(s3 + n);
    for (std::int64_t q = 0; q < taps; ++q) {
      const V lo = load_doubles<V>(patch + q * cols + e), hi = load_doubles<V>(patch + q * cols + e + n);
      const double* x = w4 + 4 * q;
      const V x0 = splat<V>(x[0]), x1 = splat<V>(x[1]), x2 = splat<V>(x[2]), x3 = splat<V>(x[3]);
      a0 += x0 * lo, b0 += x0 * hi, a1 += x1 * lo, b1 += x1 * hi;
      a2 += x2 * lo, b2 += x2 * hi, a3 += x3 * lo, b3 += x3 * hi;
    }
    std::memcpy(s0, &a0, sizeof a0), std::memcpy(s0 + n, &b0, sizeof b0), std::memcpy(s1, &a1, sizeof a1);
    std::memcpy(s1 + n, &b1, sizeof b1), std::memcpy(s2, &a2, sizeof a2), std::memcpy(s2 + n, &b2, sizeof b2);
    std::memcpy(s3, &a3, sizeof a3), std::memcpy(s3 + n, &b3, sizeof b3);
  }
  return e;
}
#if defined(__GNUC__)  // clang too
#pragma GCC diagnostic pop
#endif

typedef double pair __attribute__((vector_size(16)));
#if defined(__x86_64__)
typedef double quad __attribute__((vector_size(32)));
__attribute__((target("avx"))) std::int64_t four_channel_sums_avx(const double* w4, std::int64_t taps,
                                                                  const double* patch, std::int64_t cols, double* sums,
                                                                  std::int64_t from) {
  return four_channel_sums<quad>(w4, taps, patch, cols, sums, from);
}
typedef double octet __attribute__((vector_size(64)));
__attribute__((target("avx512f"))) std::int64_t four_channel_sums_avx512(const double* w4, std::int64_t taps,
                                                                         const double* patch, std::int64_t cols,
                                                                         double* sums, std::int64_t from) {
  return four_channel_sums<octet>(w4, taps, patch, cols, sums, from);
}
#else
std::int64_t four_channel_sums_avx(const double*, std::int64_t, const double*, std::int64_t, double*,
                                   std::int64_t from) {
  return from;
}
std::int64_t four_channel_sums_avx512(const double*, std::int64_t, const double*, std::int64_t, double*,
                                      std::int64_t from) {
  return from;
}
#endif

// four_channel_sums for `rows` (at most kConvRows) output channels: by AVX-512's sixteen positions and
// AVX's eight where the host has them, then SSE2's four; the positions past those (or every one of
// fewer channels) one at a time.
void channel_sums(const float* w, std::int64_t rows, std::int64_t taps, const double* patch, std::int64_t cols,
                  double* sums) {
  std::int64_t e = 0;
  if (rows == kConvRows) {
    thread_local std::vector<double> w4;  // each weight converted once, not once per 4 or 8 positions
    w4.resize(std::size_t(4 * taps));
    for (std::int64_t q = 0; q < taps; ++q)
      for (std::int64_t r = 0; r < 4; ++r) w4[std::size_t(4 * q + r)] = double(w[r * taps + q]);
    if (host_cpu::avx512f()) e = four_channel_sums_avx512(w4.data(), taps, patch, cols, sums, e);
    if (host_cpu::avx()) e = four_channel_sums_avx(w4.data(), taps, patch, cols, sums, e);
    e = four_channel_sums<pair>(w4.data(), taps, patch, cols, sums, e);
  }
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t i = e; i < cols; ++i) {
      double acc = sums[r * cols + i];
      for (std::int64_t q = 0; q < taps; ++q) acc += double(w[r * taps + q]) * patch[q * cols + i];
      sums[r * cols + i] = acc;
    }
}

void conv(Op& op) {
  const Tensor &x = op.in(0, 4), &w = op.in(1, 4);
  const std::int64_t g = op.i("group", 1), N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const std::int64_t M = w.shape[0], cg = w.shape[1];
  const Shape k = {w.shape[2], w.shape[3]}, s = op.ints("strides", {1, 1}), d = op.ints("dilations", {1, 1});
  const Shape p = pads_2d(op, {H, W}, k, s, d);
  op.need(g > 0 && cg * g == C && M % g == 0,
          "weights " + w.shape_str() + " do not fit input " + x.shape_str() + " in " + std::to_string(g) + " groups");
  op.need(op.ints("kernel_shape", k) == k, "kernel_shape disagrees with the weights " + w.shape_str());
  const std::int64_t OH = (H + p[0] + p[2] - (k[0] - 1) * d[0] - 1) / s[0] + 1;
  const std::int64_t OW = (W + p[1] + p[3] - (k[1] - 1) * d[1] - 1) / s[1] + 1;
  op.need(H + p[0] + p[2] >= (k[0] - 1) * d[0] + 1 && W + p[1] + p[3] >= (k[1] - 1) * d[1] + 1,
          "the kernel is larger than the padded input");
  const Tensor* b = op.has_in(2) ? &op.in(2) : nullptr;
  op.need(!b || std::int64_t(b->elements()) == M, "a bias of other than " + std::to_string(M) + " values");
  Tensor& y = op.out(0, {N, M, OH, OW});
  if (op.shapes_only) return;
  if (x.data.empty()) return;  // an empty input: an empty output (its planes are never read)
  const ConvShape cs{C, H, W, cg, k[0], k[1], s[0], s[1], d[0], d[1], p[0], p[1], OW};
  const std::int64_t taps = cg * k[0] * k[1], positions = OH * OW, per_group = M / g;
  const std::int64_t tile = conv_tile(taps), tiles = (positions + tile - 1) / tile;
  const std::int64_t blocks = (per_group + kConvBlock - 1) / kConvBlock;
  // A unit is one image's group's tile of output positions, for a block of the group's output
  // channels: the units are independent (each output its own sum), shared out among the host's
  // cores with the same values as on one. Each gathers its taps (a 256th of its multiply-adds when
  // the group has 256 channels or more: gathering them is several times a multiply-add's cost).
  const std::uint64_t work = std::uint64_t(std::min(kConvBlock, per_group) * taps * std::min(tile, positions));
  each_of(N * g * tiles * blocks, work, [&](std::int64_t u) {
    const std::int64_t block = u % blocks, group = u / (blocks * tiles) % g;
    const std::int64_t n = u / (blocks * tiles * g), first = u / blocks % tiles * tile;
    const std::int64_t cols = std::min(tile, positions - first);
    const std::int64_t end = group * per_group + std::min(per_group, (block + 1) * kConvBlock);
    thread_local std::vector<double> patch, sums;
    gather_taps(cs, &x.data[std::size_t((n * C + group * cg) * H * W)], first, cols, patch);
    sums.resize(std::size_t(kConvRows * cols));
    for (std::int64_t m0 = group * per_group + block * kConvBlock; m0 < end; m0 += kConvRows) {
      const std::int64_t rows = std::min(kConvRows, end - m0);
      for (std::int64_t r = 0; r < rows; ++r)
        std::fill_n(&sums[std::size_t(r * cols)], cols, b ? double(b->data[std::size_t(m0 + r)]) : 0.0);
      channel_sums(&w.data[std::size_t(m0 * taps)], rows, taps, patch.data(), cols, sums.data());
      for (std::int64_t r = 0; r < rows; ++r) {
        float* out = &y.data[std::size_t((n * M + m0 + r) * positions + first)];
        for (std::int64_t c = 0; c < cols; ++c) out[c] = float(sums[std::size_t(r * cols + c)]);
      }
    }
  });
}

// ConvTranspose, 2-D: x (N x C x H x W), w (C x M / group x kh x kw). Input (h, w) under tap
// (i, j) adds to output (h s + i d - pad_t, w s + j d - pad_l); the output is s (in - 1) +
// output_padding + (k - 1) d + 1 - pads (or output_shape, its padding split as ONNX's reference
// splits it: SAME_UPPER puts the odd one at the end, else at the start). Sums in double.
void conv_transpose(Op& op) {
  const Tensor &x = op.in(0, 4), &w = op.in(1, 4);
  const std::int64_t g = op.i("group", 1), N = x.shape[0], C = x.shape[1];
  const Shape in = {x.shape[2], x.shape[3]}, k = {w.shape[2], w.shape[3]};
  const std::int64_t mg = w.shape[1], M = mg * g;
  op.need(g > 0 && w.shape[0] == C && C % g == 0,
          "weights " + w.shape_str() + " do not fit input " + x.shape_str() + " in " + std::to_string(g) + " groups");
  op.need(op.ints("kernel_shape", k) == k, "kernel_shape disagrees with the weights " + w.shape_str());
  const Shape s = op.ints("strides", {1, 1}), d = op.ints("dilations", {1, 1}),
              op_pad = op.ints("output_padding", {0, 0});
  const Shape out_shape = op.ints("output_shape", {});
  Shape p = op.ints("pads", {0, 0, 0, 0});
  op.need(s.size() == 2 && d.size() == 2 && op_pad.size() == 2 && p.size() == 4 &&
              (out_shape.empty() || out_shape.size() == 2),
          "strides, dilations and output_padding of 2 values, pads of 4 and output_shape of 2 are implemented");
  const std::string ap = op.s("auto_pad", "NOTSET");
  Shape o(2);
  for (int a = 0; a < 2; ++a) {
    op.need(s[a] > 0 && d[a] > 0 && k[a] > 0 && op_pad[a] >= 0 && p[a] >= 0 && p[a + 2] >= 0,
            "a kernel, stride or dilation of 0 or less, or negative pads or output_padding");
    const std::int64_t full = s[a] * (in[a] - 1) + op_pad[a] + (k[a] - 1) * d[a] + 1;
    if (!out_shape.empty() || ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      const std::int64_t want = out_shape.empty() ? in[a] * s[a] : out_shape[std::size_t(a)];
      const std::int64_t total = full - want;
      // Split as ONNX's reference does, halving by floor: a negative total (output_shape past the
      // full output) gives negative pads, which extend the output at the end (and, past -1, at the
      // start too).
      const std::int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      p[a] = ap == "SAME_UPPER" ? half : total - half;
      p[a + 2] = total - p[a];
    }
    o[a] = full - p[a] - p[a + 2];
    op.need(o[a] > 0, "an output of no rows or columns");
  }
  const Tensor* b = op.has_in(2) ? &op.in(2) : nullptr;
  op.need(!b || std::int64_t(b->elements()) == M, "a bias of other than " + std::to_string(M) + " values");
  Tensor& y = op.out(0, {N, M, o[0], o[1]});
  if (op.shapes_only) return;
  std::vector<double> acc(std::size_t(o[0] * o[1]));
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t m = 0; m < M; ++m) {
      const std::int64_t cg = C / g, c0 = m / mg * cg, ml = m % mg;
      std::fill(acc.begin(), acc.end(), b ? double(b->data[std::size_t(m)]) : 0.0);
      for (std::int64_t c = c0; c < c0 + cg; ++c)
        for (std::int64_t i = 0; i < k[0]; ++i)
          for (std::int64_t j = 0; j < k[1]; ++j) {
            const double wv = w.data[std::size_t(((c * mg + ml) * k[0] + i) * k[1] + j)];
            for (std::int64_t h = 0; h < in[0]; ++h) {
              const std::int64_t oh = h * s[0] + i * d[0] - p[0];
              if (oh < 0 || oh >= o[0]) continue;
              const float* row = &x.data[std::size_t(((n * C + c) * in[0] + h) * in[1])];
              for (std::int64_t ww = 0; ww < in[1]; ++ww) {
                const std::int64_t ow = ww * s[1] + j * d[1] - p[1];
                if (ow >= 0 && ow < o[1]) acc[std::size_t(oh * o[1] + ow)] += double(row[ww]) * wv;
              }
            }
          }
      for (std::size_t e = 0; e < acc.size(); ++e) y.data[std::size_t((n * M + m) * o[0] * o[1]) + e] = float(acc[e]);
    }
}

// MaxPool / AveragePool, 2-D: the window's max, or its mean over the elements its taps (dilations
// apart) cover of the input (count_include_pad 0) or of the padded input (1).
void pool(Op& op, bool max) {
  const Tensor& x = op.in(0, 4);
  const std::int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const Shape k = op.ints("kernel_shape", {}), s = op.ints("strides", {1, 1});
  const Shape d = op.ints("dilations", {1, 1});  // AveragePool's too (opset 19)
  const Shape p = pads_2d(op, {H, W}, k, s, d);
  const bool ceil = op.i("ceil_mode", 0), with_pad = op.i("count_include_pad", 0);
  // With ceil_mode the last window must still start inside the input or its begin pad (as
  // ONNX from 1.13 and ONNX Runtime do); a window covering no input is an error.
  auto out_size = [&](std::int64_t in, int a) {
    const std::int64_t span = in + p[a] + p[a + 2] - (k[a] - 1) * d[a] - 1;
    op.need(span >= 0, "the window is larger than the padded input");
    std::int64_t n = (ceil ? (span + s[a] - 1) / s[a] : span / s[a]) + 1;
    if (ceil && (n - 1) * s[a] >= in + p[a]) --n;
    return n;
  };
  const std::int64_t OH = out_size(H, 0), OW = out_size(W, 1);
  Tensor& y = op.out(0, {N, C, OH, OW});
  for (std::int64_t nc = 0; nc < N * C; ++nc)
    for (std::int64_t oh = 0; oh < OH; ++oh)
      for (std::int64_t ow = 0; ow < OW; ++ow) {
        double acc = max ? -INFINITY : 0.0;
        std::int64_t inside = 0, padded = 0;
        for (std::int64_t i = 0; i < k[0]; ++i)
          for (std::int64_t j = 0; j < k[1]; ++j) {
            const std::int64_t h = oh * s[0] - p[0] + i * d[0], w = ow * s[1] - p[1] + j * d[1];
            padded += h < H + p[2] && w < W + p[3];
            if (h < 0 || h >= H || w < 0 || w >= W) continue;
            const float v = x.data[std::size_t((nc * H + h) * W + w)];
            acc = max ? std::max(acc, double(v)) : acc + v;
            ++inside;
          }
        op.need(inside > 0, "window (" + std::to_string(oh) + ", " + std::to_string(ow) + ") covers no input");
        y.data[std::size_t((nc * OH + oh) * OW + ow)] = float(max ? acc : acc / double(with_pad ? padded : inside));
      }
}

void global_pool(Op& op, bool max) {
  const Tensor& x = op.in(0);
  op.need(x.shape.size() >= 3, "input " + x.shape_str() + ": N x C x spatial dimensions expected");
  Shape so = x.shape;
  std::fill(so.begin() + 2, so.end(), 1);
  Tensor& y = op.out(0, so);
  const std::int64_t area = count(x.shape, 2);
  for (std::size_t nc = 0; nc < y.data.size(); ++nc) {
    double acc = max ? -INFINITY : 0.0;
    for (std::int64_t e = 0; e < area; ++e) {
      const float v = x.data[nc * std::size_t(area) + std::size_t(e)];
      acc = max ? std::max(acc, double(v)) : acc + v;
    }
    y.data[nc] = float(max ? acc : acc / double(area));
  }
}

// Softmax over `axis` (opset 13), or over the flattened dimensions from `axis` (before 13).
void softmax(Op& op) {
  const Tensor& x = op.in(0);
  const std::size_t rank = x.shape.size();
  const auto axis = std::int64_t(op.axis(op.i("axis", op.opset >= 13 ? -1 : 1), rank));
  Tensor& y = op.out(0, x.shape);
  const bool flat = op.opset < 13;
  const std::int64_t outer = count(x.shape, 0, std::size_t(axis));
  const std::int64_t len = flat ? count(x.shape, std::size_t(axis)) : x.shape[std::size_t(axis)];
  const std::int64_t inner = flat ? 1 : count(x.shape, std::size_t(axis) + 1);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t in = 0; in < inner; ++in) {
      auto at = [&](std::int64_t e) { return std::size_t((o * len + e) * inner + in); };
      double mx = -INFINITY, sum = 0;
      for (std::int64_t e = 0; e < len; ++e) mx = std::max(mx, double(x.data[at(e)]));
      for (std::int64_t e = 0; e < len; ++e) sum += std::exp(double(x.data[at(e)]) - mx);
      for (std::int64_t e = 0; e < len; ++e) y.data[at(e)] = float(std::exp(double(x.data[at(e)]) - mx) / sum);
    }
}

// The k largest (largest 1) or smallest of each line along `axis`: their indices (ties to the
// lower index, as ONNX says, or the higher with `last`) and values, in order.
void top(Op& op, std::int64_t k, std::int64_t axis, bool largest, Tensor* values, Tensor& indices, bool last = false) {
  const Tensor& x = op.in(0);
  const std::int64_t outer = count(x.shape, 0, std::size_t(axis)), len = x.shape[std::size_t(axis)];
  const std::int64_t inner = count(x.shape, std::size_t(axis) + 1);
  op.need(k >= 1 && k <= len, "k = " + std::to_string(k) + " of a line of " + std::to_string(len));
  std::vector<std::int64_t> idx(static_cast<std::size_t>(len));
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t in = 0; in < inner; ++in) {
      auto at = [&](std::int64_t e) { return x.data[std::size_t((o * len + e) * inner + in)]; };
      for (std::int64_t e = 0; e < len; ++e) idx[std::size_t(e)] = e;
      std::stable_sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) {
        if (at(a) == at(b)) return last && a > b;
        return largest ? at(a) > at(b) : at(a) < at(b);
      });
      for (std::int64_t m = 0; m < k; ++m) {
        const std::size_t to = std::size_t((o * k + m) * inner + in);
        indices.data[to] = float(idx[std::size_t(m)]);
        if (values) values->data[to] = at(idx[std::size_t(m)]);
      }
    }
}

void argmax(Op& op) {
  const Tensor& x = op.in(0);
  const auto axis = std::int64_t(op.axis(op.i("axis", 0), x.shape.size()));
  Shape so = x.shape;
  so[std::size_t(axis)] = 1;
  if (!op.i("keepdims", 1)) so.erase(so.begin() + axis);
  top(op, 1, axis, true, nullptr, op.out(0, so), op.i("select_last_index", 0) != 0);
}

void topk(Op& op) {
  const Tensor& x = op.in(0);
  op.need(op.opset >= 10 && op.has_in(1) && op.in(1).elements() == 1, "k as an input of one value (opset 10 on)");
  op.need(op.n.output_size() == 2, "TopK has two outputs (values, indices)");
  const auto axis = std::int64_t(op.axis(op.i("axis", -1), x.shape.size()));
  const auto k = std::int64_t(op.in(1).data[0]);
  Shape so = x.shape;
  so[std::size_t(axis)] = k;
  Tensor& values = op.out(0, so);
  top(op, k, axis, op.i("largest", 1) != 0, &values, op.out(1, so));
}

// ONNX's Expand: x broadcast with the shape input by numpy's rules (each axis the larger of the two).
void expand_to(Op& op) {
  const Tensor& spec = op.in(1);
  Shape to;
  for (float v : spec.data) {
    op.need(v >= 0, "a negative dimension in the shape " + spec.shape_str());
    to.push_back(std::int64_t(v));
  }
  op.need(count(to) <= std::int64_t(Tensor::kMaxElements), "the shape would hold over 2^31 values");
  const Tensor shape{to, std::vector<float>(std::size_t(count(to)), 0.0f)};
  const Tensor o = combine(op, op.in(0), shape, [](float a, float) { return a; });
  op.out(0, o.shape).data = o.data;
}

void reshape(Op& op) {
  const Tensor &x = op.in(0), &spec = op.in(1);
  Shape so(spec.data.begin(), spec.data.end());
  const bool allowzero = op.i("allowzero", 0);
  std::int64_t known = 1, unknown = -1;
  for (std::size_t d = 0; d < so.size(); ++d) {
    op.need(so[d] >= -1 && !(so[d] == -1 && unknown >= 0),
            "shape " + std::to_string(so[d]) + " at " + std::to_string(d) + ": one -1 and no other negative");
    if (so[d] == 0 && !allowzero) {
      op.need(d < x.shape.size(), "a 0 copies dimension " + std::to_string(d) + ", which " + x.shape_str() + " lacks");
      so[d] = x.shape[d];
    }
    if (so[d] == -1)
      unknown = std::int64_t(d);
    else
      known *= so[d];
  }
  if (unknown >= 0) so[std::size_t(unknown)] = known ? std::int64_t(x.elements()) / known : 0;
  if (count(so) != std::int64_t(x.elements()))
    throw Error(op.who() + ": cannot reshape " + x.shape_str() + " to " + std::to_string(count(so)) + " elements");
  op.out(0, so).data = x.data;
}

// Resize and Upsample (resize_plan): axis by axis, each output element the sum of its taps' input
// elements times their weights (ONNX's interpolation is separable), in double.
void resize(Op& op) {
  const Tensor& x = op.in(0);
  const ResizePlan plan =
      resize_plan(op.n, op.opset, x.shape, [&](int j) { return op.has_in(j) ? &op.in(j) : nullptr; });
  Shape cur = x.shape;
  std::vector<double> v(x.data.begin(), x.data.end()), next;
  for (std::size_t d = 0; d < cur.size(); ++d) {
    const auto taps =
        kernels::resize_taps(plan.rule, plan.scales[d], std::uint32_t(cur[d]), std::uint32_t(plan.out[d]));
    const std::int64_t outer = count(Shape(cur.begin(), cur.begin() + std::ptrdiff_t(d))), n = cur[d],
                       inner = count(Shape(cur.begin() + std::ptrdiff_t(d) + 1, cur.end())), m = plan.out[d];
    next.assign(std::size_t(outer * m * inner), 0.0);
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t y = 0; y < m; ++y)
        for (unsigned j = 0; j < taps.taps; ++j) {
          const std::size_t t = std::size_t(y) * taps.taps + j;
          const double w = taps.weight[t];
          const double* from = v.data() + (o * n + std::int64_t(taps.index[t])) * inner;
          double* to = next.data() + (o * m + y) * inner;
          for (std::int64_t i = 0; i < inner; ++i) to[i] += w * from[i];
        }
    v.swap(next), cur[d] = m;
  }
  Tensor& y = op.out(0, cur);
  std::copy(v.begin(), v.end(), y.data.begin());
}

// Squeeze and Unsqueeze: the axes from input 1 (opset 13 on) or the attribute (before).
Shape axes_of(const Op& op) {
  if (op.opset < 13) return op.ints("axes", {});
  Shape a;
  if (op.has_in(1))
    for (float v : op.in(1).data) a.push_back(std::int64_t(v));
  return a;
}

// ONNX's Reduce ops: each a sum (of x, x^2, |x| or e^x), a product, a maximum or a minimum,
// then for some a function of it (the mean's / n, L2's square root, LogSum's and LogSumExp's log).
enum class Reduce { Mean, Sum, Max, Min, SumSquare, L1, L2, LogSum, LogSumExp, Prod };
// What a fold starts from. A maximum or minimum starts from NaN, which any number replaces (fmax,
// fmin): a NaN gives way to a number, as the vector unit's vmax and vredmax do, and a slice of NaNs
// alone is NaN.
double identity(Reduce kind) {
  return kind == Reduce::Max || kind == Reduce::Min ? NAN : kind == Reduce::Prod ? 1.0 : 0.0;
}
double fold(Reduce kind, double a, double v) {
  switch (kind) {
    case Reduce::Max: return std::fmax(a, v);
    case Reduce::Min: return std::fmin(a, v);
    case Reduce::SumSquare:
    case Reduce::L2: return a + v * v;
    case Reduce::L1: return a + std::fabs(v);
    case Reduce::LogSumExp: return a + std::exp(v);
    case Reduce::Prod: return a * v;
    default: return a + v;
  }
}
// The result from the fold of n elements.
double finish(Reduce kind, double a, double n) {
  switch (kind) {
    case Reduce::Mean: return a / n;
    case Reduce::L2: return std::sqrt(a);
    case Reduce::LogSum:
    case Reduce::LogSumExp: return std::log(a);
    default: return a;
  }
}

// A Reduce op over `axes` (every axis when none are given; with noop_with_empty_axes, each element
// its own reduction), in double, the reduced axes kept as 1s unless keepdims is 0. The axes are an
// attribute up to opset 12 (ReduceSum) or 17 (the others), then input 1.
void reduce(Op& op, Reduce kind) {
  const Tensor& x = op.in(0);
  Shape axes;
  if (op.opset >= (kind == Reduce::Sum ? 13 : 18)) {
    if (op.has_in(1))
      for (float v : op.in(1).data) axes.push_back(std::int64_t(v));
  } else {
    axes = op.ints("axes", {});
  }
  if (axes.empty() && op.i("noop_with_empty_axes", 0)) {  // each element its own reduction (x^2, |x|, ln x, ...)
    Tensor& y = op.out(0, x.shape);
    for (std::size_t e = 0; e < x.data.size(); ++e)
      y.data[e] = float(finish(kind, fold(kind, identity(kind), x.data[e]), 1.0));
    return;
  }
  const std::size_t rank = x.shape.size();
  std::vector<bool> reduced(rank, axes.empty());
  for (std::int64_t a : axes) reduced[op.axis(a, rank)] = true;
  Shape kept = x.shape, out;
  for (std::size_t d = 0; d < rank; ++d) {
    if (reduced[d]) kept[d] = 1;
    if (!reduced[d] || op.i("keepdims", 1)) out.push_back(kept[d]);
  }
  std::vector<double> acc(std::size_t(count(kept)), identity(kind));
  std::vector<std::int64_t> idx(rank, 0);
  for (float v : x.data) {
    std::int64_t o = 0;
    for (std::size_t d = 0; d < rank; ++d) o = o * kept[d] + (reduced[d] ? 0 : idx[d]);
    double& a = acc[std::size_t(o)];
    a = fold(kind, a, double(v));
    next_index(idx, x.shape);
  }
  const double n = double(x.elements()) / double(acc.size());  // the elements each result reduces
  Tensor& y = op.out(0, out);
  for (std::size_t e = 0; e < acc.size(); ++e) y.data[e] = float(finish(kind, acc[e], n));
}

// The dimensions in `axes` (of size 1), or every dimension of size 1 when none are given.
void squeeze(Op& op) {
  const Tensor& x = op.in(0);
  const Shape axes = axes_of(op);
  std::vector<bool> drop(x.shape.size(), axes.empty());
  for (std::int64_t a : axes) drop[op.axis(a, x.shape.size())] = true;
  Shape so;
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    if (drop[d] && !axes.empty()) op.need(x.shape[d] == 1, "axis " + std::to_string(d) + " is not of size 1");
    if (!drop[d] || x.shape[d] != 1) so.push_back(x.shape[d]);
  }
  op.out(0, so).data = x.data;
}

// A dimension of size 1 at each of `axes`, counted in the output's dimensions.
void unsqueeze(Op& op) {
  const Tensor& x = op.in(0);
  const Shape axes = axes_of(op);
  const std::size_t rank = x.shape.size() + axes.size();
  std::vector<bool> added(rank, false);
  for (std::int64_t a : axes) {
    const std::size_t d = op.axis(a, rank);
    op.need(!added[d], "axis " + std::to_string(a) + " is given twice");
    added[d] = true;
  }
  Shape so;
  for (std::size_t d = 0, k = 0; d < rank; ++d) so.push_back(added[d] ? 1 : x.shape[k++]);
  op.out(0, so).data = x.data;
}

// Dropout at inference (reference_refuses): its output its input, its mask all true.
void dropout(Op& op) {
  unary(op, [](float x) { return x; });
  if (op.n.output_size() > 1 && !op.n.output(1).empty())
    op.out(1, op.in(0).shape).data.assign(op.in(0).elements(), 1.0f);
}

// Shape: the input's dimensions (from `start` to `end`, opset 15 on; negative from the end, then
// clamped to the rank), as int64 values.
void shape_of(Op& op) {
  const Shape& s = op.in(0).shape;
  const auto rank = std::int64_t(s.size());
  const auto at = [rank](std::int64_t a) { return std::clamp<std::int64_t>(a < 0 ? a + rank : a, 0, rank); };
  const std::int64_t from = at(op.i("start", 0)), to = std::max(from, at(op.i("end", rank)));
  Tensor& y = op.out(0, {to - from});
  for (std::int64_t d = from; d < to; ++d) y.data[std::size_t(d - from)] = float(s[std::size_t(d)]);
}

// Gather along `axis`: the input's slices at the indices (negative from the end), in the
// indices' shape: data.shape[:axis] + indices.shape + data.shape[axis + 1:].
void gather(Op& op) {
  const Tensor &x = op.in(0), &ix = op.in(1);
  const std::size_t axis = op.axis(op.i("axis", 0), x.shape.size());
  const std::int64_t n = x.shape[axis], outer = count(x.shape, 0, axis), inner = count(x.shape, axis + 1);
  Shape so(x.shape.begin(), x.shape.begin() + std::ptrdiff_t(axis));
  so.insert(so.end(), ix.shape.begin(), ix.shape.end());
  so.insert(so.end(), x.shape.begin() + std::ptrdiff_t(axis) + 1, x.shape.end());
  Tensor& y = op.out(0, so);
  const auto m = std::int64_t(ix.data.size());
  for (std::int64_t j = 0; j < m; ++j) {
    const auto k = std::int64_t(ix.data[std::size_t(j)]);
    op.need(k >= -n && k < n, "index " + std::to_string(k) + " is outside an axis of " + std::to_string(n));
    const std::int64_t from = k < 0 ? k + n : k;
    for (std::int64_t o = 0; o < outer; ++o)
      std::copy_n(x.data.begin() + (o * n + from) * inner, inner, y.data.begin() + (o * m + j) * inner);
  }
}

// Pad, mode constant: pads from input 1 and the value from input 2 (opset 11 on) or the
// attributes (before); cropping (a negative pad) and the other modes are not implemented.
void pad(Op& op) {
  const Tensor& x = op.in(0);
  Shape p = op.ints("pads", {});
  float value = op.f("value", 0.0f);
  if (op.opset >= 11) {
    p.clear();
    for (float v : op.in(1).data) p.push_back(std::int64_t(v));
    if (op.has_in(2)) {
      op.need(op.in(2).data.size() == 1, "constant_value holds " + std::to_string(op.in(2).data.size()) + " values");
      value = op.in(2).data[0];
    }
  }
  const std::size_t r = x.shape.size();
  op.need(p.size() == 2 * r, "pads has " + std::to_string(p.size()) + " values for " + std::to_string(r) + " axes");
  op.need(*std::min_element(p.begin(), p.end()) >= 0, "a negative pad (cropping) is not implemented");
  Shape so(r);
  for (std::size_t d = 0; d < r; ++d) so[d] = x.shape[d] + p[d] + p[d + r];
  Tensor& y = op.out(0, so);
  std::fill(y.data.begin(), y.data.end(), value);
  std::vector<std::int64_t> idx(r, 0);
  for (std::size_t e = 0; e < x.data.size(); ++e) {  // idx: x's index
    std::int64_t at = 0;
    for (std::size_t d = 0; d < r; ++d) at = at * so[d] + idx[d] + p[d];
    y.data[std::size_t(at)] = x.data[e];
    next_index(idx, x.shape);
  }
}

void flatten(Op& op) {
  const Tensor& x = op.in(0);
  const std::size_t axis = op.axis(op.i("axis", 1), x.shape.size(), 1);
  op.out(0, {count(x.shape, 0, axis), count(x.shape, axis)}).data = x.data;
}

void transpose(Op& op) {
  const Tensor& x = op.in(0);
  const std::size_t rank = x.shape.size();
  Shape rev(rank);
  std::iota(rev.rbegin(), rev.rend(), 0);
  const Shape perm = op.ints("perm", rev);
  Shape sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  op.need(sorted == Shape(rev.rbegin(), rev.rend()), "perm is not a permutation of the input's dimensions");
  Shape so(rank);
  for (std::size_t d = 0; d < rank; ++d) so[d] = x.shape[std::size_t(perm[d])];
  Tensor& y = op.out(0, so);
  std::vector<std::int64_t> idx(rank, 0);
  for (std::size_t e = 0; e < y.data.size(); ++e) {  // idx: the output's index
    std::int64_t src = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      std::int64_t v = 0;
      for (std::size_t q = 0; q < rank; ++q)
        if (std::size_t(perm[q]) == d) v = idx[q];
      src = src * x.shape[d] + v;
    }
    y.data[e] = x.data[std::size_t(src)];
    next_index(idx, so);
  }
}

void concat(Op& op) {
  const Tensor& first = op.in(0);
  const std::size_t axis = op.axis(op.i("axis", 0), first.shape.size());
  Shape so = first.shape;
  so[axis] = 0;
  for (int q = 0; q < op.n.input_size(); ++q) {
    Shape other = op.in(q, first.shape.size()).shape, mine = first.shape;
    other[axis] = mine[axis] = 0;
    op.need(other == mine, "input " + std::to_string(q) + " " + op.in(q).shape_str() + " differs from " +
                               first.shape_str() + " off the axis");
    so[axis] += op.in(q).shape[axis];
  }
  Tensor& y = op.out(0, so);
  const std::int64_t outer = count(so, 0, axis), inner = count(so, axis + 1);
  std::int64_t at = 0;
  for (int q = 0; q < op.n.input_size(); ++q) {
    const Tensor& t = op.in(q);
    const std::int64_t len = t.shape[axis] * inner;
    for (std::int64_t o = 0; o < outer; ++o)
      std::copy_n(t.data.begin() + o * len, len, y.data.begin() + o * so[axis] * inner + at);
    at += len;
  }
}

// What plan() gives; its Error named by op's node.
template <typename Plan>
auto named(const Op& op, Plan plan) {
  try {
    return plan();
  } catch (const Error& e) {
    throw Error(op.who() + ": " + e.what());
  }
}

// Slice (slice_plan).
void slice(Op& op) {
  const Tensor& x = op.in(0);
  const Tensor y =
      sliced(x, named(op, [&] {
               return slice_plan(op.n, op.opset, x.shape, [&](int j) { return op.has_in(j) ? &op.in(j) : nullptr; });
             }));
  Tensor& out = op.out(0, y.shape);
  if (!y.data.empty()) out.data = y.data;
}

// Split (split_plan): output q is x's run of sizes[q] along the axis after the runs before it.
void split(Op& op) {
  const Tensor& x = op.in(0);
  const SplitPlan p = named(op, [&] {
    return split_plan(op.n, op.opset, x.shape, [&](int j) { return op.has_in(j) ? &op.in(j) : nullptr; });
  });
  std::vector<SliceAxis> plan = whole_axes(x.shape);
  for (int q = 0; q < op.n.output_size(); plan[p.axis].start += plan[p.axis].count, ++q) {
    plan[p.axis].count = p.sizes[std::size_t(q)];
    if (op.n.output(q).empty()) continue;  // an output left out
    const Tensor y = sliced(x, plan);
    Tensor& out = op.out(q, y.shape);
    if (!y.data.empty()) out.data = y.data;
  }
}

void batch_norm(Op& op) {
  const Tensor &x = op.in(0), &sc = op.in(1), &b = op.in(2), &mean = op.in(3), &var = op.in(4);
  const float eps = op.f("epsilon", 1e-5f);
  op.need(x.shape.size() >= 2, "input " + x.shape_str() + ": N x C expected");
  const std::int64_t C = x.shape[1], inner = count(x.shape, 2);
  for (const Tensor* t : {&sc, &b, &mean, &var})
    op.need(std::int64_t(t->elements()) == C, "a scale, bias, mean or variance of other than C values");
  Tensor& y = op.out(0, x.shape);
  // A plane (an image's channel) at a time: its channel's root taken once, not an element's channel
  // found by two divisions and its root again; each element's terms as they were.
  for (std::int64_t plane = 0; plane < x.shape[0] * C; ++plane) {
    const auto c = std::size_t(plane % C);
    const double m = mean.data[c], root = std::sqrt(double(var.data[c]) + eps), s = sc.data[c], add = b.data[c];
    for (auto e = std::size_t(plane * inner); e < std::size_t((plane + 1) * inner); ++e)
      y.data[e] = float((x.data[e] - m) / root * s + add);
  }
}

// Over the dimensions from `axis` on: Y = (X - mean) / sqrt(var + epsilon) * Scale + B, and the
// optional Mean and InvStdDev outputs (the statistics' shape keeps the rank, 1 from `axis`).
void layer_norm(Op& op) {
  const Tensor &x = op.in(0), &sc = op.in(1);
  const std::size_t axis = op.axis(op.i("axis", -1), x.shape.size());
  const double eps = op.f("epsilon", 1e-5f);
  const std::int64_t rows = count(x.shape, 0, axis), len = count(x.shape, axis);
  const Tensor* b = op.has_in(2) ? &op.in(2) : nullptr;
  for (const Tensor* t : {&sc, b})
    if (t && std::int64_t(t->elements()) != len && t->elements() != 1)
      throw Error(op.who() + ": scale / bias " + t->shape_str() + " is neither the normalized shape nor one value");
  Shape stat = x.shape;
  std::fill(stat.begin() + std::ptrdiff_t(axis), stat.end(), 1);
  Tensor& y = op.out(0, x.shape);
  Tensor* mean_out = op.n.output_size() > 1 && !op.n.output(1).empty() ? &op.out(1, stat) : nullptr;
  Tensor* inv_out = op.n.output_size() > 2 && !op.n.output(2).empty() ? &op.out(2, stat) : nullptr;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = x.data.data() + r * len;
    double mean = 0, var = 0;
    for (std::int64_t e = 0; e < len; ++e) mean += row[e];
    mean /= double(len);
    for (std::int64_t e = 0; e < len; ++e) var += (row[e] - mean) * (row[e] - mean);
    const double inv = 1.0 / std::sqrt(var / double(len) + eps);
    for (std::int64_t e = 0; e < len; ++e) {
      const auto k = std::size_t(e);
      const double scale = sc.data[sc.elements() == 1 ? 0 : k], bias = b ? b->data[b->elements() == 1 ? 0 : k] : 0;
      y.data[std::size_t(r * len + e)] = float((row[e] - mean) * inv * scale + bias);
    }
    if (mean_out) mean_out->data[std::size_t(r)] = float(mean);
    if (inv_out) inv_out->data[std::size_t(r)] = float(inv);
  }
}

// Clip: bounds from inputs 1 and 2 (opset 11 on) or attributes min / max (before).
void clip(Op& op) {
  float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (op.opset >= 11) {
    for (int q : {1, 2}) op.need(!op.has_in(q) || op.in(q).elements() == 1, "a bound of other than one value");
    if (op.has_in(1)) lo = op.in(1).data[0];
    if (op.has_in(2)) hi = op.in(2).data[0];
  } else {
    lo = op.f("min", lo), hi = op.f("max", hi);
  }
  unary(op, [lo, hi](float x) { return std::min(std::max(x, lo), hi); });
}

struct Entry {
  const char* op;
  std::function<void(Op&)> run;
  // Its values cost a sum over an axis per output (the network's arithmetic, nearly all of the
  // reference's host time): left out when only shapes are asked for.
  bool contraction = false;
};

// The element-wise ops (an output element from the inputs' elements at its index, broadcast).
std::vector<Entry> pointwise_entries() {
  return {
      {"Relu", [](Op& o) { unary(o, [](float x) { return x < 0 ? 0.0f : x; }); }},  // NaN stays NaN
      {"Sigmoid", [](Op& o) { unary(o, [](float x) { return float(1.0 / (1.0 + std::exp(-double(x)))); }); }},
      {"Tanh", [](Op& o) { unary(o, [](float x) { return std::tanh(x); }); }},
      {"LeakyRelu",
       [](Op& o) {
         const float a = o.f("alpha", 0.01f);
         unary(o, [a](float x) { return x >= 0 ? x : a * x; });
       }},
      {"Clip", clip},
      {"HardSigmoid",
       [](Op& o) {
         const float a = o.f("alpha", 0.2f), b = o.f("beta", 0.5f);
         unary(o, [a, b](float x) { return std::max(0.0f, std::min(1.0f, a * x + b)); });
       }},
      {"HardSwish",
       [](Op& o) { unary(o, [](float x) { return x * std::max(0.0f, std::min(1.0f, x / 6.0f + 0.5f)); }); }},
      {"Abs", [](Op& o) { unary(o, [](float x) { return std::fabs(x); }); }},
      {"Neg", [](Op& o) { unary(o, [](float x) { return -x; }); }},
      {"Sqrt", [](Op& o) { unary(o, [](float x) { return std::sqrt(x); }); }},
      {"Reciprocal", [](Op& o) { unary(o, [](float x) { return 1.0f / x; }); }},
      {"Log", [](Op& o) { unary(o, [](float x) { return std::log(x); }); }},
      {"Exp", [](Op& o) { unary(o, [](float x) { return std::exp(x); }); }},
      {"Erf", [](Op& o) { unary(o, [](float x) { return std::erf(x); }); }},
      {"Pow", [](Op& o) { broadcast(o, [](float a, float b) { return float(std::pow(double(a), double(b))); }); }},
      {"Max", [](Op& o) { broadcast(o, [](float a, float b) { return std::max(a, b); }); }},
      {"Min", [](Op& o) { broadcast(o, [](float a, float b) { return std::min(a, b); }); }},
      {"Identity", [](Op& o) { unary(o, [](float x) { return x; }); }},
      {"Cast",
       [](Op& o) {
         const int to = int(o.i("to", 0));
         unary(o, [to](float x) { return cast_value(x, to); });
       }},
      {"Dropout", dropout},
      {"Equal", [](Op& o) { broadcast(o, [](float a, float b) { return truth(a == b); }); }},
      {"Less", [](Op& o) { broadcast(o, [](float a, float b) { return truth(a < b); }); }},
      {"LessOrEqual", [](Op& o) { broadcast(o, [](float a, float b) { return truth(a <= b); }); }},
      {"Greater", [](Op& o) { broadcast(o, [](float a, float b) { return truth(a > b); }); }},
      {"GreaterOrEqual", [](Op& o) { broadcast(o, [](float a, float b) { return truth(a >= b); }); }},
      {"And", [](Op& o) { broadcast(o, [](float a, float b) { return truth(a != 0 && b != 0); }); }},
      {"Or", [](Op& o) { broadcast(o, [](float a, float b) { return truth(a != 0 || b != 0); }); }},
      {"Xor", [](Op& o) { broadcast(o, [](float a, float b) { return truth((a != 0) != (b != 0)); }); }},
      {"Not", [](Op& o) { unary(o, [](float x) { return truth(x == 0); }); }},
      {"Where", where},
      {"Add", [](Op& o) { broadcast(o, [](float a, float b) { return a + b; }); }},
      {"Sub", [](Op& o) { broadcast(o, [](float a, float b) { return a - b; }); }},
      {"Mul", [](Op& o) { broadcast(o, [](float a, float b) { return a * b; }); }},
      {"Div", [](Op& o) { broadcast(o, [](float a, float b) { return a / b; }); }},
  };
}

const std::vector<Entry>& table() {
  static const std::vector<Entry> t = [] {
    std::vector<Entry> e = pointwise_entries();
    e.insert(e.end(), {
                          {"ReduceMean", [](Op& o) { reduce(o, Reduce::Mean); }},
                          {"ReduceSum", [](Op& o) { reduce(o, Reduce::Sum); }},
                          {"ReduceMax", [](Op& o) { reduce(o, Reduce::Max); }},
                          {"ReduceMin", [](Op& o) { reduce(o, Reduce::Min); }},
                          {"ReduceSumSquare", [](Op& o) { reduce(o, Reduce::SumSquare); }},
                          {"ReduceL1", [](Op& o) { reduce(o, Reduce::L1); }},
                          {"ReduceL2", [](Op& o) { reduce(o, Reduce::L2); }},
                          {"ReduceLogSum", [](Op& o) { reduce(o, Reduce::LogSum); }},
                          {"ReduceLogSumExp", [](Op& o) { reduce(o, Reduce::LogSumExp); }},
                          {"ReduceProd", [](Op& o) { reduce(o, Reduce::Prod); }},
                          {"MatMul", matmul, true},
                          {"Gemm", gemm, true},
                          {"Conv", conv, true},
                          {"ConvTranspose", conv_transpose, true},
                          {"MaxPool", [](Op& o) { pool(o, true); }},
                          {"AveragePool", [](Op& o) { pool(o, false); }},
                          {"GlobalAveragePool", [](Op& o) { global_pool(o, false); }},
                          {"GlobalMaxPool", [](Op& o) { global_pool(o, true); }},
                          {"Softmax", softmax},
                          {"ArgMax", argmax},
                          {"TopK", topk},
                          {"Flatten", flatten},
                          {"Reshape", reshape},
                          {"Expand", expand_to},
                          {"Squeeze", squeeze},
                          {"Pad", pad},
                          {"Resize", resize},
                          {"Upsample", resize},
                          {"Unsqueeze", unsqueeze},
                          {"Shape", shape_of},
                          {"Gather", gather},
                          {"Transpose", transpose},
                          {"Concat", concat},
                          {"Slice", slice},
                          {"Split", split},
                          {"BatchNormalization", batch_norm},
                          {"LayerNormalization", layer_norm},
                      });
    return e;
  }();
  return t;
}

const Entry* find(const std::string& op) {
  for (const Entry& e : table())
    if (op == e.op) return &e;
  return nullptr;
}

// Attributes of old opsets or values the reference does not implement.
std::string refuses_attributes(const onnx::NodeProto& n, std::int64_t opset) {
  const std::string& op = n.op_type();
  const bool elementwise = op == "Add" || op == "Sub" || op == "Mul" || op == "Div";
  for (const auto& a : n.attribute()) {
    const std::string& nm = a.name();
    if (nm == "auto_pad" && a.s() != "NOTSET" && a.s() != "VALID" && a.s() != "SAME_UPPER" && a.s() != "SAME_LOWER")
      return "auto_pad " + a.s() + " is no ONNX value";
    if (elementwise && (nm == "broadcast" || nm == "axis"))
      return "opset " + std::to_string(opset) + "'s axis-aligned broadcasting is not implemented";
    if (op == "BatchNormalization" && (nm == "spatial" || nm == "is_test"))
      return "attribute " + nm + " (opset " + std::to_string(opset) + ") is not implemented";
  }
  return "";
}

// A 1-D window op as its 2-D form: while it runs, its input and weights are viewed with a 1
// before their last dimension (the same elements in the same order), its attributes lifted
// (NodeAttrs::one_d); its output is viewed back without it.
void run_1d(const Entry& e, Op& op) {
  for (const auto& a : op.n.attribute()) {  // a count of the 2-D form's would pass its checks
    const bool window = a.name() == "kernel_shape" || a.name() == "strides" || a.name() == "dilations" ||
                        a.name() == "output_padding" || a.name() == "output_shape";
    if ((window && a.ints_size() != 1) || (a.name() == "pads" && a.ints_size() != 2))
      throw Error(op.who() + ": a 1-D window's " + a.name() + " has " + std::to_string(a.ints_size()) +
                  " values, not " + (window ? "1" : "2"));
  }
  struct View {  // the lifted shapes, put back however the op ends
    std::vector<Tensor*> lifted;
    ~View() {
      for (Tensor* t : lifted) t->shape.erase(t->shape.end() - 2);
    }
  } view;
  for (int i : {0, 1}) {
    Tensor* t = op.has_in(i) ? &op.v.at(op.n.input(i)) : nullptr;
    if (t && t->shape.size() == 3 && std::find(view.lifted.begin(), view.lifted.end(), t) == view.lifted.end()) {
      t->shape = as_2d(t->shape);
      view.lifted.push_back(t);
    }
    if (op.n.op_type() != "Conv" && op.n.op_type() != "ConvTranspose") break;  // a pool's input 0 only
  }
  op.one_d = true;
  e.run(op);
  Tensor& y = op.v.at(op.n.output(0));
  y.shape.erase(y.shape.end() - 2);
}

// Dropout runs as at inference (its output its input, its mask all true): refused in training
// mode with a ratio above 0 (random), is_test 0 before opset 7 (its default there: training).
// Its inputs' values are known once `values` are given.
std::string dropout_refuses(const onnx::NodeProto& n, std::int64_t opset, const Tensors* values) {
  if (n.op_type() != "Dropout") return "";
  if (opset < 7 && NodeAttrs{n}.i("is_test", 0) == 0)
    return "training mode (is_test 0, opset 6's default) is not implemented";
  if (n.input_size() <= 2 || n.input(2).empty() || !values) return "";
  const auto value = [&](int q) {  // NaN: not one value
    const auto it = values->find(n.input(q));
    return it != values->end() && it->second.elements() == 1 ? it->second.data[0] : NAN;
  };
  const float ratio = n.input(1).empty() ? 0.5f : value(1);
  if (value(2) != 0.0f && ratio != 0.0f)  // a NaN compares unequal: refused
    return "training mode with a ratio above 0 (random) is not implemented";
  return "";
}

// Why a Resize's coordinate transformation is refused: tf_crop_and_resize's value outside its roi
// (extrapolation_value) is no weighted sum of taps; any other name is no ONNX transformation.
std::string transform_refusal(const std::string& ctm) {
  return ctm == "tf_crop_and_resize" ? " is refused: outside its roi an output is extrapolation_value, no sum of taps"
                                     : " is no ONNX coordinate transformation";
}

}  // namespace

std::string reference_refuses(const onnx::NodeProto& n, std::int64_t opset, const Tensors* values) {
  if (!n.domain().empty() && n.domain() != "ai.onnx") return "domain " + n.domain() + " is not implemented";
  if (!find(n.op_type())) return "op " + n.op_type() + " is not implemented";
  const std::string& op = n.op_type();
  const bool window = op == "Conv" || op == "MaxPool" || op == "AveragePool";
  for (const auto& a : n.attribute()) {
    if (window && a.name() == "kernel_shape" && a.ints_size() != 2 && a.ints_size() != 1)
      return "1-D and 2-D windows are implemented, not " + std::to_string(a.ints_size()) + "-D";
    if (op == "MaxPool" && a.name() == "storage_order" && a.i()) return "storage_order 1 is not implemented";
    if (op == "BatchNormalization" && a.name() == "training_mode" && a.i()) return "training_mode is not implemented";
    if (op == "Pad" && a.name() == "mode" && a.s() != "constant") return "mode '" + a.s() + "' is not implemented";
    if ((op == "Resize" || op == "Upsample") && a.name() == "mode" &&
        kernels::resize_name(kernels::kResizeModes, a.s()) < 0)
      return "mode " + a.s() + " is no ONNX Resize mode (nearest, linear, cubic)";
    if (op == "Resize" && a.name() == "coordinate_transformation_mode" &&
        kernels::resize_name(kernels::kResizeTransforms, a.s()) < 0)
      return "coordinate_transformation_mode " + a.s() + transform_refusal(a.s());
    if (op == "Resize" && a.name() == "nearest_mode" && kernels::resize_name(kernels::kNearestRoundings, a.s()) < 0)
      return "nearest_mode " + a.s() + " is no ONNX nearest_mode (round_prefer_floor, round_prefer_ceil, floor, ceil)";
  }
  if (std::string why = refuses_attributes(n, opset); !why.empty()) return why;
  const bool windowed = op == "Conv" || op == "ConvTranspose" || op == "MaxPool" || op == "AveragePool";
  if (values && windowed && n.input_size() > 0 && values->count(n.input(0))) {
    const std::size_t rank = values->at(n.input(0)).shape.size();
    if (rank != 3 && rank != 4)
      return "input " + values->at(n.input(0)).shape_str() +
             ": 1-D and 2-D windows are implemented (N x C x L or N x C x H x W)";
  }
  if ((op == "Concat" && opset < 4) || (op == "Reshape" && opset < 5))
    return op + " of opset " + std::to_string(opset) + " is not implemented";
  if (op == "MaxPool" && n.output_size() > 1) return "the Indices output is not implemented";
  if (op == "Cast" && !castable_to(int(NodeAttrs{n}.i("to", 0))))
    return "a Cast to " + onnx::TensorProto::DataType_Name(onnx::TensorProto::DataType(NodeAttrs{n}.i("to", 0))) +
           " is not implemented (to the float, integer and bool types is)";
  if (std::string why = dropout_refuses(n, opset, values); !why.empty()) return why;
  if (op == "BatchNormalization" && n.output_size() > 1)
    return "the running mean / variance outputs are not implemented";
  if (window && op != "Conv" && opset < 10) return "opset " + std::to_string(opset) + " pooling is not implemented";
  return "";
}

namespace {

// Opset 18's Resize attributes where they would change the answer (each default is the earlier
// opsets' behaviour): antialias widens a linear or cubic filter on an axis it shrinks;
// keep_aspect_ratio_policy changes what sizes give; axes names the axes scales or sizes are for.
void refuse_opset18(const onnx::NodeProto& n, const ResizePlan& p, bool sizes, const std::string& who) {
  const NodeAttrs a{n};
  const bool shrinks = std::any_of(p.scales.begin(), p.scales.end(), [](double s) { return s < 1; });
  if (a.i("antialias", 0) && p.rule.mode != kernels::ResizeMode::Nearest && shrinks)
    throw Error(who +
                ": antialias 1 on an axis it shrinks is refused: its widened filter is not among the kernel's taps");
  if (sizes && a.s("keep_aspect_ratio_policy", "stretch") != "stretch")
    throw Error(who + ": keep_aspect_ratio_policy " + a.s("keep_aspect_ratio_policy", "") +
                " is refused: it changes the sizes given (stretch is taken)");
  for (const auto& at : n.attribute())
    if (at.name() == "axes") throw Error(who + ": axes is refused: scales or sizes are taken for every axis");
}

}  // namespace

ResizePlan resize_plan(const onnx::NodeProto& n, std::int64_t opset, const std::vector<std::int64_t>& in,
                       const std::function<const Tensor*(int)>& input) {
  const NodeAttrs a{n};
  const std::string who = "node '" + n.name() + "' (" + n.op_type() + ")";
  ResizePlan p;
  const std::string mode = a.s("mode", "nearest");
  if (kernels::resize_name(kernels::kResizeModes, mode) < 0)
    throw Error(who + ": mode " + mode + " is no ONNX Resize mode (nearest, linear, cubic)");
  p.rule.mode = kernels::ResizeMode(kernels::resize_name(kernels::kResizeModes, mode));
  const bool v10 = n.op_type() == "Upsample" || opset < 11;  // scales at input 1; asymmetric, floor
  const std::string ctm = v10 ? "asymmetric" : a.s("coordinate_transformation_mode", "half_pixel");
  const std::string rounding = v10 ? "floor" : a.s("nearest_mode", "round_prefer_floor");
  if (kernels::resize_name(kernels::kResizeTransforms, ctm) < 0)
    throw Error(who + ": coordinate_transformation_mode " + ctm + transform_refusal(ctm));
  if (kernels::resize_name(kernels::kNearestRoundings, rounding) < 0)
    throw Error(who + ": nearest_mode " + rounding +
                " is no ONNX nearest_mode (round_prefer_floor, round_prefer_ceil, floor, ceil)");
  p.rule.transform = kernels::ResizeTransform(kernels::resize_name(kernels::kResizeTransforms, ctm));
  p.rule.rounding = kernels::NearestRounding(kernels::resize_name(kernels::kNearestRoundings, rounding));
  p.rule.cubic_a = a.f("cubic_coeff_a", -0.75f);
  p.rule.exclude_outside = a.i("exclude_outside", 0) != 0;
  Tensor attr;  // Upsample before opset 9: the scales an attribute
  if (n.op_type() == "Upsample" && opset < 9)
    for (const auto& at : n.attribute())
      if (at.name() == "scales") attr.data.assign(at.floats().begin(), at.floats().end());
  const Tensor* scales = n.op_type() == "Upsample" && opset < 9 ? &attr : input(v10 ? 1 : 2);
  const Tensor* sizes = v10 ? nullptr : input(3);
  if (sizes && sizes->data.empty()) sizes = nullptr;
  if (!sizes && (!scales || scales->data.size() != in.size()))
    throw Error(who + ": " + std::to_string(in.size()) + " scales or sizes are needed");
  if (sizes && sizes->data.size() != in.size())
    throw Error(who + ": " + std::to_string(in.size()) + " sizes are needed");
  for (std::size_t d = 0; d < in.size(); ++d) {
    const double scale = sizes ? double(sizes->data[d]) / double(in[d]) : double(scales->data[d]);
    const auto out = sizes ? std::int64_t(sizes->data[d]) : std::int64_t(std::floor(scale * double(in[d])));
    if (!(scale > 0) || out < 1 || out > (std::int64_t(1) << 31) || in[d] > (std::int64_t(1) << 31))
      throw Error(who + ": axis " + std::to_string(d) + " scaled by " + std::to_string(scale) + " to " +
                  std::to_string(out) + " elements");
    p.scales.push_back(scale), p.out.push_back(out);
  }
  refuse_opset18(n, p, sizes != nullptr, who);
  return p;
}

namespace {

// An index as ONNX gives it (an int64; INT64_MAX held in an f32 is 2^63, past int64), held within
// +-2^62, where adding an axis's size to it cannot overflow.
std::int64_t index_of(double v) {
  constexpr double kMost = double(std::int64_t(1) << 62);
  return std::int64_t(std::clamp(v, -kMost, kMost));
}

// Input j's values as indices, or the attribute `name`'s (opsets that give it so).
std::vector<std::int64_t> indices_of(const onnx::NodeProto& n, bool attribute, const char* name, int j,
                                     const std::function<const Tensor*(int)>& input) {
  std::vector<std::int64_t> out;
  if (attribute)
    for (std::int64_t v : NodeAttrs{n}.ints(name, {})) out.push_back(index_of(double(v)));
  else if (const Tensor* t = input(j))
    for (float v : t->data) out.push_back(index_of(double(v)));
  return out;
}

// One axis of dim elements sliced from `start` toward `end` (exclusive) by `step`, as ONNX clamps:
// a step forward takes [0, dim], one backward [-1, dim - 1]. Where it takes one element or none,
// its step is 1: the same elements, and no stride of a step as long as 2^62.
SliceAxis slice_axis(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  SliceAxis a{0, step, 0};
  if (dim > 0 && step > 0) {
    start = std::clamp<std::int64_t>(start, 0, dim), end = std::clamp<std::int64_t>(end, 0, dim);
    a = {start, step, end > start ? (end - start + step - 1) / step : 0};
  } else if (dim > 0) {
    start = std::clamp<std::int64_t>(start, 0, dim - 1), end = std::clamp<std::int64_t>(end, -1, dim - 1);
    a = {start, step, start > end ? (start - end - step - 1) / -step : 0};
  }
  if (a.count <= 1) a.step = 1;
  return a;
}

}  // namespace

std::vector<SliceAxis> slice_plan(const onnx::NodeProto& n, std::int64_t opset, const std::vector<std::int64_t>& in,
                                  const std::function<const Tensor*(int)>& input) {
  const bool attrs = opset < 10;
  const std::vector<std::int64_t> starts = indices_of(n, attrs, "starts", 1, input),
                                  ends = indices_of(n, attrs, "ends", 2, input);
  std::vector<std::int64_t> axes = indices_of(n, attrs, "axes", 3, input), steps = indices_of(n, false, "", 4, input);
  if (axes.empty())
    for (std::size_t k = 0; k < starts.size(); ++k) axes.push_back(std::int64_t(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw Error("starts, ends, axes and steps hold " + std::to_string(starts.size()) + ", " +
                std::to_string(ends.size()) + ", " + std::to_string(axes.size()) + " and " +
                std::to_string(steps.size()) + " values: one each per axis sliced");
  std::vector<SliceAxis> plan = whole_axes(in);
  std::vector<bool> seen(in.size(), false);
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::int64_t rank = std::int64_t(in.size()), a = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (a < 0 || a >= rank || seen[std::size_t(a)])
      throw Error("axis " + std::to_string(axes[k]) + " is out of range or named twice (input of rank " +
                  std::to_string(rank) + ")");
    if (steps[k] == 0) throw Error("a step of 0 on axis " + std::to_string(a));
    seen[std::size_t(a)] = true;
    plan[std::size_t(a)] = slice_axis(in[std::size_t(a)], starts[k], ends[k], steps[k]);
  }
  return plan;
}

std::vector<SliceAxis> whole_axes(const std::vector<std::int64_t>& in) {
  std::vector<SliceAxis> plan;
  for (std::int64_t d : in) plan.push_back({0, 1, d});
  return plan;
}

Tensor sliced(const Tensor& x, const std::vector<SliceAxis>& plan) {
  Tensor y;
  for (const SliceAxis& a : plan) y.shape.push_back(a.count);
  if (x.data.empty()) return y;
  y.data.resize(y.elements());
  std::vector<std::int64_t> idx(y.shape.size(), 0);
  for (float& v : y.data) {  // idx: the output's index
    std::int64_t src = 0;
    for (std::size_t d = 0; d < idx.size(); ++d) src = src * x.shape[d] + plan[d].start + idx[d] * plan[d].step;
    v = x.data[std::size_t(src)];
    next_index(idx, y.shape);
  }
  return y;
}

SplitPlan split_plan(const onnx::NodeProto& n, std::int64_t opset, const std::vector<std::int64_t>& in,
                     const std::function<const Tensor*(int)>& input) {
  const NodeAttrs a{n};
  const std::int64_t rank = std::int64_t(in.size()), axis = a.i("axis", 0) < 0 ? a.i("axis", 0) + rank : a.i("axis", 0);
  if (axis < 0 || axis >= rank)
    throw Error("axis " + std::to_string(a.i("axis", 0)) + " of an input of rank " + std::to_string(rank));
  SplitPlan p{std::size_t(axis), indices_of(n, opset < 13, "split", 1, input)};
  const std::int64_t dim = in[p.axis], outputs = n.output_size();
  if (p.sizes.empty()) {
    const std::int64_t parts = opset >= 18 && a.find("num_outputs") ? a.i("num_outputs", 0) : outputs;
    if (parts < 1 || (opset < 18 && dim % parts))
      throw Error("an axis of " + std::to_string(dim) + " does not split into " + std::to_string(parts) +
                  " equal parts (give split; opset 18's num_outputs is read as 17's equal parts)");
    const std::int64_t chunk = (dim + parts - 1) / parts;
    for (std::int64_t q = 0; q < parts; ++q) p.sizes.push_back(std::clamp<std::int64_t>(dim - q * chunk, 0, chunk));
  }
  std::int64_t sum = 0;
  for (std::int64_t s : p.sizes) sum += s < 0 ? -(std::int64_t(1) << 62) : s;
  if (std::int64_t(p.sizes.size()) != outputs || sum != dim)
    throw Error(std::to_string(p.sizes.size()) + " sizes summing to " + std::to_string(sum) + " for " +
                std::to_string(outputs) + " outputs of an axis of " + std::to_string(dim) +
                " (one size each, none negative, summing to the axis)");
  return p;
}

namespace {

// The values the model's shape inference typed as integers (int8 .. uint64: a shape's arithmetic,
// an image's pixels), and their types.
std::map<std::string, int> integer_values(const Model& m) {
  std::map<std::string, int> out;
  const auto note = [&](const onnx::ValueInfoProto& v) {
    const int t = v.type().tensor_type().elem_type();
    if (integer_type(t)) out[v.name()] = t;
  };
  for (const auto& v : m.graph().value_info()) note(v);
  for (const auto& v : m.graph().output()) note(v);
  return out;
}

// A value typed as an 8- or 16-bit integer must hold what its type holds: ONNX's arithmetic wraps
// there (uint8 200 + 100 is 44), the reference's f32 does not. Its values are whole numbers far
// below 2^24, so f32 holds the exact result and the check is exact.
void check_narrow(const std::string& name, int type, const Tensor& t, const std::string& who) {
  using T = onnx::TensorProto;
  static const std::map<int, std::pair<float, float>> kRange = {{T::UINT8, {0.0f, 255.0f}},
                                                                {T::INT8, {-128.0f, 127.0f}},
                                                                {T::UINT16, {0.0f, 65535.0f}},
                                                                {T::INT16, {-32768.0f, 32767.0f}}};
  const auto r = kRange.find(type);
  if (r == kRange.end()) return;
  for (float v : t.data)
    if (!(v >= r->second.first && v <= r->second.second))
      throw Error(who + ": output '" + name + "' (" + T::DataType_Name(T::DataType(type)) + ") holds " +
                  std::to_string(v) +
                  ", past its type's range: ONNX wraps it there, the f32 reference and the "
                  "platform's f16 would not (refused)");
}

// The node after which each tensor is read no more (absent: no node reads it).
std::map<std::string, int> last_reads(const onnx::GraphProto& g) {
  std::map<std::string, int> last;
  for (int i = 0; i < g.node_size(); ++i)
    for (const std::string& v : g.node(i).input()) last[v] = i;
  return last;
}

// Without all_values, the tensors computed from a contraction's zeros (directly or not; a Shape
// or Size of one is its shape, not its values) hold nothing a timing-only compile reads but their
// shapes: each one's values are dropped once the last node reading them has run, so that the
// heap holds a few activations at a time, not all of them (a graph output keeps its values).
struct Dropped {
  bool active;
  std::map<std::string, int> last;
  std::set<std::string> outputs, zeros;

  void after(const onnx::NodeProto& node, bool contraction, int i, Tensors& values) {
    if (!active) return;
    const bool from_zeros = contraction || std::any_of(node.input().begin(), node.input().end(),
                                                       [&](const std::string& v) { return zeros.count(v) > 0; });
    if (from_zeros && node.op_type() != "Shape" && node.op_type() != "Size")
      zeros.insert(node.output().begin(), node.output().end());
    for (const std::string& v : node.input())
      if (auto l = last.find(v); l != last.end() && l->second == i && zeros.count(v) && !outputs.count(v))
        if (auto t = values.find(v); t != values.end()) std::vector<float>().swap(t->second.data);
  }
};

}  // namespace

void run_reference(const Model& m, Tensors& values, bool all_values) {
  const std::map<std::string, int> integers = integer_values(m);
  Dropped dropped{!all_values, last_reads(m.graph()), {}, {}};
  for (const auto& o : m.graph().output()) dropped.outputs.insert(o.name());
  std::set<std::string> from_inputs;  // the tensors that depend on the graph's inputs: not constants
  for (const auto& [name, t] : values) from_inputs.insert(name);
  for (const auto& init : m.graph().initializer()) {
    values[init.name()] = from_proto(init, m.path);
    from_inputs.erase(init.name());
  }
  for (int i = 0; i < m.graph().node_size(); ++i) {
    const auto& node = m.graph().node(i);
    Op op{node, values, m.opset, false, i};
    const bool variable = std::any_of(node.input().begin(), node.input().end(),
                                      [&](const std::string& v) { return from_inputs.count(v) > 0; });
    // A Shape or Size of a tensor is its shape, known when the model is compiled, not its values:
    // what is computed from it is a constant the compiler folds.
    if (variable && node.op_type() != "Shape" && node.op_type() != "Size")
      from_inputs.insert(node.output().begin(), node.output().end());
    const std::string why = reference_refuses(node, m.opset, &values);
    if (!why.empty()) throw Error(m.path + ": " + op.who() + ": " + why);
    if (node.op_type() == "Div" && integers.count(node.output(0)))  // f32 division would not truncate
      throw Error(m.path + ": " + op.who() + ": a Div of integers is not implemented (the reference computes in f32)");
    const Entry& entry = *find(node.op_type());
    op.shapes_only = !all_values && variable && entry.contraction;
    const std::size_t rank = op.in(0).shape.size();
    try {
      if (one_d_window(node, rank))
        run_1d(entry, op);
      else
        entry.run(op);
      for (const std::string& out : node.output())
        if (const auto t = integers.find(out); t != integers.end() && values.count(out))
          check_narrow(out, t->second, values.at(out), op.who());
    } catch (const Error& e) {
      throw Error(m.path + ": " + e.what());  // the model's file, then the node and what is wrong
    }
    dropped.after(node, op.shapes_only, i, values);
  }
}

std::vector<std::string> reference_ops() {
  std::vector<std::string> ops;
  for (const Entry& e : table()) ops.push_back(e.op);
  return ops;
}

}  // namespace dvp::network
