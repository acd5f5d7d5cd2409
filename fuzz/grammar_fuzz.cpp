// GBNF grammars and JSON schemas on arbitrary input: a GrammarError / SchemaError, or a grammar
// the matcher can run. Input: byte 0 picks GBNF (even) or a JSON schema (odd); then the grammar
// or schema text, a NUL byte, and a text fed to the matcher byte by byte. A schema the converter
// accepts must give GBNF that parses (anything else is the converter's bug), and a matcher that
// refuses a byte must be left as it was.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "grammar/grammar.h"
#include "grammar/json_schema.h"
#include "grammar/matcher.h"

using namespace hart::grammar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view all(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t nul = all.find('\0');
  const std::string_view source = all.substr(0, nul);
  const std::string_view text = nul == std::string_view::npos ? std::string_view() : all.substr(nul + 1);

  std::string gbnf(source);
  if (data[0] & 1) {
    const auto schema = nlohmann::ordered_json::parse(source, nullptr, /*allow_exceptions=*/false);
    if (schema.is_discarded()) return 0;
    try {
      gbnf = json_schema_to_gbnf(schema);
    } catch (const SchemaError&) {
      return 0;
    }
  }
  Grammar g;
  try {
    g = parse_gbnf(gbnf);
  } catch (const GrammarError& e) {
    if (data[0] & 1) {
      std::fprintf(stderr, "a converted schema gave bad GBNF: %s\n%s\n", e.what(), gbnf.c_str());
      __builtin_trap();
    }
    return 0;
  }
  try {
    Matcher m(g);
    for (char c : text) {
      std::vector<uintptr_t> before, after;
      m.key(before);
      if (!m.feed_byte(uint8_t(c))) {
        m.key(after);
        if (before != after) __builtin_trap();
        break;
      }
    }
    (void)m.complete();
  } catch (const GrammarError&) {  // too ambiguous
  }
  return 0;
}
