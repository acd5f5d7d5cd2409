// llama.cpp's generic tool format (COMMON_CHAT_FORMAT_GENERIC, 2025), for a template that has no
// tool-call syntax of its own: the tools are told in the system prompt, the reply is one JSON
// object, {"tool_calls": [{"name": N, "arguments": {...}, "id": ID}, ...]} (or {"tool_call":
// {...}} when parallel calls are off) or {"response": "text"}, and a grammar holds the model to
// that shape (serve/tool_grammar.h). Past calls and tool results are written as that JSON when
// the template cannot render them (minja's polyfills, which llama.cpp applied then).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace hart {

// What the template renders itself; the rest is written into message text.
struct GenericToolNeeds {
  bool describe_tools = true;   // the template does not describe `tools`
  bool write_calls = true;      // ... nor render assistant tool_calls
  bool write_responses = true;  // ... nor tool messages
};

// Renders messages (OpenAI form, arguments as JSON text) with the template.
using RenderMessages = std::function<std::string(const nlohmann::ordered_json& messages, bool add_generation_prompt)>;

// The example of a call the template shows, as minja derived it: what one past call (in the
// generic JSON) adds to a one-message conversation, less the end-of-turn token. "" when the
// template cannot render it.
std::string generic_call_example(const RenderMessages& render, const std::string& eos_token, const GenericToolNeeds& needs);

// The conversation as the generic format renders it: llama.cpp's instruction and (when the
// template does not describe tools) the tools with `example` in the system message, past calls
// and tool results as JSON text where the template has no syntax for them.
nlohmann::ordered_json generic_tool_messages(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                                             const GenericToolNeeds& needs, const std::string& example);

// The JSON schema of a reply: one of the named functions' calls (all of `tools` when `names` is
// empty), a list of them when `parallel`, or (unless `required`) a text response.
nlohmann::ordered_json generic_reply_schema(const nlohmann::ordered_json& tools, const std::vector<std::string>& names,
                                            bool parallel, bool required);

}  // namespace hart
