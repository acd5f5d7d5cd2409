// hart chat: an interactive conversation. The model's chat template (its Jinja
// tokenizer.chat_template, or --chat-template / --chat-template-file) renders the whole history
// each turn; the KV cache keeps the common prefix, so only the new part is processed.
// With --mmproj, `/image PATH` attaches an image to the next message (a media marker before its
// text, as llama-mtmd-cli puts it): each image is encoded once, when attached, and the prompt's
// image positions are compared turn to turn by a key of their image, tile and offset, so a later
// turn recomputes nothing of an earlier image either.
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "chat_setup.h"
#include "command.h"
#include "parse_args.h"
#include "common/error.h"
#include "model/generate.h"
#include "model_options.h"
#include "print.h"
#include "spec_options.h"
#include "tokenizer/text_output.h"
#include "vision/clip_model.h"
#include "vision/encoder.h"
#include "vision/image_prompt.h"
#include "vision/multimodal.h"
#include "vision/preprocess.h"
#include "vision_options.h"

namespace hart::cli {
namespace {


size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) i++;
  return i;
}

// An image of the conversation, encoded when it was attached.
struct ChatImage {
  vision::ImageLayout layout;
  std::vector<std::vector<float>> tiles;  // each tile's embeddings
};

// The images /image attaches: the projector, its encoder (on the CPU, beside the session's
// backends), and the conversation's images in the order their markers come.
struct ChatVision {
  std::unique_ptr<vision::ClipModel> clip;
  std::unique_ptr<vision::Encoder> encoder;
  std::vector<ChatImage> images;
  size_t pending = 0;  // the last `pending` images go with the next message

  ChatImage encode(const std::string& path) const {
    const vision::RgbImage img = vision::load_image(path);
    const vision::ImageTiles t = vision::preprocess(clip->hp, img);
    ChatImage out{{int(t.tiles.size()), t.grid_x, t.grid_y}, {}};
    for (const vision::Tile& tile : t.tiles) out.tiles.push_back(encoder->encode(tile));
    return out;
  }
};

// The turn's prompt as the session takes it: text chunks and image tiles, and one id per
// position: a text token, or for an image position a key of its image, tile and offset
// (negative, never a token), so the prompts of two turns compare position by position.
struct TurnPrompt {
  std::vector<vision::PromptChunk> chunks;
  std::vector<int32_t> ids;
};

TurnPrompt turn_prompt(const Tokenizer& tok, const std::string& text, const ChatVision& vis, size_t n_embd) {
  TurnPrompt p;
  if (vis.images.empty()) {
    p.ids = tok.encode(text, true, true);
    p.chunks.push_back({p.ids, -1, -1});
    return p;
  }
  std::vector<vision::ImageLayout> layouts;
  for (const ChatImage& im : vis.images) layouts.push_back(im.layout);
  p.chunks = vision::tokenize_prompt(tok, vis.clip->hp, text, layouts, true);
  constexpr int32_t kTiles = 256, kPositions = 8192;  // per image, per tile: keys up to 2^31 for 1023 images
  for (const vision::PromptChunk& c : p.chunks) {
    if (!c.is_tile()) {
      p.ids.insert(p.ids.end(), c.tokens.begin(), c.tokens.end());
      continue;
    }
    const int32_t n = int32_t(vis.images[size_t(c.image)].tiles[size_t(c.tile)].size() / n_embd);
    if (c.image >= 1023 || c.tile >= kTiles || n > kPositions) throw Error("too many images in one conversation: /reset starts over");
    for (int32_t i = 0; i < n; i++) p.ids.push_back(-1 - ((c.image * kTiles + c.tile) * kPositions + i));
  }
  if (p.chunks.empty() || p.chunks.back().is_tile()) throw Error("the prompt ends with an image");
  return p;
}

