#include "serve/structured_output.h"

#include <optional>

#include "grammar/json_schema.h"
#include "serve/openai_api.h"

namespace hart::serve {
namespace {

using Body = nlohmann::ordered_json;

// Where a request's grammar comes from: GBNF text, and the field to blame for it.
struct Source {
  std::string gbnf, param;
};

std::string schema_gbnf(const Body& schema, const std::string& param) {
  if (!schema.is_object() && !schema.is_boolean()) invalid_request(param, "'" + param + "' must be a JSON schema (an object)");
  try {
    return grammar::json_schema_to_gbnf(schema);
  } catch (const grammar::SchemaError& e) {
    invalid_request(param, e.what());
  } catch (const nlohmann::json::exception& e) {
    invalid_request(param, std::string("json_schema: ") + e.what());
  }
}

// {"type": "text"} asks for nothing; json_object and json_schema for JSON.
std::optional<Source> from_response_format(const Body& rf) {
  const std::string param = "response_format";
  if (!rf.is_object()) invalid_request(param, "'response_format' must be an object");
  auto t = rf.find("type");
  if (t == rf.end() || !t->is_string()) invalid_request(param, "'response_format.type' must be a string");
  const std::string type = t->get<std::string>();
  if (type == "text") return std::nullopt;
  if (type == "json_object") {
    auto s = rf.find("schema");  // llama-server's extension
    if (s == rf.end() || s->is_null()) return Source{grammar::json_object_gbnf(), param};
    return Source{schema_gbnf(*s, param), param};
  }
  if (type == "json_schema") {
    auto js = rf.find("json_schema");
    if (js == rf.end() || !js->is_object()) invalid_request(param, "'response_format.json_schema' must be an object");
    if (auto n = js->find("name"); n != js->end() && !n->is_string())
      invalid_request(param, "'response_format.json_schema.name' must be a string");
    if (auto st = js->find("strict"); st != js->end() && !st->is_boolean() && !st->is_null())
      invalid_request(param, "'response_format.json_schema.strict' must be a boolean");
    auto s = js->find("schema");
    // As in llama-server, no schema means any JSON value. Output is always held to the schema,
    // strict or not.
    return Source{schema_gbnf(s == js->end() || s->is_null() ? Body::object() : *s, param), param};
  }
  invalid_request(param, "'response_format.type' must be \"text\", \"json_object\" or \"json_schema\", got \"" + type + "\"");
}

}  // namespace

std::shared_ptr<const grammar::Grammar> requested_grammar(const Body& body) {
  std::vector<Source> sources;
  if (auto rf = body.find("response_format"); rf != body.end() && !rf->is_null())
    if (auto s = from_response_format(*rf)) sources.push_back(std::move(*s));
  if (auto js = body.find("json_schema"); js != body.end() && !js->is_null())
    sources.push_back({schema_gbnf(*js, "json_schema"), "json_schema"});
  if (auto g = body.find("grammar"); g != body.end() && !g->is_null()) {
    if (!g->is_string()) invalid_request("grammar", "'grammar' must be a string of GBNF");
    sources.push_back({g->get<std::string>(), "grammar"});
  }
  if (sources.empty()) return nullptr;
  if (sources.size() > 1)
    invalid_request(sources[1].param, "use only one of 'response_format' (JSON), 'json_schema' and 'grammar'");
  try {
    return std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(sources[0].gbnf));
  } catch (const grammar::GrammarError& e) {
    invalid_request(sources[0].param, e.what());
  }
}

}  // namespace hart::serve
