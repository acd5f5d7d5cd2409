// The vision encoder and projector as one compute graph per tile (clip.cpp's clip_graph_siglip
// for Idefics3): patch embedding (the convolution whose stride is its kernel, as im2col views and
// one MUL_MAT), learned positions, pre-norm ViT blocks with bidirectional attention (FLASH_ATTN_EXT
// without a mask), the post norm, the pixel shuffle and the projector's matrix. Node names are
// clip.cpp's where it names them (pos_embed, layer_inp_normed-0, ffn_inp-0, pixel_shuffle, ...).
#pragma once

#include <memory>
#include <vector>

#include "backend/backend_set.h"
#include "graph/graph.h"
#include "sched/scheduler.h"
#include "vision/clip_model.h"
#include "vision/preprocess.h"

namespace hart::vision {

class Encoder {
 public:
  Encoder(const ClipModel& model, BackendSet backends);
  ~Encoder();
  // The tile's embeddings: tokens_per_tile() rows of n_embd_out() floats, row-major. Throws
  // hart::Error for a tile whose size is not the model's image_size.
  std::vector<float> encode(const Tile& tile);

 private:
  struct Built;
  const ClipModel& model_;
  sched::Scheduler scheduler_;
  std::unique_ptr<Built> built_;  // the graph, built at the first tile and replayed
};

}  // namespace hart::vision
