#include "plan/plan_verify.h"

#include <algorithm>
#include <map>

#include "plan/broadcast.h"

namespace shoal {

namespace {

std::string TaskLabel(const Plan& p, int id) {
  if (id == kModelInput) return "the model input";
  if (id == kModelOutput) return "the model output";
  const Task* t = p.FindTask(id);
  return t ? "task " + std::to_string(id) + " (" + t->name + ")"
           : "task " + std::to_string(id);
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Shape of the endpoint's tensor, checking that it exists on that side.
StatusOr<Shape> EndpointShape(const Plan& p, const Endpoint& e, bool is_src) {
  if (e.task == kModelInput || e.task == kModelOutput) {
    const bool input = e.task == kModelInput;
    if (input != is_src) {
      return InvalidArgument(std::string("transfer ") +
                             (is_src ? "reads from" : "writes to") + " " +
                             TaskLabel(p, e.task));
    }
    const std::string& name = input ? p.input_name : p.output_name;
    if (e.tensor != name) {
      return InvalidArgument("transfer names tensor '" + e.tensor + "' at " +
                             TaskLabel(p, e.task) + ", which is '" + name +
                             "'");
    }
    return input ? p.input_shape : p.output_shape;
  }
  const Task* t = p.FindTask(e.task);
  if (t == nullptr) {
    return InvalidArgument("transfer names unknown task " +
                           std::to_string(e.task));
  }
  // A task may forward an input it received (a merge point does only that).
  const bool found = Contains(t->fragment.inputs, e.tensor) ||
                     (is_src && Contains(t->fragment.outputs, e.tensor));
  if (!found) {
    return InvalidArgument("transfer names '" + e.tensor + "', which is not " +
                           (is_src ? "an input or output" : "an input") +
                           " of " + TaskLabel(p, e.task));
  }
  return t->fragment.tensors.at(e.tensor).shape;
}

// Counts one more cover of every element of box `r` of a tensor of shape
// `s`. Walks only the box's rows: a plan with N^2 transfers into tensors of
// millions of elements (channel on 32 devices of VGG16) must verify in well
// under a second, so the cost is the box, never the whole tensor.
void MarkBox(const Region& r, const Shape& s, std::vector<uint8_t>* count) {
  const int rank = r.rank();
  if (r.empty()) return;
  if (rank == 0) {
    (*count)[0] = static_cast<uint8_t>(std::min(255, (*count)[0] + 1));
    return;
  }
  const Shape ext = r.extent();
  const auto st = Strides(s);
  const int64_t inner = ext[rank - 1];
  std::vector<int64_t> idx(rank - 1, 0);
  const int64_t rows = NumElements(ext) / inner;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t off = r.begin[rank - 1];
    for (int i = 0; i < rank - 1; ++i) off += (r.begin[i] + idx[i]) * st[i];
    uint8_t* c = count->data() + off;
    for (int64_t k = 0; k < inner; ++k) {
      c[k] = static_cast<uint8_t>(std::min(255, c[k] + 1));
    }
    for (int i = rank - 2; i >= 0; --i) {
      if (++idx[i] < ext[i]) break;
      idx[i] = 0;
    }
  }
}

}  // namespace

Status VerifyPlan(const Plan& p) {
  const int nd = static_cast<int>(p.devices.size());
  if (nd == 0) return InvalidArgument("plan has no devices");
  if (p.input_device < 0 || p.input_device >= nd || p.output_device < 0 ||
      p.output_device >= nd) {
    return InvalidArgument("plan's input/output device is out of range");
  }
  if (p.broadcast.fanout < 0 || p.broadcast.fanout > kMaxBroadcastFanout ||
      p.broadcast.chunk_bytes < kMinBroadcastChunkBytes ||
      p.broadcast.chunk_bytes > kMaxBroadcastChunkBytes) {
    return InvalidArgument(
        "plan's broadcast (fanout " + std::to_string(p.broadcast.fanout) +
        ", chunk_bytes " + std::to_string(p.broadcast.chunk_bytes) +
        ") is out of range: fanout 0.." + std::to_string(kMaxBroadcastFanout) +
        ", chunk_bytes " + std::to_string(kMinBroadcastChunkBytes) + ".." +
        std::to_string(kMaxBroadcastChunkBytes));
  }
  for (size_t i = 0; i < p.tasks.size(); ++i) {
    const Task& t = p.tasks[i];
    if (t.id != static_cast<int>(i)) {
      return InvalidArgument("task ids must be 0..n-1 in order; task " +
                             t.name + " has id " + std::to_string(t.id) +
                             " at position " + std::to_string(i));
    }
    if (t.devices.empty()) {
      return InvalidArgument("task " + t.name + " has no device");
    }
    for (int d : t.devices) {
      if (d < 0 || d >= nd) {
        return InvalidArgument("task " + t.name + " names device " +
                               std::to_string(d) + " but the plan has " +
                               std::to_string(nd));
      }
    }
    for (const auto& w : t.weights) {
      const TensorInfo* ti = t.fragment.FindTensor(w.name);
      if (ti == nullptr || !ti->is_weight()) {
        return InvalidArgument("task " + t.name + " slices weight '" + w.name +
                               "', which its fragment does not read");
      }
      if (w.region.extent() != ti->shape) {
        return InvalidArgument("task " + t.name + ": slice " +
                               w.region.ToString() + " of '" + w.source +
                               "' does not have the fragment's shape " +
                               ShapeToString(ti->shape));
      }
    }
  }
  // Coverage of every destination tensor, counted per element.
  struct Cover {
    Shape shape;
    std::vector<uint8_t> count;
    bool any_copy = false, any_sum = false;
  };
  std::map<std::pair<int, std::string>, Cover> covers;
  for (const auto& x : p.transfers) {
    ASSIGN_OR_RETURN(Shape ss, EndpointShape(p, x.src, true));
    ASSIGN_OR_RETURN(Shape ds, EndpointShape(p, x.dst, false));
    const std::string what = "transfer of '" + x.src.tensor + "' from " +
                             TaskLabel(p, x.src.task) + " to " +
                             TaskLabel(p, x.dst.task);
    RETURN_IF_ERROR(CheckRegion(x.src.region, ss, what + " (source)"));
    RETURN_IF_ERROR(CheckRegion(x.dst.region, ds, what + " (destination)"));
    if (x.src.region.extent() != x.dst.region.extent()) {
      return InvalidArgument(what + ": regions " + x.src.region.ToString() +
                             " and " + x.dst.region.ToString() + " differ");
    }
    if (x.src.task >= 0 && x.dst.task >= 0 && x.src.task >= x.dst.task) {
      return InvalidArgument(what +
                             ": a task may only receive from an "
                             "earlier task");
    }
    Cover& c = covers[{x.dst.task, x.dst.tensor}];
    if (c.count.empty()) {
      c.shape = ds;
      c.count.assign(NumElements(ds), 0);
    }
    (x.merge == Merge::kSum ? c.any_sum : c.any_copy) = true;
    MarkBox(x.dst.region, ds, &c.count);
  }
  auto check_cover = [&](int task, const std::string& tensor) -> Status {
    auto it = covers.find({task, tensor});
    if (it == covers.end()) {
      return InvalidArgument("nothing is sent to '" + tensor + "' of " +
                             TaskLabel(p, task));
    }
    const Cover& c = it->second;
    if (c.any_copy && c.any_sum) {
      return InvalidArgument("'" + tensor + "' of " + TaskLabel(p, task) +
                             " mixes copied and summed parts");
    }
    for (uint8_t n : c.count) {
      if (n == 0) {
        return InvalidArgument("transfers leave part of '" + tensor + "' of " +
                               TaskLabel(p, task) + " unfilled");
      }
      if (n > 1 && c.any_copy) {
        return InvalidArgument("copied parts of '" + tensor + "' of " +
                               TaskLabel(p, task) + " overlap");
      }
    }
    return Status::Ok();
  };
  for (const auto& t : p.tasks) {
    for (const auto& in : t.fragment.inputs) {
      RETURN_IF_ERROR(check_cover(t.id, in));
    }
  }
  return check_cover(kModelOutput, p.output_name);
}

Status VerifyPlanAgainstModel(const Plan& p, const Graph& model) {
  if (model.inputs.size() != 1 || model.outputs.size() != 1) {
    return Unsupported("plans need a model with one input and one output");
  }
  const TensorInfo* in = model.FindTensor(model.inputs[0]);
  const TensorInfo* out = model.FindTensor(model.outputs[0]);
  if (model.inputs[0] != p.input_name || in->shape != p.input_shape) {
    return InvalidArgument("plan's input " + p.input_name + " " +
                           ShapeToString(p.input_shape) +
                           " does not match the model's " + model.inputs[0] +
                           " " + ShapeToString(in->shape));
  }
  if (model.outputs[0] != p.output_name || out->shape != p.output_shape) {
    return InvalidArgument("plan's output " + p.output_name + " " +
                           ShapeToString(p.output_shape) +
                           " does not match the model's " + model.outputs[0] +
                           " " + ShapeToString(out->shape));
  }
  for (const auto& t : p.tasks) {
    for (const auto& w : t.weights) {
      const TensorInfo* src = model.FindTensor(w.source);
      if (src == nullptr || !src->is_weight()) {
        return InvalidArgument("task " + t.name + " slices '" + w.source +
                               "', which is not a weight of the model");
      }
      RETURN_IF_ERROR(CheckRegion(w.region, src->shape,
                                  "task " + t.name + " slice of " + w.source));
    }
  }
  return Status::Ok();
}

}  // namespace shoal
