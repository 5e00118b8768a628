#include "onnx/onnx_attrs.h"

namespace shoal {

using AP = onnx::AttributeProto;

StatusOr<AttrValue> FromOnnxAttr(const AP& a) {
  switch (a.type()) {
    case AP::INT:
      return AttrValue(static_cast<int64_t>(a.i()));
    case AP::FLOAT:
      return AttrValue(a.f());
    case AP::STRING:
      return AttrValue(a.s());
    case AP::INTS:
      return AttrValue(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case AP::FLOATS:
      return AttrValue(
          std::vector<float>(a.floats().begin(), a.floats().end()));
    default:
      return Unsupported("attribute '" + a.name() + "' has type " +
                         AP::AttributeType_Name(a.type()));
  }
}

void ToOnnxAttr(const std::string& name, const AttrValue& v, AP* a) {
  a->set_name(name);
  if (auto* i = std::get_if<int64_t>(&v)) {
    a->set_type(AP::INT);
    a->set_i(*i);
  } else if (auto* f = std::get_if<float>(&v)) {
    a->set_type(AP::FLOAT);
    a->set_f(*f);
  } else if (auto* s = std::get_if<std::string>(&v)) {
    a->set_type(AP::STRING);
    a->set_s(*s);
  } else if (auto* is = std::get_if<std::vector<int64_t>>(&v)) {
    a->set_type(AP::INTS);
    for (int64_t x : *is) a->add_ints(x);
  } else if (auto* fs = std::get_if<std::vector<float>>(&v)) {
    a->set_type(AP::FLOATS);
    for (float x : *fs) a->add_floats(x);
  }
}

const AP* FindAttr(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

}  // namespace shoal
