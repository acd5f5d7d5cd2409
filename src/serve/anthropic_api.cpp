#include "serve/anthropic_api.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>

#include "serve/chat_reply.h"
#include "serve/image_input.h"

namespace hart::serve {

using nlohmann::json;
using Body = nlohmann::ordered_json;

namespace {

const std::string& text_field(const Body& obj, const char* key, const std::string& where, const std::string& param) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) invalid_request(param, where + "." + key + " must be a string");
  return it->get_ref<const std::string&>();
}

// Text blocks' texts, joined by newlines as llama.cpp joins text parts; `param` names the field.
std::string block_texts(const Body& blocks, const std::string& where, const std::string& param) {
  if (blocks.is_string()) return blocks.get<std::string>();
  if (!blocks.is_array()) invalid_request(param, where + " must be a string or an array of text blocks");
  std::string text;
  for (size_t k = 0; k < blocks.size(); k++) {
    const std::string bw = where + "[" + std::to_string(k) + "]";
    if (!blocks[k].is_object()) invalid_request(param, bw + " must be an object");
    if (text_field(blocks[k], "type", bw, param) != "text") invalid_request(param, bw + " must be a text block");
    if (k > 0) text += '\n';
    text += text_field(blocks[k], "text", bw, param);
  }
  return text;
}

// One Anthropic message as chat messages: a user turn's tool_result blocks become tool messages
// ahead of its text; an assistant turn's thinking, text and tool_use blocks one assistant message.
// An image block as OpenAI's image_url part: source {type: base64, media_type, data} as a data:
// URL, source {type: url, url} as it is (image_input.h refuses what it does not fetch).
Body image_part(const Body& b, const std::string& where) {
  const auto src = b.find("source");
  if (src == b.end() || !src->is_object()) invalid_request("messages", where + ".source must be an object");
  const std::string& type = text_field(*src, "type", where + ".source", "messages");
  std::string url;
  if (type == "base64")
    url = "data:" + text_field(*src, "media_type", where + ".source", "messages") + ";base64," +
          text_field(*src, "data", where + ".source", "messages");
  else if (type == "url") url = text_field(*src, "url", where + ".source", "messages");
  else invalid_request("messages", where + ".source.type must be \"base64\" or \"url\"");
  return {{"type", "image_url"}, {"image_url", {{"url", url}}}};
}

void add_message(Body& out, const Body& m, const std::string& where, std::set<std::string>& call_ids) {
  if (!m.is_object()) invalid_request("messages", where + " must be an object");
  const std::string& role = text_field(m, "role", where, "messages");
  if (role != "user" && role != "assistant") invalid_request("messages", where + ".role must be \"user\" or \"assistant\"");
  const auto c = m.find("content");
  if (c == m.end()) invalid_request("messages", where + ".content is required");
  if (c->is_string()) {
    out.push_back({{"role", role}, {"content", *c}});
    return;
  }
  if (!c->is_array()) invalid_request("messages", where + ".content must be a string or an array of content blocks");
  std::string text, reasoning;
  bool has_text = false;
  Body parts = Body::array();  // a user message's text and images in order, when it shows one
  bool has_image = false;
  Body calls = Body::array(), results = Body::array();
  for (size_t k = 0; k < c->size(); k++) {
    const Body& b = (*c)[k];
    const std::string bw = where + ".content[" + std::to_string(k) + "]";
    if (!b.is_object()) invalid_request("messages", bw + " must be an object");
    const std::string& type = text_field(b, "type", bw, "messages");
    if (type == "text") {
      if (has_text) text += '\n';
      text += text_field(b, "text", bw, "messages");
      has_text = true;
      parts.push_back({{"type", "text"}, {"text", b["text"]}});
    } else if (role == "user" && type == "image") {
      parts.push_back(image_part(b, bw));
      has_image = true;
    } else if (type == "image" || type == "document" || type == "search_result") {
      invalid_request("messages", bw + ": " + type + " blocks are not supported (this server reads text only)");
    } else if (role == "assistant" && type == "tool_use") {
      const std::string& id = text_field(b, "id", bw, "messages");
      const auto input = b.find("input");
      if (input == b.end() || !input->is_object()) invalid_request("messages", bw + ".input must be an object");
      call_ids.insert(id);
      calls.push_back({{"id", id}, {"type", "function"},
                       {"function", {{"name", text_field(b, "name", bw, "messages")}, {"arguments", input->dump()}}}});
    } else if (role == "assistant" && type == "thinking") {
      reasoning += text_field(b, "thinking", bw, "messages");
    } else if (role == "assistant" && type == "redacted_thinking") {
      text_field(b, "data", bw, "messages");  // encrypted by another server: nothing a template can show
    } else if (role == "user" && type == "tool_result") {
      const std::string& id = text_field(b, "tool_use_id", bw, "messages");
      if (!call_ids.count(id)) invalid_request("messages", bw + " answers tool_use '" + id + "', which no earlier assistant message made");
      if (const auto e = b.find("is_error"); e != b.end() && !e->is_null() && !e->is_boolean())
        invalid_request("messages", bw + ".is_error must be a boolean");
      const auto rc = b.find("content");
      const std::string content = rc == b.end() || rc->is_null() ? "" : block_texts(*rc, bw + ".content", "messages");
      results.push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", content}});
    } else {
      invalid_request("messages", bw + ": content blocks of type '" + type + "' are not supported in " + role + " messages");
    }
  }
  for (Body& r : results) out.push_back(std::move(r));
  if (role == "user") {
    if (has_image) out.push_back({{"role", "user"}, {"content", std::move(parts)}});
    else if (has_text || results.empty()) out.push_back({{"role", "user"}, {"content", text}});
    return;
  }
  Body msg = {{"role", "assistant"}, {"content", has_text || calls.empty() ? Body(text) : Body()}};
  if (!reasoning.empty()) msg["reasoning_content"] = reasoning;
  if (!calls.empty()) msg["tool_calls"] = std::move(calls);
  out.push_back(std::move(msg));
}

