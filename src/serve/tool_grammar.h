// The grammar that makes a reply a tool call, for tool_choice "required" and a named function:
// constrained decoding holds the model to the family's call syntax with the function's name and
// arguments valid under its `parameters` schema, so even a weak model emits a call that parses
// and validates. The reply makes exactly one call (a subset of what parallel_tool_calls allows).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chat/chat_output.h"
#include "grammar/grammar.h"

namespace hart::serve {

// `tools` is the request's checked tools array, `names` the functions one of which must be
// called. The grammar covers Hermes/Qwen `<tool_call>`, Llama 3.x JSON, Mistral (both syntaxes),
// gpt-oss, Gemma 4 (in its own value notation) and a derived syntax with JSON arguments; control tokens among its text
// (`[TOOL_CALLS]`, `<|channel|>`) are the reply's markers, which the engine keeps in the text.
// Throws ApiError (400): a template without a call syntax hart reads, or a parameters schema the
// converter does not support (naming it).
// The generic format's reply (chat/chat_tools_generic.h): a call of one of `forced` (any tool
// when empty) or, with nothing forced, a text response; a list of calls when `parallel`.
std::shared_ptr<const grammar::Grammar> generic_reply_grammar(const nlohmann::ordered_json& tools,
                                                              const std::vector<std::string>& forced, bool parallel);

std::shared_ptr<const grammar::Grammar> forced_call_grammar(const OutputSyntax& syntax, const nlohmann::ordered_json& tools,
                                                            const std::vector<std::string>& names);

}  // namespace hart::serve
