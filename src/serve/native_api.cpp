#include "serve/native_api.h"

#include "serve/image_input.h"

#include <algorithm>
#include <limits>

namespace hart::serve {

using nlohmann::json;
using Body = nlohmann::ordered_json;

namespace {

// llama-server's default logical batch (-b 2048): its FIM window takes 3/4 of it for the
// prefix and the rest for the suffix, and leaves the extra context what the batch and
// 2 x its default n_predict (-1) leave of the context.
constexpr int kInfillBatch = 2048;
constexpr int kInfillPredict = -1;
constexpr int kMaxProbs = 100;

// Options hart implements only switched off: a request that sets one otherwise is refused.
struct OffOnly {
  const char* key;
  double off;
  const char* what;
};
constexpr OffOnly kOffOnly[] = {
    {"mirostat", 0, "Mirostat sampling"},      {"typical_p", 1, "typical-p sampling"},
    {"dynatemp_range", 0, "dynamic temperature"}, {"xtc_probability", 0, "XTC sampling"},
    {"dry_multiplier", 0, "DRY sampling"},     {"min_keep", 0, "min_keep"},
    {"n_indent", 0, "n_indent"},               {"t_max_predict_ms", 0, "a time limit on prediction"},
    {"n_cmpl", 1, "several completions per request"}, {"n", 1, "several completions per request"},
    {"n_cache_reuse", 0, "KV shifting of reused chunks"}};

void check_off(const Body& body) {
  for (const OffOnly& o : kOffOnly) {
    const auto it = body.find(o.key);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_number()) invalid_request(o.key, std::string("'") + o.key + "' must be a number");
    if (it->get<double>() != o.off)
      invalid_request(o.key, std::string("this server does not implement ") + o.what + " ('" + o.key + "' must be " +
                                 std::to_string(int(o.off)) + ")");
  }
  if (const auto it = body.find("top_n_sigma"); it != body.end() && !it->is_null() && (!it->is_number() || it->get<double>() > 0))
    invalid_request("top_n_sigma", "this server does not implement top-n-sigma sampling ('top_n_sigma' must be <= 0)");
  for (const char* key : {"ignore_eos", "post_sampling_probs"})
    if (const auto it = body.find(key); it != body.end() && !it->is_null() && *it != false)
      invalid_request(key, std::string("this server does not implement '") + key + "' (it must be false)");
  for (const char* key : {"logit_bias", "response_fields"})
    if (const auto it = body.find(key); it != body.end() && !it->is_null() && !((it->is_array() || it->is_object()) && it->empty()))
      invalid_request(key, std::string("this server does not implement '") + key + "' (it must be empty)");
}

template <class T>
bool native_field(const Body& body, const char* key, T& out) {
  const auto it = body.find(key);
  if (it == body.end() || it->is_null()) return false;
  const bool ok = std::is_same_v<T, bool> ? it->is_boolean() : std::is_integral_v<T> ? it->is_number_integer() : it->is_number();
  if (!ok) invalid_request(key, std::string("'") + key + "' has the wrong type: " + it->dump());
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (!it->is_number_unsigned() && (it->get<int64_t>() < std::numeric_limits<T>::min() || it->get<int64_t>() > std::numeric_limits<T>::max()))
      invalid_request(key, std::string("'") + key + "' is out of range");
    if (it->is_number_unsigned() && it->get<uint64_t>() > uint64_t(std::numeric_limits<T>::max()))
      invalid_request(key, std::string("'") + key + "' is out of range");
  }
  out = it->get<T>();
  return true;
}

// hart's chain, in its order (sample/sampler.h); llama.cpp's other samplers are accepted in a
// `samplers` list only while their parameters leave them doing nothing.
enum Stage { PENALTIES, TOP_K, TOP_P, MIN_P, TEMPERATURE, NOOP };

