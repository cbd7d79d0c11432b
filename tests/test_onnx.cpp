// SPDX-License-Identifier: MIT
// ONNX in and the host reference: every case of the ONNX operator test suite Debian ships
// (libonnx-testdata: model.onnx, input_N.pb, output_N.pb) whose operators the reference
// implements runs through it and must match the shipped outputs; the rest are counted as
// unsupported with the reason. Bad files are errors that name them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <variant>

#include "common/error.hpp"
#include "host_reference.hpp"
#include "schedule.hpp"

using namespace dvp;
using namespace dvp::network;
namespace fs = std::filesystem;

namespace {

const fs::path kSuite = "/usr/share/libonnx-testdata/data/node";

struct Tally {
  int pass = 0, fail = 0, unsupported = 0;
};

bool is_contraction(const std::string& op) {
  return op == "MatMul" || op == "Gemm" || op == "Conv" || op == "ConvTranspose";
}

// One case: "" when it passed, "unsupported: ..." or the first mismatch. Without all_values
// (what a timing-only compile asks for), the outputs' shapes are checked, and their values too
// unless a contraction computed them and they are all zero (counted in `zeroed`).
std::string run_case(const fs::path& dir, bool all_values = true, int* zeroed = nullptr) {
  const Model m = load_model((dir / "model.onnx").string());
  for (const auto& n : m.graph().node())
    if (const std::string why = reference_refuses(n, m.opset); !why.empty()) return "unsupported: " + why;
  Tensors values;
  std::vector<std::pair<std::string, int>> inputs;  // graph inputs that are not initializers, in order, and types
  for (const auto& i : m.graph().input()) {
    bool init = false;
    for (const auto& t : m.graph().initializer()) init |= t.name() == i.name();
    if (!init) inputs.emplace_back(i.name(), i.type().tensor_type().elem_type());
  }
  const fs::path data = dir / "test_data_set_0";
  try {  // a tensor type the reader does not take (uint8, optional, sequence)
    for (std::size_t k = 0; k < inputs.size(); ++k)
      values[inputs[k].first] =
          read_tensor_file((data / ("input_" + std::to_string(k) + ".pb")).string(), inputs[k].second);
  } catch (const Error& e) {
    return std::string("unsupported: ") + e.what();
  }
  for (const auto& n : m.graph().node())  // now with the inputs' shapes: a 3-D window's input
    if (const std::string why = reference_refuses(n, m.opset, &values); !why.empty()) return "unsupported: " + why;
  try {
    run_reference(m, values, all_values);
  } catch (const std::exception& e) {  // the reference took the nodes: any other error is a failure
    const std::string why = e.what();  // a Div of integers, a wrapping sum: refused once the types are known
    const bool refused = why.find("a Div of integers is not implemented") != std::string::npos ||
                         why.find("past its type's range: ONNX wraps it there") != std::string::npos;
    return (refused ? "unsupported: " : "failed: ") + why;
  }
  for (int k = 0; k < m.graph().output_size(); ++k) {
    Tensor want;
    try {  // the suite's bfloat16 outputs are written as uint16
      want = read_tensor_file((data / ("output_" + std::to_string(k) + ".pb")).string(),
                              m.graph().output(k).type().tensor_type().elem_type());
    } catch (const Error& e) {
      return std::string("unsupported: ") + e.what();
    }
    const Tensor& have = values.at(m.graph().output(k).name());
    if (have.shape != want.shape)
      return "output " + std::to_string(k) + ": shape " + have.shape_str() + ", expected " + want.shape_str();
    const bool zeros = std::all_of(have.data.begin(), have.data.end(), [](float x) { return x == 0.0f; });
    if (!all_values && zeros && std::any_of(m.graph().node().begin(), m.graph().node().end(), [](const auto& n) {
          return is_contraction(n.op_type());
        })) {
      if (zeroed) ++*zeroed;
      continue;
    }
    for (std::size_t e = 0; e < want.data.size(); ++e)
      if (!(std::fabs(have.data[e] - want.data[e]) <= 1e-4 + 1e-4 * std::fabs(want.data[e])))  // NaN fails
        return "output " + std::to_string(k) + " element " + std::to_string(e) + ": " + std::to_string(have.data[e]) +
               ", expected " + std::to_string(want.data[e]);
  }
  return "";
}

}  // namespace

