#include "model/synthetic.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include "common/error.h"
#include "quant/quant.h"
#include "quant/quantize_model.h"
#include "model/arch.h"
#include "model/hparams.h"
#include "model/tensor_list.h"

namespace hart {
namespace {

struct Shape {
  const char* name;
  const char* arch;
  int n_vocab, n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_ctx;
  float rope_base, rms_eps;
  bool tied;
  std::vector<gguf::KeyValue> extra = {};  // `<arch>.KEY` values beyond the shared ones
};

gguf::Value u32_array(std::vector<uint32_t> v) {
  auto a = std::make_shared<gguf::Array>();
  a->elem_type = gguf::ValueType::UINT32;
  for (uint32_t x : v) a->items.emplace_back(x);
  return a;
}

// LFM2-350M's layers: attention at 2, 5, 8, 10, 12, 14 (8 KV heads), short convolution elsewhere.
std::vector<uint32_t> lfm2_350m_kv_heads() {
  std::vector<uint32_t> kv(16, 0);
  for (int il : {2, 5, 8, 10, 12, 14}) kv[size_t(il)] = 8;
  return kv;
}

// Shapes of the published models (config.json of each).
const Shape kShapes[] = {
    {"smollm2-135m", "llama", 49152, 576, 30, 9, 3, 64, 1536, 8192, 100000.0f, 1e-5f, true},
    {"smollm2-360m", "llama", 49152, 960, 32, 15, 5, 64, 2560, 8192, 100000.0f, 1e-5f, true},
    {"tinyllama-1.1b", "llama", 32000, 2048, 22, 32, 4, 64, 5632, 2048, 10000.0f, 1e-5f, false},
    {"llama-3.2-1b", "llama", 128256, 2048, 16, 32, 8, 64, 8192, 131072, 500000.0f, 1e-5f, true},
    {"qwen2.5-0.5b", "qwen2", 151936, 896, 24, 14, 2, 64, 4864, 32768, 1000000.0f, 1e-6f, true},
    {"qwen3-0.6b", "qwen3", 151936, 1024, 28, 16, 8, 128, 3072, 40960, 1000000.0f, 1e-6f, true},
    // Gemma 3: 5 sliding-window layers (512 positions, RoPE base 10000) to 1 global (1e6).
    {"gemma-3-270m", "gemma3", 262144, 640, 18, 4, 1, 256, 2048, 32768, 1000000.0f, 1e-6f, true,
     {{"attention.sliding_window", uint32_t(512)}, {"attention.sliding_window_pattern", uint32_t(6)},
      {"rope.freq_base_swa", 10000.0f}}},
    {"gemma-3-1b", "gemma3", 262144, 1152, 26, 4, 1, 256, 6912, 32768, 1000000.0f, 1e-6f, true,
     {{"attention.sliding_window", uint32_t(512)}, {"attention.sliding_window_pattern", uint32_t(6)},
      {"rope.freq_base_swa", 10000.0f}}},
    {"smollm3-3b", "smollm3", 128256, 2048, 36, 16, 4, 128, 11008, 65536, 5000000.0f, 1e-6f, true},
    // Granite 3.3 2B's multipliers: embedding 12, residual 0.22, attention 1/64, logits / 8.
    {"granite-3.3-2b", "granite", 49159, 2048, 40, 32, 8, 64, 8192, 131072, 10000000.0f, 1e-5f, true,
     {{"embedding_scale", 12.0f}, {"residual_scale", 0.22f}, {"attention.scale", 0.015625f}, {"logit_scale", 8.0f}}},
    {"lfm2-350m", "lfm2", 65536, 1024, 16, 16, 8, 64, 4608, 128000, 1000000.0f, 1e-5f, true,
     {{"shortconv.l_cache", uint32_t(3)}, {"attention.head_count_kv", u32_array(lfm2_350m_kv_heads())}}},
    {"phi-3-mini", "phi3", 32064, 3072, 32, 32, 32, 96, 8192, 4096, 10000.0f, 1e-5f, false},
    // RWKV7-World: heads of 64; the low-rank sizes RWKV-LM derives from n_embd.
    {"rwkv7-0.1b", "rwkv7", 65536, 768, 12, 12, 12, 64, 3072, 1048576, 10000.0f, 1e-5f, false,
     {{"wkv.head_size", uint32_t(64)}, {"attention.layer_norm_epsilon", 1e-5f}, {"token_shift_count", uint32_t(2)},
      {"attention.decay_lora_rank", uint32_t(64)}, {"attention.iclr_lora_rank", uint32_t(64)},
      {"attention.value_residual_mix_lora_rank", uint32_t(32)}, {"attention.gate_lora_rank", uint32_t(128)}}},
    // Qwen 3.5 0.8B: DeltaNet layers (16 key and value heads of 128) and every 4th a gated
    // attention layer (8 heads of 256, 2 KV heads, a quarter of each head rotated).
    {"qwen3.5-0.8b", "qwen35", 248320, 1024, 24, 8, 2, 256, 3584, 262144, 10000000.0f, 1e-6f, true,
     {{"rope.dimension_count", uint32_t(64)}, {"rope.dimension_sections", u32_array({11, 11, 10, 0})},
      {"full_attention_interval", uint32_t(4)}, {"ssm.conv_kernel", uint32_t(4)}, {"ssm.state_size", uint32_t(128)},
      {"ssm.group_count", uint32_t(16)}, {"ssm.time_step_rank", uint32_t(16)}, {"ssm.inner_size", uint32_t(2048)}}},
    // Mixtures of experts (n_ff: each expert's).
    {"olmoe-1b-7b", "olmoe", 50304, 2048, 16, 16, 16, 128, 1024, 4096, 10000.0f, 1e-5f, false,
     {{"expert_count", uint32_t(64)}, {"expert_used_count", uint32_t(8)}}},
    {"granite-3.1-1b-a400m", "granitemoe", 49155, 1024, 24, 16, 8, 64, 512, 131072, 10000.0f, 1e-6f, true,
     {{"expert_count", uint32_t(32)}, {"expert_used_count", uint32_t(8)}, {"embedding_scale", 12.0f},
      {"residual_scale", 0.22f}, {"attention.scale", 0.015625f}, {"logit_scale", 6.0f}}},
    {"qwen3-30b-a3b", "qwen3moe", 151936, 2048, 48, 32, 4, 128, 6144, 40960, 1000000.0f, 1e-6f, false,
     {{"expert_count", uint32_t(128)}, {"expert_used_count", uint32_t(8)},
      {"expert_feed_forward_length", uint32_t(768)}}},
    {"rwkv7-1.5b", "rwkv7", 65536, 2048, 24, 32, 32, 64, 8192, 1048576, 10000.0f, 1e-5f, false,
     {{"wkv.head_size", uint32_t(64)}, {"attention.layer_norm_epsilon", 1e-5f}, {"token_shift_count", uint32_t(2)},
      {"attention.decay_lora_rank", uint32_t(96)}, {"attention.iclr_lora_rank", uint32_t(96)},
      {"attention.value_residual_mix_lora_rank", uint32_t(64)}, {"attention.gate_lora_rank", uint32_t(256)}}},
};

const Shape& find_shape(std::string_view name) {
  for (const Shape& s : kShapes)
    if (name == s.name) return s;
  std::string known;
  for (const Shape& s : kShapes) known += std::string(known.empty() ? "" : ", ") + s.name;
  throw Error("unknown synthetic model '" + std::string(name) + "' (known: " + known + ")");
}

// SplitMix64: a fast, well-mixed generator; weights need speed, not cryptographic quality.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float uniform() { return float(next() >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f; }  // [-1, 1)
};

// A deterministic vocabulary: specials, the 256 byte-fallback tokens, then syllable words.
void add_vocab(gguf::Writer& w, int n_vocab) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {2, 3, 3};
  for (int b = 0; b < 256; b++) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    tokens.push_back(buf);
    types.push_back(6);
  }
  // Syllables are a consonant onset then one vowel, so every word splits into syllables in
  // exactly one way and no two generated words collide.
  static const char* kOnsets[] = {"b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r",
                                  "s", "t", "v", "w", "z", "st", "th", "ch", "sh", "tr", "br"};
  static const char kVowels[] = "aeiou";
  const int n_syll = 23 * 5;
  for (int i = 0; int(tokens.size()) < n_vocab; i++) {
    std::string word = (i % 2 == 0) ? "\xE2\x96\x81" : "";  // "▁" marks a word start
    for (int k = i / 2 + 1; k > 0; k /= n_syll) {  // bijective base-n_syll digits of k
      const int syl = --k % n_syll;
      word += std::string(kOnsets[syl / 5]) + kVowels[syl % 5];
    }
    tokens.push_back(word);
    types.push_back(1);
  }
  // llama.cpp's vocabulary loader requires this control token in Phi-3 files (it sets the
  // token's attributes by name); the last id, so no other token moves.
  tokens.back() = "<|endoftext|>";
  types.back() = 3;
  std::vector<float> scores(tokens.size());
  for (size_t i = 0; i < scores.size(); i++) scores[i] = -float(i);
  auto arr = [](gguf::ValueType t, auto&& items) {
    auto a = std::make_shared<gguf::Array>();
    a->elem_type = t;
    for (auto& x : items) a->items.emplace_back(x);
    return gguf::Value(a);
  };
  w.set("tokenizer.ggml.model", std::string("llama"));
  w.set("tokenizer.ggml.tokens", arr(gguf::ValueType::STRING, tokens));
  w.set("tokenizer.ggml.scores", arr(gguf::ValueType::FLOAT32, scores));
  w.set("tokenizer.ggml.token_type", arr(gguf::ValueType::INT32, types));
  w.set("tokenizer.ggml.unknown_token_id", uint32_t(0));
  w.set("tokenizer.ggml.bos_token_id", uint32_t(1));
  w.set("tokenizer.ggml.eos_token_id", uint32_t(2));
  w.set("tokenizer.ggml.add_bos_token", true);
  w.set("tokenizer.ggml.add_eos_token", false);
}

