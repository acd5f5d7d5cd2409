// The output parsers of each family: complete replies, every prefix of them as a stream would
// see it (results only grow, and end at the complete parse), malformed calls as content.
#include "chat/chat_output.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <random>

#include "chat/chat_testing.h"
#include "chat/json_scan.h"
#include "common/testdata.h"

namespace hart {
namespace {

OutputSyntax syntax(ToolCallSyntax t, bool think = false) {
  OutputSyntax s;
  s.tools = t;
  if (think) s.think_open = "<think>", s.think_close = "</think>";
  return s;
}

using chat_testing::expect_extends;
using chat_testing::starts_with;
using chat_testing::streamed;

TEST(JsonScan, CompletePartialInvalid) {
  EXPECT_EQ(scan_json_value(R"( {"a": [1, 2.5e3, "x\"y", true, null]} tail)").state, JsonScan::COMPLETE);
  EXPECT_EQ(scan_json_value(R"({"a": [1, 2.5e3, "x\"y", true, null]} tail)").end, 37u);
  for (const char* p : {"", "{", R"({"a)", R"({"a":)", R"({"a": tr)", R"({"a": 12)", R"({"a": "\u00)", "[1,"})
    EXPECT_EQ(scan_json_value(p).state, JsonScan::PARTIAL) << p;
  for (const char* p : {"}", R"({"a" 1})", R"({a: 1})", "[1,]", R"({"a": tx})", "[01]", "\"\x01\"", R"("\q")"})
    EXPECT_EQ(scan_json_value(p).state, JsonScan::INVALID) << p;
}

TEST(ChatOutput, HermesQwenCallsAndReasoning) {
  const std::string text =
      "<think>\nI should look it up.\n</think>\n\nLet me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
      "{\"city\": \"Paris\", \"days\": [1, 2]}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";
  const ParsedOutput out = streamed(syntax(ToolCallSyntax::HERMES, true), text);
  EXPECT_EQ(out.reasoning, "I should look it up.");
  EXPECT_EQ(out.content, "Let me check.\n");
  ASSERT_EQ(out.calls.size(), 2u);
  EXPECT_EQ(out.calls[0].name, "get_weather");
  EXPECT_EQ(out.calls[0].arguments, R"({"city": "Paris", "days": [1, 2]})");
  EXPECT_EQ(out.calls[1].name, "get_time");
  EXPECT_EQ(out.calls[1].arguments, "{}");
}

TEST(ChatOutput, PartialCallShowsNameAndArgumentsSoFar) {
  const OutputSyntax s = syntax(ToolCallSyntax::HERMES);
  ParsedOutput p = parse_chat_output(s, "Sure<tool_call>\n{\"name\": \"f\", \"arguments\": {\"q\": \"ab", true);
  EXPECT_EQ(p.content, "Sure");
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(p.calls[0].name, "f");
  EXPECT_EQ(p.calls[0].arguments, "{\"q\": \"ab");
  // A possible marker is held back, not sent as content.
  EXPECT_EQ(parse_chat_output(s, "Sure<tool_c", true).content, "Sure");
  EXPECT_EQ(parse_chat_output(s, "Sure<tool_c", false).content, "Sure<tool_c");
  // Cut off inside the call: the final parse gives its text back as content.
  const ParsedOutput cut = parse_chat_output(s, "Sure<tool_call>\n{\"name\": \"f\", \"arguments\": {\"q\"", false);
  EXPECT_TRUE(cut.calls.empty());
  EXPECT_EQ(cut.content, "Sure<tool_call>\n{\"name\": \"f\", \"arguments\": {\"q\"");
}

TEST(ChatOutput, MalformedCallsAreContent) {
  const OutputSyntax s = syntax(ToolCallSyntax::HERMES);
  for (const std::string bad : {"<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": }}</tool_call>",
                                "<tool_call>{\"arguments\": {}}</tool_call>", "<tool_call>not json</tool_call>",
                                "<tool_call>{\"name\": 3, \"arguments\": {}}</tool_call>"}) {
    const ParsedOutput out = parse_chat_output(s, "a " + bad + " b", false);
    EXPECT_TRUE(out.calls.empty()) << bad;
    EXPECT_EQ(out.content, "a " + bad + " b") << bad;
  }
  // A good call after a bad one still counts.
  const ParsedOutput mixed =
      parse_chat_output(s, "<tool_call>{oops}</tool_call><tool_call>{\"name\": \"g\", \"arguments\": {\"x\": 1}}</tool_call>", false);
  ASSERT_EQ(mixed.calls.size(), 1u);
  EXPECT_EQ(mixed.calls[0].name, "g");
  EXPECT_EQ(mixed.content, "<tool_call>{oops}</tool_call>");
}

TEST(ChatOutput, StringArgumentsAreTheirJson) {
  const ParsedOutput out = streamed(syntax(ToolCallSyntax::HERMES),
                                    "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>");
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].arguments, "{\"a\": 1}");
}

