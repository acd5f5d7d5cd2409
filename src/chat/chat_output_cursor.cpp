// The cursor and the JSON call readers the family parsers share.
#include <algorithm>

#include "chat/chat_output_parser.h"
#include "chat/json_scan.h"

namespace hart::chat_output {

using json = nlohmann::ordered_json;

namespace {

std::string_view rtrim(std::string_view s) {
  while (!s.empty() && is_json_space(s.back())) s.remove_suffix(1);
  return s;
}

// The literal header of a call object, {"name": "N", "<key>": , matched as far as the text goes.
// The name is a plain string (no escapes: tool names are identifiers).
struct Header {
  enum { MATCH, MORE, NO } state = NO;
  std::string name;
  size_t args_at = 0;
  bool object_args = false;  // the arguments are an object (else a string holding the JSON)
};

Header match_header(const Cursor& c, size_t at, std::initializer_list<std::string_view> args_keys) {
  Header h;
  size_t i = at;
  // Each step: MATCH when the text has it, MORE when the text ends inside it, NO otherwise.
  auto lit = [&](std::string_view s) {
    i = c.skip_ws(i);
    if (c.starts(i, s)) {
      i += s.size();
      return Header::MATCH;
    }
    return c.could_become(i, s) || i == c.size() ? Header::MORE : Header::NO;
  };
  auto step = [&](auto result) {
    if (result != Header::MATCH) h.state = result;
    return result == Header::MATCH;
  };
  if (!step(lit("{"))) return h;
  const size_t before_type = i;
  const auto type = lit("\"type\"");
  if (type == Header::MATCH) {
    if (!step(lit(":")) || !step(lit("\"function\"")) || !step(lit(","))) return h;
  } else {
    i = before_type;
    if (type == Header::MORE && lit("\"name\"") != Header::MATCH) return h.state = Header::MORE, h;
    i = before_type;
  }
  if (!step(lit("\"name\"")) || !step(lit(":")) || !step(lit("\""))) return h;
  const size_t name_at = i;
  while (i < c.size() && c.text[i] != '"' && c.text[i] != '\\') i++;
  if (i == c.size()) return h.state = Header::MORE, h;
  if (c.text[i] == '\\' || i == name_at) return h.state = Header::NO, h;
  h.name = std::string(c.text.substr(name_at, i - name_at));
  i++;
  if (!step(lit(","))) return h;
  const size_t before_key = i;
  for (std::string_view key : args_keys) {
    i = before_key;
    const auto r = lit("\"" + std::string(key) + "\"");
    if (r == Header::MATCH) {
      if (!step(lit(":"))) return h;
      h.args_at = c.skip_ws(i);
      if (h.args_at == c.size()) return h.state = Header::MORE, h;
      h.object_args = c.text[h.args_at] == '{';
      h.state = h.object_args || c.text[h.args_at] == '"' ? Header::MATCH : Header::NO;
      return h;
    }
    if (r == Header::MORE) return h.state = Header::MORE, h;
  }
  return h.state = Header::NO, h;
}

}  // namespace

size_t Cursor::skip_ws(size_t i) const {
  while (i < text.size() && is_json_space(text[i])) i++;
  return i;
}

bool Cursor::could_become(size_t i, std::string_view s) const {
  return partial && i < text.size() && text.size() - i < s.size() && s.substr(0, text.size() - i) == text.substr(i);
}

Found Cursor::find(size_t from, std::string_view marker) const {
  const size_t at = text.find(marker, from);
  if (at != std::string_view::npos) return {at, true};
  if (!partial) return {};
  for (size_t len = std::min(marker.size() - 1, text.size() - std::min(from, text.size())); len > 0; len--)
    if (text.substr(text.size() - len) == marker.substr(0, len)) return {text.size() - len, false};
  return {};
}

Lit match_loose(const Cursor& c, size_t& i, std::string_view lit) {
  size_t j = i, k = 0;
  while (k < lit.size()) {
    if (is_json_space(lit[k])) {
      while (k < lit.size() && is_json_space(lit[k])) k++;
      j = c.skip_ws(j);
      continue;
    }
    if (j == c.size()) return c.partial ? Lit::MORE : Lit::NO;
    if (c.text[j] != lit[k]) return Lit::NO;
    j++, k++;
  }
  i = j;
  return Lit::MATCH;
}

void Cursor::content_to(size_t end) {
  if (end > pos) out.content += text.substr(pos, end - pos);
  pos = std::max(pos, end);
}

void Cursor::reasoning(std::string_view r) {
  while (!r.empty() && is_json_space(r.front())) r.remove_prefix(1);
  out.reasoning += rtrim(r);
}

void Cursor::add_call(ParsedToolCall call) {
  out.calls.push_back(std::move(call));
  if (!room_for_call()) {
    pos = text.size();
    stopped = true;
  }
}

bool call_from_json(const json& j, std::initializer_list<std::string_view> args_keys, ParsedToolCall& out) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string() || j["name"].get<std::string>().empty()) return false;
  out.name = j["name"].get<std::string>();
  out.arguments = "{}";
  for (std::string_view key : args_keys) {
    const auto it = j.find(std::string(key));
    if (it == j.end()) continue;
    if (it->is_object()) out.arguments = it->dump();
    else if (it->is_string()) out.arguments = it->get<std::string>();
    else return false;
    break;
  }
  if (const auto id = j.find("id"); id != j.end() && id->is_string()) out.id = id->get<std::string>();
  return true;
}

