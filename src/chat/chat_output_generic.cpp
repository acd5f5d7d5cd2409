// The generic format's reply (chat_tools_generic.h): one JSON object, {"tool_calls": [call, ...]},
// {"tool_call": call} or {"response": text}. A response streams as its string grows; a call shows
// once its name is known, its arguments as they are written. The model's "id" is part of the
// syntax it was shown, not an id the server hands out (a stream must name a call before the
// model has written it), so calls get the server's ids.
#include "chat/chat_output_parser.h"
#include "chat/json_scan.h"

namespace hart::chat_output {

using json = nlohmann::ordered_json;

namespace {

// The literal s at i, after whitespace.
Lit after_ws(const Cursor& c, size_t& i, std::string_view s) {
  i = c.skip_ws(i);
  return match_loose(c, i, s);
}

// The decoded text of a JSON string whose body starts at `at`, as far as it is written; `done`
// when its closing quote is there (then `end` is after it).
bool string_prefix(const Cursor& c, size_t at, std::string& out, bool& done, size_t& end) {
  size_t i = at, safe = at;
  done = false;
  while (i < c.size()) {
    const char ch = c.text[i];
    if (ch == '"') {
      done = true;
      safe = i;
      break;
    }
    if (ch != '\\') {
      safe = ++i;
      continue;
    }
    // An escape is decoded whole or not yet: \uXXXX (and a surrogate pair's second half).
    size_t len = i + 1 < c.size() && c.text[i + 1] == 'u' ? 6 : 2;
    const auto high_surrogate = [&] {
      return i + 3 < c.size() && (c.text[i + 2] == 'd' || c.text[i + 2] == 'D') &&
             std::string_view("89abAB").find(c.text[i + 3]) != std::string_view::npos;
    };
    if (len == 6 && high_surrogate()) len = 12;
    if (i + len > c.size()) break;
    safe = i += len;
  }
  const json s = json::parse("\"" + std::string(c.text.substr(at, safe - at)) + "\"", nullptr, false);
  if (s.is_discarded()) return false;
  out = s.get<std::string>();
  end = done ? safe + 1 : safe;
  return true;
}

// {"response": ...}: a string streams; another JSON value (a response schema) shows once whole.
void read_response(Cursor& c, size_t at) {
  at = c.skip_ws(at);
  if (at == c.size()) return c.stop();
  if (c.text[at] != '"') {
    const JsonScan v = scan_json_value(c.text.substr(at));
    if (v.state == JsonScan::PARTIAL && c.partial) return c.stop();
    const json j = v.state == JsonScan::COMPLETE ? json::parse(c.text.substr(at, v.end), nullptr, false) : json();
    if (v.state != JsonScan::COMPLETE || j.is_discarded()) return c.partial ? c.stop() : c.content_to(c.size());
    c.out.content = j.dump(2);
    c.pos = c.size();
    return;
  }
  std::string text;
  bool done = false;
  size_t end = 0;
  if (!string_prefix(c, at + 1, text, done, end)) return c.partial ? c.stop() : c.content_to(c.size());
  if (!done && !c.partial) return c.content_to(c.size());  // cut off: the reply as the model wrote it
  c.out.content = std::move(text);
  c.pos = c.size();
  if (!done) c.stop();
}

// Calls of a {"tool_calls": [...]} list from `at` (after its '['), or one call when !list.
void read_calls(Cursor& c, size_t at, bool list) {
  const size_t start = c.pos;
  for (size_t i = at;;) {
    const CallRead r = read_json_call(c, c.skip_ws(i), {"arguments"});
    if (r == CallRead::OPEN) return c.stop();
    if (r == CallRead::BAD) {
      c.out.calls.clear();
      c.pos = start;
      return c.partial ? c.stop() : c.content_to(c.size());
    }
    if (c.stopped) return;  // max_calls reached
    i = c.pos;
    if (list && after_ws(c, i, ",") == Lit::MATCH) continue;
    if (list) {
      const Lit close = after_ws(c, i, "]");
      if (close == Lit::MORE) return c.stop();
      if (close == Lit::NO) return c.partial ? c.stop() : c.content_to(c.size());
    }
    c.pos = c.size();  // the object's closing brace and anything after it are not content
    return;
  }
}

}  // namespace

void parse_generic(Cursor& c) {
  size_t i = c.pos;
  const auto fail = [&](Lit l) {
    if (l == Lit::MORE || c.partial) return c.stop();
    c.content_to(c.size());  // not the generic JSON: the reply as it is
  };
  if (const Lit l = after_ws(c, i, "{"); l != Lit::MATCH) return fail(l);
  for (const auto& [key, kind] : {std::pair{"\"tool_calls\"", 0}, std::pair{"\"tool_call\"", 1}, std::pair{"\"response\"", 2}}) {
    size_t k = i;
    const Lit l = after_ws(c, k, key);
    if (l == Lit::MORE) return c.stop();
    if (l == Lit::NO) continue;
    if (const Lit colon = after_ws(c, k, ":"); colon != Lit::MATCH) return fail(colon);
    if (kind == 2) return read_response(c, k);
    if (kind == 0) {
      if (const Lit open = after_ws(c, k, "["); open != Lit::MATCH) return fail(open);
    }
    read_calls(c, k, kind == 0);
    for (ParsedToolCall& call : c.out.calls) call.id.clear();
    return;
  }
  fail(Lit::NO);
}

}  // namespace hart::chat_output
