#include "grammar/json_schema.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>

#include "grammar/grammar_test_util.h"

namespace hart::grammar {
namespace {

using Json = nlohmann::ordered_json;
using testing::expect_language;

Grammar from_schema(const char* schema) { return parse_gbnf(json_schema_to_gbnf(Json::parse(schema))); }

std::string error_of(const char* schema) {
  try {
    json_schema_to_gbnf(Json::parse(schema));
  } catch (const SchemaError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonSchema, Types) {
  const Grammar s = from_schema(R"({"type": "string"})");
  expect_language(s, {R"("a \"q\" \u00e9 é")"},
                  {"\"a\nb\"", "12"});
  const Grammar i = from_schema(R"({"type": "integer"})");
  expect_language(i, {"-120"},
                  {"1.5", "012"});
  const Grammar n = from_schema(R"({"type": "number"})");
  expect_language(n, {"-1.25e+3"},
                  {"1."});
  const Grammar b = from_schema(R"({"type": ["boolean", "null"]})");
  expect_language(b, {"true", "null"},
                  {"0"});
  const Grammar any = from_schema("{}");
  expect_language(any, {R"({"a": [1, {"b": null}], "c": "d"})"},
                  {});
}

TEST(JsonSchema, ObjectsWithRequiredAndOptionalProperties) {
  const Grammar g = from_schema(R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"},
      "c": {"type": "boolean"}}, "required": ["b"]})");
  expect_language(g, {R"({"b": "x"})", R"({"a": 1, "b": "x", "c": true})", R"({ "a":1,"b":"x" })"},
                  {R"({"a": 1})", R"({"b": "x", "d": 1})", R"({"b": 1})", R"({"a": 1,, "b": "x"})"});
  const Grammar none = from_schema(R"({"properties": {"a": {}, "b": {}}})");
  expect_language(none, {"{}", R"({"b": 2})"},
                  {R"({, "b": 2})"});
}

TEST(JsonSchema, AdditionalProperties) {
  const Grammar map = from_schema(R"({"type": "object", "additionalProperties": {"type": "integer"}})");
  expect_language(map, {R"({"x": 1, "y": 2})"},
                  {R"({"x": "1"})"});
  const Grammar closed = from_schema(R"({"type": "object", "additionalProperties": false})");
  expect_language(closed, {"{}"},
                  {R"({"x": 1})"});
}

TEST(JsonSchema, EnumAndConst) {
  const Grammar e = from_schema(R"({"enum": ["red", 1, null, {"k": [true]}]})");
  expect_language(e, {R"("red")", "1", "null", R"({"k":[true]})"},
                  {R"("blue")"});
  const Grammar c = from_schema(R"({"const": "a\"b"})");
  expect_language(c, {R"("a\"b")"},
                  {R"("ab")"});
}

TEST(JsonSchema, ArraysWithItemCounts) {
  const Grammar g = from_schema(R"({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3})");
  expect_language(g, {"[1]", "[1, 2, 3]"},
                  {"[]", "[1, 2, 3, 4]", R"(["1"])"});
  const Grammar empty_ok = from_schema(R"({"type": "array", "maxItems": 2})");
  expect_language(empty_ok, {"[]", R"([1, "x"])"},
                  {"[1, 2, 3]"});
}

TEST(JsonSchema, StringLengths) {
  const Grammar g = from_schema(R"({"type": "string", "minLength": 2, "maxLength": 3})");
  expect_language(g, {R"("ab")", R"("a\nc")"},
                  {R"("a")", R"("abcd")"});
}

TEST(JsonSchema, AnyOfOneOfAndRefs) {
  const Grammar g = from_schema(R"({"anyOf": [{"type": "integer"}, {"$ref": "#/$defs/name"}],
      "$defs": {"name": {"type": "string", "maxLength": 2}}})");
  expect_language(g, {"5", R"("ab")"},
                  {R"("abc")"});
  const Grammar one = from_schema(R"({"oneOf": [{"type": "string"}, {"type": "null"}]})");
  expect_language(one, {"null"},
                  {});
  // A recursive schema through definitions.
  const Grammar tree = from_schema(R"({"$ref": "#/definitions/node", "definitions": {"node": {"type": "object",
      "properties": {"kids": {"type": "array", "items": {"$ref": "#/definitions/node"}}}, "required": ["kids"]}}})");
  expect_language(tree, {R"({"kids": [{"kids": []}, {"kids": [{"kids": []}]}]})"},
                  {R"({"kids": [{}]})"});
}

