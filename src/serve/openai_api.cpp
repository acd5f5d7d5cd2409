#include "serve/openai_api.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>

#include "serve/structured_output.h"

namespace hart::serve {

using nlohmann::json;
using Body = nlohmann::ordered_json;  // request bodies, in the client's key order

json error_body(const std::string& message, const std::string& type, const std::string& param) {
  return {{"error", {{"message", message}, {"type", type}, {"param", param.empty() ? json() : json(param)}, {"code", json()}}}};
}

namespace {

[[noreturn]] void invalid(const std::string& param, const std::string& message) {
  throw ApiError(400, "invalid_request_error", message, param);
}

// The value of body[key] as T when present and not null; names the field when it has the wrong type.
template <class T>
bool get(const Body& body, const char* key, T& out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return false;
  const bool ok = std::is_same_v<T, bool>          ? it->is_boolean()
                  : std::is_same_v<T, std::string> ? it->is_string()
                  : std::is_integral_v<T>          ? it->is_number_integer()
                                                   : it->is_number();
  if (!ok) invalid(key, std::string("'") + key + "' has the wrong type: " + it->dump());
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // get<T> would wrap a value T cannot hold (n = 2^32 + 1 reading as 1).
    const bool fits = it->is_number_unsigned() ? it->template get<uint64_t>() <= uint64_t(std::numeric_limits<T>::max())
                                               : it->template get<int64_t>() >= int64_t(std::numeric_limits<T>::min()) &&
                                                     it->template get<int64_t>() <= int64_t(std::numeric_limits<T>::max());
    if (!fits) invalid(key, std::string("'") + key + "' is out of range: " + it->dump());
  }
  out = it->get<T>();
  return true;
}

template <class T>
void get_in(const Body& body, const char* key, T& out, T lo, T hi) {
  if (get(body, key, out) && !(out >= lo && out <= hi))
    invalid(key, std::string("'") + key + "' must be between " + std::to_string(lo) + " and " + std::to_string(hi));
}

// The text's tokens; a text the vocabulary cannot encode (a byte without a token) is the
// request's fault, a 400 naming `param`.
std::vector<int32_t> encode(const PromptContext& pc, const std::string& text, const char* param) {
  try {
    return pc.tok.encode(text, true, true);
  } catch (const Error& e) {
    invalid(param, e.what());
  }
}

std::vector<int32_t> chat_prompt(const Body& body, const PromptContext& pc) {
  auto it = body.find("messages");
  if (it == body.end() || !it->is_array() || it->empty()) invalid("messages", "'messages' must be a non-empty array");
  ChatRequest r;
  r.messages = *it;
  if (auto t = body.find("tools"); t != body.end() && !t->is_null()) {
    if (!t->is_array()) invalid("tools", "'tools' must be an array");
    r.tools = *t;
  }
  // llama-server keeps past reasoning by default (preserve_reasoning); the request's
  // chat_template_kwargs add to that and win.
  r.kwargs = Body{{"preserve_reasoning", true}};
  if (auto k = body.find("chat_template_kwargs"); k != body.end() && !k->is_null()) {
    if (!k->is_object()) invalid("chat_template_kwargs", "'chat_template_kwargs' must be an object");
    for (const auto& [key, v] : k->items()) r.kwargs[key] = v;
  }
  std::string prompt;
  try {
    prompt = pc.chat.apply(r);
  } catch (const Error& e) {
    invalid("messages", std::string("the chat template cannot render these messages: ") + e.what());
  }
  return encode(pc, prompt, "messages");
}

std::vector<int32_t> completion_prompt(const Body& body, const PromptContext& pc) {
  auto it = body.find("prompt");
  if (it == body.end()) invalid("prompt", "'prompt' is required");
  if (it->is_string()) return encode(pc, it->get<std::string>(), "prompt");
  if (it->is_array() && !it->empty() && std::all_of(it->begin(), it->end(), [](const Body& x) { return x.is_number_integer(); })) {
    std::vector<int32_t> ids;
    for (const Body& x : *it) {
      const int64_t id = x.get<int64_t>();
      if (id < 0 || id >= pc.tok.n_vocab()) invalid("prompt", "token id " + std::to_string(id) + " is outside the vocabulary");
      ids.push_back(int32_t(id));
    }
    return ids;
  }
  invalid("prompt", "'prompt' must be a string or an array of token ids");
}

}  // namespace

