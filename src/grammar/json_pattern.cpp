#include "grammar/json_pattern.h"

#include <cstdio>
#include <utility>
#include <vector>

#include "grammar/json_schema.h"

namespace hart::grammar {
namespace {

// Any character of a JSON string but a line terminator, in its shortest JSON form, quotes,
// backslashes and control characters left out ('.', a negated class: see the header).
constexpr const char* kPlainChar = "[^\"\\\\\\x7F\\x00-\\x1F";

using Ranges = std::vector<std::pair<char32_t, char32_t>>;

// A code point as it stands in a GBNF character class.
std::string class_char(char32_t c) {
  char buf[16];
  if (c >= 0x20 && c < 0x7F) {
    const bool special = c == ']' || c == '[' || c == '\\' || c == '-' || c == '^';
    return special ? std::string{'\\', char(c)} : std::string(1, char(c));
  }
  std::snprintf(buf, sizeof buf, c <= 0xFF ? "\\x%02X" : c <= 0xFFFF ? "\\u%04X" : "\\U%08X", unsigned(c));
  return buf;
}

// The JSON text of one code point in a string (UTF-8), as a GBNF literal.
std::string json_char(char32_t c) {
  std::string text;
  switch (c) {
    case '"': text = "\\\""; break;
    case '\\': text = "\\\\"; break;
    case '\n': text = "\\n"; break;
    case '\r': text = "\\r"; break;
    case '\t': text = "\\t"; break;
    case '\b': text = "\\b"; break;
    case '\f': text = "\\f"; break;
    default:
      if (c < 0x20 || c == 0x7F) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
        text = buf;
      } else if (c < 0x80) {
        text = std::string(1, char(c));
      } else if (c < 0x800) {
        text = {char(0xC0 | c >> 6), char(0x80 | (c & 0x3F))};
      } else if (c < 0x10000) {
        text = {char(0xE0 | c >> 12), char(0x80 | (c >> 6 & 0x3F)), char(0x80 | (c & 0x3F))};
      } else {
        text = {char(0xF0 | c >> 18), char(0x80 | (c >> 12 & 0x3F)), char(0x80 | (c >> 6 & 0x3F)), char(0x80 | (c & 0x3F))};
      }
  }
  return gbnf_literal(text);
}

class PatternParser {
 public:
  explicit PatternParser(const std::string& p) : p_(p), end_(p.size()) {}

  // The alternatives of the whole pattern, each anchored on its own (in ECMAScript "^a|b$" is
  // "^a" or "b$"): an end without its anchor admits any text there.
  std::string run() {
    const std::string any = "(" + std::string(kPlainChar) + "] | \"\\\\\" [\"\\\\/bfnrt])*";
    std::string out;
    while (true) {
      const bool from_start = peek() == '^';
      if (from_start) pos_++;
      const std::string body = sequence(true).gbnf;
      const bool to_end = peek() == '$';
      if (to_end) pos_++;
      out += (out.empty() ? "" : " | ") + (from_start ? "" : any + " ") + "(" + body + ")" + (to_end ? "" : " " + any);
      if (peek() != '|') break;
      pos_++;
    }
    if (!at_end()) fail(peek() == ')' ? "an unbalanced ')'" : "'$' inside the pattern");
    return "(" + out + ")";
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw SchemaError("json_schema: pattern '" + p_ + "': " + what + " is not supported");
  }
  bool at_end() const { return pos_ >= end_; }
  char peek() const { return at_end() ? '\0' : p_[pos_]; }

  // A part of the pattern as GBNF, and whether it can match the empty string.
  struct Piece {
    std::string gbnf;
    bool nullable;
  };

  Piece alternation() {
    Piece out = sequence(false);
    while (peek() == '|') {
      pos_++;
      const Piece next = sequence(false);
      out = {out.gbnf + " | " + next.gbnf, out.nullable || next.nullable};
    }
    return out;
  }

