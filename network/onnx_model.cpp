// SPDX-License-Identifier: MIT
#include "onnx_model.hpp"

#include <cstring>
#include <fstream>

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include "common/error.hpp"

namespace dvp::network {

std::size_t Tensor::elements() const {
  std::size_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0 || (d && n > (std::size_t(1) << 40) / std::size_t(d)))
      throw Error("a tensor of shape " + shape_str() + " (a negative dimension, or over 2^40 elements)");
    n *= std::size_t(d);
  }
  return n;
}

std::string Tensor::shape_str() const {
  std::string s;
  for (std::int64_t d : shape) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s.empty() ? "scalar" : s;
}

namespace {

template <class T>
void convert_raw(const std::string& raw, std::vector<float>& out) {
  out.resize(raw.size() / sizeof(T));
  for (std::size_t i = 0; i < out.size(); ++i) {
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    out[i] = float(v);
  }
}

template <class Field>
void convert_field(const Field& f, std::vector<float>& out) {
  out.assign(f.begin(), f.end());
}

}  // namespace

Tensor from_proto(const onnx::TensorProto& t, const std::string& where) {
  Tensor r;
  r.shape.assign(t.dims().begin(), t.dims().end());
  const bool raw = t.has_raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      raw ? convert_raw<float>(t.raw_data(), r.data) : convert_field(t.float_data(), r.data);
      break;
    case onnx::TensorProto::DOUBLE:
      raw ? convert_raw<double>(t.raw_data(), r.data) : convert_field(t.double_data(), r.data);
      break;
    case onnx::TensorProto::INT64:
      raw ? convert_raw<std::int64_t>(t.raw_data(), r.data) : convert_field(t.int64_data(), r.data);
      break;
    case onnx::TensorProto::INT32:
      raw ? convert_raw<std::int32_t>(t.raw_data(), r.data) : convert_field(t.int32_data(), r.data);
      break;
    default:
      throw Error(where + ": tensor '" + t.name() + "' has data type " +
                  onnx::TensorProto::DataType_Name(onnx::TensorProto::DataType(t.data_type())) +
                  " (float, double, int64 and int32 are read)");
  }
  if (t.has_data_location() && t.data_location() == onnx::TensorProto::EXTERNAL)
    throw Error(where + ": tensor '" + t.name() + "' keeps its data in an external file (not read)");
  if (r.data.size() != r.elements())
    throw Error(where + ": tensor '" + t.name() + "' has " + std::to_string(r.data.size()) + " values for shape " +
                r.shape_str());
  return r;
}

Tensor read_tensor_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open");
  onnx::TensorProto t;
  if (!t.ParseFromIstream(&f)) throw Error(path + ": not a serialized ONNX TensorProto");
  return from_proto(t, path);
}

Model load_model(const std::string& path) {
  Model m;
  m.path = path;
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open");
  if (!m.proto.ParseFromIstream(&f)) throw Error(path + ": not an ONNX model (the protobuf does not parse)");
  try {
    onnx::checker::check_model(m.proto);
    onnx::shape_inference::InferShapes(m.proto);
  } catch (const std::exception& e) {
    throw Error(path + ": " + e.what());
  }
  for (const auto& o : m.proto.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") m.opset = o.version();
  return m;
}

const onnx::AttributeProto* NodeAttrs::find(const char* name) const {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
std::int64_t NodeAttrs::i(const char* name, std::int64_t dflt) const { return find(name) ? find(name)->i() : dflt; }
float NodeAttrs::f(const char* name, float dflt) const { return find(name) ? find(name)->f() : dflt; }
std::string NodeAttrs::s(const char* name, const std::string& dflt) const {
  return find(name) ? find(name)->s() : dflt;
}
std::vector<std::int64_t> NodeAttrs::ints(const char* name, const std::vector<std::int64_t>& dflt) const {
  const onnx::AttributeProto* a = find(name);
  if (!a) return dflt;
  std::vector<std::int64_t> v(a->ints().begin(), a->ints().end());
  if (!one_d) return v;
  const std::string nm = name;
  if (v.size() == 1 && (nm == "kernel_shape" || nm == "strides" || nm == "dilations")) return {1, v[0]};
  if (v.size() == 2 && nm == "pads") return {0, v[0], 0, v[1]};
  return v;  // a count the 1-D form does not have (the host reference refuses it: run_1d)
}

bool one_d_window(const onnx::NodeProto& n, std::size_t input_rank) {
  const std::string& op = n.op_type();
  return input_rank == 3 && (op == "Conv" || op == "MaxPool" || op == "AveragePool");
}

std::vector<std::int64_t> as_2d(std::vector<std::int64_t> shape) {
  if (shape.size() == 3) shape.insert(shape.end() - 1, 1);
  return shape;
}

}  // namespace dvp::network
