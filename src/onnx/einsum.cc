#include "onnx/einsum.h"

#include <cctype>
#include <set>
#include <string>

namespace shoal {
namespace {

struct Form {
  bool transpose_b = false;  // b is indexed [batch..., j, k]
  int rank = 0;
};

std::string Equation(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.name() == "equation") return a.s();
  return "";
}

// Parses "<batch>ik,<batch>kj-><batch>ij" (or with b as <batch>jk), spaces
// ignored; false for anything else (ellipses, sums over batch letters,
// repeated letters, other operand counts).
bool Parse(const std::string& eq, Form* f) {
  std::string s;
  for (char c : eq)
    if (c != ' ') s += c;
  const size_t arrow = s.find("->");
  if (arrow == std::string::npos) return false;
  const std::string lhs = s.substr(0, arrow), out = s.substr(arrow + 2);
  const size_t comma = lhs.find(',');
  if (comma == std::string::npos ||
      lhs.find(',', comma + 1) != std::string::npos)
    return false;
  const std::string a = lhs.substr(0, comma), b = lhs.substr(comma + 1);
  const size_t r = out.size();
  if (r < 2 || a.size() != r || b.size() != r) return false;
  for (const std::string* t : {&a, &b, &out}) {
    if (std::set<char>(t->begin(), t->end()).size() != r) return false;
    for (char c : *t)
      if (!std::isalpha(static_cast<unsigned char>(c))) return false;
  }
  const std::string batch = out.substr(0, r - 2);
  if (a.substr(0, r - 2) != batch || b.substr(0, r - 2) != batch) return false;
  const char i = out[r - 2], j = out[r - 1], k = a[r - 1];
  if (a[r - 2] != i || k == i || k == j) return false;
  if (b[r - 2] == k && b[r - 1] == j) {
    f->transpose_b = false;
  } else if (b[r - 2] == j && b[r - 1] == k) {
    f->transpose_b = true;
  } else {
    return false;
  }
  f->rank = static_cast<int>(r);
  return true;
}

}  // namespace

bool IsMatMulEinsum(const onnx::NodeProto& n) {
  Form f;
  return n.op_type() == "Einsum" && n.input_size() == 2 &&
         n.output_size() == 1 && Parse(Equation(n), &f);
}

StatusOr<std::vector<onnx::NodeProto>> EinsumAsMatMul(
    const onnx::NodeProto& n) {
  Form f;
  const std::string eq = Equation(n);
  if (n.input_size() != 2 || n.output_size() != 1 || !Parse(eq, &f)) {
    return Unsupported("Einsum '" + eq +
                       "': shoal reads only batched matrix products "
                       "('...ik,...kj->...ij' or '...ik,...jk->...ij')");
  }
  std::vector<onnx::NodeProto> out;
  std::string b = n.input(1);
  if (f.transpose_b) {
    onnx::NodeProto t;
    t.set_op_type("Transpose");
    t.set_name(n.name() + "/transpose_b");
    t.add_input(b);
    b = n.output(0) + "/b_transposed";
    t.add_output(b);
    auto* perm = t.add_attribute();
    perm->set_name("perm");
    perm->set_type(onnx::AttributeProto::INTS);
    for (int d = 0; d < f.rank - 2; ++d) perm->add_ints(d);
    perm->add_ints(f.rank - 1);
    perm->add_ints(f.rank - 2);
    out.push_back(std::move(t));
  }
  onnx::NodeProto mm;
  mm.set_op_type("MatMul");
  mm.set_name(n.name());
  mm.add_input(n.input(0));
  mm.add_input(b);
  mm.add_output(n.output(0));
  out.push_back(std::move(mm));
  return out;
}

}  // namespace shoal
