// One registration per op: its attributes, shape inference and cost, in the
// op's own file (TVM's TVM_REGISTER_OP(...).set_attr<...> style). Nothing else
// switches on op names to learn these facts.
#ifndef SHOAL_GRAPH_OP_REGISTRY_H_
#define SHOAL_GRAPH_OP_REGISTRY_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

// `groups` matrix products of [rows x reduce] by [reduce x cols].
struct GemmShape {
  int64_t rows = 0, reduce = 0, cols = 0, groups = 1;
  bool any() const { return rows > 0 && reduce > 0 && cols > 0; }
};

// Which kind of kernel an engine runs a node's MACs on, which sets how fast
// a board does them (cluster/board.h). A 3x3 convolution of stride 1 and
// one group is Winograd's: ncnn, XNNPACK and the Arm Compute Library all
// transform it into fewer multiplies, so per MAC of the direct form it runs
// faster than a GEMM. A depthwise convolution reads and writes as much as
// it computes, so it runs slower.
enum class MacKind { kGemm, kWinograd3x3, kDepthwise };

// Work a node does, beyond what the tensor shapes alone say.
struct OpWork {
  int64_t macs = 0;  // multiply-accumulates of conv / fc / matmul
  MacKind kind = MacKind::kGemm;
  // The same work as matrix products, for hardware that computes those
  // (sim/systolic.h): `groups` products of [rows x reduce] by
  // [reduce x cols], a conv as im2col (rows: output pixels, cols: output
  // channels of a group). 0 rows: not a matrix product.
  GemmShape gemm;
};

// Shapes of a node's inputs; an absent optional input has `present` false.
struct InputShapes {
  std::vector<Shape> shapes;
  std::vector<bool> present;
  size_t size() const { return shapes.size(); }
  bool Has(size_t i) const { return i < present.size() && present[i]; }
  const Shape& operator[](size_t i) const { return shapes[i]; }
};

using InferFn = std::function<Status(const Node&, const InputShapes&,
                                     std::vector<Shape>* outputs)>;
using WorkFn = std::function<OpWork(const Node&, const InputShapes&,
                                    const std::vector<Shape>& outputs)>;

// How a node of the op may be divided over devices. The partitioners and
// docs/operators.md read these facts; no other code lists ops by name for
// them. An op with none set is kept whole on one device.
struct SplitFacts {
  // Elementwise: any region of the output from the same region of the inputs.
  bool any_axis = false;
  // A layer with a weight: by its output channels (LOP, channel splitting) or
  // its input channels (LIP, filter splitting; partial sums are added).
  bool by_weight = false;
  // Channel c of the output reads only channel c of the input and no weight:
  // travels with a channel split of its producer.
  bool per_channel = false;
  // Spatial tiles, each reading its window's halo of the input.
  bool spatial_halo = false;
  // Only relabels the layout (Flatten, Reshape): travels with a split of its
  // producer when the split axis keeps its order.
  bool relayout = false;
  // Along any axis the op does not reduce (Softmax, LayerNormalization,
  // ReduceMean): each part normalises or reduces whole rows.
  bool non_reduced = false;
  // Permutes its input's axes (Transpose): a box of the input is a box of
  // the output, its bounds permuted (AxisPermutationOf).
  bool permutes = false;
  // One product per index of its leading (batch) axes, of two activations
  // (attention's MatMuls, one per head): a range of those axes in both
  // operands gives the same range of the output.
  bool batch_product = false;
  // Its output is one box of its input (Slice with unit steps): a part of
  // the input inside the box is the same part of the output, shifted
  // (CropOf); a part outside it is not read.
  bool crops = false;
  // Its output is every step-th element of a box of its input along each
  // axis (Slice with positive steps; StridedCropOf): a box of the output
  // reads one box of the input, and a box of the input gives one of the
  // output (a Swin patch merging's x[0::2, 1::2]).
  bool strided_crops = false;
  // Picks indices along one axis by constant indices (Gather): a part that
  // holds that axis whole gives the same part of the other axes
  // (SelectedAxisOf).
  bool selects = false;
  bool any() const {
    return any_axis || by_weight || per_channel || spatial_halo || relayout ||
           non_reduced || permutes || batch_product || crops || strided_crops ||
           selects;
  }
};

