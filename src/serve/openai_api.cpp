#include "serve/openai_api.h"

#include "serve/chat_reply.h"
#include "serve/image_input.h"
#include "serve/tool_grammar.h"
#include "serve/tool_request.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>

#include "serve/structured_output.h"

namespace hart::serve {

using nlohmann::json;
using Body = nlohmann::ordered_json;  // request bodies, in the client's key order

constexpr int kMaxChoices = 16;  // n: each choice is a sequence of its own in the KV pool

void invalid_request(const std::string& param, const std::string& message) {
  throw ApiError(400, "invalid_request_error", message, param);
}

json error_body(const std::string& message, const std::string& type, const std::string& param) {
  return {{"error", {{"message", message}, {"type", type}, {"param", param.empty() ? json() : json(param)}, {"code", json()}}}};
}

namespace {

// The value of body[key] as T when present and not null; names the field when it has the wrong type.
template <class T>
bool get(const Body& body, const char* key, T& out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return false;
  const bool ok = std::is_same_v<T, bool>          ? it->is_boolean()
                  : std::is_same_v<T, std::string> ? it->is_string()
                  : std::is_integral_v<T>          ? it->is_number_integer()
                                                   : it->is_number();
  if (!ok) invalid_request(key, std::string("'") + key + "' has the wrong type: " + it->dump());
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // get<T> would wrap a value T cannot hold (n = 2^32 + 1 reading as 1).
    const bool fits = it->is_number_unsigned() ? it->template get<uint64_t>() <= uint64_t(std::numeric_limits<T>::max())
                                               : it->template get<int64_t>() >= int64_t(std::numeric_limits<T>::min()) &&
                                                     it->template get<int64_t>() <= int64_t(std::numeric_limits<T>::max());
    if (!fits) invalid_request(key, std::string("'") + key + "' is out of range: " + it->dump());
  }
  out = it->get<T>();
  return true;
}

template <class T>
void get_in(const Body& body, const char* key, T& out, T lo, T hi) {
  if (get(body, key, out) && !(out >= lo && out <= hi))
    invalid_request(key, std::string("'") + key + "' must be between " + std::to_string(lo) + " and " + std::to_string(hi));
}

// The text's tokens; a text the vocabulary cannot encode (a byte without a token) is the
// request's fault, a 400 naming `param`.
std::vector<int32_t> encode(const PromptContext& pc, const std::string& text, const char* param) {
  try {
    return pc.tok.encode(text, true, true);
  } catch (const Error& e) {
    invalid_request(param, e.what());
  }
}

// The chat request's prompt text, and its tool fields; its images' bytes in `images`, each at a
// media marker of the text.
std::string render_chat(const Body& body, const ChatFormatter& chat, ToolRequest& tools, std::vector<ImageBytes>& images) {
  auto it = body.find("messages");
  if (it == body.end() || !it->is_array() || it->empty()) invalid_request("messages", "'messages' must be a non-empty array");
  ChatRequest r;
  r.messages = *it;
  images = take_images(r.messages);
  tools = parse_tool_request(body);
  check_tool_messages(*it);
  r.tools = tools.tools;
  // llama-server keeps past reasoning by default (preserve_reasoning); the request's
  // chat_template_kwargs add to that and win.
  r.kwargs = Body{{"preserve_reasoning", true}};
  if (auto k = body.find("chat_template_kwargs"); k != body.end() && !k->is_null()) {
    if (!k->is_object()) invalid_request("chat_template_kwargs", "'chat_template_kwargs' must be an object");
    for (const auto& [key, v] : k->items()) r.kwargs[key] = v;
  }
  try {
    return chat.apply(r);
  } catch (const Error& e) {
    invalid_request("messages", std::string("the chat template cannot render these messages: ") + e.what());
  }
}

// Also sets how the reply is read (api.reply) and the markers its text must keep.
std::vector<int32_t> chat_prompt(const Body& body, const PromptContext& pc, ApiRequest& api) {
  ToolRequest tools;
  std::vector<ImageBytes> images;
  const std::string prompt = render_chat(body, pc.chat, tools, images);
  api.reply = reply_syntax(pc.chat.output_syntax(!tools.tools.is_null()), prompt, tools);
  api.gen.shown_tokens = marker_tokens(pc.tok, output_markers(api.reply));
  if (api.reply.tools == ToolCallSyntax::GENERIC) {
    // The generic format is a grammar on every reply (the JSON of a call or of a response).
    if (api.gen.grammar)
      invalid_request("tools", "this model's template has no tool-call syntax, so its tools use the generic JSON format, "
                               "which cannot be combined with 'response_format', 'json_schema' or 'grammar'");
    api.gen.grammar = generic_reply_grammar(tools.tools, tools.forced, tools.parallel);
  } else if (!tools.forced.empty()) {
    if (api.gen.grammar)
      invalid_request("tool_choice", "a forced tool call (tool_choice \"required\" or a named function) cannot be combined with "
                             "'response_format', 'json_schema' or 'grammar'");
    api.gen.grammar = forced_call_grammar(api.reply, tools.tools, tools.forced);
  }
  if (images.empty()) return encode(pc, prompt, "messages");
  if (!pc.vision)
    invalid_request("messages", "this server takes no images: it was started without --mmproj (the model's multimodal projector)");
  ImagePrompt p = pc.vision->encode(pc.tok, prompt, images, "messages");
  api.gen.images = std::move(p.images);
  return std::move(p.ids);
}

std::vector<int32_t> completion_prompt(const Body& body, const PromptContext& pc) {
  auto it = body.find("prompt");
  if (it == body.end()) invalid_request("prompt", "'prompt' is required");
  if (it->is_string()) return encode(pc, it->get<std::string>(), "prompt");
  if (it->is_array() && !it->empty() && std::all_of(it->begin(), it->end(), [](const Body& x) { return x.is_number_integer(); })) {
    std::vector<int32_t> ids;
    for (const Body& x : *it) {
      const int64_t id = x.get<int64_t>();
      if (id < 0 || id >= pc.tok.n_vocab()) invalid_request("prompt", "token id " + std::to_string(id) + " is outside the vocabulary");
      ids.push_back(int32_t(id));
    }
    return ids;
  }
  invalid_request("prompt", "'prompt' must be a string or an array of token ids");
}

// The server's speculative settings with the request's speculative.* fields.
spec::SpecParams request_speculation(const Body& body, const PromptContext& pc) {
  spec::SpecParams p = pc.speculation ? pc.speculation->params() : spec::SpecParams{};
  std::string type;
  if (get(body, "speculative.type", type)) {
    try {
      p.types = spec::types_from_list(type);
    } catch (const Error& e) {
      invalid_request("speculative.type", e.what());
    }
    for (spec::SpecType t : p.types)
      if (!pc.speculation || !pc.speculation->can(t))
        invalid_request("speculative.type", std::string("this server cannot draft with ") + spec::type_name(t) +
                                                (t == spec::SpecType::DRAFT_SIMPLE ? ": it has no draft model (-md)"
                                                 : t == spec::SpecType::DRAFT_MTP  ? ": it was not started with --spec-type draft-mtp"
                                                                                   : ": it has no lookup cache (-lcs/-lcd)"));
  }
  int n_max = 0;
  if (get(body, "speculative.n_max", n_max)) {
    if (n_max < 0) invalid_request("speculative.n_max", "'speculative.n_max' must be at least 0");
    if (n_max == 0) return {};  // no speculation for this request
    p.n_max = p.draft_limit = n_max;
  }
  get_in(body, "speculative.n_min", p.n_min, 0, std::numeric_limits<int>::max());
  get_in(body, "speculative.p_min", p.p_min, 0.0f, 1.0f);
  try {
    p.validate(pc.chunk_size);
  } catch (const Error& e) {
    invalid_request(n_max > 0 ? "speculative.n_max" : "speculative", e.what());
  }
  return p;
}

}  // namespace