Stage stage_of(const std::string& name) {
  static const std::pair<const char*, Stage> names[] = {
      {"penalties", PENALTIES}, {"top_k", TOP_K}, {"top-k", TOP_K}, {"topk", TOP_K}, {"top_p", TOP_P}, {"top-p", TOP_P},
      {"topp", TOP_P}, {"nucleus", TOP_P}, {"min_p", MIN_P}, {"min-p", MIN_P}, {"minp", MIN_P}, {"temperature", TEMPERATURE},
      {"temp", TEMPERATURE}, {"dry", NOOP}, {"typ_p", NOOP}, {"typ-p", NOOP}, {"typp", NOOP}, {"typ", NOOP},
      {"top_n_sigma", NOOP}, {"top-n-sigma", NOOP}, {"topnsigma", NOOP}, {"xtc", NOOP}};
  for (const auto& [n, s] : names)
    if (name == n) return s;
  invalid_request("samplers", "'" + name + "' is not a sampler this server implements (penalties, top_k, top_p, min_p, temperature; "
                              "dry, typ_p, top_n_sigma and xtc while switched off)");
}

// `samplers`: names, or llama.cpp's letters (e k p m t; d y s x). Those left out are switched
// off; the ones given must keep the chain's order.
std::vector<std::string> apply_samplers(const Body& body, SamplerParams& sp) {
  std::vector<std::string> names = {"penalties", "top_k", "top_p", "min_p", "temperature"};
  const auto it = body.find("samplers");
  if (it == body.end() || it->is_null()) return names;
  std::vector<std::string> given;
  if (it->is_string()) {
    static const std::pair<char, const char*> letters[] = {{'e', "penalties"}, {'k', "top_k"}, {'p', "top_p"}, {'m', "min_p"},
                                                           {'t', "temperature"}, {'d', "dry"}, {'y', "typ_p"}, {'s', "top_n_sigma"},
                                                           {'x', "xtc"}};
    for (char c : it->get<std::string>()) {
      const auto l = std::find_if(std::begin(letters), std::end(letters), [&](const auto& x) { return x.first == c; });
      if (l == std::end(letters)) invalid_request("samplers", std::string("'") + c + "' is not a sampler letter this server implements");
      given.push_back(l->second);
    }
  } else if (it->is_array() && std::all_of(it->begin(), it->end(), [](const Body& x) { return x.is_string(); })) {
    for (const Body& x : *it) given.push_back(x.get<std::string>());
  } else {
    invalid_request("samplers", "'samplers' must be an array of sampler names or a string of sampler letters");
  }
  bool seen[NOOP] = {};
  int last = -1;
  names.clear();
  for (const std::string& g : given) {
    const Stage s = stage_of(g);
    if (s == NOOP) continue;
    if (int(s) <= last) invalid_request("samplers", "this server applies penalties, top_k, top_p, min_p and temperature in that order");
    last = s;
    seen[s] = true;
    names.push_back(g);
  }
  if (!seen[TEMPERATURE]) invalid_request("samplers", "'samplers' must include temperature (the chain ends in it)");
  if (!seen[PENALTIES]) sp.repeat_penalty = 1, sp.frequency_penalty = sp.presence_penalty = 0;
  if (!seen[TOP_K]) sp.top_k = 0;
  if (!seen[TOP_P]) sp.top_p = 1;
  if (!seen[MIN_P]) sp.min_p = 0;
  return names;
}

std::vector<int32_t> tokenize(const PromptContext& pc, const std::string& text, bool add_special, bool parse_special,
                              const char* param) {
  try {
    return pc.tok.encode(text, add_special, parse_special);
  } catch (const Error& e) {
    invalid_request(param, e.what());
  }
}

// A string, token ids, or both mixed (llama-server's tokenize_mixed: BOS only before a leading string).
std::vector<int32_t> mixed_tokens(const Body& v, const PromptContext& pc, bool add_special, bool parse_special, const char* param) {
  if (v.is_string()) return tokenize(pc, v.get<std::string>(), add_special, parse_special, param);
  if (!v.is_array()) invalid_request(param, std::string("'") + param + "' must be a string or an array of strings and token ids");
  std::vector<int32_t> ids;
  for (size_t i = 0; i < v.size(); i++) {
    if (v[i].is_string()) {
      const auto t = tokenize(pc, v[i].get<std::string>(), add_special && i == 0, parse_special, param);
      ids.insert(ids.end(), t.begin(), t.end());
    } else if (v[i].is_number_integer() && v[i].get<int64_t>() >= 0 && v[i].get<int64_t>() < pc.tok.n_vocab()) {
      ids.push_back(v[i].get<int32_t>());
    } else {
      invalid_request(param, std::string("'") + param + "' holds " + v[i].dump() + ", neither a string nor a token id of the vocabulary");
    }
  }
  return ids;
}