Body anthropic_tools(const Body& tools) {
  if (!tools.is_array()) invalid_request("tools", "'tools' must be an array");
  Body out = Body::array();
  for (size_t i = 0; i < tools.size(); i++) {
    const Body& t = tools[i];
    const std::string where = "tools[" + std::to_string(i) + "]";
    if (!t.is_object()) invalid_request("tools", where + " must be an object");
    if (const auto type = t.find("type"); type != t.end() && !type->is_null() && *type != "custom")
      invalid_request("tools", where + ": server tools (" + type->dump() + ") are not supported, only client tools with an input_schema");
    const auto schema = t.find("input_schema");
    if (schema == t.end() || !schema->is_object()) invalid_request("tools", where + ".input_schema must be a JSON schema object");
    Body f = {{"name", text_field(t, "name", where, "tools")}};
    if (const auto d = t.find("description"); d != t.end() && !d->is_null()) f["description"] = *d;  // the chat parser checks it
    f["parameters"] = *schema;
    out.push_back({{"type", "function"}, {"function", std::move(f)}});
  }
  return out;
}

// tool_choice {type: auto | any | tool | none, name, disable_parallel_tool_use} as OpenAI's.
void chat_tool_choice(const Body& tc, Body& chat) {
  if (!tc.is_object()) invalid_request("tool_choice", "'tool_choice' must be an object");
  const std::string& type = text_field(tc, "type", "tool_choice", "tool_choice");
  if (type == "auto" || type == "none") chat["tool_choice"] = type;
  else if (type == "any") chat["tool_choice"] = "required";
  else if (type == "tool")
    chat["tool_choice"] = {{"type", "function"}, {"function", {{"name", text_field(tc, "name", "tool_choice", "tool_choice")}}}};
  else invalid_request("tool_choice", "tool_choice.type must be \"auto\", \"any\", \"tool\" or \"none\"");
  if (const auto p = tc.find("disable_parallel_tool_use"); p != tc.end() && !p->is_null()) {
    if (!p->is_boolean()) invalid_request("tool_choice", "tool_choice.disable_parallel_tool_use must be a boolean");
    chat["parallel_tool_calls"] = !p->get<bool>();
  }
}

// thinking {type: enabled, budget_tokens} / {type: disabled}: the template's enable_thinking.
// The budget is Anthropic's target for the reasoning, not a limit of its own: max_tokens bounds
// reasoning and answer together, on Anthropic's API as here.
void chat_thinking(const Body& th, Body& chat) {
  if (!th.is_object()) invalid_request("thinking", "'thinking' must be an object");
  const std::string& type = text_field(th, "type", "thinking", "thinking");
  if (type != "enabled" && type != "disabled") invalid_request("thinking", "thinking.type must be \"enabled\" or \"disabled\"");
  if (type == "enabled") {
    const auto b = th.find("budget_tokens");
    if (b == th.end() || !b->is_number_integer() || b->get<int64_t>() < 1)
      invalid_request("thinking", "thinking.budget_tokens must be a positive integer");
  }
  chat["chat_template_kwargs"] = {{"enable_thinking", type == "enabled"}};
}

