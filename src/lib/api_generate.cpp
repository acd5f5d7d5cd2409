// The C API's generation: hart::Generator (the loop of `hart run`) a token at a call, with the
// text released as TextOutput decides it (whole UTF-8 characters, stop strings held back), and
// hart_generate, the same loop driven to its end with a callback.
#include <optional>

#include "lib/api.h"
#include "model/generate.h"
#include "tokenizer/text_output.h"

using namespace hart;
using namespace hart::api;

struct hart_generation {
  hart_generation(hart_session& s, hart_sampler& h, std::vector<std::string> stops)
      : core(s.core), session(&s), sampler(&h), text(core->tok(), std::move(stops)) {}
  std::shared_ptr<ModelCore> core;  // the tokenizer `text` reads
  hart_session* session;
  hart_sampler* sampler;
  TextOutput text;
  std::optional<Generator> gen;  // made once the generation holds its session and sampler
  std::string piece;             // what the last hart_generation_next handed out
  enum class State { TOKENS, HELD_BACK, ENDED } state = State::TOKENS;
};

namespace {

hart_generation& generation_of(const hart_generation* g) {
  return live(const_cast<hart_generation*>(g), Kind::GENERATION, "generation");
}

// The generation's session and sampler, which must still be the ones it holds: a handle freed
// since (and perhaps reused) is refused before its memory is touched.
void need_holders(const hart_generation& g) {
  need(is_live(g.session, Kind::SESSION) && g.session->generation == &g,
       "the generation's session was freed (free a generation before its session)");
  need(is_live(g.sampler, Kind::SAMPLER) && g.sampler->generation == &g,
       "the generation's sampler was freed (free a generation before its sampler)");
}

std::vector<std::string> stop_strings(const hart_generate_params& p) {
  need_buffer(p.stops, p.n_stops, "stops");
  std::vector<std::string> stops;
  for (int32_t i = 0; i < p.n_stops; i++) {
    need(p.stops[i] && *p.stops[i], "stop string " + std::to_string(i) + " is NULL or empty");
    stops.emplace_back(p.stops[i]);
  }
  return stops;
}

// A new generation holding its session and sampler, its prompt computed.
std::unique_ptr<hart_generation> start(hart_session* session, hart_sampler* sampler, const int32_t* prompt,
                                       int32_t n_prompt, const hart_generate_params* params) {
  hart_session& s = changeable_session(session);
  hart_sampler& h = live(sampler, Kind::SAMPLER, "sampler");
  need(!h.generation, "the sampler is in use by an open generation (hart_generation_free it first)");
  need(s.core == h.core, "the session and the sampler are of different models");
  need(n_prompt > 0, "n_prompt must be positive, not " + std::to_string(n_prompt));
  need(prompt != nullptr, "prompt is NULL");
  const hart_generate_params p = params ? *params : hart_generate_default_params();
  const Tokenizer& tok = s.core->tok();
  const std::span<const int32_t> tokens(prompt, size_t(n_prompt));
  for (int32_t t : tokens) need(t >= 0 && t < tok.n_vocab(), "prompt token " + std::to_string(t) + " is outside the vocabulary");
  if (int64_t(s.s.n_past()) + n_prompt > s.s.n_ctx())
    fail(HART_ERR_CONTEXT_FULL, "the prompt of " + std::to_string(n_prompt) + " tokens does not fit the " +
                                    std::to_string(s.s.n_ctx() - s.s.n_past()) + " positions left");

  auto g = std::make_unique<hart_generation>(s, h, stop_strings(p));
  s.cancel = false;
  s.last_logits = nullptr;
  s.n_inputs = 0;
  GenerateOptions go;
  go.n_predict = p.max_tokens;
  if (!p.ignore_eos) go.is_eog = [&tok](int32_t t) { return tok.is_eog(t); };
  g->gen.emplace(s.s, h.s, tokens, go);
  s.generation = h.generation = g.get();
  return g;
}

// Lets go of the session and the sampler (those still live and held by it).
void release(hart_generation& g) noexcept {
  if (is_live(g.session, Kind::SESSION) && g.session->generation == &g) g.session->generation = nullptr;
  if (is_live(g.sampler, Kind::SAMPLER) && g.sampler->generation == &g) g.sampler->generation = nullptr;
}

// The next event: true with its token and text in g.piece, false once the generation has ended.
bool step(hart_generation& g, int32_t& token) {
  switch (g.state) {
    case hart_generation::State::ENDED: return false;
    case hart_generation::State::HELD_BACK:
      g.state = hart_generation::State::ENDED;
      token = HART_TOKEN_NONE;
      g.piece = g.text.flush();
      return true;
    case hart_generation::State::TOKENS: break;
  }
  if (g.session->cancel) fail(HART_ERR_CANCELLED, "the generation was cancelled");
  const std::optional<int32_t> t = g.gen->next();
  if (!t) {
    g.state = hart_generation::State::HELD_BACK;
    return step(g, token);
  }
  const bool grammar_open = advance_grammar(*g.sampler, *t);
  g.piece = g.text.push(*t);
  if (!grammar_open || g.text.stopped()) g.state = hart_generation::State::HELD_BACK;
  token = *t;
  return true;
}

}  // namespace

