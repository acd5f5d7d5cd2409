// JSON Schema -> GBNF, for structured output. Supports what llama.cpp's json-schema-to-grammar
// does for types, objects (properties, required, additionalProperties), enum / const, arrays
// (items, minItems, maxItems), anyOf / oneOf (disjoint branches), $ref into the schema
// ($defs, definitions), strings (minLength, maxLength; pattern, json_pattern.h; format date,
// time, date-time, uuid),
// integers (minimum, maximum, exclusive bounds: digit ranges) and numbers; annotations (title,
// description, ...) are ignored. Any other keyword is refused with a SchemaError naming it and
// where it is, so output never silently ignores part of a schema. Every text the grammar admits
// validates against the schema; where the schema allows more (additionalProperties absent means
// none, as in llama.cpp and OpenAI's strict mode) the grammar admits a subset.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "grammar/grammar.h"

namespace hart::grammar {

class SchemaError : public GrammarError {
 public:
  using GrammarError::GrammarError;
};

// GBNF text whose rule `rule` (by default the root) is a JSON value (followed by optional
// whitespace) valid under `schema`; another name lets a larger grammar wrap the value.
std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema, const std::string& rule = "root");

// How the values are written: JSON, or Gemma 4's tool-call notation (strings between <|"|>
// marks, bare keys, no whitespace; the grammar's strings hold no '<').
enum class ValueNotation { JSON, GEMMA4 };

// GBNF text defining each rule rules[i].first as a value valid under rules[i].second (each
// schema's $refs resolved in itself): several values in one grammar, such as the arguments of
// each function a tool call may name.
std::string json_schemas_to_gbnf(const std::vector<std::pair<std::string, nlohmann::ordered_json>>& rules,
                                 ValueNotation notation = ValueNotation::JSON);

// GBNF text whose root is any JSON object (response_format json_object).
std::string json_object_gbnf();

// A GBNF string literal matching exactly `bytes`.
std::string gbnf_literal(const std::string& bytes);

}  // namespace hart::grammar