// Integer bounds become digit ranges: every admitted numeral is in range, and all of a range's
// numerals are admitted (checked exhaustively around the bounds).
TEST(JsonSchema, IntegerBounds) {
  struct Case {
    const char* bounds;
    int64_t lo, hi;  // the admitted range within [-1200, 1200]
  };
  for (const Case& c : {Case{R"("minimum": 0)", 0, 1200}, Case{R"("minimum": 1, "maximum": 12)", 1, 12},
                        Case{R"("minimum": -37, "maximum": 1005)", -37, 1005}, Case{R"("maximum": -3)", -1200, -3},
                        Case{R"("exclusiveMinimum": 99, "exclusiveMaximum": 1000)", 100, 999},
                        Case{R"("minimum": 7.5, "maximum": 7.5e2)", 8, 750}, Case{R"("minimum": -1000, "maximum": -999)", -1000, -999},
                        Case{R"("minimum": 5, "maximum": 5)", 5, 5}, Case{R"("minimum": 190, "maximum": 1109)", 190, 1109}}) {
    const Grammar g = from_schema((std::string(R"({"type": "integer", )") + c.bounds + "}").c_str());
    for (int64_t v = -1200; v <= 1200; v++)
      EXPECT_EQ(testing::matches(g, std::to_string(v)), v >= c.lo && v <= c.hi) << c.bounds << ": " << v;
    EXPECT_FALSE(testing::matches(g, "007")) << c.bounds;
    EXPECT_FALSE(testing::matches(g, "-0")) << c.bounds;
  }
  const Grammar big = from_schema(R"({"type": "integer", "minimum": 10})");
  expect_language(big, {"10", "123456789012345", "9999999999999999"}, {"9", "12345678901234567", "1.5"});
  EXPECT_EQ(error_of(R"({"type": "integer", "minimum": 3, "maximum": 2})"),
            "json_schema: no integer lies within 'minimum' and 'maximum'");
  EXPECT_EQ(error_of(R"({"type": "integer", "maximum": 1e16})"),
            "json_schema: 'maximum' beyond 15 digits is not supported (at /maximum)");
  EXPECT_EQ(error_of(R"({"type": "integer", "multipleOf": 2})"), "json_schema: unsupported keyword 'multipleOf'");
}

TEST(JsonSchema, StringFormats) {
  expect_language(from_schema(R"({"type": "string", "format": "date"})"), {R"("2026-12-02")", R"("1999-01-31")"},
                  {R"("2026-13-02")", R"("2026-12-32")", R"("26-12-02")", R"("2026-12-02T00:00:00Z")", "20261202"});
  expect_language(from_schema(R"({"type": "string", "format": "time"})"), {R"("23:59:60Z")", R"("08:30:00.125+02:00")"},
                  {R"("24:00:00Z")", R"("08:30:00")", R"("8:30:00Z")"});
  expect_language(from_schema(R"({"format": "date-time"})"), {R"("2026-12-02T01:02:03Z")", R"("2026-12-02T01:02:03-05:30")"},
                  {R"("2026-12-02 01:02:03Z")", R"("2026-12-02")", "null"});
  expect_language(from_schema(R"({"type": "string", "format": "uuid"})"), {R"("123e4567-e89b-12d3-a456-426614174000")"},
                  {R"("123e4567e89b12d3a456426614174000")", R"("123e4567-e89b-12d3-a456-42661417400g")"});
  EXPECT_EQ(error_of(R"({"type": "string", "format": "email"})"),
            "json_schema: unsupported format 'email' (supported: date, time, date-time, uuid) (at /format)");
  EXPECT_EQ(error_of(R"({"type": "integer", "format": "int32"})"), "json_schema: 'format' is supported on strings only");
  EXPECT_EQ(error_of(R"({"type": "string", "format": "date", "maxLength": 10})"),
            "json_schema: 'maxLength' beside 'format' is not supported");
}

