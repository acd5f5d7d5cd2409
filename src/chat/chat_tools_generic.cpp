#include "chat/chat_tools_generic.h"

#include "common/error.h"

namespace hart {

using json = nlohmann::ordered_json;

namespace {

// llama.cpp's instruction, word for word (common_chat_params_init_generic).
constexpr const char* kInstruction =
    "Respond in JSON format, either with `tool_call` (a request to call tools) or with `response` reply to the user's "
    "request";

std::string text_of(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array())
    for (const json& part : content)
      if (part.is_object() && part.value("type", json()) == "text" && part.contains("text") && part["text"].is_string())
        out += (out.empty() ? "" : "\n") + part["text"].get<std::string>();
  return out;
}

// minja's add_system: joined to a leading system message after a blank line, else a new one.
json add_system(json messages, const std::string& text) {
  if (!messages.empty() && messages[0].is_object() && messages[0].value("role", json()) == "system")
    messages[0] = json{{"role", "system"}, {"content", text_of(messages[0].value("content", json(""))) + "\n\n" + text}};
  else messages.insert(messages.begin(), json{{"role", "system"}, {"content", text}});
  return messages;
}

json parsed_arguments(const json& args) {
  if (!args.is_string()) return args;
  json j = json::parse(args.get<std::string>(), nullptr, false);
  return j.is_discarded() ? args : j;
}

}  // namespace

std::string generic_call_example(const RenderMessages& render, const std::string& eos, const GenericToolNeeds& needs) {
  const json user{{"role", "user"}, {"content", "Hey"}};
  const json call{{"id", "call_1___"},
                  {"type", "function"},
                  {"function", {{"name", "tool_name"}, {"arguments", json{{"arg1", "some_value"}}.dump()}}}};
  const json with_call = json::array({user, {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", json::array({call})}}});
  std::string prefix, full;
  try {
    prefix = render(json::array({user}), true);
    full = render(generic_tool_messages(with_call, json(), needs, ""), false);
  } catch (const std::exception&) {
    return "";
  }
  // minja's trim: the turn's end token, when the conversation ends with it (and a newline).
  const size_t eos_at = eos.empty() ? std::string::npos : full.rfind(eos);
  if (eos_at != std::string::npos &&
      (eos_at + eos.size() == prefix.size() || (full.back() == '\n' && eos_at + eos.size() + 1 == full.size())))
    full.erase(eos_at);
  // The common beginning, not counting a '<' where they part (a tag the generation prompt opens).
  size_t common = 0;
  for (size_t i = 0; i < prefix.size() && i < full.size() && prefix[i] == full[i]; ++i)
    if (prefix[i] != '<') common = i + 1;
  std::string example = full.substr(common);
  if (example.find("tool_name") == std::string::npos && example.find("some_value") == std::string::npos) return "";
  return example;
}

json generic_tool_messages(const json& messages, const json& tools, const GenericToolNeeds& needs, const std::string& example) {
  json out = json::array();
  for (const json& m : messages) {
    if (!m.is_object()) throw Error("chat message must be an object");
    json msg = m;
    const auto calls = m.find("tool_calls");
    if (needs.write_calls && calls != m.end() && calls->is_array()) {
      json written = json::array();
      for (const json& c : *calls) {
        if (!c.is_object() || !c.contains("function") || !c["function"].is_object()) throw Error("a tool call needs a function");
        const json& f = c["function"];
        json tc{{"name", f.value("name", json(""))}, {"arguments", parsed_arguments(f.value("arguments", json::object()))}};
        if (c.contains("id")) tc["id"] = c["id"];
        written.push_back(std::move(tc));
      }
      json obj{{"tool_calls", std::move(written)}};
      if (const json content = m.value("content", json()); !content.is_null() && !content.empty()) obj["content"] = content;
      msg["content"] = obj.dump(2);
      msg.erase("tool_calls");
    }
    if (needs.write_responses && m.value("role", json()) == "tool") {
      json response = json::object();
      if (m.contains("name")) response["tool"] = m["name"];
      response["content"] = m.value("content", json(""));
      if (m.contains("tool_call_id")) response["tool_call_id"] = m["tool_call_id"];
      msg = json{{"role", "user"}, {"content", json{{"tool_response", std::move(response)}}.dump(2)}};
    }
    out.push_back(std::move(msg));
  }
  if (tools.is_null()) return out;
  out = add_system(std::move(out), kInstruction);
  // The tools as llama.cpp rebuilt them: type, function {name, description, parameters}.
  json listed = json::array();
  for (const json& t : tools) {
    const json& f = t.at("function");
    listed.push_back({{"type", "function"},
                      {"function",
                       {{"name", f.at("name")},
                        {"description", f.contains("description") && !f["description"].is_null() ? f["description"] : json("")},
                        {"parameters", f.contains("parameters") && !f["parameters"].is_null() ? f["parameters"] : json::object()}}}});
  }
  if (needs.describe_tools)
    out = add_system(std::move(out), "You can call any of the following tools to satisfy the user's requests: " + listed.dump(2) +
                                         (example.empty() ? "" : "\n\nExample tool call syntax:\n\n" + example + "\n\n"));
  return out;
}

json generic_reply_schema(const json& tools, const std::vector<std::string>& names, bool parallel, bool required) {
  json calls = json::array();
  for (const json& t : tools) {
    const json& f = t.at("function");
    const std::string& name = f.at("name").get_ref<const std::string&>();
    if (!names.empty() && std::find(names.begin(), names.end(), name) == names.end()) continue;
    json call{{"type", "object"},
              {"properties",
               {{"name", {{"type", "string"}, {"const", name}}},
                {"arguments", f.contains("parameters") && !f["parameters"].is_null() ? f["parameters"] : json{{"type", "object"}}}}},
              {"required", json::array({"name", "arguments"})}};
    if (parallel) {
      call["properties"]["id"] = {{"type", "string"}, {"minLength", 4}};
      call["required"].push_back("id");
    }
    calls.push_back(std::move(call));
  }
  const json one = calls.size() == 1 ? calls[0] : json{{"anyOf", calls}};
  const json call_reply =
      parallel ? json{{"type", "object"},
                      {"properties", {{"tool_calls", {{"type", "array"}, {"items", one}, {"minItems", 1}}}}},
                      {"required", json::array({"tool_calls"})}}
               : json{{"type", "object"}, {"properties", {{"tool_call", one}}}, {"required", json::array({"tool_call"})}};
  if (required) return call_reply;
  return json{{"anyOf",
               json::array({call_reply, {{"type", "object"},
                                         {"properties", {{"response", {{"type", "string"}}}}},
                                         {"required", json::array({"response"})}}})}};
}

}  // namespace hart
