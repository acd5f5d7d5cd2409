// Which type each tensor gets when a model is quantized: llama.cpp's llama-quantize rules
// (src/llama-quant.cpp) for the targets hart supports.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <numeric>

#include "common/error.h"
#include "quant/quant.h"
#include "quant/quantize_model.h"

namespace hart {
namespace {

// llama.cpp's LLAMA_FTYPE numbers.
enum Ftype : uint32_t {
  kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ8_0 = 7, kQ5_0 = 8, kQ5_1 = 9, kQ2_K = 10, kQ3_K_S = 11,
  kQ3_K_M = 12, kQ3_K_L = 13, kQ4_K_S = 14, kQ4_K_M = 15, kQ5_K_S = 16, kQ5_K_M = 17, kQ6_K = 18,
  kIQ2_XXS = 19, kIQ2_XS = 20, kQ2_K_S = 21, kIQ3_XS = 22, kIQ3_XXS = 23, kIQ1_S = 24, kIQ4_NL = 25,
  kIQ3_S = 26, kIQ3_M = 27, kIQ2_S = 28, kIQ2_M = 29, kIQ4_XS = 30, kIQ1_M = 31, kBF16 = 32, kTQ1_0 = 36,
  kTQ2_0 = 37, kMXFP4_MOE = 38, kNVFP4 = 39, kQ1_0 = 40, kQ2_0 = 41,
  kGuessed = 1024,  // LLAMA_FTYPE_GUESSED: the loader's guess, the file had no general.file_type
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
        return any_of(ftype, kTQ1_0, kTQ2_0, kQ2_0) ? Type::Q4_K : type;
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
        case kQ4_K_S: if (index < 4) type = Type::Q5_K; break;
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
        case kQ4_K_S: return !falcon && first_eighth ? Type::Q5_K : type;
        // With an importance matrix the first layers get the next type up (Q4_1 / Q5_1).
        case kQ4_0: return m.has_imatrix && first_eighth ? Type::Q4_1 : type;
        case kQ5_0: return m.has_imatrix && first_eighth ? Type::Q5_1 : type;
      }
      return type;
    case Role::AttnOutput:
      if (falcon) return ftype == kQ3_K_L ? Type::Q4_K : type;
      if (m.n_expert == 8) {
        const bool more = any_of(ftype, kQ2_K, kIQ3_XS, kIQ3_XXS, kQ3_K_S, kQ3_K_M, kIQ4_NL, kQ4_K_S, kQ4_K_M,
                                 kIQ3_S, kIQ3_M, kIQ4_XS);
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

// A row length that is no multiple of the block size: llama.cpp's tensor_type_fallback. The
// 256-element types fall back to a 32-element one, and whatever still does not fit (a 32-element
// type included) becomes F16; a larger block with no fallback (Q1_0's 128) is refused.
Type fit_rows(const gguf::TensorInfo& t, Type want, bool* fell_back) {
  const int64_t ncols = t.ne[0], block = type_info(want).block_size;
  if (ncols % block == 0) return want;
  *fell_back = true;
  Type alt = want;
  switch (want) {
    case Type::Q2_0: case Type::Q2_K: case Type::Q3_K: case Type::TQ1_0: case Type::TQ2_0: alt = Type::Q4_0; break;
    case Type::Q4_K: alt = Type::Q5_0; break;
    case Type::Q5_K: alt = Type::Q5_1; break;
    case Type::Q6_K: alt = Type::Q8_0; break;
    case Type::IQ4_XS: case Type::IQ1_S: case Type::IQ1_M: case Type::IQ2_XXS: case Type::IQ2_XS: case Type::IQ2_S:
    case Type::IQ3_XXS: case Type::IQ3_S:
      alt = Type::IQ4_NL;
      break;
    default:
      if (block > 32)
        throw Error("tensor " + t.name + ": its rows of " + std::to_string(ncols) + " do not fit " +
                    std::string(type_name(want)) + " blocks of " + std::to_string(block) +
                    " and llama-quantize has no fallback type for " + std::string(type_name(want)));
  }
  return ncols % type_info(alt).block_size == 0 ? alt : Type::F16;
}

// Tensors in llama.cpp's order (its model loader's: by layer, the others first, then by name).
std::vector<size_t> llama_cpp_order(std::span<const gguf::TensorInfo> tensors) {
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int la = layer_of(tensors[a].name), lb = layer_of(tensors[b].name);
    return la != lb ? la < lb : tensors[a].name < tensors[b].name;
  });
  return order;
}

// The LLAMA_FTYPE llama.cpp's loader guesses for a file without general.file_type: that of the
// most common tensor type (the first to reach the largest count, in the loader's order), marked
// as guessed.
uint32_t guessed_file_type(std::span<const gguf::TensorInfo> tensors) {
  std::vector<int> count(kTypeCount, 0);
  Type most = Type::F32;
  int most_count = 0;
  for (size_t i : llama_cpp_order(tensors)) {
    const Type t = tensors[i].type;
    if (++count[uint32_t(t)] > most_count) most = t, most_count = count[uint32_t(t)];
  }
  uint32_t f = kF32;
  switch (most) {
    case Type::F16: f = kF16; break;           case Type::BF16: f = kBF16; break;
    case Type::Q4_0: f = kQ4_0; break;         case Type::Q4_1: f = kQ4_1; break;
    case Type::Q5_0: f = kQ5_0; break;         case Type::Q5_1: f = kQ5_1; break;
    case Type::Q8_0: f = kQ8_0; break;         case Type::Q2_K: f = kQ2_K; break;
    case Type::Q3_K: f = kQ3_K_M; break;       case Type::Q4_K: f = kQ4_K_M; break;
    case Type::Q5_K: f = kQ5_K_M; break;       case Type::Q6_K: f = kQ6_K; break;
    case Type::TQ1_0: f = kTQ1_0; break;       case Type::TQ2_0: f = kTQ2_0; break;
    case Type::IQ2_XXS: f = kIQ2_XXS; break;   case Type::IQ2_XS: f = kIQ2_XS; break;
    case Type::IQ2_S: f = kIQ2_S; break;       case Type::IQ3_XXS: f = kIQ3_XXS; break;
    case Type::IQ1_S: f = kIQ1_S; break;       case Type::IQ1_M: f = kIQ1_M; break;
    case Type::IQ4_NL: f = kIQ4_NL; break;     case Type::IQ4_XS: f = kIQ4_XS; break;
    case Type::IQ3_S: f = kIQ3_S; break;       case Type::NVFP4: f = kNVFP4; break;
    case Type::Q1_0: f = kQ1_0; break;         case Type::Q2_0: f = kQ2_0; break;
    default: break;  // F32, and the types the loader does not name (MXFP4, ...)
  }
  return f | kGuessed;
}

// The type a convertible tensor gets: llama_tensor_get_type. The --token-embedding-type and
// --output-tensor-type overrides come first and as they are; a float target (F32, F16, BF16)
// gives every matrix that type; otherwise the mix rules (unless --pure) and then the fallback
// for rows that do not fit. Tied embeddings take the output's rules, and so its override.
Type tensor_type(const Model& m, const gguf::TensorInfo& t, Role role, int index, const QuantizeTarget& target,
                 const QuantizeOptions& options, bool* fell_back) {
  if (role == Role::TokenEmbd && options.token_embedding_type) return *options.token_embedding_type;
  if (role == Role::Output && options.output_tensor_type) return *options.output_tensor_type;
  Type type = target.type;
  if (!type_info(type).quantized) return type;
  if (!options.pure) {
    if (role == Role::TokenEmbd && m.tied_embeddings && options.output_tensor_type)
      type = *options.output_tensor_type;
    else
      type = mixed_type(m, target.file_type, role, t.ne[0], index, t.ne[2] > 1, type);
  }
  return fit_rows(t, type, fell_back);
}

}  // namespace

