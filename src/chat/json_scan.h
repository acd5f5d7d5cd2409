// How far a JSON value reaches in a model's output that may still be growing: a complete value
// (and where it ends), a valid beginning of one that more text could finish, or text that no
// continuation can make JSON. Tool-call parsers use it to stream arguments while they are still
// being generated and to tell a finished call from a broken one.
#pragma once

#include <cstddef>
#include <string_view>

namespace hart {

// JSON's whitespace (RFC 8259): space, tab, line feed, carriage return.
inline bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

struct JsonScan {
  enum State { COMPLETE, PARTIAL, INVALID } state;
  size_t end;  // COMPLETE: one past the value's last byte; otherwise where scanning stopped
};

// Scans the one JSON value at the start of `s` (leading whitespace allowed). Text after a
// complete value is not looked at. A number that reaches the end of `s` is PARTIAL (more digits
// may follow).
JsonScan scan_json_value(std::string_view s);

}  // namespace hart