TEST(OnnxReference, OperatorSuiteCasesMatchTheShippedOutputs) {
  ASSERT_TRUE(fs::is_directory(kSuite)) << kSuite << ": install libonnx-testdata (scripts/setup.sh)";
  std::map<std::string, Tally> per_op;
  std::vector<fs::path> cases;
  for (const auto& d : fs::directory_iterator(kSuite))
    if (fs::exists(d.path() / "model.onnx")) cases.push_back(d.path());
  std::sort(cases.begin(), cases.end());
  int pass = 0;
  for (const fs::path& c : cases) {
    std::string op = "?";
    std::string result;
    try {
      const Model m = load_model((c / "model.onnx").string());
      if (m.graph().node_size()) op = m.graph().node(0).op_type();
      result = run_case(c);
    } catch (const Error& e) {  // the model itself: the checker refused it
      result = std::string("unsupported: ") + e.what();
    }
    Tally& t = per_op[op];
    if (result.empty()) {
      ++t.pass, ++pass;
    } else if (result.rfind("unsupported: ", 0) == 0) {
      const auto ops = reference_ops();
      if (std::find(ops.begin(), ops.end(), op) != ops.end())  // why a case of an implemented op is not run
        std::printf("%s: %s\n", c.filename().c_str(), result.c_str());
      ++t.unsupported;  // (a model the checker or the tensor reader refuses counts here too)
    } else {
      ++t.fail;
      ADD_FAILURE() << c.filename().string() << ": " << result;
    }
  }
  for (const std::string& op : reference_ops()) {
    const Tally& t = per_op[op];
    std::printf("%-20s pass %3d  fail %3d  unsupported %3d\n", op.c_str(), t.pass, t.fail, t.unsupported);
    EXPECT_GT(t.pass, 0) << op << ": no case of it passed";
  }
  // The ONNX 1.12 suite's cases of the ops above that the reader takes (415 before Equal, Less, LessOrEqual, Greater,
  // GreaterOrEqual, Not, And, Or, Xor and Where; 400 before Slice and Split; 355 before
  // ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp and ReduceProd; 342 before Expand, Reciprocal
  // and Log; 328 before linear and cubic Resize; 313 before 8- and 16-bit integer tensors; 307 before CastLike; 304
  // before the Dropout mask; 290 before Shape and Gather; 273 before Cast, Dropout and bool tensors; 264 before
  // ConvTranspose; 210 before Pow, ReduceMean, ReduceSum, ReduceMax, ReduceMin; 201 before nearest Resize and Upsample,
  // 190 before Pad, Squeeze and Unsqueeze; 160 before HardSigmoid, HardSwish, Abs, Neg, Sqrt, Exp, Erf, Max, Min,
  // Constant nodes and float16 tensors; 158 before 1-D pools, 139 before ArgMax, TopK).
  EXPECT_EQ(pass, 458);
}

// What a timing-only compile runs: every case gives the shipped outputs' shapes, and its values
// but where a contraction of the graph's inputs computed them (left zero: the ones of the suite's
// MatMul, Gemm, Conv and ConvTranspose cases the reference runs).
TEST(OnnxReference, WithoutValuesEveryShapeIsTheSuitesAndOnlyContractionsAreLeftOut) {
  ASSERT_TRUE(fs::is_directory(kSuite)) << kSuite << ": install libonnx-testdata (scripts/setup.sh)";
  int pass = 0, zeroed = 0, contractions = 0;
  for (const auto& d : fs::directory_iterator(kSuite)) {
    if (!fs::exists(d.path() / "model.onnx")) continue;
    std::string result;
    try {
      result = run_case(d.path(), false, &zeroed);
      if (result.empty() && run_case(d.path()).empty()) {
        const Model m = load_model((d.path() / "model.onnx").string());
        contractions += m.graph().node_size() == 1 && is_contraction(m.graph().node(0).op_type());
      }
    } catch (const Error& e) {
      result = std::string("unsupported: ") + e.what();
    }
    if (result.empty())
      ++pass;
    else if (result.rfind("unsupported: ", 0) != 0)
      ADD_FAILURE() << d.path().filename().string() << ": " << result;
  }
  EXPECT_EQ(pass, 458);  // as with the values
  EXPECT_EQ(zeroed, contractions);
  EXPECT_EQ(contractions, 29);  // the suite's one-node MatMul, Gemm, Conv and ConvTranspose cases that pass
}

// A constant's contraction (of initializers, or of a Shape) is computed: the compiler folds such values.
TEST(OnnxReference, WithoutValuesAContractionOfConstantsIsStillComputed) {
  Model m;
  m.path = "fold.onnx", m.opset = 13;
  auto* g = m.proto.mutable_graph();
  for (const char* name : {"a", "b"}) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name), t->set_data_type(onnx::TensorProto::FLOAT), t->add_dims(2), t->add_dims(2);
    for (float v : {1.0f, 2.0f, 3.0f, 4.0f}) t->add_float_data(v);
  }
  auto node = [&](const char* op, std::vector<std::string> in, const char* out) {
    onnx::NodeProto* n = g->add_node();
    n->set_name(out), n->set_op_type(op), n->add_output(out);
    for (const std::string& i : in) n->add_input(i);
  };
  node("MatMul", {"a", "b"}, "c");  // constant: [[7, 10], [15, 22]]
  node("MatMul", {"x", "c"}, "y");  // of the input: left zero
  node("Add", {"y", "c"}, "z");     // not a contraction: computed, from y's zeros
  node("Shape", {"x"}, "s");        // the input's shape, [2, 2]: a constant, not the input's values
  node("MatMul", {"s", "c"}, "t");  // so computed: [2 x 7 + 2 x 15, 2 x 10 + 2 x 22]
  Tensors values;
  values["x"] = Tensor{{2, 2}, {1, 0, 0, 1}};
  run_reference(m, values, false);
  EXPECT_EQ(values.at("c").data, (std::vector<float>{7, 10, 15, 22}));
  // y's zeros are dropped once z, its last reader, has run: its shape stays.
  EXPECT_EQ(values.at("y").shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_TRUE(values.at("y").data.empty());
  EXPECT_EQ(values.at("z").data, (std::vector<float>{7, 10, 15, 22}));
  EXPECT_EQ(values.at("t").data, (std::vector<float>{44, 64}));
  Tensors all;
  all["x"] = Tensor{{2, 2}, {1, 0, 0, 1}};
  run_reference(m, all);
  EXPECT_EQ(all.at("y").data, (std::vector<float>{7, 10, 15, 22}));
}

