// SPDX-License-Identifier: MIT
#include "onnx_model.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "aicore/numeric.hpp"
#include "common/error.hpp"

namespace dvp::network {

std::string Tensor::problem() const {
  std::size_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) return "a negative dimension";
    if (d && n > kMaxElements / std::size_t(d)) return "over 2^31 elements (the host reference holds each as f32)";
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

// A type ONNX keeps one per int32_data entry when not raw (int32, bool, the 8- and 16-bit integers).
template <class T>
void convert_int32_field(const onnx::TensorProto& t, std::vector<float>& out) {
  t.has_raw_data() ? convert_raw<T>(t.raw_data(), out) : convert_field(t.int32_data(), out);
}

// FLOAT16, BFLOAT16: 16-bit patterns, raw or one per int32_data entry; each exact in a float.
void convert_half(const onnx::TensorProto& t, bool bf16, std::vector<float>& out) {
  std::vector<std::uint16_t> bits;
  if (t.has_raw_data()) {
    bits.resize(t.raw_data().size() / 2);
    std::memcpy(bits.data(), t.raw_data().data(), bits.size() * 2);
  } else {
    bits.assign(t.int32_data().begin(), t.int32_data().end());
  }
  out.resize(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i)
    out[i] = float(bf16 ? aicore::num::bf16(bits[i]) : aicore::num::f16(bits[i]));
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
    // int32, bool (a Dropout's training_mode) and the narrow integers (an image's uint8 pixels): one
    // per int32_data entry, or raw. Each is exact in f32; the arithmetic that would wrap or truncate
    // in their type is refused by the reference (run_reference).
    case onnx::TensorProto::INT32: convert_int32_field<std::int32_t>(t, r.data); break;
    case onnx::TensorProto::BOOL:
    case onnx::TensorProto::UINT8: convert_int32_field<std::uint8_t>(t, r.data); break;
    case onnx::TensorProto::INT8: convert_int32_field<std::int8_t>(t, r.data); break;
    case onnx::TensorProto::UINT16: convert_int32_field<std::uint16_t>(t, r.data); break;
    case onnx::TensorProto::INT16: convert_int32_field<std::int16_t>(t, r.data); break;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: convert_half(t, t.data_type() == onnx::TensorProto::BFLOAT16, r.data); break;
    default:
      throw Error(where + ": tensor '" + t.name() + "' has data type " +
                  onnx::TensorProto::DataType_Name(onnx::TensorProto::DataType(t.data_type())) +
                  " (float, float16, bfloat16, double, int64, int32, int16, uint16, int8, uint8 and bool are read)");
  }
  if (t.has_data_location() && t.data_location() == onnx::TensorProto::EXTERNAL)
    throw Error(where + ": tensor '" + t.name() + "' keeps its data in an external file (not read)");
  if (r.data.size() != r.elements())
    throw Error(where + ": tensor '" + t.name() + "' has " + std::to_string(r.data.size()) + " values for shape " +
                r.shape_str());
  return r;
}

bool integer_type(int t) {
  using T = onnx::TensorProto;
  return t == T::INT8 || t == T::UINT8 || t == T::INT16 || t == T::UINT16 || t == T::INT32 || t == T::UINT32 ||
         t == T::INT64 || t == T::UINT64;
}

bool castable_to(int to) {
  using T = onnx::TensorProto;
  switch (to) {
    case T::FLOAT:
    case T::DOUBLE:
    case T::FLOAT16:
    case T::BFLOAT16:
    case T::BOOL:
    case T::INT8:
    case T::UINT8:
    case T::INT16:
    case T::UINT16:
    case T::INT32:
    case T::UINT32:
    case T::INT64:
    case T::UINT64: return true;
    default: return false;
  }
}

float cast_value(float x, int to) {
  using T = onnx::TensorProto;
  namespace num = aicore::num;
  if (to == T::FLOAT || to == T::DOUBLE) return x;
  if (to == T::FLOAT16) return float(num::f16(num::to_f16(x)));
  if (to == T::BFLOAT16) return float(num::bf16(num::to_bf16(x)));
  if (to == T::BOOL) return x != 0.0f ? 1.0f : 0.0f;  // NaN is true, as NumPy's bool() has it
  if (!std::isfinite(x)) return 0.0f;                 // undefined in ONNX; 0, not garbage
  const int bits = to == T::INT8 || to == T::UINT8     ? 8
                   : to == T::INT16 || to == T::UINT16 ? 16
                   : to == T::INT32 || to == T::UINT32 ? 32
                                                       : 64;
  const bool is_signed = to == T::INT8 || to == T::INT16 || to == T::INT32 || to == T::INT64;
  const double span = std::ldexp(1.0, bits);  // exact in a double, as is the remainder below
  double w = std::fmod(std::trunc(double(x)), span);
  if (w < 0) w += span;                       // [0, 2^bits)
  if (is_signed && w >= span / 2) w -= span;  // two's complement
  return float(w);
}

