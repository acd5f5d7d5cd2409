// A chat model's generated text split into what the OpenAI API returns: reasoning, content and
// tool calls, by the syntax of the model's family (the facts follow llama.cpp's chat parsers):
//   HERMES   <tool_call>{"name": N, "arguments": {...}}</tool_call>   (Hermes 2 Pro, Qwen 2.5 / 3)
//   LLAMA3   {"name": N, "parameters": {...}} as the whole reply, <|python_tag|>N.call(k=v, ...)
//   MISTRAL  [TOOL_CALLS][{"name": N, "arguments": {...}}, ...]  or  [TOOL_CALLS]N[ARGS]{...}
//   GPT_OSS  harmony: <|channel|>analysis<|message|>...<|end|>, <|channel|>final<|message|>...,
//            <|channel|>commentary to=functions.N <|constrain|>json<|message|>{...}
//   GEMMA4   <|tool_call>call:N{key:value,...}<tool_call|>, strings between <|"|> (Gemma 4's
//            own notation, turned into JSON)
//   GENERIC  llama.cpp's generic JSON reply for templates without a call syntax:
//            {"tool_calls": [{"name": N, "arguments": {...}, "id": ID}]} or {"response": "..."}
//   DERIVED  the syntax read off the template itself (chat_tools_derived.h)
// plus <think>...</think> (or [THINK]...[/THINK], Gemma 4's <|channel>thought...<channel|>)
// reasoning before the reply.
//
// Parsing runs on the whole text so far, again at every new piece (partial = true) and once at
// the end. A partial parse is conservative, so successive results only grow: text that may still
// turn into a marker or a call is held back, and a call shows once its name is known, with the
// arguments' text so far. A call's arguments are the JSON text the model wrote (not re-printed),
// so the streamed fragments add up to the final string. At the end, a call whose JSON is
// malformed or cut off is returned as content, as llama.cpp does.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_tools_derived.h"

namespace hart {

enum class ToolCallSyntax { NONE, HERMES, LLAMA3, MISTRAL, GPT_OSS, GEMMA4, GENERIC, DERIVED };

struct OutputSyntax {
  ToolCallSyntax tools = ToolCallSyntax::NONE;  // NONE: every reply is content
  std::string think_open, think_close;          // empty: no reasoning split
  bool thinking_open = false;  // the prompt ends inside a reasoning block (the model only closes it)
  int max_calls = -1;          // parallel_tool_calls = false: 1 (the reply ends after the first call)
  bool named_args = false;     // Mistral: calls are NAME[ARGS]{...} (Magistral, Devstral), not a JSON array
  std::shared_ptr<const DerivedToolSyntax> derived;           // DERIVED: the template's layout
  std::map<std::string, std::set<std::string>> string_args;  // DERIVED: each tool's string-typed parameters
};

struct ParsedToolCall {
  std::string id;  // the model's own, when its syntax has one (Mistral); else ""
  std::string name;
  std::string arguments;  // JSON text
};

struct ParsedOutput {
  std::string reasoning, content;
  std::vector<ParsedToolCall> calls;
};

ParsedOutput parse_chat_output(const OutputSyntax& syntax, std::string_view text, bool partial);

// The syntax a chat template's output follows, from the template's text.
OutputSyntax output_syntax_of_template(std::string_view source);

// Texts of the control tokens the parser needs to see: they must be in the decoded text.
std::vector<std::string> output_markers(const OutputSyntax& syntax);

std::string tool_call_syntax_name(ToolCallSyntax s);

}  // namespace hart
