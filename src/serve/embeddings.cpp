#include "serve/embeddings.h"

#include "common/base64.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "quant/quant.h"
#include "serve/openai_api.h"

namespace hart::serve {

using nlohmann::json;

namespace {

constexpr size_t kMaxInputs = 256;

std::vector<int32_t> token_ids(const json& arr, const Tokenizer& tok) {
  std::vector<int32_t> ids;
  for (const json& x : arr) {
    const int64_t id = x.get<int64_t>();
    if (id < 0 || id >= tok.n_vocab()) invalid_request("input", "token id " + std::to_string(id) + " is outside the vocabulary");
    ids.push_back(int32_t(id));
  }
  return ids;
}

bool all_ints(const json& arr) {
  return std::all_of(arr.begin(), arr.end(), [](const json& x) { return x.is_number_integer(); });
}

}  // namespace

std::optional<Pooling> pooling_of(const Model& m) {
  const std::optional<int64_t> t = m.file ? m.file->get_int(m.hp.arch_name + ".pooling_type") : std::nullopt;
  switch (t.value_or(0)) {  // llama.cpp's enum: 0 none, 1 mean, 2 cls, 3 last, 4 rank
    case 0:
    case 1: return Pooling::MEAN;  // none: a decoder model; its tokens' mean
    case 2: return Pooling::CLS;
    case 3: return Pooling::LAST;
    case 4: return Pooling::RANK;
    default: return std::nullopt;
  }
}

std::string pooling_name(Pooling p) {
  return p == Pooling::MEAN ? "mean" : p == Pooling::CLS ? "cls" : p == Pooling::LAST ? "last" : "rank";
}

std::optional<Pooling> pooling_from_name(const std::string& name) {
  if (name == "none" || name == "mean") return Pooling::MEAN;
  if (name == "cls") return Pooling::CLS;
  if (name == "last") return Pooling::LAST;
  if (name == "rank") return Pooling::RANK;
  return std::nullopt;
}

std::vector<float> pool(std::span<const float> hidden, int n_embd, Pooling p) {
  const size_t d = size_t(n_embd), n_tok = hidden.size() / d;
  if (n_tok == 0) throw Error("pool: no tokens");
  if (p == Pooling::CLS) return {hidden.begin(), hidden.begin() + std::ptrdiff_t(d)};
  if (p == Pooling::LAST || p == Pooling::RANK) return {hidden.end() - std::ptrdiff_t(d), hidden.end()};  // rank: Qwen3's last token
  std::vector<double> sum(d, 0.0);
  for (size_t t = 0; t < n_tok; t++)
    for (size_t i = 0; i < d; i++) sum[i] += hidden[t * d + i];
  std::vector<float> out(d);
  for (size_t i = 0; i < d; i++) out[i] = float(sum[i] / double(n_tok));
  return out;
}

void normalize(std::vector<float>& v, int norm) {
  double s = 0;
  if (norm < 0) return;
  if (norm == 0) {
    for (float x : v) s = std::max(s, double(std::fabs(x)));
    s /= 32760.0;
  } else {
    for (float x : v) s += std::pow(std::fabs(double(x)), norm);
    s = std::pow(s, 1.0 / norm);
  }
  const double scale = s > 0 ? 1.0 / s : 0.0;
  for (float& x : v) x = float(x * scale);
}

EmbeddingsRequest parse_embeddings_request(const json& body, const Tokenizer& tok, int n_ctx) {
  if (!body.is_object()) invalid_request("", "the request body must be a JSON object");
  EmbeddingsRequest r;
  const auto in = body.find("input");
  if (in == body.end() || in->is_null()) invalid_request("input", "'input' is required");
  auto text = [&](const json& s) {
    try {
      return tok.encode(s.get<std::string>(), true, true);
    } catch (const Error& e) {
      invalid_request("input", e.what());
    }
  };
  if (in->is_string()) {
    r.inputs.push_back(text(*in));
  } else if (in->is_array() && !in->empty() && all_ints(*in)) {
    r.inputs.push_back(token_ids(*in, tok));
  } else if (in->is_array() && !in->empty()) {
    for (const json& x : *in) {
      if (x.is_string()) r.inputs.push_back(text(x));
      else if (x.is_array() && !x.empty() && all_ints(x)) r.inputs.push_back(token_ids(x, tok));
      else invalid_request("input", "'input' must be a string, an array of strings, or token ids (an array, or an array of arrays)");
    }
  } else {
    invalid_request("input", "'input' must be a string, an array of strings, or token ids (an array, or an array of arrays)");
  }
  if (r.inputs.size() > kMaxInputs) invalid_request("input", "at most " + std::to_string(kMaxInputs) + " inputs per request");
  for (const auto& ids : r.inputs) {
    if (ids.empty()) invalid_request("input", "an input has no tokens");
    if (int(ids.size()) > n_ctx)
      invalid_request("input", "an input has " + std::to_string(ids.size()) + " tokens; the context holds " + std::to_string(n_ctx));
  }
  if (const auto f = body.find("encoding_format"); f != body.end() && !f->is_null()) {
    if (!f->is_string() || (*f != "float" && *f != "base64")) invalid_request("encoding_format", "'encoding_format' must be \"float\" or \"base64\"");
    r.base64 = *f == "base64";
  }
  if (const auto n = body.find("embd_normalize"); n != body.end() && !n->is_null()) {
    // An unsigned value past int64's range would read as a negative one.
    const bool in_range = n->is_number_unsigned() ? n->get<uint64_t>() <= 64
                          : n->is_number_integer() && n->get<int64_t>() >= -1 && n->get<int64_t>() <= 64;
    if (!in_range)
      invalid_request("embd_normalize", "'embd_normalize' must be an integer from -1 to 64");
    r.normalize = int(n->get<int64_t>());
  }
  if (const auto d = body.find("dimensions"); d != body.end() && !d->is_null())
    invalid_request("dimensions", "'dimensions' is not supported: the model's embeddings have a fixed size");
  return r;
}

json embeddings_response(const std::vector<std::vector<float>>& vectors, const EmbeddingsRequest& req, const std::string& model,
                         int prompt_tokens) {
  json data = json::array();
  for (size_t i = 0; i < vectors.size(); i++) {
    const std::vector<float>& v = vectors[i];
    static_assert(std::endian::native == std::endian::little, "base64 embeddings are little-endian float32");
    data.push_back({{"object", "embedding"}, {"index", i},
                    {"embedding", req.base64 ? json(base64_encode(v.data(), v.size() * sizeof(float))) : json(v)}});
  }
  return {{"object", "list"}, {"data", data}, {"model", model},
          {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}}};
}

