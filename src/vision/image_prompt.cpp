#include "vision/image_prompt.h"

#include <string>

#include "common/error.h"

namespace hart::vision {
namespace {

class Layout {
 public:
  Layout(const Tokenizer& tok, std::vector<PromptChunk>& out) : tok_(tok), out_(out) {}

  void text(std::string_view s) { append(tok_.encode(s, /*add_special=*/false, /*parse_special=*/true)); }
  // The token whose text is `piece` (mtmd's lookup_token: the first id whose piece, special
  // tokens rendered, equals it).
  void token(std::string_view piece, const char* projector) {
    for (int32_t id = 0; id < tok_.n_vocab(); id++)
      if (tok_.token_to_piece(id, /*special=*/true) == piece) return append({id});
    throw Error("the text model's vocabulary has no token " + printable(piece) + ", which " + projector +
                "'s image layout needs: is this mmproj the text model's own?");
  }
  void tile(int image, int tile) { out_.push_back({{}, image, tile}); }
  void append(const std::vector<int32_t>& ids) {
    if (ids.empty()) return;
    if (out_.empty() || out_.back().is_tile()) out_.push_back({});
    out_.back().tokens.insert(out_.back().tokens.end(), ids.begin(), ids.end());
  }

 private:
  static std::string printable(std::string_view s) {
    std::string r = "'";
    for (char c : s) r += c == '\n' ? std::string("\\n") : std::string(1, c);
    return r + "'";
  }
  const Tokenizer& tok_;
  std::vector<PromptChunk>& out_;
};

void idefics3(Layout& l, int image, const ImageLayout& im) {
  const char* name = "idefics3";
  for (int y = 0; y < im.grid_y; y++) {
    for (int x = 0; x < im.grid_x; x++) {
      l.text("<fake_token_around_image><row_" + std::to_string(y + 1) + "_col_" + std::to_string(x + 1) + ">");
      l.tile(image, y * im.grid_x + x);
    }
    if (y + 1 < im.grid_y) l.token("\n", name);
  }
  for (const char* piece : {"\n\n", "<fake_token_around_image>", "<global-img>"}) l.token(piece, name);
  l.tile(image, im.grid_x * im.grid_y);
  l.token("<fake_token_around_image>", name);
}

}  // namespace

std::vector<PromptChunk> tokenize_prompt(const Tokenizer& tok, const ClipHParams& hp, std::string_view prompt,
                                         const std::vector<ImageLayout>& images, bool add_special) {
  std::vector<PromptChunk> out;
  Layout l(tok, out);
  size_t n_images = 0, from = 0;
  for (;;) {
    const size_t at = prompt.find(kMediaMarker, from);
    l.text(prompt.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos) break;
    if (n_images == images.size())
      throw Error("the prompt has more " + std::string(kMediaMarker) + " markers than the " +
                  std::to_string(images.size()) + " images given");
    const ImageLayout& im = images[n_images];
    if (im.n_tiles != im.grid_x * im.grid_y + 1) throw Error("image layout: tiles and grid differ (a bug)");
    switch (hp.projector) {
      case Projector::IDEFICS3: idefics3(l, int(n_images), im); break;
    }
    n_images++;
    from = at + kMediaMarker.size();
  }
  if (n_images != images.size())
    throw Error("the prompt has " + std::to_string(n_images) + " " + std::string(kMediaMarker) + " markers for " +
                std::to_string(images.size()) + " images");
  if (add_special && tok.add_bos() && tok.bos() >= 0) {
    if (out.empty() || out.front().is_tile()) out.insert(out.begin(), PromptChunk{});
    out.front().tokens.insert(out.front().tokens.begin(), tok.bos());
  }
  if (add_special && tok.add_eos() && tok.eos() >= 0) l.append({tok.eos()});
  return out;
}

}  // namespace hart::vision
