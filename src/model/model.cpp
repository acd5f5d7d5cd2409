#include "model/model.h"

#include <string>

#include "common/error.h"
#include "quant/quant.h"

namespace hart {
namespace {

// Looks up tensors by name and checks their shapes against the hyper-parameters.
class WeightLoader {
 public:
  explicit WeightLoader(Model& m) : m_(m) {}

  Tensor* get(const std::string& name, std::initializer_list<int64_t> shape, bool required = true) {
    const gguf::TensorInfo* ti = m_.file->find_tensor(name);
    if (!ti) {
      if (required) throw Error("model is missing tensor '" + name + "'");
      return nullptr;
    }
    int64_t want[kMaxDims] = {1, 1, 1, 1};
    int i = 0;
    for (int64_t d : shape) want[i++] = d;
    for (int d = 0; d < kMaxDims; d++)
      if (ti->ne[d] != want[d])
        throw Error("tensor '" + name + "' has shape " + shape_str(ti->ne) + ", expected " +
                    shape_str(want));
    if (!type_supported(ti->type) || !can_dequantize(ti->type))
      throw Error("tensor '" + name + "' has type " + std::string(type_name(ti->type)) +
                  ", which hart does not support");
    Tensor* t = m_.weights.new_leaf(ti->type, std::span<const int64_t>(ti->ne, kMaxDims),
                                    const_cast<uint8_t*>(ti->data));
    t->flags |= kFlagWeight;
    t->set_name("%s", name.c_str());
    m_.weight_bytes += ti->nbytes;
    return t;
  }

 private:
  static std::string shape_str(const int64_t* ne) {
    std::string s = "[";
    for (int d = 0; d < kMaxDims; d++) s += std::to_string(ne[d]) + (d + 1 < kMaxDims ? "," : "]");
    return s;
  }
  Model& m_;
};

}  // namespace

std::unique_ptr<Model> Model::from_file(std::unique_ptr<gguf::File> file) {
  auto m = std::make_unique<Model>();
  m->file = std::move(file);
  HParams& hp = m->hp;
  hp = read_hparams(*m->file);

  const gguf::TensorInfo* embd = m->file->find_tensor("token_embd.weight");
  if (!embd) throw Error("model is missing tensor 'token_embd.weight'");
  if (hp.n_vocab == 0) hp.n_vocab = int(embd->ne[1]);

  WeightLoader w(*m);
  const int64_t d = hp.n_embd, q = hp.n_embd_q(), kv = hp.n_embd_kv(), ff = hp.n_ff;
  m->tok_embd = w.get("token_embd.weight", {d, hp.n_vocab});
  m->output_norm = w.get("output_norm.weight", {d});
  m->output = w.get("output.weight", {d, hp.n_vocab}, false);
  if (!m->output) m->output = m->tok_embd;
  m->rope_freqs = w.get("rope_freqs.weight", {hp.n_rot / 2}, false);

  m->layers.resize(hp.n_layer);
  for (int il = 0; il < hp.n_layer; il++) {
    LayerWeights& l = m->layers[il];
    auto name = [il](const char* what) { return "blk." + std::to_string(il) + "." + what; };
    l.attn_norm = w.get(name("attn_norm.weight"), {d});
    l.wq = w.get(name("attn_q.weight"), {d, q});
    l.wk = w.get(name("attn_k.weight"), {d, kv});
    l.wv = w.get(name("attn_v.weight"), {d, kv});
    l.wo = w.get(name("attn_output.weight"), {q, d});
    const bool biases = hp.arch == Arch::QWEN2;
    l.bq = w.get(name("attn_q.bias"), {q}, biases);
    l.bk = w.get(name("attn_k.bias"), {kv}, biases);
    l.bv = w.get(name("attn_v.bias"), {kv}, biases);
    const bool qk_norm = hp.arch == Arch::QWEN3;
    l.q_norm = w.get(name("attn_q_norm.weight"), {hp.head_dim}, qk_norm);
    l.k_norm = w.get(name("attn_k_norm.weight"), {hp.head_dim}, qk_norm);
    l.ffn_norm = w.get(name("ffn_norm.weight"), {d});
    l.ffn_gate = w.get(name("ffn_gate.weight"), {d, ff});
    l.ffn_up = w.get(name("ffn_up.weight"), {d, ff});
    l.ffn_down = w.get(name("ffn_down.weight"), {ff, d});
  }
  return m;
}

}  // namespace hart
