#include "serve/tool_grammar.h"

#include <algorithm>

#include "chat/chat_tools_generic.h"
#include "grammar/json_schema.h"
#include "serve/openai_api.h"

namespace hart::serve {

using Body = nlohmann::ordered_json;

namespace {

// The functions that may be called, in the order of `tools`, with their parameters schemas
// (an absent one: any object). Their names are checked (letters, digits, '_', '-'), so they need
// no escaping in a GBNF literal.
std::vector<std::pair<std::string, Body>> functions(const Body& tools, const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, Body>> out;
  for (const Body& t : tools) {
    const Body& f = t["function"];
    const std::string& name = f["name"].get_ref<const std::string&>();
    if (std::find(names.begin(), names.end(), name) == names.end()) continue;
    const auto p = f.find("parameters");
    out.emplace_back(name, p == f.end() || p->is_null() ? Body{{"type", "object"}} : *p);
  }
  return out;
}

// Syntaxes whose call is one JSON object {"name": NAME, ARGS_KEY: arguments}: the object as a
// schema, one anyOf branch per function (their names are distinct constants), as rule call-json.
std::string json_call_rules(const std::vector<std::pair<std::string, Body>>& fns, const char* args_key) {
  Body branches = Body::array();
  for (const auto& [name, params] : fns)
    branches.push_back({{"type", "object"},
                        {"properties", {{"name", {{"const", name}}}, {args_key, params}}},
                        {"required", {"name", args_key}}});
  return grammar::json_schema_to_gbnf(branches.size() == 1 ? branches[0] : Body{{"anyOf", branches}}, "call-json");
}

// Syntaxes that write the name outside the arguments: function i's arguments as rule args-i, and
// root ::= before (NAME_i between args-i | ...) after — each name tied to its own arguments.
std::string named_call_rules(const std::vector<std::pair<std::string, Body>>& fns, const std::string& before,
                             const std::string& between, const std::string& after = "",
                             grammar::ValueNotation notation = grammar::ValueNotation::JSON) {
  std::vector<std::pair<std::string, Body>> rules;
  std::string alts;
  for (size_t i = 0; i < fns.size(); i++) {
    rules.emplace_back("args-" + std::to_string(i), fns[i].second);
    alts += (i ? " | " : "") + ("\"" + fns[i].first + between + "\" args-" + std::to_string(i));
  }
  return grammar::json_schemas_to_gbnf(rules, notation) + "call ::= \"" + before + "\" (" + alts + ")" +
         (after.empty() ? "" : " \"" + after + "\"") + "\n";
}

// A derived syntax's call: its texts as they are, function i's name tied to its arguments
// (args-i) and any id as an identifier. Tagged arguments have no schema grammar here.
std::string derived_call_rules(const DerivedToolSyntax& d, const std::vector<std::pair<std::string, Body>>& fns) {
  if (d.tagged)
    throw ApiError(400, "invalid_request_error",
                   "tool_choice \"required\" and named functions are not supported for this template's tagged "
                   "arguments (its tool-call syntax is read off the template): use \"auto\"",
                   "tool_choice");
  std::vector<std::pair<std::string, Body>> rules;
  std::string alts;
  for (size_t i = 0; i < fns.size(); i++) {
    rules.emplace_back("args-" + std::to_string(i), fns[i].second);
    std::string seq;
    for (const DerivedToolSyntax::Piece& p : d.call) {
      if (p.kind == DerivedToolSyntax::Piece::TEXT && p.text.empty()) continue;
      seq += seq.empty() ? "" : " ";
      if (p.kind == DerivedToolSyntax::Piece::TEXT) seq += grammar::gbnf_literal(p.text);
      else if (p.kind == DerivedToolSyntax::Piece::NAME) seq += grammar::gbnf_literal(fns[i].first);
      else if (p.kind == DerivedToolSyntax::Piece::ARGS) seq += "args-" + std::to_string(i);
      else seq += "[a-zA-Z0-9_]+";
    }
    alts += (i ? " | " : "") + ("(" + seq + ")");
  }
  std::string call = "call ::= ";
  if (!d.section_open.empty()) call += grammar::gbnf_literal(d.section_open) + " ";
  call += "(" + alts + ")";
  if (!d.section_close.empty()) call += " " + grammar::gbnf_literal(d.section_close);
  return grammar::json_schemas_to_gbnf(rules, grammar::ValueNotation::JSON) + call + "\n";
}

// The rules of one call (rule `call`) in the family's syntax (facts from llama.cpp's
// common/chat.cpp, whose forced-call grammars these follow, and the reply parsers in
// chat_output_families.cpp and chat_output_gemma4.cpp).
std::string call_gbnf(const OutputSyntax& syntax, const std::vector<std::pair<std::string, Body>>& fns) {
  switch (syntax.tools) {
    case ToolCallSyntax::HERMES:
      return json_call_rules(fns, "arguments") + "call ::= \"<tool_call>\\n\" call-json \"\\n</tool_call>\"\n";
    case ToolCallSyntax::LLAMA3:  // {"name": N, "parameters": {...}} as the whole reply
      return json_call_rules(fns, "parameters") + "call ::= call-json\n";
    case ToolCallSyntax::MISTRAL:
      // Magistral / Devstral: [TOOL_CALLS]NAME[ARGS]{...}; Nemo / Small 3.1: [TOOL_CALLS][{...}]
      // (the call's id is left to the server, which gives Mistral calls 9-character ids).
      if (syntax.named_args) return named_call_rules(fns, "[TOOL_CALLS]", "[ARGS]");
      return json_call_rules(fns, "arguments") + "call ::= \"[TOOL_CALLS][\" call-json \"]\"\n";
    case ToolCallSyntax::GPT_OSS:  // the call's message; its end, <|call|>, ends the generation
      return named_call_rules(fns, "<|channel|>commentary to=functions.", " <|constrain|>json<|message|>");
    case ToolCallSyntax::GEMMA4:  // <|tool_call>call:NAME{key:value,...}<tool_call|> in its own notation
      return named_call_rules(fns, "<|tool_call>call:", "", "<tool_call|>", grammar::ValueNotation::GEMMA4);
    case ToolCallSyntax::DERIVED:
      return derived_call_rules(*syntax.derived, fns);
    case ToolCallSyntax::NONE:
    case ToolCallSyntax::GENERIC:  // its grammar is generic_reply_grammar's
      break;
  }
  throw ApiError(400, "invalid_request_error",
                 "tool_choice \"required\" and named functions need a template whose tool-call syntax hart reads; "
                 "this model's has none: use \"auto\"",
                 "tool_choice");
}

std::shared_ptr<const grammar::Grammar> compile(const std::string& gbnf, const char* what) {
  try {
    return std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(gbnf));
  } catch (const grammar::GrammarError& e) {  // SchemaError too
    throw ApiError(400, "invalid_request_error", std::string(what) + e.what(), "tools");
  }
}

}  // namespace