std::vector<float> lora_scales(const Body& list, size_t n_adapters, const std::string& param) {
  if (!list.is_array()) invalid_request(param, "'" + param + "' must be an array of {\"id\", \"scale\"} objects");
  std::vector<float> scales(n_adapters, 0.0f);
  for (const Body& entry : list) {
    const auto id = entry.is_object() ? entry.find("id") : entry.end();
    const auto scale = entry.is_object() ? entry.find("scale") : entry.end();
    if (!entry.is_object() || id == entry.end() || !id->is_number_integer() || scale == entry.end() || !scale->is_number())
      invalid_request(param, "each entry of '" + param + "' must be {\"id\": integer, \"scale\": number}, not " + entry.dump());
    const int64_t i = id->get<int64_t>();
    if (i < 0 || uint64_t(i) >= n_adapters)
      invalid_request(param, "'" + param + "' names adapter " + std::to_string(i) + "; this server has " +
                                 (n_adapters == 0 ? std::string("no LoRA adapters (--lora)")
                                                  : std::to_string(n_adapters) + " (ids 0 to " + std::to_string(n_adapters - 1) + ")"));
    const double v = scale->get<double>();
    if (!std::isfinite(v) || std::abs(v) > 1e6) invalid_request(param, "adapter " + std::to_string(i) + "'s scale is not a usable number");
    scales[size_t(i)] = float(v);
  }
  return scales;
}

