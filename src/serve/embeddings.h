// /v1/embeddings: each input's last hidden states (after the output norm), pooled as the GGUF's
// <arch>.pooling_type (or --pooling) says (mean for a decoder model that names none), then
// normalized as llama-server does (embd_normalize: Euclidean by default). A reranker (pooling
// rank) has no embeddings: /v1/rerank scores a query and a document in one sequence, the last
// token's state through the model's classifier head (a softmax over its labels for Qwen3's),
// its first output the score, as llama-server scores them.
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

enum class Pooling { MEAN, CLS, LAST, RANK };

// The GGUF's pooling type; nullopt for one llama.cpp does not define.
std::optional<Pooling> pooling_of(const Model& m);
std::string pooling_name(Pooling p);
// "mean", "cls", "last", "rank" (and llama-server's "none": a decoder's mean) for --pooling.
std::optional<Pooling> pooling_from_name(const std::string& name);

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

struct RerankRequest {
  std::vector<std::vector<int32_t>> inputs;  // query and document, one sequence per document
  std::vector<std::string> documents;
  size_t top_n = 0;
  bool tei = false;          // Hugging Face TEI's form ("texts"), else Jina's ("documents")
  bool return_text = false;  // TEI: each result with its text
};

// query, documents (or texts), top_n, return_text; each document after the query in the
// GGUF's tokenizer.chat_template.rerank ({query}, {document}), else as llama-server joins them
// (BOS, query, EOS, SEP, document, EOS as the vocabulary adds them); `file`: the model's, for
// the template and the SEP token. Throws ApiError (400).
RerankRequest parse_rerank_request(const nlohmann::json& body, const gguf::File& file, const Tokenizer& tok, int n_ctx);

// Jina's response (results sorted by relevance_score, top_n of them) or TEI's array.
nlohmann::json rerank_response(const std::vector<float>& scores, RerankRequest& req, const nlohmann::json& body,
                               const std::string& model, int prompt_tokens);

// One input at a time through a Session of its own (made on first use), beside the engine.
class Embedder {
 public:
  // `pooling`: --pooling, over the GGUF's.
  Embedder(const Model& model, BackendSet backends, int n_ctx, std::optional<Pooling> pooling = std::nullopt);

  // Throws ApiError (400) for a model without embeddings (a reranker).
  std::vector<float> embed(std::span<const int32_t> tokens, int norm);
  // The relevance score of one query-document sequence. Throws ApiError (501) unless the model
  // ranks and has a classifier head.
  float rank(std::span<const int32_t> tokens);
  bool ranks() const { return pooling_ == Pooling::RANK; }
  const Model& model() const { return model_; }
  int n_ctx() const { return n_ctx_; }

 private:
  std::vector<float> hidden(std::span<const int32_t> tokens);

  const Model& model_;
  int n_ctx_;
  std::optional<Pooling> pooling_;
  std::mutex mutex_;
  std::optional<BackendSet> backends_;  // until the session takes them
  std::optional<Session> session_;
};

}  // namespace hart::serve
