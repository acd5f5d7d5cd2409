// A prompt with images, from text and decoded images to what the text model's session takes:
// each image preprocessed and encoded tile by tile, the prompt laid out as llama.cpp's mtmd
// lays it (image_prompt.h), the tiles' embeddings fed at their positions.
#pragma once

#include <string_view>
#include <vector>

#include "model/model.h"
#include "model/session.h"
#include "tokenizer/tokenizer.h"
#include "vision/clip_model.h"
#include "vision/encoder.h"
#include "vision/image.h"
#include "vision/image_prompt.h"

namespace hart::vision {

// Throws hart::Error when the projector's embeddings are not the text model's width (an mmproj
// for another model).
void check_pair(const ClipModel& clip, const Model& text);

struct EncodedPrompt {
  std::vector<PromptChunk> chunks;
  std::vector<std::vector<std::vector<float>>> embd;  // [image][tile]: the tile's embeddings
  size_t embd_width = 0;                              // floats per embedding
  int n_tokens() const;                               // positions it takes, text and images
  const std::vector<float>& tile(const PromptChunk& c) const { return embd[size_t(c.image)][size_t(c.tile)]; }
};

EncodedPrompt encode_prompt(const ClipModel& clip, Encoder& encoder, const Tokenizer& tok, std::string_view prompt,
                            const std::vector<RgbImage>& images, bool add_special);

// Decodes every chunk but the last into the session and returns the last one's tokens, for the
// generation loop to decode as its prompt. Throws hart::Error when the prompt ends with an image
// (every layout hart knows closes an image with a token).
std::vector<int32_t> decode_all_but_last(Session& session, const EncodedPrompt& p);

}  // namespace hart::vision
