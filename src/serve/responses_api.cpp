#include "serve/responses_api.h"

#include <atomic>
#include <chrono>

#include "serve/chat_reply.h"

namespace hart::serve {

using nlohmann::json;
using Body = nlohmann::ordered_json;

namespace {

const std::string& text_of(const Body& obj, const char* key, const std::string& where) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) invalid_request("input", where + "." + key + " must be a string");
  return it->get_ref<const std::string&>();
}

// A message item's content: a string, or input_text / output_text parts, and input_image parts
// ({"image_url": "data:..."}) in user messages, which make it an array of chat parts
// (image_input.h reads their URLs).
Body message_content(const Body& content, const std::string& role, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) invalid_request("input", where + ".content must be a string or an array of text parts");
  std::string text;
  Body parts = Body::array();
  bool has_image = false;
  for (const Body& part : content) {
    if (!part.is_object()) invalid_request("input", where + ".content has a part that is not an object");
    const std::string& type = text_of(part, "type", where + ".content[]");
    if (role == "user" && type == "input_image") {
      parts.push_back({{"type", "image_url"}, {"image_url", {{"url", text_of(part, "image_url", where + ".content[]")}}}});
      has_image = true;
      continue;
    }
    if (type != "input_text" && type != "output_text") invalid_request("input", where + ".content: parts of type '" + type + "' are not supported");
    text += text_of(part, "text", where + ".content[]");
    parts.push_back({{"type", "text"}, {"text", part["text"]}});
  }
  return has_image ? parts : Body(text);
}

Body chat_messages(const Body& body) {
  Body messages = Body::array();
  if (const auto ins = body.find("instructions"); ins != body.end() && !ins->is_null()) {
    if (!ins->is_string()) invalid_request("instructions", "'instructions' must be a string");
    messages.push_back({{"role", "system"}, {"content", *ins}});
  }
  const auto input = body.find("input");
  if (input == body.end() || input->is_null()) invalid_request("input", "'input' is required");
  if (input->is_string()) {
    messages.push_back({{"role", "user"}, {"content", *input}});
    return messages;
  }
  if (!input->is_array() || input->empty()) invalid_request("input", "'input' must be a string or a non-empty array of items");
  for (size_t i = 0; i < input->size(); i++) {
    const Body& item = (*input)[i];
    const std::string where = "input[" + std::to_string(i) + "]";
    if (!item.is_object()) invalid_request("input", where + " must be an object");
    const auto t = item.find("type");
    if (t != item.end() && !t->is_string()) invalid_request("input", where + ".type must be a string");
    const std::string type = t == item.end() ? "message" : t->get<std::string>();
    if (type == "message") {
      const std::string& role = text_of(item, "role", where);
      if (role != "user" && role != "system" && role != "developer" && role != "assistant")
        invalid_request("input", where + ".role must be user, system, developer or assistant");
      const auto c = item.find("content");
      if (c == item.end()) invalid_request("input", where + ".content is required");
      messages.push_back({{"role", role}, {"content", message_content(*c, role, where)}});
    } else if (type == "function_call") {
      Body call = {{"id", text_of(item, "call_id", where)}, {"type", "function"},
                   {"function", {{"name", text_of(item, "name", where)}, {"arguments", text_of(item, "arguments", where)}}}};
      // Calls in a row are one assistant turn.
      if (!messages.empty() && messages.back()["role"] == "assistant" && messages.back().contains("tool_calls"))
        messages.back()["tool_calls"].push_back(std::move(call));
      else
        messages.push_back({{"role", "assistant"}, {"content", nullptr}, {"tool_calls", Body::array({std::move(call)})}});
    } else if (type == "function_call_output") {
      messages.push_back({{"role", "tool"}, {"tool_call_id", text_of(item, "call_id", where)}, {"content", text_of(item, "output", where)}});
    } else {
      invalid_request("input", where + ": items of type '" + type + "' are not supported");
    }
  }
  return messages;
}

Body chat_tools(const Body& tools) {
  if (!tools.is_array()) invalid_request("tools", "'tools' must be an array");
  Body out = Body::array();
  for (const Body& t : tools) {
    if (!t.is_object() || !t.contains("type") || t["type"] != "function")
      invalid_request("tools", "only function tools are supported (no built-in tools such as web search)");
    Body f = Body::object();
    for (const char* key : {"name", "description", "parameters", "strict"})
      if (t.contains(key)) f[key] = t[key];
    out.push_back({{"type", "function"}, {"function", std::move(f)}});
  }
  return out;
}