extern "C" {

hart_generate_params hart_generate_default_params(void) {
  hart_generate_params p;
  p.max_tokens = GenerateOptions{}.n_predict;
  p.ignore_eos = false;
  p.stops = nullptr;
  p.n_stops = 0;
  return p;
}

hart_generation* hart_generation_new(hart_session* session, hart_sampler* sampler, const int32_t* prompt,
                                     int32_t n_prompt, const hart_generate_params* params) {
  return guarded<hart_generation*>(nullptr, HART_ERR_FAILED, [&] {
    return registered(start(session, sampler, prompt, n_prompt, params).release(), Kind::GENERATION);
  });
}

int hart_generation_next(hart_generation* gen, int32_t* token, const char** piece, int32_t* piece_len) {
  return guarded_status(HART_ERR_FAILED, [&] {
    hart_generation& g = generation_of(gen);
    if (g.state == hart_generation::State::ENDED) return 0;
    need_holders(g);
    int32_t t = HART_TOKEN_NONE;
    try {
      if (!step(g, t)) return 0;
    } catch (...) {  // an error ends the generation
      g.state = hart_generation::State::ENDED;
      throw;
    }
    if (token) *token = t;
    if (piece) *piece = g.piece.c_str();
    if (piece_len) *piece_len = int32_t(g.piece.size());
    return 1;
  });
}

int32_t hart_generation_n_tokens(const hart_generation* gen) {
  return guarded<int32_t>(HART_ERROR_COUNT, HART_ERR_FAILED, [&] { return generation_of(gen).gen->stats().n_generated; });
}

void hart_generation_free(hart_generation* gen) {
  if (!gen || !is_live(gen, Kind::GENERATION)) return;
  release(*gen);
  free_handle(gen, Kind::GENERATION);
}

int32_t hart_generate(hart_session* session, hart_sampler* sampler, const int32_t* prompt, int32_t n_prompt,
                      const hart_generate_params* params, hart_token_callback on_token, void* user_data) {
  return guarded_status(HART_ERR_FAILED, [&]() -> int32_t {
    const std::unique_ptr<hart_generation> g = start(session, sampler, prompt, n_prompt, params);
    struct Release {
      hart_generation& g;
      ~Release() { release(g); }
    } held{*g};
    int32_t token = HART_TOKEN_NONE;
    while (step(*g, token))
      if (on_token && !on_token(token, g->piece.data(), int32_t(g->piece.size()), user_data)) break;
    return g->gen->stats().n_generated;
  });
}

}  // extern "C"
