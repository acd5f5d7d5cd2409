// Which type each tensor gets when a model is quantized: llama.cpp's llama-quantize rules
// (src/llama-quant.cpp) for the targets hart supports.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <numeric>

#include "common/error.h"
#include "quant/quant.h"
#include "quant/quantize_model.h"

namespace hart {
namespace {

// llama.cpp's LLAMA_FTYPE numbers of the mixes.
enum Ftype : uint32_t {
  kQ2_K = 10, kQ3_K_S = 11, kQ3_K_M = 12, kQ3_K_L = 13, kQ4_K_M = 15, kQ5_K_M = 17, kIQ2_XXS = 19,
  kIQ2_XS = 20, kQ2_K_S = 21, kIQ3_XS = 22, kIQ3_XXS = 23, kIQ1_S = 24, kIQ4_NL = 25, kIQ3_S = 26,
  kIQ3_M = 27, kIQ2_S = 28, kIQ2_M = 29, kIQ4_XS = 30, kIQ1_M = 31, kTQ1_0 = 36, kTQ2_0 = 37,
  kMXFP4_MOE = 38,
};

// The mixes whose matrices are IQ1 / IQ2 types: llama.cpp treats them as one family.
bool iq1_iq2_mix(uint32_t f) {
  return f == kIQ2_XXS || f == kIQ2_XS || f == kIQ1_S || f == kIQ2_S || f == kIQ2_M || f == kIQ1_M;
}

template <class... T>
bool any_of(uint32_t f, T... fs) {
  return ((f == uint32_t(fs)) || ...);
}

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower((unsigned char)x) == std::tolower((unsigned char)y);
         });
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != s.npos; }

enum class Role { TokenEmbd, Output, AttnV, AttnK, AttnQ, AttnOutput, FfnUp, FfnGate, FfnDown, Other };

Role role_of(std::string_view name) {
  if (name == "output.weight") return Role::Output;
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return Role::TokenEmbd;
  // Fused QKV and MLA's kv_b count as attn_v: they carry the value projection.
  if (contains(name, "attn_qkv.weight") || contains(name, "attn_kv_b.weight") ||
      contains(name, "attn_v.weight"))
    return Role::AttnV;
  if (contains(name, "attn_k.weight")) return Role::AttnK;
  if (contains(name, "attn_q.weight")) return Role::AttnQ;
  if (contains(name, "attn_output.weight")) return Role::AttnOutput;
  if (contains(name, "ffn_up")) return Role::FfnUp;
  if (contains(name, "ffn_gate")) return Role::FfnGate;
  if (contains(name, "ffn_down")) return Role::FfnDown;
  return Role::Other;
}

// ggml_n_dims: trailing dimensions of size 1 do not count.
int effective_dims(const gguf::TensorInfo& t) {
  int n = 1;
  for (int i = 1; i < gguf::kMaxDims; i++)
    if (t.ne[i] > 1) n = i + 1;
  return n;
}

// Matrices named "*weight" are converted, except the small or sensitive ones llama.cpp keeps.
bool convertible(const gguf::TensorInfo& t) {
  const std::string_view n = t.name;
  if (effective_dims(t) < 2 || !n.ends_with("weight")) return false;
  if (n == "position_embd.weight" || n == "token_types.weight") return false;
  static constexpr std::string_view kKept[] = {
      "_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
      "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight",
      "indexer.q_proj.weight", "attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.",
      "sam.net_", ".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook", "mm.a.code_embd",
      "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight",
      "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight",
      "time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight", "time_mix_g2.weight",
      "time_mix_decay_w1.weight", "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight"};
  return std::none_of(std::begin(kKept), std::end(kKept), [&](auto k) { return contains(n, k); });
}

int layer_of(const std::string& name) {
  int layer = -1;
  return std::sscanf(name.c_str(), "blk.%d.", &layer) == 1 ? layer : -1;
}

// The model facts llama.cpp's rules look at. An absent or odd-typed key reads as `fallback`.
int64_t int_or(const gguf::File& f, const std::string& key, int64_t fallback) {
  try {
    return f.get_int(key).value_or(fallback);
  } catch (const Error&) {
    return fallback;
  }
}

struct Model {
  std::string arch;
  int n_layer = 0, n_expert = 0, n_attn_v = 0;
  int64_t n_gqa = 0;            // query heads per KV head
  bool tied_embeddings = true;  // no output.weight: token_embd doubles as the output matrix
  bool is_70b = false;          // llama.cpp's LLM_TYPE_70B: 8 heads share each attn_v
  bool has_imatrix = false;     // an importance matrix will weight the quantization
};

