#include "model/hparams.h"

#include "common/error.h"
#include "gguf/gguf.h"

namespace hart {
namespace {

Arch arch_from_name(const std::string& name) {
  if (name == "llama") return Arch::LLAMA;
  if (name == "qwen2") return Arch::QWEN2;
  if (name == "qwen3") return Arch::QWEN3;
  throw Error("unsupported model architecture '" + name + "' (supported: llama, qwen2, qwen3)");
}

int positive(const std::string& key, int64_t v, int64_t max = 1 << 24) {
  if (v <= 0 || v > max) throw Error(key + " = " + std::to_string(v) + " is out of range");
  return int(v);
}

}  // namespace

HParams read_hparams(const gguf::File& f) {
  HParams hp;
  hp.arch_name = f.require_string("general.architecture");
  hp.arch = arch_from_name(hp.arch_name);
  const std::string a = hp.arch_name + ".";
  auto req = [&](const char* key) { return positive(a + key, f.require_int(a + key)); };
  auto opt = [&](const char* key, int def) {
    auto v = f.get_int(a + key);
    return v ? positive(a + key, *v) : def;
  };

  hp.n_embd = req("embedding_length");
  hp.n_layer = req("block_count");
  hp.n_ff = req("feed_forward_length");
  hp.n_head = req("attention.head_count");
  hp.n_head_kv = opt("attention.head_count_kv", hp.n_head);
  hp.n_ctx_train = opt("context_length", 2048);
  hp.head_dim = opt("attention.key_length", hp.n_embd / hp.n_head);
  hp.n_rot = opt("rope.dimension_count", hp.head_dim);
  hp.rms_eps = float(f.get_float(a + "attention.layer_norm_rms_epsilon").value_or(1e-5));
  hp.rope_base = float(f.get_float(a + "rope.freq_base").value_or(10000.0));
  if (auto type = f.get_string(a + "rope.scaling.type"); type && *type == "linear")
    hp.rope_freq_scale = float(1.0 / f.get_float(a + "rope.scaling.factor").value_or(1.0));
  hp.rope_mode = hp.arch == Arch::LLAMA ? RopeMode::NORMAL : RopeMode::NEOX;

  if (auto n = f.get_int(a + "vocab_size")) hp.n_vocab = positive(a + "vocab_size", *n);
  if (auto v = f.get_int(a + "attention.value_length"); v && *v != hp.head_dim)
    throw Error("attention.value_length != key_length is not supported");
  if (hp.n_head % hp.n_head_kv != 0)
    throw Error("head_count " + std::to_string(hp.n_head) + " is not a multiple of head_count_kv " +
                std::to_string(hp.n_head_kv));
  if (hp.n_rot > hp.head_dim || hp.n_rot % 2 != 0)
    throw Error("rope.dimension_count " + std::to_string(hp.n_rot) + " does not fit head size " +
                std::to_string(hp.head_dim));
  return hp;
}

}  // namespace hart
