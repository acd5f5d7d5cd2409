// Forced tool calls: each family's grammar admits exactly the calls its reply parser reads back,
// with the named function and arguments valid under its schema.
#include "serve/tool_grammar.h"

#include <gtest/gtest.h>

#include "common/testdata.h"
#include "gguf/gguf.h"
#include "grammar/grammar_constraint.h"
#include "grammar/grammar_test_util.h"
#include "grammar/tokenizer_vocab.h"
#include "serve/chat_reply.h"
#include "serve/openai_api.h"

namespace hart::serve {
namespace {

using Body = nlohmann::ordered_json;
using grammar::testing::matches;

const Body kTools = Body::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
     "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city", "days"]}}},
  {"type": "function", "function": {"name": "ping"}}
])");

struct Family {
  const char* name;
  OutputSyntax syntax;
  std::string (*call)(const std::string& name, const std::string& args);  // the syntax's text of one call
};

// JSON arguments in Gemma 4's notation: strings between <|"|> marks, bare keys, no spaces.
std::string gemma(const Body& v) {
  if (v.is_string()) return "<|\"|>" + v.get<std::string>() + "<|\"|>";
  if (!v.is_object()) return v.dump();
  std::string out = "{";
  for (auto it = v.begin(); it != v.end(); ++it) out += (it == v.begin() ? "" : ",") + it.key() + ":" + gemma(*it);
  return out + "}";
}

OutputSyntax syntax(ToolCallSyntax t, bool named_args = false) {
  OutputSyntax s;
  s.tools = t;
  s.named_args = named_args;
  return s;
}

// A syntax derived from a template (DeepSeek V3.1's layout, in ASCII): JSON arguments between
// the template's texts.
OutputSyntax derived() {
  using P = DerivedToolSyntax::Piece;
  DerivedToolSyntax d;
  d.section_open = "<calls>", d.section_close = "</calls>", d.parallel = true;
  d.call = {{P::TEXT, "<call>"}, {P::NAME, ""}, {P::TEXT, "<sep>"}, {P::ARGS, ""}, {P::TEXT, "</call>"}};
  OutputSyntax s = syntax(ToolCallSyntax::DERIVED);
  s.derived = std::make_shared<const DerivedToolSyntax>(d);
  return s;
}

const Family kFamilies[] = {
    {"hermes", syntax(ToolCallSyntax::HERMES),
     [](const std::string& n, const std::string& a) {
       return "<tool_call>\n{\"name\": \"" + n + "\", \"arguments\": " + a + "}\n</tool_call>";
     }},
    {"llama3", syntax(ToolCallSyntax::LLAMA3),
     [](const std::string& n, const std::string& a) { return "{\"name\": \"" + n + "\", \"parameters\": " + a + "}"; }},
    {"mistral", syntax(ToolCallSyntax::MISTRAL),
     [](const std::string& n, const std::string& a) {
       return "[TOOL_CALLS][{\"name\": \"" + n + "\", \"arguments\": " + a + "}]";
     }},
    {"mistral-args", syntax(ToolCallSyntax::MISTRAL, true),
     [](const std::string& n, const std::string& a) { return "[TOOL_CALLS]" + n + "[ARGS]" + a; }},
    {"gpt-oss", syntax(ToolCallSyntax::GPT_OSS),
     [](const std::string& n, const std::string& a) {
       return "<|channel|>commentary to=functions." + n + " <|constrain|>json<|message|>" + a;
     }},
    {"gemma4", syntax(ToolCallSyntax::GEMMA4),
     [](const std::string& n, const std::string& a) {
       return "<|tool_call>call:" + n + gemma(Body::parse(a)) + "<tool_call|>";
     }},
    {"derived", derived(),
     [](const std::string& n, const std::string& a) { return "<calls><call>" + n + "<sep>" + a + "</call></calls>"; }},
};

