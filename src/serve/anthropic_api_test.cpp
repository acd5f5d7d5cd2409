// /v1/messages: Anthropic requests turned into chat bodies, replies into content blocks and
// Anthropic's event sequence, errors into Anthropic's shape.
#include "serve/anthropic_api.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/testdata.h"
#include "gguf/gguf.h"

namespace hart::serve {
namespace {

using nlohmann::json;
using Body = nlohmann::ordered_json;

std::string refused(const std::string& body) {
  try {
    anthropic_to_chat(Body::parse(body));
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    return e.param;
  }
  return "(accepted)";
}

TEST(Anthropic, RequestsBecomeChatBodies) {
  const Body chat = anthropic_to_chat(Body::parse(R"({
    "model": "claude", "max_tokens": 64, "temperature": 0.5, "top_k": 7, "stream": true,
    "system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Use tools.", "cache_control": {"type": "ephemeral"}}],
    "messages": [
      {"role": "user", "content": "Weather in Oslo?"},
      {"role": "assistant", "content": [{"type": "thinking", "thinking": "Need the tool.", "signature": "s"},
                                        {"type": "text", "text": "Checking."},
                                        {"type": "tool_use", "id": "toolu_1", "name": "w", "input": {"city": "Oslo"}}]},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "3 C"}]},
                                   {"type": "text", "text": "And tomorrow?"}]}],
    "tools": [{"name": "w", "description": "weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
    "tool_choice": {"type": "tool", "name": "w", "disable_parallel_tool_use": true},
    "thinking": {"type": "disabled"}, "metadata": {"user_id": "u1"}})"));
  const Body& m = chat["messages"];
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0], Body::parse(R"({"role": "system", "content": "Be brief.\nUse tools."})"));
  EXPECT_EQ(m[1], Body::parse(R"({"role": "user", "content": "Weather in Oslo?"})"));
  EXPECT_EQ(m[2]["content"], "Checking.");
  EXPECT_EQ(m[2]["reasoning_content"], "Need the tool.");
  EXPECT_EQ(m[2]["tool_calls"][0]["id"], "toolu_1");
  EXPECT_EQ(json::parse(m[2]["tool_calls"][0]["function"]["arguments"].get<std::string>()), json({{"city", "Oslo"}}));
  // The tool result answers the call before the user's next words.
  EXPECT_EQ(m[3], Body::parse(R"({"role": "tool", "tool_call_id": "toolu_1", "content": "3 C"})"));
  EXPECT_EQ(m[4], Body::parse(R"({"role": "user", "content": "And tomorrow?"})"));
  EXPECT_EQ(chat["tools"][0]["function"]["parameters"]["properties"]["city"]["type"], "string");
  EXPECT_EQ(chat["tool_choice"]["function"]["name"], "w");
  EXPECT_EQ(chat["parallel_tool_calls"], false);
  EXPECT_EQ(chat["chat_template_kwargs"]["enable_thinking"], false);
  EXPECT_EQ(chat["user"], "u1");
  for (const char* k : {"max_tokens", "temperature", "top_k", "stream"}) EXPECT_TRUE(chat.contains(k)) << k;

  EXPECT_EQ(anthropic_to_chat(Body::parse(R"({"messages": [{"role": "user", "content": "x"}], "tool_choice": {"type": "any"}})"))["tool_choice"],
            "required");
  // An assistant turn of calls alone has no content, as OpenAI's.
  const Body calls_only = anthropic_to_chat(Body::parse(R"({"messages": [{"role": "user", "content": "x"},
      {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "w", "input": {}}]}]})"));
  EXPECT_TRUE(calls_only["messages"][1]["content"].is_null());
}