// uint8 pixels are read (a .pb of them too); a sum that fits uint8 is computed, one that would
// wrap (200 + 100 is 44 in ONNX) is refused by the node's name, not given as 300.
TEST(OnnxReference, NarrowIntegersAreReadAndASumThatWouldWrapIsRefused) {
  Model m;
  m.path = "u8.onnx", m.opset = 13;
  auto* g = m.proto.mutable_graph();
  onnx::NodeProto* n = g->add_node();
  n->set_name("sum"), n->set_op_type("Add"), n->add_input("x"), n->add_input("y"), n->add_output("z");
  onnx::ValueInfoProto* o = g->add_output();
  o->set_name("z"), o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::UINT8);
  onnx::TensorProto px;
  px.set_name("x"), px.set_data_type(onnx::TensorProto::UINT8), px.add_dims(3),
      px.set_raw_data(std::string("\x01\xc8\xff", 3));
  const std::string file = (fs::temp_directory_path() / ("dvp-u8-x-" + std::to_string(::getpid()) + ".pb")).string();
  std::ofstream(file, std::ios::binary) << px.SerializeAsString();
  EXPECT_THROW(read_tensor_file(file, onnx::TensorProto::FLOAT), Error);  // not the input's type
  Tensors values;
  values["x"] = read_tensor_file(file, onnx::TensorProto::UINT8);
  fs::remove(file);
  EXPECT_EQ(values.at("x").data, (std::vector<float>{1, 200, 255}));
  values["y"] = Tensor{{3}, {2, 55, 0}};
  run_reference(m, values);
  EXPECT_EQ(values.at("z").data, (std::vector<float>{3, 255, 255}));
  values.erase("z");
  values["y"] = Tensor{{3}, {2, 100, 0}};
  try {
    run_reference(m, values);
    ADD_FAILURE() << "a uint8 sum of 300 was not refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'sum' (Add): output 'z' (UINT8) holds 300"), std::string::npos)
        << e.what();
  }
}

// Opset 18's Resize: antialias on an upscale and keep_aspect_ratio_policy with scales change
// nothing (the bilinear values worked out by hand); antialias 1 on a downscale, another policy with
// sizes and axes would change the answer, and are refused by name.
TEST(OnnxReference, ResizeOfOpset18RefusesWhatWouldChangeItsAnswer) {
  const auto attr = [](const char* name, std::int64_t i, const char* str = nullptr) {
    onnx::AttributeProto a;
    a.set_name(name);
    if (str)
      a.set_type(onnx::AttributeProto::STRING), a.set_s(str);
    else
      a.set_type(onnx::AttributeProto::INT), a.set_i(i);
    return a;
  };
  onnx::AttributeProto axes;  // a list: [3]
  axes.set_name("axes"), axes.set_type(onnx::AttributeProto::INTS), axes.add_ints(3);
  struct Case {
    std::vector<onnx::AttributeProto> attrs;
    bool sizes;  // the factors are sizes (input 3), not scales (input 2)
    Tensor x, factors;
  };
  const auto run = [&](const Case& c) {
    Model m;
    m.path = "resize.onnx", m.opset = 18;
    onnx::NodeProto* n = m.proto.mutable_graph()->add_node();
    n->set_name("up"), n->set_op_type("Resize"), n->add_input("x"), n->add_input(""), n->add_input(c.sizes ? "" : "s");
    if (c.sizes) n->add_input("s");
    n->add_output("y");
    *n->add_attribute() = attr("mode", 0, "linear");
    for (const auto& a : c.attrs) *n->add_attribute() = a;
    Tensors values;
    values["x"] = c.x, values["s"] = c.factors;
    run_reference(m, values);
    return values.at("y").data;
  };
  const Tensor pair{{1, 1, 1, 2}, {1, 5}}, up{{4}, {1, 1, 1, 2}};
  EXPECT_EQ(run({{attr("antialias", 1), attr("keep_aspect_ratio_policy", 0, "not_larger")}, false, pair, up}),
            (std::vector<float>{1, 2, 4, 5}));  // half_pixel: 1, 0.75 x 1 + 0.25 x 5, 0.25 x 1 + 0.75 x 5, 5
  const std::pair<Case, const char*> refused[] = {
      {{{attr("antialias", 1)}, false, Tensor{{1, 1, 1, 4}, {1, 2, 3, 4}}, Tensor{{4}, {1, 1, 1, 0.5f}}},
       "antialias 1 on an axis it shrinks"},
      {{{attr("keep_aspect_ratio_policy", 0, "not_larger")}, true, pair, Tensor{{4}, {1, 1, 2, 4}}},
       "keep_aspect_ratio_policy not_larger"},
      {{{axes}, false, pair, up}, "axes"}};
  for (const auto& [c, why] : refused) {
    try {
      run(c);
      ADD_FAILURE() << why << " was not refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("node 'up' (Resize): ") + why), std::string::npos) << e.what();
    }
  }
}

