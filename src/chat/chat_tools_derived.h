// A tool-call syntax read off a chat template, for templates that render tool calls in a family
// hart has no hand-written parser for. As llama.cpp's differential autoparser does (facts from
// its common/chat-diff-analyzer.cpp), the template renders probe conversations, a turn with
// content against the same turn with one call and with two, and the differences give the text
// around the calls, around each call, between calls, and where the name, the arguments and the
// call id sit. Arguments are either one JSON object or tagged pairs (<parameter=K>V</parameter>,
// <arg_key>K</arg_key><arg_value>V</arg_value>, ...), found the same way from two arguments.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace hart {

struct DerivedToolSyntax {
  struct Piece {
    enum Kind { TEXT, NAME, ARGS, ID } kind;
    std::string text;  // TEXT only
  };
  std::string section_open, section_close;  // around all of a reply's calls
  std::vector<Piece> call;                  // one call: its texts and slots, in order
  bool parallel = false;                    // the template writes several calls, call_sep between them
  std::string call_sep;
  // Tagged arguments: arg_open KEY arg_mid VALUE arg_close, arg_sep between two; else JSON.
  bool tagged = false;
  std::string arg_open, arg_mid, arg_close, arg_sep;

  // Where the parser starts reading calls: the first text of the section, without the
  // whitespace before it.
  std::string trigger() const;
  // The control-token texts among the syntax's markers (the engine keeps them in the output).
  std::vector<std::string> markers() const;
};

// Renders messages (OpenAI form, arguments as JSON text) with `tools`, add_generation_prompt off.
using RenderWithTools = std::function<std::string(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools)>;

// nullopt when the probes show no call, or a layout this reading cannot take apart (the name
// absent, arguments neither a JSON object nor tagged pairs, nothing that marks where calls begin).
std::optional<DerivedToolSyntax> derive_tool_syntax(const RenderWithTools& render);

}  // namespace hart