Model describe(const gguf::File& in, std::span<const gguf::TensorInfo> tensors) {
  Model m;
  m.arch = in.get_string("general.architecture").value_or("");
  int max_layer = -1;
  for (const auto& t : tensors) {
    max_layer = std::max(max_layer, layer_of(t.name));
    if (role_of(t.name) == Role::Output) m.tied_embeddings = false;
    if (role_of(t.name) == Role::AttnV) m.n_attn_v++;
  }
  m.n_layer = int(int_or(in, m.arch + ".block_count", max_layer + 1));
  m.n_expert = int(int_or(in, m.arch + ".expert_count", 0));
  const int64_t heads = int_or(in, m.arch + ".attention.head_count", 0);
  const int64_t kv_heads = int_or(in, m.arch + ".attention.head_count_kv", heads);
  m.is_70b = m.arch == "llama" && m.n_layer == 80 && heads != kv_heads;
  m.n_gqa = kv_heads > 0 ? heads / kv_heads : 0;
  return m;
}

// The layers that get more bits in the _M mixes: the first and last eighth, and every third
// layer in between.
bool use_more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// llama_tensor_get_type_impl's rules for the IQ1 / IQ2 mixes (the matrices other than the
// embeddings and the output).
Type iq1_iq2_type(const Model& m, uint32_t ftype, Role role, int index, Type type) {
  const bool iq2_s = ftype == kIQ2_S || ftype == kIQ2_M;
  switch (role) {
    case Role::AttnV: return m.n_gqa >= 4 || m.n_expert >= 4 ? Type::Q4_K : iq2_s ? Type::IQ3_S : Type::Q2_K;
    case Role::AttnK: return m.n_expert == 8 ? Type::Q4_K : type;
    case Role::FfnDown: return index < m.n_layer / 8 ? (iq2_s ? Type::IQ3_S : Type::Q2_K) : type;
    case Role::AttnOutput:
      if (m.n_expert == 8) return Type::Q5_K;
      return ftype == kIQ1_S || ftype == kIQ1_M ? Type::IQ2_XXS : iq2_s ? Type::IQ3_S : type;
    default: return type;
  }
}

