// The tool-call syntax of each family (facts from llama.cpp's common/chat-parser.cpp).
#include <cctype>

#include "chat/chat_output_parser.h"
#include "chat/json_scan.h"

namespace hart::chat_output {

using json = nlohmann::ordered_json;
constexpr size_t npos = std::string_view::npos;

namespace {

bool is_name_char(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.'; }

// <|python_tag|>name.call(key=value, ...): Llama 3.1's built-in tools.
CallRead read_builtin_call(Cursor& c, size_t at) {
  size_t i = c.skip_ws(at);
  const size_t name_at = i;
  while (i < c.size() && is_name_char(c.text[i]) && c.text[i] != '.') i++;
  const std::string name(c.text.substr(name_at, i - name_at));
  auto more_or_bad = [&] { return c.partial && i >= c.size() ? CallRead::OPEN : CallRead::BAD; };
  if (name.empty()) return more_or_bad();
  i = c.skip_ws(i);
  for (std::string_view lit : {".", "call", "("}) {
    i = c.skip_ws(i);
    if (c.could_become(i, lit) || i == c.size()) return more_or_bad();
    if (!c.starts(i, lit)) return CallRead::BAD;
    i += lit.size();
  }
  json args = json::object();
  for (bool first = true;; first = false) {
    i = c.skip_ws(i);
    if (i == c.size()) return more_or_bad();
    if (c.text[i] == ')') break;
    if (!first) {
      if (c.text[i] != ',') return CallRead::BAD;
      i = c.skip_ws(i + 1);
    }
    const size_t key_at = i;
    while (i < c.size() && is_name_char(c.text[i]) && c.text[i] != '.' && c.text[i] != '-') i++;
    const std::string key(c.text.substr(key_at, i - key_at));
    i = c.skip_ws(i);
    if (i == c.size()) return more_or_bad();
    if (key.empty() || c.text[i] != '=') return CallRead::BAD;
    i = c.skip_ws(i + 1);
    const JsonScan v = scan_json_value(c.text.substr(i));
    if (v.state == JsonScan::PARTIAL) return more_or_bad();
    const json value = json::parse(c.text.substr(i, v.end), nullptr, false);
    if (v.state == JsonScan::INVALID || value.is_discarded()) return CallRead::BAD;
    args[key] = value;
    i += v.end;
  }
  c.pos = i + 1;
  c.add_call({"", name, args.dump()});
  return CallRead::DONE;
}

}  // namespace

void parse_hermes(Cursor& c) {
  marked_calls(c, "<tool_call>", "</tool_call>", [&](size_t at) { return read_json_call(c, c.skip_ws(at), {"arguments"}); });
}

void parse_llama3(Cursor& c) {
  // A reply that is a JSON call: {"name": N, "parameters": {...}}; text after it is content.
  const size_t at = c.skip_ws(c.pos);
  if (at < c.size() && c.text[at] == '{') {
    const CallRead r = read_json_call(c, at, {"parameters", "arguments"});
    if (r == CallRead::OPEN) return c.stop();
    if (r == CallRead::DONE) c.pos = c.skip_ws(c.pos);
  } else if (at == c.size() && c.partial) {
    return c.stop();  // only whitespace so far: a call may follow
  }
  marked_calls(c, "<|python_tag|>", "", [&](size_t after) {
    const size_t i = c.skip_ws(after);
    if (i < c.size() && c.text[i] == '{') return read_json_call(c, i, {"parameters", "arguments"});
    return read_builtin_call(c, i);
  });
}

void parse_mistral(Cursor& c) {
  marked_calls(c, "[TOOL_CALLS]", "", [&](size_t after) {
    const size_t i = c.skip_ws(after);
    if (i == c.size()) return c.partial ? CallRead::OPEN : CallRead::BAD;
    if (c.text[i] == '[') {  // [{"name": N, "arguments": {...}, "id": ID}, ...], shown once complete
      const JsonScan a = scan_json_value(c.text.substr(i));
      if (a.state == JsonScan::PARTIAL) return c.partial ? CallRead::OPEN : CallRead::BAD;
      const json arr = json::parse(c.text.substr(i, a.end), nullptr, false);
      if (a.state == JsonScan::INVALID || !arr.is_array() || arr.empty()) return CallRead::BAD;
      std::vector<ParsedToolCall> calls(arr.size());
      for (size_t k = 0; k < arr.size(); k++)
        if (!call_from_json(arr[k], {"arguments"}, calls[k])) return CallRead::BAD;
      c.pos = i + a.end;
      for (ParsedToolCall& call : calls)
        if (!c.stopped) c.add_call(std::move(call));
      return CallRead::DONE;
    }
    // NAME[ARGS]{...} (Magistral, Devstral), possibly NAME[CALL_ID]ID[ARGS]{...}.
    size_t k = i;
    while (k < c.size() && is_name_char(c.text[k])) k++;
    ParsedToolCall call{"", std::string(c.text.substr(i, k - i)), ""};
    if (c.starts(k, "[CALL_ID]")) {
      const size_t id_at = k + 9;
      k = id_at;
      while (k < c.size() && std::isalnum(static_cast<unsigned char>(c.text[k]))) k++;
      call.id = std::string(c.text.substr(id_at, k - id_at));
    }
    if (k == c.size() || c.could_become(k, "[ARGS]") || c.could_become(k, "[CALL_ID]"))
      return c.partial ? CallRead::OPEN : CallRead::BAD;
    if (call.name.empty() || !c.starts(k, "[ARGS]")) return CallRead::BAD;
    return read_json_arguments(c, k + 6, std::move(call));
  });
}

void parse_gpt_oss(Cursor& c) {
  // Messages: [<|start|>assistant]<|channel|>CHANNEL[ to=functions.N][ <|constrain|>json]<|message|>BODY<|end|>
  // (a call's body ends the reply: <|call|> is an end-of-generation token).
  while (!c.stopped && c.pos < c.size()) {
    if (c.could_become(c.pos, "<|start|>")) return c.stop();
    const Found msg = c.find(c.pos, "<|message|>");
    if (msg.at == npos || !msg.whole) return c.partial ? c.stop() : c.content_to(c.size());
    const std::string_view header = c.text.substr(c.pos, msg.at - c.pos);
    const size_t body = msg.at + 11;
    if (const size_t to = header.find("to=functions."); to != npos) {
      size_t e = to + 13;
      while (e < header.size() && !std::isspace(static_cast<unsigned char>(header[e])) && header[e] != '<') e++;
      const std::string name(header.substr(to + 13, e - to - 13));
      const CallRead r = name.empty() ? CallRead::BAD : read_json_arguments(c, body, {"", name, ""});
      if (r == CallRead::OPEN) return c.stop();
      if (r == CallRead::BAD) return c.partial ? c.stop() : c.content_to(c.size());
      const Found end = c.find(c.pos, "<|end|>");
      if (end.at != npos && end.whole && c.skip_ws(c.pos) == end.at) c.pos = end.at + 7;
      continue;
    }
    const Found end = c.find(body, "<|end|>");
    const size_t body_end = end.at == npos ? c.size() : end.at;
    const std::string_view text = c.text.substr(body, body_end - body);
    if (header.find("<|channel|>analysis") != npos) c.reasoning(text);
    else c.out.content += text;  // final, commentary (a preamble) or a channel we do not know
    if (end.at == npos) {
      c.pos = c.size();
      return;
    }
    if (!end.whole) {
      c.pos = end.at;
      return c.stop();
    }
    c.pos = end.at + 7;
  }
}

}  // namespace hart::chat_output
