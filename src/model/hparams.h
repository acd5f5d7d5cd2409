// Model hyper-parameters, read from a GGUF file's `<arch>.*` metadata.
#pragma once

#include <string>

#include "graph/tensor.h"

namespace hart::gguf {
class File;
}

namespace hart {

enum class Arch { LLAMA, QWEN2, QWEN3 };

struct HParams {
  Arch arch = Arch::LLAMA;
  std::string arch_name;   // general.architecture as written in the file
  int n_vocab = 0;
  int n_ctx_train = 0;
  int n_embd = 0;
  int n_layer = 0;
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim = 0;        // key_length; usually n_embd / n_head (Qwen3 may differ)
  int n_ff = 0;
  int n_rot = 0;           // rotated dims per head
  float rms_eps = 1e-5f;
  float rope_base = 10000.0f;
  float rope_freq_scale = 1.0f;
  RopeMode rope_mode = RopeMode::NORMAL;

  int n_embd_q() const { return n_head * head_dim; }
  int n_embd_kv() const { return n_head_kv * head_dim; }
};

// Throws hart::Error naming the missing or inconsistent key.
HParams read_hparams(const gguf::File& f);

}  // namespace hart
