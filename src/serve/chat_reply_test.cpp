// Tool requests checked, and replies with tool calls and reasoning as OpenAI returns them,
// streamed and not, from model output the test writes itself.
#include "serve/chat_reply.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "common/testdata.h"
#include "gguf/gguf.h"
#include "serve/openai_api.h"
#include "tokenizer/text_output.h"

namespace hart::serve {
namespace {

using nlohmann::json;
using Body = nlohmann::ordered_json;

const char* kQwenLike =
    "{# tool calls: <tool_call> ... </tool_call>, reasoning: <think> #}"
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if tools %}TOOLS:{% for t in tools %}{{ t.function.name }};{% endfor %}{% endif %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

struct Tools : ::testing::Test {
  std::unique_ptr<Tokenizer> tok;
  const ChatFormatter chat{std::make_shared<const JinjaChatTemplate>(kQwenLike, "", ""), false, false};
  void SetUp() override {
    HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
    tok = Tokenizer::from_gguf(*gguf::File::open(path, gguf::LoadMode::Mmap));
  }
  ApiRequest parse(const std::string& body, const ChatFormatter* with = nullptr, int n_ctx = 512) {
    return parse_request(Body::parse(body), Endpoint::CHAT, {*tok, with ? *with : chat, n_ctx});
  }
  std::string blamed(const std::string& body, const ChatFormatter* with = nullptr, int n_ctx = 512) {
    try {
      parse(body, with, n_ctx);
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      EXPECT_EQ(e.type, "invalid_request_error");
      return e.param;
    }
    return "(accepted)";
  }
  static std::string with_tools(const std::string& extra) {
    return R"({"messages": [{"role": "user", "content": "weather?"}], "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}])" +
           extra + "}";
  }
};

TEST_F(Tools, AutoRendersToolsAndReadsCalls) {
  const ApiRequest r = parse(with_tools(""));
  EXPECT_NE(tok->decode(r.gen.prompt).find("TOOLS:get_weather;"), std::string::npos);
  EXPECT_EQ(r.reply.tools, ToolCallSyntax::HERMES);
  EXPECT_EQ(r.reply.think_open, "<think>");
  EXPECT_EQ(r.reply.max_calls, -1);
  EXPECT_EQ(parse(with_tools(R"(, "parallel_tool_calls": false)")).reply.max_calls, 1);
  // "none": the template gets no tools and the reply is not read for calls.
  const ApiRequest none = parse(with_tools(R"(, "tool_choice": "none")"));
  EXPECT_EQ(tok->decode(none.gen.prompt).find("TOOLS:"), std::string::npos);
  EXPECT_EQ(none.reply.tools, ToolCallSyntax::NONE);
}

TEST_F(Tools, BadToolFieldsAre400s) {
  EXPECT_EQ(blamed(R"({"messages": [{"role": "user", "content": "x"}], "tools": {"type": "function"}})"), "tools");
  EXPECT_EQ(blamed(R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]})"), "tools");
  EXPECT_EQ(blamed(R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {"name": 5}}]})"), "tools");
  EXPECT_EQ(blamed(R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {"name": "a b"}}]})"), "tools");
  EXPECT_EQ(blamed(R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "retrieval", "function": {"name": "a"}}]})"), "tools");
  EXPECT_EQ(blamed(R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {"name": "a", "parameters": "x"}}]})"), "tools");
  EXPECT_EQ(blamed(R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {"name": "a"}}]})"), "tools");
  EXPECT_EQ(blamed(with_tools(R"(, "parallel_tool_calls": "yes")")), "parallel_tool_calls");
  EXPECT_EQ(blamed(with_tools(R"(, "tool_choice": "sometimes")")), "tool_choice");
  EXPECT_EQ(blamed(with_tools(R"(, "tool_choice": 1)")), "tool_choice");
  EXPECT_EQ(blamed(with_tools(R"(, "tool_choice": {"type": "function", "function": {"name": "other"}})")), "tool_choice");
  // Forced calls are a grammar, which cannot be combined with another one.
  EXPECT_EQ(blamed(with_tools(R"(, "tool_choice": "required")")), "(accepted)");
  EXPECT_EQ(blamed(with_tools(R"(, "tool_choice": {"type": "function", "function": {"name": "get_weather"}})")), "(accepted)");
  EXPECT_EQ(blamed(with_tools(R"(, "tool_choice": "required", "response_format": {"type": "json_object"})")), "tool_choice");
  EXPECT_NE(parse(with_tools(R"(, "tool_choice": "required")")).gen.grammar, nullptr);
  EXPECT_EQ(parse(with_tools("")).gen.grammar, nullptr);
  // A template without a call syntax takes tools in the generic format, itself a grammar.
  const ChatFormatter chatml{ChatTemplate::CHATML};
  EXPECT_EQ(blamed(with_tools(""), &chatml), "(accepted)");
  EXPECT_EQ(blamed(with_tools(R"(, "response_format": {"type": "json_object"})"), &chatml), "tools");
  EXPECT_EQ(blamed(with_tools(R"(, "tool_choice": "none", "response_format": {"type": "json_object"})"), &chatml), "(accepted)");
}