// llama-quantize's QUANT_OPTIONS, in its order (a numeric id names the first target with it).
const std::vector<QuantizeTarget>& quantize_targets() {
  static const std::vector<QuantizeTarget> targets = {
      {"Q1_0", Type::Q1_0, kQ1_0},          {"Q2_0", Type::Q2_0, kQ2_0},
      {"Q4_0", Type::Q4_0, kQ4_0},          {"Q4_1", Type::Q4_1, kQ4_1},
      {"MXFP4_MOE", Type::MXFP4, kMXFP4_MOE}, {"Q5_0", Type::Q5_0, kQ5_0},
      {"Q5_1", Type::Q5_1, kQ5_1},          {"IQ2_XXS", Type::IQ2_XXS, kIQ2_XXS},
      {"IQ2_XS", Type::IQ2_XS, kIQ2_XS},    {"IQ2_S", Type::IQ2_XS, kIQ2_S},
      {"IQ2_M", Type::IQ2_S, kIQ2_M},       {"IQ1_S", Type::IQ1_S, kIQ1_S},
      {"IQ1_M", Type::IQ1_M, kIQ1_M},       {"TQ1_0", Type::TQ1_0, kTQ1_0},
      {"TQ2_0", Type::TQ2_0, kTQ2_0},       {"Q2_K", Type::Q2_K, kQ2_K},
      {"Q2_K_S", Type::Q2_K, kQ2_K_S},      {"IQ3_XXS", Type::IQ3_XXS, kIQ3_XXS},
      {"IQ3_S", Type::IQ3_S, kIQ3_S},       {"IQ3_M", Type::IQ3_S, kIQ3_M},
      {"Q3_K", Type::Q3_K, kQ3_K_M, "Q3_K_M"}, {"IQ3_XS", Type::IQ3_S, kIQ3_XS},
      {"Q3_K_S", Type::Q3_K, kQ3_K_S},      {"Q3_K_M", Type::Q3_K, kQ3_K_M},
      {"Q3_K_L", Type::Q3_K, kQ3_K_L},      {"IQ4_NL", Type::IQ4_NL, kIQ4_NL},
      {"IQ4_XS", Type::IQ4_XS, kIQ4_XS},    {"Q4_K", Type::Q4_K, kQ4_K_M, "Q4_K_M"},
      {"Q4_K_S", Type::Q4_K, kQ4_K_S},      {"Q4_K_M", Type::Q4_K, kQ4_K_M},
      {"Q5_K", Type::Q5_K, kQ5_K_M, "Q5_K_M"}, {"Q5_K_S", Type::Q5_K, kQ5_K_S},
      {"Q5_K_M", Type::Q5_K, kQ5_K_M},      {"Q6_K", Type::Q6_K, kQ6_K},
      {"Q8_0", Type::Q8_0, kQ8_0},          {"F16", Type::F16, kF16},
      {"BF16", Type::BF16, kBF16},          {"F32", Type::F32, kF32},
      {"COPY", Type::F32, kF32, {}, true},
  };
  return targets;
}

