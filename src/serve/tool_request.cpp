#include "serve/tool_request.h"

#include <cctype>
#include <set>
#include <string>

#include "serve/openai_api.h"

namespace hart::serve {

using Body = nlohmann::ordered_json;

namespace {

// obj[key] when it is a string; `where` names it in the message.
const std::string& string_at(const Body& obj, const char* key, const std::string& where, const std::string& param) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) invalid_request(param, where + "." + key + " must be a string");
  return it->get_ref<const std::string&>();
}

// OpenAI's rule for function names.
bool valid_name(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

std::set<std::string> check_tools(const Body& tools) {
  if (!tools.is_array()) invalid_request("tools", "'tools' must be an array");
  std::set<std::string> names;
  for (size_t i = 0; i < tools.size(); i++) {
    const std::string where = "tools[" + std::to_string(i) + "]";
    const Body& t = tools[i];
    if (!t.is_object()) invalid_request("tools", where + " must be an object");
    if (string_at(t, "type", where, "tools") != "function") invalid_request("tools", where + ".type must be \"function\"");
    const auto f = t.find("function");
    if (f == t.end() || !f->is_object()) invalid_request("tools", where + ".function must be an object");
    const std::string& name = string_at(*f, "name", where + ".function", "tools");
    if (!valid_name(name)) invalid_request("tools", where + ".function.name must be 1 to 64 letters, digits, '_' or '-'");
    if (!names.insert(name).second) invalid_request("tools", "two tools are named '" + name + "'");
    if (const auto d = f->find("description"); d != f->end() && !d->is_null() && !d->is_string())
      invalid_request("tools", where + ".function.description must be a string");
    if (const auto p = f->find("parameters"); p != f->end() && !p->is_null() && !p->is_object())
      invalid_request("tools", where + ".function.parameters must be a JSON schema object");
    if (const auto s = f->find("strict"); s != f->end() && !s->is_null() && !s->is_boolean())
      invalid_request("tools", where + ".function.strict must be a boolean");
  }
  return names;
}

}  // namespace

ToolRequest parse_tool_request(const Body& body) {
  ToolRequest r;
  std::set<std::string> names;
  const auto t = body.find("tools");
  const bool has_tools = t != body.end() && !t->is_null();
  if (has_tools) names = check_tools(*t);
  if (const auto p = body.find("parallel_tool_calls"); p != body.end() && !p->is_null()) {
    if (!p->is_boolean()) invalid_request("parallel_tool_calls", "'parallel_tool_calls' must be a boolean");
    r.parallel = p->get<bool>();
  }
  std::string choice = "auto";
  if (const auto c = body.find("tool_choice"); c != body.end() && !c->is_null()) {
    if (c->is_string()) {
      choice = c->get<std::string>();
      if (choice != "auto" && choice != "none" && choice != "required")
        invalid_request("tool_choice", "'tool_choice' must be \"auto\", \"none\", \"required\" or a named function");
    } else if (c->is_object()) {
      if (string_at(*c, "type", "tool_choice", "tool_choice") != "function") invalid_request("tool_choice", "tool_choice.type must be \"function\"");
      const auto f = c->find("function");
      if (f == c->end() || !f->is_object()) invalid_request("tool_choice", "tool_choice.function must be an object");
      const std::string& name = string_at(*f, "name", "tool_choice.function", "tool_choice");
      if (!names.count(name)) invalid_request("tool_choice", "tool_choice names '" + name + "', which is not among the tools");
      choice = "named";
      r.forced = {name};
    } else {
      invalid_request("tool_choice", "'tool_choice' must be a string or an object");
    }
  }
  if (choice != "auto" && choice != "none" && !has_tools) invalid_request("tool_choice", "'tool_choice' needs 'tools'");
  if (choice == "required") {
    if (t->empty()) invalid_request("tool_choice", "tool_choice \"required\" needs at least one tool");
    r.forced.assign(names.begin(), names.end());
  }
  if (has_tools && choice != "none" && !t->empty()) {
    r.tools = *t;
    r.parse_calls = true;
  }
  return r;
}

void check_tool_messages(const Body& messages) {
  std::set<std::string> call_ids;
  for (size_t i = 0; i < messages.size(); i++) {
    const Body& m = messages[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) invalid_request("messages", where + " must be an object");
    const auto role = m.find("role");
    if (role == m.end() || !role->is_string()) invalid_request("messages", where + ".role must be a string");
    if (*role == "assistant") {
      const auto calls = m.find("tool_calls");
      if (calls == m.end() || calls->is_null()) continue;
      if (!calls->is_array()) invalid_request("messages", where + ".tool_calls must be an array");
      for (size_t k = 0; k < calls->size(); k++) {
        const Body& c = (*calls)[k];
        const std::string cw = where + ".tool_calls[" + std::to_string(k) + "]";
        if (!c.is_object()) invalid_request("messages", cw + " must be an object");
        call_ids.insert(string_at(c, "id", cw, "messages"));
        if (string_at(c, "type", cw, "messages") != "function") invalid_request("messages", cw + ".type must be \"function\"");
        const auto f = c.find("function");
        if (f == c.end() || !f->is_object()) invalid_request("messages", cw + ".function must be an object");
        string_at(*f, "name", cw + ".function", "messages");
        const std::string& args = string_at(*f, "arguments", cw + ".function", "messages");
        if (!Body::accept(args)) invalid_request("messages", cw + ".function.arguments is not JSON");
      }
    } else if (*role == "tool") {
      const std::string& id = string_at(m, "tool_call_id", where, "messages");
      if (!call_ids.count(id)) invalid_request("messages", where + " answers tool call '" + id + "', which no earlier assistant message made");
    }
  }
}

}  // namespace hart::serve
