#include "chat/json_scan.h"

#include <cctype>
#include <string>
#include <vector>

namespace hart {
namespace {

// A single pass with an explicit stack of open containers, so deep nesting cannot overflow the
// call stack. `expect` is what the grammar allows next.
class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  JsonScan run() {
    enum Expect { VALUE, KEY_OR_CLOSE, KEY, COLON, COMMA_OR_CLOSE, VALUE_OR_CLOSE } expect = VALUE;
    while (true) {
      while (i_ < s_.size() && is_json_space(s_[i_])) i_++;
      if (i_ == s_.size()) return {JsonScan::PARTIAL, i_};
      const char c = s_[i_];
      switch (expect) {
        case VALUE_OR_CLOSE:
          if (c == ']') {
            close();
            break;
          }
          [[fallthrough]];
        case VALUE:
          if (c == '{') {
            stack_.push_back('{');
            i_++;
            expect = KEY_OR_CLOSE;
            continue;
          }
          if (c == '[') {
            stack_.push_back('[');
            i_++;
            expect = VALUE_OR_CLOSE;
            continue;
          }
          if (JsonScan r = scalar(); r.state != JsonScan::COMPLETE) return r;
          break;
        case KEY_OR_CLOSE:
          if (c == '}') {
            close();
            break;
          }
          [[fallthrough]];
        case KEY:
          if (c != '"') return {JsonScan::INVALID, i_};
          if (JsonScan r = string(); r.state != JsonScan::COMPLETE) return r;
          expect = COLON;
          continue;
        case COLON:
          if (c != ':') return {JsonScan::INVALID, i_};
          i_++;
          expect = VALUE;
          continue;
        case COMMA_OR_CLOSE:
          if (c == ',') {
            i_++;
            expect = stack_.back() == '{' ? KEY : VALUE;
            continue;
          }
          if (c != (stack_.back() == '{' ? '}' : ']')) return {JsonScan::INVALID, i_};
          close();
          break;
      }
      // A value (or a container) just ended.
      if (stack_.empty()) return {JsonScan::COMPLETE, i_};
      expect = COMMA_OR_CLOSE;
    }
  }

 private:
  void close() {
    stack_.pop_back();
    i_++;
  }

  JsonScan string() {
    for (i_++; i_ < s_.size(); i_++) {
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        i_++;
        return {JsonScan::COMPLETE, i_};
      }
      if (c < 0x20) return {JsonScan::INVALID, i_};
      if (c != '\\') continue;
      if (++i_ == s_.size()) break;
      const char e = s_[i_];
      if (e == 'u') {
        for (int k = 0; k < 4; k++) {
          if (++i_ == s_.size()) return {JsonScan::PARTIAL, i_};
          if (!std::isxdigit(static_cast<unsigned char>(s_[i_]))) return {JsonScan::INVALID, i_};
        }
      } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
        return {JsonScan::INVALID, i_};
      }
    }
    return {JsonScan::PARTIAL, i_};
  }

  // A literal, a number or a string at i_.
  JsonScan scalar() {
    const char c = s_[i_];
    if (c == '"') return string();
    for (std::string_view lit : {"true", "false", "null"}) {
      if (c != lit[0]) continue;
      const size_t n = std::min(lit.size(), s_.size() - i_);
      if (s_.compare(i_, n, lit, 0, n) != 0) return {JsonScan::INVALID, i_};
      i_ += n;
      return {n == lit.size() ? JsonScan::COMPLETE : JsonScan::PARTIAL, i_};
    }
    return number();
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  JsonScan number() {
    const size_t start = i_;
    auto digits = [&] {
      const size_t from = i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) i_++;
      return i_ - from;
    };
    auto at_end = [&] { return i_ == s_.size(); };
    if (s_[i_] == '-') i_++;
    if (at_end()) return {JsonScan::PARTIAL, i_};
    if (s_[i_] == '0') i_++;
    else if (digits() == 0) return {JsonScan::INVALID, start};
    if (!at_end() && s_[i_] == '.') {
      i_++;
      if (digits() == 0) return {at_end() ? JsonScan::PARTIAL : JsonScan::INVALID, i_};
    }
    if (!at_end() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      i_++;
      if (!at_end() && (s_[i_] == '+' || s_[i_] == '-')) i_++;
      if (digits() == 0) return {at_end() ? JsonScan::PARTIAL : JsonScan::INVALID, i_};
    }
    // A number is only known to have ended when something follows it.
    return {at_end() ? JsonScan::PARTIAL : JsonScan::COMPLETE, i_};
  }

  std::string_view s_;
  size_t i_ = 0;
  std::vector<char> stack_;
};

}  // namespace

JsonScan scan_json_value(std::string_view s) { return Scanner(s).run(); }

}  // namespace hart
