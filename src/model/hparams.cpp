#include "model/hparams.h"

#include <cmath>

#include "common/error.h"
#include "gguf/gguf.h"
#include "model/arch.h"

namespace hart {
namespace {

constexpr int64_t kMaxSize = 1 << 24;

int checked(const std::string& key, int64_t v, int64_t min = 1) {
  if (v < min || v > kMaxSize) throw Error(key + " = " + std::to_string(v) + " is out of range");
  return int(v);
}

RopeScaling rope_scaling_from(const std::string& key, const std::string& name) {
  if (name == "none") return RopeScaling::NONE;
  if (name == "linear") return RopeScaling::LINEAR;
  if (name == "yarn") return RopeScaling::YARN;
  if (name == "longrope") return RopeScaling::LONGROPE;
  throw Error(key + " = '" + name + "' is not a RoPE scaling type (none, linear, yarn, longrope)");
}

}  // namespace

float HParams::kq_scale(int il) const {
  return attention_scale != 0 ? attention_scale : 1.0f / std::sqrt(float(layers[size_t(il)].head_dim));
}

KeyReader::KeyReader(const gguf::File& f, std::string arch) : f_(f), arch_(std::move(arch)) {}

int KeyReader::req_int(const char* key) const { return checked(full(key), f_.require_int(full(key))); }

std::optional<int64_t> KeyReader::opt_int(const char* key) const { return f_.get_int(full(key)); }

float KeyReader::req_float(const char* key) const { return float(f_.require_float(full(key))); }

std::optional<float> KeyReader::opt_float(const char* key) const {
  if (auto v = f_.get_float(full(key))) return float(*v);
  return std::nullopt;
}

std::optional<bool> KeyReader::opt_bool(const char* key) const { return f_.get_bool(full(key)); }

std::optional<std::string> KeyReader::opt_string(const char* key) const { return f_.get_string(full(key)); }

std::optional<std::vector<int64_t>> KeyReader::opt_array(const char* key) const {
  const std::string k = full(key);
  const gguf::Value* v = f_.find(k);
  if (!v || !std::holds_alternative<std::shared_ptr<gguf::Array>>(*v)) return std::nullopt;
  const gguf::Array& a = *std::get<std::shared_ptr<gguf::Array>>(*v);
  if (a.elem_type == gguf::ValueType::BOOL) {  // gemma4 writes its layer pattern as bools
    std::vector<int64_t> out;
    for (const gguf::Value& item : a.items) out.push_back(std::get<bool>(item) ? 1 : 0);
    return out;
  }
  return f_.get_int_array(k);
}

std::optional<std::vector<int64_t>> KeyReader::per_layer(const char* key, int n_layer) const {
  if (auto a = opt_array(key)) {
    if (int(a->size()) != n_layer)
      throw Error(full(key) + " has " + std::to_string(a->size()) + " entries for " + std::to_string(n_layer) +
                  " layers");
    return a;
  }
  if (auto v = opt_int(key)) return std::vector<int64_t>(size_t(n_layer), *v);
  return std::nullopt;
}

void read_swa_pattern(const KeyReader& k, HParams& hp, int n_pattern, bool dense_first, bool swa_rope) {
  std::vector<int64_t> sliding(size_t(hp.n_layer), 0);
  if (auto a = k.opt_array("attention.sliding_window_pattern")) {
    if (int(a->size()) > hp.n_layer)
      throw Error(hp.arch_name + ".attention.sliding_window_pattern has " + std::to_string(a->size()) +
                  " entries for " + std::to_string(hp.n_layer) + " layers");
    std::copy(a->begin(), a->end(), sliding.begin());
  } else {
    const int64_t n = k.opt_int("attention.sliding_window_pattern").value_or(n_pattern);
    for (int il = 0; il < hp.n_layer; il++)
      sliding[size_t(il)] = n == 0 || (dense_first ? il % n != 0 : il % n < n - 1);
  }
  const float base_swa = k.opt_float("rope.freq_base_swa").value_or(10000.0f);
  for (int il = 0; il < hp.n_layer; il++) {
    LayerConfig& l = hp.layers[size_t(il)];
    if (!sliding[size_t(il)] || l.attn == AttnKind::NONE) continue;
    l.attn = AttnKind::SLIDING;
    if (swa_rope) {
      l.rope_base = base_swa;
      l.rope_freq_scale = 1.0f;
    }
  }
}

void read_moe(const KeyReader& k, HParams& hp, const char* expert_ff_key) {
  const std::string a = hp.arch_name + ".";
  const auto n_expert = k.opt_int("expert_count");
  const auto used = k.per_layer("expert_used_count", hp.n_layer);
  if (!n_expert || !used) throw Error("missing key " + a + (n_expert ? "expert_used_count" : "expert_count"));
  hp.n_expert = checked(a + "expert_count", *n_expert);
  const auto ff = expert_ff_key ? k.per_layer(expert_ff_key, hp.n_layer) : std::nullopt;
  for (int il = 0; il < hp.n_layer; il++) {
    LayerConfig& l = hp.layers[size_t(il)];
    l.ffn = FfnKind::MOE;
    l.n_expert_used = checked(a + "expert_used_count", (*used)[size_t(il)]);
    if (l.n_expert_used > hp.n_expert)
      throw Error(a + "expert_used_count " + std::to_string(l.n_expert_used) + " is above expert_count " +
                  std::to_string(hp.n_expert));
    if (ff) l.n_ff = checked(a + expert_ff_key, (*ff)[size_t(il)]);
    else if (expert_ff_key) l.n_ff = checked(a + "feed_forward_length / expert_used_count", l.n_ff / l.n_expert_used);
  }
}

HParams read_hparams(const gguf::File& f) {
  HParams hp;
  hp.arch_name = f.require_string("general.architecture");
  hp.arch = find_arch(hp.arch_name);
  if (!hp.arch)
    throw Error("unsupported model architecture '" + hp.arch_name + "' (supported: " + known_arch_names() + ")");
  const KeyReader k(f, hp.arch_name);
  const std::string a = hp.arch_name + ".";

  hp.n_ctx_train = k.req_int("context_length");
  hp.n_embd = k.req_int("embedding_length");
  hp.n_layer = k.req_int("block_count");
  if (auto n = k.opt_int("vocab_size")) hp.n_vocab = checked(a + "vocab_size", *n);
  if (auto labels = f.get_string_array(a + "classifier.output_labels"); labels && !labels->empty())
    hp.n_cls_out = checked(a + "classifier.output_labels", int64_t(labels->size()));
  const auto n_head = k.per_layer("attention.head_count", hp.n_layer).value_or(std::vector<int64_t>(size_t(hp.n_layer), 0));
  const auto n_head_kv = k.per_layer("attention.head_count_kv", hp.n_layer).value_or(n_head);
  const auto n_ff = k.per_layer("feed_forward_length", hp.n_layer).value_or(std::vector<int64_t>(size_t(hp.n_layer), 0));

  // RoPE, as llama.cpp reads it: a scaling factor of 0 means none (it is written that way by
  // llama.cpp's own model saver), so freq_scale = 1.
  hp.n_ctx_orig = int(k.opt_int("rope.scaling.original_context_length").value_or(hp.n_ctx_train));
  const float rope_base = k.opt_float("rope.freq_base").value_or(10000.0f);
  hp.rope_scaling = rope_scaling_from(a + "rope.scaling.type", k.opt_string("rope.scaling.type").value_or("linear"));
  const float factor = k.opt_float("rope.scaling.factor").value_or(k.opt_float("rope.scale_linear").value_or(0.0f));
  const float freq_scale = hp.rope_scaling == RopeScaling::NONE || factor == 0.0f ? 1.0f : 1.0f / factor;
  hp.rope_attn_factor = k.opt_float("rope.scaling.attn_factor").value_or(1.0f);
  if (hp.rope_scaling == RopeScaling::YARN && freq_scale != 1.0f)
    throw Error(a + "rope.scaling.type 'yarn' (factor " + std::to_string(factor) + ") is not supported yet");

  const int head0 = int(n_head[0]);
  const int head_dim = head0 > 0 ? int(k.opt_int("attention.key_length").value_or(hp.n_embd / head0)) : 0;
  const int value_dim = head0 > 0 ? int(k.opt_int("attention.value_length").value_or(head_dim)) : 0;
  const int n_rot = int(k.opt_int("rope.dimension_count").value_or(head_dim));
  if (value_dim != head_dim)
    throw Error(a + "attention.value_length " + std::to_string(value_dim) + " != key_length " +
                std::to_string(head_dim) + " is not supported");

  hp.n_rot = n_rot;
  hp.layers.resize(size_t(hp.n_layer));
  for (int il = 0; il < hp.n_layer; il++) {
    LayerConfig& l = hp.layers[size_t(il)];
    l.n_head = checked(a + "attention.head_count", n_head[size_t(il)], 0);
    l.n_head_kv = checked(a + "attention.head_count_kv", n_head_kv[size_t(il)], 0);
    l.n_ff = checked(a + "feed_forward_length", n_ff[size_t(il)], 0);
    l.attn = l.n_head > 0 ? AttnKind::FULL : AttnKind::NONE;
    l.head_dim = head_dim;
    l.n_rot = n_rot;
    l.rope_base = rope_base;
    l.rope_freq_scale = freq_scale;
    l.kv_layer = il;
  }
  hp.rope_mode = hp.arch->rope_mode;
  hp.arch->read_hparams(k, hp);

  for (int il = 0; il < hp.n_layer; il++) {
    const LayerConfig& l = hp.layers[size_t(il)];
    if (l.attn == AttnKind::NONE) continue;
    const std::string at = " (layer " + std::to_string(il) + ")";
    if (l.n_head <= 0 || l.n_head_kv <= 0 || l.n_head % l.n_head_kv != 0)
      throw Error("head_count " + std::to_string(l.n_head) + " is not a positive multiple of head_count_kv " +
                  std::to_string(l.n_head_kv) + at);
    if (l.head_dim <= 0 || l.n_rot > l.head_dim || l.n_rot % 2 != 0)
      throw Error("rope.dimension_count " + std::to_string(l.n_rot) + " does not fit head size " +
                  std::to_string(l.head_dim) + at);
    if (l.attn == AttnKind::SLIDING && hp.sliding_window <= 0)
      throw Error("layer " + std::to_string(il) + " slides over a window of " + std::to_string(hp.sliding_window) +
                  " positions");
    if (l.kv_layer < 0 || l.kv_layer > il || !hp.layers[size_t(l.kv_layer)].owns_kv(l.kv_layer) ||
        hp.layers[size_t(l.kv_layer)].attn != l.attn || hp.layers[size_t(l.kv_layer)].n_embd_kv() != l.n_embd_kv())
      throw Error("layer " + std::to_string(il) + " cannot share the K/V of layer " + std::to_string(l.kv_layer));
  }
  return hp;
}

}  // namespace hart
