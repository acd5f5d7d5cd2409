// llama-server's own generation routes, which its web UI, llama.vim / llama.vscode and scripts
// use: POST /completion and POST /infill with llama-server's field names and defaults
// (n_predict, n_probs, cache_prompt, samplers, id_slot, return_tokens, temperature 0.8, top_k 40,
// top_p 0.95, min_p 0.05...), answered in its shape (content, tokens, stop, stop_type,
// stopping_word, completion_probabilities, generation_settings, timings), or streamed as one data
// line per token and a last one with stop: true. A field hart cannot honour (mirostat, DRY, XTC,
// typical-p, logit_bias, a sampler order other than its chain's...) is a 400 naming it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/openai_api.h"

namespace hart::serve {

struct NativeRequest : ApiRequest {
  bool return_tokens = false;  // the generated ids in "tokens"
  bool evaluate_only = false;  // n_predict 0: the prompt goes into the cache, no token is returned
  int id_slot = -1;            // as asked; gen.slot: the slot it runs in
  nlohmann::json settings;     // generation_settings, as the request was understood
  std::string prompt_text;     // with images: the prompt as given (its ids hold content keys)
};

// POST /completion: `prompt` is a string (special tokens parsed, BOS per the vocabulary), token
// ids, or llama-server's multimodal object {"prompt_string", "multimodal_data": [base64 images]}
// (with --mmproj; a <__media__> marker in the text per image). `n_slots`: the ids id_slot may name.
NativeRequest parse_native_completion(const nlohmann::ordered_json& body, const PromptContext& pc, int n_slots);

// POST /infill: input_prefix, input_suffix, input_extra [{filename, text}] and prompt laid out as
// llama-server lays them (repo-level FIM: [REP]myproject [SEP]file chunks... [SEP]filename, then
// [PRE]prefix+prompt [SUF]suffix [MID]; prefix and suffix cut to fit llama-server's default
// batch of 2048 at 3:1, the extra context to the room the context leaves). A 400 when the
// model has no FIM prefix, suffix or middle token.
NativeRequest parse_infill(const nlohmann::ordered_json& body, const PromptContext& pc, int n_slots);

// Builds the responses of one request from its events.
class NativeWriter {
 public:
  NativeWriter(const NativeRequest& req, const Tokenizer& tok, std::string model);

  std::vector<nlohmann::json> chunks(const Event& ev);  // streaming
  void add(const Event& ev);                            // not streaming
  nlohmann::json response() const;
  bool finished() const { return done_; }

 private:
  nlohmann::json probabilities(const std::vector<TokenInfo>& tokens) const;
  nlohmann::json ids(const std::vector<TokenInfo>& tokens) const;
  nlohmann::json final_object(const std::string& content, const std::vector<TokenInfo>& tokens) const;

  const NativeRequest& req_;
  const Tokenizer& tok_;
  std::string model_;
  std::string text_;
  std::vector<TokenInfo> tokens_;
  int n_decoded_ = 0;
  bool done_ = false;
  Event end_;
};

}  // namespace hart::serve