// The body's fields as an OpenAI completions body over `prompt`, llama-server's defaults filled in.
Body completions_body(const Body& body, const std::vector<int32_t>& prompt, int64_t& n_predict) {
  Body b = {{"prompt", prompt}, {"temperature", 0.8}, {"top_k", 40}, {"top_p", 0.95}, {"min_p", 0.05}};
  for (const char* key : {"top_k", "top_p", "min_p", "repeat_penalty", "frequency_penalty", "presence_penalty", "stream",
                          "grammar", "json_schema", "response_format", "speculative.n_max", "speculative.n_min",
                          "speculative.p_min", "speculative.type", "lora"})
    if (const auto it = body.find(key); it != body.end() && !it->is_null()) b[key] = *it;
  if (double t = 0; native_field(body, "temperature", t)) b["temperature"] = std::max(0.0, t);  // below 0: greedy
  n_predict = -1;
  const bool given = native_field(body, "n_predict", n_predict) || native_field(body, "max_tokens", n_predict) ||
                     native_field(body, "max_completion_tokens", n_predict);
  if (given && n_predict < -1) invalid_request("n_predict", "'n_predict' must be -1 (to the context's end), 0 (evaluate only) or more");
  if (n_predict > 0) b["max_tokens"] = n_predict;
  if (n_predict == 0) b["max_tokens"] = 1;  // the one token is sampled and dropped
  return b;
}

NativeRequest native_request(const Body& body, const PromptContext& pc, int n_slots, const std::vector<int32_t>& prompt) {
  check_off(body);
  int64_t n_predict = -1;
  NativeRequest r;
  static_cast<ApiRequest&>(r) = parse_request(completions_body(body, prompt, n_predict), Endpoint::COMPLETION, pc);
  r.evaluate_only = n_predict == 0;
  SamplerParams& sp = r.gen.sampling;
  if (int64_t seed = -1; native_field(body, "seed", seed))
    sp.seed = seed < 0 || uint64_t(seed) == kRandomSeed ? kRandomSeed : uint64_t(seed);  // -1: random, as llama.cpp
  if (native_field(body, "repeat_last_n", sp.repeat_last_n) && sp.repeat_last_n < -1)
    invalid_request("repeat_last_n", "'repeat_last_n' must be -1 (the whole context) or more");
  int n_probs = 0;
  if ((native_field(body, "n_probs", n_probs) || native_field(body, "logprobs", n_probs)) && (n_probs < 0 || n_probs > kMaxProbs))
    invalid_request("n_probs", "'n_probs' must be between 0 and " + std::to_string(kMaxProbs));
  sp.logprobs = n_probs > 0;
  sp.top_logprobs = r.top_logprobs = n_probs;
  if (const auto it = body.find("stop"); it != body.end() && !it->is_null()) {
    if (it->is_string()) r.gen.stops.push_back(it->get<std::string>());
    else if (it->is_array() && std::all_of(it->begin(), it->end(), [](const Body& x) { return x.is_string(); }))
      for (const Body& x : *it) r.gen.stops.push_back(x.get<std::string>());
    else invalid_request("stop", "'stop' must be a string or an array of strings");
  }
  bool cache_prompt = true;  // the prefix cache serves every request; no per-request switch changes the output
  native_field(body, "cache_prompt", cache_prompt);
  native_field(body, "return_tokens", r.return_tokens);
  if (native_field(body, "id_slot", r.id_slot) && (r.id_slot < -1 || r.id_slot >= n_slots))
    invalid_request("id_slot", "'id_slot' must be -1 (any) or a slot id below " + std::to_string(n_slots));
  const std::vector<std::string> samplers = apply_samplers(body, sp);
  r.settings = {{"n_predict", n_predict}, {"seed", sp.seed}, {"temperature", sp.temperature}, {"top_k", sp.top_k},
                {"top_p", sp.top_p}, {"min_p", sp.min_p}, {"repeat_last_n", sp.repeat_last_n}, {"repeat_penalty", sp.repeat_penalty},
                {"presence_penalty", sp.presence_penalty}, {"frequency_penalty", sp.frequency_penalty}, {"stop", r.gen.stops},
                {"n_probs", n_probs}, {"stream", r.stream}, {"samplers", samplers}, {"cache_prompt", cache_prompt},
                {"max_tokens", n_predict}, {"grammar", r.gen.grammar ? json("(given)") : json("")}, {"lora", json::array()}};
  for (size_t i = 0; i < r.gen.lora.size(); i++) r.settings["lora"].push_back({{"id", i}, {"scale", r.gen.lora[i]}});
  return r;
}

