// SPDX-License-Identifier: MIT
// The host reference of a network: an ONNX graph executed in f32, op by op, with plain loops
// written from the ONNX operator specification (onnx/defs, Operators.md). It is what the
// platform's results are checked against, and is itself checked against the ONNX test suite's
// shipped outputs (libonnx-testdata; tests/test_onnx.cpp). One table entry per operator; an
// operator or attribute it does not implement is refused with the node's name, its op type and
// the reason, never approximated.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "kernels/library/resize.hpp"
#include "onnx_model.hpp"

namespace dvp::network {

using Tensors = std::map<std::string, Tensor>;

// Empty when the reference executes `node`; else why not ("op Foo is not implemented",
// "attribute auto_pad SAME_LOWER is not implemented"). With `values` (the tensors known so far),
// also a window op's input of a rank it does not take (3-D windows).
std::string reference_refuses(const onnx::NodeProto& node, std::int64_t opset, const Tensors* values = nullptr);

// Runs `m`'s nodes in order (ONNX graphs are topologically sorted) on `values`, which holds the
// graph's inputs; initializers are added, then every node's outputs. An Error names the node.
// Without `all_values` (a timing-only run, which checks nothing) a MatMul, Gemm, Conv or
// ConvTranspose that reads the graph's inputs, directly or not, gets its output's shape with
// zeros for values: every shape is still the model's, and every constant (what the compiler
// folds: a Clip's bounds, a scale, TopK's k) is still computed.
void run_reference(const Model& m, Tensors& values, bool all_values = true);

// Resize (opset 10 on) or Upsample node n on a tensor of dims `in`: its interpolation rule (mode,
// coordinate transformation, rounding, cubic coefficient, exclude_outside), and per axis ONNX's
// scale and the output's size. `input(j)` gives the node's input j (nullptr: absent), for its
// scales or sizes. An Error names the node and what it refuses.
struct ResizePlan {
  kernels::ResizeRule rule;
  std::vector<double> scales;
  std::vector<std::int64_t> out;
};
ResizePlan resize_plan(const onnx::NodeProto& n, std::int64_t opset, const std::vector<std::int64_t>& in,
                       const std::function<const Tensor*(int)>& input);

// Slice node n on a tensor of dims `in` (opset 1: the starts, ends and axes attributes; 10 on:
// inputs 1 to 4, steps among them): per axis, the first index taken, the step and how many are
// taken, clamped as ONNX clamps (an axis not sliced: 0, 1, its size). `input(j)` gives the node's
// input j (nullptr: absent). An Error says what is wrong (the caller names the node).
struct SliceAxis {
  std::int64_t start = 0, step = 1, count = 0;
};
std::vector<SliceAxis> slice_plan(const onnx::NodeProto& n, std::int64_t opset, const std::vector<std::int64_t>& in,
                                  const std::function<const Tensor*(int)>& input);
// The plan of a slice that takes every element of a tensor of dims `in`.
std::vector<SliceAxis> whole_axes(const std::vector<std::int64_t>& in);
// x sliced by `plan` (an entry per axis): each element x's at start + index x step on every axis.
// A tensor without values (a timing-only compile's) gives the shape alone.
Tensor sliced(const Tensor& x, const std::vector<SliceAxis>& plan);

// Split node n on a tensor of dims `in`: the axis and each output's size along it. The sizes are
// `split` (an attribute before opset 13, then input 1), else equal parts: at opset 18 num_outputs
// of them, the last smaller where the axis does not divide; before, one per output.
struct SplitPlan {
  std::size_t axis = 0;
  std::vector<std::int64_t> sizes;
};
SplitPlan split_plan(const onnx::NodeProto& n, std::int64_t opset, const std::vector<std::int64_t>& in,
                     const std::function<const Tensor*(int)>& input);

// The operators the reference implements, in table order.
std::vector<std::string> reference_ops();

}  // namespace dvp::network