TEST(ChatOutput, OneCallWhenParallelCallsAreOff) {
  OutputSyntax s = syntax(ToolCallSyntax::HERMES);
  s.max_calls = 1;
  const ParsedOutput out = streamed(s, "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>"
                                       "<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call> trailing");
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].name, "a");
  EXPECT_EQ(out.content, "");
}

TEST(ChatOutput, Llama3JsonAndBuiltinCalls) {
  const OutputSyntax s = syntax(ToolCallSyntax::LLAMA3);
  ParsedOutput out = streamed(s, "{\"type\": \"function\", \"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}");
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].name, "get_weather");
  EXPECT_EQ(out.calls[0].arguments, R"({"city": "Oslo"})");
  EXPECT_EQ(out.content, "");
  out = streamed(s, "<|python_tag|>brave_search.call(query=\"weather in Oslo\", count=3)");
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].name, "brave_search");
  EXPECT_EQ(out.calls[0].arguments, R"({"query":"weather in Oslo","count":3})");
  // A JSON reply that is not a call, and plain text, are content.
  EXPECT_EQ(streamed(s, "{\"answer\": 42}").content, "{\"answer\": 42}");
  EXPECT_EQ(streamed(s, "Hello there").content, "Hello there");
  const std::string cut = "{\"name\": \"f\", \"parameters\": {\"a\": 1}";  // never closed
  EXPECT_TRUE(parse_chat_output(s, cut, false).calls.empty());
  EXPECT_EQ(parse_chat_output(s, cut, false).content, cut);
}

TEST(ChatOutput, MistralBothSyntaxes) {
  const OutputSyntax s = syntax(ToolCallSyntax::MISTRAL);
  ParsedOutput out = streamed(s, "Checking.[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"a\": 1}, \"id\": \"abc123XYZ\"}, "
                                 "{\"name\": \"g\", \"arguments\": {}}]");
  EXPECT_EQ(out.content, "Checking.");
  ASSERT_EQ(out.calls.size(), 2u);
  EXPECT_EQ(out.calls[0].id, "abc123XYZ");
  EXPECT_EQ(out.calls[0].arguments, R"({"a":1})");
  EXPECT_EQ(out.calls[1].name, "g");
  out = streamed(s, "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Rome\"}[TOOL_CALLS]get_time[ARGS]{}");
  ASSERT_EQ(out.calls.size(), 2u);
  EXPECT_EQ(out.calls[0].name, "get_weather");
  EXPECT_EQ(out.calls[0].arguments, R"({"city": "Rome"})");
  EXPECT_EQ(out.calls[1].name, "get_time");
  EXPECT_EQ(parse_chat_output(s, "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": [}]", false).content,
            "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": [}]");
}

TEST(ChatOutput, GptOssHarmonyChannels) {
  const OutputSyntax s = syntax(ToolCallSyntax::GPT_OSS);
  ParsedOutput out = streamed(s, "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary "
                                 "to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Tokyo\"}");
  EXPECT_EQ(out.reasoning, "Need the weather.");
  EXPECT_EQ(out.content, "");
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].name, "get_weather");
  EXPECT_EQ(out.calls[0].arguments, R"({"city": "Tokyo"})");
  out = streamed(s, "<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>Hi there!");
  EXPECT_EQ(out.reasoning, "Easy.");
  EXPECT_EQ(out.content, "Hi there!");
  EXPECT_TRUE(out.calls.empty());
}