struct Builder {
  gguf::Writer w;
  std::vector<std::vector<uint8_t>> blobs;  // tensor data, alive until written
  uint64_t seed = 1;
  // A dry run only lists the tensors (to plan a quantization mix over them); a planned build
  // stores each matrix in the type the plan gave it.
  bool dry = false;
  std::vector<gguf::TensorInfo> listed;
  std::vector<Type> planned;  // by tensor index
  size_t n_tensors = 0;

  // Random weights of std `scale`, stored in `type` (norm weights are ones).
  void tensor(const std::string& name, std::vector<int64_t> ne, Type type, float scale, bool ones = false) {
    const int64_t n_row = ne[0];
    int64_t n_rows = 1;
    for (size_t d = 1; d < ne.size(); d++) n_rows *= ne[d];
    if (!planned.empty()) type = planned.at(n_tensors++);
    if (!ones && n_row % type_info(type).block_size != 0) type = Type::F16;
    if (dry) {
      gguf::TensorInfo& t = listed.emplace_back(gguf::TensorInfo{name, type, uint32_t(ne.size()), {1, 1, 1, 1}, 0, 0, nullptr});
      std::copy(ne.begin(), ne.end(), t.ne);
      return;
    }
    std::vector<uint8_t>& blob = blobs.emplace_back(row_size(type, n_row) * size_t(n_rows));
    const unsigned n_threads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> pool;
    const uint64_t base_seed = seed++;
    // Random weights have no activations to weigh them by: the types whose quantizer needs an
    // importance matrix (IQ2_XXS, IQ2_XS, IQ1_S) get a uniform one.
    const std::vector<float> importance(quantize_needs_importance(type) ? size_t(n_row) : 0, 1.0f);
    for (unsigned t = 0; t < n_threads; t++) {
      pool.emplace_back([&, t] {
        std::vector<float> row(size_t(n_row), 1.0f);
        for (int64_t r = t; r < n_rows; r += n_threads) {
          Rng rng{base_seed * 0x100000001B3ull + uint64_t(r)};
          if (!ones)
            for (float& x : row) x = rng.uniform() * scale * 1.7320508f;  // uniform with std `scale`
          quantize_row(type, row.data(), blob.data() + size_t(r) * row_size(type, n_row), n_row,
                       importance.empty() ? nullptr : importance.data());
        }
      });
    }
    for (auto& th : pool) th.join();
    w.add_tensor(name, type, ne, blob.data(), blob.size());
  }
};