std::string new_id() {
  static std::atomic<uint64_t> counter{0};
  const auto now = std::chrono::system_clock::now().time_since_epoch().count();
  return "msg_" + std::to_string(now) + std::to_string(counter++);
}

}  // namespace

Body anthropic_to_chat(const Body& body) {
  if (!body.is_object()) invalid_request("", "the request body must be a JSON object");
  Body messages = Body::array();
  if (const auto s = body.find("system"); s != body.end() && !s->is_null())
    messages.push_back({{"role", "system"}, {"content", block_texts(*s, "system", "system")}});
  const auto ms = body.find("messages");
  if (ms == body.end() || !ms->is_array() || ms->empty()) invalid_request("messages", "'messages' must be a non-empty array");
  std::set<std::string> call_ids;
  for (size_t i = 0; i < ms->size(); i++) add_message(messages, (*ms)[i], "messages[" + std::to_string(i) + "]", call_ids);
  Body chat = {{"messages", std::move(messages)}};
  if (const auto t = body.find("tools"); t != body.end() && !t->is_null()) chat["tools"] = anthropic_tools(*t);
  if (const auto tc = body.find("tool_choice"); tc != body.end() && !tc->is_null()) chat_tool_choice(*tc, chat);
  if (const auto th = body.find("thinking"); th != body.end() && !th->is_null()) chat_thinking(*th, chat);
  if (const auto md = body.find("metadata"); md != body.end() && !md->is_null()) {
    if (!md->is_object()) invalid_request("metadata", "'metadata' must be an object");
    if (const auto u = md->find("user_id"); u != md->end() && !u->is_null()) {
      if (!u->is_string()) invalid_request("metadata", "metadata.user_id must be a string");
      chat["user"] = *u;
    }
  }
  if (const auto st = body.find("stop_sequences"); st != body.end() && !st->is_null())
    if (!st->is_array() || !std::all_of(st->begin(), st->end(), [](const Body& x) { return x.is_string(); }))
      invalid_request("stop_sequences", "'stop_sequences' must be an array of strings");
  for (const char* key : {"max_tokens", "temperature", "top_p", "top_k", "stream"})
    if (body.contains(key)) chat[key] = body[key];
  return chat;
}

ApiRequest parse_anthropic_request(const Body& body, const PromptContext& pc) {
  ApiRequest r = parse_request(anthropic_to_chat(body), Endpoint::CHAT, pc);
  if (const auto st = body.find("stop_sequences"); st != body.end() && !st->is_null())
    for (const Body& s : *st) r.gen.stops.push_back(s.get<std::string>());
  return r;
}

int count_anthropic_tokens(const Body& body, const PromptContext& pc) {
  const Body chat = anthropic_to_chat(body);
  // An image's positions are the projector's: counted as the prompt the request would run.
  if (has_images(chat["messages"])) return int(parse_request(chat, Endpoint::CHAT, pc).gen.prompt.size());
  const std::string prompt = chat_prompt_text(chat, pc.chat);
  try {
    return int(pc.tok.encode(prompt, true, true).size());
  } catch (const Error& e) {
    invalid_request("messages", e.what());
  }
}