std::string new_id(const char* prefix) {
  static std::atomic<uint64_t> counter{0};
  const auto now = std::chrono::system_clock::now().time_since_epoch().count();
  return std::string(prefix) + std::to_string(now) + std::to_string(counter++);
}

}  // namespace

Body responses_to_chat(const Body& body) {
  if (!body.is_object()) invalid_request("", "the request body must be a JSON object");
  if (const auto p = body.find("previous_response_id"); p != body.end() && !p->is_null())
    invalid_request("previous_response_id", "this server stores no responses: send the whole conversation as 'input'");
  if (const auto t = body.find("text"); t != body.end() && !t->is_null()) {
    const auto f = t->is_object() ? t->find("format") : t->end();
    if (!t->is_object() || (f != t->end() && (!f->is_object() || !f->contains("type") || (*f)["type"] != "text")))
      invalid_request("text", "only the plain text format is supported (structured output needs constrained decoding)");
  }
  Body chat = {{"messages", chat_messages(body)}};
  if (const auto t = body.find("tools"); t != body.end() && !t->is_null()) chat["tools"] = chat_tools(*t);
  if (const auto c = body.find("tool_choice"); c != body.end() && !c->is_null()) {
    if (c->is_object() && c->contains("type") && (*c)["type"] == "function" && c->contains("name"))
      chat["tool_choice"] = {{"type", "function"}, {"function", {{"name", (*c)["name"]}}}};
    else
      chat["tool_choice"] = *c;  // the chat parser checks it
  }
  for (const char* key : {"temperature", "top_p", "stream", "parallel_tool_calls", "seed"})
    if (body.contains(key)) chat[key] = body[key];
  if (body.contains("max_output_tokens")) chat["max_tokens"] = body["max_output_tokens"];
  return chat;
}