Tensor read_tensor_file(const std::string& path, int want_type) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open");
  onnx::TensorProto t;
  if (!t.ParseFromIstream(&f)) throw Error(path + ": not a serialized ONNX TensorProto");
  using T = onnx::TensorProto;
  if (want_type && t.data_type() != want_type)  // values of another type would be read as numbers of it
    throw Error(path + ": tensor '" + t.name() + "' has data type " + T::DataType_Name(T::DataType(t.data_type())) +
                ", the model's input is " + T::DataType_Name(T::DataType(want_type)));
  return from_proto(t, path);
}

namespace {

// A window's sizes: of 0 or less, the checker lets them pass and ONNX's shape inference divides
// by a stride or dilation of 0 (SIGFPE inside libonnx), so they are refused by name before it
// runs (check_and_infer_safely would only say it died); over kMaxWindow (each, and the taps of
// a window together), the host reference's loops over the taps would run for hours (a
// 65536 x 65536 MaxPool window). Real windows are far inside: 11 x 11, a global pool's 7 x 7, a
// 1-D pool over a second of 16 kHz audio.
void check_windows(const Model& m) {
  constexpr std::int64_t kMaxWindow = 1 << 16, kMaxTaps = 1 << 20;
  for (int i = 0; i < m.graph().node_size(); ++i) {
    const auto& n = m.graph().node(i);
    const std::string who =
        m.path + ": node '" + (n.name().empty() ? "#" + std::to_string(i) : n.name()) + "' (" + n.op_type() + "): ";
    for (const auto& a : n.attribute()) {
      const bool pads = a.name() == "pads";
      if (!pads && a.name() != "strides" && a.name() != "dilations" && a.name() != "kernel_shape") continue;
      std::int64_t taps = 1;
      for (std::int64_t v : a.ints()) {
        if (v < (pads ? 0 : 1) || v > kMaxWindow)
          throw Error(who + a.name() + " holds " + std::to_string(v) + " (each must be " + (pads ? "0" : "1") + " to " +
                          std::to_string(kMaxWindow) + ")",
                      kExitConfig);
        taps *= v;
      }
      if (a.name() == "kernel_shape" && taps > kMaxTaps)
        throw Error(who + "a window of " + std::to_string(taps) + " taps (at most " + std::to_string(kMaxTaps) + ")",
                    kExitConfig);
    }
  }
}

// Every tensor's shape that is known after shape inference: the graph's inputs and weights hold
// no negative dimension and at most kMaxElements elements; the values between nodes and the
// outputs at most kMaxElements (a negative dimension there comes from a node's attributes, which
// the node's own checks name better). An empty tensor is a model's right (an optional input's
// "none", a reshape of nothing); the compiler refuses one a kernel would read.
void check_shapes(const Model& m) {
  each_known_shape(m, [&](const std::string& name, const std::vector<std::int64_t>& dims, bool given) {
    const Tensor t{dims, {}};
    const std::string why = t.problem();
    if (!why.empty() && (given || why.rfind("a negative", 0) != 0))
      throw Error(m.path + ": tensor '" + name + "' of shape " + t.shape_str() + ": " + why, kExitConfig);
  });
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

// What the child wrote before it ended, read as it comes; kHung (and the child killed) when it
// has not ended 60 s on: a loop in libonnx must not hang the compile.
const char* const kHung = "\x01hung";
std::string child_message(int fd, pid_t pid) {
  std::string why;
  char buf[512];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    const int ready = left.count() > 0 ? poll(&p, 1, int(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      kill(pid, SIGKILL);
      return kHung;
    }
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return why;
    why.append(buf, std::size_t(n));
  }
}

// check_and_infer, first in a child process: on some malformed models libonnx's shape inference
// dies (a null pointer for a LayerNormalization of a scalar, a division by a stride of 0: the
// cases in fuzz/regressions/onnx) instead of throwing. The child's death is then this model's
// error; a model it survives is checked and inferred again here (the same result: the same
// code on the same bytes).
void check_and_infer_safely(Model& m) {
  // A child that hangs is given a second try before the model is called malformed: a child forked
  // from a process with threads can hang on a lock another thread held at the fork (under ASan,
  // on one or two of the suite's smallest models a run, when the machine was loaded).
  for (int attempt = 1;; ++attempt) {
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) throw Error(m.path + ": cannot check it (no pipe)");
    std::fflush(nullptr);
    // A supervisor may have left SIGCHLD ignored: the child would then be reaped unseen.
    struct sigaction child {
    }, before{};
    child.sa_handler = SIG_DFL;
    sigaction(SIGCHLD, &child, &before);
    const pid_t pid = fork();
    if (pid == 0) {
      // The child dies of its signal as it comes, not through a handler (a sanitizer's or a
      // fuzzer's would report it as this process's crash), and with its parent.
      for (int sig : {SIGSEGV, SIGFPE, SIGBUS, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      close(out[0]);
      const std::string why = check_and_infer(m.proto);
      const bool wrote = why.empty() || write(out[1], why.data(), why.size()) == ssize_t(why.size());
      _exit(why.empty() && wrote ? 0 : 1);
    }
    close(out[1]);
    const std::string why = pid > 0 ? child_message(out[0], pid) : "";
    close(out[0]);
    int status = 0;  // no child (fork refused): checked here only, as before
    const bool lost = pid > 0 && waitpid(pid, &status, 0) != pid;
    sigaction(SIGCHLD, &before, nullptr);
    if (lost) throw Error(m.path + ": cannot check it (its child process is lost)");
    if (pid > 0 && why == kHung && attempt == 1) continue;
    if (pid > 0 && why == kHung)
      throw Error(m.path + ": a malformed model: ONNX's checker and shape inference did not finish in 60 s, twice",
                  kExitConfig);
    if (WIFSIGNALED(status))
      throw Error(m.path + ": a malformed model: ONNX's checker and shape inference died on it (signal " +
                      std::to_string(WTERMSIG(status)) + ")",
                  kExitConfig);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      throw Error(m.path + ": " + (why.empty() ? "ONNX's checker refused it" : why), kExitConfig);
    break;
  }
  const std::string again = check_and_infer(m.proto);
  if (!again.empty()) throw Error(m.path + ": " + again, kExitConfig);
}

}  // namespace

void each_known_shape(const Model& m, const ShapeVisitor& f) {
  const auto known = [&](const onnx::ValueInfoProto& v, bool given) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
    std::vector<std::int64_t> dims;
    for (const auto& d : v.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return;  // symbolic (a batch): set when compiled
      dims.push_back(d.dim_value());
    }
    f(v.name(), dims, given);
  };
  for (const auto& v : m.graph().input()) known(v, true);
  for (const auto* list : {&m.graph().value_info(), &m.graph().output()})
    for (const auto& v : *list) known(v, false);
  for (const auto& t : m.graph().initializer()) f(t.name(), {t.dims().begin(), t.dims().end()}, true);
}

namespace {

// Constant nodes become initializers (exporters write a GELU's sqrt 2, a Reshape's shape so): their
// outputs are then weights, as the host reference and the compiler take them (the compiler folds
// the nodes that compute from weights and shapes only: Compiler::fold_constant_nodes). A sparse or
// string constant stays a node (refused by name as an op not implemented).
// A Constant node's tensor (value, value_float(s), value_int(s)), or nullopt for any other node
// and for a sparse or string constant.
std::optional<onnx::TensorProto> constant_proto(const onnx::NodeProto& n) {
  if (n.op_type() != "Constant" || !n.domain().empty() || n.attribute_size() != 1 || n.output_size() != 1)
    return std::nullopt;
  const onnx::AttributeProto& a = n.attribute(0);
  onnx::TensorProto t;
  if (a.name() == "value") {
    t = a.t();
  } else if (a.name() == "value_float" || a.name() == "value_floats") {
    t.set_data_type(onnx::TensorProto::FLOAT);
    if (a.name() == "value_float") t.add_float_data(a.f());
    for (float v : a.floats()) t.add_float_data(v);
    if (a.name() == "value_floats") t.add_dims(a.floats_size());
  } else if (a.name() == "value_int" || a.name() == "value_ints") {
    t.set_data_type(onnx::TensorProto::INT64);
    if (a.name() == "value_int") t.add_int64_data(a.i());
    for (std::int64_t v : a.ints()) t.add_int64_data(v);
    if (a.name() == "value_ints") t.add_dims(a.ints_size());
  } else {
    return std::nullopt;
  }
  return t;
}

void fold_constants(Model& m) {
  onnx::GraphProto& g = *m.proto.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  std::vector<int> index;  // of each node kept, in the file
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    std::optional<onnx::TensorProto> t = constant_proto(n);
    if (!t) {
      *kept.Add() = n, index.push_back(i);
      continue;
    }
    t->set_name(n.output(0));
    *g.add_initializer() = std::move(*t);
  }
  if (kept.size() == g.node_size()) return;
  // Messages and layers name an unnamed node by its place: its place in the file, as OP_INDEX.
  for (int i = 0; i < kept.size(); ++i)
    if (kept[i].name().empty()) kept[i].set_name(kept[i].op_type() + "_" + std::to_string(index[std::size_t(i)]));
  g.mutable_node()->Swap(&kept);
}

// CastLike (opset 15 on: exporters write it to give a scalar a tensor's type, `CastLike(0.5, x)`)
// is a Cast to its second input's element type: ONNX defines it by that expansion. Each becomes that Cast, keeping its
// name, once the types are known (shape inference, the graph's inputs, the weights); `saturate` only changes float8
// targets, which a Cast refuses.
void expand_cast_like(Model& m) {
  onnx::GraphProto& g = *m.proto.mutable_graph();
  std::map<std::string, int> type;
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
    for (const auto& v : *list)
      if (v.type().has_tensor_type() && v.type().tensor_type().elem_type())
        type[v.name()] = v.type().tensor_type().elem_type();
  for (const auto& t : g.initializer()) type[t.name()] = t.data_type();
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto& n = *g.mutable_node(i);
    if (n.op_type() != "CastLike" || !(n.domain().empty() || n.domain() == "ai.onnx")) continue;
    if (n.name().empty()) n.set_name(n.op_type() + "_" + std::to_string(i));  // as fold_constants names one
    const auto to = n.input_size() == 2 ? type.find(n.input(1)) : type.end();
    if (to == type.end())
      throw Error(m.path + ": node '" + n.name() + "' (CastLike): the element type of its target_type input" +
                      (n.input_size() == 2 ? " '" + n.input(1) + "'" : "") + " is not known",
                  kExitConfig);
    n.set_op_type("Cast");
    n.mutable_input()->RemoveLast();
    n.clear_attribute();
    onnx::AttributeProto& a = *n.add_attribute();
    a.set_name("to");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(to->second);
  }
}

}  // namespace

