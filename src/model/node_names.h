// Graph node names as llama.cpp's graph callback gives them ("Qcur-0", "ffn_out-3",
// "result_norm"), so the ET perf log and profile trace line up with the seed's: `<name>-<layer>`,
// or the bare name outside the layers (il < 0). Leafs (weights, inputs) keep their own names.
#pragma once

#include "graph/tensor.h"

namespace hart {

// Names t (when it is computed, not a leaf) and returns it.
Tensor* named(Tensor* t, const char* name, int il = -1);

// Names t, the product of a weight, after it: a layer weight "blk.<il>.<w>.weight" gives
// llama.cpp's name for w's output (attn_q -> Qcur-<il>, attn_norm -> attn_norm-<il>,
// ffn_up_exps -> ffn_moe_up-<il>; w itself where llama.cpp has no other), a model weight its
// llama.cpp name (output -> result_output). t unchanged when the weight has no GGUF name.
Tensor* named_after(Tensor* t, const Tensor* weight);

// The layer of a weight named "blk.<il>. ...", else -1.
int layer_of(const Tensor* weight);

}  // namespace hart
