// A JSON schema's `pattern` (an ECMA-262 regular expression) as GBNF for the JSON text of the
// strings it matches: what json_schema_to_gbnf writes between a string's quotes.
//
// The subset llama.cpp's json-schema-to-grammar reads, and what a schema for structured output
// uses: literals and escapes, `.`, classes ([a-z0-9_], [^,], \d \w \s and their negations),
// groups ((...), (?:...)), alternation, the quantifiers * + ? {m} {m,} {m,n} (lazy ones too: the
// language is the same), and ^ / $ only at the ends (JSON Schema matches anywhere otherwise, so an
// unanchored end admits any text there). The grammar admits exactly the strings the pattern
// matches, except that a negated class or `.` never stands for a quote, a backslash or a control
// character (their JSON escapes): a subset, so every admitted text still validates. Anything
// else (backreferences, lookaround, \b, \p{...}) throws SchemaError naming it.
#pragma once

#include <string>

namespace hart::grammar {

std::string pattern_to_gbnf(const std::string& pattern);

}  // namespace hart::grammar