std::string chat_prompt_text(const Body& body, const ChatFormatter& chat) {
  if (!body.is_object()) invalid_request("", "the request body must be a JSON object");
  ToolRequest tools;
  std::vector<ImageBytes> images;  // a marker in the text each
  return render_chat(body, chat, tools, images);
}

ApiRequest parse_request(const Body& body, Endpoint endpoint, const PromptContext& pc) {
  if (!body.is_object()) invalid_request("", "the request body must be a JSON object");
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
  get_in(body, "n", g.n, 1, kMaxChoices);
  get(body, "stream", r.stream);
  if (auto it = body.find("stream_options"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) invalid_request("stream_options", "'stream_options' must be an object");
    get(*it, "include_usage", r.include_usage);
  }

  // Routing hints for what sits in front of the replicas (deploy/haproxy hashes on the key); a
  // replica only checks them.
  std::string hint;
  get(body, "prompt_cache_key", hint);
  get(body, "user", hint);

  if (endpoint == Endpoint::CHAT) {
    bool want = false;
    get(body, "logprobs", want);
    get_in(body, "top_logprobs", r.top_logprobs, 0, 20);
    if (r.top_logprobs > 0 && !want) invalid_request("top_logprobs", "'top_logprobs' needs 'logprobs': true");
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
    else invalid_request("stop", "'stop' must be a string or an array of up to 4 strings");
  }

  g.lora = pc.lora;
  if (const auto it = body.find("lora"); it != body.end() && !it->is_null() && !(it->is_array() && it->empty()))
    g.lora = lora_scales(*it, pc.lora.size(), "lora");
  g.grammar = requested_grammar(body);
  g.spec = request_speculation(body, pc);
  g.prompt = endpoint == Endpoint::CHAT ? chat_prompt(body, pc, r) : completion_prompt(body, pc);
  if (g.images && !g.spec.types.empty()) {
    if (body.contains("speculative.type") && !body["speculative.type"].is_null())
      invalid_request("speculative.type", "speculative decoding does not take images");
    g.spec = {};
  }
  const int n_prompt = int(g.prompt.size());
  if (n_prompt == 0) invalid_request("prompt", "the prompt has no tokens");
  if (n_prompt >= pc.n_ctx)
    invalid_request(endpoint == Endpoint::CHAT ? "messages" : "prompt",
            "the prompt has " + std::to_string(n_prompt) + " tokens; the context holds " + std::to_string(pc.n_ctx) +
                " (prompt and completion together)");
  int64_t max_tokens = pc.n_ctx - n_prompt;
  const bool given = get(body, "max_completion_tokens", max_tokens) || get(body, "max_tokens", max_tokens);
  if (given && max_tokens < 1) invalid_request("max_tokens", "'max_tokens' must be at least 1");
  if (given && max_tokens > pc.n_ctx - n_prompt)  // not n_prompt + max_tokens: that overflows
    invalid_request("max_tokens", "'max_tokens' is " + std::to_string(max_tokens) + " but the prompt's " + std::to_string(n_prompt) +
                              " tokens leave room for " + std::to_string(pc.n_ctx - n_prompt) + " in a context of " +
                              std::to_string(pc.n_ctx));
  g.max_tokens = int(max_tokens);
  return r;
}

ResponseWriter::ResponseWriter(const ApiRequest& req, const Tokenizer& tok, std::string model)
    : req_(req), tok_(tok), model_(std::move(model)), choices_(size_t(std::max(1, req.gen.n))) {
  static std::atomic<uint64_t> counter{0};
  created_ = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  id_ = (req.endpoint == Endpoint::CHAT ? "chatcmpl-" : "cmpl-") + std::to_string(created_) + "-" + std::to_string(counter++);
  if (req.endpoint == Endpoint::CHAT)
    for (Choice& c : choices_) c.chat = std::make_unique<ChatReply>(req.reply);
}

ResponseWriter::~ResponseWriter() = default;

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

// `body`: the completion's text, or the chat message / delta object.
json ResponseWriter::choice(int index, const json& body, const json& finish, const std::vector<TokenInfo>& tokens) const {
  json c = {{"index", index}, {"finish_reason", finish}, {"logprobs", logprobs(tokens)}};
  if (req_.endpoint == Endpoint::COMPLETION) c["text"] = body;
  else if (req_.stream) c["delta"] = body;
  else c["message"] = body;
  return c;
}

