#include "chat/chat_tools_derived.h"

#include <algorithm>
#include <cstring>

#include "chat/json_scan.h"

namespace hart {

using json = nlohmann::ordered_json;

namespace {

constexpr const char* kFun1 = "fn_one_7f3a";
constexpr const char* kFun2 = "fn_two_7f3a";
constexpr const char* kArg1 = "arg_one_7f3a";
constexpr const char* kArg2 = "arg_two_7f3a";
constexpr const char* kVal1 = "VAL_ONE_7f3a";
constexpr const char* kVal2 = "VAL_TWO_7f3a";
constexpr const char* kId1 = "call7f3a1";
constexpr const char* kId2 = "call7f3a2";
constexpr const char* kContent = "ASSISTANT_MSG_7f3a";
constexpr size_t npos = std::string::npos;

json probe_functions() {
  const json params{{"type", "object"},
                    {"properties", {{kArg1, {{"type", "string"}}}, {kArg2, {{"type", "string"}}}}},
                    {"required", json::array()}};
  json tools = json::array();
  for (const char* name : {kFun1, kFun2})
    tools.push_back({{"type", "function"}, {"function", {{"name", name}, {"description", "Probe"}, {"parameters", params}}}});
  return tools;
}

json probe_call(const char* name, const char* id) {
  return {{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", json{{kArg1, kVal1}, {kArg2, kVal2}}.dump()}}}};
}

json conversation(json assistant) {
  return json::array({{{"role", "user"}, {"content", "USER_MSG_7f3a"}}, std::move(assistant)});
}

size_t common_prefix(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) n++;
  return n;
}

size_t common_suffix(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[a.size() - 1 - n] == b[b.size() - 1 - n]) n++;
  return n;
}

// Texts are cut between tags, not inside one: two renders that differ in a tag (<|eot_id|> and
// <|eom_id|>) share its first and last characters, which belong to the tag all the same.
// A cut at `at` that falls inside a tag moves back to the tag's '<' ...
size_t cut_before_tag(std::string_view s, size_t at) {
  const size_t open = s.substr(0, at).rfind('<');
  const size_t close = s.substr(0, at).rfind('>');
  return open != std::string_view::npos && (close == std::string_view::npos || close < open) ? open : at;
}
// ... or on past its '>' (for where a shared end begins).
size_t cut_after_tag(std::string_view s, size_t at) {
  const size_t open = s.substr(0, at).rfind('<'), close_before = s.substr(0, at).rfind('>');
  if (open == std::string_view::npos || (close_before != std::string_view::npos && close_before > open)) return at;
  const size_t close = s.find('>', at), next_open = s.find('<', at);
  return close != std::string_view::npos && close < next_open ? close + 1 : at;
}

// What `with` has where `base` has its assistant content: both without their shared start and end.
std::string middle(const std::string& base, const std::string& with) {
  const size_t pre = cut_before_tag(with, common_prefix(base, with));
  const size_t suf_at = cut_after_tag(with, with.size() - std::min(common_suffix(base, with), std::min(base.size(), with.size()) - pre));
  return with.substr(pre, suf_at - pre);
}

// A unit repeated with a separator, seen as `before` unit, `between` (= close + sep + open), and
// unit `after`: open is what `before` and `between` end with, close what `between` and `after`
// start with. Returns {open, sep, close}.
struct Split {
  std::string open, sep, close;
};
Split split_repeat(std::string_view before, std::string_view between, std::string_view after) {
  const size_t close = cut_before_tag(between, common_prefix(between, after));
  const size_t open = between.size() - cut_after_tag(between, between.size() - common_suffix(before, between.substr(close)));
  return {std::string(between.substr(between.size() - open)), std::string(between.substr(close, between.size() - open - close)),
          std::string(between.substr(0, close))};
}

struct Slot {
  DerivedToolSyntax::Piece::Kind kind;
  size_t at, end;
};

std::string trim(std::string s) {
  while (!s.empty() && is_json_space(s.front())) s.erase(s.begin());
  while (!s.empty() && is_json_space(s.back())) s.pop_back();
  return s;
}

// The JSON object holding the probe's arguments, which the key kArg1 sits in.
bool find_json_args(const std::string& t, size_t from, size_t& at, size_t& end) {
  const size_t key = t.find(std::string("\"") + kArg1 + "\"", from);
  if (key == npos) return false;
  size_t i = key;
  while (i > 0 && is_json_space(t[i - 1])) i--;
  if (i == 0 || t[i - 1] != '{') return false;
  at = i - 1;
  const JsonScan s = scan_json_value(std::string_view(t).substr(at));
  if (s.state != JsonScan::COMPLETE) return false;
  const json j = json::parse(t.substr(at, s.end), nullptr, false);
  if (j != json{{kArg1, kVal1}, {kArg2, kVal2}}) return false;
  end = at + s.end;
  return true;
}

// Tagged arguments after `from`: the pair layout, and the span from the first pair's opening to
// the last one's close.
bool find_tagged_args(const std::string& t, size_t from, size_t limit, DerivedToolSyntax& d, size_t& at, size_t& end) {
  const size_t k1 = t.find(kArg1, from), v1 = t.find(kVal1, from), k2 = t.find(kArg2, from), v2 = t.find(kVal2, from);
  if (k1 == npos || v1 == npos || k2 == npos || v2 == npos || !(k1 < v1 && v1 < k2 && k2 < v2) || v2 >= limit) return false;
  const std::string mid1 = t.substr(k1 + std::strlen(kArg1), v1 - k1 - std::strlen(kArg1));
  const std::string mid2 = t.substr(k2 + std::strlen(kArg2), v2 - k2 - std::strlen(kArg2));
  if (mid1 != mid2 || mid1.empty()) return false;
  const size_t v2_end = v2 + std::strlen(kVal2);
  const Split s = split_repeat(std::string_view(t).substr(from, k1 - from), std::string_view(t).substr(v1 + std::strlen(kVal1), k2 - v1 - std::strlen(kVal1)),
                               std::string_view(t).substr(v2_end, limit - v2_end));
  if (s.close.empty() || trim(s.open).empty()) return false;  // nothing would end a value, or mark a pair
  d.tagged = true;
  d.arg_open = s.open, d.arg_mid = mid1, d.arg_close = s.close, d.arg_sep = s.sep;
  at = k1 - s.open.size();
  end = v2_end + s.close.size();
  return true;
}

// The slots of the call in t (name, arguments, id), in order of position.
bool find_slots(const std::string& t, const char* name, const char* id, DerivedToolSyntax& d, std::vector<Slot>& slots) {
  using K = DerivedToolSyntax::Piece::Kind;
  const size_t n = t.find(name);
  if (n == npos) return false;
  slots = {{K::NAME, n, n + std::strlen(name)}};
  if (const size_t i = t.find(id); i != npos) slots.push_back({K::ID, i, i + std::strlen(id)});
  std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) { return a.at < b.at; });
  size_t at = 0, end = 0;
  const size_t name_end = n + std::strlen(name);
  if (find_json_args(t, name_end, at, end)) {
    d.tagged = false;
  } else {
    size_t limit = t.size();
    for (const Slot& s : slots)
      if (s.at > name_end) limit = std::min(limit, s.at);
    if (!find_tagged_args(t, name_end, limit, d, at, end)) return false;
  }
  slots.push_back({K::ARGS, at, end});
  std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) { return a.at < b.at; });
  for (size_t i = 1; i < slots.size(); i++)
    if (slots[i].at < slots[i - 1].end) return false;
  return true;
}

}  // namespace

