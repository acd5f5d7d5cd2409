// Calls in a syntax derived from the template (chat_tools_derived.h): the section's texts are
// matched with any run of whitespace where the template has one (a model is loose about it),
// names and ids read as identifiers, JSON arguments as written, tagged arguments turned into a
// JSON object (a value stays text when its parameter is a string, else it is read as JSON when
// it is JSON). A call shows once its name is known; tagged arguments grow a pair at a time.
#include <cctype>

#include "chat/chat_output_parser.h"
#include "chat/json_scan.h"

namespace hart::chat_output {

using json = nlohmann::ordered_json;
using Piece = DerivedToolSyntax::Piece;

namespace {

bool is_ident(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-'; }

// An identifier at i; MORE when the text ends in it.
Lit read_ident(const Cursor& c, size_t& i, std::string& out) {
  size_t j = i;
  while (j < c.size() && is_ident(c.text[j])) j++;
  if (j == c.size()) return c.partial ? Lit::MORE : (j > i ? (out = c.text.substr(i, j - i), i = j, Lit::MATCH) : Lit::NO);
  if (j == i) return Lit::NO;
  out = std::string(c.text.substr(i, j - i));
  i = j;
  return Lit::MATCH;
}

std::string rtrimmed(std::string_view s) {
  while (!s.empty() && is_json_space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

// A tagged value as JSON: text for a string parameter (or text that is not JSON), else its JSON.
json tagged_value(const OutputSyntax& syntax, const std::string& tool, const std::string& key, const std::string& text) {
  if (const auto t = syntax.string_args.find(tool); t != syntax.string_args.end() && t->second.count(key)) return text;
  const std::string v = rtrimmed(text.substr(std::min(text.size(), text.find_first_not_of(" \t\r\n"))));
  if (v == "True" || v == "False") return v == "True";  // Python's, as templates print them with | string
  if (v == "None") return nullptr;
  const json j = json::parse(v, nullptr, false);
  return j.is_discarded() ? json(text) : j;
}

class CallReader {
 public:
  CallReader(Cursor& c, const DerivedToolSyntax& d) : c_(c), d_(d) {}

  // One call at i; a partial one with its name is added for the stream (and MORE returned).
  Lit read(size_t& i) {
    ParsedToolCall call;
    bool named = false;
    const auto more = [&] {
      if (named) c_.out.calls.push_back(call);
      return Lit::MORE;
    };
    for (const Piece& p : d_.call) {
      Lit r = Lit::MATCH;
      std::string id;
      switch (p.kind) {
        case Piece::TEXT: r = match_loose(c_, i, p.text); break;
        case Piece::NAME:
          r = read_ident(c_, i, call.name);
          named = r == Lit::MATCH;
          break;
        case Piece::ID: r = read_ident(c_, i, id); break;  // the server gives calls their ids
        case Piece::ARGS: r = d_.tagged ? tagged(i, call) : json_args(i, call); break;
      }
      if (r == Lit::MORE) return more();
      if (r == Lit::NO) return r;
    }
    c_.add_call(std::move(call));
    return Lit::MATCH;
  }

 private:
  Lit json_args(size_t& i, ParsedToolCall& call) {
    const size_t at = c_.skip_ws(i);
    const JsonScan a = scan_json_value(c_.text.substr(at));
    if (a.state == JsonScan::PARTIAL && c_.partial) {
      if (at < c_.size()) call.arguments = rtrimmed(c_.text.substr(at));
      return Lit::MORE;
    }
    if (a.state != JsonScan::COMPLETE || c_.text[at] != '{' || !json::accept(c_.text.substr(at, a.end))) return Lit::NO;
    call.arguments = std::string(c_.text.substr(at, a.end));
    i = at + a.end;
    return Lit::MATCH;
  }

  Lit tagged(size_t& i, ParsedToolCall& call) {
    call.arguments = "{";
    for (bool first = true;; first = false) {
      size_t j = i;
      Lit r = first ? Lit::MATCH : match_loose(c_, j, d_.arg_sep);
      if (r == Lit::MATCH) r = match_loose(c_, j, d_.arg_open);
      if (r == Lit::NO) break;
      if (r == Lit::MORE) return Lit::MORE;
      const Found mid = c_.find(j, d_.arg_mid);
      if (mid.at == std::string_view::npos || !mid.whole) return c_.partial ? Lit::MORE : Lit::NO;
      const std::string key = rtrimmed(c_.text.substr(c_.skip_ws(j), mid.at - c_.skip_ws(j)));
      if (key.empty()) return Lit::NO;
      const size_t value_at = mid.at + d_.arg_mid.size();
      const Found close = c_.find(value_at, d_.arg_close);
      if (close.at == std::string_view::npos || !close.whole) return c_.partial ? Lit::MORE : Lit::NO;
      const std::string text(c_.text.substr(value_at, close.at - value_at));
      call.arguments += (first ? "" : ", ") + json(key).dump() + ": " + tagged_value(c_.syntax, call.name, key, text).dump();
      i = close.at + d_.arg_close.size();
    }
    call.arguments += "}";
    return Lit::MATCH;
  }

  Cursor& c_;
  const DerivedToolSyntax& d_;
};

// The section at i: its opening, calls, and closing; `good_end`: after the last whole call.
Lit read_section(Cursor& c, const DerivedToolSyntax& d, size_t& i, size_t& good_end) {
  if (const Lit r = match_loose(c, i, d.section_open); r != Lit::MATCH) return r;
  CallReader calls(c, d);
  for (;;) {
    if (const Lit r = calls.read(i); r != Lit::MATCH) return r;
    good_end = i;
    if (c.stopped) return Lit::MATCH;  // max_calls: the reply ends at this call
    if (c.partial && c.skip_ws(i) == c.size()) return Lit::MORE;
    if (d.parallel) {
      size_t j = i;
      Lit r = match_loose(c, j, d.call_sep);
      size_t k = j;
      if (r == Lit::MATCH && !d.call.empty() && d.call[0].kind == Piece::TEXT) r = match_loose(c, k, d.call[0].text);
      if (r == Lit::MORE) return r;
      if (r == Lit::MATCH) {
        i = j;
        continue;
      }
    }
    const Lit close = match_loose(c, i, d.section_close);
    if (close == Lit::NO && c.skip_ws(i) == c.size()) return Lit::MATCH;  // the reply ended without the closing text
    return close;
  }
}

}  // namespace

void parse_derived(Cursor& c) {
  const DerivedToolSyntax& d = *c.syntax.derived;
  const std::string trigger = d.trigger();
  while (!c.stopped) {
    const Found m = c.find(c.pos, trigger);
    if (m.at == std::string_view::npos) return c.content_to(c.size());
    c.content_to(m.at);
    if (!m.whole) return c.stop();
    const size_t calls_before = c.out.calls.size();
    size_t i = m.at, good_end = m.at;
    const Lit r = read_section(c, d, i, good_end);
    if (r == Lit::MORE) return c.stop();
    if (c.stopped) return;
    if (r == Lit::NO) {  // not a call: its text is content (the whole calls before it stand)
      if (c.partial) return c.stop();
      if (c.out.calls.size() == calls_before) c.pos = m.at;
      else c.pos = good_end;
      return c.content_to(c.size());
    }
    c.pos = c.skip_ws(i);
  }
}

}  // namespace hart::chat_output