// llama_tensor_get_type_impl, reduced to the branches reachable from hart's targets. `index` is
// the tensor's position among attn_v tensors (AttnV) or its layer (FFN tensors); `experts` says
// the tensor stacks experts (a third dimension).
Type mixed_type(const Model& m, uint32_t ftype, Role role, int64_t ncols, int index, bool experts, Type type) {
  const bool falcon = m.arch == "falcon";
  if (ftype == kMXFP4_MOE) return experts ? type : Type::Q8_0;  // MXFP4 experts, Q8_0 for the rest
  const bool first_eighth = index < m.n_layer / 8;
  switch (role) {
    case Role::Output:
    case Role::TokenEmbd:
      if (role == Role::TokenEmbd && !m.tied_embeddings) {
        if (any_of(ftype, kIQ2_XXS, kIQ2_XS, kIQ1_S, kIQ1_M)) return Type::Q2_K;
        if (any_of(ftype, kIQ2_S, kIQ2_M, kIQ3_XXS)) return Type::IQ3_S;
        return ftype == kTQ1_0 || ftype == kTQ2_0 ? Type::Q4_K : type;
      }
      if (falcon || ncols % type_info(type).block_size != 0) return Type::Q8_0;
      if (iq1_iq2_mix(ftype) || ftype == kIQ3_XXS) return Type::Q5_K;
      return type == Type::Q8_0 ? type : Type::Q6_K;
    default:
      break;
  }
  if (iq1_iq2_mix(ftype)) return iq1_iq2_type(m, ftype, role, index, type);
  switch (role) {
    case Role::AttnV:
      switch (ftype) {
        case kQ2_K: type = m.n_gqa >= 4 ? Type::Q4_K : Type::Q3_K; break;
        case kQ2_K_S: if (m.n_gqa >= 4) type = Type::Q4_K; break;
        case kIQ3_XXS: type = m.n_gqa >= 4 ? Type::Q4_K : !m.has_imatrix ? Type::IQ3_S : Type::IQ3_XXS; break;
        case kIQ3_XS: case kIQ3_S: if (m.n_gqa >= 4) type = Type::Q4_K; break;
        case kIQ3_M: type = Type::Q4_K; break;
        case kQ3_K_M: type = index < 2 ? Type::Q5_K : Type::Q4_K; break;
        case kQ3_K_L: type = Type::Q5_K; break;
        case kIQ4_NL: case kIQ4_XS: if (m.n_gqa >= 4) type = Type::Q5_K; break;
        case kQ4_K_M: case kQ5_K_M: if (use_more_bits(index, m.n_attn_v)) type = Type::Q6_K; break;
      }
      if (m.is_70b && (type == Type::Q3_K || type == Type::Q4_K)) type = Type::Q5_K;
      return m.n_expert == 8 ? Type::Q8_0 : type;
    case Role::AttnK:
    case Role::AttnQ:
      if (role == Role::AttnK && m.n_expert == 8) return Type::Q8_0;
      return ftype == kIQ3_XS ? Type::IQ3_XXS : ftype == kIQ3_XXS ? Type::IQ2_S : type;
    case Role::FfnDown:
      switch (ftype) {
        case kQ2_K: return Type::Q3_K;
        case kQ2_K_S: return first_eighth ? Type::Q4_K : type;
        case kIQ3_XXS: return m.has_imatrix ? type : first_eighth ? Type::Q4_K : Type::Q3_K;
        case kQ3_K_M:
          return index < m.n_layer / 16                           ? Type::Q5_K
                 : !falcon || use_more_bits(index, m.n_layer) ? Type::Q4_K
                                                               : Type::Q3_K;
        case kIQ3_M:
          return first_eighth || (m.n_expert == 8 && use_more_bits(index, m.n_layer)) ? Type::Q4_K : type;
        case kQ3_K_L: return falcon ? Type::Q4_K : Type::Q5_K;
        case kQ4_K_M:
          if (falcon)
            return index < m.n_layer / 16 ? Type::Q6_K
                   : use_more_bits(index, m.n_layer) ? Type::Q5_K : Type::Q4_K;
          return use_more_bits(index, m.n_layer) ? Type::Q6_K : type;
        case kIQ4_NL: case kIQ4_XS: return first_eighth && !m.has_imatrix ? Type::Q5_K : type;
        case kQ5_K_M: return use_more_bits(index, m.n_layer) ? Type::Q6_K : type;
      }
      return type;
    case Role::AttnOutput:
      if (falcon) return ftype == kQ3_K_L ? Type::Q4_K : type;
      if (m.n_expert == 8) {
        const bool more = any_of(ftype, kQ2_K, kIQ3_XS, kIQ3_XXS, kQ3_K_S, kQ3_K_M, kIQ4_NL, kQ4_K_M, kIQ3_S,
                                 kIQ3_M, kIQ4_XS);
        return more ? Type::Q5_K : type;
      }
      switch (ftype) {
        case kQ2_K: return Type::Q3_K;
        case kIQ3_XXS: return Type::IQ3_S;
        case kQ3_K_M: case kIQ3_M: return Type::Q4_K;
        case kQ3_K_L: return Type::Q5_K;
      }
      return type;
    case Role::FfnUp:
    case Role::FfnGate:
      return ftype == kIQ3_XS && index >= m.n_layer / 8 && index < 7 * m.n_layer / 8 ? Type::IQ3_XXS : type;
    default:
      return type;
  }
}

// llama.cpp's tensor_requires_imatrix: the very low-bit types, and Q2_K inside a Q2_K_S file;
// never the embeddings or the output matrix.
bool needs_imatrix(Role role, Type type, uint32_t ftype) {
  if (role == Role::TokenEmbd || role == Role::Output) return false;
  switch (type) {
    case Type::IQ3_XXS: case Type::IQ2_XXS: case Type::IQ2_XS: case Type::IQ2_S: case Type::IQ1_M: case Type::IQ1_S:
      return true;
    case Type::Q2_K:
      return ftype == kQ2_K_S;
    default:
      return false;
  }
}

// A row length that is no multiple of the block size: llama.cpp's fallback chain for K-quants
// (then F16). For the 32-blocks llama.cpp has none; hart keeps a float source as it is, else F16.
Type fit_rows(Type want, int64_t ncols, Type source, bool* fell_back) {
  if (ncols % type_info(want).block_size == 0) return want;
  *fell_back = true;
  Type alt;
  switch (want) {
    case Type::Q2_K: case Type::Q3_K: case Type::TQ1_0: case Type::TQ2_0: alt = Type::Q4_0; break;
    case Type::Q4_K: alt = Type::Q5_0; break;
    case Type::Q5_K: alt = Type::Q5_1; break;
    case Type::Q6_K: alt = Type::Q8_0; break;
    case Type::IQ4_XS: case Type::IQ1_S: case Type::IQ1_M: case Type::IQ2_XXS: case Type::IQ2_XS: case Type::IQ2_S:
    case Type::IQ3_XXS: case Type::IQ3_S:
      alt = Type::IQ4_NL;
      break;
    default:
      return source == Type::F32 || source == Type::BF16 ? source : Type::F16;
  }
  return ncols % type_info(alt).block_size == 0 ? alt : Type::F16;
}

}  // namespace

