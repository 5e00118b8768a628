#include "cli/calibration_flags.h"

#include <algorithm>

#include "engine/calibrate.h"
#include "graph/fuse_batchnorm.h"
#include "io/npy.h"
#include "train/fashion_mnist.h"

namespace shoal {

void AddCalibrationFlags(CLI::App* cmd, CalibrationFlags* f) {
  cmd->add_option("--calibration", f->files,
                  "Calibration inputs: .npy files, each one model input or a "
                  "stack of them along a leading axis (default for 1x1x28x28 "
                  "models: the Fashion-MNIST training images)")
      ->delimiter(',');
  cmd->add_option("--calibration-samples", f->samples,
                  "Inputs to calibrate on (default 300)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--calibration-dataset", f->dataset,
                  "'fashion-mnist' (" + std::string(kDebianFashionMnistDir) +
                      ") or a directory with its four *-idx?-ubyte.gz files");
}

namespace {

// One input, or a stack of inputs along a leading axis, from `t`.
Status AppendSamples(const Tensor& t, const Shape& in, const std::string& file,
                     int limit, std::vector<Tensor>* out) {
  const int64_t n = NumElements(in);
  if (t.shape == in) {
    out->push_back(t);
    return Status::Ok();
  }
  // A stack: [N, rest...] where the input is [1, rest...] or [rest...].
  Shape rest(t.shape.begin() + (t.shape.empty() ? 0 : 1), t.shape.end());
  const bool batch_one = !in.empty() && in[0] == 1;
  const Shape in_rest = batch_one ? Shape(in.begin() + 1, in.end()) : in;
  if (t.shape.empty() || rest != in_rest) {
    return InvalidArgument("calibration file '" + file + "' holds " +
                           ShapeToString(t.shape) + "; the model's input is " +
                           ShapeToString(in) +
                           " (give one input, or a stack [N, ...] of them)");
  }
  for (int64_t i = 0; i < t.shape[0] && static_cast<int>(out->size()) < limit;
       ++i) {
    out->emplace_back(in, std::vector<float>(t.data.begin() + i * n,
                                             t.data.begin() + (i + 1) * n));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<Tensor>> LoadCalibration(const CalibrationFlags& f,
                                              const Graph& g,
                                              std::string* source) {
  if (g.inputs.size() != 1) {
    return Unsupported("calibration needs a model with one input; '" + g.name +
                       "' has " + std::to_string(g.inputs.size()));
  }
  const Shape in = g.FindTensor(g.inputs[0])->shape;
  std::vector<Tensor> out;
  if (!f.files.empty()) {
    for (const auto& file : f.files) {
      if (static_cast<int>(out.size()) >= f.samples) break;
      ASSIGN_OR_RETURN(Tensor t, ReadNpy(file));
      RETURN_IF_ERROR(AppendSamples(t, in, file, f.samples, &out));
    }
    *source = std::to_string(out.size()) + " inputs from " +
              std::to_string(f.files.size()) + " .npy file" +
              (f.files.size() == 1 ? "" : "s");
    return out;
  }
  if (in != Shape{1, 1, 28, 28}) {
    return InvalidArgument(
        "no calibration data for a model with input " + ShapeToString(in) +
        ": pass --calibration FILE.npy (inputs the model will see; a few "
        "hundred); the Fashion-MNIST images are used only for 1x1x28x28 "
        "inputs");
  }
  ASSIGN_OR_RETURN(ImageDataset data, LoadFashionMnist(f.dataset));
  const ImageSet& s = data.train;
  const int64_t pixels = s.rows * s.cols;
  const int64_t count = std::min<int64_t>(f.samples, s.count);
  for (int64_t i = 0; i < count; ++i) {
    Tensor t(in);
    for (int64_t k = 0; k < pixels; ++k)
      t.data[k] = s.pixels[i * pixels + k] / 255.0f;
    out.push_back(std::move(t));
  }
  *source = std::to_string(count) + " Fashion-MNIST training images (" +
            data.dir + ")";
  return out;
}

void AddDtypeFlags(CLI::App* cmd, DtypeFlags* f) {
  cmd->add_option("--dtype", f->dtype,
                  "f32 (the default) or int8: quantize the model first "
                  "(as `shoal quantize`: int8 weights per output channel, "
                  "activation scales calibrated on --calibration)")
      ->check(CLI::IsMember({"f32", "int8"}));
  AddCalibrationFlags(cmd, &f->calibration);
}

std::string QuantizedSummary::Text() const {
  return std::to_string(qdq.layers) +
         " layers with int8 weights (a scale per output channel), " +
         std::to_string(qdq.activations) + " activation scales calibrated on " +
         source;
}

StatusOr<QuantizedSummary> QuantizeModel(const CalibrationFlags& f, Model* m) {
  RETURN_IF_ERROR(FuseBatchNorm(m).status());
  QuantizedSummary s;
  ASSIGN_OR_RETURN(std::vector<Tensor> samples,
                   LoadCalibration(f, m->graph, &s.source));
  ASSIGN_OR_RETURN(s.qdq, QuantizeStatic(samples, m));
  if (s.qdq.layers == 0) {
    return FailedPrecondition("model '" + m->graph.name +
                              "' has no Conv, Gemm or MatMul with a weight "
                              "to quantize");
  }
  return s;
}

}  // namespace shoal