// Metadata and tensors of shape s, every matrix in `type` (or as b.planned says). The tensors
// are the architecture's own list over the hyper-parameters just written, so a synthetic model
// holds exactly what a real file of that architecture does.
void describe(const Shape& s, Type type, Builder& b) {
  gguf::Writer& w = b.w;
  const std::string a = s.arch;
  w.set("general.architecture", a);
  w.set("general.name", std::string("synthetic ") + s.name);
  w.set(a + ".context_length", uint32_t(s.n_ctx));
  w.set(a + ".embedding_length", uint32_t(s.n_embd));
  w.set(a + ".block_count", uint32_t(s.n_layer));
  w.set(a + ".feed_forward_length", uint32_t(s.n_ff));
  w.set(a + ".attention.head_count", uint32_t(s.n_head));
  w.set(a + ".attention.head_count_kv", uint32_t(s.n_head_kv));
  w.set(a + ".attention.key_length", uint32_t(s.head_dim));
  w.set(a + ".attention.value_length", uint32_t(s.head_dim));
  w.set(a + ".rope.dimension_count", uint32_t(s.head_dim));
  w.set(a + ".rope.freq_base", s.rope_base);
  w.set(a + ".attention.layer_norm_rms_epsilon", s.rms_eps);
  for (const gguf::KeyValue& kv : s.extra) w.set(a + "." + kv.key, kv.value);
  add_vocab(w, s.n_vocab);

  const std::unique_ptr<gguf::File> meta = gguf::File::from_bytes(w.to_bytes(), "synthetic");
  HParams hp = read_hparams(*meta);
  hp.n_vocab = s.n_vocab;
  Weights weights;
  weights.layers.resize(size_t(hp.n_layer));
  TensorList list;
  hp.arch->tensors(hp, weights, list);
  for (const TensorSpec& t : list.specs()) {
    const bool untied_output = t.name == "output.weight" && !s.tied;
    if (!t.synthetic && !untied_output) continue;
    const std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
    switch (t.role) {
      case TensorRole::MATRIX: b.tensor(t.name, ne, type, 1.0f / std::sqrt(float(ne[0]))); break;
      case TensorRole::EMBED: b.tensor(t.name, ne, type, 1.0f); break;
      case TensorRole::CONV: b.tensor(t.name, ne, Type::F32, 1.0f / std::sqrt(float(ne[0]))); break;
      case TensorRole::BIAS: b.tensor(t.name, ne, Type::F32, 0.02f); break;
      case TensorRole::NORM:
      case TensorRole::SCALE:
      case TensorRole::FACTORS: b.tensor(t.name, ne, Type::F32, 0, true); break;
    }
  }
}