const std::string& string_in(const Body& obj, const char* key, const std::string& where, const char* param) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) invalid_request(param, where + " must be a string");
  return it->get_ref<const std::string&>();
}

void append(std::vector<int32_t>& to, const std::vector<int32_t>& from) { to.insert(to.end(), from.begin(), from.end()); }

// llama-server's multimodal prompt: {"prompt_string": text with a <__media__> marker per image,
// "multimodal_data": [base64 image, ...]}, encoded as a chat request's image_url parts are.
NativeRequest multimodal_request(const Body& body, const Body& prompt, const PromptContext& pc, int n_slots) {
  const auto text = prompt.find("prompt_string");
  if (text == prompt.end() || !text->is_string()) invalid_request("prompt", "'prompt.prompt_string' must be a string");
  std::vector<ImageBytes> images;
  if (const auto data = prompt.find("multimodal_data"); data != prompt.end() && !data->is_null()) {
    if (!data->is_array()) invalid_request("prompt", "'prompt.multimodal_data' must be an array of base64 strings");
    for (size_t i = 0; i < data->size(); i++) {
      const std::string where = "prompt.multimodal_data[" + std::to_string(i) + "]";
      if (!(*data)[i].is_string()) invalid_request("prompt", "'" + where + "' must be a base64 string");
      images.push_back(image_url_bytes((*data)[i].get<std::string>(), where, "prompt"));
    }
  }
  const std::string& prompt_string = text->get_ref<const std::string&>();
  if (images.empty()) return native_request(body, pc, n_slots, tokenize(pc, prompt_string, true, true, "prompt"));
  if (!pc.vision)
    invalid_request("prompt", "this server takes no images: it was started without --mmproj (the model's multimodal projector)");
  ImagePrompt ip = pc.vision->encode(pc.tok, prompt_string, images, "prompt");
  // The request is checked on a prompt of its length (its image positions hold content keys,
  // which are no token ids), then given the prompt and the images' embeddings.
  NativeRequest r = native_request(body, pc, n_slots, std::vector<int32_t>(ip.ids.size(), 0));
  r.gen.prompt = std::move(ip.ids);
  r.gen.images = std::move(ip.images);
  r.prompt_text = prompt_string;
  if (!r.gen.spec.types.empty()) {
    if (body.contains("speculative.type") && !body["speculative.type"].is_null())
      invalid_request("speculative.type", "speculative decoding does not take images");
    r.gen.spec = {};
  }
  return r;
}

}  // namespace

NativeRequest parse_native_completion(const Body& body, const PromptContext& pc, int n_slots) {
  if (!body.is_object()) invalid_request("", "the request body must be a JSON object");
  const auto p = body.find("prompt");
  if (p == body.end() || p->is_null()) invalid_request("prompt", "'prompt' is required");
  const Body* one = &*p;
  if (p->is_array() && !p->empty() &&
      std::all_of(p->begin(), p->end(), [](const Body& x) { return x.is_string() || x.is_array() || x.is_object(); })) {
    if (p->size() > 1) invalid_request("prompt", "this server answers one prompt per request");
    one = &(*p)[0];
  }
  if (one->is_object()) return multimodal_request(body, *one, pc, n_slots);
  return native_request(body, pc, n_slots, mixed_tokens(*one, pc, true, true, "prompt"));
}