// The prompt counts once, however many choices shared it.
json ResponseWriter::usage() const {
  const Event& first = choices_[0].done;
  int completion = 0;
  for (const Choice& c : choices_) completion += c.done.completion_tokens;
  return {{"prompt_tokens", first.prompt_tokens},
          {"completion_tokens", completion},
          {"total_tokens", first.prompt_tokens + completion},
          {"prompt_tokens_details", {{"cached_tokens", first.cached_tokens}}}};
}

// llama-server's timings: the prompt's of the first choice, the generation's of them all.
json ResponseWriter::timings() const {
  const Event& first = choices_[0].done;
  int predicted = 0;
  int64_t draft_n = 0, draft_accepted = 0;
  double predicted_ms = 0;
  for (const Choice& c : choices_) {
    predicted += c.done.completion_tokens;
    predicted_ms = std::max(predicted_ms, c.done.predicted_ms);
    draft_n += c.done.draft_n;
    draft_accepted += c.done.draft_n_accepted;
  }
  const int prompt_n = first.prompt_tokens - first.cached_tokens;
  const auto per_token = [](double ms, int n) { return n > 0 ? ms / n : 0.0; };
  const auto per_second = [](double ms, int n) { return ms > 0 ? 1e3 * n / ms : 0.0; };
  json t = {{"cache_n", first.cached_tokens},
            {"prompt_n", prompt_n},
            {"prompt_ms", first.prompt_ms},
            {"prompt_per_token_ms", per_token(first.prompt_ms, prompt_n)},
            {"prompt_per_second", per_second(first.prompt_ms, prompt_n)},
            {"predicted_n", predicted},
            {"predicted_ms", predicted_ms},
            {"predicted_per_token_ms", per_token(predicted_ms, predicted)},
            {"predicted_per_second", per_second(predicted_ms, predicted)}};
  if (draft_n > 0) t.update({{"draft_n", draft_n}, {"draft_n_accepted", draft_accepted}});
  return t;
}

ResponseWriter::Choice& ResponseWriter::choice_of(const Event& ev) {
  if (ev.index < 0 || size_t(ev.index) >= choices_.size()) throw Error("an event for choice " + std::to_string(ev.index));
  Choice& c = choices_[size_t(ev.index)];
  if (ev.done) {
    c.done = ev;
    n_done_++;
  }
  if (ev.finish_reason == "error") throw ApiError(500, "server_error", ev.error);
  return c;
}

std::string ResponseWriter::finish_reason(const Choice& c) const {
  return c.chat ? c.chat->finish_reason(c.done.finish_reason) : c.done.finish_reason;
}

std::vector<json> ResponseWriter::chunks(const Event& ev) {
  Choice& c = choice_of(ev);
  const char* object = req_.endpoint == Endpoint::CHAT ? "chat.completion.chunk" : "text_completion";
  std::vector<json> out;
  auto chunk = [&](json choice) {
    json j = envelope(object);
    j["choices"] = json::array({std::move(choice)});
    out.push_back(std::move(j));
  };
  if (c.chat && !c.sent_role) {
    chunk({{"index", ev.index}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"finish_reason", nullptr}, {"logprobs", nullptr}});
    c.sent_role = true;
  }
  const json body = c.chat ? c.chat->delta(ev.text, ev.done) : json(ev.text);
  const bool news = c.chat ? !body.empty() : !ev.text.empty();
  if (news || !ev.tokens.empty() || ev.done) chunk(choice(ev.index, body, ev.done ? json(finish_reason(c)) : json(), ev.tokens));
  if (finished() && req_.include_usage) {
    json j = envelope(object);
    j["choices"] = json::array();
    j["usage"] = usage();
    out.push_back(std::move(j));
  }
  if (finished() && !out.empty()) out.back()["timings"] = timings();  // on the last chunk, as llama-server
  return out;
}

void ResponseWriter::add(const Event& ev) {
  Choice& c = choice_of(ev);
  c.text += ev.text;
  c.tokens.insert(c.tokens.end(), ev.tokens.begin(), ev.tokens.end());
}

json ResponseWriter::response() const {
  json r = envelope(req_.endpoint == Endpoint::CHAT ? "chat.completion" : "text_completion");
  r["choices"] = json::array();
  for (size_t i = 0; i < choices_.size(); i++) {
    const Choice& c = choices_[i];
    const json body = c.chat ? c.chat->message(c.text) : json(c.text);
    r["choices"].push_back(choice(int(i), body, finish_reason(c), c.tokens));
  }
  r["usage"] = usage();
  r["timings"] = timings();
  return r;
}

}  // namespace hart::serve
