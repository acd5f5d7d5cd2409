#include "vision/clip_model.h"

#include <cmath>
#include <optional>
#include <tuple>

#include "common/error.h"
#include "model/tensor_list.h"

namespace hart::vision {
namespace {

// Bounds that keep a hostile file's numbers from turning into huge allocations or overflow; real
// projectors are far inside them (SigLIP-so400m: 1152 wide, 27 layers, 16 heads, 384-pixel tiles).
constexpr int64_t kMaxWidth = 1 << 16;
constexpr int64_t kMaxLayers = 512;
constexpr int64_t kMaxImageSide = 4096;

struct Keys {
  const gguf::File& f;
  int req(const std::string& key, int64_t lo, int64_t hi) const {
    const std::optional<int64_t> v = f.get_int(key);
    if (!v) throw Error("mmproj: key '" + key + "' is missing");
    return in_range(key, *v, lo, hi);
  }
  int opt(const std::string& key, int64_t lo, int64_t hi, int fallback) const {
    const std::optional<int64_t> v = f.get_int(key);
    return v ? in_range(key, *v, lo, hi) : fallback;
  }
  static int in_range(const std::string& key, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi)
      throw Error("mmproj: key '" + key + "' is " + std::to_string(v) + ", outside " + std::to_string(lo) + ".." +
                  std::to_string(hi));
    return int(v);
  }
  std::array<float, 3> rgb(const std::string& key, bool nonzero) const {
    const std::optional<std::vector<float>> v = f.get_float_array(key);
    if (!v || v->size() < 3) throw Error("mmproj: key '" + key + "' must hold 3 numbers (one per RGB channel)");
    std::array<float, 3> a{(*v)[0], (*v)[1], (*v)[2]};
    for (float x : a)
      if (!std::isfinite(x) || (nonzero && x == 0.0f)) throw Error("mmproj: key '" + key + "' holds " + std::to_string(x));
    return a;
  }
};

std::string projector_type(const gguf::File& f) {
  if (auto t = f.get_string("clip.projector_type")) return *t;
  if (auto t = f.get_string("clip.vision.projector_type")) return *t;  // files with audio beside vision
  throw Error("mmproj: key 'clip.projector_type' is missing");
}

ClipHParams read_hparams(const gguf::File& f) {
  const std::string arch = f.get_string("general.architecture").value_or("");
  if (arch != "clip")
    throw Error("not a multimodal projector: general.architecture is '" + arch + "', an mmproj file has 'clip'");
  if (!f.get_bool("clip.has_vision_encoder").value_or(false))
    throw Error("mmproj: the file has no vision encoder (clip.has_vision_encoder is not true)");
  ClipHParams hp;
  const std::string type = projector_type(f);
  if (type != "idefics3")
    throw Error("mmproj: projector type '" + type + "' is not supported (hart computes: idefics3)");
  hp.projector = Projector::IDEFICS3;

  const Keys k{f};
  hp.n_embd = k.req("clip.vision.embedding_length", 1, kMaxWidth);
  hp.n_ff = k.req("clip.vision.feed_forward_length", 1, kMaxWidth * 8);
  hp.n_layer = k.req("clip.vision.block_count", 1, kMaxLayers);
  hp.n_head = k.req("clip.vision.attention.head_count", 1, hp.n_embd);
  hp.n_head_kv = k.opt("clip.vision.attention.head_count_kv", 1, hp.n_head, hp.n_head);
  if (hp.n_head % hp.n_head_kv != 0)
    throw Error("mmproj: " + std::to_string(hp.n_head) + " attention heads do not share " + std::to_string(hp.n_head_kv) +
                " KV heads evenly");
  hp.head_dim = k.opt("clip.vision.attention.head_dim", 1, kMaxWidth, hp.n_embd / hp.n_head);
  if (!f.get_int("clip.vision.attention.head_dim") && hp.n_embd % hp.n_head != 0)
    throw Error("mmproj: embedding width " + std::to_string(hp.n_embd) + " is not a multiple of " +
                std::to_string(hp.n_head) + " heads");
  hp.projection_dim = k.req("clip.vision.projection_dim", 1, kMaxWidth);
  const std::optional<double> eps = f.get_float("clip.vision.attention.layer_norm_epsilon");
  if (!eps) throw Error("mmproj: key 'clip.vision.attention.layer_norm_epsilon' is missing");
  if (!(*eps > 0 && *eps < 1)) throw Error("mmproj: layer_norm_epsilon " + std::to_string(*eps) + " is not in (0, 1)");
  hp.eps = float(*eps);

  hp.image_size = k.req("clip.vision.image_size", 1, kMaxImageSide);
  hp.patch_size = k.req("clip.vision.patch_size", 1, hp.image_size);
  if (hp.image_size % hp.patch_size != 0)
    throw Error("mmproj: image_size " + std::to_string(hp.image_size) + " is not a multiple of patch_size " +
                std::to_string(hp.patch_size));
  hp.mean = k.rgb("clip.vision.image_mean", false);
  hp.std = k.rgb("clip.vision.image_std", true);

  const bool gelu = f.get_bool("clip.use_gelu").value_or(false), silu = f.get_bool("clip.use_silu").value_or(false);
  if (gelu && silu) throw Error("mmproj: both clip.use_gelu and clip.use_silu are set");
  hp.ffn = gelu ? FfnAct::GELU : silu ? FfnAct::SILU : FfnAct::GELU_QUICK;

  // Idefics3: the pixel shuffle needs the scale factor; tiling needs the longest edge (files
  // converted before llama.cpp wrote it take another preprocessing path, which hart lacks).
  hp.n_merge = k.req("clip.vision.projector.scale_factor", 2, hp.patches_per_side());
  if (hp.patches_per_side() % hp.n_merge != 0)
    throw Error("mmproj: " + std::to_string(hp.patches_per_side()) + " patches per side do not divide by scale_factor " +
                std::to_string(hp.n_merge));
  hp.longest_edge = k.opt("clip.vision.preproc_image_size", 1, 8 * kMaxImageSide, 0);
  if (hp.longest_edge == 0)
    throw Error("mmproj: key 'clip.vision.preproc_image_size' is missing (an Idefics3 file converted before llama.cpp "
                "wrote it)");
  return hp;
}

TensorList list_tensors(const ClipHParams& hp, ClipWeights& w) {
  const int64_t e = hp.n_embd, p = hp.patch_size, q = int64_t(hp.n_head) * hp.head_dim,
                kv = int64_t(hp.n_head_kv) * hp.head_dim;
  constexpr TensorNeed opt = TensorNeed::OPTIONAL;
  TensorList l;
  l.add("v.patch_embd.weight", {p, p, 3, e}, TensorRole::CONV, &w.patch_w);
  l.add("v.patch_embd.bias", {e}, TensorRole::BIAS, &w.patch_b, opt);
  l.add("v.position_embd.weight", {e, hp.n_patches()}, TensorRole::EMBED, &w.pos_embd, opt);
  l.add("v.pre_ln.weight", {e}, TensorRole::NORM, &w.pre_ln_w, opt);
  l.add("v.pre_ln.bias", {e}, TensorRole::BIAS, &w.pre_ln_b, opt);
  l.add("v.post_ln.weight", {e}, TensorRole::NORM, &w.post_ln_w, opt);
  l.add("v.post_ln.bias", {e}, TensorRole::BIAS, &w.post_ln_b, opt);
  w.layers.resize(size_t(hp.n_layer));
  for (int il = 0; il < hp.n_layer; il++) {
    ClipLayer& L = w.layers[size_t(il)];
    const std::string b = "v.blk." + std::to_string(il) + ".";
    auto matrix = [&](const char* name, int64_t k, int64_t n, Tensor** wt, Tensor** bias, TensorNeed need) {
      l.add(b + name + ".weight", {k, n}, TensorRole::MATRIX, wt, need);
      l.add(b + name + ".bias", {n}, TensorRole::BIAS, bias, opt);
    };
    for (auto [name, wt, bias] : {std::tuple{"ln1", &L.ln1_w, &L.ln1_b}, std::tuple{"ln2", &L.ln2_w, &L.ln2_b}}) {
      l.add(b + name + ".weight", {e}, TensorRole::NORM, wt, opt);
      l.add(b + name + ".bias", {e}, TensorRole::BIAS, bias, opt);
    }
    matrix("attn_q", e, q, &L.q_w, &L.q_b, TensorNeed::REQUIRED);
    matrix("attn_k", e, kv, &L.k_w, &L.k_b, TensorNeed::REQUIRED);
    matrix("attn_v", e, kv, &L.v_w, &L.v_b, TensorNeed::REQUIRED);
    matrix("attn_out", q, e, &L.o_w, &L.o_b, TensorNeed::REQUIRED);
    matrix("ffn_up", e, hp.n_ff, &L.up_w, &L.up_b, TensorNeed::REQUIRED);
    matrix("ffn_gate", e, hp.n_ff, &L.gate_w, &L.gate_b, opt);
    matrix("ffn_down", hp.n_ff, e, &L.down_w, &L.down_b, TensorNeed::REQUIRED);
  }
  // The projector's output width is the text model's: any, checked against it when both load.
  return l;
}

// The encoder's tensors and the projector's, whose output width is the text model's: any, checked
// against it when both are loaded (check_pair).
TensorList list_all_tensors(const gguf::File& f, const ClipHParams& hp, ClipWeights& w) {
  TensorList list = list_tensors(hp, w);
  const gguf::TensorInfo* fc = f.find_tensor("mm.model.fc.weight");
  const int64_t merged = int64_t(hp.n_embd) * hp.n_merge * hp.n_merge;
  const int64_t n_out = fc && fc->n_dims == 2 && fc->ne[1] > 0 && fc->ne[1] <= kMaxWidth ? fc->ne[1] : 1;
  list.add("mm.model.fc.weight", {merged, n_out}, TensorRole::MATRIX, &w.mm_fc);
  return list;
}

}  // namespace

