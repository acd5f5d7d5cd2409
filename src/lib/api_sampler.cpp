// The C API's sampler chain (hart::Sampler, with a grammar constraint from GBNF or a JSON schema).
#include <cmath>
#include <nlohmann/json.hpp>

#include "grammar/json_schema.h"
#include "lib/api.h"

using namespace hart;
using namespace hart::api;

namespace {

hart_sampler& sampler_of(const hart_sampler* s) { return live(const_cast<hart_sampler*>(s), Kind::SAMPLER, "sampler"); }

// A sampler a call changes (accept, reset): refused while a generation samples with it.
hart_sampler& changeable_sampler(hart_sampler* s) {
  hart_sampler& h = sampler_of(s);
  need(!h.generation, "the sampler is in use by an open generation (hart_generation_free it first)");
  return h;
}

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

bool hart::api::advance_grammar(hart_sampler& h, int32_t token) {
  if (!h.constraint) return true;
  if (!h.constraint->allows(token))
    fail(HART_ERR_INVALID_ARGUMENT, "token " + std::to_string(token) + " does not continue the grammar");
  h.constraint->accept(token);
  return !h.constraint->finished();
}

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
    hart_sampler& h = changeable_sampler(sampler);
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
    hart_sampler& h = changeable_sampler(sampler);
    h.s.reset();
    attach_grammar(h);
    return HART_OK;
  });
}

}  // extern "C"