// A Conv of `geometry`'s shape (a seeded random input, weights and bias) run by the reference,
// against the plainest loop's sums: bias, then (c, i, j) in order, in double, one rounding, the
// taps in the padding skipped. Returns how many outputs differ.
struct ConvGeometry {
  std::int64_t N, C, H, W, M, group, kh, kw, stride, dilation, pad_t, pad_l, pad_b, pad_r;
};
int conv_outputs_unlike_the_plain_loop(const ConvGeometry& q) {
  Model m;
  m.path = "conv.onnx", m.opset = 13;
  onnx::NodeProto* n = m.proto.mutable_graph()->add_node();
  n->set_name("c"), n->set_op_type("Conv"), n->add_input("x"), n->add_input("w"), n->add_input("b");
  n->add_output("y");
  const std::vector<std::pair<const char*, std::vector<std::int64_t>>> attrs = {
      {"strides", {q.stride, q.stride}},
      {"dilations", {q.dilation, q.dilation}},
      {"pads", {q.pad_t, q.pad_l, q.pad_b, q.pad_r}}};
  for (const auto& [name, values] : attrs) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name), a->set_type(onnx::AttributeProto::INTS);
    for (std::int64_t v : values) a->add_ints(v);
  }
  onnx::AttributeProto* g = n->add_attribute();
  g->set_name("group"), g->set_type(onnx::AttributeProto::INT), g->set_i(q.group);
  Tensors v;
  std::uint32_t seed = 1;
  auto fill = [&](std::vector<std::int64_t> shape) {
    Tensor t{shape, {}};
    t.data.resize(t.elements());
    for (float& x : t.data) x = float((seed = seed * 1664525u + 1013904223u) >> 8) / float(1 << 24) - 0.5f;
    return t;
  };
  const std::int64_t cg = q.C / q.group, per_group = q.M / q.group;
  v["x"] = fill({q.N, q.C, q.H, q.W}), v["w"] = fill({q.M, cg, q.kh, q.kw}), v["b"] = fill({q.M});
  run_reference(m, v);
  const std::int64_t OH = (q.H + q.pad_t + q.pad_b - (q.kh - 1) * q.dilation - 1) / q.stride + 1;
  const std::int64_t OW = (q.W + q.pad_l + q.pad_r - (q.kw - 1) * q.dilation - 1) / q.stride + 1;
  const Tensor &x = v.at("x"), &w = v.at("w"), &y = v.at("y");
  EXPECT_EQ(y.shape, (std::vector<std::int64_t>{q.N, q.M, OH, OW}));
  if (y.shape != std::vector<std::int64_t>{q.N, q.M, OH, OW}) return -1;
  int differ = 0;
  for (std::int64_t n = 0; n < q.N; ++n)
    for (std::int64_t o = 0; o < q.M; ++o)
      for (std::int64_t oh = 0; oh < OH; ++oh)
        for (std::int64_t ow = 0; ow < OW; ++ow) {
          double acc = v.at("b").data[std::size_t(o)];
          for (std::int64_t c = 0; c < cg; ++c)
            for (std::int64_t i = 0; i < q.kh; ++i)
              for (std::int64_t j = 0; j < q.kw; ++j) {
                const std::int64_t h = oh * q.stride - q.pad_t + i * q.dilation;
                const std::int64_t col = ow * q.stride - q.pad_l + j * q.dilation;
                if (h >= 0 && h < q.H && col >= 0 && col < q.W)
                  acc += double(x.data[std::size_t((((n * q.C) + o / per_group * cg + c) * q.H + h) * q.W + col)]) *
                         double(w.data[std::size_t(((o * cg + c) * q.kh + i) * q.kw + j)]);
              }
          differ += y.data[std::size_t(((n * q.M + o) * OH + oh) * OW + ow)] != float(acc);
        }
  return differ;
}

// A conv large enough to be shared out among the host's threads (5.9 M multiply-adds) gives, bit
// for bit, the plainest loop's sums.
TEST(OnnxReference, AConvSharedAmongThreadsIsThePlainLoopsBitForBit) {
  EXPECT_EQ(conv_outputs_unlike_the_plain_loop({1, 64, 32, 31, 40, 1, 3, 3, 2, 1, 1, 1, 1, 1}), 0);
}

// The shapes the reference's blocks do not divide: 3 groups of 3 output channels (not 4) with a 3 x 2
// window dilated by 2 and pads on two sides only; 7 channels (4 and 3) of 1,200 taps a position,
// tiles of 48 positions and a last of 3 (not a multiple of 4); two images of 2 groups of 264 channels
// (a block of 256 and one of 8) on 7 x 7 positions (4-channel rows of 48 in registers, then 1 alone);
// 5 x 6 positions of a 1 x 1 conv (16 by AVX-512's vectors and 8 by AVX's where the host has them, 4
// by SSE2's, 2 alone);
// a 7 x 7 window padded by 3 on rows of 511 positions, so that a tile of 512 ends with one position in
// the padding, fewer than the window's columns there.
TEST(OnnxReference, AConvOfRaggedShapesIsThePlainLoopsBitForBit) {
  EXPECT_EQ(conv_outputs_unlike_the_plain_loop({1, 6, 11, 13, 9, 3, 3, 2, 1, 2, 2, 0, 0, 1}), 0);
  EXPECT_EQ(conv_outputs_unlike_the_plain_loop({1, 200, 9, 12, 7, 1, 3, 2, 1, 1, 1, 0, 1, 0}), 0);
  EXPECT_EQ(conv_outputs_unlike_the_plain_loop({2, 32, 7, 7, 528, 2, 3, 3, 1, 1, 1, 1, 1, 1}), 0);
  EXPECT_EQ(conv_outputs_unlike_the_plain_loop({1, 24, 5, 6, 8, 1, 1, 1, 1, 1, 0, 0, 0, 0}), 0);
  EXPECT_EQ(conv_outputs_unlike_the_plain_loop({1, 1, 8, 511, 4, 1, 7, 7, 1, 1, 3, 3, 3, 3}), 0);
}