json anthropic_error_body(int status, const std::string& message) {
  const char* type = status == 401   ? "authentication_error"
                     : status == 403 ? "permission_error"
                     : status == 404 ? "not_found_error"
                     : status == 413 ? "request_too_large"
                     : status == 429 ? "rate_limit_error"
                     : status == 503 ? "overloaded_error"
                     : status >= 500 ? "api_error"
                                     : "invalid_request_error";
  return {{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
}

AnthropicWriter::AnthropicWriter(const ApiRequest& req, const Tokenizer&, std::string model)
    : n_prompt_(req.gen.prompt.size()), model_(std::move(model)), id_(new_id()), reply_(std::make_unique<ChatReply>(req.reply)) {}

AnthropicWriter::~AnthropicWriter() = default;

// llama-server's split: input_tokens are the prompt tokens the prefix cache did not have.
json AnthropicWriter::usage() const {
  if (!done_) return {{"input_tokens", n_prompt_}, {"cache_read_input_tokens", 0}, {"output_tokens", 0}};
  return {{"input_tokens", end_.prompt_tokens - end_.cached_tokens}, {"cache_read_input_tokens", end_.cached_tokens},
          {"output_tokens", end_.completion_tokens}};
}

json AnthropicWriter::message(const json& stop_reason, const json& stop_sequence) const {
  json content = json::array();
  for (const Block& b : blocks_) content.push_back(b.block);
  return {{"id", id_}, {"type", "message"}, {"role", "assistant"}, {"model", model_}, {"content", content},
          {"stop_reason", stop_reason}, {"stop_sequence", stop_sequence}, {"usage", usage()}};
}

std::string AnthropicWriter::stop_reason() const {
  const std::string r = reply_->finish_reason(end_.finish_reason);
  if (r == "tool_calls") return "tool_use";
  if (r == "length") return "max_tokens";
  return end_.stop_word.empty() ? "end_turn" : "stop_sequence";
}

void AnthropicWriter::close_open(std::vector<AnthropicEvent>& out) {
  if (blocks_.empty() || blocks_.back().closed) return;
  Block& b = blocks_.back();
  const size_t index = blocks_.size() - 1;
  // Anthropic closes a thinking block with its signature; a local model signs nothing.
  if (b.block["type"] == "thinking") delta(out, index, {{"type", "signature_delta"}, {"signature", ""}});
  if (b.block["type"] == "tool_use") {
    const json input = json::parse(b.text, nullptr, false);
    b.block["input"] = input.is_object() ? input : json::object();  // a call cut at max_tokens has none
  }
  b.closed = true;
  out.push_back({"content_block_stop", {{"type", "content_block_stop"}, {"index", index}}});
}

size_t AnthropicWriter::open(std::vector<AnthropicEvent>& out, json block) {
  close_open(out);
  blocks_.push_back({block, "", false});
  const size_t index = blocks_.size() - 1;
  out.push_back({"content_block_start", {{"type", "content_block_start"}, {"index", index}, {"content_block", std::move(block)}}});
  return index;
}

void AnthropicWriter::delta(std::vector<AnthropicEvent>& out, size_t index, json d) {
  out.push_back({"content_block_delta", {{"type", "content_block_delta"}, {"index", index}, {"delta", std::move(d)}}});
}

std::vector<AnthropicEvent> AnthropicWriter::events(const Event& ev) {
  std::vector<AnthropicEvent> out;
  if (!started_) {
    out.push_back({"message_start", {{"type", "message_start"}, {"message", message(nullptr, nullptr)}}});
    out.push_back({"ping", {{"type", "ping"}}});
    started_ = true;
  }
  if (ev.finish_reason == "error") throw ApiError(500, "server_error", ev.error);
  const json d = reply_->delta(ev.text, ev.done);
  // Text of one kind goes on in the open block of that kind; any other kind opens a new block.
  auto text_block = [&](const char* type, const char* delta_type, const std::string& piece) {
    const bool same = !blocks_.empty() && !blocks_.back().closed && blocks_.back().block["type"] == type;
    const size_t index = same ? blocks_.size() - 1 : open(out, {{"type", type}, {type, ""}});
    if (std::string(type) == "thinking" && !same) blocks_[index].block["signature"] = "";
    Block& b = blocks_[index];
    b.text += piece;
    b.block[type] = b.text;
    delta(out, index, {{"type", delta_type}, {type, piece}});
  };
  if (d.contains("reasoning_content")) text_block("thinking", "thinking_delta", d["reasoning_content"].get<std::string>());
  if (d.contains("content")) text_block("text", "text_delta", d["content"].get<std::string>());
  for (const json& tc : d.value("tool_calls", json::array())) {
    if (tc.contains("id"))
      call_blocks_.push_back(open(out, {{"type", "tool_use"}, {"id", tc["id"]}, {"name", tc["function"]["name"]}, {"input", json::object()}}));
    const size_t index = call_blocks_.at(tc["index"].get<size_t>());
    const std::string frag = tc["function"]["arguments"].get<std::string>();
    if (frag.empty()) continue;
    blocks_[index].text += frag;
    delta(out, index, {{"type", "input_json_delta"}, {"partial_json", frag}});
  }
  if (ev.done) {
    end_ = ev;
    done_ = true;
    close_open(out);
    const json stop_sequence = end_.stop_word.empty() ? json() : json(end_.stop_word);
    out.push_back({"message_delta", {{"type", "message_delta"}, {"delta", {{"stop_reason", stop_reason()}, {"stop_sequence", stop_sequence}}},
                                     {"usage", usage()}}});
    out.push_back({"message_stop", {{"type", "message_stop"}}});
  }
  return out;
}

// Not streaming: the whole text through the same path, its events dropped.
void AnthropicWriter::add(const Event& ev) {
  if (const std::optional<Event> whole = whole_.add(ev)) events(*whole);
}

json AnthropicWriter::response() const {
  return message(stop_reason(), end_.stop_word.empty() ? json() : json(end_.stop_word));
}

}  // namespace hart::serve