namespace {

// A tensor's bytes kept in a file beside the model (external data: how exporters write large
// weights, and any model over protobuf's 2 GiB) read into the tensor: `location` in the model's
// folder, `length` bytes (else to the end of the file) from `offset`.
void read_external(onnx::TensorProto& t, const std::string& model) {
  if (!t.has_data_location() || t.data_location() != onnx::TensorProto::EXTERNAL) return;
  const std::string who = model + ": tensor '" + t.name() + "' keeps its data in ";
  std::string location;
  std::uint64_t offset = 0, length = 0;
  bool has_length = false;
  for (const auto& kv : t.external_data()) {
    std::uint64_t* to = kv.key() == "offset" ? &offset : kv.key() == "length" ? &length : nullptr;
    if (kv.key() == "location") location = kv.value();
    if (!to) continue;
    const char* end = kv.value().data() + kv.value().size();
    if (std::from_chars(kv.value().data(), end, *to).ptr != end || kv.value().empty())
      throw Error(who + "an external file with a bad " + kv.key() + " '" + kv.value() + "'", kExitConfig);
    has_length |= to == &length;
  }
  const std::filesystem::path rel(location);
  bool escapes = location.empty() || rel.is_absolute();
  for (const auto& part : rel) escapes |= part == "..";
  if (escapes)  // as ONNX's own loader: only a file in the model's folder or below it
    throw Error(who + "'" + location + "', not a file in the model's folder", kExitConfig);
  const std::string file = (std::filesystem::path(model).parent_path() / rel).string();
  std::error_code ec;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(file, ec)))  // it could lead anywhere
    throw Error(who + file + ", a symbolic link (not followed, as ONNX's own loader does not)", kExitConfig);
  if (!std::filesystem::exists(file, ec)) throw Error(who + file + ", which does not exist", kExitConfig);
  if (!std::filesystem::is_regular_file(file, ec)) throw Error(who + file + ", not a regular file", kExitConfig);
  const std::uint64_t size = std::filesystem::file_size(file, ec);
  if (!has_length) length = offset <= size ? size - offset : 0;
  if (offset > size || length > size - offset)
    throw Error(who + file + " at bytes " + std::to_string(offset) + " .. " + std::to_string(offset + length) +
                    ", past its end (" + std::to_string(size) + " bytes)",
                kExitConfig);
  std::string bytes(length, '\0');
  std::ifstream f(file, std::ios::binary);
  if (!f.seekg(std::streamoff(offset)) || !f.read(bytes.data(), std::streamsize(length)))
    throw Error(who + file + ", which cannot be read", kExitConfig);
  t.set_raw_data(std::move(bytes));
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::DEFAULT);
}