  // Atoms up to '|', ')' or the end; at the top, also up to a '$' that ends an alternative.
  Piece sequence(bool top) {
    Piece out{"", true};
    while (!at_end() && peek() != '|' && peek() != ')') {
      if (top && peek() == '$' && (pos_ + 1 == end_ || p_[pos_ + 1] == '|')) break;
      const Piece a = quantified(atom());
      out = {out.gbnf + (out.gbnf.empty() ? "" : " ") + a.gbnf, out.nullable && a.nullable};
    }
    if (out.gbnf.empty()) out.gbnf = "\"\"";
    return out;
  }

  // An unbounded repetition of a part that can match nothing ("(a|x?)*") would be a
  // left-recursive GBNF rule, which the grammar parser refuses: such a pattern is refused here.
  Piece quantified(const Piece& a) {
    std::string q;
    const char c = peek();
    if (c == '*' || c == '+' || c == '?') {
      q = std::string(1, c);
      pos_++;
    } else if (c == '{' && pos_ + 1 < end_ && std::isdigit(static_cast<unsigned char>(p_[pos_ + 1]))) {
      const size_t close = p_.find('}', pos_);
      if (close == std::string::npos || close >= end_) fail("an unclosed '{'");
      q = p_.substr(pos_, close - pos_ + 1);
      for (char d : q.substr(1, q.size() - 2))
        if (!std::isdigit(static_cast<unsigned char>(d)) && d != ',') fail("the quantifier '" + q + "'");
      pos_ = close + 1;
    } else {
      return a;
    }
    if (peek() == '?') pos_++;  // lazy: the same strings
    if (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{') fail("a quantifier after a quantifier");
    const bool unbounded = q == "*" || q == "+" || (q.size() > 2 && q[q.size() - 2] == ',');  // or {n,}
    if (a.nullable && unbounded) fail("'" + q + "' over a part that can match nothing");
    const bool at_least_one = q == "+" || (q[0] == '{' && q[1] != '0');
    return {"(" + a.gbnf + ")" + q, a.nullable || !at_least_one};
  }

  Piece atom() {
    const char c = p_[pos_];
    switch (c) {
      case '(': {
        pos_++;
        if (peek() == '?') {
          if (pos_ + 1 >= end_ || p_[pos_ + 1] != ':') fail("a lookaround or named group '(?'");
          pos_ += 2;
        }
        const Piece inner = alternation();
        if (peek() != ')') fail("an unclosed '('");
        pos_++;
        return {"(" + inner.gbnf + ")", inner.nullable};
      }
      case '[': return {char_class(), false};
      case '.': pos_++; return {std::string(kPlainChar) + "]", false};
      case '\\': return {escape(), false};
      case '^':
      case '$': fail(std::string("'") + c + "' inside the pattern");
      case '*':
      case '+':
      case '?': fail(std::string("'") + c + "' with nothing to repeat");
      default: return {json_char(code_point()), false};
    }
  }

  // The UTF-8 code point at pos_, consumed.
  char32_t code_point() {
    const auto b = static_cast<unsigned char>(p_[pos_++]);
    const int more = b < 0x80 ? 0 : b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : b >= 0xC0 ? 1 : -1;
    if (more < 0 || pos_ + size_t(more) > end_) fail("invalid UTF-8");
    char32_t c = more == 0 ? b : b & (0x3F >> more);
    for (int i = 0; i < more; i++) c = c << 6 | (static_cast<unsigned char>(p_[pos_++]) & 0x3F);
    return c;
  }

  // \d \w \s as ranges; false for other escapes.
  static bool named_class(char e, Ranges& r) {
    switch (e) {
      case 'd': r.insert(r.end(), {{'0', '9'}}); return true;
      case 'w': r.insert(r.end(), {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}, {'_', '_'}}); return true;
      case 's': r.insert(r.end(), {{' ', ' '}, {'\t', '\r'}}); return true;
      default: return false;
    }
  }

  // The code point an escape stands for (\n, \., \u0041, ...).
  char32_t escaped_char(char e) {
    switch (e) {
      case 'n': return '\n';
      case 'r': return '\r';
      case 't': return '\t';
      case 'f': return '\f';
      case 'v': return '\v';
      case '0': return 0;
      case 'x':
      case 'u': {
        const size_t n = e == 'x' ? 2 : 4;
        if (pos_ + n > end_) fail(std::string("the escape '\\") + e + "'");
        const std::string hex = p_.substr(pos_, n);
        for (char h : hex)
          if (!std::isxdigit(static_cast<unsigned char>(h))) fail(std::string("the escape '\\") + e + hex + "'");
        pos_ += n;
        return char32_t(std::stoul(hex, nullptr, 16));
      }
      default:
        if (std::isalnum(static_cast<unsigned char>(e))) fail(std::string("the escape '\\") + e + "'");  // \b \B \1 \p ...
        return char32_t(static_cast<unsigned char>(e));
    }
  }

  std::string escape() {
    pos_++;
    if (at_end()) fail("a trailing '\\'");
    const char e = p_[pos_++];
    Ranges r;
    if (named_class(e, r)) return class_of(r, false);
    if (e == 'D' || e == 'W' || e == 'S') {
      named_class(char(e - 'A' + 'a'), r);
      return class_of(r, true);
    }
    return json_char(escaped_char(e));
  }

  std::string char_class() {
    pos_++;
    const bool negated = peek() == '^';
    if (negated) pos_++;
    Ranges r;
    for (bool first = true; first || peek() != ']'; first = false) {
      if (at_end()) fail("an unclosed '['");
      char32_t lo;
      if (peek() == '\\') {
        pos_++;
        if (at_end()) fail("an unclosed '['");
        const char e = p_[pos_++];
        if (named_class(e, r)) continue;
        if (e == 'D' || e == 'W' || e == 'S') fail(std::string("'\\") + e + "' inside a class");
        lo = e == 'b' ? U'\b' : escaped_char(e);
      } else {
        lo = code_point();
      }
      char32_t hi = lo;
      if (peek() == '-' && pos_ + 1 < end_ && p_[pos_ + 1] != ']') {
        pos_++;
        if (peek() == '\\') {
          pos_++;
          if (at_end()) fail("an unclosed '['");
          hi = escaped_char(p_[pos_++]);
        } else {
          hi = code_point();
        }
        if (hi < lo) fail("a range out of order");
      }
      r.emplace_back(lo, hi);
    }
    pos_++;  // ']'
    return class_of(r, negated);
  }

  // A class as GBNF over JSON text. Negated: the plain characters outside it (see the header).
  // Otherwise its characters as one GBNF class, but those JSON writes escaped ('"', '\', the
  // control characters), which are literals of their escapes.
  static std::string class_of(const Ranges& r, bool negated) {
    const auto escaped_in_json = [](char32_t c) { return c < 0x20 || c == '"' || c == '\\' || c == 0x7F; };
    std::string plain, escaped;
    for (auto [lo, hi] : r) {
      for (char32_t c = lo; c <= hi;) {
        if (!negated && escaped_in_json(c)) {
          escaped += " | " + json_char(c++);
          continue;
        }
        char32_t e = c;
        while (e < hi && (negated || !escaped_in_json(e + 1))) e++;
        plain += class_char(c);
        if (e > c) plain.append("-").append(class_char(e));
        c = e + 1;
      }
    }
    if (negated) return std::string(kPlainChar) + plain + "]";
    if (plain.empty() && escaped.empty()) fail_static("an empty class");
    std::string out = "(";
    if (plain.empty()) out.append(escaped, 3);
    else out.append("[").append(plain).append("]").append(escaped);
    return out.append(")");
  }

  [[noreturn]] static void fail_static(const std::string& what) {
    throw SchemaError("json_schema: pattern: " + what + " is not supported");
  }

  const std::string& p_;
  size_t pos_ = 0, end_ = 0;
};

}  // namespace

std::string pattern_to_gbnf(const std::string& pattern) { return PatternParser(pattern).run(); }

}  // namespace hart::grammar