// An unnamed node is named by its place in the graph, as the compiler names it.
TEST(OnnxReference, AnUnnamedNodesErrorNamesItsPlace) {
  Model m;
  m.path = "unnamed.onnx", m.opset = 13;
  for (const char* op : {"Relu", "Transpose"}) {
    onnx::NodeProto* n = m.proto.mutable_graph()->add_node();
    n->set_op_type(op), n->add_input(op[0] == 'R' ? "x" : "r"), n->add_output(op[0] == 'R' ? "r" : "y");
  }
  onnx::AttributeProto* perm = m.proto.mutable_graph()->mutable_node(1)->add_attribute();
  perm->set_name("perm"), perm->set_type(onnx::AttributeProto::INTS), perm->add_ints(0), perm->add_ints(0);
  Tensors v;
  v["x"] = Tensor{{2, 3}, std::vector<float>(6)};
  try {
    run_reference(m, v, false);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "unnamed.onnx: node '#1' (Transpose): perm is not a permutation of the input's dimensions");
  }
}

// FLOAT16 and BFLOAT16 tensors: 16-bit patterns, in raw_data (little-endian) or one per
// int32_data entry, as ONNX stores them; each value exact.
TEST(OnnxReference, HalfTensorsAreReadRawOrAsInt32Data) {
  const std::uint16_t f16[] = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x8000};  // 1, -2, 65504, 2^-24, -0
  const float want[] = {1.0f, -2.0f, 65504.0f, 5.9604645e-8f, -0.0f};
  onnx::TensorProto t;
  t.set_name("h");
  t.set_data_type(onnx::TensorProto::FLOAT16);
  t.add_dims(5);
  for (std::uint16_t b : f16) t.add_int32_data(b);
  const Tensor a = from_proto(t, "test");
  t.clear_int32_data();
  t.set_raw_data(std::string(reinterpret_cast<const char*>(f16), sizeof f16));
  const Tensor b = from_proto(t, "test");
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(a.data[std::size_t(i)], want[i]) << i;
    EXPECT_EQ(b.data[std::size_t(i)], want[i]) << i;
  }
  EXPECT_TRUE(std::signbit(a.data[4]));
  t.set_data_type(onnx::TensorProto::BFLOAT16);
  const std::uint16_t bf16[] = {0x3F80, 0xC2F7, 0x0000, 0x7F80, 0x3E20};  // 1, -123.5, 0, inf, 0.15625
  t.set_raw_data(std::string(reinterpret_cast<const char*>(bf16), sizeof bf16));
  const Tensor c = from_proto(t, "test");
  const float want_bf16[] = {1.0f, -123.5f, 0.0f, INFINITY, 0.15625f};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(c.data[std::size_t(i)], want_bf16[i]) << i;
  t.set_raw_data(std::string(3, '\0'));  // 1.5 values for 5
  EXPECT_THROW(from_proto(t, "test"), Error);
}

TEST(OnnxReference, BadFilesAreErrorsNamingThem) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/junk.onnx") << "not a protobuf at all \xff\xff\xff";
  try {
    load_model(dir + "/junk.onnx");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("junk.onnx: "), std::string::npos) << e.what();
  }
  try {
    load_model(dir + "/absent.onnx");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), dir + "/absent.onnx: cannot open");
  }
}

namespace {

// A model of one Conv (3 x 3 weights of 8 x 3 channels) or Relu on an input x of `dims`, with
// the Conv's strides, written to DIR/name and loaded: the error load_model gives, or "".
std::string load_error(const std::string& name, const char* op, std::vector<std::int64_t> dims,
                       std::vector<std::int64_t> strides = {}, const char* attr = "strides", const char* node = "n") {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  onnx::TensorShapeProto* shape = g->add_input()->mutable_type()->mutable_tensor_type()->mutable_shape();
  g->mutable_input(0)->set_name("x");
  g->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (std::int64_t d : dims) shape->add_dim()->set_dim_value(d);
  onnx::NodeProto* n = g->add_node();
  n->set_name(node), n->set_op_type(op), n->add_input("x"), n->add_output("y");
  if (std::string(op) == "Conv") {
    onnx::TensorProto* w = g->add_initializer();
    w->set_name("w"), w->set_data_type(onnx::TensorProto::FLOAT);
    for (std::int64_t d : {8, 3, 3, 3}) w->add_dims(d);
    for (int i = 0; i < 8 * 27; ++i) w->add_float_data(0.5f);
    n->add_input("w");
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(attr), a->set_type(onnx::AttributeProto::INTS);
    for (std::int64_t v : strides) a->add_ints(v);
  }
  g->add_output()->set_name("y");
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  onnx::TensorShapeProto* y = g->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (std::size_t i = 0; i < dims.size(); ++i) y->add_dim()->set_dim_param("d" + std::to_string(i));
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  try {
    load_model(path);
    return "";
  } catch (const Error& e) {
    const std::string what = e.what();
    return what.rfind(path + ": ", 0) == 0 ? what.substr(path.size() + 2) : "(not naming the file) " + what;
  }
}

}  // namespace

