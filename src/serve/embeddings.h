// /v1/embeddings: each input's last hidden states (after the output norm), pooled as the GGUF's
// <arch>.pooling_type says (mean for a decoder model that names none), then normalized as
// llama-server does (embd_normalize: Euclidean by default).
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend/backend_set.h"
#include "model/model.h"
#include "model/session.h"
#include "tokenizer/tokenizer.h"

namespace hart::serve {

enum class Pooling { MEAN, CLS, LAST };

// nullopt for a pooling the server has no endpoint for (rank: a reranker).
std::optional<Pooling> pooling_of(const Model& m);
std::string pooling_name(Pooling p);

// hidden: n_tok rows of n_embd floats.
std::vector<float> pool(std::span<const float> hidden, int n_embd, Pooling p);

// llama.cpp's embd_normalize: -1 none, 0 scaled to the int16 range by the largest magnitude,
// 1 taxicab, 2 Euclidean, p > 2 the p-norm.
void normalize(std::vector<float>& v, int norm);

struct EmbeddingsRequest {
  std::vector<std::vector<int32_t>> inputs;
  bool base64 = false;  // encoding_format
  int normalize = 2;    // embd_normalize
};

// input: a string, an array of strings, an array of token ids, or an array of such arrays.
// Throws ApiError (400) naming the field.
EmbeddingsRequest parse_embeddings_request(const nlohmann::json& body, const Tokenizer& tok, int n_ctx);

// The OpenAI response; base64 is the little-endian float32 bytes.
nlohmann::json embeddings_response(const std::vector<std::vector<float>>& vectors, const EmbeddingsRequest& req,
                                   const std::string& model, int prompt_tokens);

// One input at a time through a Session of its own (made on first use), beside the engine.
class Embedder {
 public:
  Embedder(const Model& model, BackendSet backends, int n_ctx);

  // Throws ApiError (400) for a model without embeddings (a reranker).
  std::vector<float> embed(std::span<const int32_t> tokens, int norm);
  const Model& model() const { return model_; }
  int n_ctx() const { return n_ctx_; }

 private:
  const Model& model_;
  int n_ctx_;
  std::optional<Pooling> pooling_;
  std::mutex mutex_;
  std::optional<BackendSet> backends_;  // until the session takes them
  std::optional<Session> session_;
};

}  // namespace hart::serve