NativeRequest parse_infill(const Body& body, const PromptContext& pc, int n_slots) {
  const Tokenizer::Fim fim = pc.tok.fim();
  std::string missing;
  for (const auto& [id, name] : {std::pair{fim.pre, "prefix"}, {fim.suf, "suffix"}, {fim.mid, "middle"}})
    if (id < 0) missing += std::string(missing.empty() ? "" : ", ") + name;
  if (!missing.empty())
    throw ApiError(501, "not_supported_error", "infill is not supported by this model: it has no FIM token for " + missing);
  if (!body.is_object()) invalid_request("", "the request body must be a JSON object");
  std::string prompt;
  if (const auto it = body.find("prompt"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) invalid_request("prompt", "'prompt' must be a string");
    prompt = it->get<std::string>();
  }
  for (const char* key : {"input_prefix", "input_suffix"})
    if (!body.contains(key)) invalid_request(key, std::string("'") + key + "' is required");
  std::vector<int32_t> prefix = mixed_tokens(body["input_prefix"], pc, false, false, "input_prefix");
  std::vector<int32_t> suffix = mixed_tokens(body["input_suffix"], pc, false, false, "input_suffix");
  const std::vector<int32_t> tail = tokenize(pc, prompt, false, true, "prompt");

  // The repository: [REP]myproject\n, then each file as [SEP]name\n text (or, without [SEP],
  // llama-server's "--- snippet ---" separator), then [SEP]filename\n for the file being edited.
  std::vector<int32_t> extra;
  if (fim.rep >= 0) {
    extra.push_back(fim.rep);
    append(extra, tokenize(pc, "myproject\n", false, false, "input_extra"));
  }
  if (const auto ex = body.find("input_extra"); ex != body.end() && !ex->is_null()) {
    if (!ex->is_array()) invalid_request("input_extra", "'input_extra' must be an array of {\"filename\": string, \"text\": string}");
    for (size_t i = 0; i < ex->size(); i++) {
      const Body& chunk = (*ex)[i];
      const std::string where = "input_extra[" + std::to_string(i) + "]";
      if (!chunk.is_object()) invalid_request("input_extra", where + " must be an object");
      const std::string& text = string_in(chunk, "text", where + ".text", "input_extra");
      std::string filename = "tmp";
      if (chunk.contains("filename")) filename = string_in(chunk, "filename", where + ".filename", "input_extra");
      if (fim.sep >= 0) {
        extra.push_back(fim.sep);
        append(extra, tokenize(pc, filename + "\n", false, false, "input_extra"));
      } else {
        append(extra, tokenize(pc, "\n\n--- snippet ---\n\n", false, false, "input_extra"));
      }
      append(extra, tokenize(pc, text, false, false, "input_extra"));
    }
  }
  if (fim.sep >= 0) {
    extra.push_back(fim.sep);
    append(extra, tokenize(pc, "filename\n", false, false, "input_extra"));
  }

  const int n_prefix = std::min<int>(int(prefix.size()), 3 * (kInfillBatch / 4));
  const int n_suffix = std::min<int>(int(suffix.size()), std::max<int>(0, kInfillBatch / 4 - (2 + int(tail.size()))));
  const int n_extra = std::min<int>(std::max<int>(0, pc.n_ctx - kInfillBatch - 2 * kInfillPredict), int(extra.size()));
  prefix.erase(prefix.begin(), prefix.end() - n_prefix);  // the prefix's end and the suffix's start are kept
  suffix.resize(size_t(n_suffix));

  std::vector<int32_t> ids(extra.end() - n_extra, extra.end());
  if (pc.tok.add_bos()) ids.push_back(pc.tok.bos());  // after the extra context, as llama-server puts it
  ids.push_back(fim.pre);
  append(ids, prefix);
  append(ids, tail);
  ids.push_back(fim.suf);
  append(ids, suffix);
  ids.push_back(fim.mid);
  return native_request(body, pc, n_slots, ids);
}

NativeWriter::NativeWriter(const NativeRequest& req, const Tokenizer& tok, std::string model)
    : req_(req), tok_(tok), model_(std::move(model)) {}

json NativeWriter::ids(const std::vector<TokenInfo>& tokens) const {
  json a = json::array();
  if (req_.return_tokens)
    for (const TokenInfo& t : tokens) a.push_back(t.id);
  return a;
}

json NativeWriter::probabilities(const std::vector<TokenInfo>& tokens) const {
  auto entry = [&](int32_t id, float logprob) {
    const std::string piece = tok_.token_to_piece(id);
    json bytes = json::array();
    for (unsigned char c : piece) bytes.push_back(int(c));
    return json{{"id", id}, {"token", piece}, {"bytes", bytes}, {"logprob", logprob}};
  };
  json out = json::array();
  for (const TokenInfo& t : tokens) {
    json e = entry(t.id, t.logprob);
    e["top_logprobs"] = json::array();
    for (const TokenLogprob& a : t.top) e["top_logprobs"].push_back(entry(a.token, a.logprob));
    out.push_back(std::move(e));
  }
  return out;
}