// Window sizes, shapes and sizes that the checker lets pass are errors naming the model, the
// node or tensor and why: a stride of 0 (ONNX's own shape inference divides by it and the
// process died of SIGFPE), an input with a negative dimension, one past 2^31 elements (the host
// ran out of memory: std::bad_alloc, unnamed), a model on which libonnx's shape inference dies
// (a LayerNormalization of a scalar: SIGSEGV, the fuzzer's find).
TEST(OnnxModel, BadWindowsAndShapesAreErrorsNamingThem) {
  EXPECT_EQ(load_error("ok.onnx", "Conv", {1, 3, 8, 8}, {1, 1}), "");
  EXPECT_EQ(load_error("stride0.onnx", "Conv", {1, 3, 8, 8}, {0, 1}),
            "node 'n' (Conv): strides holds 0 (each must be 1 to 65536)");
  EXPECT_EQ(load_error("unnamed.onnx", "Conv", {1, 3, 8, 8}, {1, 0}, "dilations", ""),
            "node '#0' (Conv): dilations holds 0 (each must be 1 to 65536)");
  EXPECT_EQ(load_error("pad.onnx", "Conv", {1, 3, 8, 8}, {0, 0, -1, 0}, "pads"),
            "node 'n' (Conv): pads holds -1 (each must be 0 to 65536)");
  // The host reference would loop over the taps for hours (a review's find: 65536 x 65536).
  EXPECT_EQ(load_error("wide.onnx", "Conv", {1, 3, 8, 8}, {3, 65537}, "kernel_shape"),
            "node 'n' (Conv): kernel_shape holds 65537 (each must be 1 to 65536)");
  EXPECT_EQ(load_error("taps.onnx", "Conv", {1, 3, 8, 8}, {2048, 1024}, "kernel_shape"),
            "node 'n' (Conv): a window of 2097152 taps (at most 1048576)");
  EXPECT_EQ(load_error("empty.onnx", "Relu", {0, 4}), "");  // a model's right; the compiler refuses it (cli test)
  EXPECT_EQ(load_error("negative.onnx", "Relu", {-3, 4}), "tensor 'x' of shape -3x4: a negative dimension");
  EXPECT_EQ(load_error("huge.onnx", "Conv", {1, 3, 100000, 100000}, {1, 1}),
            "tensor 'x' of shape 1x3x100000x100000: over 2^31 elements (the host reference holds each as f32)");
  EXPECT_EQ(load_error("largest.onnx", "Relu", {1 << 16, 1 << 15}), "");  // 2^31 exactly: held
  const std::string scalar_norm = std::string(DVP_SOURCE_DIR) + "/fuzz/regressions/onnx/layernorm-of-a-scalar.onnx";
  try {
    load_model(scalar_norm);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              scalar_norm + ": a malformed model: ONNX's checker and shape inference died on it (signal 11)");
  }
}

namespace {
// A one-node model of `op` at `opset` on inputs x0, x1, ... (empty: left out), outputs y0, y1, ...
// run by the host reference: its outputs, or the Error's text.
struct OneNode {
  std::string op;
  std::int64_t opset;
  std::vector<std::optional<Tensor>> inputs;
  int outputs = 1;
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> ints = {};
  std::variant<std::vector<Tensor>, std::string> run() const {
    Model m;
    m.path = "one.onnx", m.opset = opset;
    onnx::NodeProto* n = m.proto.mutable_graph()->add_node();
    n->set_name("n"), n->set_op_type(op);
    Tensors values;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      n->add_input(inputs[k] ? "x" + std::to_string(k) : "");
      if (inputs[k]) values["x" + std::to_string(k)] = *inputs[k];
    }
    for (int q = 0; q < outputs; ++q) n->add_output("y" + std::to_string(q));
    for (const auto& [name, v] : ints) {
      onnx::AttributeProto* a = n->add_attribute();
      a->set_name(name);
      if (name == "axis" || name == "num_outputs") {
        a->set_type(onnx::AttributeProto::INT), a->set_i(v[0]);
      } else {
        a->set_type(onnx::AttributeProto::INTS);
        for (std::int64_t x : v) a->add_ints(x);
      }
    }
    try {
      run_reference(m, values);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    std::vector<Tensor> out;
    for (int q = 0; q < outputs; ++q) out.push_back(values.at("y" + std::to_string(q)));
    return out;
  }
};
Tensor iota_tensor(std::vector<std::int64_t> shape) {
  Tensor t{std::move(shape), {}};
  t.data.resize(t.elements());
  std::iota(t.data.begin(), t.data.end(), 0.0f);
  return t;
}
Tensor ints(std::vector<float> v) { return Tensor{{std::int64_t(v.size())}, std::move(v)}; }
}  // namespace

// A malformed graph is an Error naming the node and what is wrong, never an access out of
// bounds: Conv weights of rank 3, a Concat whose inputs differ off the axis, a pool window
// larger than its input, a Transpose perm that is no permutation.
TEST(OnnxReference, MalformedNodesAreErrorsNamingThem) {
  struct Case {
    const char* op;
    std::vector<Tensor> inputs;
    std::vector<std::pair<std::string, std::vector<std::int64_t>>> ints;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"Conv",
       {{{1, 1, 4, 4}, std::vector<float>(16)}, {{1, 1, 3}, std::vector<float>(3)}},
       {},
       "node 'n' (Conv): input 1 is 1x1x3, not of rank 4"},
      {"Concat",
       {{{2, 3}, std::vector<float>(6)}, {{2, 4}, std::vector<float>(8)}},
       {{"axis", {0}}},
       "node 'n' (Concat): input 1 2x4 differs from 2x3 off the axis"},
      {"MaxPool",
       {{{1, 1, 2, 2}, std::vector<float>(4)}},
       {{"kernel_shape", {3, 3}}},
       "node 'n' (MaxPool): the window is larger than the padded input"},
      {"Transpose",
       {{{2, 3}, std::vector<float>(6)}},
       {{"perm", {0, 0}}},
       "node 'n' (Transpose): perm is not a permutation of the input's dimensions"},
  };
  for (const Case& c : cases) {
    const auto r = OneNode{c.op, 13, {c.inputs.begin(), c.inputs.end()}, 1, c.ints}.run();
    ASSERT_TRUE(std::holds_alternative<std::string>(r)) << c.op << ": no error";
    EXPECT_EQ(std::get<std::string>(r), std::string("one.onnx: ") + c.expect) << c.op;
  }
}

