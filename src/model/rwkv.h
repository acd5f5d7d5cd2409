// The pieces of RWKV-7 (llama.cpp src/models/rwkv7-base.cpp) that rwkv7 and arwkv7 share. Shapes:
// x (n_embd, n); heads of wkv_head_size channels. Recurrent state per sequence, in the layer's
// state parts (LayerConfig::state): token-shift rows (the previous token's x) and the WKV state.
#pragma once

#include "model/blocks.h"
#include "model/tensor_list.h"

namespace hart {

// (n_embd, n): each token's predecessor's x. The first token of a sequence takes the row state
// part `part` carried from its previous step; the part then keeps the sequence's last row.
Tensor* token_shift(Forward& f, int il, int part, Tensor* x);

// Time mixing of layer il: x the normed input, x_prev its token shift; v_first is layer 0's value
// (set by layer 0, mixed into the later layers' values). `wkv_part`: the state part of the WKV
// state. -> (n_embd, n)
Tensor* rwkv7_time_mix(Forward& f, int il, Tensor* x, Tensor* x_prev, Tensor*& v_first, int wkv_part);

// Channel mixing: value(relu(key(x + (x_prev - x) * lerp_k))^2).
Tensor* rwkv7_channel_mix(Forward& f, int il, Tensor* x, Tensor* x_prev);

// layer_norm(x) * w + b (llama.cpp's LLM_NORM with a bias), eps: HParams::norm_eps.
Tensor* layer_norm(Forward& f, Tensor* x, Tensor* w, Tensor* b);

// The RWKV-7 keys shared by both architectures, and every layer marked as a time-mix layer with
// its state parts: `shifts` token-shift rows, then the WKV state.
void read_rwkv7(const KeyReader& k, HParams& hp, int shifts);

// The time-mix tensors of layer il (the gate is there when attention.gate_lora_rank is set; the
// group norm's weights as ln_need says).
void rwkv7_time_mix_tensors(TensorList& list, const HParams& hp, int il, RwkvTimeMix& t, TensorNeed ln_need);

}  // namespace hart