// The axes a node reduces over (non_reduced), given its input's rank.
using ReducedAxesFn =
    std::function<std::vector<int64_t>(const Node&, int64_t rank)>;
// Output axis i is input axis perm[i] (permutes), given the rank.
using AxisPermutationFn =
    std::function<std::vector<int64_t>(const Node&, int64_t rank)>;
// The box [begin, end) of an input of shape `in` that is the output
// (crops); false when the node takes no such box (steps other than 1).
using CropFn =
    std::function<bool(const Node&, const Shape& in,
                       std::vector<int64_t>* begin, std::vector<int64_t>* end)>;
// Per axis of an input of shape `in`: the first index taken, the step
// (positive) and how many (strided_crops); false when the node takes no
// such elements (a negative step).
struct StridedCrop {
  std::vector<int64_t> begin, step, count;
};
using StridedCropFn =
    std::function<bool(const Node&, const Shape& in, StridedCrop* crop)>;
// The axis a node picks along (selects), given its input's rank.
using SelectedAxisFn = std::function<int64_t(const Node&, int64_t rank)>;

// How a layer holds its learned weight, its input 1, against its channels:
// what splitting by output or input channels cuts (partition/layer_split.h),
// what LCP narrows (lcp/split_branches.h, lcp/prune_channels.h) and what a
// profile's split variants slice (sim/profile_variants.h). A Conv's W is
// [M, C/group, kernel...] over a feature map [N, C, spatial...]; a Gemm's B
// is [K, N] (or [N, K], transB) over rows [M, K]; a MatMul's B [..., K, N].
struct WeightLayout {
  int out_axis = -1;   // the weight's axis of output channels; -1: none
  int in_axis = -1;    // its axis of input channels (of one group)
  int64_t groups = 1;  // channel groups (Conv's `group`)
  // The activation input keeps its channels on axis 1 of a feature map
  // (a convolution, a window over spatial axes); otherwise on its last
  // axis, rows of features.
  bool feature_map = false;
  // The activation input is transposed ([K, M], Gemm's transA).
  bool transposed_input = false;
  bool any() const { return out_axis >= 0; }
  // One group, input as rows or a map: a channel of the output is one
  // slice of the weight along `out_axis`, an input channel one along
  // `in_axis`.
  bool plain() const { return any() && groups == 1 && !transposed_input; }
};
using WeightLayoutFn = std::function<WeightLayout(const Node&)>;

// What an op does to a tensor's encoding, for int8 plans
// (graph/insert_qdq.h): QuantizeLinear makes int8 of float32,
// DequantizeLinear float32 of int8.
enum class QuantRole { kNone, kQuantize, kDequantize };

class OpSchema {
 public:
  explicit OpSchema(std::string name) : name_(std::move(name)) {}