// The weights and constants of the graph: every tensor that may keep its data outside.
void read_external_data(Model& m) {
  onnx::GraphProto& g = *m.proto.mutable_graph();
  for (onnx::TensorProto& t : *g.mutable_initializer()) read_external(t, m.path);
  for (onnx::NodeProto& n : *g.mutable_node())
    for (onnx::AttributeProto& a : *n.mutable_attribute())
      if (a.has_t()) read_external(*a.mutable_t(), m.path);
}

// A constant's values: an initializer's, or a Constant node's (constant_proto); nullopt for
// anything else.
std::optional<Tensor> constant_values(const Model& m, const std::string& v) {
  for (const auto& t : m.proto.graph().initializer())
    if (t.name() == v) return from_proto(t, m.path);
  for (const auto& n : m.proto.graph().node())
    if (n.output_size() == 1 && n.output(0) == v)
      if (const std::optional<onnx::TensorProto> t = constant_proto(n)) return from_proto(*t, m.path);
  return std::nullopt;
}

// Reduce op n of opset 18 on as opset 17 writes it: its constant axes (input 1) as the attribute,
// noop_with_empty_axes gone (with no axes and 1, the node is an Identity). An axes attribute is
// not a valid model there: refused, not read as no axes.
// A Reduce op of no axes with noop_with_empty_axes 1: each element its own reduction, the
// element-wise op that is (x x, |x|, ln x; the input itself for the others), as ONNX defines it.
void reduce_nothing(onnx::NodeProto& n) {
  static const std::map<std::string, std::string> kAlone = {
      {"ReduceSumSquare", "Mul"}, {"ReduceL1", "Abs"}, {"ReduceL2", "Abs"}, {"ReduceLogSum", "Log"}};
  const auto op = kAlone.find(n.op_type());
  n.clear_attribute();
  if (op == kAlone.end()) return n.set_op_type("Identity");
  n.set_op_type(op->second);
  if (op->second == "Mul") n.add_input(n.input(0));
}