// The generic format's grammar: a call or a response as JSON, read back by its parser.
TEST(GenericReply, GrammarAdmitsCallsOrAResponse) {
  const OutputSyntax s = syntax(ToolCallSyntax::GENERIC);
  const auto any = generic_reply_grammar(kTools, {}, true);
  const std::string call = R"({"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}, "id": "call_1"}]})";
  for (const std::string& ok : {call, std::string(R"({"response": "Hello"})"),
                                std::string(R"({"tool_calls": [{"name": "ping", "arguments": {}, "id": "abcd"}, {"name": "ping", "arguments": {}, "id": "efgh"}]})")})
    EXPECT_TRUE(matches(*any, ok)) << ok;
  for (const std::string& bad : {std::string("Hello"), std::string(R"({"tool_calls": []})"),
                                 std::string(R"({"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_1"}]})"),
                                 std::string(R"({"tool_calls": [{"name": "nope", "arguments": {}, "id": "abcd"}]})")})
    EXPECT_FALSE(matches(*any, bad)) << bad;
  const ParsedOutput out = parse_chat_output(s, call, false);
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(Body::parse(out.calls[0].arguments), Body::parse(R"({"city": "Paris", "days": 3})"));
  // Forced: no response; parallel calls off: {"tool_call": ...}.
  const auto forced = generic_reply_grammar(kTools, {"ping"}, false);
  EXPECT_TRUE(matches(*forced, R"({"tool_call": {"name": "ping", "arguments": {}}})"));
  EXPECT_FALSE(matches(*forced, R"({"response": "Hello"})"));
  EXPECT_FALSE(matches(*forced, R"({"tool_call": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}})"));
  EXPECT_EQ(parse_chat_output(s, R"({"tool_call": {"name": "ping", "arguments": {}}})", false).calls.size(), 1u);
}

TEST(ForcedCall, EachFamilyAdmitsValidCallsAndItsParserReadsThemBack) {
  const std::string args = R"({"city": "Paris", "days": 3})";
  for (const Family& f : kFamilies) {
    SCOPED_TRACE(f.name);
    const auto any = forced_call_grammar(f.syntax, kTools, {"get_weather", "ping"});
    for (const auto& [name, a] : {std::pair<std::string, std::string>{"get_weather", args}, {"ping", "{}"}}) {
      const std::string text = f.call(name, a);
      EXPECT_TRUE(matches(*any, text)) << text;
      const ParsedOutput out = parse_chat_output(f.syntax, text, false);
      ASSERT_EQ(out.calls.size(), 1u) << text;
      EXPECT_EQ(out.calls[0].name, name);
      EXPECT_EQ(Body::parse(out.calls[0].arguments), Body::parse(a));
      EXPECT_EQ(out.content, "");
    }
    // Arguments that break the schema, a name no tool has, another function's arguments, text
    // around the call, two calls.
    for (const std::string& bad : {f.call("get_weather", R"({"city": "Paris", "days": "3"})"),
                                   f.call("get_weather", R"({"city": "Paris"})"), f.call("get_wether", args),
                                   f.call("ping", args), "Sure. " + f.call("ping", "{}"),
                                   f.call("ping", "{}") + f.call("ping", "{}")})
      EXPECT_FALSE(matches(*any, bad)) << bad;
    // A named choice admits that function only.
    const auto named = forced_call_grammar(f.syntax, kTools, {"ping"});
    EXPECT_TRUE(matches(*named, f.call("ping", "{}")));
    EXPECT_FALSE(matches(*named, f.call("get_weather", args)));
  }
}

TEST(ForcedCall, HermesClosesAnOpenThinkBlockFirst) {
  OutputSyntax s = syntax(ToolCallSyntax::HERMES);
  s.think_open = "<think>", s.think_close = "</think>", s.thinking_open = true;
  const auto g = forced_call_grammar(s, kTools, {"ping"});
  const std::string text = "</think>\n\n<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>";
  EXPECT_TRUE(matches(*g, text));
  EXPECT_EQ(parse_chat_output(s, text, false).calls.size(), 1u);
}