CallRead read_json_arguments(Cursor& c, size_t at, ParsedToolCall call) {
  at = c.skip_ws(at);
  const JsonScan a = scan_json_value(c.text.substr(at));
  if (a.state == JsonScan::INVALID || (a.state == JsonScan::PARTIAL && !c.partial)) return CallRead::BAD;
  if (a.state == JsonScan::PARTIAL) {
    call.arguments = std::string(rtrim(c.text.substr(at)));
    c.out.calls.push_back(std::move(call));
    return CallRead::OPEN;
  }
  const std::string_view raw = c.text.substr(at, a.end);
  if (!json::accept(raw)) return CallRead::BAD;
  call.arguments = std::string(raw);
  c.pos = at + a.end;
  c.add_call(std::move(call));
  return CallRead::DONE;
}

CallRead read_json_call(Cursor& c, size_t at, std::initializer_list<std::string_view> args_keys) {
  // As llama.cpp, a call's object starts with its name: anything else is not a call.
  const Header h = match_header(c, at, args_keys);
  if (h.state == Header::NO) return CallRead::BAD;
  if (h.state == Header::MORE) return c.partial ? CallRead::OPEN : CallRead::BAD;
  const JsonScan whole = scan_json_value(c.text.substr(at));
  if (whole.state == JsonScan::INVALID || (whole.state == JsonScan::PARTIAL && !c.partial)) return CallRead::BAD;
  ParsedToolCall call{"", h.name, ""};
  if (h.object_args) {
    // The arguments' own text, streamed as it grows; the object must still close after them.
    const JsonScan a = scan_json_value(c.text.substr(h.args_at));
    if (a.state == JsonScan::INVALID) return CallRead::BAD;
    call.arguments = std::string(rtrim(c.text.substr(h.args_at, a.state == JsonScan::COMPLETE ? a.end : std::string_view::npos)));
  }
  if (whole.state == JsonScan::PARTIAL) {
    if (h.object_args) c.out.calls.push_back(std::move(call));  // string arguments show once complete
    return CallRead::OPEN;
  }
  const json j = json::parse(c.text.substr(at, whole.end), nullptr, false);
  ParsedToolCall parsed;
  if (j.is_discarded() || !call_from_json(j, args_keys, parsed)) return CallRead::BAD;
  if (!h.object_args) call.arguments = parsed.arguments;
  c.pos = at + whole.end;
  c.add_call(std::move(call));
  return CallRead::DONE;
}

}  // namespace hart::chat_output