void reduce_as_opset17(const Model& m, onnx::NodeProto& n) {
  const std::string who = m.path + ": node '" + (n.name().empty() ? n.op_type() : n.name()) + "' (" + n.op_type() + ")";
  for (const auto& a : n.attribute())
    if (a.name() == "axes")
      throw Error(who + ": an axes attribute at opset 18 or later, where the axes are input 1 (not a valid model)",
                  kExitConfig);
  std::vector<std::int64_t> axes;
  if (n.input_size() > 1 && !n.input(1).empty()) {
    const std::optional<Tensor> t = constant_values(m, n.input(1));
    if (!t)
      throw Error(who + ": its axes are an activation ('" + n.input(1) + "'): constant axes are read", kExitConfig);
    for (float v : t->data) axes.push_back(std::int64_t(v));
  }
  while (n.input_size() > 1) n.mutable_input()->RemoveLast();
  bool noop = false;
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> kept;
  for (const auto& a : n.attribute())
    if (a.name() == "noop_with_empty_axes")
      noop = a.i() != 0;
    else
      *kept.Add() = a;
  n.mutable_attribute()->Swap(&kept);
  if (axes.empty() && noop) return reduce_nothing(n);
  if (axes.empty()) return;
  onnx::AttributeProto* a = n.add_attribute();
  a->set_name("axes"), a->set_type(onnx::AttributeProto::INTS);
  for (std::int64_t v : axes) a->add_ints(v);
}

