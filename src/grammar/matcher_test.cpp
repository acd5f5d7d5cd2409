#include "grammar/matcher.h"

#include <gtest/gtest.h>

#include "grammar/grammar_test_util.h"

namespace hart::grammar {
namespace {

using testing::is_prefix;
using testing::expect_language;

TEST(Matcher, AcceptsPrefixesAndRejectsAtTheFirstBadByte) {
  const Grammar g = parse_gbnf("root ::= \"hello\" \" \"+ \"world\"");
  Matcher m(g);
  EXPECT_TRUE(m.feed("hel"));
  EXPECT_FALSE(m.complete());
  EXPECT_TRUE(m.can_continue());
  Matcher copy(m);
  EXPECT_FALSE(copy.feed("lx"));
  EXPECT_FALSE(m.feed_byte('x'));  // refused: m is unchanged
  EXPECT_TRUE(m.feed("lo   world"));
  EXPECT_TRUE(m.complete());
  EXPECT_FALSE(m.can_continue());
}

TEST(Matcher, RecursionNestsToAnyDepth) {
  const Grammar g = parse_gbnf("root ::= \"(\" root \")\" | \"x\"");
  expect_language(g, {"((((((x))))))"},
                  {"(((x))"});
  EXPECT_TRUE(is_prefix(g, "(((x))"));
  EXPECT_FALSE(is_prefix(g, "(()"));
}

TEST(Matcher, Utf8SplitOverTokensIsCheckedPerByte) {
  const Grammar g = parse_gbnf("root ::= [\xC3\xA0-\xC3\xBF]+");  // U+00E0..U+00FF
  Matcher m(g);
  EXPECT_TRUE(m.feed_byte(0xC3));  // could still become U+00E0..U+00FF
  EXPECT_FALSE(m.complete());       // a character is unfinished
  EXPECT_TRUE(m.feed_byte(0xA9));   // é
  EXPECT_TRUE(m.complete());
  EXPECT_FALSE(m.feed_byte(0xC2));  // U+0080..U+00BF: none in the class
  EXPECT_FALSE(m.feed_byte(0xA9));  // a stray continuation byte
  EXPECT_FALSE(is_prefix(g, "\xC3\x28"));  // not UTF-8
  EXPECT_FALSE(is_prefix(g, "\xE0"));      // a three-byte lead: U+0800 and up
  const Grammar any = parse_gbnf("root ::= .*");
  EXPECT_TRUE(is_prefix(any, "\xED\x9F"));   // U+D7C0..U+D7FF
  EXPECT_FALSE(is_prefix(any, "\xED\xB8"));  // only surrogates can follow: a dead end
  EXPECT_FALSE(is_prefix(any, "\xF4\x90"));  // above U+10FFFF
}

TEST(Matcher, NegatedClassAndAnyCharTakeMultibyteCharacters) {
  const Grammar g = parse_gbnf("root ::= [^a] .");
  expect_language(g, {"\xE2\x82\xAC\xF0\x9F\x98\x80"},
                  {"a\xE2\x82\xAC"});
  const Grammar only_ascii = parse_gbnf("root ::= [^\\x80-\\U0010FFFF]");
  EXPECT_FALSE(is_prefix(only_ascii, "\xC3"));  // every completion of it is excluded
}

TEST(Matcher, BoundedRepetitionCounts) {
  const Grammar g = parse_gbnf("root ::= [0-9]{2,4} \"!\"");
  expect_language(g, {"12!", "1234!"},
                  {"1!"});
  EXPECT_FALSE(is_prefix(g, "12345"));
}

TEST(Matcher, AmbiguityIsMergedNotMultiplied) {
  // x? x? ... makes many equal stacks; they merge, so the set stays small and the match runs.
  std::string body;
  for (int i = 0; i < 40; i++) body += " \"x\"?";
  const Grammar g = parse_gbnf("root ::=" + body);
  expect_language(g, {std::string(40, 'x')},
                  {std::string(41, 'x')});
}

TEST(Matcher, KeysAreEqualForEqualStates) {
  const Grammar g = parse_gbnf("root ::= \"[\" [a-z]* \"]\"");
  Matcher a(g), b(g);
  ASSERT_TRUE(a.feed("[ab"));
  ASSERT_TRUE(b.feed("[abcdef"));
  std::vector<uintptr_t> ka, kb;
  a.key(ka);
  b.key(kb);
  EXPECT_EQ(ka, kb);
  ASSERT_TRUE(b.feed("]"));
  b.key(kb);
  EXPECT_NE(ka, kb);
}

}  // namespace
}  // namespace hart::grammar
