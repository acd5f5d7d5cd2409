// Model hyper-parameters: a GGUF file's `<arch>.*` metadata, read as llama.cpp reads it (the keys
// every architecture shares here, each architecture's own in src/model/arch/<name>.cpp), and one
// LayerConfig per layer, so layer variants are data rather than flags in the forward pass.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/tensor.h"

namespace hart::gguf {
class File;
}

namespace hart {

struct Arch;

enum class AttnKind : uint8_t {
  NONE,     // no attention in this layer (a recurrent block takes its place)
  FULL,     // every earlier position of the sequence
  SLIDING,  // the last HParams::sliding_window positions, itself included
};
enum class FfnKind : uint8_t {
  DENSE,  // every token through the one feed-forward block
  MOE,    // a router picks n_expert_used of HParams::n_expert experts per token
};
enum class RecurrentKind : uint8_t {
  NONE,
  SHORT_CONV,  // LFM2: gated causal convolution over the last shortconv_l_cache positions
  RWKV7,       // RWKV-7 time mixing: token shift and the WKV state (wkv_head_size^2 per head)
  DELTA_NET,   // Qwen 3.5's Gated DeltaNet: the convolution's past inputs and the delta-rule state
};
enum class RopeScaling : uint8_t { NONE, LINEAR, YARN, LONGROPE };

struct LayerConfig {
  AttnKind attn = AttnKind::FULL;
  FfnKind ffn = FfnKind::DENSE;
  RecurrentKind recurrent = RecurrentKind::NONE;
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim = 0;  // key and value length
  int n_rot = 0;     // rotated dims per head; 0: this layer applies no RoPE
  float rope_base = 10000.0f;
  float rope_freq_scale = 1.0f;
  int kv_layer = 0;  // the layer whose K/V cache this one attends: itself, or an earlier one
  int n_ff = 0;          // feed-forward size; MOE: each expert's
  int n_expert_used = 0; // MOE: experts per token
  std::vector<int64_t> state;  // recurrent: floats per sequence of each part of its state

  int n_embd_q() const { return n_head * head_dim; }
  int n_embd_kv() const { return n_head_kv * head_dim; }
  bool owns_kv(int il) const { return attn != AttnKind::NONE && kv_layer == il; }
};

struct HParams {
  const Arch* arch = nullptr;
  std::string arch_name;  // general.architecture as written in the file
  int n_vocab = 0;
  int n_cls_out = 1;  // a classifier head's outputs: classifier.output_labels, as llama.cpp counts them
  int n_ctx_train = 0;
  int n_embd = 0;
  int n_layer = 0;
  int n_rot = 0;                // rope.dimension_count of the file (a layer may rotate none)
  float rms_eps = 1e-5f;
  RopeMode rope_mode = RopeMode::NORMAL;
  RopeScaling rope_scaling = RopeScaling::LINEAR;
  int n_ctx_orig = 0;           // rope.scaling.original_context_length
  float rope_attn_factor = 1.0f;
  int sliding_window = 0;       // positions a SLIDING layer attends; 0: none

  // Set by the architectures that have them (0: not used).
  float attention_scale = 0;    // kq scale; 0: 1/sqrt(head_dim)
  float embedding_scale = 0;    // granite
  float residual_scale = 0;     // granite
  float logit_scale = 0;        // granite: logits are divided by it
  float final_softcap = 0;      // gemma: logits = c * tanh(logits / c)
  int n_embd_per_layer = 0;     // gemma4: per-layer embedding inputs
  int shortconv_l_cache = 0;    // lfm2: convolution width (state = width - 1 positions)
  float norm_eps = 1e-5f;       // layer norms (attention.layer_norm_epsilon)
  int n_expert = 0;             // MoE: experts in each MOE layer
  int n_ff_shexp = 0;           // MoE: the shared expert's feed-forward size (granitemoe); 0: none
  // Gated DeltaNet (qwen35): convolution width, key heads (ssm.group_count) and value heads
  // (ssm.time_step_rank), each of ssm.state_size channels.
  int ssm_d_conv = 0, ssm_d_state = 0, ssm_n_k_heads = 0, ssm_n_v_heads = 0;
  int wkv_head_size = 0;        // RWKV-7
  int lora_decay = 0, lora_iclr = 0, lora_value = 0, lora_gate = 0;  // RWKV-7 low-rank sizes

  std::vector<LayerConfig> layers;
  // Multi-token prediction (qwen35: `nextn_predict_layers`): the file's last blocks, after the
  // n_layer of the trunk (block_count counts both, as in llama.cpp), which the forward pass does
  // not run; spec/mtp_drafter.h drafts with them.
  std::vector<LayerConfig> nextn_layers;

  float kq_scale(int il) const;
};

// Reads `<arch>.KEY` metadata with llama.cpp's defaults and checks; every error names the key.
class KeyReader {
 public:
  KeyReader(const gguf::File& f, std::string arch);
  int req_int(const char* key) const;  // a positive integer
  std::optional<int64_t> opt_int(const char* key) const;
  float req_float(const char* key) const;
  std::optional<float> opt_float(const char* key) const;
  std::optional<bool> opt_bool(const char* key) const;
  std::optional<std::string> opt_string(const char* key) const;
  // A key that holds one number for every layer or an array of n_layer (llama.cpp's
  // get_key_or_arr); nullopt when absent.
  std::optional<std::vector<int64_t>> per_layer(const char* key, int n_layer) const;
  std::optional<std::vector<int64_t>> opt_array(const char* key) const;

 private:
  std::string full(const char* key) const { return arch_ + "." + key; }
  const gguf::File& f_;
  std::string arch_;
};

// Marks the sliding-window layers as llama.cpp's load_swa_pattern does: from the per-layer
// array attention.sliding_window_pattern, else from a period n (the key, else n_pattern): every
// layer but the last of each period (or, dense_first, but the first) slides. Sliding layers take
// rope.freq_base_swa (default 10000) and no frequency scaling when `swa_rope` is set.
void read_swa_pattern(const KeyReader& k, HParams& hp, int n_pattern, bool dense_first, bool swa_rope);

// Makes every layer a mixture of expert_count experts, expert_used_count (per layer or one for
// all) of them per token, each with a feed-forward of `expert_ff_key` (per layer or one; when
// absent, feed_forward_length / expert_used_count as llama.cpp's qwen3moe falls back; nullptr:
// the experts are feed_forward_length wide). Both counts must be positive, as llama.cpp's MoE
// architectures require.
void read_moe(const KeyReader& k, HParams& hp, const char* expert_ff_key);

// Reads the keys every architecture shares (block count, sizes, heads, RoPE), fills one
// LayerConfig per layer with them, then lets the file's architecture read its own and adjust the
// layers. Throws hart::Error naming the missing or inconsistent key, or an unsupported architecture.
HParams read_hparams(const gguf::File& f);

}  // namespace hart