ApiRequest parse_request(const Body& body, Endpoint endpoint, const PromptContext& pc) {
  if (!body.is_object()) invalid("", "the request body must be a JSON object");
  ApiRequest r{endpoint, {}};
  GenParams& g = r.gen;
  SamplerParams& sp = g.sampling;
  // OpenAI's defaults: plain sampling at temperature 1; top_k / min_p are opt-in extensions.
  sp.temperature = 1.0f;
  sp.top_p = 1.0f;
  sp.top_k = 0;
  sp.min_p = 0.0f;
  get_in(body, "temperature", sp.temperature, 0.0f, 2.0f);
  get_in(body, "top_p", sp.top_p, 0.0f, 1.0f);
  get_in(body, "min_p", sp.min_p, 0.0f, 1.0f);
  get_in(body, "top_k", sp.top_k, -1, 1 << 30);
  get_in(body, "frequency_penalty", sp.frequency_penalty, -2.0f, 2.0f);
  get_in(body, "presence_penalty", sp.presence_penalty, -2.0f, 2.0f);
  get_in(body, "repeat_penalty", sp.repeat_penalty, 0.01f, 10.0f);
  int64_t seed = -1;
  if (get(body, "seed", seed)) sp.seed = uint64_t(seed) == kRandomSeed ? kRandomSeed - 1 : uint64_t(seed);
  int n = 1;
  get(body, "n", n);
  if (n != 1) invalid("n", "only n = 1 is supported");
  get(body, "stream", r.stream);
  if (auto it = body.find("stream_options"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) invalid("stream_options", "'stream_options' must be an object");
    get(*it, "include_usage", r.include_usage);
  }

  if (endpoint == Endpoint::CHAT) {
    bool want = false;
    get(body, "logprobs", want);
    get_in(body, "top_logprobs", r.top_logprobs, 0, 20);
    if (r.top_logprobs > 0 && !want) invalid("top_logprobs", "'top_logprobs' needs 'logprobs': true");
    sp.logprobs = want;
  } else if (auto it = body.find("logprobs"); it != body.end() && !it->is_null()) {
    get_in(body, "logprobs", r.top_logprobs, 0, 5);
    sp.logprobs = true;
  }
  sp.top_logprobs = r.top_logprobs;

  if (auto it = body.find("stop"); it != body.end() && !it->is_null()) {
    if (it->is_string()) g.stops.push_back(it->get<std::string>());
    else if (it->is_array() && it->size() <= 4 && std::all_of(it->begin(), it->end(), [](const Body& x) { return x.is_string(); }))
      for (const Body& x : *it) g.stops.push_back(x.get<std::string>());
    else invalid("stop", "'stop' must be a string or an array of up to 4 strings");
  }

  g.grammar = requested_grammar(body);
  g.prompt = endpoint == Endpoint::CHAT ? chat_prompt(body, pc) : completion_prompt(body, pc);
  const int n_prompt = int(g.prompt.size());
  if (n_prompt == 0) invalid("prompt", "the prompt has no tokens");
  if (n_prompt >= pc.n_ctx)
    invalid(endpoint == Endpoint::CHAT ? "messages" : "prompt",
            "the prompt has " + std::to_string(n_prompt) + " tokens; the context holds " + std::to_string(pc.n_ctx) +
                " (prompt and completion together)");
  int64_t max_tokens = pc.n_ctx - n_prompt;
  const bool given = get(body, "max_completion_tokens", max_tokens) || get(body, "max_tokens", max_tokens);
  if (given && max_tokens < 1) invalid("max_tokens", "'max_tokens' must be at least 1");
  if (given && max_tokens > pc.n_ctx - n_prompt)  // not n_prompt + max_tokens: that overflows
    invalid("max_tokens", "'max_tokens' is " + std::to_string(max_tokens) + " but the prompt's " + std::to_string(n_prompt) +
                              " tokens leave room for " + std::to_string(pc.n_ctx - n_prompt) + " in a context of " +
                              std::to_string(pc.n_ctx));
  g.max_tokens = int(max_tokens);
  return r;
}

