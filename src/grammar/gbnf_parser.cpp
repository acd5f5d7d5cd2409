// GBNF text -> Grammar. A recursive-descent parser over the UTF-8 text; groups and repetitions
// become helper rules named after the rule they occur in ("item-1", "item-2", ...).
#include <algorithm>
#include <map>
#include <optional>

#include "grammar/grammar.h"
#include "grammar/grammar_check.h"

namespace hart::grammar {
namespace {

// Bounds that keep a hostile grammar from taking unbounded memory: {m,n} counts are expanded
// into that many symbols.
constexpr uint32_t kMaxRepeat = 10000;
constexpr size_t kMaxSymbols = 1 << 20;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Grammar run() {
    skip_space(true);
    while (pos_ < s_.size()) {
      parse_rule();
      skip_space(true);
    }
    for (const auto& [name, at] : first_use_)
      if (!defined_[rule_id(name)]) fail_at(at, "rule '" + name + "' is used but never defined");
    auto root = ids_.find("root");
    if (root == ids_.end() || !defined_[root->second]) fail_at(s_.size(), "the grammar has no 'root' rule");
    g_.root = root->second;
    check_no_left_recursion(g_);
    return std::move(g_);
  }

 private:
  [[noreturn]] void fail_at(size_t at, const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < s_.size(); i++) {
      if (s_[i] == '\n') {
        line++;
        col = 1;
      } else if ((uint8_t(s_[i]) & 0xC0) != 0x80) {
        col++;
      }
    }
    throw GrammarError("grammar: " + std::to_string(line) + ":" + std::to_string(col) + ": " + what);
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }

  bool at_end() const { return pos_ >= s_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }

  // Spaces, tabs and # comments; newlines too when `newlines` (between rules, inside groups).
  void skip_space(bool newlines) {
    while (!at_end()) {
      const char c = peek();
      if (c == ' ' || c == '\t') {
        pos_++;
      } else if (c == '#') {
        while (!at_end() && peek() != '\n') pos_++;
      } else if (newlines && (c == '\n' || c == '\r')) {
        pos_++;
      } else {
        break;
      }
    }
  }

  std::string parse_name() {
    const size_t start = pos_;
    while (!at_end() && is_name_char(peek())) pos_++;
    if (pos_ == start) fail("expected a rule name");
    return std::string(s_.substr(start, pos_ - start));
  }

  uint32_t rule_id(const std::string& name) {
    auto [it, added] = ids_.try_emplace(name, uint32_t(g_.rules.size()));
    if (added) {
      g_.rules.push_back({name, {}});
      defined_.push_back(false);
    }
    return it->second;
  }

  uint32_t new_helper(const std::string& base) {
    for (;;) {
      const std::string name = base + "-" + std::to_string(++helper_count_);
      if (!ids_.count(name)) return rule_id(name);
    }
  }

  void parse_rule() {
    const size_t start = pos_;
    const std::string name = parse_name();
    const uint32_t id = rule_id(name);
    if (defined_[id]) fail_at(start, "rule '" + name + "' is defined twice");
    defined_[id] = true;
    skip_space(false);
    if (s_.substr(pos_, 3) != "::=") fail("expected '::=' after the rule name '" + name + "'");
    pos_ += 3;
    skip_space(true);
    current_ = name;
    g_.rules[id].alternatives = parse_alternatives(false);
    if (!at_end() && peek() != '\n' && peek() != '\r') fail("expected the end of the rule '" + name + "'");
  }

  // alternative ('|' alternative)*; `nested`: inside parentheses, where newlines are spaces.
  std::vector<std::vector<Symbol>> parse_alternatives(bool nested) {
    std::vector<std::vector<Symbol>> alts;
    alts.push_back(parse_sequence(nested));
    while (peek() == '|') {
      pos_++;
      skip_space(true);  // a newline after '|' continues the rule
      alts.push_back(parse_sequence(nested));
    }
    for (auto& a : alts) a.push_back({Symbol::END, 0});
    return alts;
  }

