// The C API's sampler chain (hart::Sampler, with a grammar constraint from GBNF or a JSON schema)
// and its streaming generation loop (hart::generate, the loop of `hart run`).
#include <cmath>
#include <nlohmann/json.hpp>

#include "grammar/json_schema.h"
#include "lib/api.h"
#include "model/generate.h"
#include "tokenizer/text_output.h"

using namespace hart;
using namespace hart::api;

namespace {

hart_sampler& sampler_of(const hart_sampler* s) { return live(const_cast<hart_sampler*>(s), Kind::SAMPLER, "sampler"); }

std::shared_ptr<const grammar::Grammar> requested_grammar(const hart_sampler_params& p) {
  need(!(p.grammar && p.json_schema), "give a grammar or a json_schema, not both");
  std::string gbnf = p.grammar ? p.grammar : "";
  try {
    if (p.json_schema) {
      const auto schema = nlohmann::ordered_json::parse(p.json_schema, nullptr, false);
      need(!schema.is_discarded(), "json_schema is not valid JSON");
      gbnf = grammar::json_schema_to_gbnf(schema);
    }
    if (gbnf.empty()) return nullptr;
    return std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(gbnf));
  } catch (const Failure&) {
    throw;
  } catch (const Error& e) {
    fail(HART_ERR_INVALID_ARGUMENT, e.what());
  }
}

// (Re)starts the grammar at its beginning.
void attach_grammar(hart_sampler& h) {
  h.s.set_constraint(nullptr);
  h.constraint.reset();
  if (!h.grammar) return;
  h.constraint = std::make_unique<grammar::GrammarConstraint>(h.grammar, h.core->trie());
  h.s.set_constraint(h.constraint.get());
}

// Advances the grammar by a token the sequence took; false once nothing but the end can follow.
bool advance_grammar(hart_sampler& h, int32_t token) {
  if (!h.constraint) return true;
  if (!h.constraint->allows(token))
    fail(HART_ERR_INVALID_ARGUMENT, "token " + std::to_string(token) + " does not continue the grammar");
  h.constraint->accept(token);
  return !h.constraint->finished();
}

// The sampling fields hart_sampler_params and SamplerParams share, from one to the other.
template <class From, class To>
void copy_sampling(const From& f, To& t) {
  t.temperature = f.temperature;
  t.top_k = f.top_k;
  t.top_p = f.top_p;
  t.min_p = f.min_p;
  t.repeat_penalty = f.repeat_penalty;
  t.repeat_last_n = f.repeat_last_n;
  t.frequency_penalty = f.frequency_penalty;
  t.presence_penalty = f.presence_penalty;
  t.seed = f.seed;
}

}  // namespace

