#include "chat/chat_jinja.h"

#include <cerrno>
#include <cstdlib>
#include <ctime>

#include "chat/chat_workarounds.h"
#include "common/error.h"

namespace hart {

using json = nlohmann::ordered_json;

namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
}

bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

std::string text_of(const json& v, const char* what) {
  if (!v.is_string()) throw Error(std::string("chat message: ") + what + " must be a string");
  return v.get<std::string>();
}

// One message as llama.cpp rebuilds it (common_chat_msg::to_json_oaicompat): role, content,
// reasoning_content, name, tool_call_id, tool_calls, in that order; content parts joined with
// newlines when the template takes only strings.
json normalize_message(const json& m, const ChatTemplateCaps& caps) {
  if (!m.is_object()) throw Error("chat message must be an object");
  if (!m.contains("role")) throw Error("chat message has no role");
  json out = json::object();
  out["role"] = text_of(m["role"], "role");
  const json content = m.value("content", json());
  const bool has_calls = m.contains("tool_calls") && !m["tool_calls"].is_null();
  if (!m.contains("content") && !has_calls) throw Error("chat message needs content or tool_calls");
  if (content.is_array()) {
    json parts = json::array();
    std::string joined;
    for (const auto& p : content) {
      if (!p.is_object() || !p.contains("type")) throw Error("chat content part needs a type");
      const std::string type = text_of(p["type"], "content part type");
      if (type != "text" && type != "media_marker") throw Error("unsupported chat content part type '" + type + "'");
      const std::string text = text_of(p.value("text", json("")), "content part text");
      if (type == "text" && !joined.empty()) joined += '\n';
      joined += text;
      parts.push_back(json{{"type", type}, {"text", text}});
    }
    if (parts.empty()) out["content"] = "";
    else if (caps.string_content && !caps.typed_content) out["content"] = joined;
    else out["content"] = parts;
  } else if (content.is_string()) {
    if (!caps.string_content && caps.typed_content && !content.get<std::string>().empty())
      out["content"] = json::array({json{{"type", "text"}, {"text", content}}});
    else out["content"] = content;
  } else if (content.is_null()) {
    out["content"] = "";
  } else {
    throw Error("chat message content must be a string, a list of parts or null");
  }
  if (m.contains("reasoning_content") && !m["reasoning_content"].is_null()) {
    const std::string r = text_of(m["reasoning_content"], "reasoning_content");
    if (!r.empty()) out["reasoning_content"] = r;
  }
  if (m.contains("name") && !m["name"].is_null() && !text_of(m["name"], "name").empty()) out["name"] = m["name"];
  if (m.contains("tool_call_id") && !m["tool_call_id"].is_null() && !text_of(m["tool_call_id"], "tool_call_id").empty())
    out["tool_call_id"] = m["tool_call_id"];
  if (has_calls) {
    if (!m["tool_calls"].is_array()) throw Error("tool_calls must be a list");
    json calls = json::array();
    for (const auto& c : m["tool_calls"]) {
      if (!c.is_object() || !c.contains("function") || !c["function"].is_object())
        throw Error("a tool call needs a function");
      const json& f = c["function"];
      if (c.contains("type") && c["type"] != "function") throw Error("unsupported tool call type");
      const json args = f.value("arguments", json(""));
      json call{{"type", "function"},
                {"function", {{"name", text_of(f.value("name", json()), "tool call name")},
                              {"arguments", args.is_string() ? args.get<std::string>() : args.dump()}}}};
      if (c.contains("id") && c["id"].is_string() && !c["id"].get<std::string>().empty()) call["id"] = c["id"];
      calls.push_back(std::move(call));
    }
    if (!calls.empty()) out["tool_calls"] = std::move(calls);
  }
  return out;
}

// Tools as llama.cpp rebuilds them: type, function {name, description, parameters}.
json normalize_tools(const json& tools) {
  if (tools.is_null()) return json();
  if (!tools.is_array()) throw Error("tools must be a list");
  json out = json::array();
  for (const auto& t : tools) {
    if (!t.is_object() || t.value("type", json()) != "function" || !t.contains("function") || !t["function"].is_object())
      throw Error("each tool needs type \"function\" and a function");
    const json& f = t["function"];
    out.push_back(json{{"type", "function"},
                       {"function",
                        {{"name", text_of(f.value("name", json()), "tool name")},
                         {"description", f.value("description", json(""))},
                         {"parameters", f.value("parameters", json::object())}}}});
  }
  return out.empty() ? json() : out;
}

std::string format_time(const std::tm& t, const char* fmt) {
  char buf[64];
  return std::string(buf, std::strftime(buf, sizeof buf, fmt, &t));
}

}  // namespace

