// A multimodal projector file as llama.cpp writes them (`--mmproj`, tools/mtmd/clip.cpp):
// general.architecture "clip", clip.* hyper-parameters, a vision encoder (`v.*` tensors) and a
// projector (`mm.*`) that maps its output to the text model's embedding width. Loaded and checked
// like a model file: every key read is validated, every tensor must be on the projector's list
// with the expected shape and a supported type.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "graph/graph.h"
#include "model/model.h"

namespace hart::vision {

// llama.cpp's projector types (clip.projector_type) that hart computes.
enum class Projector {
  IDEFICS3,  // SmolVLM / Idefics3: SigLIP ViT, pixel shuffle by scale_factor, one linear map
};
const char* projector_name(Projector p);  // as clip.projector_type spells it

// The feed-forward activation: clip.use_gelu -> GELU (tanh form), clip.use_silu -> SILU, else
// GELU_QUICK, as clip.cpp decides.
enum class FfnAct { GELU, SILU, GELU_QUICK };

struct ClipHParams {
  Projector projector = Projector::IDEFICS3;
  int image_size = 0;   // a tile's side in pixels (clip.vision.image_size)
  int patch_size = 0;
  int n_embd = 0, n_ff = 0, n_layer = 0, n_head = 0, n_head_kv = 0, head_dim = 0;
  int projection_dim = 0;  // clip.vision.projection_dim (the output width is the projector's)
  float eps = 0;
  FfnAct ffn = FfnAct::GELU_QUICK;
  std::array<float, 3> mean{}, std{};
  int n_merge = 0;       // clip.vision.projector.scale_factor: pixel shuffle factor
  int longest_edge = 0;  // clip.vision.preproc_image_size: the longest side before tiling (0: unset)

  int patches_per_side() const { return image_size / patch_size; }
  int n_patches() const { return patches_per_side() * patches_per_side(); }
  // Embeddings a tile becomes.
  int tokens_per_tile() const { return n_patches() / (n_merge * n_merge); }
};

struct ClipLayer {
  Tensor *ln1_w = nullptr, *ln1_b = nullptr, *ln2_w = nullptr, *ln2_b = nullptr;
  Tensor *q_w = nullptr, *q_b = nullptr, *k_w = nullptr, *k_b = nullptr, *v_w = nullptr, *v_b = nullptr;
  Tensor *o_w = nullptr, *o_b = nullptr;
  Tensor *up_w = nullptr, *up_b = nullptr, *gate_w = nullptr, *gate_b = nullptr, *down_w = nullptr, *down_b = nullptr;
};

struct ClipWeights {
  Tensor* patch_w = nullptr;  // (P, P, 3, n_embd): the patch embedding's convolution kernel
  Tensor* patch_b = nullptr;
  Tensor* pos_embd = nullptr;  // (n_embd, n_patches)
  Tensor *pre_ln_w = nullptr, *pre_ln_b = nullptr, *post_ln_w = nullptr, *post_ln_b = nullptr;
  std::vector<ClipLayer> layers;
  Tensor* mm_fc = nullptr;  // IDEFICS3: (n_embd * n_merge^2, n_out)
};

struct ClipModel {
  std::unique_ptr<gguf::File> file;
  ClipHParams hp;
  Context weights_ctx;
  ClipWeights w;
  size_t weight_bytes = 0;

  // The width of the embeddings it gives the text model.
  int n_embd_out() const;

  // Throws hart::Error naming the file and what is wrong: not a clip file, no vision encoder,
  // a projector hart does not compute, a hyper-parameter missing or out of range, a tensor
  // missing, of the wrong shape or type, or not part of the projector.
  static std::unique_ptr<ClipModel> from_file(std::unique_ptr<gguf::File> file);
  static std::unique_ptr<ClipModel> open(const std::string& path);
};

// What hart's loader makes of a clip file (hart info): why its hyper-parameters cannot be read
// (else empty), and how its tensors compare with the projector's list.
FileCheck check_clip_file(const gguf::File& f);

}  // namespace hart::vision