  std::vector<Symbol> parse_sequence(bool nested) {
    std::vector<Symbol> seq;
    for (;;) {
      const char c = peek();
      const size_t last = seq.size();
      if (c == '"') {
        pos_++;
        while (peek() != '"') {
          if (at_end() || peek() == '\n') fail("unterminated string literal");
          const char32_t cp = parse_char();
          seq.push_back(chars({{cp, cp}}, false));
        }
        pos_++;
      } else if (c == '[') {
        pos_++;
        seq.push_back(parse_class());
      } else if (c == '.') {
        pos_++;
        seq.push_back(chars({}, true));
      } else if (c == '(') {
        pos_++;
        skip_space(true);
        const uint32_t id = new_helper(current_);
        auto alts = parse_alternatives(true);
        if (peek() != ')') fail("expected ')'");
        pos_++;
        g_.rules[id].alternatives = std::move(alts);
        defined_[id] = true;
        seq.push_back({Symbol::RULE, id});
      } else if (c == '<' || c == '!') {
        fail("token references (<...>) are not supported; write the token's text as a string literal");
      } else if (is_name_char(c)) {
        const size_t at = pos_;
        const std::string name = parse_name();
        // `name ::=` starts the next rule: this sequence (and rule) ended at the previous line.
        const size_t save = pos_;
        skip_space(false);
        if (s_.substr(pos_, 3) == "::=") fail_at(at, "expected the end of the rule before '" + name + " ::='");
        pos_ = save;
        first_use_.try_emplace(name, at);
        seq.push_back({Symbol::RULE, rule_id(name)});
      } else {
        break;
      }
      skip_space(nested);
      if (seq.size() == last) continue;
      parse_repetitions(seq, last, nested);
      if (symbols_ += seq.size() - last; symbols_ > kMaxSymbols) fail("the grammar is too large");
    }
    return seq;
  }

  // Any number of * + ? {m} {m,} {m,n} after the last symbol of `seq`, whose item starts at
  // `item`: a literal's repetition applies to its last character, as in llama.cpp. An item
  // repeated {0} times is gone; an operator after that has nothing to repeat (llama.cpp refuses
  // it too).
  void parse_repetitions(std::vector<Symbol>& seq, size_t item, bool nested) {
    for (;;) {
      const size_t at = pos_;
      const char c = peek();
      uint32_t lo, hi;  // hi == UINT32_MAX: unbounded
      if (c == '*') {
        lo = 0, hi = UINT32_MAX, pos_++;
      } else if (c == '+') {
        lo = 1, hi = UINT32_MAX, pos_++;
      } else if (c == '?') {
        lo = 0, hi = 1, pos_++;
      } else if (c == '{') {
        pos_++;
        skip_space(false);
        lo = hi = parse_count();
        skip_space(false);
        if (peek() == ',') {
          pos_++;
          skip_space(false);
          hi = peek() == '}' ? UINT32_MAX : parse_count();
          skip_space(false);
        }
        if (peek() != '}') fail("expected '}'");
        pos_++;
        if (hi < lo) fail("repetition {" + std::to_string(lo) + "," + std::to_string(hi) + "} has max < min");
      } else {
        return;
      }
      if (seq.size() == item) fail_at(at, "nothing to repeat: the item before was repeated 0 times");
      const Symbol x = seq.back();
      seq.pop_back();
      repeat(seq, x, lo, hi);
      skip_space(nested);
    }
  }

  uint32_t parse_count() {
    uint64_t n = 0;
    const size_t start = pos_;
    while (peek() >= '0' && peek() <= '9') {
      n = n * 10 + uint64_t(peek() - '0');
      if (n > kMaxRepeat) fail("repetition count above " + std::to_string(kMaxRepeat));
      pos_++;
    }
    if (pos_ == start) fail("expected a number");
    return uint32_t(n);
  }