// Slice as exporters write it, against numpy's slicing of the same array: ends of INT64_MAX (held
// in an f32 as 2^63) and INT64_MIN (a reversal), steps of 2 and -2, opset 9's attributes; Split's
// equal parts, given sizes and opset 18's num_outputs with a smaller last part. Malformed ones are
// errors naming the node.
TEST(OnnxReference, SliceAndSplitAsExportersWriteThem) {
  const Tensor x = iota_tensor({2, 3, 5});
  const auto values = [](const std::variant<std::vector<Tensor>, std::string>& r, std::size_t q = 0) {
    if (const auto* e = std::get_if<std::string>(&r)) {
      ADD_FAILURE() << *e;
      return std::vector<float>{};
    }
    return std::get<0>(r).at(q).data;
  };
  constexpr float kMax = 9.223372036854775807e18f, kMin = -9.223372036854775808e18f;
  // x[:, 1:, ::2]: the ends past the axis.
  EXPECT_EQ(values(OneNode{"Slice", 13, {x, ints({1, 0}), ints({kMax, kMax}), ints({1, 2}), ints({1, 2})}}.run()),
            (std::vector<float>{5, 7, 9, 10, 12, 14, 20, 22, 24, 25, 27, 29}));
  // x[1, ::-2, -1]: backward from the end, INT64_MIN as the end (numpy: x[1, ::-2, -1] = 29, 19).
  EXPECT_EQ(
      values(
          OneNode{"Slice", 13, {x, ints({1, -1, -1}), ints({2, kMin, kMax}), ints({0, 1, 2}), ints({1, -2, 1})}}.run()),
      (std::vector<float>{29, 19}));
  // Opset 9: starts, ends and axes attributes; x[:, :, -2:].
  EXPECT_EQ(values(OneNode{"Slice", 9, {x}, 1, {{"starts", {-2}}, {"ends", {1000}}, {"axes", {-1}}}}.run()),
            (std::vector<float>{3, 4, 8, 9, 13, 14, 18, 19, 23, 24, 28, 29}));
  // A start past the end takes nothing.
  const auto empty = OneNode{"Slice", 13, {x, ints({7}), ints({9}), ints({2})}}.run();
  ASSERT_TRUE(std::holds_alternative<std::vector<Tensor>>(empty));
  EXPECT_EQ(std::get<0>(empty)[0].shape, (std::vector<std::int64_t>{2, 3, 0}));
  EXPECT_EQ(std::get<std::string>(OneNode{"Slice", 13, {x, ints({0}), ints({1}), ints({1}), ints({0})}}.run()),
            "one.onnx: node 'n' (Slice): a step of 0 on axis 1");
  EXPECT_EQ(std::get<std::string>(OneNode{"Slice", 13, {x, ints({0, 0}), ints({1})}}.run()),
            "one.onnx: node 'n' (Slice): starts, ends, axes and steps hold 2, 1, 2 and 2 values: one each per axis "
            "sliced");
  EXPECT_EQ(std::get<std::string>(OneNode{"Slice", 13, {x, ints({0, 0}), ints({1, 1}), ints({1, -2})}}.run()),
            "one.onnx: node 'n' (Slice): axis -2 is out of range or named twice (input of rank 3)");
  // Split: sizes 1 and 4 of the last axis (opset 13: an input), then opset 18's 5 into 3 (2, 2, 1).
  const auto parts = OneNode{"Split", 13, {x, ints({1, 4})}, 2, {{"axis", {-1}}}}.run();
  EXPECT_EQ(values(parts, 0), (std::vector<float>{0, 5, 10, 15, 20, 25}));
  EXPECT_EQ(values(parts, 1).size(), 24u);
  const auto thirds = OneNode{"Split", 18, {x}, 3, {{"axis", {2}}, {"num_outputs", {3}}}}.run();
  EXPECT_EQ(values(thirds, 2), (std::vector<float>{4, 9, 14, 19, 24, 29}));
  EXPECT_EQ(std::get<0>(thirds)[1].shape, (std::vector<std::int64_t>{2, 3, 2}));
  EXPECT_EQ(std::get<std::string>(OneNode{"Split", 13, {x}, 2, {{"axis", {2}}}}.run()),
            "one.onnx: node 'n' (Split): an axis of 5 does not split into 2 equal parts (give split; opset 18's "
            "num_outputs is read as 17's equal parts)");
  EXPECT_EQ(std::get<std::string>(OneNode{"Split", 13, {x, ints({3, 3})}, 2, {{"axis", {2}}}}.run()),
            "one.onnx: node 'n' (Split): 2 sizes summing to 6 for 2 outputs of an axis of 5 (one size each, none "
            "negative, summing to the axis)");
}

// --- the task list's streams and events (network/schedule.hpp) ---------------------------------