ResponsesWriter::ResponsesWriter(const ApiRequest& req, const Tokenizer&, std::string model)
    : model_(std::move(model)), id_(new_id("resp_")), reply_(std::make_unique<ChatReply>(req.reply)) {
  created_ = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

ResponsesWriter::~ResponsesWriter() = default;

json ResponsesWriter::envelope(const char* status) const {
  json output = json::array();
  for (const Item& i : items_) output.push_back(i.item);
  json r = {{"id", id_}, {"object", "response"}, {"created_at", created_}, {"status", status}, {"model", model_},
            {"output", output}, {"error", nullptr}, {"incomplete_details", nullptr}};
  if (done_) {
    r["usage"] = {{"input_tokens", end_.prompt_tokens}, {"output_tokens", end_.completion_tokens},
                  {"total_tokens", end_.prompt_tokens + end_.completion_tokens},
                  {"input_tokens_details", {{"cached_tokens", end_.cached_tokens}}}};
    if (status_ == "incomplete") r["incomplete_details"] = {{"reason", "max_output_tokens"}};
  }
  return r;
}

void ResponsesWriter::emit(std::vector<ResponsesEvent>& out, std::string type, json data) {
  data["type"] = type;
  data["sequence_number"] = seq_++;
  out.push_back({std::move(type), std::move(data)});
}

ResponsesWriter::Item& ResponsesWriter::open(std::vector<ResponsesEvent>& out, const std::string& kind, json item) {
  if (!items_.empty() && !items_.back().closed && items_.back().kind == kind && kind != "function_call") return items_.back();
  for (size_t i = 0; i < items_.size(); i++)
    if (!items_[i].closed) close(out, i);
  items_.push_back({std::move(item), kind, "", false});
  const size_t index = items_.size() - 1;
  emit(out, "response.output_item.added", {{"output_index", index}, {"item", items_.back().item}});
  if (kind == "message")
    emit(out, "response.content_part.added", {{"item_id", items_.back().item["id"]}, {"output_index", index}, {"content_index", 0},
                                              {"part", {{"type", "output_text"}, {"text", ""}, {"annotations", json::array()}}}});
  return items_.back();
}

void ResponsesWriter::close(std::vector<ResponsesEvent>& out, size_t index) {
  Item& it = items_[index];
  const json where = {{"item_id", it.item["id"]}, {"output_index", index}};
  auto with = [&](json extra) {
    json d = where;
    d.update(extra);
    return d;
  };
  if (it.kind == "reasoning") {
    emit(out, "response.reasoning_text.done", with({{"content_index", 0}, {"text", it.text}}));
    it.item["content"] = json::array({{{"type", "reasoning_text"}, {"text", it.text}}});
  } else if (it.kind == "message") {
    const json part = {{"type", "output_text"}, {"text", it.text}, {"annotations", json::array()}};
    emit(out, "response.output_text.done", with({{"content_index", 0}, {"text", it.text}}));
    emit(out, "response.content_part.done", with({{"content_index", 0}, {"part", part}}));
    it.item["content"] = json::array({part});
    it.item["status"] = "completed";
  } else {
    emit(out, "response.function_call_arguments.done", with({{"arguments", it.text}}));
    it.item["arguments"] = it.text;
    it.item["status"] = "completed";
  }
  it.closed = true;
  emit(out, "response.output_item.done", {{"output_index", index}, {"item", it.item}});
}

void ResponsesWriter::record_end(const Event& ev) {
  end_ = ev;
  done_ = true;
  status_ = ev.finish_reason == "length" ? "incomplete" : "completed";
}

std::vector<ResponsesEvent> ResponsesWriter::events(const Event& ev) {
  std::vector<ResponsesEvent> out;
  if (!started_) {
    emit(out, "response.created", {{"response", envelope("in_progress")}});
    emit(out, "response.in_progress", {{"response", envelope("in_progress")}});
    started_ = true;
  }
  if (ev.finish_reason == "error") throw ApiError(500, "server_error", ev.error);
  const json d = reply_->delta(ev.text, ev.done);
  if (d.contains("reasoning_content")) {
    Item& it = open(out, "reasoning", {{"type", "reasoning"}, {"id", new_id("rs_")}, {"summary", json::array()}});
    it.text += d["reasoning_content"].get<std::string>();
    emit(out, "response.reasoning_text.delta", {{"item_id", it.item["id"]}, {"output_index", items_.size() - 1}, {"content_index", 0},
                                                {"delta", d["reasoning_content"]}});
  }
  if (d.contains("content")) {
    Item& it = open(out, "message", {{"type", "message"}, {"id", new_id("msg_")}, {"status", "in_progress"}, {"role", "assistant"},
                                     {"content", json::array()}});
    it.text += d["content"].get<std::string>();
    emit(out, "response.output_text.delta", {{"item_id", it.item["id"]}, {"output_index", items_.size() - 1}, {"content_index", 0},
                                             {"delta", d["content"]}});
  }
  for (const json& tc : d.value("tool_calls", json::array())) {
    if (tc.contains("id"))  // a new call: an item of its own
      open(out, "function_call", {{"type", "function_call"}, {"id", new_id("fc_")}, {"call_id", tc["id"]},
                                  {"name", tc["function"]["name"]}, {"arguments", ""}, {"status", "in_progress"}});
    // Calls come in order: call k is the k-th function_call item.
    size_t index = 0;
    for (size_t i = 0, k = 0; i < items_.size(); i++)
      if (items_[i].kind == "function_call" && k++ == tc["index"].get<size_t>()) index = i;
    const std::string frag = tc["function"]["arguments"].get<std::string>();
    if (frag.empty()) continue;
    items_[index].text += frag;
    emit(out, "response.function_call_arguments.delta", {{"item_id", items_[index].item["id"]}, {"output_index", index}, {"delta", frag}});
  }
  if (ev.done) {
    record_end(ev);
    for (size_t i = 0; i < items_.size(); i++)
      if (!items_[i].closed) close(out, i);
    emit(out, status_ == "completed" ? "response.completed" : "response.incomplete", {{"response", envelope(status_.c_str())}});
  }
  return out;
}

// Not streaming: the whole text through the same path, its events dropped.
void ResponsesWriter::add(const Event& ev) {
  if (const std::optional<Event> whole = whole_.add(ev)) events(*whole);
}

json ResponsesWriter::response() const { return envelope(status_.c_str()); }

}  // namespace hart::serve