TEST(Anthropic, BadRequestsNameTheField) {
  EXPECT_EQ(refused(R"({})"), "messages");
  EXPECT_EQ(refused(R"([1])"), "");
  EXPECT_EQ(refused(R"({"messages": [{"role": "system", "content": "x"}]})"), "messages");
  // Blocks a message cannot hold: unknown, image, a tool_use from the user, a tool_result for no
  // call, a tool_use whose input is not an object.
  for (const char* content : {R"([{"type": "video"}])", R"([{"type": "image", "source": {}}])",
                              R"([{"type": "tool_use", "id": "a", "name": "w", "input": {}}])",
                              R"([{"type": "tool_result", "tool_use_id": "nope"}])"})
    EXPECT_EQ(refused(std::string(R"({"messages": [{"role": "user", "content": )") + content + "}]}"), "messages") << content;
  EXPECT_EQ(refused(R"({"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "w", "input": "{}"}]}]})"),
            "messages");
  // Fields beside a valid conversation.
  const std::pair<const char*, const char*> fields[] = {
      {R"("system": 3)", "system"},
      {R"("tools": [{"name": "w"}])", "tools"},
      {R"("tools": [{"type": "web_search_20250305", "name": "web_search"}])", "tools"},
      {R"("tool_choice": "auto")", "tool_choice"},
      {R"("tool_choice": {"type": "some"})", "tool_choice"},
      {R"("thinking": {"type": "enabled"})", "thinking"},
      {R"("stop_sequences": "END")", "stop_sequences"},
      {R"("metadata": {"user_id": 3})", "metadata"}};
  for (const auto& [field, param] : fields)
    EXPECT_EQ(refused(std::string(R"({"messages": [{"role": "user", "content": "x"}], )") + field + "}"), param) << field;
}

TEST(Anthropic, ErrorsInAnthropicsShape) {
  EXPECT_EQ(anthropic_error_body(400, "bad"), json::parse(R"({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}})"));
  EXPECT_EQ(anthropic_error_body(401, "key")["error"]["type"], "authentication_error");
  EXPECT_EQ(anthropic_error_body(503, "busy")["error"]["type"], "overloaded_error");
  EXPECT_EQ(anthropic_error_body(500, "oops")["error"]["type"], "api_error");
}

Event reply_event(std::string text, bool done, std::string stop_word = {}) {
  Event e;
  e.text = std::move(text);
  e.done = done;
  if (done) e.finish_reason = "stop", e.stop_word = std::move(stop_word), e.prompt_tokens = 9, e.cached_tokens = 4, e.completion_tokens = 5;
  return e;
}

struct AnthropicWriterTest : ::testing::Test {
  std::unique_ptr<Tokenizer> tok;
  ApiRequest req{Endpoint::CHAT, {}};
  const std::vector<std::string> reply = {"<think>hm", "m</think>", "Let me", " look.<tool_call>{\"name\": \"w\", ",
                                          "\"arguments\": {\"city\": \"Oslo\"}}</tool_call>"};
  void SetUp() override {
    HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
    tok = Tokenizer::from_gguf(*gguf::File::open(path, gguf::LoadMode::Mmap));
    req.gen.prompt = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    req.reply.tools = ToolCallSyntax::HERMES;
    req.reply.think_open = "<think>";
    req.reply.think_close = "</think>";
  }
};

TEST_F(AnthropicWriterTest, ContentBlocksNotStreamed) {
  AnthropicWriter w(req, *tok, "m");
  for (size_t i = 0; i < reply.size(); i++) w.add(reply_event(reply[i], i + 1 == reply.size()));
  ASSERT_TRUE(w.finished());
  const json r = w.response();
  EXPECT_EQ(r["type"], "message");
  EXPECT_EQ(r["role"], "assistant");
  EXPECT_EQ(r["stop_reason"], "tool_use");
  EXPECT_TRUE(r["stop_sequence"].is_null());
  ASSERT_EQ(r["content"].size(), 3u);
  EXPECT_EQ(r["content"][0], json::parse(R"({"type": "thinking", "thinking": "hmm", "signature": ""})"));
  EXPECT_EQ(r["content"][1], json::parse(R"({"type": "text", "text": "Let me look."})"));
  EXPECT_EQ(r["content"][2]["type"], "tool_use");
  EXPECT_EQ(r["content"][2]["name"], "w");
  EXPECT_EQ(r["content"][2]["input"], json({{"city", "Oslo"}}));
  EXPECT_EQ(r["usage"], json::parse(R"({"input_tokens": 5, "cache_read_input_tokens": 4, "output_tokens": 5})"));
}

