// /v1/responses: requests turned into chat bodies, and replies into output items and events.
#include "serve/responses_api.h"

#include <gtest/gtest.h>

#include "common/testdata.h"
#include "gguf/gguf.h"

namespace hart::serve {
namespace {

using nlohmann::json;
using Body = nlohmann::ordered_json;

std::string blamed(const std::string& body) {
  try {
    responses_to_chat(Body::parse(body));
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    return e.param;
  }
  return "(accepted)";
}

TEST(Responses, RequestsBecomeChatBodies) {
  Body chat = responses_to_chat(Body::parse(R"({"input": "Hi", "instructions": "Be brief.", "max_output_tokens": 9, "temperature": 0})"));
  EXPECT_EQ(chat["messages"], Body::parse(R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])"));
  EXPECT_EQ(chat["max_tokens"], 9);
  EXPECT_EQ(chat["temperature"], 0);
  chat = responses_to_chat(Body::parse(R"({"input": [
      {"role": "user", "content": [{"type": "input_text", "text": "weather "}, {"type": "input_text", "text": "in Oslo?"}]},
      {"type": "function_call", "call_id": "c1", "name": "w", "arguments": "{\"city\": \"Oslo\"}"},
      {"type": "function_call", "call_id": "c2", "name": "t", "arguments": "{}"},
      {"type": "function_call_output", "call_id": "c1", "output": "3 C"}],
    "tools": [{"type": "function", "name": "w", "description": "weather", "parameters": {"type": "object"}}],
    "tool_choice": {"type": "function", "name": "w"}})"));
  const Body& m = chat["messages"];
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0]["content"], "weather in Oslo?");
  EXPECT_EQ(m[1]["tool_calls"].size(), 2u);  // calls in a row: one assistant turn
  EXPECT_EQ(m[1]["tool_calls"][1]["id"], "c2");
  EXPECT_EQ(m[2], Body::parse(R"({"role": "tool", "tool_call_id": "c1", "content": "3 C"})"));
  EXPECT_EQ(chat["tools"][0]["function"]["name"], "w");
  EXPECT_EQ(chat["tool_choice"]["function"]["name"], "w");

  EXPECT_EQ(blamed(R"({})"), "input");
  EXPECT_EQ(blamed(R"({"input": 3})"), "input");
  EXPECT_EQ(blamed(R"({"input": [{"type": "image", "url": "x"}]})"), "input");
  EXPECT_EQ(blamed(R"({"input": [{"role": "user", "content": [{"type": "input_image"}]}]})"), "input");
  EXPECT_EQ(blamed(R"({"input": "x", "tools": [{"type": "web_search"}]})"), "tools");
  EXPECT_EQ(blamed(R"({"input": "x", "previous_response_id": "resp_1"})"), "previous_response_id");
  EXPECT_EQ(blamed(R"({"input": "x", "text": {"format": {"type": "json_object"}}})"), "text");
  EXPECT_EQ(blamed(R"({"input": "x", "instructions": 5})"), "instructions");
}

Event piece(std::string text, bool done) {
  Event e;
  e.text = std::move(text);
  e.done = done;
  if (done) e.finish_reason = "stop", e.prompt_tokens = 4, e.completion_tokens = 6;
  return e;
}

struct Writer : ::testing::Test {
  std::unique_ptr<Tokenizer> tok;
  ApiRequest req{Endpoint::CHAT, {}};
  const std::vector<std::string> reply = {"<think>hm</think>", "Let me", " look.<tool_call>{\"name\": \"w\", ",
                                          "\"arguments\": {\"city\": \"Oslo\"}}</tool_call>"};
  void SetUp() override {
    HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
    tok = Tokenizer::from_gguf(*gguf::File::open(path, gguf::LoadMode::Mmap));
    req.reply.tools = ToolCallSyntax::HERMES;
    req.reply.think_open = "<think>";
    req.reply.think_close = "</think>";
  }
};

TEST_F(Writer, OutputItemsNotStreamed) {
  ResponsesWriter w(req, *tok, "m");
  for (size_t i = 0; i < reply.size(); i++) w.add(piece(reply[i], i + 1 == reply.size()));
  ASSERT_TRUE(w.finished());
  const json r = w.response();
  EXPECT_EQ(r["object"], "response");
  EXPECT_EQ(r["status"], "completed");
  ASSERT_EQ(r["output"].size(), 3u);
  EXPECT_EQ(r["output"][0]["type"], "reasoning");
  EXPECT_EQ(r["output"][0]["content"][0]["text"], "hm");
  EXPECT_EQ(r["output"][1]["content"][0]["text"], "Let me look.");
  EXPECT_EQ(r["output"][1]["content"][0]["type"], "output_text");
  EXPECT_EQ(r["output"][2]["type"], "function_call");
  EXPECT_EQ(r["output"][2]["name"], "w");
  EXPECT_EQ(json::parse(r["output"][2]["arguments"].get<std::string>()), json({{"city", "Oslo"}}));
  EXPECT_EQ(r["output"][2]["status"], "completed");
  EXPECT_EQ(r["usage"]["input_tokens"], 4);
  EXPECT_EQ(r["usage"]["total_tokens"], 10);
}

TEST_F(Writer, EventsBuildTheSameOutput) {
  req.stream = true;
  ResponsesWriter w(req, *tok, "m");
  std::vector<ResponsesEvent> all;
  for (size_t i = 0; i < reply.size(); i++)
    for (ResponsesEvent& e : w.events(piece(reply[i], i + 1 == reply.size()))) all.push_back(std::move(e));
  ASSERT_GE(all.size(), 4u);
  EXPECT_EQ(all.front().type, "response.created");
  EXPECT_EQ(all.back().type, "response.completed");
  std::string text, args;
  for (size_t i = 0; i < all.size(); i++) {
    EXPECT_EQ(all[i].data["sequence_number"], i);
    EXPECT_EQ(all[i].data["type"], all[i].type);
    if (all[i].type == "response.output_text.delta") text += all[i].data["delta"].get<std::string>();
    if (all[i].type == "response.function_call_arguments.delta") args += all[i].data["delta"].get<std::string>();
  }
  EXPECT_EQ(text, "Let me look.");
  EXPECT_EQ(args, R"({"city": "Oslo"})");
  const json& out = all.back().data["response"]["output"];
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1]["content"][0]["text"], "Let me look.");
  EXPECT_EQ(out[2]["arguments"], args);
}

}  // namespace
}  // namespace hart::serve
