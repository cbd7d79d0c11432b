// SPDX-License-Identifier: MIT
// The kernel library as scenarios reach it (kernels: - library: NAME): one entry per kernel, in
// one table that also gives the schema its choices. An entry says which shape keys the kernel
// needs, reads and checks its shape, lists the arguments it takes (the tensors and their
// types and sizes) and builds it for the configured core. Adding a library kernel is one entry
// here plus its builder in firmware/kernels/library/.
#pragma once
#include <string>
#include <variant>
#include <vector>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"
#include "common/config.hpp"
#include "kernels/library/aipp.hpp"
#include "kernels/library/channel_mul.hpp"
#include "kernels/library/channel_softmax.hpp"
#include "kernels/library/elementwise.hpp"
#include "kernels/library/expand.hpp"
#include "kernels/library/gemm.hpp"
#include "kernels/library/layernorm.hpp"
#include "kernels/library/pool.hpp"
#include "kernels/library/reduce.hpp"
#include "kernels/library/resize.hpp"
#include "kernels/library/slice.hpp"
#include "kernels/library/softmax.hpp"
#include "kernels/library/transpose.hpp"
#include "kernels/library/upsample.hpp"

namespace dvp::platform {

using KernelShape =
    std::variant<kernels::GemmShape, kernels::ConvShape, kernels::PoolShape, kernels::SoftmaxShape,
                 kernels::ElementwiseShape, kernels::AippShape, kernels::LayerNormShape, kernels::TransposeShape,
                 kernels::ChannelSoftmaxShape, kernels::UpsampleShape, kernels::ChannelMulShape, kernels::ResizeShape,
                 kernels::ReduceShape, kernels::ExpandShape, kernels::SliceShape>;

// One argument a library kernel takes: a tensor of at least `elems` elements of `dtype`.
struct LibraryArg {
  const char* role;
  aicore::DType dtype;
  std::uint64_t elems;
  // A conv2d's x and weights: the C0 and groups the kernel reads them in; a tensor given a
  // layout must be stored so (0: any).
  std::uint64_t c0 = 0, groups = 0;
  // The kernel reads it in fractal order (a conv2d's weights, a gemm's B: layout fractal_z); a
  // tensor given a layout must be stored so, and one in fractal_z is read by no other argument.
  bool fractal = false;
  // Read only in part (a slice's x: the runs it takes): its bytes in the roofline are the work's
  // (KernelWork::bytes), not the whole tensor's.
  bool partly = false;
};

struct BuiltKernel {
  aicore::Image image;
  std::string tiling;  // how the work was cut, for the summary
  // The work items the blocks share (output tiles, rows, channel groups x bands): blocks past
  // them would only start and stop.
  std::uint64_t units = 1;
};

// The least a kernel must do, for its roofline: `ops` operations (the cube's 2 x MACs, or the
// vector's element operations), which the engine's peak over the cores the kernel was built
// for cannot do in less than `compute_ps`; and `bytes`, each argument read or written once,
// which the DRAM's peak bandwidth cannot move in less than bytes / bandwidth.
struct KernelWork {
  double ops = 0;
  const char* unit = "FLOP";  // FLOP (cube, floating), OP (cube, int8) or "vector op"
  double compute_ps = 0;
  std::uint64_t bytes = 0;
  // The roofline bound on DRAM of `bytes_per_ps` peak: the larger of the two times.
  double memory_ps(double dram_bytes_per_ps) const;  // bytes at that peak (0: no DRAM bound)
  double bound_ps(double dram_bytes_per_ps) const;
  bool dram_bound(double dram_bytes_per_ps) const;
  const char* bound_kind(double dram_bytes_per_ps) const;  // "compute" or "DRAM"
};

struct LibraryKernel {
  const char* name;
  std::vector<const char*> required;            // shape keys without a default
  KernelShape (*read)(const cfg::Node& shape);  // checks the shape, naming the key at fault
  std::vector<LibraryArg> (*args)(const KernelShape& s);
  BuiltKernel (*build)(const aicore::AiCoreConfig& core, const KernelShape& s);  // throws dvp::Error
  KernelWork (*work)(const aicore::AiCoreConfig& core, const KernelShape& s);    // ops and compute_ps
};

const cfg::Choices<const LibraryKernel*>& library_kernels();

// A kernel's work on `core` (its cores: those it was built for), bytes from its arguments (but
// those read only in part, whose bytes the work gives).
KernelWork library_work(const LibraryKernel& k, const aicore::AiCoreConfig& core, const KernelShape& s);

}  // namespace dvp::platform
