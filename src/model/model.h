// A loaded model: hyper-parameters plus weight tensors that point into the GGUF file's bytes
// (used in place, no conversion), bound through its architecture's tensor list.
#pragma once

#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gguf/gguf.h"
#include "graph/graph.h"
#include "model/hparams.h"
#include "model/tensor_list.h"
#include "model/weights.h"

namespace hart {

struct LoraAdapter;

struct Model {
  std::unique_ptr<gguf::File> file;
  HParams hp;
  Context weights_ctx;     // leaf tensors over the file's bytes
  Weights w;
  size_t weight_bytes = 0;  // bytes of all weight tensors used
  // LoRA adapters (model/lora.h), loaded before any session or engine runs the model; their
  // index here is the adapter id of the CLI and the server, and of Batch::lora's scales.
  std::vector<std::shared_ptr<const LoraAdapter>> loras;

  // The bound weight of that GGUF name, else nullptr.
  Tensor* tensor(std::string_view name) const {
    auto it = by_name.find(std::string(name));
    return it == by_name.end() ? nullptr : it->second;
  }
  std::unordered_map<std::string, Tensor*> by_name;

  // Takes ownership of an opened file; checks every tensor against the architecture's list
  // (presence, shape, type; no tensor left unaccounted for).
  static std::unique_ptr<Model> from_file(std::unique_ptr<gguf::File> file);
};

// Weight bytes one decode step reads: every matrix once; of an embedding table only a row,
// unless it doubles as the output matrix; of a MoE layer's experts only the n_expert_used a
// token picks; nothing of the multi-token-prediction blocks (only draft-mtp runs them).
struct DecodeReads {
  size_t total = 0;          // all weight bytes one token reads
  size_t experts = 0;        // of which expert matrices (the chosen experts of every MoE layer)
  size_t experts_stored = 0;  // all experts' bytes, chosen or not
};
DecodeReads decode_reads(const Model& m);

// How a file compares with what its architecture's loader expects (hart info): the
// architecture, why its hyper-parameters cannot be read (else empty), and the tensor check.
struct FileCheck {
  std::string arch;
  std::string error;
  TensorCheck tensors;
};
FileCheck check_model_file(const gguf::File& f);

}  // namespace hart
