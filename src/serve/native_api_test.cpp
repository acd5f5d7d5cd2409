// llama-server's /completion and /infill: its fields and defaults, the FIM layout, its response shape.
#include "serve/native_api.h"

#include <gtest/gtest.h>

#include "common/testdata.h"
#include "gguf/gguf.h"

namespace hart::serve {
namespace {

using nlohmann::json;
using Body = nlohmann::ordered_json;

struct Native : ::testing::Test {
  std::unique_ptr<Tokenizer> tok;
  ChatFormatter chat{ChatTemplate::CHATML};
  void SetUp() override {
    HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
    tok = Tokenizer::from_gguf(*gguf::File::open(path, gguf::LoadMode::Mmap));
  }
  PromptContext pc(int n_ctx = 512) const { return {*tok, chat, n_ctx}; }
  NativeRequest parse(const std::string& body, int n_slots = 0) const { return parse_native_completion(Body::parse(body), pc(), n_slots); }
  std::string refused(const std::string& body) const {
    try {
      parse(body);
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      return e.param;
    }
    return "(accepted)";
  }
};

TEST_F(Native, LlamaServersDefaultsAndFields) {
  NativeRequest r = parse(R"({"prompt": "Once upon a time"})");
  const SamplerParams& sp = r.gen.sampling;
  EXPECT_FLOAT_EQ(sp.temperature, 0.8f);
  EXPECT_EQ(sp.top_k, 40);
  EXPECT_FLOAT_EQ(sp.top_p, 0.95f);
  EXPECT_FLOAT_EQ(sp.min_p, 0.05f);
  EXPECT_EQ(sp.seed, kRandomSeed);
  EXPECT_EQ(r.gen.prompt, tok->encode("Once upon a time", true, true));
  EXPECT_EQ(r.gen.max_tokens, 512 - int(r.gen.prompt.size()));  // n_predict -1: to the context's end
  EXPECT_EQ(r.id_slot, -1);

  r = parse(R"({"prompt": [1, 300, "upon"], "n_predict": 7, "temperature": -1, "seed": 9, "n_probs": 3, "repeat_last_n": -1,
                "stop": ["a", "b", "c", "d", "e"], "return_tokens": true, "id_slot": 1, "stream": true, "cache_prompt": false})", 2);
  EXPECT_EQ(r.gen.prompt, (std::vector<int32_t>{1, 300, tok->encode("upon", false, true)[0]}));
  EXPECT_EQ(r.gen.max_tokens, 7);
  EXPECT_EQ(r.gen.sampling.temperature, 0);  // below 0: greedy
  EXPECT_EQ(r.gen.sampling.seed, 9u);
  EXPECT_TRUE(r.gen.sampling.logprobs);
  EXPECT_EQ(r.gen.sampling.top_logprobs, 3);
  EXPECT_EQ(r.gen.sampling.repeat_last_n, -1);
  EXPECT_EQ(r.gen.stops.size(), 5u);
  EXPECT_TRUE(r.return_tokens && r.stream);
  EXPECT_EQ(r.id_slot, 1);
  EXPECT_EQ(r.settings["n_predict"], 7);

