// A projector's preprocessing, as llama.cpp's mtmd does it (mtmd-image.cpp): an image becomes
// the tiles the encoder takes, each resized, scaled to [0, 1] and normalized per channel.
#pragma once

#include <vector>

#include "vision/clip_model.h"
#include "vision/image.h"

namespace hart::vision {

// One encoder input: planar floats, pixel (x, y) channel c at planar[x + width * (y + height * c)]
// (the layout of clip.cpp's inp_raw).
struct Tile {
  int width = 0, height = 0;
  std::vector<float> planar;
};

// An image's tiles in the order their embeddings enter the prompt, and the grid of slices.
// Idefics3: grid_y rows of grid_x slices (row-major), then the overview (the whole image in one
// tile) last.
struct ImageTiles {
  std::vector<Tile> tiles;
  int grid_x = 0, grid_y = 0;
};

ImageTiles preprocess(const ClipHParams& hp, const RgbImage& img);

// u8 -> x / 255, then (x - mean) / std per channel (clip_image_f32::from_u8 and normalize).
Tile normalized_tile(const ClipHParams& hp, const RgbImage& img);

}  // namespace hart::vision
