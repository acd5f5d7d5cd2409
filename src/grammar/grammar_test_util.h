// Test helpers: whole-text and prefix matching of a grammar.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string_view>

#include "grammar/grammar.h"
#include "grammar/matcher.h"

namespace hart::grammar::testing {

// `text` is a complete match of the grammar.
inline bool matches(const Grammar& g, std::string_view text) {
  Matcher m(g);
  return m.feed(text) && m.complete();
}

// `text` can be continued into a match.
inline bool is_prefix(const Grammar& g, std::string_view text) {
  Matcher m(g);
  return m.feed(text);
}

// Every text of `in` is a complete match, none of `out` is.
inline void expect_language(const Grammar& g, std::initializer_list<std::string_view> in,
                            std::initializer_list<std::string_view> out) {
  for (std::string_view t : in) EXPECT_TRUE(matches(g, t)) << "should match: " << t;
  for (std::string_view t : out) EXPECT_FALSE(matches(g, t)) << "should not match: " << t;
}

}  // namespace hart::grammar::testing