const std::vector<QuantizeTarget>& quantize_targets() {
  static const std::vector<QuantizeTarget> targets = {
      {"F32", Type::F32, 0, true},     {"F16", Type::F16, 1, true},
      {"BF16", Type::BF16, 32, true},  {"Q8_0", Type::Q8_0, 7, true},
      {"Q4_0", Type::Q4_0, 2, true},   {"Q4_1", Type::Q4_1, 3, true},
      {"Q5_0", Type::Q5_0, 8, true},   {"Q5_1", Type::Q5_1, 9, true},
      {"Q4_K", Type::Q4_K, 14, false}, {"Q5_K", Type::Q5_K, 16, false},
      {"Q6_K", Type::Q6_K, 18, true},  {"Q4_K_M", Type::Q4_K, kQ4_K_M, true},
      {"Q5_K_M", Type::Q5_K, kQ5_K_M, true}, {"Q2_K", Type::Q2_K, kQ2_K, true},
      {"Q2_K_S", Type::Q2_K, kQ2_K_S, true}, {"Q3_K_S", Type::Q3_K, kQ3_K_S, true},
      {"Q3_K_M", Type::Q3_K, kQ3_K_M, true}, {"Q3_K_L", Type::Q3_K, kQ3_K_L, true},
      {"IQ4_XS", Type::IQ4_XS, kIQ4_XS, true}, {"TQ1_0", Type::TQ1_0, kTQ1_0, true},
      {"TQ2_0", Type::TQ2_0, kTQ2_0, true},    {"MXFP4_MOE", Type::MXFP4, kMXFP4_MOE, true},
      {"IQ4_NL", Type::IQ4_NL, kIQ4_NL, true}, {"IQ2_XXS", Type::IQ2_XXS, kIQ2_XXS, true},
      {"IQ2_XS", Type::IQ2_XS, kIQ2_XS, true}, {"IQ2_S", Type::IQ2_XS, kIQ2_S, true},
      {"IQ2_M", Type::IQ2_S, kIQ2_M, true},    {"IQ3_XXS", Type::IQ3_XXS, kIQ3_XXS, true},
      {"IQ3_XS", Type::IQ3_S, kIQ3_XS, true},  {"IQ3_S", Type::IQ3_S, kIQ3_S, true},
      {"IQ3_M", Type::IQ3_S, kIQ3_M, true},    {"IQ1_S", Type::IQ1_S, kIQ1_S, true},
      {"IQ1_M", Type::IQ1_M, kIQ1_M, true},
  };
  return targets;
}

const QuantizeTarget* find_quantize_target(std::string_view name) {
  for (const auto& t : quantize_targets())
    if (iequal(t.name, name)) return &t;
  return nullptr;
}

std::vector<TensorPlan> plan_quantization(const gguf::File& in, const QuantizeTarget& target, bool has_imatrix) {
  return plan_quantization(in, in.tensors(), target, has_imatrix);
}

std::vector<TensorPlan> plan_quantization(const gguf::File& meta, std::span<const gguf::TensorInfo> tensors,
                                          const QuantizeTarget& target, bool has_imatrix) {
  Model model = describe(meta, tensors);
  model.has_imatrix = has_imatrix;

  // llama.cpp counts attn_v tensors in its (layer, name) order.
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int la = layer_of(tensors[a].name), lb = layer_of(tensors[b].name);
    return la != lb ? la < lb : tensors[a].name < tensors[b].name;
  });
  std::vector<int> attn_v_rank(tensors.size(), 0);
  int n_v = 0;
  for (size_t i : order)
    if (role_of(tensors[i].name) == Role::AttnV) attn_v_rank[i] = n_v++;

  std::vector<TensorPlan> plan;
  plan.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); i++) {
    const gguf::TensorInfo& t = tensors[i];
    TensorPlan p{t.type, false, false};
    if (convertible(t)) {
      p.type = target.type;
      const Role role = role_of(t.name);
      if (type_info(target.type).quantized) {
        const int index = role == Role::AttnV ? attn_v_rank[i] : layer_of(t.name);
        if (target.mix) p.type = mixed_type(model, target.file_type, role, t.ne[0], index, t.ne[2] > 1, p.type);
        p.type = fit_rows(p.type, t.ne[0], t.type, &p.fallback);
      }
      p.needs_imatrix = needs_imatrix(role, p.type, target.file_type);
    }
    if (p.type != t.type && (!can_dequantize(t.type) || !can_quantize(p.type)))
      throw Error("tensor " + t.name + ": cannot convert " + std::string(type_name(t.type)) +
                  " to " + std::string(type_name(p.type)));
    plan.push_back(p);
  }
  return plan;
}

}  // namespace hart