// Gemma 4's notation: enum values and keys as it writes them, no '<' inside a string (so none
// ends at a stray mark).
TEST(ForcedCall, GemmaNotation) {
  const Body tools = Body::parse(R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
      "properties": {"unit": {"enum": ["C", "F"]}, "odd key": {"type": "boolean"}, "tags": {"type": "array",
      "items": {"type": "string", "maxLength": 3}}}, "required": ["unit"]}}}])");
  const auto g = forced_call_grammar(syntax(ToolCallSyntax::GEMMA4), tools, {"f"});
  grammar::testing::expect_language(
      *g,
      {R"(<|tool_call>call:f{unit:<|"|>C<|"|>}<tool_call|>)",
       R"(<|tool_call>call:f{unit:<|"|>F<|"|>,<|"|>odd key<|"|>:true,tags:[<|"|>ab<|"|>,<|"|><|"|>]}<tool_call|>)"},
      {R"(<|tool_call>call:f{unit:"C"}<tool_call|>)", R"(<|tool_call>call:f{"unit":<|"|>C<|"|>}<tool_call|>)",
       R"(<|tool_call>call:f{unit:<|"|>C<|"|>, tags:[]}<tool_call|>)", R"(<|tool_call>call:f{unit:<|"|>K<|"|>}<tool_call|>)",
       R"(<|tool_call>call:f{unit:<|"|>C<|"|>,tags:[<|"|>a<b<|"|>]}<tool_call|>)"});
  const std::string text = R"(<|tool_call>call:f{unit:<|"|>F<|"|>,<|"|>odd key<|"|>:false}<tool_call|>)";
  const ParsedOutput out = parse_chat_output(syntax(ToolCallSyntax::GEMMA4), text, false);
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(Body::parse(out.calls[0].arguments), Body::parse(R"({"unit": "F", "odd key": false})"));
}

TEST(ForcedCall, RefusedWhereNoGrammarExistsOrTheSchemaIsUnsupported) {
  try {
    forced_call_grammar(syntax(ToolCallSyntax::NONE), kTools, {"ping"});
    ADD_FAILURE() << "no 400 without a call syntax";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "tool_choice");
  }
  const Body tools = Body::parse(R"([{"type": "function", "function": {"name": "f", "parameters":
      {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a)\\1$"}}}}}])");
  for (const Family& f : kFamilies) {
    try {
      forced_call_grammar(f.syntax, tools, {"f"});
      ADD_FAILURE() << "no 400 for " << f.name;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      EXPECT_EQ(e.param, "tools");
      EXPECT_NE(std::string(e.what()).find("pattern"), std::string::npos) << e.what();
    }
  }
}

// Mistral's templates want their calls' ids back as 9 letters and digits.
TEST(ForcedCall, MistralCallsGetNineCharacterIds) {
  for (const auto& [t, len] : {std::pair{ToolCallSyntax::MISTRAL, size_t(9)}, {ToolCallSyntax::HERMES, size_t(29)}}) {
    ChatReply reply(syntax(t));
    const Body d = reply.delta(kFamilies[t == ToolCallSyntax::MISTRAL ? 2 : 0].call("ping", "{}"), true);
    ASSERT_TRUE(d.contains("tool_calls")) << d.dump();
    const std::string id = d["tool_calls"][0]["id"];
    EXPECT_EQ(id.size(), len) << id;
  }
}

// A marker that is a control token (Mistral's [TOOL_CALLS], gpt-oss's <|channel|>) is text to the
// grammar only where the reply shows it: qwen3-tiny's <|im_start|> stands in for one.
TEST(ForcedCall, ShownControlTokensAreGrammarText) {
  HART_REQUIRE_TESTDATA(path, "models/qwen3-tiny-Q8_0.gguf");
  const auto tok = Tokenizer::from_gguf(*gguf::File::open(path, gguf::LoadMode::Mmap));
  const std::vector<int32_t> shown = marker_tokens(*tok, {"<|im_start|>"});
  ASSERT_EQ(shown.size(), 1u);
  const auto g = std::make_shared<const grammar::Grammar>(grammar::parse_gbnf("root ::= \"<|im_start|>x\""));
  const auto with = grammar::vocab_trie_for(*tok, shown), without = grammar::vocab_trie_for(*tok);
  grammar::GrammarConstraint a(g, *with), b(g, *without);
  EXPECT_TRUE(a.allows(shown[0]));
  EXPECT_FALSE(b.allows(shown[0]));
  a.accept(shown[0]);
  a.accept(tok->encode("x", false, false)[0]);
  EXPECT_TRUE(a.complete());
}

}  // namespace
}  // namespace hart::serve
