#include "plan/plan_verify.h"

#include <algorithm>
#include <map>

#include "graph/shape_check.h"
#include "plan/broadcast.h"
#include "plan/cover.h"
#include "plan/int8_transfers.h"

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

std::string IndexToString(const std::vector<int64_t>& at) {
  std::string out = "[";
  for (size_t i = 0; i < at.size(); ++i) {
    out += (i ? ", " : "") + std::to_string(at[i]);
  }
  return out + "]";
}

Status CheckDevicesAndBroadcast(const Plan& p) {
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
  if (p.broadcast.scatter && p.broadcast.fanout == 0) {
    return InvalidArgument(
        "plan's broadcast scatters chunks but has fan-out 0 (no broadcasts)");
  }
  return Status::Ok();
}

// Task `i`: its id, its devices, and its weight slices against its
// fragment.
Status CheckTask(const Plan& p, size_t i) {
  const Task& t = p.tasks[i];
  const int nd = static_cast<int>(p.devices.size());
  if (t.id != static_cast<int>(i)) {
    return InvalidArgument("task ids must be 0..n-1 in order; task " + t.name +
                           " has id " + std::to_string(t.id) + " at position " +
                           std::to_string(i));
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
    // Through a view, the box's elements fill the fragment's weight in
    // order; else the box is the weight.
    bool fits = w.region.begin.size() == w.region.end.size();
    if (fits && w.view.empty()) {
      fits = w.region.extent() == ti->shape;
    } else if (fits) {
      auto box = CheckedElements(w.region.extent(), "slice");
      auto weight = CheckedElements(ti->shape, "weight");
      fits = box.ok() && weight.ok() && box.value() == weight.value();
    }
    if (!fits) {
      return InvalidArgument("task " + t.name + ": slice " +
                             w.region.ToString() + " of '" + w.source + "'" +
                             (w.view.empty()
                                  ? " does not have the fragment's shape "
                                  : " does not hold as many elements as the "
                                    "fragment's shape ") +
                             ShapeToString(ti->shape));
    }
  }
  return Status::Ok();
}

// The parts sent to one destination tensor, checked for coverage.
struct Cover {
  Shape shape;
  std::vector<Region> boxes;
  bool any_copy = false, any_sum = false;
};
using Covers = std::map<std::pair<int, std::string>, Cover>;

// One transfer: both ends exist with valid regions of the same extent, in
// task order; its destination part is added to `covers`.
Status CheckTransfer(const Plan& p, const Transfer& x, Covers* covers) {
  ASSIGN_OR_RETURN(Shape ss, EndpointShape(p, x.src, true));
  ASSIGN_OR_RETURN(Shape ds, EndpointShape(p, x.dst, false));
  const std::string what = "transfer of '" + x.src.tensor + "' from " +
                           TaskLabel(p, x.src.task) + " to " +
                           TaskLabel(p, x.dst.task);
  RETURN_IF_ERROR(CheckShape(ss, what + " (source tensor)"));
  RETURN_IF_ERROR(CheckShape(ds, what + " (destination tensor)"));
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
  Cover& c = (*covers)[{x.dst.task, x.dst.tensor}];
  c.shape = ds;
  (x.merge == Merge::kSum ? c.any_sum : c.any_copy) = true;
  c.boxes.push_back(x.dst.region);
  return Status::Ok();
}

// `tensor` of `task` is filled exactly: copied parts without gaps or
// overlaps, or summed parts that cover it, never both kinds.
Status CheckCovered(const Plan& p, const Covers& covers, int task,
                    const std::string& tensor) {
  auto it = covers.find({task, tensor});
  if (it == covers.end()) {
    return InvalidArgument("nothing is sent to '" + tensor + "' of " +
                           TaskLabel(p, task));
  }
  const Cover& c = it->second;
  const std::string what = "'" + tensor + "' of " + TaskLabel(p, task);
  if (c.any_copy && c.any_sum) {
    return InvalidArgument(what + " mixes copied and summed parts");
  }
  auto r = CheckCover(c.shape, c.boxes, c.any_copy);
  if (!r.ok()) return r.status().WithContext(what);
  if (r->outcome == CoverOutcome::kGap) {
    return InvalidArgument("transfers leave part of " + what +
                           " unfilled (element " + IndexToString(r->at) + ")");
  }
  if (r->outcome == CoverOutcome::kOverlap) {
    return InvalidArgument("copied parts of " + what + " overlap (element " +
                           IndexToString(r->at) + ")");
  }
  return Status::Ok();
}

}  // namespace

Status VerifyPlan(const Plan& p) {
  RETURN_IF_ERROR(CheckDevicesAndBroadcast(p));
  RETURN_IF_ERROR(CheckShape(p.input_shape, "plan input " + p.input_name));
  RETURN_IF_ERROR(CheckShape(p.output_shape, "plan output " + p.output_name));
  for (size_t i = 0; i < p.tasks.size(); ++i) {
    RETURN_IF_ERROR(CheckTask(p, i));
  }
  Covers covers;
  for (const auto& x : p.transfers) {
    RETURN_IF_ERROR(CheckTransfer(p, x, &covers));
  }
  RETURN_IF_ERROR(CheckInt8Transfers(p));
  for (const auto& t : p.tasks) {
    for (const auto& in : t.fragment.inputs) {
      RETURN_IF_ERROR(CheckCovered(p, covers, t.id, in));
    }
  }
  return CheckCovered(p, covers, kModelOutput, p.output_name);
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
      auto viewed = CheckedElements(w.view, "view");
      if (!w.view.empty() &&
          (!viewed.ok() || viewed.value() != NumElements(src->shape))) {
        return InvalidArgument("task " + t.name + " reads '" + w.source + "' " +
                               ShapeToString(src->shape) + " as " +
                               ShapeToString(w.view) +
                               ", which does not hold the same elements");
      }
      RETURN_IF_ERROR(CheckRegion(w.region, w.IndexShape(src->shape),
                                  "task " + t.name + " slice of " + w.source));
    }
  }
  return Status::Ok();
}

}  // namespace shoal