  OpSchema& Inputs(int min, int max) {
    min_inputs_ = min;
    max_inputs_ = max;
    return *this;
  }
  OpSchema& Outputs(int min, int max) {
    min_outputs_ = min;
    max_outputs_ = max;
    return *this;
  }
  // Attributes the op understands; any other is rejected on import.
  OpSchema& Attr(const std::string& name) {
    attrs_.insert(name);
    return *this;
  }
  OpSchema& Infer(InferFn fn) {
    infer_ = std::move(fn);
    return *this;
  }
  OpSchema& Work(WorkFn fn) {
    work_ = std::move(fn);
    return *this;
  }
  // Weight inputs that are statistics, not learned parameters (BN's running
  // mean and variance): counted in weight bytes but not in params.
  OpSchema& NonParamInput(int index) {
    non_param_inputs_.insert(index);
    return *this;
  }
  // Elementwise: output[i] depends only on element i of each input (of an
  // input with the output's shape; one that broadcasts is read whole).
  OpSchema& Elementwise() {
    elementwise_ = true;
    split_.any_axis = true;
    return *this;
  }
  OpSchema& SplitByWeight() {
    split_.by_weight = true;
    return *this;
  }
  OpSchema& SplitPerChannel() {
    split_.per_channel = true;
    return *this;
  }
  OpSchema& SplitSpatially() {
    split_.spatial_halo = true;
    return *this;
  }
  OpSchema& SplitAsRelayout() {
    split_.relayout = true;
    return *this;
  }
  OpSchema& SplitOffReducedAxes() {
    split_.non_reduced = true;
    return *this;
  }
  // The same, saying which axes it reduces: a part that holds those axes
  // whole is normalised where it is (ReducedAxesOf).
  OpSchema& SplitOffReducedAxes(ReducedAxesFn fn) {
    split_.non_reduced = true;
    reduced_axes_ = std::move(fn);
    return *this;
  }
  OpSchema& SplitAsPermutation(AxisPermutationFn fn) {
    split_.permutes = true;
    permutation_ = std::move(fn);
    return *this;
  }
  OpSchema& SplitByBatchAxes() {
    split_.batch_product = true;
    return *this;
  }
  OpSchema& SplitAsCrop(CropFn fn) {
    split_.crops = true;
    crop_ = std::move(fn);
    return *this;
  }
  OpSchema& SplitAsStridedCrop(StridedCropFn fn) {
    split_.strided_crops = true;
    strided_crop_ = std::move(fn);
    return *this;
  }
  OpSchema& SplitAsSelection(SelectedAxisFn fn) {
    split_.selects = true;
    selected_axis_ = std::move(fn);
    return *this;
  }
  // Output channel c reads only input channel c and entry c of each weight
  // input (BatchNormalization's scale, shift, mean and variance): the
  // channel can be removed with its entries (lcp/prune_channels.h).
  OpSchema& ChannelWeights() {
    channel_weights_ = true;
    return *this;
  }
  // The layout of its weight (WeightLayout), given the node's attributes.
  OpSchema& Weight(WeightLayoutFn fn) {
    weight_layout_ = std::move(fn);
    return *this;
  }
  // Its output is its inputs side by side along one axis (Concat): what a
  // split of that axis merges into, and where LCP's branches meet.
  OpSchema& Concatenates() {
    concatenates_ = true;
    return *this;
  }
  OpSchema& Quantization(QuantRole role) {
    quant_role_ = role;
    return *this;
  }
  // What the op computes and its input and output shapes, in a line
  // (docs/operators.md).
  OpSchema& Doc(std::string text) {
    doc_ = std::move(text);
    return *this;
  }

  // Its output is zero wherever its input is negative (a ReLU): about half
  // the values of an activation, which compress on the wire
  // (runtime/tensor_codec.h); plans price such transfers smaller
  // (Plan::WireBytes).
  OpSchema& SparseOutput() {
    sparse_output_ = true;
    return *this;
  }
  // Its output is about as sparse as its first input: it moves or pools
  // that input's values (a reshape, a max pool).
  OpSchema& KeepsSparsity() {
    keeps_sparsity_ = true;
    return *this;
  }

  const std::string& name() const { return name_; }
  bool sparse_output() const { return sparse_output_; }
  bool keeps_sparsity() const { return keeps_sparsity_; }
  bool channel_weights() const { return channel_weights_; }
  int min_inputs() const { return min_inputs_; }
  int max_inputs() const { return max_inputs_; }
  int min_outputs() const { return min_outputs_; }
  int max_outputs() const { return max_outputs_; }
  const std::set<std::string>& attrs() const { return attrs_; }
  bool elementwise() const { return elementwise_; }
  const SplitFacts& split() const { return split_; }
  const std::string& doc() const { return doc_; }
  WeightLayout weight_layout(const Node& n) const {
    return weight_layout_ ? weight_layout_(n) : WeightLayout{};
  }
  bool concatenates() const { return concatenates_; }
  QuantRole quant_role() const { return quant_role_; }
  bool IsParamInput(int index) const { return !non_param_inputs_.count(index); }
  const ReducedAxesFn& reduced_axes() const { return reduced_axes_; }
  const AxisPermutationFn& permutation() const { return permutation_; }
  const CropFn& crop() const { return crop_; }
  const StridedCropFn& strided_crop() const { return strided_crop_; }
  const SelectedAxisFn& selected_axis() const { return selected_axis_; }