int cmd_chat(int argc, char** argv) {
  CLI::App app{"Chat with a model interactively (/image PATH attaches an image with --mmproj, /reset starts over, /exit or "
               "Ctrl-D quits)", "hart chat"};
  ModelOptions mo;
  SamplingOptions so;
  ChatTemplateOptions cto;
  SpecOptions spo;
  VisionOptions vo;
  std::string system_prompt;
  int n_predict = -1;
  mo.add_to(app);
  so.add_to(app);
  cto.add_to(app);
  spo.add_to(app);
  vo.add_to(app, /*with_images=*/false);
  app.add_option("--system", system_prompt, "system message opening the conversation");
  app.add_option("-n,--n-predict", n_predict, "max tokens per reply (-1: until the model stops)")
      ->capture_default_str();
  if (!parse_args(app, argc, argv, kSpecShortAliases)) return 0;
  if (print_devices_if_asked(mo)) return 0;
  SessionParams sp = mo.session_params();
  sp.speculative = spo.enabled(sp.n_batch);
  sp.keep_hidden = spo.p.uses_mtp();

  LoadedModel lm = load_model(mo);
  const Tokenizer& tok = *lm.tokenizer;
  // A file without a template is an error here: the user picks one.
  const ChatFormatter chat = choose_chat_formatter(lm.model->file.get(), tok, cto, std::nullopt);
  std::fprintf(stderr, "hart: chat template %s\n", chat.name().c_str());

  ChatVision vis;
  if (!vo.mmproj.empty()) {
    vis.clip = vision::ClipModel::open(vo.mmproj);
    vision::check_pair(*vis.clip, *lm.model);
    vis.encoder = std::make_unique<vision::Encoder>(*vis.clip, BackendSet({"cpu"}, mo.threads, mo.perf_log));
  }
  Session session(*lm.model, sp, mo.backends());
  Speculation speculation;
  if (sp.speculative) speculation = make_speculation(spo, mo, lm, &so.p);
  spec::SpecStats spec_stats;
  Sampler sampler(so.p, lm.model->hp.n_vocab);
  ChatRequest history;
  history.kwargs = nlohmann::ordered_json{{"preserve_reasoning", true}};  // llama-server's default
  const auto add = [&](const char* role, const std::string& text) {
    history.messages.push_back({{"role", role}, {"content", text}});
  };
  // The user's message, after a media marker for each image attached to it.
  const auto add_user = [&](const std::string& text) {
    if (vis.pending == 0) return add("user", text);
    nlohmann::ordered_json parts = nlohmann::ordered_json::array();
    for (size_t i = 0; i < vis.pending; i++) parts.push_back({{"type", "media_marker"}, {"text", vision::kMediaMarker}});
    parts.push_back({{"type", "text"}, {"text", text}});
    history.messages.push_back({{"role", "user"}, {"content", parts}});
  };
  // A turn that cannot go on: its message and the images attached to it are dropped.
  const auto drop_turn = [&] {
    history.messages.erase(history.messages.end() - 1);
    vis.images.resize(vis.images.size() - vis.pending);
    vis.pending = 0;
  };
  if (!system_prompt.empty()) add("system", system_prompt);
  std::vector<int32_t> cached;  // the ids (turn_prompt's) of the positions the session holds, in order
  const bool interactive = isatty(STDIN_FILENO);
  const size_t n_embd = size_t(lm.model->hp.n_embd);

  std::string line;
  while (true) {
    if (interactive) std::fputs("\n> ", stdout), std::fflush(stdout);
    if (!std::getline(std::cin, line)) break;
    if (line == "/exit") break;
    if (line == "/reset") {
      history.messages.erase(history.messages.begin() + (system_prompt.empty() ? 0 : 1), history.messages.end());
      vis.images.clear();
      vis.pending = 0;
      continue;
    }
    if (line.rfind("/image", 0) == 0 && (line.size() == 6 || line[6] == ' ')) {
      const std::string path = line.size() > 7 ? line.substr(7) : "";
      if (!vis.clip) {
        std::fprintf(stderr, "hart: /image needs --mmproj: a text model alone takes no image\n");
      } else if (sp.speculative) {
        std::fprintf(stderr, "hart: speculative decoding does not take images: /image is off with the speculative flags\n");
      } else if (path.empty()) {
        std::fprintf(stderr, "hart: /image PATH: which image?\n");
      } else {
        try {
          vis.images.push_back(vis.encode(path));
          vis.pending++;
          std::fprintf(stderr, "hart: %s goes with your next message\n", path.c_str());
        } catch (const Error& e) {
          std::fprintf(stderr, "hart: %s\n", e.what());
        }
      }
      continue;
    }
    if (line.empty()) continue;
    add_user(line);
    TurnPrompt turn;
    try {
      turn = turn_prompt(tok, chat.apply(history), vis, n_embd);
    } catch (const Error& e) {
      // The template refuses this conversation (say, roles that must alternate): drop the turn.
      std::fprintf(stderr, "hart: the chat template cannot render this turn: %s\n", e.what());
      drop_turn();
      continue;
    }
    const std::vector<int32_t>& ids = turn.ids;
    if (int(ids.size()) >= session.n_ctx()) {  // the conversation so far and this turn
      std::fprintf(stderr, "hart: the context is full (%d tokens, -c): this turn does not fit; /reset starts over\n",
                   session.n_ctx());
      drop_turn();
      continue;
    }
    vis.pending = 0;  // the images are the conversation's now

    // Reuse the cached prefix; always process at least the last token to get fresh logits. A
    // recurrent state (or a slid window) cannot go back into the past: then all is recomputed.
    // An image tile is decoded whole: a prefix ending inside one goes back to its start.
    const auto tile_start = [&](size_t n) {
      size_t begin = 0;
      for (const vision::PromptChunk& c : turn.chunks) {
        const size_t len = c.is_tile() ? vis.images[size_t(c.image)].tiles[size_t(c.tile)].size() / n_embd : c.tokens.size();
        if (n < begin + len) return c.is_tile() ? begin : n;
        begin += len;
      }
      return n;
    };
    size_t keep = std::min(common_prefix(cached, ids), ids.size() - 1);
    for (size_t want = tile_start(keep);; want = tile_start(keep)) {
      keep = size_t(session.truncate(int(want)));
      if (keep == want) break;
    }
    cached.assign(ids.begin(), ids.begin() + long(keep));
    sampler.reset();
    for (size_t i = 0; i < keep; i++)
      if (ids[i] >= 0) sampler.accept(ids[i]);  // an image's keys are not tokens
    // What precedes the last text chunk goes into the session here; generate() takes the rest.
    size_t begin = 0;
    std::vector<int32_t> fresh;
    for (size_t k = 0; k < turn.chunks.size(); k++) {
      const vision::PromptChunk& c = turn.chunks[k];
      const std::vector<float>* tile = c.is_tile() ? &vis.images[size_t(c.image)].tiles[size_t(c.tile)] : nullptr;
      const size_t len = tile ? tile->size() / n_embd : c.tokens.size(), from = std::max(begin, keep) - begin;
      begin += len;
      if (from >= len) continue;
      if (k + 1 == turn.chunks.size()) {
        fresh.assign(c.tokens.begin() + long(from), c.tokens.end());
      } else if (tile) {
        session.decode_embeddings(*tile);
      } else {
        const std::span<const int32_t> part = std::span(c.tokens).subspan(from);
        session.decode(part);
        for (int32_t t : part) sampler.accept(t);
      }
    }
    cached.assign(ids.begin(), ids.end() - long(fresh.size()));

    TextOutput stream(tok, {});
    std::vector<int32_t> reply;
    GenerateOptions go;
    go.n_predict = n_predict;
    go.is_eog = [&](int32_t t) { return tok.is_eog(t); };
    go.on_token = [&](int32_t t) {
      reply.push_back(t);
      print(stream.push(t));
      return true;
    };
    const GenerateStats st = sp.speculative
                                 ? spec::generate(session, sampler, fresh, go, *speculation.speculator, spec_stats, cached)
                                 : generate(session, sampler, fresh, go);
    print(stream.flush());
    std::fputs("\n", stdout);
    std::fflush(stdout);
    if (st.context_full)
      std::fprintf(stderr, "hart: the context is full (%d tokens, -c): the reply stops here; /reset starts over\n",
                   session.n_ctx());
    cached.insert(cached.end(), fresh.begin(), fresh.end());
    // The reply tokens that were fed back through the model (all but a cut-off last one).
    cached.insert(cached.end(), reply.begin(), reply.begin() + (session.n_past() - long(cached.size())));
    add("assistant", tok.decode(reply));
    if (sp.speculative) {  // this turn's text counted into the dynamic lookup cache (-lcd)
      std::vector<int32_t> turn_tokens = fresh;
      turn_tokens.insert(turn_tokens.end(), reply.begin(), reply.end());
      speculation.save_dynamic_cache(turn_tokens);
    }
  }
  if (sp.speculative) print_spec_stats(spec_stats);
  return 0;
}

}  // namespace

HART_COMMAND(chat, "chat with a model interactively", cmd_chat);

}  // namespace hart::cli
