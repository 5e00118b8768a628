#include "models/vit.h"

#include "models/builder.h"
#include "models/zoo.h"

namespace shoal {
namespace {

Attrs ShapeAttr(const Shape& s) {
  Attrs a;
  a.Set("shape", s);
  return a;
}

Attrs PermAttr(const std::vector<int64_t>& perm) {
  Attrs a;
  a.Set("perm", perm);
  return a;
}

std::string LayerNorm(GraphBuilder& b, const std::string& name,
                      const std::string& x, int64_t dim) {
  Attrs a;
  a.Set("axis", int64_t{-1});
  a.Set("epsilon", 1e-6f);
  return b.Op(
      "LayerNormalization",
      {x, b.Weight(name + ".weight", {dim}), b.Weight(name + ".bias", {dim})},
      a, name);
}

// nn.Linear over [1, T, K] token rows, as imported: Reshape to [T, K],
// Gemm, and Reshape back unless `keep_rows`.
std::string TokenLinear(GraphBuilder& b, const std::string& name,
                        const std::string& x, int64_t out, int64_t tokens,
                        bool keep_rows = false) {
  const int64_t k = b.ShapeOf(x).back();
  std::string y = x;
  if (b.ShapeOf(x).size() != 2) {
    y = b.Op("Reshape", {x}, ShapeAttr({tokens, k}), name + ".rows");
  }
  y = b.Linear(name, y, out);
  if (keep_rows) return y;
  return b.Op("Reshape", {y}, ShapeAttr({1, tokens, out}), name + ".tokens");
}

// Scaled dot-product attention over `heads` heads of x [1, T, D].
std::string Attention(GraphBuilder& b, const std::string& name,
                      const std::string& x, const VitConfig& c,
                      int64_t tokens) {
  const int64_t hd = c.dim / c.heads;
  const std::string rows =
      b.Op("Reshape", {x}, ShapeAttr({tokens, c.dim}), name + ".rows");
  // The packed projection's columns: Q, then K, then V.
  const std::string packed =
      c.packed_qkv ? b.Linear(name + ".in_proj", rows, 3 * c.dim) : "";
  auto head_view = [&](const std::string& proj,
                       const std::vector<int64_t>& perm) {
    std::string y;
    if (c.packed_qkv) {
      const int64_t at = proj == "q" ? 0 : proj == "k" ? 1 : 2;
      Attrs a;
      a.Set("starts", std::vector<int64_t>{at * c.dim});
      a.Set("ends", std::vector<int64_t>{(at + 1) * c.dim});
      a.Set("axes", std::vector<int64_t>{1});
      y = b.Op("Slice", {packed}, a, name + "." + proj);
    } else {
      y = b.Linear(name + "." + proj, rows, c.dim);
    }
    y = b.Op("Reshape", {y}, ShapeAttr({1, tokens, c.heads, hd}),
             name + "." + proj + ".heads");
    return b.Op("Transpose", {y}, PermAttr(perm), name + "." + proj + ".t");
  };
  std::string q = head_view("q", {0, 2, 1, 3});  // [1, H, T, hd]
  std::string k = head_view("k", {0, 2, 3, 1});  // [1, H, hd, T]
  std::string v = head_view("v", {0, 2, 1, 3});  // [1, H, T, hd]
  q = b.Mul(q, b.Weight(name + ".scale", {1}));
  std::string s = b.Op("MatMul", {q, k}, {}, name + ".scores");
  s = b.Softmax(s, -1);
  std::string o = b.Op("MatMul", {s, v}, {}, name + ".context");
  o = b.Op("Transpose", {o}, PermAttr({0, 2, 1, 3}), name + ".context.t");
  o = b.Op("Reshape", {o}, ShapeAttr({tokens, c.dim}), name + ".merge");
  return TokenLinear(b, name + ".out_proj", o, c.dim, tokens);
}

// x * 0.5 * (1 + erf(x / sqrt(2))), as torch exports nn.GELU.
std::string Gelu(GraphBuilder& b, const std::string& name,
                 const std::string& x) {
  std::string y = b.Op("Div", {x, b.Weight(name + ".sqrt2", {1})});
  y = b.Op("Erf", {y});
  y = b.Add(y, b.Weight(name + ".one", {1}));
  y = b.Mul(x, y);
  return b.Mul(y, b.Weight(name + ".half", {1}));
}

}  // namespace

StatusOr<Graph> BuildVit(const VitConfig& c, const Shape& in) {
  GraphBuilder b(c.name);
  auto x = b.Input("input", in);
  x = b.Conv("conv_proj", x, c.dim, c.patch, c.patch);
  const Shape& map = b.ShapeOf(x);
  const int64_t patches = map.size() == 4 ? map[2] * map[3] : 1;
  const int64_t tokens = patches + 1;
  x = b.Op("Reshape", {x}, ShapeAttr({1, c.dim, patches}), "patches");
  x = b.Op("Transpose", {x}, PermAttr({0, 2, 1}), "patches.t");
  x = b.Concat({b.Weight("class_token", {1, 1, c.dim}), x}, 1);
  x = b.Add(x, b.Weight("encoder.pos_embedding", {1, tokens, c.dim}));
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string l = "encoder.layers.encoder_layer_" + std::to_string(i);
    std::string y = LayerNorm(b, l + ".ln_1", x, c.dim);
    x = b.Add(x, Attention(b, l + ".self_attention", y, c, tokens));
    y = LayerNorm(b, l + ".ln_2", x, c.dim);
    y = TokenLinear(b, l + ".mlp.0", y, c.mlp, tokens, true);
    y = Gelu(b, l + ".mlp.1", y);
    x = b.Add(x, TokenLinear(b, l + ".mlp.3", y, c.dim, tokens));
  }
  x = LayerNorm(b, "encoder.ln", x, c.dim);
  // The class token's features: x[:, 0].
  Attrs g;
  g.Set("axis", int64_t{1});
  g.Set("indices", std::vector<int64_t>{0});
  g.Set("indices_shape", std::vector<int64_t>{});
  x = b.Op("Gather", {x}, g, "class_token.out");
  x = b.Linear("heads.head", x, c.classes);
  return b.Finish({x});
}

namespace {

StatusOr<Graph> BuildVitB16(const Shape& in) {
  return BuildVit(VitConfig{}, in);
}

SHOAL_REGISTER_MODEL("vit_b_16", "ViT-B/16, ImageNet",
                     "torchvision.models.vit_b_16", {1, 3, 224, 224}, 1000,
                     BuildVitB16);

}  // namespace
}  // namespace shoal
