// SPDX-License-Identifier: MIT
// The cube (the M pipe): mmad multiplies A in L0A by B in L0B into C in L0C, fp16 / bf16 / fp32
// into fp32 and int8 into int32, in whole fractals of cube_m x cube_k x cube_n per step.
// Layouts: fractal.hpp.
//
// A functional mmad's arithmetic runs on the system's host lane (common/host_lane.hpp), beside
// the simulation: mmad copies A's and B's bytes (L0A and L0B may be written again at once) and
// posts the job; the products land in L0C later, and settle() waits for them. The core settles
// before anything but the cube reads L0C (AiCore::buffer: all of it; FixPipe: the bytes it
// reads), so nothing sees the difference: the same operations on the same bytes, in the same
// order.
#pragma once
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/host_lane.hpp"
#include "pipe_unit.hpp"

namespace dvp::aicore {

class CubeUnit {
 public:
  CubeUnit(CoreServices& core, std::shared_ptr<HostLane> lane);
  ~CubeUnit();  // settles: the lane's jobs write into the core's L0C
  CubeUnit(const CubeUnit&) = delete;
  CubeUnit& operator=(const CubeUnit&) = delete;
  Span mmad(const Issued& e);
  // Waits until every mmad posted so far is in L0C; the second, every one that writes L0C's bytes
  // [lo, hi). False when an mmad that writes the bytes asked for failed on the host (out of host
  // memory): failure() says why.
  bool settle();
  bool settle(std::uint64_t lo, std::uint64_t hi);
  std::string failure();
  // The cube's steps for an mmad of mf x kf x nf fractals.
  std::uint64_t steps(std::uint64_t mf, std::uint64_t kf, std::uint64_t nf) const;
  double flops() const { return flops_; }      // floating-point multiply-adds x 2 executed
  double int_ops() const { return int_ops_; }  // int8 multiply-adds x 2

 private:
  struct Job;
  struct Scratch;
  void post(const Issued& e, const MmadCfg& c, DType in_t, std::uint64_t mf, std::uint64_t kf, std::uint64_t nf);
  // On the lane: C (L0C) op= A x B.
  static void compute(const Job& j);
  // Whether no failed job was to write L0C's bytes [lo, hi).
  bool succeeded(std::uint64_t lo, std::uint64_t hi);
  static void decode(const Job& j, Scratch& s);    // s.a, s.bt = A's rows, B's columns
  static void products(const Job& j, Scratch& s);  // s.prod = A x B, exact (see decode)
  static void accumulate_f32(const Job& j, const Scratch& s);
  static void accumulate_s32(const Job& j, const Scratch& s);
  CoreServices& core_;
  std::shared_ptr<HostLane> host_lane_;
  // The mmads posted and perhaps not yet run, oldest first: their tickets and the bytes of L0C
  // they write. Those the lane has run are dropped as the next ones are posted.
  struct Pending {
    HostLane::Ticket ticket;
    std::uint64_t lo, hi;
  };
  std::deque<Pending> pending_;
  HostLane::Ticket last_ = 0;  // the last mmad posted
  double flops_ = 0, int_ops_ = 0;
  // What the lane's thread hands back: buffers for the jobs' copies of A and B (no allocation per
  // mmad once there are enough), and the jobs that failed: the bytes of L0C they should have
  // written, and why.
  struct Failure {
    std::uint64_t lo, hi;
    std::string what;
  };
  std::mutex shared_m_;
  std::vector<std::vector<std::uint8_t>> spare_;
  std::vector<Failure> failures_;
  std::atomic<bool> any_failed_{false};  // failures_ is not empty (set after it grows)
};

}  // namespace dvp::aicore
