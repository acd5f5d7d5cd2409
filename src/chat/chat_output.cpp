// Dispatch by family, the reasoning block, and the syntax a template's text implies.
#include "chat/chat_output.h"

#include "chat/chat_output_parser.h"

namespace hart {

namespace chat_output {

void read_reasoning(Cursor& c) {
  const OutputSyntax& s = c.syntax;
  if (s.think_open.empty()) return;
  size_t at = c.skip_ws(c.pos);
  if (c.partial && at == c.size()) return c.stop();  // only whitespace so far: <think> may follow
  if (!s.thinking_open) {
    if (c.could_become(at, s.think_open)) return c.stop();
    if (!c.starts(at, s.think_open)) return;
    at += s.think_open.size();
  }
  const Found close = c.find(at, s.think_close);
  if (close.at == std::string_view::npos) {  // still thinking, or cut off while thinking
    c.reasoning(c.text.substr(at));
    c.pos = c.size();
    return;
  }
  c.reasoning(c.text.substr(at, close.at - at));
  if (!close.whole) {
    c.pos = close.at;
    return c.stop();
  }
  c.pos = c.skip_ws(close.at + s.think_close.size());
}

}  // namespace chat_output

ParsedOutput parse_chat_output(const OutputSyntax& syntax, std::string_view text, bool partial) {
  chat_output::Cursor c(syntax, text, partial);
  chat_output::read_reasoning(c);
  if (!c.stopped) {
    switch (syntax.tools) {
      case ToolCallSyntax::NONE: c.content_to(c.size()); break;
      case ToolCallSyntax::HERMES: chat_output::parse_hermes(c); break;
      case ToolCallSyntax::LLAMA3: chat_output::parse_llama3(c); break;
      case ToolCallSyntax::MISTRAL: chat_output::parse_mistral(c); break;
      case ToolCallSyntax::GPT_OSS: chat_output::parse_gpt_oss(c); break;
      case ToolCallSyntax::GEMMA4: chat_output::parse_gemma4(c); break;
      case ToolCallSyntax::GENERIC: chat_output::parse_generic(c); break;
      case ToolCallSyntax::DERIVED: chat_output::parse_derived(c); break;
    }
  }
  return std::move(c.out);
}

OutputSyntax output_syntax_of_template(std::string_view src) {
  auto has = [&](std::string_view s) { return src.find(s) != std::string_view::npos; };
  OutputSyntax s;
  if (has("<|channel|>") && has("<|message|>")) s.tools = ToolCallSyntax::GPT_OSS;
  else if (has("[TOOL_CALLS]")) s.tools = ToolCallSyntax::MISTRAL, s.named_args = has("[ARGS]");
  // <tool_call> with XML inside (Qwen3-Coder's <function=, GLM's <arg_key>) is another syntax;
  // so are Functionary's <function= and >>> on Llama 3's headers.
  else if (has("<tool_call>") && !has("<function=") && !has("<arg_key>")) s.tools = ToolCallSyntax::HERMES;
  else if (has("<|start_header_id|>") && (has("<|python_tag|>") || has("parameters")) && !has("<function=") && !has(">>>"))
    s.tools = ToolCallSyntax::LLAMA3;
  else if (has("<|tool_call>call:")) s.tools = ToolCallSyntax::GEMMA4;
  if (s.tools == ToolCallSyntax::GPT_OSS) return s;  // its reasoning is the analysis channel
  if (has("<|channel>thought")) {
    s.think_open = "<|channel>thought", s.think_close = "<channel|>";
    return s;
  }
  if (has("<think>")) s.think_open = "<think>", s.think_close = "</think>";
  else if (has("[THINK]")) s.think_open = "[THINK]", s.think_close = "[/THINK]";
  return s;
}

std::vector<std::string> output_markers(const OutputSyntax& s) {
  std::vector<std::string> m;
  if (!s.think_open.empty()) m = {s.think_open, s.think_close};
  switch (s.tools) {
    case ToolCallSyntax::NONE: break;
    case ToolCallSyntax::HERMES: m.insert(m.end(), {"<tool_call>", "</tool_call>"}); break;
    case ToolCallSyntax::LLAMA3: m.push_back("<|python_tag|>"); break;
    case ToolCallSyntax::MISTRAL: m.insert(m.end(), {"[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"}); break;
    case ToolCallSyntax::GPT_OSS:
      m.insert(m.end(), {"<|channel|>", "<|message|>", "<|end|>", "<|start|>", "<|constrain|>"});
      break;
    case ToolCallSyntax::GEMMA4: m.insert(m.end(), {"<|tool_call>", "<tool_call|>", "<|\"|>"}); break;
    case ToolCallSyntax::GENERIC: break;
    case ToolCallSyntax::DERIVED: {
      const std::vector<std::string> d = s.derived->markers();
      m.insert(m.end(), d.begin(), d.end());
      break;
    }
  }
  return m;
}

std::string tool_call_syntax_name(ToolCallSyntax s) {
  switch (s) {
    case ToolCallSyntax::NONE: return "none";
    case ToolCallSyntax::HERMES: return "hermes";
    case ToolCallSyntax::LLAMA3: return "llama3";
    case ToolCallSyntax::MISTRAL: return "mistral";
    case ToolCallSyntax::GPT_OSS: return "gpt-oss";
    case ToolCallSyntax::GEMMA4: return "gemma4";
    case ToolCallSyntax::GENERIC: return "generic";
    case ToolCallSyntax::DERIVED: return "derived";
  }
  return "none";
}

}  // namespace hart
