// An architecture: the GGUF names it answers to, the keys it reads beyond the shared ones, the
// one list of tensors its files hold, and its forward pass. Each lives in one file,
// src/model/arch/<name>.cpp, which defines `const Arch arch_<name>`; the build collects every
// file of that folder into the registry (docs/adding-a-model.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "graph/tensor.h"

namespace hart {

struct HParams;
class KeyReader;
struct Weights;
class TensorList;
struct Forward;

struct Arch {
  std::vector<std::string> names;  // general.architecture values; the first is the canonical one
  RopeMode rope_mode;
  // The architecture's own keys, read after the shared ones; sets the layer kinds.
  void (*read_hparams)(const KeyReader& keys, HParams& hp);
  // Every tensor a file of this architecture may hold, bound to where `w` keeps it.
  void (*tensors)(const HParams& hp, Weights& w, TensorList& list);
  // The forward pass over one batch: returns the logits of the rows Forward::output_rows keeps,
  // or nullptr when the batch asks for none.
  Tensor* (*build)(Forward& f);
};

// nullptr for a name no architecture answers to.
const Arch* find_arch(std::string_view name);
// "llama, qwen2, ..." for error messages.
std::string known_arch_names();

}  // namespace hart
