// Helpers the chat tests share: reading a template file, and parsing a reply as a stream sees
// it (every prefix, checked to only grow into the complete parse).
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "chat/chat_output.h"

namespace hart::chat_testing {

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// `later` extends `earlier`: what a stream already sent stays true.
inline void expect_extends(const ParsedOutput& earlier, const ParsedOutput& later, const std::string& where) {
  EXPECT_TRUE(starts_with(later.content, earlier.content)) << where << ": content '" << earlier.content << "' -> '" << later.content << "'";
  EXPECT_TRUE(starts_with(later.reasoning, earlier.reasoning)) << where << ": reasoning";
  ASSERT_GE(later.calls.size(), earlier.calls.size()) << where;
  for (size_t i = 0; i < earlier.calls.size(); i++) {
    EXPECT_EQ(later.calls[i].name, earlier.calls[i].name) << where;
    EXPECT_TRUE(starts_with(later.calls[i].arguments, earlier.calls[i].arguments))
        << where << ": arguments '" << earlier.calls[i].arguments << "' -> '" << later.calls[i].arguments << "'";
  }
}

// Parses every prefix as a stream would, checks they only grow into the complete parse, and
// returns the complete parse.
inline ParsedOutput streamed(const OutputSyntax& s, const std::string& text) {
  ParsedOutput prev;
  for (size_t n = 0; n <= text.size(); n++) {
    ParsedOutput cur = parse_chat_output(s, std::string_view(text).substr(0, n), true);
    expect_extends(prev, cur, "prefix " + std::to_string(n));
    prev = std::move(cur);
  }
  ParsedOutput final = parse_chat_output(s, text, false);
  expect_extends(prev, final, "final");
  return final;
}

}  // namespace hart::chat_testing
