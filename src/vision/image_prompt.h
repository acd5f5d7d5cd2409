// A prompt with images, as llama.cpp's mtmd_tokenize lays it out: the text is split at each
// media marker ("<__media__>", mtmd_default_marker), the parts tokenized on their own (special
// tokens parsed, BOS added before everything when the vocabulary asks for it), and each marker
// replaced by the projector's layout of that image's tiles between the marker tokens its chat
// template expects. Idefics3 / SmolVLM, per slice row y and column x (from 1):
//   <fake_token_around_image><row_y_col_x> [slice] ... "\n" after each row but the last, then
//   "\n\n" <fake_token_around_image> <global-img> [overview] <fake_token_around_image>
#pragma once

#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "vision/clip_model.h"

namespace hart::vision {

constexpr std::string_view kMediaMarker = "<__media__>";

// A run of text tokens, or the embeddings of one tile.
struct PromptChunk {
  std::vector<int32_t> tokens;  // empty for a tile
  int image = -1, tile = -1;    // which image (in marker order) and which of its tiles
  bool is_tile() const { return image >= 0; }
};

// tile_counts[i]: the tiles of image i, grid_x[i] x grid_y[i] slices and the overview (preprocess).
struct ImageLayout {
  int n_tiles = 0, grid_x = 0, grid_y = 0;
};

// Throws hart::Error when the markers and images differ in number, or the vocabulary lacks a
// token the layout needs (a text model that is not the projector's).
std::vector<PromptChunk> tokenize_prompt(const Tokenizer& tok, const ClipHParams& hp, std::string_view prompt,
                                         const std::vector<ImageLayout>& images, bool add_special);

}  // namespace hart::vision
