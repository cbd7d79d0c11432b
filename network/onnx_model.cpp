// SPDX-License-Identifier: MIT
#include "onnx_model.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include "common/error.hpp"

namespace dvp::network {

std::string Tensor::problem() const {
  std::size_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) return "a negative dimension";
    if (d && n > kMaxElements / std::size_t(d)) return "over 2^32 elements (the host reference holds each as f32)";
    n *= std::size_t(d);
  }
  return "";
}

std::size_t Tensor::elements() const {
  if (const std::string p = problem(); !p.empty()) throw Error("a tensor of shape " + shape_str() + ": " + p);
  std::size_t n = 1;
  for (std::int64_t d : shape) n *= std::size_t(d);
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

namespace {

// A window's sizes of 0 or less: the checker lets them pass, and ONNX's shape inference divides
// by a stride or dilation of 0 (SIGFPE inside libonnx), so they are refused by name before it
// runs (check_and_infer_safely would only say it died).
void check_windows(const Model& m) {
  for (const auto& n : m.graph().node())
    for (const auto& a : n.attribute()) {
      if (a.name() != "strides" && a.name() != "dilations" && a.name() != "kernel_shape") continue;
      for (std::int64_t v : a.ints())
        if (v < 1)
          throw Error(m.path + ": node '" + n.name() + "' (" + n.op_type() + "): " + a.name() + " holds " +
                          std::to_string(v) + " (each must be 1 or more)",
                      kExitConfig);
    }
}

// Every tensor's shape that is known after shape inference: the graph's inputs and weights hold
// no negative dimension and at most kMaxElements elements; the values between nodes and the
// outputs at most kMaxElements (a negative dimension there comes from a node's attributes, which
// the node's own checks name better). An empty tensor is a model's right (an optional input's
// "none", a reshape of nothing); the compiler refuses one a kernel would read.
void check_shapes(const Model& m) {
  const auto check = [&](const std::string& name, std::vector<std::int64_t> dims, bool given) {
    Tensor t;
    t.shape = std::move(dims);
    const std::string why = t.problem();
    if (!why.empty() && (given || why.rfind("a negative", 0) != 0))
      throw Error(m.path + ": tensor '" + name + "' of shape " + t.shape_str() + ": " + why, kExitConfig);
  };
  const auto known = [&](const onnx::ValueInfoProto& v, bool given) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
    std::vector<std::int64_t> dims;
    for (const auto& d : v.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return;  // symbolic (a batch): set when compiled
      dims.push_back(d.dim_value());
    }
    check(v.name(), dims, given);
  };
  for (const auto& v : m.graph().input()) known(v, true);
  for (const auto* list : {&m.graph().value_info(), &m.graph().output()})
    for (const auto& v : *list) known(v, false);
  for (const auto& t : m.graph().initializer()) check(t.name(), {t.dims().begin(), t.dims().end()}, true);
}

// libonnx's checker and shape inference on `proto`: an exception's message, or "".
std::string check_and_infer(onnx::ModelProto& proto) {
  try {
    onnx::checker::check_model(proto);
    onnx::shape_inference::InferShapes(proto);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// check_and_infer, first in a child process: on some malformed models libonnx's shape inference
// dies (a null pointer for a LayerNormalization of a scalar, a division by a stride of 0: the
// cases in fuzz/regressions/onnx) instead of throwing. The child's death is then this model's
// error; a model it survives is checked and inferred again here (the same result: the same
// code on the same bytes).
void check_and_infer_safely(Model& m) {
  int out[2];
  if (pipe(out) != 0) throw Error(m.path + ": cannot check it (no pipe)");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    // The child dies of its signal as it comes, not through a handler (a sanitizer's or a
    // fuzzer's would report it as this process's crash).
    for (int sig : {SIGSEGV, SIGFPE, SIGBUS, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
    close(out[0]);
    const std::string why = check_and_infer(m.proto);
    const bool wrote = why.empty() || write(out[1], why.data(), why.size()) == ssize_t(why.size());
    _exit(why.empty() && wrote ? 0 : 1);
  }
  close(out[1]);
  std::string why;
  char buf[512];
  for (ssize_t n; pid > 0 && (n = read(out[0], buf, sizeof buf)) > 0;) why.append(buf, std::size_t(n));
  close(out[0]);
  int status = 0;  // no child (fork refused): checked here only, as before
  if (pid > 0 && waitpid(pid, &status, 0) != pid) throw Error(m.path + ": cannot check it (its child process is lost)");
  if (WIFSIGNALED(status))
    throw Error(m.path + ": a malformed model: ONNX's checker and shape inference died on it (signal " +
                    std::to_string(WTERMSIG(status)) + ")",
                kExitConfig);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw Error(m.path + ": " + why, kExitConfig);
  why = check_and_infer(m.proto);
  if (!why.empty()) throw Error(m.path + ": " + why, kExitConfig);
}

}  // namespace

Model load_model(const std::string& path) {
  Model m;
  m.path = path;
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open");
  if (!m.proto.ParseFromIstream(&f)) throw Error(path + ": not an ONNX model (the protobuf does not parse)");
  check_windows(m);
  check_and_infer_safely(m);
  check_shapes(m);
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
