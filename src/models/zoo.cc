#include "models/zoo.h"

#include <algorithm>

namespace shoal {

Zoo& Zoo::Global() {
  static Zoo* zoo = new Zoo();
  return *zoo;
}

int Zoo::Register(ZooEntry e) {
  entries_.push_back(std::move(e));
  std::sort(
      entries_.begin(), entries_.end(),
      [](const ZooEntry& a, const ZooEntry& b) { return a.name < b.name; });
  return static_cast<int>(entries_.size());
}

const ZooEntry* Zoo::Find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

bool ZooModelTakesImages(const std::string& spec, const Shape& shape) {
  const ZooEntry* e = Zoo::Global().Find(spec);
  if (e == nullptr) return false;
  const Shape& s = shape.empty() ? e->input_shape : shape;
  return s.size() == 4 && (s[1] == 1 || s[1] == 3);
}

}  // namespace shoal