RerankRequest parse_rerank_request(const json& body, const gguf::File& file, const Tokenizer& tok, int n_ctx) {
  if (!body.is_object()) invalid_request("", "the request body must be a JSON object");
  RerankRequest r;
  const auto q = body.find("query");
  if (q == body.end() || !q->is_string()) invalid_request("query", "'query' must be a string");
  r.tei = body.contains("texts");
  const char* key = r.tei ? "texts" : "documents";
  const auto docs = body.find(key);
  if (docs == body.end() || !docs->is_array() || docs->empty() ||
      !std::all_of(docs->begin(), docs->end(), [](const json& d) { return d.is_string(); }))
    invalid_request(key, std::string("'") + key + "' must be a non-empty array of strings");
  if (docs->size() > kMaxInputs) invalid_request(key, "at most " + std::to_string(kMaxInputs) + " documents per request");
  r.top_n = docs->size();
  if (const auto t = body.find("top_n"); t != body.end() && !t->is_null()) {
    if (!t->is_number_integer() || t->get<int64_t>() < 0) invalid_request("top_n", "'top_n' must be a non-negative integer");
    r.top_n = std::min<size_t>(r.top_n, t->get<uint64_t>());
  }
  if (const auto rt = body.find("return_text"); rt != body.end() && !rt->is_null()) {
    if (!rt->is_boolean()) invalid_request("return_text", "'return_text' must be a boolean");
    r.return_text = r.tei && rt->get<bool>();
  }
  auto encode = [&](const std::string& text, bool parse_special) {
    try {
      return tok.encode(text, false, parse_special);
    } catch (const Error& e) {
      invalid_request(key, e.what());
    }
  };
  const std::optional<std::string> tmpl = file.get_string("tokenizer.chat_template.rerank");
  const bool add_sep = file.get_bool("tokenizer.ggml.add_sep_token").value_or(false);
  const int32_t sep = int32_t(file.get_int("tokenizer.ggml.seperator_token_id").value_or(-1));
  const int32_t eos = tok.eos() >= 0 ? tok.eos() : sep;
  const std::string& query = q->get_ref<const std::string&>();
  for (const json& d : *docs) {
    const std::string& doc = d.get_ref<const std::string&>();
    std::vector<int32_t> ids;
    if (tmpl) {
      std::string prompt = *tmpl;
      for (const auto& [from, to] : {std::pair<std::string, const std::string&>{"{query}", query}, {"{document}", doc}})
        for (size_t at = prompt.find(from); at != std::string::npos; at = prompt.find(from, at + to.size()))
          prompt.replace(at, from.size(), to);
      ids = encode(prompt, true);
    } else {
      if (tok.add_bos()) ids.push_back(tok.bos());
      const auto qt = encode(query, false), dt = encode(doc, false);
      ids.insert(ids.end(), qt.begin(), qt.end());
      if (tok.add_eos()) ids.push_back(eos);
      if (add_sep) ids.push_back(sep);
      ids.insert(ids.end(), dt.begin(), dt.end());
      if (tok.add_eos()) ids.push_back(eos);
    }
    if (ids.empty()) invalid_request(key, "a query and document have no tokens");
    if (int(ids.size()) > n_ctx)
      invalid_request(key, "a query and document have " + std::to_string(ids.size()) + " tokens; the context holds " + std::to_string(n_ctx));
    r.inputs.push_back(std::move(ids));
    r.documents.push_back(doc);
  }
  return r;
}

