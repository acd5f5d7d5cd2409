#include "model/mtp_model.h"

#include "common/error.h"

namespace hart {

extern const Arch arch_qwen35_mtp;

bool has_mtp(const Model& m) { return !m.w.nextn.empty(); }

std::unique_ptr<Model> mtp_model(const Model& target) {
  const HParams& thp = target.hp;
  if (!has_mtp(target))
    throw Error("--spec-type draft-mtp needs a model with multi-token-prediction layers (" + thp.arch_name +
                ".nextn_predict_layers above 0); this " + thp.arch_name + " model has none");
  if (thp.nextn_layers.size() != 1)
    throw Error("draft-mtp runs one multi-token-prediction block, as llama.cpp's; this model has " +
                std::to_string(thp.nextn_layers.size()));
  auto m = std::make_unique<Model>();
  m->hp = thp;
  m->hp.arch = &arch_qwen35_mtp;
  m->hp.n_layer = 1;
  m->hp.layers = {thp.nextn_layers[0]};
  m->hp.layers[0].kv_layer = 0;  // its own K/V, layer 0 of this model
  m->hp.nextn_layers.clear();
  m->w = target.w;
  m->w.layers = {target.w.nextn[0]};
  m->w.nextn.clear();
  return m;
}

}  // namespace hart
