// Jinja source -> tokens. Whitespace is handled here, as llama.cpp and Hugging Face configure
// Jinja for chat templates: \r\n becomes \n, one trailing newline of the source is dropped,
// trim_blocks (the newline right after a %} or #} goes) and lstrip_blocks (spaces and tabs
// from a line's start to a {% or {# go), and `-` on a tag strips all whitespace on that side.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hart::jinja {

enum class Tok {
  Text,       // literal output
  ExprOpen,   // {{
  ExprClose,  // }}
  StmtOpen,   // {%
  StmtClose,  // %}
  Name,
  String,  // text already unescaped
  Int,
  Float,
  Op,  // punctuation and operators: + - * / // % ** ~ == != < <= > >= = ( ) [ ] { } , . : |
  End,
};

struct Token {
  Tok kind;
  std::string text;
  int line;
};

// Throws hart::Error (with the line) for an unterminated tag, comment or string, or a character
// that starts no token.
std::vector<Token> tokenize(std::string_view source);

}  // namespace hart::jinja
