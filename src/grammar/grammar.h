// A context-free grammar over Unicode code points, as GBNF (llama.cpp's grammar format) writes
// one: named rules, each a list of alternatives, each a sequence of symbols. A symbol is a
// character class or a reference to a rule. Repetitions (* + ? {m,n}) and parenthesized groups
// are lowered by the parser into helper rules, so the matcher sees only these two kinds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"

namespace hart::grammar {

// A malformed grammar (or schema): the message says where (line:column for GBNF text) and what.
class GrammarError : public Error {
 public:
  using Error::Error;
};

// A set of code points: the union of closed ranges, or its complement when `negated`.
// "." is the negated empty set.
struct CharClass {
  std::vector<std::pair<char32_t, char32_t>> ranges;
  bool negated = false;
  bool matches(char32_t c) const;
  // Whether some code point in [lo, hi] matches (for a UTF-8 character not yet complete).
  bool matches_some(char32_t lo, char32_t hi) const;
};

struct Symbol {
  enum Kind : uint8_t { CHARS, RULE, END } kind;  // END closes every alternative
  uint32_t index;  // CHARS: into Grammar::classes; RULE: into Grammar::rules
};

struct Rule {
  std::string name;
  // Each alternative is its symbols followed by one END symbol; the matcher's stacks point
  // into these vectors, so a Grammar is never modified once built.
  std::vector<std::vector<Symbol>> alternatives;
};

struct Grammar {
  std::vector<Rule> rules;
  std::vector<CharClass> classes;
  uint32_t root = 0;
};

// Parses GBNF text. Throws GrammarError (with line:column) for a syntax error, an undefined
// rule, a missing `root`, left recursion, a token reference (<...>, unsupported here) or a
// grammar past the size limits.
Grammar parse_gbnf(std::string_view text);

}  // namespace hart::grammar
