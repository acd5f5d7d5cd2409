// Gemma 4's tool calls: <|tool_call>call:NAME{key:value,...}<tool_call|>, in the notation its
// template prints arguments with (format_argument): strings between <|"|> marks, bare keys,
// numbers and true/false as they are, {...} and [...] nested. Turned into JSON arguments; a call
// shows once complete.
#include <cctype>

#include "chat/chat_output_parser.h"
#include "chat/json_scan.h"

namespace hart::chat_output {

using json = nlohmann::ordered_json;

namespace {

constexpr std::string_view kQuote = "<|\"|>";

// Reads one value at i into out; the result says whether the text holds all of it.
class Gemma4Value {
 public:
  explicit Gemma4Value(const Cursor& c) : c_(c) {}

  JsonScan::State read(size_t& i, json& out, int depth = 0) {
    if (depth > 64) return JsonScan::INVALID;
    if (i >= c_.size()) return JsonScan::PARTIAL;
    if (c_.starts(i, kQuote) || c_.could_become(i, kQuote)) return quoted(i, out);
    const char ch = c_.text[i];
    if (ch == '{' || ch == '[') return container(i, out, depth);
    // A bare value: a number or a literal, up to the next delimiter.
    const size_t from = i;
    while (i < c_.size() && c_.text[i] != ',' && c_.text[i] != '}' && c_.text[i] != ']') i++;
    if (i == c_.size()) return JsonScan::PARTIAL;
    const std::string_view bare = c_.text.substr(from, i - from);
    if (bare == "None") return out = nullptr, JsonScan::COMPLETE;
    out = json::parse(bare, nullptr, false);
    return out.is_discarded() || out.is_object() || out.is_array() || out.is_string() ? JsonScan::INVALID : JsonScan::COMPLETE;
  }

  // A key: <|"|>-quoted or bare up to ':'.
  JsonScan::State key(size_t& i, std::string& out) {
    if (c_.starts(i, kQuote) || c_.could_become(i, kQuote)) {
      json s;
      const JsonScan::State r = quoted(i, s);
      if (r == JsonScan::COMPLETE) out = s.get<std::string>();
      return r;
    }
    const size_t from = i;
    while (i < c_.size() && (std::isalnum(static_cast<unsigned char>(c_.text[i])) || c_.text[i] == '_' || c_.text[i] == '-')) i++;
    if (i == c_.size()) return JsonScan::PARTIAL;
    if (i == from) return JsonScan::INVALID;
    out = std::string(c_.text.substr(from, i - from));
    return JsonScan::COMPLETE;
  }

 private:
  JsonScan::State quoted(size_t& i, json& out) {
    if (!c_.starts(i, kQuote)) return JsonScan::PARTIAL;
    const size_t end = c_.text.find(kQuote, i + kQuote.size());
    if (end == std::string_view::npos) return JsonScan::PARTIAL;
    out = std::string(c_.text.substr(i + kQuote.size(), end - i - kQuote.size()));
    i = end + kQuote.size();
    return JsonScan::COMPLETE;
  }

  JsonScan::State container(size_t& i, json& out, int depth) {
    const bool object = c_.text[i] == '{';
    const char close = object ? '}' : ']';
    out = object ? json::object() : json::array();
    i++;
    for (bool first = true;; first = false) {
      if (i >= c_.size()) return JsonScan::PARTIAL;
      if (c_.text[i] == close) return i++, JsonScan::COMPLETE;
      if (!first) {
        if (c_.text[i] != ',') return JsonScan::INVALID;
        if (++i >= c_.size()) return JsonScan::PARTIAL;
      }
      std::string k;
      if (object) {
        if (const JsonScan::State r = key(i, k); r != JsonScan::COMPLETE) return r;
        if (i >= c_.size()) return JsonScan::PARTIAL;
        if (c_.text[i++] != ':') return JsonScan::INVALID;
      }
      json v;
      if (const JsonScan::State r = read(i, v, depth + 1); r != JsonScan::COMPLETE) return r;
      if (object) out[k] = std::move(v);
      else out.push_back(std::move(v));
    }
  }

  const Cursor& c_;
};

CallRead read_gemma4_call(Cursor& c, size_t at) {
  auto more = [&] { return c.partial ? CallRead::OPEN : CallRead::BAD; };
  if (c.could_become(at, "call:") || at >= c.size()) return more();
  if (!c.starts(at, "call:")) return CallRead::BAD;
  size_t i = at + 5;
  const size_t name_at = i;
  while (i < c.size() && c.text[i] != '{') i++;
  if (i == c.size()) return more();
  const std::string name(c.text.substr(name_at, i - name_at));
  if (name.empty()) return CallRead::BAD;
  json args;
  const JsonScan::State r = Gemma4Value(c).read(i, args);
  if (r == JsonScan::PARTIAL) return more();
  if (r == JsonScan::INVALID || !args.is_object()) return CallRead::BAD;
  c.pos = i;
  c.add_call({"", name, args.dump()});
  return CallRead::DONE;
}

}  // namespace

void parse_gemma4(Cursor& c) {
  marked_calls(c, "<|tool_call>", "<tool_call|>", [&](size_t at) { return read_gemma4_call(c, at); });
}

}  // namespace hart::chat_output