  r = parse(R"({"prompt": "x", "n_predict": 0})");  // evaluated into the cache, nothing returned
  EXPECT_TRUE(r.evaluate_only);
  EXPECT_EQ(r.gen.max_tokens, 1);
}

TEST_F(Native, SamplersListSwitchesOffWhatItLeavesOut) {
  NativeRequest r = parse(R"({"prompt": "x", "samplers": ["top_k", "dry", "temperature"], "repeat_penalty": 1.3})");
  EXPECT_EQ(r.gen.sampling.top_k, 40);
  EXPECT_EQ(r.gen.sampling.top_p, 1);
  EXPECT_EQ(r.gen.sampling.min_p, 0);
  EXPECT_EQ(r.gen.sampling.repeat_penalty, 1);
  EXPECT_EQ(r.settings["samplers"], json({"top_k", "temperature"}));
  r = parse(R"({"prompt": "x", "samplers": "epmt"})");
  EXPECT_EQ(r.gen.sampling.top_k, 0);
  EXPECT_FLOAT_EQ(r.gen.sampling.top_p, 0.95f);
  EXPECT_EQ(refused(R"({"prompt": "x", "samplers": ["temperature", "top_k"]})"), "samplers");
  EXPECT_EQ(refused(R"({"prompt": "x", "samplers": ["top_k"]})"), "samplers");
  EXPECT_EQ(refused(R"({"prompt": "x", "samplers": ["mirostat_v2", "temperature"]})"), "samplers");
  EXPECT_EQ(refused(R"({"prompt": "x", "samplers": "kz"})"), "samplers");
}

TEST_F(Native, WhatCannotBeHonouredIsRefused) {
  for (const char* key : {"mirostat", "dry_multiplier", "xtc_probability", "dynatemp_range", "n_cmpl", "min_keep"})
    EXPECT_EQ(refused(std::string(R"({"prompt": "x", ")") + key + R"(": 2})"), key);
  EXPECT_EQ(refused(R"({"prompt": "x", "typical_p": 0.5})"), "typical_p");
  EXPECT_EQ(refused(R"({"prompt": "x", "top_n_sigma": 1})"), "top_n_sigma");
  EXPECT_EQ(refused(R"({"prompt": "x", "ignore_eos": true})"), "ignore_eos");
  EXPECT_EQ(refused(R"({"prompt": "x", "logit_bias": [[1, 2]]})"), "logit_bias");
  EXPECT_FALSE(parse(R"({"prompt": "x", "mirostat": 0, "typical_p": 1, "logit_bias": [], "top_n_sigma": -1})").gen.prompt.empty());
  EXPECT_EQ(refused(R"({"prompt": ["a", "b"]})"), "prompt");
  EXPECT_EQ(refused(R"({"prompt": [1, 99999]})"), "prompt");
  EXPECT_EQ(refused(R"({"prompt": "x", "n_predict": -2})"), "n_predict");
  EXPECT_EQ(refused(R"({"prompt": "x", "n_probs": 101})"), "n_probs");
  EXPECT_EQ(refused(R"({"prompt": "x", "id_slot": 0})"), "id_slot");
  EXPECT_EQ(refused(R"({"prompt": "x", "stop": [1]})"), "stop");
  EXPECT_EQ(refused(R"({"prompt": "x", "cache_prompt": "yes"})"), "cache_prompt");
}

// StarCoder's vocabulary has FIM prefix / suffix / middle but no repository or file tokens: the
// extra files are joined by llama-server's snippet separator.
TEST(Infill, LlamaServersLayout) {
  HART_REQUIRE_TESTDATA(path, "tokenizer/ggml-vocab-starcoder.gguf");
  const auto tok = Tokenizer::from_gguf(*gguf::File::open(path, gguf::LoadMode::Mmap));
  const ChatFormatter chat(ChatTemplate::CHATML);
  const Tokenizer::Fim f = tok->fim();
  auto ids = [&](const std::string& s) { return tok->encode(s, false, false); };
  auto cat = [](std::vector<std::vector<int32_t>> parts) {
    std::vector<int32_t> out;
    for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
  };
  const Body body = Body::parse(R"({"input_prefix": "def f():\n    ", "input_suffix": "\n", "prompt": "return",
                                    "input_extra": [{"filename": "a.py", "text": "x = 1\n"}], "n_predict": 4})");
  // A context of 4096 leaves the extra context 4096 - 2048 + 2 tokens; one of 2046 none, of 2048
  // its last two.
  NativeRequest r = parse_infill(body, {*tok, chat, 4096}, 0);
  EXPECT_EQ(r.gen.prompt, cat({ids("\n\n--- snippet ---\n\n"), ids("x = 1\n"), {f.pre}, ids("def f():\n    "), tok->encode("return", false, true),
                               {f.suf}, ids("\n"), {f.mid}}));
  const std::vector<int32_t> fim = cat({{f.pre}, ids("def f():\n    "), ids("return"), {f.suf}, ids("\n"), {f.mid}});
  EXPECT_EQ(parse_infill(body, {*tok, chat, 2046}, 0).gen.prompt, fim);
  const std::vector<int32_t> x = ids("x = 1\n");
  EXPECT_EQ(parse_infill(body, {*tok, chat, 2048}, 0).gen.prompt, cat({{x.end() - 2, x.end()}, fim}));
  // The prefix keeps its last 1536 tokens, the suffix its first 512 - 2 - len(prompt).
  std::string long_text;
  for (int i = 0; i < 2000; i++) long_text += " w" + std::to_string(i % 10);
  Body big = {{"input_prefix", long_text}, {"input_suffix", long_text}, {"prompt", "return"}};
  r = parse_infill(big, {*tok, chat, 8192}, 0);
  const auto all = ids(long_text), tail = ids("return");
  const size_t n_suffix = 512 - 2 - tail.size();
  std::vector<int32_t> want = {f.pre};
  want.insert(want.end(), all.end() - 1536, all.end());
  want.insert(want.end(), tail.begin(), tail.end());
  want.push_back(f.suf);
  want.insert(want.end(), all.begin(), all.begin() + long(n_suffix));
  want.push_back(f.mid);
  EXPECT_EQ(r.gen.prompt, want);

  for (const char* bad : {R"({"input_prefix": "a"})", R"({"input_prefix": "a", "input_suffix": "b", "input_extra": {}})",
                          R"({"input_prefix": "a", "input_suffix": "b", "prompt": 3})"}) {
    EXPECT_THROW(parse_infill(Body::parse(bad), {*tok, chat, 2048}, 0), ApiError) << bad;
  }
}

TEST_F(Native, AModelWithoutFimTokensCannotInfill) {
  try {
    parse_infill(Body::parse(R"({"input_prefix": "a", "input_suffix": "b"})"), pc(), 0);
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 501);
    EXPECT_NE(std::string(e.what()).find("prefix, suffix, middle"), std::string::npos) << e.what();
  }
}

