#include "model/node_names.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace hart {
namespace {

// A weight's base name (between "blk.<il>." and ".weight") -> the name llama.cpp gives its output.
struct Alias {
  const char* weight;
  const char* node;
};
constexpr Alias kAliases[] = {
    {"attn_q", "Qcur"},          {"attn_k", "Kcur"},
    {"attn_v", "Vcur"},          {"attn_qkv", "wqkv"},
    {"attn_output", "attn_out"}, {"attn_q_norm", "Qcur_normed"},
    {"attn_k_norm", "Kcur_normed"}, {"post_attention_norm", "attn_post_norm"},
    {"post_ffw_norm", "ffn_post_norm"}, {"ffn_gate_inp", "ffn_moe_logits"},
    {"ffn_up_exps", "ffn_moe_up"},  {"ffn_gate_exps", "ffn_moe_gate"},
    {"ffn_down_exps", "ffn_moe_down"}, {"ffn_gate_up_exps", "ffn_moe_gate_up"},
    {"output", "result_output"}, {"output_norm", "result_norm"},
    {"token_embd", "inp_embd"},
};

std::string alias(std::string_view base) {
  for (const Alias& a : kAliases)
    if (base == a.weight) return a.node;
  return std::string(base);
}

}  // namespace

Tensor* named(Tensor* t, const char* name, int il) {
  if (t->op == Op::NONE) return t;
  if (il < 0) t->set_name("%s", name);
  else t->set_name("%s-%d", name, il);
  return t;
}

int layer_of(const Tensor* weight) {
  const std::string_view w = weight->name;
  return w.starts_with("blk.") ? std::atoi(weight->name + 4) : -1;
}

Tensor* named_after(Tensor* t, const Tensor* weight) {
  std::string_view w = weight->name;
  if (w.empty()) return t;
  if (w.ends_with(".weight")) w.remove_suffix(7);
  const int il = layer_of(weight);
  if (il >= 0) {
    const size_t dot = w.find('.', 4);
    if (dot == std::string_view::npos) return t;
    w.remove_prefix(dot + 1);
  }
  return named(t, alias(w).c_str(), il);
}

}  // namespace hart