TEST(ChatOutput, Gemma4CallsInItsNotation) {
  OutputSyntax s = syntax(ToolCallSyntax::GEMMA4);
  s.think_open = "<|channel>thought", s.think_close = "<channel|>";
  const ParsedOutput out = streamed(s, "<|channel>thought\nCity first.<channel|>On it.<|tool_call>call:get_weather{city:<|\"|>Paris, FR<|\"|>,"
                                       "days:3,opts:{metric:true,tags:[<|\"|>a<|\"|>,2.5]},note:None}<tool_call|>");
  EXPECT_EQ(out.reasoning, "City first.");
  EXPECT_EQ(out.content, "On it.");
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].name, "get_weather");
  EXPECT_EQ(nlohmann::json::parse(out.calls[0].arguments),
            nlohmann::json::parse(R"({"city": "Paris, FR", "days": 3, "opts": {"metric": true, "tags": ["a", 2.5]}, "note": null})"));
  EXPECT_TRUE(parse_chat_output(s, "<|tool_call>call:f{a:<|\"|>x}<tool_call|>", false).calls.empty());  // string never closed
  EXPECT_EQ(parse_chat_output(s, "<|tool_call>call:f{a:oops}<tool_call|>", false).content, "<|tool_call>call:f{a:oops}<tool_call|>");
}

TEST(ChatOutput, ReasoningOnlyFamiliesAndOpenThinking) {
  OutputSyntax s = syntax(ToolCallSyntax::NONE, true);
  ParsedOutput out = streamed(s, "<think>hmm</think>\n\nAnswer");
  EXPECT_EQ(out.reasoning, "hmm");
  EXPECT_EQ(out.content, "Answer");
  s.thinking_open = true;  // the prompt opened the block
  out = streamed(s, "still thinking</think>Done");
  EXPECT_EQ(out.reasoning, "still thinking");
  EXPECT_EQ(out.content, "Done");
  EXPECT_EQ(streamed(syntax(ToolCallSyntax::NONE), "<think>x</think>y").content, "<think>x</think>y");
}

TEST(ChatOutput, TemplateSyntaxDetection) {
  EXPECT_EQ(output_syntax_of_template("{{'<|im_start|>'}}<tool_call>{{ '<think>' }}").tools, ToolCallSyntax::HERMES);
  EXPECT_EQ(output_syntax_of_template("<tool_call>").think_open, "");
  EXPECT_EQ(output_syntax_of_template("<tool_call><think>").think_close, "</think>");
  EXPECT_EQ(output_syntax_of_template("<tool_call>\n<function=").tools, ToolCallSyntax::NONE);
  EXPECT_EQ(output_syntax_of_template("<|start_header_id|> parameters").tools, ToolCallSyntax::LLAMA3);
  EXPECT_EQ(output_syntax_of_template("[INST][TOOL_CALLS]").tools, ToolCallSyntax::MISTRAL);
  EXPECT_EQ(output_syntax_of_template("<|channel|><|message|><think>").tools, ToolCallSyntax::GPT_OSS);
  EXPECT_EQ(output_syntax_of_template("<|im_start|>").tools, ToolCallSyntax::NONE);
}

