// SPDX-License-Identifier: MIT
// ONNX in: a model file parsed with libonnx's protobuf classes, checked by its checker, its
// shapes inferred; tensors (initializers, .pb files of the ONNX test suite) as host f32 arrays.
// The network compiler and the host reference (host_reference.hpp) start from here.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace dvp::network {

// A tensor on the host: its shape and its elements as f32 (integer tensors, which carry
// shapes and indices, are converted exactly up to 2^24).
struct Tensor {
  // The most elements a tensor may have, and the most the host reference holds at once: 2^31
  // (8 GiB as its f32; ResNet-50's largest map at batch 64 is 2^26, all its values at batch 64
  // about 2^30).
  static constexpr std::size_t kMaxElements = std::size_t(1) << 31;
  std::vector<std::int64_t> shape;
  std::vector<float> data;
  std::size_t elements() const;   // throws an Error saying problem()
  std::string problem() const;    // why the shape cannot be held (a negative dimension, too many elements), or ""
  std::string shape_str() const;  // "1x3x224x224"
};

// A TensorProto's values (float_data / int64_data / int32_data / double_data or raw_data);
// `where` names it in an error.
Tensor from_proto(const onnx::TensorProto& t, const std::string& where);
// A serialized TensorProto (input_0.pb); the error names the file. With `want_type` (a
// TensorProto::DataType: a graph input's), a tensor of another type is refused, as ONNX Runtime
// refuses it (the suite's bfloat16 inputs are written as uint16: read so, they would be numbers).
Tensor read_tensor_file(const std::string& path, int want_type = 0);

// Whether a TensorProto::DataType is an integer type (int8 .. uint64; not bool).
bool integer_type(int t);
// Whether ONNX's Cast to data type `to` (a TensorProto::DataType) is one cast_value computes.
bool castable_to(int to);
// x (a float or an integer held exactly in f32) cast to `to` and held in f32 again, as ONNX's
// Cast computes it: float and double keep it, float16 and bfloat16 round it to nearest even, an
// integer type truncates toward zero and wraps modulo 2^bits into its range (ONNX leaves values
// out of range undefined; an inf or NaN gives 0), held in f32 again (exact up to 2^24), bool is
// 0 or 1. Only for castable_to(to).
float cast_value(float x, int to);

// A node's attributes by name, each read with the default its operator's specification gives.
struct NodeAttrs {
  const onnx::NodeProto& n;
  // A window op (Conv, MaxPool, AveragePool) over N x C x L, read as its 2-D form over
  // N x C x 1 x L: kernel_shape, strides and dilations of one value get a 1 before it, pads
  // {begin, end} become {0, begin, 0, end}. The host reference and the compiler both run a 1-D
  // window so, through the 2-D code (one_d_window says which nodes are).
  bool one_d = false;
  const onnx::AttributeProto* find(const char* name) const;
  std::int64_t i(const char* name, std::int64_t dflt) const;
  float f(const char* name, float dflt) const;
  std::string s(const char* name, const std::string& dflt) const;
  std::vector<std::int64_t> ints(const char* name, const std::vector<std::int64_t>& dflt) const;
};

// Whether node n is a 1-D window op: Conv, MaxPool or AveragePool whose input 0 has
// `input_rank` 3 (N x C x L).
bool one_d_window(const onnx::NodeProto& n, std::size_t input_rank);
// A 1-D window op's tensor (its input N x C x L, its weights M x C x K, its output) as the 2-D
// form reads it: a 1 inserted before the last dimension. Other ranks are returned as they are.
std::vector<std::int64_t> as_2d(std::vector<std::int64_t> shape);

struct Model {
  std::string path;
  onnx::ModelProto proto;
  std::int64_t opset = 0;  // of the default domain
  const onnx::GraphProto& graph() const { return proto.graph(); }
};

// Each tensor whose shape is wholly known: the graph's inputs and the weights (given: true), the
// values between nodes and the outputs (given: false; after load_model, shape inference's).
using ShapeVisitor = std::function<void(const std::string& name, const std::vector<std::int64_t>& dims, bool given)>;
void each_known_shape(const Model& m, const ShapeVisitor& f);

// Parses, checks (onnx::checker and window sizes) and infers shapes, then checks every known
// shape (Tensor::kMaxElements, no negative dimension); a file that cannot be read, parsed or
// checked is an Error naming it, the node or tensor, and what is wrong.
Model load_model(const std::string& path);

}  // namespace dvp::network