std::string DerivedToolSyntax::trigger() const {
  if (!trim(section_open).empty()) return trim(section_open);
  return call.empty() || call[0].kind != Piece::TEXT ? "" : trim(call[0].text);
}

std::vector<std::string> DerivedToolSyntax::markers() const {
  std::vector<std::string> m;
  const auto add = [&](const std::string& s) {
    if (const std::string t = trim(s); !t.empty() && std::find(m.begin(), m.end(), t) == m.end()) m.push_back(t);
  };
  add(section_open), add(section_close), add(call_sep), add(arg_open), add(arg_mid), add(arg_close), add(arg_sep);
  for (const Piece& p : call)
    if (p.kind == Piece::TEXT) add(p.text);
  return m;
}

std::optional<DerivedToolSyntax> derive_tool_syntax(const RenderWithTools& render) {
  const json tools = probe_functions();
  std::string base, one, two;
  try {
    base = render(conversation({{"role", "assistant"}, {"content", kContent}}), tools);
    one = render(conversation({{"role", "assistant"}, {"content", ""}, {"tool_calls", json::array({probe_call(kFun1, kId1)})}}), tools);
    two = render(conversation({{"role", "assistant"}, {"content", ""}, {"tool_calls", json::array({probe_call(kFun1, kId1), probe_call(kFun2, kId2)})}}),
                 tools);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string t1 = middle(base, one), t2 = middle(base, two);
  DerivedToolSyntax d;
  std::vector<Slot> slots;
  if (!find_slots(t1, kFun1, kId1, d, slots)) return std::nullopt;
  const size_t first = slots.front().at, last = slots.back().end;
  std::vector<DerivedToolSyntax::Piece> inner;
  for (size_t i = 0; i < slots.size(); i++) {
    if (i) inner.push_back({DerivedToolSyntax::Piece::TEXT, t1.substr(slots[i - 1].end, slots[i].at - slots[i - 1].end)});
    inner.push_back({slots[i].kind, ""});
  }
  const std::string before = t1.substr(0, first), after = t1.substr(last);
  // The second call: the same text as the first with its own name and id, after the first.
  std::string second = t1.substr(first);
  for (const auto& [from, to] : {std::pair{kFun1, kFun2}, std::pair{kId1, kId2}})
    if (const size_t p = second.find(from); p != npos) second.replace(p, std::strlen(from), to);
  const size_t second_at = t2.size() >= second.size() ? t2.size() - second.size() : npos;
  Split calls{before, "", after};
  if (second_at != npos && second_at >= last && t2.compare(0, last, t1, 0, last) == 0 &&
      t2.compare(second_at, npos, second) == 0) {
    calls = split_repeat(before, std::string_view(t2).substr(last, second_at - last), after);
    d.parallel = true;
    d.call_sep = calls.sep;
    d.section_open = before.substr(0, before.size() - calls.open.size());
    d.section_close = after.substr(calls.close.size());
  }
  // A name and an id are read as identifiers: only a text between them tells where one ends.
  for (size_t i = 1; i + 1 < inner.size(); i++)
    if (inner[i].kind == DerivedToolSyntax::Piece::TEXT && inner[i].text.empty() && inner[i - 1].kind != DerivedToolSyntax::Piece::ARGS &&
        inner[i + 1].kind != DerivedToolSyntax::Piece::ARGS)
      return std::nullopt;
  if (!calls.open.empty()) d.call.push_back({DerivedToolSyntax::Piece::TEXT, calls.open});
  d.call.insert(d.call.end(), inner.begin(), inner.end());
  if (!calls.close.empty()) d.call.push_back({DerivedToolSyntax::Piece::TEXT, calls.close});
  // Leading whitespace is how the template separates the calls from content, not the model's.
  const size_t lead = d.section_open.find_first_not_of(" \t\r\n");
  d.section_open.erase(0, lead == npos ? d.section_open.size() : lead);
  if (d.section_open.empty() && !d.call.empty() && d.call[0].kind == DerivedToolSyntax::Piece::TEXT) {
    const size_t l = d.call[0].text.find_first_not_of(" \t\r\n");
    d.call[0].text.erase(0, l == npos ? d.call[0].text.size() : l);
  }
  if (d.trigger().empty()) return std::nullopt;
  return d;
}

}  // namespace hart
