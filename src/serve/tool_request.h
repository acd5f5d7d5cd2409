// The tool fields of a chat request, checked: tools, tool_choice, parallel_tool_calls, and the
// tool calls and tool results already in the conversation. Throws ApiError (400) naming the field.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hart::serve {

struct ToolRequest {
  nlohmann::ordered_json tools;  // what the template renders: null for none (or tool_choice "none")
  bool parse_calls = false;      // the reply may hold calls: tools given, tool_choice "auto"
  bool parallel = true;          // parallel_tool_calls
  // tool_choice "required" (every tool's name) or a named function (its name): the reply must
  // call one of these, enforced by constrained decoding (serve/tool_grammar.h). Empty: no call forced.
  std::vector<std::string> forced;
};

ToolRequest parse_tool_request(const nlohmann::ordered_json& body);

// Assistant tool_calls are well-formed, and every tool message answers a call made before it.
void check_tool_messages(const nlohmann::ordered_json& messages);

}  // namespace hart::serve