// What spec asks for: the shape, and either one type for every matrix or a mix's target.
struct Spec {
  const Shape* shape;
  std::optional<Type> type;
  const QuantizeTarget* mix = nullptr;
};

Spec parse_spec(std::string_view spec) {
  const size_t colon = spec.find(':');
  Spec out{&find_shape(spec.substr(0, colon)), std::nullopt};
  const std::string name = colon == std::string_view::npos ? "q8_0" : std::string(spec.substr(colon + 1));
  // "mix:Q2_K": llama-quantize's mix even where its name is also a type's (Q2_K, IQ4_XS, Q6_K, ...).
  if (name.starts_with("mix:")) {
    if (!(out.mix = find_quantize_target(name.substr(4))) || out.mix->copy)
      throw Error("synthetic model mix '" + name.substr(4) + "' is not one hart quantize makes");
    return out;
  }
  if (const std::optional<Type> type = type_from_name(name); type && can_quantize(*type))
    out.type = type;  // a plain type: every matrix in it, as the name says
  else if (!(out.mix = find_quantize_target(name)) || out.mix->copy)  // COPY: a generated model has nothing to copy
    throw Error("synthetic model type '" + name + "' is not one hart can write");
  return out;
}

// The tensors of spec without their data; a mix gets the types `hart quantize --imatrix` would
// give each tensor of an F32 model of that shape (the IQ mixes are made with importance matrices).
std::vector<gguf::TensorInfo> list_tensors(const Spec& spec) {
  Builder dry;
  dry.dry = true;
  describe(*spec.shape, spec.mix ? Type::F32 : *spec.type, dry);
  if (spec.mix) {
    const std::unique_ptr<gguf::File> meta = gguf::File::from_bytes(dry.w.to_bytes(), "synthetic");
    const std::vector<TensorPlan> plan = plan_quantization(*meta, dry.listed, *spec.mix, {}, true);
    for (size_t i = 0; i < plan.size(); i++) dry.listed[i].type = plan[i].type;
  }
  return dry.listed;
}

std::unique_ptr<gguf::Writer> build(std::string_view spec_text, std::vector<std::vector<uint8_t>>& blobs) {
  const Spec spec = parse_spec(spec_text);
  Builder b;
  if (spec.mix)
    for (const gguf::TensorInfo& t : list_tensors(spec)) b.planned.push_back(t.type);
  describe(*spec.shape, spec.mix ? spec.mix->type : *spec.type, b);
  if (spec.mix) b.w.set("general.file_type", spec.mix->file_type);
  blobs = std::move(b.blobs);
  return std::make_unique<gguf::Writer>(std::move(b.w));
}

}  // namespace

std::vector<std::string> synthetic_model_names() {
  std::vector<std::string> names;
  for (const Shape& s : kShapes) names.push_back(s.name);
  return names;
}

std::unique_ptr<gguf::File> make_synthetic_model(std::string_view spec) {
  std::vector<std::vector<uint8_t>> blobs;
  const std::vector<uint8_t> bytes = build(spec, blobs)->to_bytes();
  blobs.clear();
  return gguf::File::from_bytes(bytes, "synthetic:" + std::string(spec));
}

void write_synthetic_model(std::string_view spec, const std::string& path) {
  std::vector<std::vector<uint8_t>> blobs;
  build(spec, blobs)->write(path);
}

std::vector<gguf::TensorInfo> synthetic_model_tensors(std::string_view spec) { return list_tensors(parse_spec(spec)); }

}  // namespace hart
