// Tokens -> statements (ast.h), by recursive descent with Jinja2's operator precedence:
// ternary < or < and < not < comparisons/in < + - < ~ < * / // % < ** < unary - + < postfix
// (. [] ()) < filters and tests. Nesting deeper than kMaxDepth is an error, not a stack overflow.
#pragma once

#include <string_view>

#include "chat/jinja/ast.h"

namespace hart::jinja {

inline constexpr int kMaxDepth = 200;

// Throws hart::Error naming the line for any syntax error or unknown tag.
Body parse(std::string_view source);

}  // namespace hart::jinja
