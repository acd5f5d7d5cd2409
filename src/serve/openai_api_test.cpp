#include "serve/openai_api.h"

#include <gtest/gtest.h>

#include "common/testdata.h"
#include "gguf/gguf.h"

namespace hart::serve {
namespace {

using nlohmann::json;

struct Api : ::testing::Test {
  std::unique_ptr<Tokenizer> tok;
  const ChatFormatter chatml{ChatTemplate::CHATML};
  void SetUp() override {
    HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
    tok = Tokenizer::from_gguf(*gguf::File::open(path, gguf::LoadMode::Mmap));
  }
  ApiRequest parse(const json& body, Endpoint e = Endpoint::COMPLETION, int n_ctx = 64) {
    return parse_request(body, e, {*tok, chatml, n_ctx});
  }
  // The field an invalid body is blamed on.
  std::string blamed(const json& body, Endpoint e = Endpoint::COMPLETION) {
    try {
      parse(body, e);
    } catch (const ApiError& err) {
      EXPECT_EQ(err.status, 400);
      return err.param;
    }
    return "(accepted)";
  }
};

TEST_F(Api, ReadsSamplingFieldsAndDefaults) {
  const ApiRequest r = parse({{"prompt", "Once upon"}, {"temperature", 0}, {"top_k", 5}, {"seed", 3},
                              {"stop", {"a", "b"}}, {"max_tokens", 7}, {"stream", true}});
  EXPECT_EQ(r.gen.sampling.temperature, 0.0f);
  EXPECT_EQ(r.gen.sampling.top_k, 5);
  EXPECT_EQ(r.gen.sampling.seed, 3u);
  EXPECT_EQ(r.gen.stops, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.gen.max_tokens, 7);
  EXPECT_TRUE(r.stream);
  const ApiRequest d = parse({{"prompt", "Once upon"}});
  EXPECT_EQ(d.gen.sampling.temperature, 1.0f);
  EXPECT_EQ(d.gen.max_tokens, 64 - int(d.gen.prompt.size()));  // the rest of the context
}

// llama-server's per-request speculative.* fields over the server's settings (ngram-simple
// drafting up to 8 tokens): n_max bounds every type's draft and 0 turns speculation off; a type the server has
// nothing for, or a draft that does not fit a step, is refused naming the field.
TEST_F(Api, SpeculativeFieldsOverTheServersSettings) {
  spec::SpecParams server;
  server.types = {spec::SpecType::NGRAM_SIMPLE};
  server.ngram_size_m = 8;
  const spec::SpecFactory factory(server, tok->n_vocab());
  const auto with = [&](json body) {
    body["prompt"] = "x";
    return parse_request(body, Endpoint::COMPLETION, {*tok, chatml, 64, &factory, 16});
  };
  EXPECT_EQ(with(json::object()).gen.spec.types, server.types);
  EXPECT_EQ(with(json::object()).gen.spec.max_draft(), 8);
  EXPECT_TRUE(with({{"speculative.n_max", 0}}).gen.spec.types.empty());
  const spec::SpecParams two = with({{"speculative.n_max", 2}, {"speculative.n_min", 1}, {"speculative.p_min", 0.5}}).gen.spec;
  EXPECT_EQ(two.max_draft(), 2);
  EXPECT_EQ(two.n_min, 1);
  EXPECT_EQ(two.p_min, 0.5f);
  EXPECT_TRUE(with({{"speculative.type", "none"}}).gen.spec.types.empty());
  const auto blamed_spec = [&](const json& body) {
    try {
      with(body);
    } catch (const ApiError& err) {
      return err.param;
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(blamed_spec({{"speculative.type", "draft-simple"}}), "speculative.type");  // no draft model
  EXPECT_EQ(blamed_spec({{"speculative.type", "ngram-cache"}}), "speculative.type");   // no lookup cache
  EXPECT_EQ(blamed_spec({{"speculative.type", "no-such"}}), "speculative.type");
  EXPECT_EQ(blamed_spec({{"speculative.n_max", -1}}), "speculative.n_max");
  EXPECT_EQ(blamed_spec({{"speculative.type", "draft-simple"}, {"speculative.n_max", 2}}), "speculative.type");
  EXPECT_EQ(blamed_spec({{"speculative.p_min", 1.5}}), "speculative.p_min");
  EXPECT_EQ(blamed_spec({{"speculative.n_min", -1}}), "speculative.n_min");
  EXPECT_EQ(blamed_spec({{"speculative.n_max", "3"}}), "speculative.n_max");
}

TEST_F(Api, RejectsWrongTypesAndLimits) {
  EXPECT_EQ(blamed({{"prompt", "x"}, {"temperature", "hot"}}), "temperature");
  EXPECT_EQ(blamed({{"prompt", "x"}, {"max_tokens", 1.5}}), "max_tokens");
  EXPECT_EQ(blamed({{"prompt", "x"}, {"max_tokens", 0}}), "max_tokens");
  EXPECT_EQ(blamed({{"prompt", "x"}, {"max_tokens", 64}}), "max_tokens");  // past the context
  EXPECT_EQ(blamed({{"prompt", std::string(400, 'a') + " b c d e f g h i j k l m n o p q r s t u v w x y z"}}), "prompt");
  EXPECT_EQ(blamed({{"prompt", 5}}), "prompt");
  EXPECT_EQ(blamed({{"prompt", "x"}, {"n", 0}}), "n");
  EXPECT_EQ(blamed({{"prompt", "x"}, {"n", 17}}), "n");
  EXPECT_EQ(blamed({{"prompt", "x"}, {"n", "2"}}), "n");
  EXPECT_EQ(parse({{"prompt", "x"}, {"n", 3}}).gen.n, 3);
  EXPECT_EQ(blamed({{"prompt", "x"}, {"stop", {1}}}), "stop");
  EXPECT_EQ(blamed({{"prompt", "x"}, {"top_p", 2}}), "top_p");
  EXPECT_EQ(blamed({{"messages", json::array()}}, Endpoint::CHAT), "messages");
  EXPECT_EQ(blamed({{"messages", {{{"role", "robot"}, {"content", "hi"}}}}}, Endpoint::CHAT), "messages");
  EXPECT_EQ(blamed({{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"top_logprobs", 2}}, Endpoint::CHAT),
            "top_logprobs");
  // A content part's fields of the wrong type (found by fuzz_request: a numeric "type" was a 500).
  const json part_type_number = json::parse(R"({"messages":[{"role":"user","content":[{"type":0,"text":"hi"}]}]})");
  EXPECT_EQ(blamed(part_type_number, Endpoint::CHAT), "messages");
  const json part_text_number = json::parse(R"({"messages":[{"role":"user","content":[{"type":"text","text":1}]}]})");
  EXPECT_EQ(blamed(part_text_number, Endpoint::CHAT), "messages");
  // Integers a field's type cannot hold are refused, not wrapped (2^32 + 1 would read as n = 1).
  EXPECT_EQ(blamed({{"prompt", "x"}, {"n", 4294967297LL}}), "n");
  EXPECT_EQ(blamed({{"prompt", "x"}, {"top_k", -4294967296LL}}), "top_k");
  EXPECT_EQ(blamed({{"prompt", "x"}, {"top_logprobs", 18446744073709551615ULL}}, Endpoint::CHAT), "top_logprobs");
}

TEST_F(Api, ChatUsesTheTemplate) {
  const ApiRequest r = parse({{"messages", {{{"role", "user"}, {"content", "hi"}}}}}, Endpoint::CHAT, 256);
  EXPECT_NE(tok->decode(r.gen.prompt, true).find("<|im_start|>assistant"), std::string::npos);
}

TEST_F(Api, ResponseCarriesUsageWithCachedTokens) {
  const ApiRequest r = parse({{"messages", {{{"role", "user"}, {"content", "hi"}}}}}, Endpoint::CHAT, 256);
  ResponseWriter w(r, *tok, "m");
  Event a;
  a.text = "Hel";
  w.add(a);
  Event done;
  done.text = "lo";
  done.done = true;
  done.finish_reason = "stop";
  done.prompt_tokens = 9;
  done.cached_tokens = 4;
  done.completion_tokens = 2;
  w.add(done);
  const json j = w.response();
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "Hello");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["usage"]["total_tokens"], 11);
  EXPECT_EQ(j["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
}

// n choices: one response with n choices (in index order whatever order they end in), the prompt
// counted once in usage, stream chunks naming their choice.
TEST_F(Api, ChoicesShareOneResponseAndThePromptCountsOnce) {
  ApiRequest r = parse({{"prompt", "Once upon"}, {"n", 2}});
  auto ev = [](int index, std::string text, bool done) {
    Event e;
    e.index = index;
    e.text = std::move(text);
    e.done = done;
    if (done) e.finish_reason = "length", e.prompt_tokens = 5, e.completion_tokens = 3, e.cached_tokens = 0;
    return e;
  };
  ResponseWriter w(r, *tok, "m");
  w.add(ev(1, "b", false));
  w.add(ev(0, "a", true));
  EXPECT_FALSE(w.finished());
  w.add(ev(1, "c", true));
  ASSERT_TRUE(w.finished());
  const json j = w.response();
  ASSERT_EQ(j["choices"].size(), 2u);
  EXPECT_EQ(j["choices"][0]["text"], "a");
  EXPECT_EQ(j["choices"][1]["text"], "bc");
  EXPECT_EQ(j["choices"][1]["index"], 1);
  EXPECT_EQ(j["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(j["usage"]["completion_tokens"], 6);
  EXPECT_EQ(j["usage"]["total_tokens"], 11);

  r.stream = true;
  r.include_usage = true;
  ResponseWriter s(r, *tok, "m");
  EXPECT_EQ(s.chunks(ev(1, "b", false)).at(0)["choices"][0]["index"], 1);
  const auto first_done = s.chunks(ev(0, "a", true));
  ASSERT_EQ(first_done.size(), 1u);  // no usage before every choice is done
  const auto last = s.chunks(ev(1, "c", true));
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[1]["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(last[1]["usage"]["completion_tokens"], 6);
}

// With the model's Jinja template a chat request renders as llama-server renders it: tools and
// tool-role messages reach the template in the client's key order, the template's bos_token is
// cut (the tokenizer adds BOS), chat_template_kwargs reach it, and its raise_exception is a 400.
TEST_F(Api, ChatThroughTheModelsJinjaTemplate) {
  const std::string src =
      "{# replies call tools as <tool_call> #}{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
      "{% if tools %}{{ tools[0].function.parameters | tojson }}{% endif %}"
      "{% if flavor is defined %}/{{ flavor }}{% endif %}{% if add_generation_prompt %}<assistant>{% endif %}"
      "{% if messages[0].role == 'assistant' %}{{ raise_exception('user first') }}{% endif %}";
  const ChatFormatter chat(std::make_shared<const JinjaChatTemplate>(src, "<s>", "</s>"), true, false);
  const auto body = nlohmann::ordered_json::parse(R"({
    "messages": [{"role": "user", "content": "hi"},
                 {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                 {"role": "tool", "tool_call_id": "c1", "content": "18 C"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"z": 1, "a": 2}}}],
    "chat_template_kwargs": {"flavor": "x"}})");
  const ApiRequest r = parse_request(body, Endpoint::CHAT, {*tok, chat, 256});
  EXPECT_EQ(r.gen.prompt, tok->encode("<user>hi<assistant><tool>18 C{\"z\": 1, \"a\": 2}/x<assistant>", true, true));

  const auto bad = nlohmann::ordered_json::parse(R"({"messages": [{"role": "assistant", "content": "hi"}]})");
  try {
    parse_request(bad, Endpoint::CHAT, {*tok, chat, 256});
    ADD_FAILURE() << "accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "messages");
    EXPECT_NE(std::string(e.what()).find("user first"), std::string::npos) << e.what();
  }
}

// A file's tokenizer.chat_template.tool_use renders the requests that carry tools.
TEST_F(Api, ToolUseVariantForRequestsWithTools) {
  const auto make = [](const char* src) { return std::make_shared<const JinjaChatTemplate>(src, "<s>", "</s>"); };
  const ChatFormatter chat(make("plain:{{ messages[0].content }}"), true, false, make("tools:{{ tools | length }}{# <tool_call> #}"));
  const auto plain = nlohmann::ordered_json::parse(R"({"messages": [{"role": "user", "content": "hi"}]})");
  auto with_tools = plain;
  with_tools["tools"] = nlohmann::ordered_json::parse(R"([{"type": "function", "function": {"name": "f"}}])");
  EXPECT_EQ(parse_request(plain, Endpoint::CHAT, {*tok, chat, 256}).gen.prompt, tok->encode("plain:hi", true, true));
  EXPECT_EQ(parse_request(with_tools, Endpoint::CHAT, {*tok, chat, 256}).gen.prompt, tok->encode("tools:1", true, true));
}

}  // namespace
}  // namespace hart::serve
