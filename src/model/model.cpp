#include "model/model.h"

#include <cstdio>

#include "common/error.h"
#include "model/arch.h"

namespace hart {

namespace {

// The architecture's tensor list over the file's hyper-parameters, bound to `w`.
TensorList list_tensors(const gguf::File& f, HParams& hp, Weights& w) {
  if (hp.n_vocab == 0) {
    const gguf::TensorInfo* embd = f.find_tensor("token_embd.weight");
    if (!embd) throw Error("model is missing tensor 'token_embd.weight'");
    hp.n_vocab = int(embd->ne[1]);
  }
  w.layers.resize(size_t(hp.n_layer));
  TensorList list;
  hp.arch->tensors(hp, w, list);
  return list;
}

}  // namespace

FileCheck check_model_file(const gguf::File& f) {
  FileCheck c;
  c.arch = f.get_string("general.architecture").value_or("");
  try {
    HParams hp = read_hparams(f);
    Weights w;
    c.tensors = check_tensors(f, list_tensors(f, hp, w));
  } catch (const Error& e) {
    c.error = e.what();
  }
  return c;
}

std::unique_ptr<Model> Model::from_file(std::unique_ptr<gguf::File> file) {
  auto m = std::make_unique<Model>();
  m->file = std::move(file);
  HParams& hp = m->hp;
  hp = read_hparams(*m->file);
  const TensorList list = list_tensors(*m->file, hp, m->w);
  const TensorCheck check = check_tensors(*m->file, list);
  if (!check.problems.empty()) {
    std::string msg = hp.arch_name + " model: " + check.problems[0];
    if (check.problems.size() > 1) msg += " (and " + std::to_string(check.problems.size() - 1) + " more problems)";
    throw Error(msg);
  }
  m->weight_bytes = bind_tensors(*m->file, list, m->weights_ctx);
  for (const TensorSpec& s : list.specs())
    if (s.bind && *s.bind) m->by_name.emplace(s.name, *s.bind);
  if (!m->w.output.w) m->w.output.w = m->w.tok_embd;  // tied embeddings
  return m;
}

DecodeReads decode_reads(const Model& m) {
  DecodeReads r;
  r.total = m.weight_bytes;
  for (const auto& [name, t] : m.by_name) {  // the MTP blocks follow the trunk's blocks
    int il = -1;
    if (name.rfind("blk.", 0) == 0 && std::sscanf(name.c_str() + 4, "%d", &il) == 1 && il >= m.hp.n_layer)
      r.total -= t->nbytes();
  }
  for (const Tensor* table : {m.w.tok_embd, m.w.per_layer_tok_embd})
    if (table && table != m.w.output.w) r.total -= table->nbytes() - table->row_bytes();
  for (int il = 0; il < m.hp.n_layer; il++) {
    const LayerConfig& l = m.hp.layers[size_t(il)];
    if (l.ffn != FfnKind::MOE) continue;
    const LayerWeights& L = m.w.layers[size_t(il)];
    for (const Tensor* exps : {L.gate_exps.w, L.up_exps.w, L.gate_up_exps.w, L.down_exps.w}) {
      if (!exps) continue;
      const size_t unread = exps->nbytes() / size_t(m.hp.n_expert) * size_t(m.hp.n_expert - l.n_expert_used);
      r.experts_stored += exps->nbytes();
      r.experts += exps->nbytes() - unread;
      r.total -= unread;
    }
  }
  return r;
}

}  // namespace hart
