#include "model/lora.h"

#include <map>

#include "common/error.h"
#include "quant/quant.h"

namespace hart {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string dims(const Tensor* t) {
  std::string s = "(";
  for (int i = 0; i < kMaxDims && (i < 2 || t->ne[i] != 1); i++) s += (i ? ", " : "") + std::to_string(t->ne[i]);
  return s + ")";
}

}  // namespace

std::shared_ptr<const LoraAdapter> load_lora(const Model& m, const std::string& path, gguf::LoadMode mode) {
  return load_lora(m, gguf::File::open(path, mode));
}

std::shared_ptr<const LoraAdapter> load_lora(const Model& m, std::unique_ptr<gguf::File> file) {
  auto ad = std::make_shared<LoraAdapter>();
  ad->path = file->path();
  const gguf::File& f = *file;
  const auto fail = [&](const std::string& what) { throw Error(ad->path + ": " + what); };
  const std::string type = f.get_string("general.type").value_or("");
  if (type != "adapter")
    fail("not a LoRA adapter (general.type is " + (type.empty() ? std::string("missing") : "'" + type + "'") +
         ", an adapter's is 'adapter')");
  const std::string arch = f.get_string("general.architecture").value_or("");
  if (arch != m.hp.arch_name) fail("an adapter for architecture '" + arch + "', the model is '" + m.hp.arch_name + "'");
  const std::string kind = f.get_string("adapter.type").value_or("");
  if (kind != "lora") fail("adapter.type is '" + kind + "', only 'lora' adapters are supported");
  if (f.find("adapter.alora.invocation_tokens")) fail("activated LoRA (aLoRA) adapters are not supported");
  ad->alpha = float(f.get_float("adapter.lora.alpha").value_or(0.0));

  std::map<std::string, std::pair<const gguf::TensorInfo*, const gguf::TensorInfo*>> ab;
  for (const gguf::TensorInfo& t : f.tensors()) {
    if (ends_with(t.name, ".lora_a")) ab[t.name.substr(0, t.name.size() - 7)].first = &t;
    else if (ends_with(t.name, ".lora_b")) ab[t.name.substr(0, t.name.size() - 7)].second = &t;
    else if (!ends_with(t.name, "_norm.weight"))  // llama.cpp skips norm vectors too
      fail("tensor '" + t.name + "' is neither a .lora_a nor a .lora_b");
  }
  const auto leaf = [&](const gguf::TensorInfo* t) {
    if (!type_supported(t->type) || !can_dequantize(t->type))
      fail("tensor '" + t->name + "' has type " + std::string(type_name(t->type)) + ", which hart does not support");
    Tensor* x = ad->ctx.new_leaf(t->type, std::span<const int64_t>(t->ne, kMaxDims), const_cast<uint8_t*>(t->data));
    x->flags |= kFlagWeight;
    x->set_name("%s", t->name.c_str());
    return x;
  };
  for (const auto& [name, tensors] : ab) {
    if (!tensors.first || !tensors.second) fail("the LoRA pair of '" + name + "' lacks its " + (tensors.first ? "lora_b" : "lora_a"));
    const Tensor* w = m.tensor(name);
    if (!w) fail("tensor '" + name + "' is not in the model (an adapter for another model?)");
    LoraPair p{leaf(tensors.first), leaf(tensors.second)};
    const bool embd = w == m.w.tok_embd && name == "token_embd.weight";
    // token_embd's pair is (rank, n_vocab) and (rank, n_embd): rows of A are looked up.
    const bool fits = embd ? w->ne[0] == p.b->ne[1] && w->ne[1] == p.a->ne[1] && p.a->ne[0] == p.b->ne[0]
                           : w->ne[0] == p.a->ne[0] && w->ne[1] == p.b->ne[1] && p.a->ne[1] == p.b->ne[0] &&
                                 p.a->ne[2] == w->ne[2] && p.b->ne[2] == w->ne[2] && w->ne[3] == 1;
    if (!fits)
      fail("tensor '" + name + "' " + dims(w) + " does not match its LoRA pair " + dims(p.a) + " x " + dims(p.b) +
           " (an adapter for another model?)");
    if (embd) ad->embd = p;
    else ad->pairs.emplace(w, p);
  }
  if (ad->pairs.empty() && !ad->embd.a) fail("the adapter has no LoRA tensors");
  ad->file = std::move(file);
  return ad;
}

}  // namespace hart