TEST_F(Tools, ToolMessagesMustAnswerACall) {
  EXPECT_EQ(blamed(R"({"messages": [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "c9", "content": "18"}]})"), "messages");
  EXPECT_EQ(blamed(R"({"messages": [{"role": "user", "content": "x"}, {"role": "tool", "content": "18"}]})"), "messages");
  const std::string call = R"({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": ARGS}}]})";
  auto conv = [&](const std::string& args) {
    std::string c = call;
    c.replace(c.find("ARGS"), 4, args);
    return R"({"messages": [{"role": "user", "content": "x"}, )" + c + R"(, {"role": "tool", "tool_call_id": "c1", "content": "18"}]})";
  };
  EXPECT_EQ(blamed(conv(R"("{\"city\": \"Oslo\"}")")), "(accepted)");
  EXPECT_EQ(blamed(conv(R"("{not json")")), "messages");
  EXPECT_EQ(blamed(conv("{}")), "messages");  // arguments are a JSON string
}

Event piece(int index, std::string text, bool done = false, std::string reason = "stop") {
  Event e;
  e.index = index;
  e.text = std::move(text);
  e.done = done;
  if (done) e.finish_reason = std::move(reason), e.prompt_tokens = 7, e.completion_tokens = 5;
  return e;
}

const std::vector<std::string> kReply = {"<think>Need", " data.</think>\n\nChecking.", "<tool_", "call>\n{\"name\": \"get_weather\", ",
                                         "\"arguments\": {\"city\": ", "\"Paris\"}}\n</tool_call>", "\n<tool_call>{\"name\": \"now\", \"arguments\": {}}</tool_call>"};

// What a client sees of a reply, streamed: content and each call's name and arguments.
struct Streamed {
  std::string content, finish;
  std::vector<std::string> names, args;
};

Streamed stream_reply(ApiRequest r, const Tokenizer& tok, const std::vector<std::string>& pieces) {
  r.stream = true;
  ResponseWriter w(r, tok, "m");
  Streamed s;
  for (size_t i = 0; i < pieces.size(); i++)
    for (const json& c : w.chunks(piece(0, pieces[i], i + 1 == pieces.size()))) {
      const json& ch = c["choices"][0];
      s.content += ch["delta"].value("content", "");
      if (!ch["finish_reason"].is_null()) s.finish = ch["finish_reason"].get<std::string>();
      if (ch["delta"].contains("tool_calls"))
        for (const json& tc : ch["delta"]["tool_calls"]) {
          const size_t k = tc["index"];
          if (k >= s.names.size()) s.names.resize(k + 1), s.args.resize(k + 1);
          if (tc["function"].contains("name")) s.names[k] = tc["function"]["name"];
          s.args[k] += tc["function"]["arguments"].get<std::string>();
        }
    }
  return s;
}

TEST_F(Tools, GenericFormatForATemplateWithoutToolSyntax) {
  const ChatFormatter chatml{ChatTemplate::CHATML};
  const ApiRequest r = parse(with_tools(""), &chatml);
  EXPECT_EQ(r.reply.tools, ToolCallSyntax::GENERIC);
  ASSERT_NE(r.gen.grammar, nullptr);  // {"tool_calls": [...]} or {"response": ...}, always
  const std::string prompt = tok->decode(r.gen.prompt);
  EXPECT_NE(prompt.find("Respond in JSON format, either with `tool_call`"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("\"name\": \"get_weather\""), std::string::npos) << prompt;
  const std::vector<std::string> reply = {"{\"tool_calls\": [{\"name\": \"get_", "weather\", \"arguments\": {\"city\"", ": \"Paris\"}, \"id\": \"call_1___\"}]}"};
  const Streamed s = stream_reply(r, *tok, reply);
  EXPECT_EQ(s.content, "");
  EXPECT_EQ(s.finish, "tool_calls");
  EXPECT_EQ(s.names, std::vector<std::string>{"get_weather"});
  EXPECT_EQ(s.args, std::vector<std::string>{R"({"city": "Paris"})"});
  ResponseWriter w(r, *tok, "m");
  w.add(piece(0, reply[0] + reply[1] + reply[2], true));
  const json m = w.response()["choices"][0]["message"];
  ASSERT_EQ(m["tool_calls"].size(), 1u);
  EXPECT_EQ(m["tool_calls"][0]["id"].get<std::string>().rfind("call_", 0), 0u);
  EXPECT_NE(m["tool_calls"][0]["id"], "call_1___");
  EXPECT_EQ(m["content"], nullptr);
  // A text reply streams as content.
  const Streamed text = stream_reply(r, *tok, {"{\"response\": \"It is", " sunny.\"}"});
  EXPECT_EQ(text.content, "It is sunny.");
  EXPECT_EQ(text.finish, "stop");
  EXPECT_TRUE(text.names.empty());
  // tool_choice "required": the grammar has no response branch; a named function, only that one.
  EXPECT_NE(parse(with_tools(R"(, "tool_choice": "required")"), &chatml).gen.grammar, nullptr);
}

TEST_F(Tools, DerivedSyntaxForATemplateHartHasNoParserFor) {
  HART_REQUIRE_TESTDATA(dir, "chat_templates/templates/Qwen3-Coder.jinja");
  std::ifstream in(dir);
  const std::string src((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const ChatFormatter coder(std::make_shared<const JinjaChatTemplate>(src, "", ""), false, false);
  const std::string body = R"({"messages": [{"role": "user", "content": "weather?"}], "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]})";
  const ApiRequest r = parse(body, &coder, 4096);
  ASSERT_EQ(r.reply.tools, ToolCallSyntax::DERIVED);
  EXPECT_EQ(r.gen.grammar, nullptr);  // calls are read, not forced
  const Streamed s = stream_reply(r, *tok, {"Sure.\n<tool_call>\n<function=get_we", "ather>\n<parameter=city>\n1", "0 Downing St\n</parameter>\n",
                                            "<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>"});
  EXPECT_EQ(s.content, "Sure.\n");
  EXPECT_EQ(s.finish, "tool_calls");
  EXPECT_EQ(s.names, std::vector<std::string>{"get_weather"});
  EXPECT_EQ(s.args, std::vector<std::string>{R"({"city": "10 Downing St", "days": 2})"});
  // Tagged arguments have no forced-call grammar: refused, not ignored.
  EXPECT_EQ(blamed(body.substr(0, body.size() - 1) + R"(, "tool_choice": "required"})", &coder, 4096), "tool_choice");
}

TEST_F(Tools, ReplyWithCallsNonStreaming) {
  ApiRequest r = parse(with_tools(""));
  ResponseWriter w(r, *tok, "m");
  for (size_t i = 0; i < kReply.size(); i++) w.add(piece(0, kReply[i], i + 1 == kReply.size()));
  ASSERT_TRUE(w.finished());
  const json j = w.response();
  const json& m = j["choices"][0]["message"];
  EXPECT_EQ(j["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(m["content"], "Checking.");
  EXPECT_EQ(m["reasoning_content"], "Need data.");
  ASSERT_EQ(m["tool_calls"].size(), 2u);
  EXPECT_EQ(m["tool_calls"][0]["type"], "function");
  EXPECT_EQ(m["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(m["tool_calls"][0]["function"]["arguments"].get<std::string>()), json({{"city", "Paris"}}));
  EXPECT_EQ(m["tool_calls"][1]["function"]["name"], "now");
  EXPECT_NE(m["tool_calls"][0]["id"], m["tool_calls"][1]["id"]);
  EXPECT_EQ(m["tool_calls"][0]["id"].get<std::string>().rfind("call_", 0), 0u);
}

TEST_F(Tools, ReplyWithCallsStreamed) {
  ApiRequest r = parse(with_tools(""));
  r.stream = true;
  ResponseWriter w(r, *tok, "m");
  std::string content, reasoning, finish;
  std::map<int, std::string> ids, names, args;
  std::map<int, int> headers;
  for (size_t i = 0; i < kReply.size(); i++)
    for (const json& c : w.chunks(piece(0, kReply[i], i + 1 == kReply.size()))) {
      const json& ch = c["choices"][0];
      const json& d = ch["delta"];
      content += d.value("content", "");
      reasoning += d.value("reasoning_content", "");
      if (!ch["finish_reason"].is_null()) finish = ch["finish_reason"].get<std::string>();
      if (!d.contains("tool_calls")) continue;
      for (const json& tc : d["tool_calls"]) {
        const int k = tc["index"];
        if (tc.contains("id")) {  // the first delta of a call: id, type and name, once
          headers[k]++;
          ids[k] = tc["id"].get<std::string>();
          names[k] = tc["function"]["name"].get<std::string>();
          EXPECT_EQ(tc["type"], "function");
        } else {
          EXPECT_FALSE(tc["function"].contains("name"));
        }
        args[k] += tc["function"]["arguments"].get<std::string>();
      }
    }
  EXPECT_EQ(content, "Checking.");
  EXPECT_EQ(reasoning, "Need data.");
  EXPECT_EQ(finish, "tool_calls");
  EXPECT_EQ(headers, (std::map<int, int>{{0, 1}, {1, 1}}));
  EXPECT_EQ(names[0], "get_weather");
  EXPECT_EQ(args[0], R"({"city": "Paris"})");
  EXPECT_EQ(args[1], "{}");
  EXPECT_NE(ids[0], ids[1]);
}

TEST_F(Tools, MalformedCallIsContentAndLengthStaysLength) {
  ApiRequest r = parse(with_tools(""));
  ResponseWriter w(r, *tok, "m");
  w.add(piece(0, "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": }}</tool_call>", true));
  json m = w.response()["choices"][0];
  EXPECT_EQ(m["finish_reason"], "stop");
  EXPECT_EQ(m["message"]["content"], "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": }}</tool_call>");
  EXPECT_FALSE(m["message"].contains("tool_calls"));
  ResponseWriter cut(r, *tok, "m");
  cut.add(piece(0, "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"ci", true, "length"));
  m = cut.response()["choices"][0];
  EXPECT_EQ(m["finish_reason"], "length");
  EXPECT_FALSE(m["message"].contains("tool_calls"));
}

// A marker that is a control token (as <|python_tag|> of Llama 3, [TOOL_CALLS] of Mistral,
// <|channel|> of gpt-oss) has no text when decoded, so the engine must keep it for the parser to
// see the call. The tiny test vocabularies have none of those; qwen3-tiny's <|im_start|> is one.
TEST(ToolMarkers, ControlTokenMarkersAreKeptInTheText) {
  HART_REQUIRE_TESTDATA(path, "models/qwen3-tiny-Q8_0.gguf");
  const auto tok = Tokenizer::from_gguf(*gguf::File::open(path, gguf::LoadMode::Mmap));
  const std::vector<int32_t> ids = marker_tokens(*tok, {"<|im_start|>", "<tool_call>", "hello"});
  ASSERT_EQ(ids.size(), 1u);  // the plain texts decode as themselves anyway
  const std::vector<int32_t> reply = tok->encode("<|im_start|>f(a=1)", false, true);
  ASSERT_EQ(reply[0], ids[0]);
  EXPECT_EQ(tok->decode(reply).find("<|im_start|>"), std::string::npos);
  TextOutput shown(*tok, {}, ids), hidden(*tok, {});
  std::string a, b;
  for (int32_t t : reply) a += shown.push(t), b += hidden.push(t);
  a += shown.flush();
  b += hidden.flush();
  EXPECT_EQ(a, "<|im_start|>f(a=1)");
  EXPECT_EQ(b, tok->decode(reply));
}

}  // namespace
}  // namespace hart::serve