namespace {
using dvp::network::happens_before;
using dvp::network::Scheduled;
using dvp::network::TaskNode;
TaskNode task(std::vector<std::string> reads, std::string writes, std::size_t image = 0) {
  return TaskNode{std::move(reads), {std::move(writes)}, image};
}
// Every event is waited for on the stream that needs it, once per record.
void expect_events_paired(const std::vector<Scheduled>& s) {
  std::map<int, int> balance;
  for (const Scheduled& t : s) {
    for (int e : t.record) ++balance[e];
    for (int e : t.wait) --balance[e];
  }
  for (const auto& [e, b] : balance) EXPECT_EQ(b, 0) << "event " << e;
}
}  // namespace

// A diamond: b and c both read a; d reads both. c runs beside b on a stream of its own, after a
// (an event); d after both.
TEST(NetworkSchedule, ADiamondRunsItsBranchesSideBySide) {
  const std::vector<TaskNode> t = {task({}, "a"), task({"a"}, "b"), task({"a"}, "c"), task({"b", "c"}, "d")};
  const auto s = dvp::network::schedule(t, 8);
  EXPECT_EQ(s[1].stream, s[0].stream);
  EXPECT_NE(s[2].stream, s[1].stream);
  EXPECT_TRUE(happens_before(s, 0, 2));
  EXPECT_FALSE(happens_before(s, 1, 2));
  EXPECT_TRUE(happens_before(s, 1, 3));
  EXPECT_TRUE(happens_before(s, 2, 3));
  EXPECT_EQ(s[2].wait.size(), 1u);
  EXPECT_EQ(s[3].wait.size(), 1u);
  expect_events_paired(s);
}

// A branch kernel that fills the cores (TaskNode::fills_cores) runs after the other branch, on
// the stream of the latest kernel it needs, instead of beside it; one that does not keeps a
// stream of its own.
TEST(NetworkSchedule, ABranchThatFillsTheCoresFollowsTheOther) {
  std::vector<TaskNode> t = {task({}, "a"), task({"a"}, "b"), task({"a"}, "c"), task({"b", "c"}, "d")};
  t[2].fills_cores = true;
  const auto s = dvp::network::schedule(t, 8);
  for (int j = 1; j < 4; ++j) EXPECT_EQ(s[std::size_t(j)].stream, s[0].stream) << j;
  EXPECT_TRUE(happens_before(s, 1, 2));
  expect_events_paired(s);
  t[2].fills_cores = false;
  t[1].fills_cores = t[3].fills_cores = true;  // b and d continue a stream anyway
  const auto side = dvp::network::schedule(t, 8);
  EXPECT_NE(side[2].stream, side[1].stream);
  EXPECT_FALSE(happens_before(side, 1, 2));
  expect_events_paired(side);
}

// One stream: the list in order, no events.
TEST(NetworkSchedule, OneStreamKeepsTheListsOrder) {
  const std::vector<TaskNode> t = {task({}, "a"), task({"a"}, "b"), task({"a"}, "c"), task({"b", "c"}, "d")};
  const auto s = dvp::network::schedule(t, 1);
  for (std::size_t j = 0; j < s.size(); ++j) {
    EXPECT_EQ(s[j].stream, 0);
    EXPECT_TRUE(s[j].wait.empty() && s[j].record.empty());
    if (j) {
      EXPECT_TRUE(happens_before(s, int(j) - 1, int(j)));
    }
  }
}

// Heads writing slices of one tensor are all its writers: its reader follows every one.
TEST(NetworkSchedule, AReaderFollowsEveryHeadThatWritesItsTensor) {
  const std::vector<TaskNode> t = {task({}, "q"), task({"q"}, "s"), task({"q"}, "s"), task({"q"}, "s"),
                                   task({"s"}, "p")};
  const auto s = dvp::network::schedule(t, 8);
  for (int h : {1, 2, 3}) EXPECT_TRUE(happens_before(s, h, 4)) << "head " << h;
  EXPECT_FALSE(happens_before(s, 2, 3));  // the heads side by side
  expect_events_paired(s);
}

// Kernels of another image follow the kernel before them, though they need nothing of it.
TEST(NetworkSchedule, ImagesRunOneAfterAnother) {
  const std::vector<TaskNode> t = {task({}, "a0", 0), task({"a0"}, "b0", 0), task({}, "a1", 1), task({"a1"}, "b1", 1)};
  const auto s = dvp::network::schedule(t, 8);
  for (int j = 1; j < 4; ++j) EXPECT_TRUE(happens_before(s, j - 1, j)) << j;
}

// Events are reused only once their last wait is done: with two events, a long run of
// fork-joins still pairs every record with its wait; with none, everything runs on one stream.
TEST(NetworkSchedule, EventsAreReusedSafelyOrNotAtAll) {
  std::vector<TaskNode> t = {task({}, "x0")};
  for (int i = 0; i < 20; ++i) {
    const std::string x = "x" + std::to_string(i), n = "x" + std::to_string(i + 1);
    t.push_back(task({x}, "l" + std::to_string(i)));
    t.push_back(task({x}, "r" + std::to_string(i)));
    t.push_back(task({"l" + std::to_string(i), "r" + std::to_string(i)}, n));
  }
  const auto two = dvp::network::schedule(t, 8, 2);
  expect_events_paired(two);
  for (std::size_t j = 3; j < t.size(); j += 3) {
    EXPECT_TRUE(happens_before(two, int(j) - 2, int(j))) << j;
    EXPECT_TRUE(happens_before(two, int(j) - 1, int(j))) << j;
  }
  const auto none = dvp::network::schedule(t, 8, 0);
  for (const Scheduled& x : none) EXPECT_EQ(x.stream, 0);
}