std::string patch_chat_template_source(std::string s) {
  if (contains(s, "<|channel|>") && contains(s, "in message.content or"))
    replace_all(s,
                "{%- if \"<|channel|>analysis<|message|>\" in message.content or "
                "\"<|channel|>final<|message|>\" in message.content %}",
                "{%- if false %}");
  if (contains(s, "[TOOL_CALLS]") && contains(s, "if (message['content'] is none or"))
    replace_all(s,
                "{%- if (message['content'] is none or message['content'] == '' or "
                "message['content']|length == 0) and (message['tool_calls'] is not defined or "
                "message['tool_calls'] is none or message['tool_calls']|length == 0) %}",
                "{%- if false %}");
  return s;
}

std::tm local_now() {
  std::tm tm{};
  if (const char* fixed = std::getenv("SOURCE_DATE_EPOCH")) {
    char* end = nullptr;
    errno = 0;
    const long long secs = std::strtoll(fixed, &end, 10);
    if (end == fixed || *end || errno || secs < 0)
      throw Error(std::string("SOURCE_DATE_EPOCH is not a whole number of seconds: '") + fixed + "'");
    const std::time_t t = std::time_t(secs);
    gmtime_r(&t, &tm);
    return tm;
  }
  const std::time_t t = std::time(nullptr);
  localtime_r(&t, &tm);
  return tm;
}

JinjaChatTemplate::JinjaChatTemplate(std::string source, std::string bos, std::string eos, ChatTemplateCaps caps)
    : source_(patch_chat_template_source(std::move(source))),
      bos_(std::move(bos)),
      eos_(std::move(eos)),
      tmpl_(source_),
      caps_(caps) {}

JinjaChatTemplate::JinjaChatTemplate(std::string source, std::string bos, std::string eos)
    : JinjaChatTemplate(std::move(source), std::move(bos), std::move(eos), ChatTemplateCaps{}) {
  caps_ = detect_chat_template_caps(tmpl_);
}

std::string JinjaChatTemplate::apply(const ChatTemplateInputs& in) const {
  if (!in.messages.is_array()) throw Error("messages must be a list");
  json messages = json::array();
  for (const auto& m : in.messages) messages.push_back(normalize_message(m, caps_));
  const bool harmony = contains(source_, "<|channel|>");  // gpt-oss keeps its developer role
  if (!harmony)
    for (auto& m : messages)
      if (m["role"] == "developer") m["role"] = "system";
  if (!caps_.system_role && !messages.empty() && messages[0]["role"] == "system") {
    if (messages.size() > 1) {
      if (!messages[0]["content"].is_string() || !messages[1]["content"].is_string())
        throw Error("cannot merge a system message with list content into the next message");
      messages[1]["content"] = messages[0]["content"].get<std::string>() + "\n" + messages[1]["content"].get<std::string>();
    }
    messages.erase(messages.begin());
  }
  if (caps_.object_arguments)
    for (auto& m : messages)
      if (m.contains("tool_calls"))
        for (auto& c : m["tool_calls"]) {
          json& args = c["function"]["arguments"];
          if (!args.is_string()) continue;
          try {
            args = json::parse(args.get<std::string>());
          } catch (const json::exception& e) {
            throw Error(std::string("tool call arguments are not JSON: ") + e.what());
          }
        }
  chat_detail::adjust_messages_for_template(source_, messages);

  json ctx{{"messages", std::move(messages)}, {"bos_token", bos_}, {"eos_token", eos_}, {"enable_thinking", in.enable_thinking}};
  if (json tools = normalize_tools(in.tools); !tools.is_null()) ctx["tools"] = std::move(tools);
  ctx["datetime"] = format_time(in.now, "%b %d %Y");
  ctx["date_string"] = format_time(in.now, "%d %b %Y");
  // llama.cpp turns preserve_reasoning into the switches templates read for keeping past
  // reasoning (caps_apply_preserve_reasoning); an explicit kwarg of the same name still wins.
  if (in.kwargs.is_object() && in.kwargs.contains("preserve_reasoning") && in.kwargs["preserve_reasoning"].is_boolean()) {
    const bool keep = in.kwargs["preserve_reasoning"];
    ctx["preserve_thinking"] = keep;
    ctx["clear_thinking"] = !keep;
    ctx["truncate_history_thinking"] = !keep;
    ctx["drop_thinking"] = !keep;
  }
  if (!in.kwargs.is_null()) {
    if (!in.kwargs.is_object()) throw Error("chat_template_kwargs must be an object");
    for (const auto& [k, v] : in.kwargs.items()) ctx[k] = v;
  }
  if (in.add_generation_prompt) ctx["add_generation_prompt"] = true;
  std::string prompt = tmpl_.render(ctx, in.now);
  chat_detail::adjust_prompt_for_template(source_, in.add_generation_prompt, prompt);
  return prompt;
}

}  // namespace hart
