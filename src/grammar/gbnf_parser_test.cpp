#include <gtest/gtest.h>

#include "grammar/grammar.h"
#include "grammar/grammar_test_util.h"

namespace hart::grammar {
namespace {

using testing::expect_language;

std::string error_of(const std::string& text) {
  try {
    parse_gbnf(text);
  } catch (const GrammarError& e) {
    return e.what();
  }
  return "";
}

TEST(GbnfParser, LiteralsClassesAndAlternatives) {
  const Grammar g = parse_gbnf("root ::= \"ab\" [0-9x] | \"c\" . # comment\n");
  expect_language(g, {"ab5", "abx", "c\n"},
                  {"aby", "ab"});
}

TEST(GbnfParser, EscapesAndNegatedClasses) {
  const Grammar g = parse_gbnf(R"(root ::= "\x41\u00e9\t\"\\" [^\n\]]+ "\U0001F600")");
  expect_language(g, {"A\xC3\xA9\t\"\\zz\xF0\x9F\x98\x80"},
                  {"A\xC3\xA9\t\"\\]\xF0\x9F\x98\x80", "A\xC3\xA9\t\"\\\n\xF0\x9F\x98\x80"});
}

TEST(GbnfParser, RulesGroupsAndNewlines) {
  const Grammar g = parse_gbnf(
      "root ::= (\n  item\n  (\",\" item)*\n)\n"
      "item ::= \"x\" |\n  \"y\"\n\n"
      "# trailing comment\n");
  expect_language(g, {"x", "x,y,x"},
                  {"x,"});
}

TEST(GbnfParser, Repetitions) {
  const Grammar g = parse_gbnf("root ::= \"a\"{2} \"b\"{1,3} \"c\"{2,} \"d\"? \"e\"{0,2}");
  expect_language(g, {"aabcc", "aabbbccccde", "aabccee"},
                  {"abcc", "aabbbbcc", "aabc", "aabcceee"});
}

TEST(GbnfParser, EmptyAlternative) {
  const Grammar g = parse_gbnf("root ::= \"x\" opt\nopt ::= | \"y\"");
  expect_language(g, {"x", "xy"},
                  {});
}

TEST(GbnfParser, MalformedGrammarsNameLineAndColumn) {
  const std::pair<const char*, const char*> cases[] = {
      {"root ::= \"abc", "grammar: 1:14: unterminated string literal"},
      {"root ::= x\n", "grammar: 1:10: rule 'x' is used but never defined"},
      {"item ::= \"x\"", "grammar: 1:13: the grammar has no 'root' rule"},
      {"root ::= \"a\"\nroot ::= \"b\"", "grammar: 2:1: rule 'root' is defined twice"},
      {"root = \"a\"", "grammar: 1:6: expected '::=' after the rule name 'root'"},
      {"root ::= (\"a\"", "grammar: 1:14: expected ')'"},
      {"root ::= [a-", "grammar: 1:13: unterminated character class"},
      {"root ::= \"a\"{3,1}", "grammar: 1:18: repetition {3,1} has max < min"},
      {"root ::= \"\\q\"", "grammar: 1:12: unknown escape '\\q'"},
      {"root ::= <think>", "grammar: 1:10: token references (<...>) are not supported; write the token's text as a string literal"},
      {"root ::= \"a\" )", "grammar: 1:14: expected the end of the rule 'root'"},
      {"root ::= \"a\"{20000}", "grammar: 1:18: repetition count above 10000"},
      {"root ::= \"a\" b{0}*\nb ::= \"b\"", "grammar: 1:18: nothing to repeat: the item before was repeated 0 times"},
  };
  for (const auto& [grammar, error] : cases) EXPECT_EQ(error_of(grammar), error) << grammar;
}

TEST(GbnfParser, LeftRecursionIsRefused) {
  EXPECT_EQ(error_of("root ::= root \"a\" | \"b\""), "grammar: rule 'root' is left-recursive (it can start with itself)");
  EXPECT_EQ(error_of("root ::= e\ne ::= opt e \"x\"\nopt ::= | \"y\""), "grammar: rule 'e' is left-recursive (it can start with itself)");
  EXPECT_NO_THROW(parse_gbnf("root ::= \"(\" root \")\" | \"x\""));
}

}  // namespace
}  // namespace hart::grammar
