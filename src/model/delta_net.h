// Qwen 3.5's Gated DeltaNet, the linear-attention layer between its full-attention layers
// (llama.cpp src/models/qwen35.cpp build_layer_attn_linear, delta-net-base.cpp). Shapes: h
// (n_embd, n); key and value heads of ssm.state_size channels. Recurrent state per sequence in
// the layer's two state parts: the convolution's last d_conv - 1 inputs, and the delta-rule
// state (state_size^2 per value head).
#pragma once

#include "model/blocks.h"
#include "model/tensor_list.h"

namespace hart {

// The ssm.* keys, checked, and the layer kinds: attention.recurrent_layers (1: a DeltaNet layer)
// when the file has it, else every full_attention_interval-th layer (default 4) attends and
// the others are DeltaNet layers.
void read_delta_net(const KeyReader& k, HParams& hp);

// The DeltaNet tensors of layer il.
void delta_net_tensors(TensorList& list, const HParams& hp, int il, DeltaNet& d);

// The layer's output (n_embd, n) for its normed input h: the causal convolution over the fused
// q, k, v projection, L2-normed q and k, the gated delta rule from and back into the state, the
// per-head RMS norm gated by silu(z), the output projection.
Tensor* delta_net(Forward& f, int il, Tensor* h);

}  // namespace hart
