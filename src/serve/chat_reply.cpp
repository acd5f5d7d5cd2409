#include "serve/chat_reply.h"

#include <cctype>
#include <random>

#include "serve/openai_api.h"

namespace hart::serve {

using nlohmann::json;

namespace {

// "call_" and 24 random letters and digits, as OpenAI's ids look; for Mistral's syntax 9 letters
// and digits, as Mistral's templates require of the ids they are given back (llama.cpp does the same).
std::string new_call_id(ToolCallSyntax syntax) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const bool mistral = syntax == ToolCallSyntax::MISTRAL;
  std::string id = mistral ? "" : "call_";
  for (int i = 0; i < (mistral ? 9 : 24); i++) id += kChars[rng() % (sizeof(kChars) - 1)];
  return id;
}

bool extends(const std::string& later, const std::string& earlier) { return later.compare(0, earlier.size(), earlier) == 0; }

}  // namespace

const std::string& ChatReply::id_of(size_t i, const ParsedToolCall& c) {
  while (ids_.size() <= i) ids_.push_back("");
  if (ids_[i].empty()) ids_[i] = c.id.empty() ? new_call_id(syntax_.tools) : c.id;
  return ids_[i];
}

json ChatReply::delta(const std::string& piece, bool done) {
  text_ += piece;
  const ParsedOutput now = parse_chat_output(syntax_, text_, !done);
  json d = json::object();
  // Only what extends what was sent goes out: a stream cannot take text back. (A parse shrinks
  // only when a call that was shown turns out malformed; its fragments stay sent.)
  if (now.reasoning.size() > sent_.reasoning.size() && extends(now.reasoning, sent_.reasoning)) {
    d["reasoning_content"] = now.reasoning.substr(sent_.reasoning.size());
    sent_.reasoning = now.reasoning;
  }
  if (now.content.size() > sent_.content.size() && extends(now.content, sent_.content)) {
    d["content"] = now.content.substr(sent_.content.size());
    sent_.content = now.content;
  }
  json calls = json::array();
  for (size_t i = 0; i < now.calls.size(); i++) {
    const ParsedToolCall& c = now.calls[i];
    if (i >= sent_.calls.size()) {
      calls.push_back({{"index", i}, {"id", id_of(i, c)}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
      sent_.calls.push_back(c);
    } else if (c.name == sent_.calls[i].name && c.arguments.size() > sent_.calls[i].arguments.size() &&
               extends(c.arguments, sent_.calls[i].arguments)) {
      calls.push_back({{"index", i}, {"function", {{"arguments", c.arguments.substr(sent_.calls[i].arguments.size())}}}});
      sent_.calls[i].arguments = c.arguments;
    }
  }
  if (!calls.empty()) d["tool_calls"] = std::move(calls);
  return d;
}

json ChatReply::message(const std::string& text) {
  text_ = text;
  sent_ = parse_chat_output(syntax_, text_, false);
  json m = {{"role", "assistant"}, {"content", sent_.content}};
  if (!sent_.reasoning.empty()) m["reasoning_content"] = sent_.reasoning;
  if (!sent_.calls.empty()) {
    if (sent_.content.empty()) m["content"] = nullptr;  // as OpenAI: a reply that is only calls
    json calls = json::array();
    for (size_t i = 0; i < sent_.calls.size(); i++) {
      const ParsedToolCall& c = sent_.calls[i];
      calls.push_back({{"id", id_of(i, c)}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    }
    m["tool_calls"] = std::move(calls);
  }
  return m;
}

std::string ChatReply::finish_reason(const std::string& engine_reason) const {
  if (sent_.calls.empty()) return engine_reason;
  // A reply cut at max_tokens still says "length", unless it had already ended at its one call.
  const bool at_limit = syntax_.max_calls > 0 && int(sent_.calls.size()) >= syntax_.max_calls;
  return engine_reason == "stop" || at_limit ? "tool_calls" : engine_reason;
}

OutputSyntax reply_syntax(OutputSyntax s, const std::string& prompt, const ToolRequest& tools) {
  if (!tools.parse_calls) s.tools = ToolCallSyntax::NONE, s.derived = nullptr;
  if (s.tools == ToolCallSyntax::DERIVED)
    for (const auto& t : tools.tools) {
      const auto& f = t["function"];
      std::set<std::string>& strings = s.string_args[f["name"].get<std::string>()];
      if (const auto p = f.find("parameters"); p != f.end() && p->is_object() && p->contains("properties") && (*p)["properties"].is_object())
        for (const auto& [key, schema] : (*p)["properties"].items())
          if (schema.is_object() && schema.value("type", nlohmann::ordered_json()) == "string") strings.insert(key);
    }
  if (!tools.parallel) s.max_calls = 1;
  if (!s.think_open.empty()) {
    size_t end = prompt.size();
    while (end > 0 && std::isspace(static_cast<unsigned char>(prompt[end - 1]))) end--;
    s.thinking_open = end >= s.think_open.size() && prompt.compare(end - s.think_open.size(), s.think_open.size(), s.think_open) == 0;
  }
  return s;
}

std::vector<int32_t> marker_tokens(const Tokenizer& tok, const std::vector<std::string>& markers) {
  std::vector<int32_t> ids;
  for (const std::string& m : markers) {
    std::vector<int32_t> t;
    try {
      t = tok.encode(m, false, true);
    } catch (const Error&) {
      continue;  // a vocabulary without the bytes of a marker cannot produce it either
    }
    if (t.size() == 1 && tok.token_to_piece(t[0]).empty() && tok.token_to_piece(t[0], true) == m) ids.push_back(t[0]);
  }
  return ids;
}

}  // namespace hart::serve