  // x{lo,hi} as x...x (lo times) then a chain of helper rules: opt_k ::= x opt_{k-1} | ε, or
  // star ::= x star | ε when unbounded.
  void repeat(std::vector<Symbol>& seq, Symbol x, uint32_t lo, uint32_t hi) {
    if (symbols_ + lo + (hi == UINT32_MAX ? 0 : hi - lo) > kMaxSymbols) fail("the grammar is too large");
    for (uint32_t i = 0; i < lo; i++) seq.push_back(x);
    if (hi == lo) return;
    const Symbol end{Symbol::END, 0};
    if (hi == UINT32_MAX) {
      const uint32_t star = new_helper(current_);
      g_.rules[star].alternatives = {{x, {Symbol::RULE, star}, end}, {end}};
      defined_[star] = true;
      seq.push_back({Symbol::RULE, star});
      return;
    }
    std::optional<uint32_t> inner;
    for (uint32_t k = 0; k < hi - lo; k++) {
      const uint32_t opt = new_helper(current_);
      std::vector<Symbol> more{x};
      if (inner) more.push_back({Symbol::RULE, *inner});
      more.push_back(end);
      g_.rules[opt].alternatives = {std::move(more), {end}};
      defined_[opt] = true;
      inner = opt;
    }
    seq.push_back({Symbol::RULE, *inner});
  }

  Symbol chars(std::vector<std::pair<char32_t, char32_t>> ranges, bool negated) {
    g_.classes.push_back({std::move(ranges), negated});
    return {Symbol::CHARS, uint32_t(g_.classes.size() - 1)};
  }

  Symbol parse_class() {
    std::vector<std::pair<char32_t, char32_t>> ranges;
    const bool negated = peek() == '^';
    if (negated) pos_++;
    while (peek() != ']') {
      if (at_end()) fail("unterminated character class");
      const char32_t lo = parse_char();
      char32_t hi = lo;
      if (peek() == '-' && peek(1) != ']' && pos_ + 1 < s_.size()) {
        pos_++;
        hi = parse_char();
        if (hi < lo) fail("character range with its end before its start");
      }
      ranges.emplace_back(lo, hi);
    }
    pos_++;
    return chars(std::move(ranges), negated);
  }

  // One character of a literal or class: an escape or one UTF-8 encoded code point.
  char32_t parse_char() {
    const uint8_t c = uint8_t(peek());
    if (c == '\\') {
      pos_++;
      const char e = peek();
      pos_++;
      switch (e) {
        case 'x': return parse_hex(2);
        case 'u': return parse_hex(4);
        case 'U': return parse_hex(8);
        case 't': return '\t';
        case 'r': return '\r';
        case 'n': return '\n';
        case '\\': case '"': case '[': case ']': case '-': case '^': return char32_t(e);
        default: pos_--; fail(std::string("unknown escape '\\") + (e ? std::string(1, e) : std::string()) + "'");
      }
    }
    const size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || pos_ + len > s_.size()) fail("invalid UTF-8 in the grammar");
    char32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
      const uint8_t b = uint8_t(s_[pos_ + i]);
      if ((b & 0xC0) != 0x80) fail("invalid UTF-8 in the grammar");
      cp = (cp << 6) | (b & 0x3F);
    }
    pos_ += len;
    return cp;
  }

  char32_t parse_hex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; i++) {
      const char h = peek();
      const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
      if (d < 0) fail("expected " + std::to_string(digits) + " hex digits");
      v = v * 16 + uint32_t(d);
      pos_++;
    }
    if (v > 0x10FFFF) fail("code point above U+10FFFF");
    return v;
  }

  std::string_view s_;
  size_t pos_ = 0;
  Grammar g_;
  std::map<std::string, uint32_t> ids_;
  std::vector<bool> defined_;
  std::map<std::string, size_t> first_use_;
  std::string current_;
  uint32_t helper_count_ = 0;
  size_t symbols_ = 0;
};

}  // namespace

Grammar parse_gbnf(std::string_view text) { return Parser(text).run(); }

}  // namespace hart::grammar
