#include "vision/encoder.h"

#include <cmath>
#include <cstring>

#include "common/error.h"
#include "model/node_names.h"

namespace hart::vision {
namespace {

constexpr size_t kAlign = 64;

Tensor* biased(Context& c, Tensor* x, Tensor* b) { return b ? add(c, x, b) : x; }

Tensor* layer_norm(Context& c, Tensor* x, Tensor* w, Tensor* b, float eps) {
  Tensor* y = norm(c, x, eps);
  if (w) y = mul(c, y, w);
  return biased(c, y, b);
}

Tensor* linear(Context& c, Tensor* w, Tensor* b, Tensor* x) { return biased(c, mul_mat(c, w, x), b); }

// The patch embedding: conv2d(kernel P x P, stride P) of the planar image (W, H, 3), as ggml's
// im2col + mul_mat, its im2col done by views since the patches do not overlap. Each patch's
// column is laid out as the kernel is, (kx, ky, channel) with kx fastest.
Tensor* patch_embed(Context& c, const ClipModel& m, Tensor* image) {
  const int64_t p = m.hp.patch_size, n = m.hp.patches_per_side(), w = image->ne[0], h = image->ne[1];
  const size_t e = sizeof(float);
  Tensor* cols = nullptr;
  for (int64_t ch = 0; ch < 3; ch++) {
    // (kx, px, ky, py) of channel ch, then (kx, ky, px, py).
    Tensor* v = view(c, image, {p, n, p, n}, {p * e, size_t(w) * e, size_t(w) * p * e}, size_t(ch * w * h) * e);
    Tensor* patches = reshape(c, cont(c, permute(c, v, 0, 2, 1, 3)), {p * p, n * n});
    cols = cols ? concat(c, cols, patches, 0) : patches;
  }
  Tensor* kernel = reshape(c, m.w.patch_w, {p * p * 3, m.hp.n_embd});
  return biased(c, mul_mat(c, kernel, cols), m.w.patch_b);  // (n_embd, n_patches)
}

Tensor* ffn(Context& c, const ClipModel& m, const ClipLayer& L, Tensor* x) {
  Tensor* up = linear(c, L.up_w, L.up_b, x);
  Tensor* h;
  if (L.gate_w) {
    Tensor* gate = linear(c, L.gate_w, L.gate_b, x);
    h = glu(c, gate, up, m.hp.ffn == FfnAct::GELU ? Glu::GEGLU : m.hp.ffn == FfnAct::SILU ? Glu::SWIGLU : Glu::GEGLU_QUICK);
  } else {
    h = unary(c, up, m.hp.ffn == FfnAct::GELU ? Unary::GELU : m.hp.ffn == FfnAct::SILU ? Unary::SILU : Unary::GELU_QUICK);
  }
  return linear(c, L.down_w, L.down_b, h);
}

Tensor* vit_layer(Context& c, const ClipModel& m, int il, Tensor* x) {
  const ClipHParams& hp = m.hp;
  const ClipLayer& L = m.w.layers[size_t(il)];
  const int64_t n = x->ne[1], d = hp.head_dim;
  Tensor* h = named(layer_norm(c, x, L.ln1_w, L.ln1_b, hp.eps), "layer_inp_normed", il);
  Tensor* q = reshape(c, linear(c, L.q_w, L.q_b, h), {d, hp.n_head, n});
  Tensor* k = reshape(c, linear(c, L.k_w, L.k_b, h), {d, hp.n_head_kv, n});
  Tensor* v = reshape(c, linear(c, L.v_w, L.v_b, h), {d, hp.n_head_kv, n});
  // Every patch attends every patch: no mask.
  Tensor* a = flash_attn_ext(c, q, k, v, nullptr, 1.0f / std::sqrt(float(d)));
  a = named(reshape(c, a, {d * hp.n_head, n}), "kqv_out", il);
  x = named(add(c, linear(c, L.o_w, L.o_b, a), x), "ffn_inp", il);
  Tensor* f = ffn(c, m, L, named(layer_norm(c, x, L.ln2_w, L.ln2_b, hp.eps), "ffn_inp_normed", il));
  return named(add(c, x, f), "layer_out", il);
}

// Idefics3's pixel shuffle (clip.cpp's build_patch_merge_permute): each s x s block of patches
// becomes one row of n_embd * s * s.
Tensor* pixel_shuffle(Context& c, Tensor* x, int64_t side, int64_t s) {
  const int64_t e = x->ne[0];
  Tensor* t = permute(c, reshape(c, x, {e * s, side / s, side}), 0, 2, 1, 3);
  t = permute(c, reshape(c, cont(c, t), {e * s * s, side / s, side / s}), 0, 2, 1, 3);
  return named(reshape(c, cont(c, t), {e * s * s, (side / s) * (side / s)}), "pixel_shuffle");
}

}  // namespace

struct Encoder::Built {
  Context ctx;
  Graph graph;
  Tensor* image = nullptr;
  Tensor* out = nullptr;
  std::vector<float> pixels;
  std::unique_ptr<uint8_t[]> arena;
};

Encoder::Encoder(const ClipModel& model, BackendSet backends) : model_(model), scheduler_(std::move(backends)) {}

Encoder::~Encoder() = default;

std::vector<float> Encoder::encode(const Tile& tile) {
  const ClipHParams& hp = model_.hp;
  if (tile.width != hp.image_size || tile.height != hp.image_size || tile.planar.size() != size_t(tile.width) * tile.height * 3)
    throw Error("vision encoder: a " + std::to_string(tile.width) + " x " + std::to_string(tile.height) +
                " tile, the model takes " + std::to_string(hp.image_size) + " x " + std::to_string(hp.image_size));
  if (!built_) {
    auto b = std::make_unique<Built>();
    Context& c = b->ctx;
    b->pixels.resize(tile.planar.size());
    const int64_t ne[3] = {hp.image_size, hp.image_size, 3};
    b->image = c.new_leaf(Type::F32, ne, b->pixels.data());
    b->image->flags |= kFlagInput;
    b->image->set_name("inp_raw");
    const ClipWeights& w = model_.w;
    Tensor* x = patch_embed(c, model_, b->image);
    if (w.pos_embd) x = named(add(c, x, w.pos_embd), "pos_embed");
    if (w.pre_ln_w || w.pre_ln_b) x = named(layer_norm(c, x, w.pre_ln_w, w.pre_ln_b, hp.eps), "pre_ln");
    for (int il = 0; il < hp.n_layer; il++) x = vit_layer(c, model_, il, x);
    if (w.post_ln_w || w.post_ln_b) x = named(layer_norm(c, x, w.post_ln_w, w.post_ln_b, hp.eps), "post_ln");
    x = pixel_shuffle(c, x, hp.patches_per_side(), hp.n_merge);
    b->out = mul_mat(c, w.mm_fc, x);
    b->out->set_name("mmproj_out");
    b->graph = build_graph({b->out});
    const size_t need = plan_memory(b->graph, nullptr, kAlign) + kAlign;
    b->arena.reset(new uint8_t[need]);
    auto base = reinterpret_cast<uintptr_t>(b->arena.get());
    plan_memory(b->graph, reinterpret_cast<void*>((base + kAlign - 1) & ~uintptr_t(kAlign - 1)), kAlign);
    built_ = std::move(b);
  }
  std::memcpy(built_->pixels.data(), tile.planar.data(), tile.planar.size() * sizeof(float));
  scheduler_.compute(built_->graph);
  const Tensor* out = built_->out;
  const float* p = static_cast<const float*>(out->data);
  return std::vector<float>(p, p + out->nelements());
}

}  // namespace hart::vision
