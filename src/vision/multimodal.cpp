#include "vision/multimodal.h"

#include "common/error.h"
#include "vision/preprocess.h"

namespace hart::vision {

void check_pair(const ClipModel& clip, const Model& text) {
  if (clip.n_embd_out() != text.hp.n_embd)
    throw Error("the mmproj gives " + std::to_string(clip.n_embd_out()) + "-wide embeddings and the text model is " +
                std::to_string(text.hp.n_embd) + " wide: the projector is for another model");
}

int EncodedPrompt::n_tokens() const {
  size_t n = 0;
  for (const PromptChunk& c : chunks) n += c.is_tile() ? tile(c).size() / embd_width : c.tokens.size();
  return int(n);
}

EncodedPrompt encode_prompt(const ClipModel& clip, Encoder& encoder, const Tokenizer& tok, std::string_view prompt,
                            const std::vector<RgbImage>& images, bool add_special) {
  EncodedPrompt out;
  out.embd_width = size_t(clip.n_embd_out());
  std::vector<ImageLayout> layouts;
  for (const RgbImage& img : images) {
    const ImageTiles tiles = preprocess(clip.hp, img);
    layouts.push_back({int(tiles.tiles.size()), tiles.grid_x, tiles.grid_y});
    auto& embd = out.embd.emplace_back();
    for (const Tile& t : tiles.tiles) embd.push_back(encoder.encode(t));
  }
  out.chunks = tokenize_prompt(tok, clip.hp, prompt, layouts, add_special);
  return out;
}

std::vector<int32_t> decode_all_but_last(Session& session, const EncodedPrompt& p) {
  if (p.chunks.empty()) throw Error("the prompt is empty after tokenization");
  if (p.chunks.back().is_tile()) throw Error("the prompt ends with an image: nothing follows it to generate from");
  for (size_t i = 0; i + 1 < p.chunks.size(); i++) {
    const PromptChunk& c = p.chunks[i];
    if (c.is_tile()) session.decode_embeddings(p.tile(c));
    else session.decode(c.tokens);
  }
  return p.chunks.back().tokens;
}

}  // namespace hart::vision