ResponseWriter::ResponseWriter(const ApiRequest& req, const Tokenizer& tok, std::string model)
    : req_(req), tok_(tok), model_(std::move(model)) {
  static std::atomic<uint64_t> counter{0};
  created_ = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  id_ = (req.endpoint == Endpoint::CHAT ? "chatcmpl-" : "cmpl-") + std::to_string(created_) + "-" + std::to_string(counter++);
}

json ResponseWriter::envelope(const char* object) const {
  return {{"id", id_}, {"object", object}, {"created", created_}, {"model", model_}, {"system_fingerprint", "hart"}};
}

json ResponseWriter::logprobs(const std::vector<TokenInfo>& tokens) const {
  if (!req_.gen.sampling.logprobs) return nullptr;
  auto bytes = [](const std::string& s) {
    json b = json::array();
    for (unsigned char c : s) b.push_back(int(c));
    return b;
  };
  if (req_.endpoint == Endpoint::CHAT) {
    json content = json::array();
    for (const TokenInfo& t : tokens) {
      const std::string piece = tok_.token_to_piece(t.id);
      json top = json::array();
      for (const TokenLogprob& a : t.top) {
        const std::string p = tok_.token_to_piece(a.token);
        top.push_back({{"token", p}, {"logprob", a.logprob}, {"bytes", bytes(p)}});
      }
      content.push_back({{"token", piece}, {"logprob", t.logprob}, {"bytes", bytes(piece)}, {"top_logprobs", top}});
    }
    return {{"content", content}};
  }
  json lp = {{"tokens", json::array()}, {"token_logprobs", json::array()}, {"top_logprobs", json::array()}};
  for (const TokenInfo& t : tokens) {
    lp["tokens"].push_back(tok_.token_to_piece(t.id));
    lp["token_logprobs"].push_back(t.logprob);
    json top = json::object();
    for (const TokenLogprob& a : t.top) top[tok_.token_to_piece(a.token)] = a.logprob;
    lp["top_logprobs"].push_back(top);
  }
  return lp;
}

json ResponseWriter::choice(const std::string& text, const json& finish, const std::vector<TokenInfo>& tokens,
                            bool delta) const {
  json c = {{"index", 0}, {"finish_reason", finish}, {"logprobs", logprobs(tokens)}};
  if (req_.endpoint == Endpoint::COMPLETION) {
    c["text"] = text;
  } else if (delta) {
    c["delta"] = json::object();
    if (!text.empty()) c["delta"]["content"] = text;
  } else {
    c["message"] = {{"role", "assistant"}, {"content", text}};
  }
  return c;
}

json ResponseWriter::usage(const Event& done) const {
  return {{"prompt_tokens", done.prompt_tokens},
          {"completion_tokens", done.completion_tokens},
          {"total_tokens", done.prompt_tokens + done.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", done.cached_tokens}}}};
}

std::vector<json> ResponseWriter::chunks(const Event& ev) {
  if (ev.finish_reason == "error") throw ApiError(500, "server_error", ev.error);
  const char* object = req_.endpoint == Endpoint::CHAT ? "chat.completion.chunk" : "text_completion";
  std::vector<json> out;
  if (req_.endpoint == Endpoint::CHAT && !sent_role_) {
    json c = envelope(object);
    c["choices"] = json::array({{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"finish_reason", nullptr}, {"logprobs", nullptr}}});
    out.push_back(c);
    sent_role_ = true;
  }
  if (!ev.text.empty() || !ev.tokens.empty() || ev.done) {
    json c = envelope(object);
    c["choices"] = json::array({choice(ev.text, ev.done ? json(ev.finish_reason) : json(), ev.tokens, true)});
    out.push_back(c);
  }
  if (ev.done && req_.include_usage) {
    json c = envelope(object);
    c["choices"] = json::array();
    c["usage"] = usage(ev);
    out.push_back(c);
  }
  return out;
}

void ResponseWriter::add(const Event& ev) {
  if (ev.finish_reason == "error") throw ApiError(500, "server_error", ev.error);
  text_ += ev.text;
  tokens_.insert(tokens_.end(), ev.tokens.begin(), ev.tokens.end());
  if (ev.done) done_ = ev;
}

json ResponseWriter::response() const {
  json r = envelope(req_.endpoint == Endpoint::CHAT ? "chat.completion" : "text_completion");
  r["choices"] = json::array({choice(text_, done_.finish_reason, tokens_, false)});
  r["usage"] = usage(done_);
  return r;
}

}  // namespace hart::serve
