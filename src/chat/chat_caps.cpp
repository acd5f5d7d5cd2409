// Probing a chat template's capabilities, as llama.cpp does before it adjusts messages: render
// small conversations and see what comes out. llama.cpp watches which inputs the template reads;
// here the inputs carry marker strings and the test is whether the markers reach the output
// (a template that reads a field and drops it is rare, and either way cannot show it).
#include <string>

#include "chat/chat_jinja.h"

namespace hart {
namespace {

using json = nlohmann::ordered_json;

constexpr const char* kSystemMark = "SYS_MARK_7f3a";
constexpr const char* kTypedMark = "PART_MARK_7f3a";
constexpr const char* kCallMark = "call_fn_7f3a";
constexpr const char* kArgMark = "ARG_MARK_7f3a";
constexpr const char* kToolMark = "tool_mark_7f3a";
constexpr const char* kResponseMark = "RESPONSE_MARK_7f3a";

// The output, or "" with ok=false when the template throws.
std::string try_render(const jinja::Template& t, json messages, json tools, bool& ok) {
  json ctx{{"messages", std::move(messages)}, {"bos_token", ""}, {"eos_token", ""}, {"add_generation_prompt", true}};
  if (!tools.is_null()) ctx["tools"] = std::move(tools);
  try {
    ok = true;
    return t.render(ctx, std::tm{});
  } catch (const std::exception&) {
    ok = false;
    return "";
  }
}

json tool_conversation(json arguments) {
  json call{{"id", "call00001"}, {"type", "function"}, {"function", {{"name", kCallMark}, {"arguments", std::move(arguments)}}}};
  return json::array({
      {{"role", "user"}, {"content", "User message"}},
      {{"role", "assistant"}, {"content", ""}, {"tool_calls", json::array({call})}},
      {{"role", "tool"}, {"content", kResponseMark}, {"tool_call_id", "call00001"}},
      {{"role", "assistant"}, {"content", "The tool response was 'tool response'"}},
      {{"role", "user"}, {"content", "User message"}},
  });
}

json probe_tools() {
  return json::array({{{"type", "function"},
                       {"function",
                        {{"name", kToolMark},
                         {"description", "Tool description"},
                         {"parameters",
                          {{"type", "object"},
                           {"properties", {{"arg", {{"type", "string"}, {"description", "Arg description"}}}}},
                           {"required", json::array({"arg"})}}}}}}});
}

bool has(const std::string& out, const char* mark) { return out.find(mark) != std::string::npos; }

}  // namespace

ChatTemplateCaps detect_chat_template_caps(const jinja::Template& t) {
  ChatTemplateCaps caps;
  bool ok = false;
  try_render(t, json::array({{{"role", "user"}, {"content", "content"}}}), json(), ok);
  caps.string_content = ok;

  // Typed content: the text of a part shows, and not as the printed list.
  const json parts = json::array({{{"type", "text"}, {"text", kTypedMark}}});
  std::string out = try_render(t, json::array({{{"role", "user"}, {"content", parts}}}), json(), ok);
  caps.typed_content = ok && has(out, kTypedMark) && !has(out, "'type'") && !has(out, "\"type\"");

  out = try_render(t, json::array({{{"role", "system"}, {"content", kSystemMark}}, {{"role", "user"}, {"content", "User message"}}}),
                   json::array(), ok);
  caps.system_role = ok && has(out, kSystemMark);

  out = try_render(t, json::array({{{"role", "user"}, {"content", "User message"}}}), probe_tools(), ok);
  caps.tools = ok && has(out, kToolMark);

  out = try_render(t, tool_conversation(json{{"arg", kArgMark}}), probe_tools(), ok);
  caps.object_arguments = ok && has(out, kArgMark);
  caps.tool_calls = ok && has(out, kCallMark);
  if (!caps.tool_calls) {
    out = try_render(t, tool_conversation(std::string("{\"arg\": \"") + kArgMark + "\"}"), probe_tools(), ok);
    caps.tool_calls = ok && has(out, kCallMark);
  }
  caps.tool_responses = ok && has(out, kResponseMark);
  return caps;
}

}  // namespace hart