std::shared_ptr<const grammar::Grammar> generic_reply_grammar(const Body& tools, const std::vector<std::string>& forced, bool parallel) {
  std::string gbnf;
  try {
    gbnf = grammar::json_schema_to_gbnf(generic_reply_schema(tools, forced, parallel, !forced.empty()));
  } catch (const grammar::GrammarError& e) {
    throw ApiError(400, "invalid_request_error", std::string("a tool's parameters: ") + e.what(), "tools");
  }
  return compile(gbnf, "a tool's parameters: ");
}

std::shared_ptr<const grammar::Grammar> forced_call_grammar(const OutputSyntax& syntax, const Body& tools,
                                                            const std::vector<std::string>& names) {
  // A prompt that leaves the model inside its reasoning gets the block closed first, empty: the
  // reply parser reads everything before the close as reasoning (Qwen's empty block ends in a
  // blank line).
  std::string lead;
  if (syntax.thinking_open)
    lead = grammar::gbnf_literal(syntax.think_close + (syntax.tools == ToolCallSyntax::HERMES ? "\n\n" : "")) + " ";
  std::string gbnf;
  try {
    gbnf = call_gbnf(syntax, functions(tools, names)) + "root ::= " + lead + "call\n";
  } catch (const grammar::GrammarError& e) {  // SchemaError too
    throw ApiError(400, "invalid_request_error", std::string("a forced tool's parameters: ") + e.what(), "tools");
  }
  return compile(gbnf, "a forced tool's parameters: ");
}

}  // namespace hart::serve