FileCheck check_clip_file(const gguf::File& f) {
  FileCheck c;
  c.arch = "clip";
  try {
    const ClipHParams hp = read_hparams(f);
    ClipWeights w;
    c.tensors = check_tensors(f, list_all_tensors(f, hp, w));
  } catch (const Error& e) {
    c.error = e.what();
  }
  return c;
}

const char* projector_name(Projector p) {
  switch (p) {
    case Projector::IDEFICS3: return "idefics3";
  }
  return "?";
}

int ClipModel::n_embd_out() const { return int(w.mm_fc->ne[1]); }

std::unique_ptr<ClipModel> ClipModel::from_file(std::unique_ptr<gguf::File> file) {
  auto m = std::make_unique<ClipModel>();
  m->file = std::move(file);
  try {
    m->hp = read_hparams(*m->file);
    const TensorList list = list_all_tensors(*m->file, m->hp, m->w);
    const TensorCheck check = check_tensors(*m->file, list);
    if (!check.problems.empty()) {
      std::string msg = "mmproj: " + check.problems[0];
      if (check.problems.size() > 1) msg += " (and " + std::to_string(check.problems.size() - 1) + " more problems)";
      throw Error(msg);
    }
    m->weight_bytes = bind_tensors(*m->file, list, m->weights_ctx);
  } catch (const Error& e) {
    throw Error(m->file->path() + ": " + e.what());
  }
  return m;
}

std::unique_ptr<ClipModel> ClipModel::open(const std::string& path) {
  return from_file(gguf::File::open(path, gguf::LoadMode::Memory));
}

}  // namespace hart::vision
