// SPDX-License-Identifier: MIT
#include "cube.hpp"

#include <cblas.h>

#include <cstring>
#include <mutex>
#include <optional>
#include <type_traits>

#include "fractal.hpp"
#include "numeric.hpp"

namespace dvp::aicore {

CubeUnit::CubeUnit(CoreServices& core, std::shared_ptr<HostLane> lane) : core_(core), host_lane_(std::move(lane)) {
  // The cube's arithmetic runs on one host lane beside the simulator: BLAS threads would only
  // compete with them for the host's cores. The models link the serial OpenBLAS
  // (cmake/openblas-serial.cmake); this keeps a threaded one, if linked instead, to one thread.
  static const bool one_thread = (openblas_set_num_threads(1), true);
  (void)one_thread;
}

CubeUnit::~CubeUnit() { host_lane_->wait(last_); }

// The newest pending mmad is the last one posted: this waits for it, as for every mmad.
bool CubeUnit::settle() { return settle(0, ~0ull); }

bool CubeUnit::succeeded(std::uint64_t lo, std::uint64_t hi) {
  if (!any_failed_) return true;  // FixPipe asks once per row: no lock while nothing failed
  const std::lock_guard<std::mutex> lock(shared_m_);
  for (const Failure& f : failures_)
    if (f.lo < hi && lo < f.hi) return false;
  return true;
}

bool CubeUnit::settle(std::uint64_t lo, std::uint64_t hi) {
  // The newest mmad that writes any of these bytes; the lane runs jobs in order, so every one
  // before it has run too once it has. Then every mmad that writes them has run, and a failed one
  // among them is reported by this read, whatever else the lane has done meanwhile.
  for (auto p = pending_.rbegin(); p != pending_.rend(); ++p)
    if (p->lo < hi && lo < p->hi) {
      const HostLane::Ticket t = p->ticket;
      host_lane_->wait(t);
      while (!pending_.empty() && pending_.front().ticket <= t) pending_.pop_front();
      break;
    }
  return succeeded(lo, hi);
}

std::string CubeUnit::failure() {
  const std::lock_guard<std::mutex> lock(shared_m_);
  return failures_.empty() ? "" : failures_.front().what;
}

// One mmad's operands and its shape in fractals: A's and B's bytes as they were in L0A / L0B when
// it was issued, A's first; C where it lies in L0C.
struct CubeUnit::Job {
  std::vector<std::uint8_t> ab;
  std::uint64_t b_offset;
  std::uint8_t* C;
  MmadCfg c;
  DType in_t;
  unsigned k0;
  std::uint64_t mf, kf, nf;
  const std::uint8_t* A() const { return ab.data(); }
  const std::uint8_t* B() const { return ab.data() + b_offset; }
};

// The lane's scratch, kept from mmad to mmad: the operands decoded (A's rows, B's columns) and
// their products. One per host thread that computes (the lane's, or the simulator's without one).
struct CubeUnit::Scratch {
  std::vector<double> a, bt, prod;
};

Span CubeUnit::mmad(const Issued& e) {
  const MmadCfg c = MmadCfg::unpack(e.v[3]);
  const DType acc_t = e.in.dt1, in_t = e.in.dt2;
  const AiCoreConfig& cfg = core_.config();
  const Tick now = now_tick();
  const bool ok = (acc_t == DType::F32 && (in_t == DType::F16 || in_t == DType::BF16 || in_t == DType::F32)) ||
                  (acc_t == DType::S32 && in_t == DType::S8);
  if (!ok) return core_.fault(e, "unsupported type pair (f32.f16, f32.bf16, f32.f32, s32.s8)"), Span::at(now);
  if (c.m == 0 || c.k == 0 || c.n == 0) return Span::at(now + cfg.clock.cycles(cfg.cube_startup_cycles));
  const std::uint64_t mf = ceil_div(c.m, 16), kf = ceil_div(c.k, k0_of(in_t)), nf = ceil_div(c.n, 16);
  if (!core_.local_range(kL0A, e.v[1], mf * kf * 512, e, "A") ||
      !core_.local_range(kL0B, e.v[2], nf * kf * 512, e, "B") ||
      !core_.local_range(kL0C, e.v[0], mf * nf * 1024, e, "C"))
    return Span::at(now);
  if (core_.functional()) post(e, c, in_t, mf, kf, nf);
  (acc_t == DType::S32 ? int_ops_ : flops_) += 2.0 * double(c.m) * double(c.k) * double(c.n);
  return Span::at(now + cfg.clock.cycles(cfg.cube_startup_cycles + steps(mf, kf, nf) * cfg.cube_cycles_per_step));
}

void CubeUnit::post(const Issued& e, const MmadCfg& c, DType in_t, std::uint64_t mf, std::uint64_t kf,
                    std::uint64_t nf) {
  Job j{{}, mf * kf * 512, core_.l0c_for_cube() + e.v[0], c, in_t, k0_of(in_t), mf, kf, nf};
  {
    const std::lock_guard<std::mutex> lock(shared_m_);
    if (!spare_.empty()) {
      j.ab = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  j.ab.resize(j.b_offset + nf * kf * 512);
  std::memcpy(j.ab.data(), core_.buffer(kL0A) + e.v[1], j.b_offset);
  std::memcpy(j.ab.data() + j.b_offset, core_.buffer(kL0B) + e.v[2], nf * kf * 512);
  const std::uint64_t lo = e.v[0], hi = lo + mf * nf * 1024;
  last_ = host_lane_->post([this, j = std::move(j), lo, hi]() mutable {
    std::optional<std::string> failed;
    try {
      compute(j);
    } catch (const std::exception& x) {  // the scratch's allocation
      failed = x.what();
    } catch (...) {
      failed = "an exception that is not a std::exception";
    }
    const std::lock_guard<std::mutex> lock(shared_m_);
    if (failed) failures_.push_back({lo, hi, *failed}), any_failed_ = true;
    spare_.push_back(std::move(j.ab));
  });
  while (!pending_.empty() && pending_.front().ticket <= host_lane_->completed()) pending_.pop_front();
  pending_.push_back({last_, lo, hi});
}

void CubeUnit::compute(const Job& j) {
  static thread_local Scratch s;
  decode(j, s);
  // One dgemm for the whole mmad, not a block of rows at a time: a smaller call can take
  // another of OpenBLAS's kernels (its small-matrix kernels on AVX-512 hosts sum k in eight
  // lanes), and so another order of the additions and other bits.
  products(j, s);
  if (j.in_t == DType::S8)
    accumulate_s32(j, s);
  else
    accumulate_f32(j, s);
}

void CubeUnit::decode(const Job& j, Scratch& s) {
  // Products of two fp16 / bf16 values are exact in a double, their sums are in double precision
  // (in BLAS's order), and the result is rounded once to f32. int8 products and their sums are
  // exact in a double (|sum| <= k x 2^14, far below 2^53), whatever the order of the additions,
  // so int8 takes the same path. The operands are decoded once, not once per multiply.
  const MmadCfg& c = j.c;
  s.a.resize(std::size_t(c.m) * c.k);
  s.bt.resize(std::size_t(c.n) * c.k);
  s.prod.resize(std::size_t(c.m) * c.n);
  // A (rows m) and B (columns n) share one fractal layout: 16 rows by 32 bytes of k (k0 elements)
  // per 512-byte fractal, k's fractals next to each other. Each fractal is decoded in one call, in
  // the order its bytes lie (rows past m or n are L0's padding), and its rows then placed: one call
  // per 16 elements cost as much as decoding them.
  auto unpack = [&](const std::uint8_t* base, std::uint64_t rows, std::vector<double>& out) {
    double frac_values[16 * 32];  // k0 is at most 32 (int8)
    const std::uint8_t* frac = base;
    for (std::uint64_t r0 = 0; r0 < rows; r0 += 16)
      for (std::uint64_t k = 0; k < c.k; k += j.k0, frac += 512) {
        num::load_n(frac, j.in_t, 16 * j.k0, frac_values);
        const auto place = [&, rn = std::min<std::uint64_t>(rows, r0 + 16)](auto kn) {
          for (std::uint64_t r = r0; r < rn; ++r)
            std::memcpy(out.data() + r * c.k + k, frac_values + (r - r0) * j.k0, kn * sizeof(double));
        };
        // A whole fractal row's copy, of a size known here, is inline code, not a call to memcpy.
        switch (std::min<std::uint64_t>(j.k0, c.k - k)) {
          case 8: place(std::integral_constant<std::uint64_t, 8>{}); break;
          case 16: place(std::integral_constant<std::uint64_t, 16>{}); break;
          case 32: place(std::integral_constant<std::uint64_t, 32>{}); break;
          default: place(std::min<std::uint64_t>(j.k0, c.k - k));
        }
      }
  };
  unpack(j.A(), c.m, s.a);
  unpack(j.B(), c.n, s.bt);
}

// s.prod = A x B.
void CubeUnit::products(const Job& j, Scratch& s) {
  // The serial OpenBLAS is not known to be safe from two threads at once, and two systems in one
  // process have a lane each.
  static std::mutex blas;
  const std::lock_guard<std::mutex> lock(blas);
  const MmadCfg& c = j.c;
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(c.m), int(c.n), int(c.k), 1.0, s.a.data(), int(c.k),
              s.bt.data(), int(c.k), 0.0, s.prod.data(), int(c.n));
}

// Each row of C in L0C's own fractal order: a fractal row's up to 16 elements are contiguous,
// f(the row's bytes, its products, how many) (a short loop the compiler vectorizes). A whole row's
// count is a compile-time 16, so its copies and loop are inline vector code, not calls to memcpy
// (a memmove per 64 bytes was 6% of a functional GEMM's host time).
template <typename F>
static void for_each_c_row(std::uint8_t* C, const MmadCfg& c, std::uint64_t mf, std::uint64_t nf,
                           const std::vector<double>& prod, F&& f) {
  for (std::uint64_t nj = 0; nj < nf; ++nj) {
    const std::uint64_t n = std::min<std::uint64_t>(16, c.n - nj * 16);
    for (std::uint64_t mi = 0; mi < mf; ++mi)
      for (std::uint64_t rr = 0, r = mi * 16; rr < 16 && r < c.m; ++rr, ++r) {
        std::uint8_t* row = C + (nj * mf + mi) * 1024 + rr * 64;
        const double* src = prod.data() + r * c.n + nj * 16;
        if (n == 16)
          f(row, src, std::integral_constant<std::uint64_t, 16>{});
        else
          f(row, src, n);
      }
  }
}

void CubeUnit::accumulate_s32(const Job& j, const Scratch& s) {
  // Into L0C as int32, wrapping like the hardware's adder.
  for_each_c_row(j.C, j.c, j.mf, j.nf, s.prod, [init = j.c.init](std::uint8_t* p, const double* src, auto n) {
    std::int32_t cur[16] = {};
    if (!init) std::memcpy(cur, p, n * 4);
    for (std::uint64_t i = 0; i < n; ++i)
      cur[i] = std::int32_t(std::uint32_t(cur[i]) + std::uint32_t(std::int64_t(src[i])));
    std::memcpy(p, cur, n * 4);
  });
}

static constexpr std::uint32_t kCanonicalNan = 0x7fc00000u;

void CubeUnit::accumulate_f32(const Job& j, const Scratch& s) {
  // Into L0C, rounding once to f32 (host nearest-even, NaN canonical, as num::to_f32). Plain loops
  // over whole rows, which the compiler turns into vector code (one loop with the choices inside
  // was scalar, a tenth of a functional GEMM's host time); a NaN, rare, is made canonical after.
  for_each_c_row(j.C, j.c, j.mf, j.nf, s.prod, [init = j.c.init](std::uint8_t* p, const double* src, auto n) {
    float cur[16];
    double v[16];
    if (init) {
      for (std::uint64_t i = 0; i < n; ++i) v[i] = src[i];
    } else {
      std::memcpy(cur, p, n * 4);
      for (std::uint64_t i = 0; i < n; ++i) v[i] = src[i] + double(cur[i]);  // no + 0.0: it would turn -0 into +0
    }
    for (std::uint64_t i = 0; i < n; ++i) cur[i] = float(v[i]);
    std::uint32_t bits[16], nan = 0;
    std::memcpy(bits, cur, n * 4);
    for (std::uint64_t i = 0; i < n; ++i) nan |= (bits[i] & 0x7fffffffu) > 0x7f800000u;
    std::memcpy(p, cur, n * 4);
    if (nan)
      for (std::uint64_t i = 0; i < n; ++i)
        if (v[i] != v[i]) std::memcpy(p + 4 * i, &kCanonicalNan, 4);
  });
}

// The cube's steps for an mmad of mf x kf x nf fractals: each step multiplies cube_m rows by
// cube_n columns over cube_k fp16 elements of k (twice as many int8, half as many f32, the same
// 32 bytes). Partial fractals are padded in L0, so the cube works on whole fractals: the
// 16 x 16 x 16 cube of the 310 / 910 takes one step per fractal triple.
std::uint64_t CubeUnit::steps(std::uint64_t mf, std::uint64_t kf, std::uint64_t nf) const {
  // kf * k0 elements of k, cube_k * k0 / 16 per step: kf * 16 / cube_k steps for every type.
  const AiCoreConfig& cfg = core_.config();
  return ceil_div(mf * 16, cfg.cube_m) * ceil_div(kf * 16, cfg.cube_k) * ceil_div(nf * 16, cfg.cube_n);
}

}  // namespace dvp::aicore