// Resize of opset 18 on as opset 13 writes it, where its new attributes change nothing:
// antialias 0, or 1 where constant scales shrink no axis (it widens a filter only on an axis it
// shrinks; with the sizes given instead, unread here, it stays); keep_aspect_ratio_policy stretch
// (the default). Any other is left for the checker to refuse by the node's name.
void resize_as_opset17(const Model& m, onnx::NodeProto& n) {
  const std::optional<Tensor> scales =
      n.input_size() > 2 && !n.input(2).empty() ? constant_values(m, n.input(2)) : std::nullopt;
  bool upscale = scales && !scales->data.empty();
  for (float v : scales ? scales->data : std::vector<float>{}) upscale = upscale && v >= 1.0f;
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> kept;
  for (const auto& a : n.attribute())
    if (!(a.name() == "antialias" && (a.i() == 0 || upscale)) &&
        !(a.name() == "keep_aspect_ratio_policy" && a.s() == "stretch"))
      *kept.Add() = a;
  n.mutable_attribute()->Swap(&kept);
}

// Split of opset 18 on as opset 17 writes it: num_outputs (which must be the outputs' count) gone,
// the split then into as many equal parts. Where the axis does not divide so, opset 18's last part
// is smaller and 17's shape inference refuses the node (the axis is not known here to write the
// sizes out).
void split_as_opset17(onnx::NodeProto& n) {
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> kept;
  for (const auto& a : n.attribute())
    if (!(a.name() == "num_outputs" && a.i() == n.output_size())) *kept.Add() = a;
  n.mutable_attribute()->Swap(&kept);
}

// libonnx checks a model's nodes against the operator schemas of the opsets it knows (up to 17 in
// Debian 12's 1.12), those of a later opset against the last it knows. Opset 18 gave ReduceMean,
// ReduceMax, ReduceMin, ReduceProd and the ReduceL1 / L2 / LogSum / LogSumExp / SumSquare ops
// their axes as an input (ReduceSum had it from 13), which that checker refuses ("Bad node spec"),
// though PyTorch's exporter writes opset 18 since 2.5. Such a model is read as opset 17: each of
// those ops is written as opset 17 writes it, which means the same, and so is a Resize whose new
// attributes change nothing, and a Split's num_outputs; whatever else a later opset has that 17 does not (an attribute,
// an input, an op) the checker refuses by the node's name.
void read_as_known_opset(Model& m) {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto range = ranges.find(onnx::ONNX_DOMAIN);
  if (range == ranges.end() || range->second.second >= 18) return;
  onnx::OperatorSetIdProto* own = nullptr;
  for (auto& o : *m.proto.mutable_opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") own = &o;
  if (!own || own->version() <= range->second.second) return;
  static const std::set<std::string> kMoved = {"ReduceMean",   "ReduceMax",       "ReduceMin",
                                               "ReduceProd",   "ReduceL1",        "ReduceL2",
                                               "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};
  for (onnx::NodeProto& n : *m.proto.mutable_graph()->mutable_node()) {
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    if (kMoved.count(n.op_type())) reduce_as_opset17(m, n);
    if (n.op_type() == "Resize") resize_as_opset17(m, n);
    if (n.op_type() == "Split") split_as_opset17(n);
  }
  own->set_version(range->second.second);
}

}  // namespace

Model load_model(const std::string& path) {
  Model m;
  m.path = path;
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open");
  if (!m.proto.ParseFromIstream(&f)) throw Error(path + ": not an ONNX model (the protobuf does not parse)");
  // libonnx checks IR versions up to the one it was built with (onnx::IR_VERSION, 8 in Debian 12).
  // A later model is checked as that one: what IR 9 and 10 add are data types (float8, 4-bit), and
  // a tensor of a type this reader does not know is refused by name when it is read.
  if (m.proto.ir_version() > onnx::IR_VERSION) m.proto.set_ir_version(onnx::IR_VERSION);
  read_external_data(m);
  read_as_known_opset(m);
  check_windows(m);
  check_and_infer_safely(m);
  fold_constants(m);
  expand_cast_like(m);
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
  if (v.size() == 1 && (nm == "kernel_shape" || nm == "strides" || nm == "dilations" || nm == "output_shape"))
    return {1, v[0]};
  if (v.size() == 1 && nm == "output_padding") return {0, v[0]};
  if (v.size() == 2 && nm == "pads") return {0, v[0], 0, v[1]};
  return v;  // a count the 1-D form does not have (the host reference refuses it: run_1d)
}

bool one_d_window(const onnx::NodeProto& n, std::size_t input_rank) {
  const std::string& op = n.op_type();
  return input_rank == 3 && (op == "Conv" || op == "ConvTranspose" || op == "MaxPool" || op == "AveragePool");
}

std::vector<std::int64_t> as_2d(std::vector<std::int64_t> shape) {
  if (shape.size() == 3) shape.insert(shape.end() - 1, 1);
  return shape;
}

}  // namespace dvp::network