json NativeWriter::final_object(const std::string& content, const std::vector<TokenInfo>& tokens) const {
  const Event& e = end_;
  // The cache holds the prompt and every generated token but the last, which was sampled, not computed.
  const int n_prompt = int(req_.gen.prompt.size()), n_new = n_prompt - e.cached_tokens;
  const std::string stop_type = e.finish_reason == "length" || req_.evaluate_only ? "limit"
                                : e.finish_reason != "stop"                      ? "none"
                                : e.stop_word.empty()                            ? "eos"
                                                                                 : "word";
  auto per = [](double ms, int n) { return n > 0 ? ms / n : 0.0; };
  auto rate = [](double ms, int n) { return ms > 0 ? 1e3 * n / ms : 0.0; };
  json timings = {{"cache_n", e.cached_tokens}, {"prompt_n", n_new}, {"prompt_ms", e.prompt_ms},
                        {"prompt_per_token_ms", per(e.prompt_ms, n_new)}, {"prompt_per_second", rate(e.prompt_ms, n_new)},
                        {"predicted_n", n_decoded_}, {"predicted_ms", e.predicted_ms},
                        {"predicted_per_token_ms", per(e.predicted_ms, n_decoded_)},
                        {"predicted_per_second", rate(e.predicted_ms, n_decoded_)}};
  if (e.draft_n > 0) timings.update({{"draft_n", e.draft_n}, {"draft_n_accepted", e.draft_n_accepted}});
  json r = {{"index", 0}, {"content", content}, {"tokens", ids(tokens)}, {"id_slot", req_.gen.slot}, {"stop", true},
            {"model", model_}, {"tokens_predicted", n_decoded_}, {"tokens_evaluated", n_prompt},
            {"generation_settings", req_.settings}, {"prompt", req_.gen.images ? req_.prompt_text : tok_.decode(req_.gen.prompt, true)},
            {"has_new_line", text_.find('\n') != std::string::npos}, {"truncated", false}, {"stop_type", stop_type},
            {"stopping_word", e.stop_word}, {"tokens_cached", n_prompt + std::max(0, n_decoded_ - 1)}, {"timings", timings}};
  if (!req_.stream && req_.gen.sampling.logprobs) r["completion_probabilities"] = probabilities(tokens);
  return r;
}

std::vector<json> NativeWriter::chunks(const Event& ev) {
  if (ev.finish_reason == "error") throw ApiError(500, "server_error", ev.error);
  std::vector<json> out;
  if (req_.evaluate_only) {
    if (!ev.done) return out;
    done_ = true;
    end_ = ev;
    out.push_back(final_object("", {}));
    return out;
  }
  n_decoded_ += int(ev.tokens.size());
  text_ += ev.text;
  if (ev.done) {
    done_ = true;
    end_ = ev;
    out.push_back(final_object(ev.text, {}));
    return out;
  }
  if (ev.text.empty() && ev.tokens.empty()) return out;
  json c = {{"index", 0}, {"content", ev.text}, {"tokens", ids(ev.tokens)}, {"stop", false}, {"id_slot", req_.gen.slot},
            {"tokens_predicted", n_decoded_}, {"tokens_evaluated", req_.gen.prompt.size()}};
  if (req_.gen.sampling.logprobs) c["completion_probabilities"] = probabilities(ev.tokens);
  out.push_back(std::move(c));
  return out;
}

void NativeWriter::add(const Event& ev) {
  if (ev.finish_reason == "error") throw ApiError(500, "server_error", ev.error);
  if (!req_.evaluate_only) {
    text_ += ev.text;
    tokens_.insert(tokens_.end(), ev.tokens.begin(), ev.tokens.end());
    n_decoded_ += int(ev.tokens.size());
  }
  if (ev.done) {
    done_ = true;
    end_ = ev;
  }
}

json NativeWriter::response() const { return final_object(text_, tokens_); }

}  // namespace hart::serve
