// Helpers for the ONNX tests (header-only): temp dirs, running the CLI and
// the Python scripts in test/py, comparing graphs, and writing small ONNX
// models by hand.
#ifndef SHOAL_ONNX_ONNX_TEST_UTIL_H_
#define SHOAL_ONNX_ONNX_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/weights.h"
#include "onnx/onnx_file.h"

namespace shoal {
namespace onnx_test {

// A fresh directory under $TMPDIR (mkdtemp), removed with its contents.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base ? base : "/tmp") + "/shoal_onnx_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data())) path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Runs `cmd` with sh; returns the exit status and appends stdout+stderr
// to `*output`.
inline int RunCommand(const std::string& cmd, std::string* output) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) output->append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The exit status scripts use when torch / onnx cannot be imported.
constexpr int kPythonSkip = 77;

inline std::string PyScript(const std::string& name) {
  return std::string("/usr/bin/python3 ") + SHOAL_SOURCE_DIR + "/test/py/" +
         name;
}

// Equal structure: name, inputs, outputs, nodes (name, op, inputs, outputs,
// attributes) and every tensor's shape and kind.
inline void ExpectSameGraph(const Graph& got, const Graph& want) {
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.inputs, want.inputs);
  EXPECT_EQ(got.outputs, want.outputs);
  ASSERT_EQ(got.nodes.size(), want.nodes.size()) << want.name;
  for (size_t i = 0; i < want.nodes.size(); ++i) {
    const Node &a = got.nodes[i], &b = want.nodes[i];
    EXPECT_EQ(a.name, b.name) << "node " << i;
    EXPECT_EQ(a.op, b.op) << b.name;
    EXPECT_EQ(a.inputs, b.inputs) << b.name;
    EXPECT_EQ(a.outputs, b.outputs) << b.name;
    EXPECT_TRUE(a.attrs == b.attrs) << b.name;
  }
  ASSERT_EQ(got.tensors.size(), want.tensors.size()) << want.name;
  for (const auto& [name, t] : want.tensors) {
    const TensorInfo* g = got.FindTensor(name);
    ASSERT_NE(g, nullptr) << name;
    EXPECT_EQ(g->shape, t.shape) << name;
    EXPECT_EQ(g->kind, t.kind) << name;
    EXPECT_EQ(g->shaped, t.shaped) << name;
  }
}

// --- Writing ONNX models by hand -----------------------------------------

inline void SetTensorType(onnx::ValueInfoProto* vi, const std::string& name,
                          const std::vector<std::string>& dims,
                          int32_t elem = onnx::TensorProto::FLOAT) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* s = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = s->add_dim();
    if (!d.empty() && (std::isdigit(static_cast<unsigned char>(d[0])) != 0)) {
      dim->set_dim_value(std::stoll(d));
    } else if (!d.empty()) {
      dim->set_dim_param(d);
    }
  }
}

// A model with one float input `x` of `dims` and the given opset.
inline onnx::ModelProto NewModel(const std::vector<std::string>& dims,
                                 int64_t opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("test");
  SetTensorType(m.mutable_graph()->add_input(), "x", dims);
  return m;
}

inline onnx::NodeProto* AddNode(onnx::ModelProto* m, const std::string& op,
                                const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs,
                                const std::string& name = "") {
  auto* n = m->mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name.empty() ? outputs[0] : name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

inline void AddIntsAttr(onnx::NodeProto* n, const std::string& name,
                        const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

inline void AddIntAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void AddFloatInit(onnx::ModelProto* m, const std::string& name,
                         const Shape& shape, const std::vector<float>& data) {
  auto* t = m->mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape) t->add_dims(d);
  for (float v : data) t->add_float_data(v);
}

inline void AddInt64Init(onnx::ModelProto* m, const std::string& name,
                         const std::vector<int64_t>& data) {
  auto* t = m->mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(data.size()));
  for (int64_t v : data) t->add_int64_data(v);
}

inline void AddOutput(onnx::ModelProto* m, const std::string& name,
                      const std::vector<std::string>& dims = {}) {
  auto* vi = m->mutable_graph()->add_output();
  if (dims.empty()) {
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::FLOAT);
  } else {
    SetTensorType(vi, name, dims);
  }
}

inline std::string WriteModel(const TempDir& dir, const std::string& file,
                              const onnx::ModelProto& m) {
  std::string path = dir.File(file);
  Status s = WriteOnnxFile(m, path);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return path;
}

}  // namespace onnx_test
}  // namespace shoal

#endif  // SHOAL_ONNX_ONNX_TEST_UTIL_H_
