// The machinery the per-family output parsers share (chat_output.cpp, chat_output_calls.cpp):
// a cursor over the generated text that collects reasoning, content and calls, and knows
// whether more text may still come.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "chat/chat_output.h"

namespace hart::chat_output {

struct Found {
  size_t at = std::string_view::npos;  // npos: not there
  bool whole = false;                  // false: only a beginning of the marker ends the text
};

// Whether a literal is at a place in the text: MORE when the text (in a partial parse) ends
// inside it.
enum class Lit { MATCH, MORE, NO };

// What one attempt to read a tool call came to.
enum class CallRead {
  DONE,  // a complete call was added; the cursor is after it
  OPEN,  // the text ends inside the call (partial parse only); the call is added if its name is known
  BAD,   // not a well-formed call: its text is content
};

class Cursor {
 public:
  Cursor(const OutputSyntax& syntax, std::string_view text, bool partial) : syntax(syntax), text(text), partial(partial) {}

  const OutputSyntax& syntax;
  const std::string_view text;
  const bool partial;
  size_t pos = 0;
  bool stopped = false;  // nothing after pos may be released yet (or ever: max_calls reached)
  ParsedOutput out;

  size_t size() const { return text.size(); }
  size_t skip_ws(size_t i) const;
  bool starts(size_t i, std::string_view s) const { return text.substr(i, s.size()) == s; }
  // True when the text from i on is a proper beginning of s (more text may complete it).
  bool could_become(size_t i, std::string_view s) const;
  // The first `marker` at or after `from`; in a partial parse also a beginning of one at the end.
  Found find(size_t from, std::string_view marker) const;
  void content_to(size_t end);
  void reasoning(std::string_view r);
  // Holds back everything from pos on (more text is needed to decide it).
  void stop() { stopped = true; }
  bool room_for_call() const { return syntax.max_calls < 0 || int(out.calls.size()) < syntax.max_calls; }
  // Adds a call; when it reaches max_calls, the rest of the reply is dropped (generation ends there).
  void add_call(ParsedToolCall c);
};

// The literal at i, where a run of whitespace in it matches any run (or none) in the text;
// MATCH moves i past it.
Lit match_loose(const Cursor& c, size_t& i, std::string_view lit);

// Reads a call written as a JSON object at `at`: {"name": N, "<args key>": {...}} (with an
// optional "type": "function" before the name). `args_keys`: the accepted keys of the arguments.
// DONE leaves the cursor after the object.
CallRead read_json_call(Cursor& c, size_t at, std::initializer_list<std::string_view> args_keys);

// Reads JSON arguments at `at` of a call whose name is known. DONE leaves the cursor after them.
CallRead read_json_arguments(Cursor& c, size_t at, ParsedToolCall call);

// The call in a parsed object, or false when it has no string name or its arguments are neither
// an object nor a string.
bool call_from_json(const nlohmann::ordered_json& j, std::initializer_list<std::string_view> args_keys, ParsedToolCall& out);

// Reads `<marker>`-introduced calls until the reply ends: content between them, each call by
// `read(at)` where `at` is just after the marker. `close`: the call's closing tag ("" for none).
template <class Read>
void marked_calls(Cursor& c, std::string_view marker, std::string_view close, Read read) {
  while (!c.stopped) {
    const Found m = c.find(c.pos, marker);
    if (m.at == std::string_view::npos) return c.content_to(c.size());
    c.content_to(m.at);
    if (!m.whole) return c.stop();
    const size_t start = c.pos;
    const CallRead r = read(m.at + marker.size());
    if (r == CallRead::OPEN) return c.stop();
    if (r == CallRead::BAD) {
      const Found end = close.empty() ? Found{} : c.find(m.at, close);
      if (end.at == std::string_view::npos || !end.whole) {
        if (c.partial) return c.stop();  // the final parse makes it content
        return c.content_to(c.size());
      }
      c.pos = start;
      c.content_to(end.at + close.size());  // a call that is not well-formed is content
      continue;
    }
    if (c.stopped) return;
    // After a call: its closing tag, then whitespace.
    size_t i = c.skip_ws(c.pos);
    if (!close.empty() && c.starts(i, close)) i += close.size();
    else if (!close.empty() && c.could_become(i, close)) return c.stop();
    c.pos = c.skip_ws(i);
    if (c.partial && c.pos == c.size()) return;
  }
}

// <think>...</think> at the start of the reply (or the rest of an open block).
void read_reasoning(Cursor& c);

void parse_hermes(Cursor& c);
void parse_llama3(Cursor& c);
void parse_mistral(Cursor& c);
void parse_gpt_oss(Cursor& c);
void parse_gemma4(Cursor& c);
void parse_generic(Cursor& c);
void parse_derived(Cursor& c);

}  // namespace hart::chat_output
