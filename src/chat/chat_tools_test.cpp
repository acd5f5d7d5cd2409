// Tools for templates hart has no hand-written syntax for: llama.cpp's generic JSON format (its
// prompt, schema and reply parser) and syntaxes derived from real templates by probe renders,
// each reply parsed whole and as every prefix a stream would see.
#include <gtest/gtest.h>

#include "chat/chat_formatter.h"
#include "chat/chat_output.h"
#include "chat/chat_testing.h"
#include "chat/chat_tools_generic.h"
#include "common/testdata.h"

namespace hart {
namespace {

using json = nlohmann::ordered_json;
constexpr size_t npos = std::string::npos;

using chat_testing::read_file;
using chat_testing::starts_with;
using chat_testing::streamed;

const json kTools = json::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
   "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                  "required": ["city"]}}}])");

const json kToolTurn = json::parse(R"([
  {"role": "user", "content": "Weather in Paris?"},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_abc", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
  {"role": "tool", "tool_call_id": "call_abc", "content": "sunny"}])");

OutputSyntax generic() {
  OutputSyntax s;
  s.tools = ToolCallSyntax::GENERIC;
  return s;
}

TEST(GenericTools, CallsParsedAndStreamed) {
  const ParsedOutput out = streamed(
      generic(),
      R"({"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_1___"}, {"name": "b", "arguments": {}, "id": "x2345"}]})");
  ASSERT_EQ(out.calls.size(), 2u);
  EXPECT_EQ(out.calls[0].name, "get_weather");
  EXPECT_EQ(out.calls[0].arguments, R"({"city": "Paris"})");
  EXPECT_EQ(out.calls[0].id, "");  // the server names the calls
  EXPECT_EQ(out.calls[1].name, "b");
  EXPECT_EQ(out.content, "");
  const ParsedOutput one = streamed(generic(), R"({"tool_call": {"name": "get_weather", "arguments": {"city": "Rome"}}})");
  ASSERT_EQ(one.calls.size(), 1u);
  EXPECT_EQ(one.calls[0].arguments, R"({"city": "Rome"})");
}

TEST(GenericTools, ResponseStreamsAsContent) {
  const ParsedOutput out = streamed(generic(), R"({"response": "It is \"sunny\" \u00e9\ud83d\ude00 today."})");
  EXPECT_EQ(out.content, "It is \"sunny\" \xc3\xa9\xf0\x9f\x98\x80 today.");
  EXPECT_TRUE(out.calls.empty());
  // A partial response shows what is decoded so far.
  EXPECT_EQ(parse_chat_output(generic(), R"({"response": "It is \"su)", true).content, "It is \"su");
  // Not the generic JSON (no grammar held the model): the reply as it is.
  EXPECT_EQ(parse_chat_output(generic(), "Hello there", false).content, "Hello there");
  EXPECT_EQ(parse_chat_output(generic(), R"({"other": 1})", false).content, R"({"other": 1})");
}

