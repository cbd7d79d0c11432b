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
#include "kernels/library/elementwise.hpp"
#include "kernels/library/gemm.hpp"
#include "kernels/library/pool.hpp"
#include "kernels/library/softmax.hpp"

namespace dvp::platform {

using KernelShape = std::variant<kernels::GemmShape, kernels::ConvShape, kernels::PoolShape, kernels::SoftmaxShape,
                                 kernels::ElementwiseShape>;

// One argument a library kernel takes: a tensor of at least `elems` elements of `dtype`.
struct LibraryArg {
  const char* role;
  aicore::DType dtype;
  std::uint64_t elems;
};

struct BuiltKernel {
  aicore::Image image;
  std::string tiling;  // how the work was cut, for the summary
};

struct LibraryKernel {
  const char* name;
  std::vector<const char*> required;            // shape keys without a default
  KernelShape (*read)(const cfg::Node& shape);  // checks the shape, naming the key at fault
  std::vector<LibraryArg> (*args)(const KernelShape& s);
  BuiltKernel (*build)(const aicore::AiCoreConfig& core, const KernelShape& s);  // throws dvp::Error
};

const cfg::Choices<const LibraryKernel*>& library_kernels();

}  // namespace dvp::platform