json rerank_response(const std::vector<float>& scores, RerankRequest& req, const json& body, const std::string& model, int prompt_tokens) {
  const char* label = req.tei ? "score" : "relevance_score";
  std::vector<size_t> order(scores.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  json results = json::array();
  for (size_t k = 0; k < std::min(req.top_n, order.size()); k++) {
    json e = {{"index", order[k]}, {label, scores[order[k]]}};
    if (req.return_text) e["text"] = req.documents[order[k]];
    results.push_back(std::move(e));
  }
  if (req.tei) return results;
  const json name = body.contains("model") && body["model"].is_string() ? body["model"] : json(model);
  return {{"model", name}, {"object", "list"}, {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}},
          {"results", results}};
}

Embedder::Embedder(const Model& model, BackendSet backends, int n_ctx, std::optional<Pooling> pooling)
    : model_(model), n_ctx_(n_ctx), pooling_(pooling ? pooling : pooling_of(model)), backends_(std::move(backends)) {}

std::vector<float> Embedder::hidden(std::span<const int32_t> tokens) {
  std::lock_guard lock(mutex_);
  if (!session_) {
    SessionParams sp;
    sp.n_ctx = n_ctx_;
    session_.emplace(model_, sp, std::move(*backends_));
    backends_.reset();
  }
  session_->truncate(0);
  const std::span<const float> h = session_->hidden_states(tokens);
  return {h.begin(), h.end()};
}

std::vector<float> Embedder::embed(std::span<const int32_t> tokens, int norm) {
  if (!pooling_ || *pooling_ == Pooling::RANK)
    throw ApiError(400, "invalid_request_error", "this model ranks (pooling type rank); it has no embeddings");
  std::vector<float> v = pool(hidden(tokens), model_.hp.n_embd, *pooling_);
  normalize(v, norm);
  return v;
}

float Embedder::rank(std::span<const int32_t> tokens) {
  const Tensor* head = model_.w.cls_out;
  if (!ranks() || !head)
    throw ApiError(501, "not_supported_error",
                   "this server does not rerank: it needs a reranker (pooling rank, a classifier head cls.output), e.g. Qwen3-Reranker");
  const std::vector<float> h = pool(hidden(tokens), model_.hp.n_embd, Pooling::RANK);
  const int64_t d = head->ne[0], n = head->ne[1];
  std::vector<float> row(static_cast<size_t>(d)), out(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; j++) {
    dequantize_row(head->type, static_cast<const uint8_t*>(head->data) + size_t(j) * head->nb[1], row.data(), d);
    double s = 0;
    for (int64_t i = 0; i < d; i++) s += double(row[size_t(i)]) * h[size_t(i)];
    out[size_t(j)] = float(s);
  }
  // Qwen3-Reranker's labels are yes / no: the score is p(yes) (llama.cpp's softmax over them).
  const float top = *std::max_element(out.begin(), out.end());
  double sum = 0;
  for (float& x : out) sum += (x = std::exp(x - top));
  return float(out[0] / sum);
}

}  // namespace hart::serve