// A pattern's grammar admits a string's JSON text when std::regex (ECMAScript, the dialect JSON
// Schema names) finds the pattern in it, and for strings without quotes, backslashes or control
// characters (which '.' and negated classes leave out, see json_pattern.h) exactly then: checked
// over random strings of the characters the patterns use.
TEST(JsonSchema, PatternsMatchAsEcmaScriptRegexes) {
  const char* patterns[] = {
      "^[a-c]+$", R"(^\d{2}-\d{1,2}$)", "^(ab|c)*d?$", "b+c", "^a.c$", "^[^,]*,[^,]*$", R"(^\w+@\w+\.b$)",
      "^(?:a|bc){2,3}$", R"(^["\\]+$)", R"(^\s*a\S$)", "a$", "^a|b$", R"(^[\n\t ]?x)", "^(a(b)?)+?$",
      R"(^[^\d\s]{0,2}\D$)", "^$", "^[-a]{2}[a-]$", "x{2}", R"(^\x41\u0062$)", "^[.][^.]$"};
  const std::string alphabet = "abcdx0123-,.@ \t\n\"\\AB";
  std::mt19937 rng(17);
  for (const char* p : patterns) {
    SCOPED_TRACE(p);
    const Grammar g = parse_gbnf(json_schema_to_gbnf(Json{{"type", "string"}, {"pattern", p}}));
    const std::regex re(p, std::regex::ECMAScript);
    for (int i = 0; i < 3000; i++) {
      std::string s(rng() % 7, ' ');
      for (char& c : s) c = alphabet[rng() % alphabet.size()];
      const bool want = std::regex_search(s, re), got = testing::matches(g, Json(s).dump());
      const bool plain = s.find_first_of("\"\\\t\n") == std::string::npos;
      if (got || plain) {
        EXPECT_EQ(got, want) << Json(s).dump();
      }
    }
  }
  EXPECT_EQ(error_of(R"({"type": "string", "pattern": "^(a)\\1$"})"),
            "json_schema: pattern '^(a)\\1$': the escape '\\1' is not supported (at /pattern)");
  EXPECT_EQ(error_of(R"({"type": "string", "pattern": "^(?=a)a$"})"),
            "json_schema: pattern '^(?=a)a$': a lookaround or named group '(?' is not supported (at /pattern)");
  EXPECT_EQ(error_of(R"({"type": "string", "pattern": "a^b"})"),
            "json_schema: pattern 'a^b': '^' inside the pattern is not supported (at /pattern)");
  EXPECT_EQ(error_of(R"({"type": "string", "pattern": "^a", "maxLength": 3})"),
            "json_schema: 'maxLength' beside 'pattern' is not supported");
  // An unbounded repetition of a part that can match nothing would be a left-recursive rule
  // (found by fuzz_grammar); bounded ones and repetitions of non-empty parts stay.
  auto schema = [](const char* p) { return std::string(R"({"type": "string", "pattern": ")") + p + "\"}"; };
  for (const char* p : {"^[A-Z]{2}(-\\\\d+|x?)*$", "^(a?)+$", "^(b*){2,}$", "^((c?))*$"})
    EXPECT_NE(error_of(schema(p).c_str()).find("can match nothing"), std::string::npos) << p;
  for (const char* p : {"^(a?){2,5}$", "^(a?b)*$", "^(a|b)+$", "^(x?)?$"})
    EXPECT_NO_THROW(from_schema(schema(p).c_str())) << p;
}

TEST(JsonSchema, UnsupportedKeywordsAreNamed) {
  EXPECT_EQ(error_of(R"({"type": "array", "uniqueItems": true})"), "json_schema: unsupported keyword 'uniqueItems'");
  EXPECT_EQ(error_of(R"({"type": "object", "properties": {"a": {"type": "string", "not": {}}}})"),
            "json_schema: unsupported keyword 'not' (at /properties/a)");
  EXPECT_EQ(error_of(R"({"type": "number", "minimum": 0})"), "json_schema: unsupported keyword 'minimum'");
  EXPECT_EQ(error_of(R"({"oneOf": [{"type": "string"}, {"maxLength": 3}]})"),
            "json_schema: 'oneOf' whose branches may overlap is not supported (give each branch a different type or "
            "const, or use anyOf) (at /oneOf)");
  EXPECT_EQ(error_of(R"({"$ref": "#/$defs/missing"})"), "json_schema: '#/$defs/missing' does not point into the schema (at /$ref)");
  EXPECT_EQ(error_of(R"({"$ref": "https://example.com/s.json"})"),
            "json_schema: only local references ('#/...') are supported, not 'https://example.com/s.json' (at /$ref)");
  EXPECT_EQ(error_of(R"({"type": "object", "properties": {"a": {}}, "additionalProperties": true})"),
            "json_schema: 'additionalProperties' beside 'properties' is not supported");
  EXPECT_EQ(error_of(R"({"type": "object", "required": ["x"]})"),
            "json_schema: required property 'x' has no schema in 'properties' (at /required)");
  EXPECT_EQ(error_of(R"({"type": "strin"})"), "json_schema: unknown type 'strin' (at /type)");
  EXPECT_EQ(error_of("false"), "json_schema: the schema 'false' allows no value");
  EXPECT_EQ(error_of(R"({"minimum": 3})"), "json_schema: unsupported keyword 'minimum'");
}

TEST(JsonSchema, JsonObjectGrammar) {
  const Grammar g = parse_gbnf(json_object_gbnf());
  expect_language(g, {R"({"a": [1, 2.5, "x", {"b": false}]})"},
                  {"[1]", R"({"a": 1)"});
}

}  // namespace
}  // namespace hart::grammar
