// The model a draft-mtp drafter runs (spec/mtp_drafter.h): a target's first multi-token-prediction
// block (Qwen 3.5's nextn block, HParams::nextn_layers) as the one layer of a model of its own,
// whose forward pass is that block's graph (arch_qwen35_mtp, src/model/arch/qwen35.cpp), so that
// a Session runs it with a K/V cache of its own, as llama.cpp's MTP context does. Its weights
// are the target's (the same tensors, not copied): the target outlives it.
#pragma once

#include <memory>

#include "model/model.h"

namespace hart {

// Whether the model carries multi-token-prediction blocks.
bool has_mtp(const Model& m);
// Throws hart::Error naming the file's architecture when it has no MTP block, or more than one
// (llama.cpp de3ff81's qwen35 MTP graph, too, runs a single block).
std::unique_ptr<Model> mtp_model(const Model& target);

}  // namespace hart
