#include "chat/jinja/lexer.h"

#include <algorithm>
#include <cctype>

#include "common/error.h"

namespace hart::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

void strip_left(std::string& s) {
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  s.erase(0, i);
}

void strip_right(std::string& s) {
  while (!s.empty() && is_space(s.back())) s.pop_back();
}

class Lexer {
 public:
  explicit Lexer(std::string_view source) {
    src_.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\r') {
        src_ += '\n';
        if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
      } else {
        src_ += source[i];
      }
    }
    if (!src_.empty() && src_.back() == '\n') src_.pop_back();
    for (size_t i = 0; i < src_.size(); ++i)
      if (src_[i] == '\n') newlines_.push_back(i);
  }

  std::vector<Token> run() {
    bool after_block = false;  // the last tag was %} or #}: trim_blocks applies
    bool strip_next = false;   // the last tag ended with -
    bool at_start = true;
    while (pos_ < src_.size() || at_start) {
      size_t tag = find_tag(pos_);
      std::string text = src_.substr(pos_, tag - pos_);
      const bool block_tag = tag < src_.size() && (src_[tag + 1] == '%' || src_[tag + 1] == '#');
      const bool plus = block_tag && tag + 2 < src_.size() && src_[tag + 2] == '+';
      if (block_tag && !plus) lstrip_block(text, at_start);
      if (after_block && !text.empty() && text[0] == '\n') text.erase(0, 1);
      if (strip_next) strip_left(text);
      if (tag + 2 < src_.size() && src_[tag + 2] == '-') strip_right(text);
      if (!text.empty()) out_.push_back({Tok::Text, std::move(text), line_at(pos_)});
      at_start = false;
      pos_ = tag;
      if (pos_ >= src_.size()) break;
      const char kind = src_[pos_ + 1];
      const int line = line_at(pos_);
      pos_ += 2;
      if (pos_ < src_.size() && (src_[pos_] == '-' || src_[pos_] == '+')) ++pos_;
      if (kind == '#') {
        const size_t end = src_.find("#}", pos_);
        if (end == std::string::npos) throw Error("template line " + std::to_string(line) + ": unterminated comment");
        strip_next = end > pos_ && src_[end - 1] == '-';
        after_block = true;
        pos_ = end + 2;
        continue;
      }
      if (kind == '%' && raw_block(line, strip_next)) {
        after_block = true;
        continue;
      }
      out_.push_back({kind == '%' ? Tok::StmtOpen : Tok::ExprOpen, "", line});
      strip_next = lex_tag(kind == '%', line);
      after_block = kind == '%';
    }
    out_.push_back({Tok::End, "", line_at(src_.size())});
    return std::move(out_);
  }

 private:
  size_t find_tag(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i)
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    return src_.size();
  }

  // lstrip_blocks: spaces and tabs between the line's start and the tag go.
  static void lstrip_block(std::string& text, bool at_start) {
    size_t i = text.size();
    while (i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t')) --i;
    if (i > 0 ? text[i - 1] == '\n' : at_start) text.erase(i);
  }

  int line_at(size_t pos) const {
    return 1 + static_cast<int>(std::lower_bound(newlines_.begin(), newlines_.end(), pos) - newlines_.begin());
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error("template line " + std::to_string(line_at(pos_)) + ": " + what);
  }

  // {% raw %}...{% endraw %}: the text between is output as it is. Returns false when the tag at
  // pos_ is not `raw`.
  bool raw_block(int line, bool& strip_next) {
    size_t p = pos_;
    while (p < src_.size() && is_space(src_[p])) ++p;
    if (src_.compare(p, 3, "raw") != 0 || (p + 3 < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[p + 3])) || src_[p + 3] == '_')))
      return false;
    p += 3;
    while (p < src_.size() && is_space(src_[p])) ++p;
    const bool strip_inner_left = p < src_.size() && src_[p] == '-';
    if (strip_inner_left) ++p;
    if (src_.compare(p, 2, "%}") != 0) fail("expected %} after raw");
    const size_t body = p + 2;
    for (size_t q = src_.find("{%", body); q != std::string::npos; q = src_.find("{%", q + 2)) {
      size_t r = q + 2;
      const bool strip_inner_right = r < src_.size() && src_[r] == '-';
      if (strip_inner_right) ++r;
      while (r < src_.size() && is_space(src_[r])) ++r;
      if (src_.compare(r, 6, "endraw") != 0) continue;
      r += 6;
      while (r < src_.size() && is_space(src_[r])) ++r;
      strip_next = r < src_.size() && src_[r] == '-';
      if (strip_next) ++r;
      if (src_.compare(r, 2, "%}") != 0) fail("expected %} after endraw");
      std::string text = src_.substr(body, q - body);
      if (!text.empty() && text[0] == '\n') text.erase(0, 1);  // trim_blocks after raw %}
      if (strip_inner_left) strip_left(text);
      if (strip_inner_right) strip_right(text);
      if (!text.empty()) out_.push_back({Tok::Text, std::move(text), line});
      pos_ = r + 2;
      return true;
    }
    throw Error("template line " + std::to_string(line) + ": raw block without endraw");
  }

  // The tokens of one {{ }} or {% %}; returns whether it closed with -}} / -%}.
  bool lex_tag(bool stmt, int open_line) {
    int braces = 0;
    for (;;) {
      while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
      if (pos_ >= src_.size())
        throw Error("template line " + std::to_string(open_line) + ": unterminated " + (stmt ? "{%" : "{{"));
      const bool dash = src_[pos_] == '-';
      const size_t c = pos_ + (dash ? 1 : 0);
      if (stmt ? src_.compare(c, 2, "%}") == 0 : (braces == 0 && src_.compare(c, 2, "}}") == 0)) {
        out_.push_back({stmt ? Tok::StmtClose : Tok::ExprClose, "", line_at(pos_)});
        pos_ = c + 2;
        return dash;
      }
      const char ch = src_[pos_];
      const int line = line_at(pos_);
      if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') {
        size_t e = pos_;
        while (e < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
        out_.push_back({Tok::Name, src_.substr(pos_, e - pos_), line});
        pos_ = e;
      } else if (std::isdigit(static_cast<unsigned char>(ch))) {
        size_t e = pos_;
        while (e < src_.size() && std::isdigit(static_cast<unsigned char>(src_[e]))) ++e;
        Tok kind = Tok::Int;
        if (e + 1 < src_.size() && src_[e] == '.' && std::isdigit(static_cast<unsigned char>(src_[e + 1]))) {
          kind = Tok::Float;
          ++e;
          while (e < src_.size() && std::isdigit(static_cast<unsigned char>(src_[e]))) ++e;
        }
        out_.push_back({kind, src_.substr(pos_, e - pos_), line});
        pos_ = e;
      } else if (ch == '\'' || ch == '"') {
        out_.push_back({Tok::String, lex_string(ch), line});
      } else {
        static const char* const kOps[] = {"**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<",
                                           ">",  "=",  "(",  ")",  "[",  "]",  "{", "}", ",", ".", ":", "|"};
        const char* op = nullptr;
        for (const char* o : kOps)
          if (src_.compare(pos_, std::char_traits<char>::length(o), o) == 0) {
            op = o;
            break;
          }
        if (!op) fail(std::string("unexpected character '") + ch + "'");
        if (*op == '{') ++braces;
        if (*op == '}') --braces;
        out_.push_back({Tok::Op, op, line});
        pos_ += std::char_traits<char>::length(op);
      }
    }
  }

  std::string lex_string(char quote) {
    const size_t open = pos_++;
    std::string s;
    while (pos_ < src_.size() && src_[pos_] != quote) {
      char c = src_[pos_++];
      if (c == '\\' && pos_ < src_.size()) {
        const char e = src_[pos_++];
        switch (e) {
          case 'n': s += '\n'; break;
          case 't': s += '\t'; break;
          case 'r': s += '\r'; break;
          case 'b': s += '\b'; break;
          case 'f': s += '\f'; break;
          case 'v': s += '\v'; break;
          case '0': s += '\0'; break;
          case '\\': case '\'': case '"': s += e; break;
          case '\n': break;  // a continued line
          default: s += '\\'; s += e;  // Python keeps unknown escapes as written
        }
        continue;
      }
      s += c;
    }
    if (pos_ >= src_.size()) {
      pos_ = open;
      fail("unterminated string");
    }
    ++pos_;
    return s;
  }

  std::string src_;
  std::vector<size_t> newlines_;  // positions of '\n', for line numbers
  size_t pos_ = 0;
  std::vector<Token> out_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

}  // namespace hart::jinja
