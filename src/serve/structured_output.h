// Structured output: the grammar a request constrains its completion to, from OpenAI's
// `response_format` ({"type": "json_object"}, optionally with llama-server's "schema", or
// {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}) or llama-server's
// `json_schema` (a bare schema) and `grammar` (GBNF text) fields.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>

#include "grammar/grammar.h"

namespace hart::serve {

// nullptr when the request asks for plain text. Throws ApiError (400) naming the field for a
// malformed format, schema or grammar, a schema keyword the converter does not support, or
// more than one of the fields.
std::shared_ptr<const grammar::Grammar> requested_grammar(const nlohmann::ordered_json& body);

}  // namespace hart::serve