Event token_event(int32_t id, std::string text) {
  Event e;
  e.text = std::move(text);
  e.tokens.push_back({id, -0.5f, {{id, -0.5f}}});
  return e;
}

TEST_F(Native, ResponsesInLlamaServersShape) {
  NativeRequest r = parse(R"({"prompt": "Once", "n_predict": 2, "n_probs": 1, "return_tokens": true, "stop": ["!"]})");
  Event end;
  end.done = true;
  end.finish_reason = "stop";
  end.stop_word = "!";
  end.prompt_tokens = int(r.gen.prompt.size());
  end.cached_tokens = 1;
  end.prompt_ms = 2, end.predicted_ms = 4;
  NativeWriter w(r, *tok, "m");
  w.add(token_event(300, "a\n"));
  w.add(token_event(301, "b"));
  w.add(end);
  ASSERT_TRUE(w.finished());
  const json j = w.response();
  EXPECT_EQ(j["content"], "a\nb");
  EXPECT_EQ(j["tokens"], json({300, 301}));
  EXPECT_EQ(j["stop"], true);
  EXPECT_EQ(j["stop_type"], "word");
  EXPECT_EQ(j["stopping_word"], "!");
  EXPECT_EQ(j["has_new_line"], true);
  EXPECT_EQ(j["tokens_predicted"], 2);
  EXPECT_EQ(j["tokens_evaluated"], r.gen.prompt.size());
  EXPECT_EQ(j["timings"]["predicted_per_token_ms"], 2.0);
  EXPECT_EQ(j["timings"]["prompt_n"], r.gen.prompt.size() - 1);
  ASSERT_EQ(j["completion_probabilities"].size(), 2u);
  EXPECT_EQ(j["completion_probabilities"][0]["id"], 300);
  EXPECT_EQ(j["completion_probabilities"][0]["top_logprobs"][0]["logprob"], -0.5);

  r.stream = true;
  NativeWriter s(r, *tok, "m");
  const auto first = s.chunks(token_event(300, "a"));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0]["stop"], false);
  EXPECT_EQ(first[0]["tokens"], json({300}));
  EXPECT_EQ(first[0]["completion_probabilities"].size(), 1u);
  end.finish_reason = "length";
  const auto last = s.chunks(end);
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0]["stop"], true);
  EXPECT_EQ(last[0]["stop_type"], "limit");
  EXPECT_FALSE(last[0].contains("completion_probabilities"));
}

}  // namespace
}  // namespace hart::serve
