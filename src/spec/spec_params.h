// Speculative decoding's settings, with llama.cpp's (de3ff81) names and defaults: --spec-type is
// a comma-separated list of the ways to draft, tried in llama.cpp's order of priority (the n-gram
// ones first, then a draft model) until one proposes tokens.
#pragma once

#include <string>
#include <vector>

namespace hart::spec {

enum class SpecType { NONE, DRAFT_SIMPLE, NGRAM_SIMPLE, NGRAM_CACHE, DRAFT_MTP };

// "none", "draft-simple", ...: llama.cpp's names.
const char* type_name(SpecType t);
// Throws hart::Error for an unknown name, and for llama.cpp's types hart does not have
// (draft-eagle3, draft-dflash, draft-dspark, ngram-map-k, ngram-map-k4v, ngram-mod).
SpecType type_from_name(const std::string& name);
// "ngram-simple,draft-simple" -> the types in llama.cpp's order of priority, without NONE.
std::vector<SpecType> types_from_list(const std::string& list);

struct SpecParams {
  std::vector<SpecType> types;  // empty: no speculation
  // A draft model's (draft-simple) and the MTP block's (draft-mtp): llama.cpp's
  // common_params_speculative_draft.
  int n_max = 3;       // tokens drafted per step
  int n_min = 0;       // a shorter draft is not verified
  float p_min = 0.0f;  // drafting stops at a token the draft gives less probability
  // ngram-simple (common_params_speculative_ngram_map): the last size_n tokens are looked up in
  // the history, and the size_m after an earlier occurrence are the draft.
  int ngram_size_n = 12, ngram_size_m = 48;
  // ngram-cache: llama-lookup-create's static cache, and a dynamic one (both optional).
  std::string lookup_cache_static, lookup_cache_dynamic;
  // Synthetic acceptance for benchmarking (--spec-synth-len / --spec-synth-rates): a draft
  // token is accepted at random, whatever the target says; the output is not the model's.
  double synth_len = -1.0;
  std::vector<double> synth_rates;
  // > 0: no draft of any type is longer (a server request's speculative.n_max).
  int draft_limit = 0;

  bool has(SpecType t) const;
  bool uses_draft_model() const { return has(SpecType::DRAFT_SIMPLE); }
  // draft-mtp: the target session keeps its hidden states (SessionParams::keep_hidden).
  bool uses_mtp() const { return has(SpecType::DRAFT_MTP); }
  // The most tokens any of the types drafts in one step (llama.cpp's common_speculative_n_max),
  // within draft_limit.
  int max_draft() const;
  // Throws hart::Error for what cannot be honoured: n_max below 1 or beyond `n_batch` - 1 (a
  // verification step is one batch), n_min above n_max, p_min outside [0, 1], n-gram sizes below
  // 1, ngram-cache without a static cache, draft-simple with draft-mtp (llama.cpp's one draft
  // context), synthetic rates that are not a non-increasing list of
  // max_draft() values in [0, 1].
  void validate(int n_batch) const;
  // The per-position probabilities of accepting a draft token given the one before it was
  // (llama.cpp's synth_probs, from the unconditional rates or the mean accepted length); empty
  // without synthetic acceptance.
  std::vector<double> synth_probs() const;
};

}  // namespace hart::spec