TEST_F(AnthropicWriterTest, TheEventSequence) {
  req.stream = true;
  AnthropicWriter w(req, *tok, "m");
  std::vector<AnthropicEvent> all;
  for (size_t i = 0; i < reply.size(); i++)
    for (AnthropicEvent& e : w.events(reply_event(reply[i], i + 1 == reply.size()))) all.push_back(std::move(e));
  std::vector<std::string> types;
  std::string thinking, text, args;
  for (const AnthropicEvent& e : all) {
    EXPECT_EQ(e.data["type"], e.type);
    if (types.empty() || types.back() != e.type || e.type != "content_block_delta") types.push_back(e.type);
    if (e.type != "content_block_delta") continue;
    const json& d = e.data["delta"];
    const int index = e.data["index"];
    if (d["type"] == "thinking_delta") {
      thinking += d["thinking"].get<std::string>();
      EXPECT_EQ(index, 0);
    } else if (d["type"] == "text_delta") {
      text += d["text"].get<std::string>();
      EXPECT_EQ(index, 1);
    } else if (d["type"] == "input_json_delta") {
      args += d["partial_json"].get<std::string>();
      EXPECT_EQ(index, 2);
    }
  }
  const std::vector<std::string> want = {"message_start", "ping",
                                         "content_block_start", "content_block_delta", "content_block_stop",
                                         "content_block_start", "content_block_delta", "content_block_stop",
                                         "content_block_start", "content_block_delta", "content_block_stop",
                                         "message_delta", "message_stop"};
  EXPECT_EQ(types, want);
  EXPECT_EQ(thinking, "hmm");
  EXPECT_EQ(text, "Let me look.");
  EXPECT_EQ(json::parse(args), json({{"city", "Oslo"}}));
  EXPECT_EQ(all[0].data["message"]["usage"]["input_tokens"], 9);
  EXPECT_TRUE(all[0].data["message"]["content"].empty());
  // The thinking block is signed (emptily) before it closes.
  const auto first_stop = std::find_if(all.begin(), all.end(), [](const AnthropicEvent& e) { return e.type == "content_block_stop"; });
  ASSERT_NE(first_stop, all.begin());
  EXPECT_EQ(first_stop[-1].data["delta"]["type"], "signature_delta");
  const json& end = all[all.size() - 2].data;
  EXPECT_EQ(end["delta"]["stop_reason"], "tool_use");
  EXPECT_EQ(end["usage"]["output_tokens"], 5);
  EXPECT_EQ(all[2].data["content_block"], json::parse(R"({"type": "thinking", "thinking": ""})"));
  EXPECT_EQ(all[all.size() - 5].data["content_block"]["type"], "tool_use");
}

TEST_F(AnthropicWriterTest, StopReasons) {
  req.reply = {};
  auto stop_of = [&](Event end) {
    AnthropicWriter w(req, *tok, "m");
    w.add(reply_event("Hello", false));
    w.add(end);
    return w.response();
  };
  EXPECT_EQ(stop_of(reply_event("", true))["stop_reason"], "end_turn");
  const json r = stop_of(reply_event("", true, "END"));
  EXPECT_EQ(r["stop_reason"], "stop_sequence");
  EXPECT_EQ(r["stop_sequence"], "END");
  Event cut = reply_event("", true);
  cut.finish_reason = "length";
  EXPECT_EQ(stop_of(cut)["stop_reason"], "max_tokens");
}

}  // namespace
}  // namespace hart::serve