  Status InferShapes(const Node& node, const InputShapes& in,
                     std::vector<Shape>* out) const;
  OpWork ComputeWork(const Node& node, const InputShapes& in,
                     const std::vector<Shape>& out) const {
    return work_ ? work_(node, in, out) : OpWork{};
  }

 private:
  std::string name_;
  int min_inputs_ = 1, max_inputs_ = 1;
  int min_outputs_ = 1, max_outputs_ = 1;
  std::set<std::string> attrs_;
  std::set<int> non_param_inputs_;
  bool elementwise_ = false;
  bool sparse_output_ = false, keeps_sparsity_ = false;
  bool channel_weights_ = false;
  SplitFacts split_;
  bool concatenates_ = false;
  QuantRole quant_role_ = QuantRole::kNone;
  WeightLayoutFn weight_layout_;
  ReducedAxesFn reduced_axes_;
  AxisPermutationFn permutation_;
  CropFn crop_;
  StridedCropFn strided_crop_;
  SelectedAxisFn selected_axis_;
  std::string doc_;
  InferFn infer_;
  WorkFn work_;
};

class OpRegistry {
 public:
  static OpRegistry& Global();
  OpSchema& Register(const std::string& name);
  const OpSchema* Find(const std::string& name) const;
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, OpSchema> ops_;
};

// Registers an op at static-initialisation time. Libraries holding
// registrations are linked whole (see CMakeLists.txt).
#define SHOAL_REGISTER_OP(op_name)                               \
  static ::shoal::OpSchema& SHOAL_CONCAT(shoal_op_, __COUNTER__) \
      [[maybe_unused]] = ::shoal::OpRegistry::Global().Register(op_name)

// The split facts of `op`; none for an unregistered op.
const SplitFacts& SplitFactsOf(const std::string& op);

// Whether output channel c of `n` reads only input channel c of its one
// activation input (a pool, an activation): it runs on a channel slice, or
// on each LCP branch's channels alone.
bool ActsPerChannel(const Node& n);

// Whether output channel c of `n` reads only input channel c of its first
// input and entry c of its weights (OpSchema::ChannelWeights).
bool ActsPerChannelWithWeights(const Node& n);

// `n`'s weight layout; none (any() false) for an op without one or an
// unregistered op.
WeightLayout WeightLayoutOf(const Node& n);

// The axes `n` reduces over (SplitFacts::non_reduced) for an input of
// `rank`, each in [0, rank); nullopt when its op does not say which.
std::optional<std::vector<int64_t>> ReducedAxesOf(const Node& n, int64_t rank);

// Output axis i of `n` is input axis perm[i] (SplitFacts::permutes), for
// an input of `rank`; nullopt when `n` does not permute axes or its
// permutation is not one of `rank` axes.
std::optional<std::vector<int64_t>> AxisPermutationOf(const Node& n,
                                                      int64_t rank);

// The box [begin, end) of its input of shape `in` that `n` outputs
// (SplitFacts::crops), within `in`; nullopt when `n` does not crop so.
std::optional<std::pair<std::vector<int64_t>, std::vector<int64_t>>> CropOf(
    const Node& n, const Shape& in);

// The elements of its input of shape `in` that `n` outputs
// (SplitFacts::strided_crops), each axis's count at least 1 and within
// `in`; nullopt when `n` does not take them so.
std::optional<StridedCrop> StridedCropOf(const Node& n, const Shape& in);

// The axis of an input of `rank` that `n` picks along (SplitFacts::selects);
// nullopt when it does not, or names no axis of that rank.
std::optional<int64_t> SelectedAxisOf(const Node& n, int64_t rank);

// Whether `n` concatenates its inputs (OpSchema::Concatenates).
bool Concatenates(const Node& n);

// What `n` does to the encoding of its input (OpSchema::Quantization);
// null reads as none.
QuantRole QuantRoleOf(const Node* n);

// Error helper for shape inference: names the node and its op.
Status ShapeError(const Node& node, const std::string& what);

}  // namespace shoal

#endif  // SHOAL_GRAPH_OP_REGISTRY_H_