// The syntax of real templates (../shared/testdata/chat_templates/templates).
TEST(ChatOutput, SyntaxOfRealTemplates) {
  HART_REQUIRE_TESTDATA(dir, "chat_templates/templates");
  auto of = [&](const std::string& name) {
    std::ifstream f(dir + "/" + name + ".jinja");
    std::stringstream ss;
    ss << f.rdbuf();
    EXPECT_FALSE(ss.str().empty()) << name;
    return output_syntax_of_template(ss.str());
  };
  using T = ToolCallSyntax;
  const std::vector<std::pair<std::string, T>> want = {
      {"Qwen-Qwen3-0.6B", T::HERMES}, {"Qwen-Qwen2.5-7B-Instruct", T::HERMES}, {"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use", T::HERMES},
      {"MiMo-VL", T::HERMES}, {"meta-llama-Llama-3.1-8B-Instruct", T::LLAMA3}, {"meta-llama-Llama-3.2-3B-Instruct", T::LLAMA3},
      {"mistralai-Mistral-Nemo-Instruct-2407", T::MISTRAL}, {"unsloth-mistral-Devstral-Small-2507", T::MISTRAL},
      {"mistralai-Ministral-3-14B-Reasoning-2512", T::MISTRAL}, {"openai-gpt-oss-120b", T::GPT_OSS},
      {"google-gemma-4-31B-it", T::GEMMA4},
      // Syntaxes not read (XML calls, Functionary, DeepSeek, Gemma): tools there are a 400.
      {"Qwen3-Coder", T::NONE}, {"GLM-4.6", T::NONE}, {"meetkai-functionary-medium-v3.1", T::NONE},
      {"meetkai-functionary-medium-v3.2", T::NONE}, {"google-gemma-2-2b-it", T::NONE}, {"deepseek-ai-DeepSeek-V3.1", T::NONE}};
  for (const auto& [name, t] : want) EXPECT_EQ(tool_call_syntax_name(of(name).tools), tool_call_syntax_name(t)) << name;
  EXPECT_EQ(of("Qwen-Qwen3-0.6B").think_open, "<think>");
  EXPECT_EQ(of("mistralai-Ministral-3-14B-Reasoning-2512").think_open, "[THINK]");
  EXPECT_EQ(of("openai-gpt-oss-120b").think_open, "");  // its reasoning is the analysis channel
  EXPECT_EQ(of("google-gemma-4-31B-it").think_close, "<channel|>");
  EXPECT_EQ(of("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B").think_close, "</think>");
}

// Random text made of the families' markers and JSON pieces: never a crash, every call's
// arguments are JSON at the end and a beginning of JSON in between. (Results of malformed text
// need not only grow: a call that turns out broken becomes content, as in llama.cpp.)
TEST(ChatOutput, RandomTextNeverBreaksTheParsers) {
  const std::vector<std::string> pieces = {"<tool_call>", "</tool_call>", "{", "}", "[", "]", "\"name\"", ": ", "\"f\"", ", ",
                                           "\"arguments\"", "\"parameters\"", "1", "\"x\"", "<think>", "</think>",
                                           "[TOOL_CALLS]", "[ARGS]", "<|python_tag|>", ".call(", "a=", ")", "<|channel|>",
                                           "analysis", "final", " to=functions.g", "<|message|>", "<|end|>", "<|start|>", " ", "\n", "\\",
                                           "<|tool_call>", "call:g", "<tool_call|>", "<|\"|>", "k:"};
  std::mt19937 rng(7);
  size_t n_calls = 0;
  for (ToolCallSyntax t : {ToolCallSyntax::HERMES, ToolCallSyntax::LLAMA3, ToolCallSyntax::MISTRAL, ToolCallSyntax::GPT_OSS,
                           ToolCallSyntax::GEMMA4})
    for (int round = 0; round < 300; round++) {
      std::string text;
      for (int k = 0; k < 24; k++) text += pieces[rng() % pieces.size()];
      for (size_t n = 0; n <= text.size(); n++)
        for (const ParsedToolCall& c : parse_chat_output(syntax(t, true), std::string_view(text).substr(0, n), true).calls)
          EXPECT_NE(scan_json_value(c.arguments).state, JsonScan::INVALID) << text;
      const ParsedOutput out = parse_chat_output(syntax(t, true), text, false);
      for (const ParsedToolCall& c : out.calls) EXPECT_TRUE(nlohmann::json::accept(c.arguments)) << text;
      n_calls += out.calls.size();
    }
  EXPECT_GT(n_calls, 0u);  // the pieces do make calls now and then
}

}  // namespace
}  // namespace hart
