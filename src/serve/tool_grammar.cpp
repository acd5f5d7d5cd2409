#include "serve/tool_grammar.h"

#include <algorithm>

#include "grammar/json_schema.h"
#include "serve/openai_api.h"

namespace hart::serve {

using Body = nlohmann::ordered_json;

namespace {

// The call's JSON as a schema: {"name": one of the names, "arguments": that function's
// parameters}, one anyOf branch per function (their names are distinct constants).
Body call_schema(const Body& tools, const std::vector<std::string>& names) {
  Body branches = Body::array();
  for (const Body& t : tools) {
    const Body& f = t["function"];
    const std::string& name = f["name"].get_ref<const std::string&>();
    if (std::find(names.begin(), names.end(), name) == names.end()) continue;
    const auto p = f.find("parameters");
    const Body params = p == f.end() || p->is_null() ? Body{{"type", "object"}} : *p;
    branches.push_back({{"type", "object"},
                        {"properties", {{"name", {{"const", name}}}, {"arguments", params}}},
                        {"required", {"name", "arguments"}}});
  }
  return branches.size() == 1 ? branches[0] : Body{{"anyOf", branches}};
}

}  // namespace

std::shared_ptr<const grammar::Grammar> forced_call_grammar(const OutputSyntax& syntax, const Body& tools,
                                                            const std::vector<std::string>& names) {
  if (syntax.tools != ToolCallSyntax::HERMES)
    throw ApiError(400, "invalid_request_error",
                   "tool_choice \"required\" and named functions are enforced for the Hermes/Qwen <tool_call> syntax; "
                   "this model's is " + tool_call_syntax_name(syntax.tools) + ": use \"auto\"",
                   "tool_choice");
  std::string gbnf;
  try {
    gbnf = grammar::json_schema_to_gbnf(call_schema(tools, names), "call-json");
  } catch (const grammar::SchemaError& e) {
    throw ApiError(400, "invalid_request_error", std::string("a forced tool's parameters: ") + e.what(), "tools");
  }
  // A prompt that leaves the model inside <think> gets the block closed first, empty: the
  // reply parser reads everything before </think> as reasoning.
  const std::string lead = syntax.thinking_open ? "\"" + syntax.think_close + "\\n\\n\" " : "";
  gbnf += "root ::= " + lead + "\"<tool_call>\\n\" call-json \"\\n</tool_call>\"\n";
  try {
    return std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(gbnf));
  } catch (const grammar::GrammarError& e) {
    throw ApiError(400, "invalid_request_error", std::string("a forced tool's parameters: ") + e.what(), "tools");
  }
}

}  // namespace hart::serve