// The prompt as llama.cpp's generic format wrote it: its instruction, then (for a template that
// does not show tools) the tools and the template's own call example, past calls and tool
// results as JSON.
TEST(GenericTools, PromptTellsToolsAndFormat) {
  const ChatFormatter chatml{ChatTemplate::CHATML};
  EXPECT_EQ(chatml.output_syntax(true).tools, ToolCallSyntax::GENERIC);
  ChatRequest r;
  r.messages = kToolTurn;
  r.tools = kTools;
  const std::string prompt = chatml.apply(r);
  const std::string system =
      "<|im_start|>system\nRespond in JSON format, either with `tool_call` (a request to call tools) or with `response` "
      "reply to the user's request\n\nYou can call any of the following tools to satisfy the user's requests: [\n"
      "  {\n    \"type\": \"function\",\n    \"function\": {\n      \"name\": \"get_weather\",\n";
  EXPECT_TRUE(starts_with(prompt, system)) << prompt;
  EXPECT_NE(prompt.find("Example tool call syntax:\n\n{\n  \"tool_calls\": [\n    {\n      \"name\": \"tool_name\",\n"
                        "      \"arguments\": {\n        \"arg1\": \"some_value\"\n      },\n      \"id\": \"call_1___\"\n"
                        "    }\n  ]\n}<|im_end|>\n\n\n<|im_end|>"),
            std::string::npos)
      << prompt;
  EXPECT_NE(prompt.find("<|im_start|>assistant\n{\n  \"tool_calls\": [\n    {\n      \"name\": \"get_weather\",\n"
                        "      \"arguments\": {\n        \"city\": \"Paris\"\n      },\n      \"id\": \"call_abc\"\n"),
            std::string::npos)
      << prompt;
  EXPECT_NE(prompt.find("<|im_start|>user\n{\n  \"tool_response\": {\n    \"content\": \"sunny\",\n    \"tool_call_id\": \"call_abc\"\n  }\n}"),
            std::string::npos)
      << prompt;
  // Without tools nothing changes.
  r.tools = nullptr;
  r.messages = json::array({{{"role", "user"}, {"content", "hi"}}});
  EXPECT_EQ(chatml.apply(r), "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(GenericTools, SchemaOfTheReply) {
  const json s = generic_reply_schema(kTools, {}, true, false);
  ASSERT_TRUE(s.contains("anyOf"));
  EXPECT_EQ(s["anyOf"][1]["required"], json::array({"response"}));
  const json& call = s["anyOf"][0]["properties"]["tool_calls"]["items"];
  EXPECT_EQ(call["properties"]["name"]["const"], "get_weather");
  EXPECT_EQ(call["properties"]["arguments"], kTools[0]["function"]["parameters"]);
  EXPECT_EQ(call["required"], json::array({"name", "arguments", "id"}));
  const json forced = generic_reply_schema(kTools, {"get_weather"}, false, true);
  EXPECT_EQ(forced["required"], json::array({"tool_call"}));
}

// Templates with no tool syntax at all get the generic format; the generic prompt of a Jinja
// template that renders no tools tells them in its system text.
TEST(GenericTools, TemplatesWithoutToolSyntax) {
  HART_REQUIRE_TESTDATA(dir, "chat_templates");
  for (const char* file : {"google-gemma-2-2b-it.jinja", "microsoft-Phi-3.5-mini-instruct.jinja", "HuggingFaceTB-SmolLM3-3B.jinja"}) {
    SCOPED_TRACE(file);
    const ChatFormatter chat(std::make_shared<const JinjaChatTemplate>(read_file(dir + "/templates/" + file), "<s>", "</s>"), false, false);
    EXPECT_EQ(chat.output_syntax(true).tools, ToolCallSyntax::GENERIC);
    ChatRequest r;
    r.messages = kToolTurn;
    r.tools = kTools;
    const std::string prompt = chat.apply(r);
    EXPECT_NE(prompt.find("Respond in JSON format"), std::string::npos) << prompt;
    EXPECT_NE(prompt.find("\"name\": \"get_weather\""), std::string::npos) << prompt;
    EXPECT_NE(prompt.find("sunny"), std::string::npos) << prompt;  // as a tool_response where the template has no tool role
  }
}

struct DerivedCase {
  const char* file;
  std::string reply;  // what a model writes: content, then calls in the template's syntax
  std::vector<std::pair<std::string, std::string>> calls;  // name, arguments
  std::string content;
};

TEST(DerivedTools, RepliesInTheTemplatesOwnSyntax) {
  HART_REQUIRE_TESTDATA(dir, "chat_templates");
  const std::vector<DerivedCase> cases = {
      // Tagged arguments, two calls; a string parameter stays text, an integer is read as JSON.
      {"Qwen3-Coder.jinja",
       "Let me check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nSan Jose, \"CA\"\n</parameter>\n"
       "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n"
       "<parameter=city>\n42\n</parameter>\n</function>\n</tool_call>",
       {{"get_weather", R"({"city": "San Jose, \"CA\"", "days": 3})"}, {"get_weather", R"({"city": "42"})"}},
       "Let me check.\n"},
      {"GLM-4.6.jinja", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n</tool_call>",
       {{"get_weather", R"({"city": "Oslo"})"}}, ""},
      // JSON arguments between the family's own markers.
      {"deepseek-ai-DeepSeek-V3.1.jinja",
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Lima\"}<｜tool▁call▁end｜>"
       "<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\":\"Quito\",\"days\":2}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
       {{"get_weather", R"({"city": "Lima"})"}, {"get_weather", R"({"city":"Quito","days":2})"}}, ""},
      // The function's name as the JSON key, in a list.
      {"Apertus-8B-Instruct.jinja", "<|tools_prefix|>[{\"get_weather\": {\"city\": \"Bern\"}}]<|tools_suffix|>",
       {{"get_weather", R"({"city": "Bern"})"}}, ""},
      {"moonshotai-Kimi-K2.jinja",
       "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Kyiv\"}"
       "<|tool_call_end|><|tool_calls_section_end|>",
       {{"get_weather", R"({"city": "Kyiv"})"}}, ""},
  };
  for (const DerivedCase& c : cases) {
    SCOPED_TRACE(c.file);
    const ChatFormatter chat(std::make_shared<const JinjaChatTemplate>(read_file(dir + "/templates/" + c.file), "<s>", "</s>"), false, false);
    OutputSyntax s = chat.output_syntax(true);
    ASSERT_EQ(s.tools, ToolCallSyntax::DERIVED);
    s.string_args["get_weather"] = {"city"};
    const ParsedOutput out = streamed(s, c.reply);
    EXPECT_EQ(out.content, c.content);
    ASSERT_EQ(out.calls.size(), c.calls.size());
    for (size_t i = 0; i < c.calls.size(); i++) {
      EXPECT_EQ(out.calls[i].name, c.calls[i].first);
      EXPECT_EQ(out.calls[i].arguments, c.calls[i].second);
    }
    // Plain content is content; a reply cut inside its last call's name keeps the calls before
    // it and makes the rest content.
    EXPECT_EQ(parse_chat_output(s, "Just text.", false).content, "Just text.");
    const std::string cut = c.reply.substr(0, c.reply.rfind("get_weather") + 3);
    const ParsedOutput broken = parse_chat_output(s, cut, false);
    EXPECT_EQ(broken.calls.size(), c.calls.size() - 1);
    EXPECT_TRUE(broken.content.size() > c.content.size() + 3 && starts_with(broken.content, c.content) &&
                broken.content.compare(broken.content.size() - 3, 3, "get") == 0)
        << broken.content;
  }
}

// The families hart parses by hand keep their own syntax; every template whose calls the
// probes can take apart gets a derived one, and the rest the generic format.
TEST(DerivedTools, EveryTemplateHasAToolFormat) {
  HART_REQUIRE_TESTDATA(dir, "chat_templates");
  const std::map<std::string, ToolCallSyntax> want = {
      {"Qwen-Qwen3-0.6B.jinja", ToolCallSyntax::HERMES},     {"openai-gpt-oss-120b.jinja", ToolCallSyntax::GPT_OSS},
      {"Qwen3-Coder.jinja", ToolCallSyntax::DERIVED},         {"GLM-4.7-Flash.jinja", ToolCallSyntax::DERIVED},
      {"deepseek-ai-DeepSeek-V3.2.jinja", ToolCallSyntax::DERIVED}, {"tencent-Hy3.jinja", ToolCallSyntax::DERIVED},
      {"google-gemma-2-2b-it.jinja", ToolCallSyntax::GENERIC}, {"llama-cpp-rwkv-world.jinja", ToolCallSyntax::GENERIC},
  };
  for (const auto& [file, syntax] : want) {
    SCOPED_TRACE(file);
    const ChatFormatter chat(std::make_shared<const JinjaChatTemplate>(read_file(dir + "/templates/" + file), "<s>", "</s>"), false, false);
    EXPECT_EQ(tool_call_syntax_name(chat.output_syntax(true).tools), tool_call_syntax_name(syntax));
  }
}

}  // namespace
}  // namespace hart