const QuantizeTarget* find_quantize_target(std::string_view name) {
  for (const auto& t : quantize_targets())
    if (iequal(t.name, name)) return &t;
  // llama-quantize also takes the LLAMA_FTYPE number (COPY has none of its own).
  uint32_t id = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
  if (name.empty() || ec != std::errc() || end != name.data() + name.size()) return nullptr;
  for (const auto& t : quantize_targets())
    if (t.file_type == id) return &t;
  return nullptr;
}

uint32_t output_file_type(const gguf::File& in, const QuantizeTarget& target) {
  if (!target.copy) return target.file_type;
  const int64_t f = int_or(in, "general.file_type", -1);
  return f >= 0 ? uint32_t(f) : guessed_file_type(in.tensors());
}

std::vector<TensorPlan> plan_quantization(const gguf::File& in, const QuantizeTarget& target,
                                          const QuantizeOptions& options, bool has_imatrix) {
  return plan_quantization(in, in.tensors(), target, options, has_imatrix);
}

std::vector<TensorPlan> plan_quantization(const gguf::File& meta, std::span<const gguf::TensorInfo> tensors,
                                          const QuantizeTarget& target, const QuantizeOptions& options,
                                          bool has_imatrix) {
  Model model = describe(meta, tensors);
  model.has_imatrix = has_imatrix;

  // llama.cpp counts attn_v tensors in its order.
  std::vector<int> attn_v_rank(tensors.size(), 0);
  int n_v = 0;
  for (size_t i : llama_cpp_order(tensors))
    if (role_of(tensors[i].name) == Role::AttnV) attn_v_rank[i] = n_v++;

  std::vector<TensorPlan> plan;
  plan.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); i++) {
    const gguf::TensorInfo& t = tensors[i];
    TensorPlan p{t.type, false, false};
    const bool kept = target.copy || (options.leave_output_tensor && t.name == "output.weight");
    if (!kept && convertible(t)) {
      const Role role = role_of(t.name);
      const int index = role == Role::AttnV ? attn_v_rank[i] : layer_of(t.name);
      p.type = tensor_type(model, t, role, index, target, options, &p.fallback);
      p.needs_imatrix = needs_imatrix(role, p.type, target.file_type);
    }
    if (p.type == t.type) {
      plan.push_back(p);
      continue;
    }
    if (!can_dequantize(t.type) || !can_quantize(p.type) || !type_supported(p.type))
      throw Error("tensor " + t.name + ": cannot convert " + std::string(type_name(t.type)) + " to " +
                  std::string(type_name(p.type)));
    // Only a type given by --output-tensor-type / --token-embedding-type can miss the rows.
    if (t.ne[0] % type_info(p.type).block_size != 0)
      throw Error("tensor " + t.name + ": its rows of " + std::to_string(t.ne[0]) + " do not fit " +
                  std::string(type_name(p.type)) + " blocks of " + std::to_string(type_info(p.type).block_size));
    plan.push_back(p);
  }
  return plan;
}

}  // namespace hart