extern "C" {

hart_sampler_params hart_sampler_default_params(void) {
  hart_sampler_params p;
  copy_sampling(SamplerParams{}, p);
  p.grammar = nullptr;
  p.json_schema = nullptr;
  return p;
}

hart_sampler* hart_sampler_new(const hart_model* model, const hart_sampler_params* params) {
  return guarded<hart_sampler*>(nullptr, HART_ERR_INVALID_ARGUMENT, [&] {
    const auto& core = live(const_cast<hart_model*>(model), Kind::MODEL, "model").core;
    const hart_sampler_params p = params ? *params : hart_sampler_default_params();
    SamplerParams sp;
    copy_sampling(p, sp);
    auto h = std::unique_ptr<hart_sampler>(
        new hart_sampler{core, Sampler(sp, core->model().hp.n_vocab), requested_grammar(p), nullptr});
    attach_grammar(*h);
    return registered(h.release(), Kind::SAMPLER);
  });
}

void hart_sampler_free(hart_sampler* sampler) {
  free_handle(sampler, Kind::SAMPLER);
}

int32_t hart_sampler_sample(hart_sampler* sampler, const float* logits, int32_t n_logits) {
  return guarded_status(HART_ERR_FAILED, [&] {
    hart_sampler& h = sampler_of(sampler);
    const int32_t n_vocab = h.core->model().hp.n_vocab;
    need(logits != nullptr, "logits is NULL");
    need(n_logits == n_vocab, "a logits row has n_vocab = " + std::to_string(n_vocab) + " floats, not " +
                                  std::to_string(n_logits));
    return h.s.sample(std::span(logits, size_t(n_logits)));
  });
}

int hart_sampler_accept(hart_sampler* sampler, int32_t token) {
  return guarded_status(HART_ERR_FAILED, [&] {
    hart_sampler& h = sampler_of(sampler);
    need(token >= 0 && token < h.core->model().hp.n_vocab, "token " + std::to_string(token) + " is outside the vocabulary");
    advance_grammar(h, token);
    h.s.accept(token);
    return HART_OK;
  });
}

bool hart_sampler_done(const hart_sampler* sampler) {
  return guarded<bool>(false, HART_ERR_FAILED, [&] {
    const hart_sampler& h = sampler_of(sampler);
    return h.constraint && h.constraint->finished();
  });
}

int hart_sampler_reset(hart_sampler* sampler) {
  return guarded_status(HART_ERR_FAILED, [&] {
    hart_sampler& h = sampler_of(sampler);
    h.s.reset();
    attach_grammar(h);
    return HART_OK;
  });
}

hart_generate_params hart_generate_default_params(void) {
  hart_generate_params p;
  p.max_tokens = GenerateOptions{}.n_predict;
  p.ignore_eos = false;
  p.stops = nullptr;
  p.n_stops = 0;
  return p;
}

int32_t hart_generate(hart_session* session, hart_sampler* sampler, const int32_t* prompt, int32_t n_prompt,
                      const hart_generate_params* params, hart_token_callback on_token, void* user_data) {
  return guarded_status(HART_ERR_FAILED, [&]() -> int32_t {
    hart_session& s = live(session, Kind::SESSION, "session");
    hart_sampler& h = sampler_of(sampler);
    need(s.core == h.core, "the session and the sampler are of different models");
    need(n_prompt > 0, "n_prompt must be positive, not " + std::to_string(n_prompt));
    need(prompt != nullptr, "prompt is NULL");
    const hart_generate_params p = params ? *params : hart_generate_default_params();
    need_buffer(p.stops, p.n_stops, "stops");
    std::vector<std::string> stops;
    for (int32_t i = 0; i < p.n_stops; i++) {
      need(p.stops[i] && *p.stops[i], "stop string " + std::to_string(i) + " is NULL or empty");
      stops.emplace_back(p.stops[i]);
    }
    const Tokenizer& tok = s.core->tok();
    const std::span<const int32_t> tokens(prompt, size_t(n_prompt));
    for (int32_t t : tokens) need(t >= 0 && t < tok.n_vocab(), "prompt token " + std::to_string(t) + " is outside the vocabulary");
    if (int64_t(s.s.n_past()) + n_prompt > s.s.n_ctx())
      fail(HART_ERR_CONTEXT_FULL, "the prompt of " + std::to_string(n_prompt) + " tokens does not fit the " +
                                      std::to_string(s.s.n_ctx() - s.s.n_past()) + " positions left");

    s.cancel = false;
    s.last_logits = nullptr;
    s.n_inputs = 0;
    TextOutput text(tok, stops);
    bool stopped_by_caller = false;
    const auto deliver = [&](int32_t token, const std::string& piece) {
      if (on_token && !on_token(token, piece.data(), int32_t(piece.size()), user_data)) stopped_by_caller = true;
    };
    GenerateOptions go;
    go.n_predict = p.max_tokens;
    if (!p.ignore_eos) go.is_eog = [&](int32_t t) { return tok.is_eog(t); };
    go.on_token = [&](int32_t t) {
      const bool grammar_open = advance_grammar(h, t);
      deliver(t, text.push(t));
      return grammar_open && !stopped_by_caller && !text.stopped() && !s.cancel;
    };
    const GenerateStats st = generate(s.s, h.s, tokens, go);
    if (s.cancel) fail(HART_ERR_CANCELLED, "the generation was cancelled");
    if (!stopped_by_caller) deliver(HART_TOKEN_NONE, text.flush());
    return st.n_generated;
  });
}

}  // extern "C"
