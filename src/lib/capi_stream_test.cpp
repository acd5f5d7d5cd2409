// The C API's step-wise calls, what the bindings' iterators drive: a generation hands out each
// token as it is computed (the session then holds the prompt and the tokens before it, no more),
// stops where the caller stops asking, holds its session and sampler while open, and refuses a
// session freed under it; a request hands out each chunk as the engine makes it, and freeing it
// mid-stream cancels it.
#include <gtest/gtest.h>
#include <hart.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lib/capi_test_util.h"

namespace {

using namespace hart::capi_test;

hart_sampler* greedy(hart_model* m) {
  hart_sampler_params sp = hart_sampler_default_params();
  sp.temperature = 0;
  hart_sampler* s = hart_sampler_new(m, &sp);
  EXPECT_NE(s, nullptr) << hart_last_error();
  return s;
}

TEST(CApiGeneration, EachTokenComesAsItIsComputed) {
  HART_REQUIRE_TESTDATA(path, "golden/stories260K__once_upon_a_time.json");
  const Tokens want = nlohmann::json::parse(std::ifstream(path))["generated_tokens"].get<Tokens>();
  Handles h{load(stories())};
  h.session = new_session(h.model);
  hart_sampler* s = greedy(h.model);
  const Tokens prompt = tokenize(h.model, "Once upon a time");
  const auto n_prompt = int32_t(prompt.size());
  hart_generate_params gp = hart_generate_default_params();
  gp.max_tokens = 32;
  hart_generation* g = hart_generation_new(h.session, s, prompt.data(), n_prompt, &gp);
  ASSERT_NE(g, nullptr) << hart_last_error();
  EXPECT_EQ(hart_seq_n_past(h.session, 0), n_prompt) << "the prompt is computed at once";
  Tokens got;
  std::string text;
  int32_t token = 0, len = 0;
  const char* piece = nullptr;
  for (int i = 0; i < 32; i++) {
    ASSERT_EQ(hart_generation_next(g, &token, &piece, &len), 1) << hart_last_error();
    got.push_back(token);
    text.append(piece, size_t(len));
    // Token i is handed out before anything after it is computed: a collect-then-return loop
    // would have decoded all 32 by the first call.
    EXPECT_EQ(hart_generation_n_tokens(g), i + 1);
    EXPECT_EQ(hart_seq_n_past(h.session, 0), n_prompt + i);
  }
  ASSERT_EQ(hart_generation_next(g, &token, &piece, &len), 1) << "the held-back text";
  EXPECT_EQ(token, HART_TOKEN_NONE);
  text.append(piece, size_t(len));
  EXPECT_EQ(hart_generation_next(g, &token, &piece, &len), 0);
  EXPECT_EQ(hart_generation_next(g, nullptr, nullptr, nullptr), 0) << "and on every later call";
  EXPECT_EQ(got, want);
  char buf[1024];
  const int32_t n = hart_detokenize(h.model, got.data(), 32, buf, sizeof buf, false);
  EXPECT_EQ(text, std::string(buf, size_t(n)));
  hart_generation_free(g);
  hart_sampler_free(s);
}

TEST(CApiGeneration, StoppingEarlyComputesNoMore) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  Handles h{load(path)};
  h.session = new_session(h.model);
  hart_sampler* s = greedy(h.model);
  const Tokens prompt = tokenize(h.model, "Once upon a time");
  const auto n_prompt = int32_t(prompt.size());
  hart_generation* g = hart_generation_new(h.session, s, prompt.data(), n_prompt, nullptr);  // 128 tokens
  ASSERT_NE(g, nullptr) << hart_last_error();
  Tokens first(3);
  for (int32_t& t : first) ASSERT_EQ(hart_generation_next(g, &t, nullptr, nullptr), 1);
  hart_generation_free(g);
  EXPECT_EQ(hart_seq_n_past(h.session, 0), n_prompt + 2) << "the third token was sampled, not decoded";

  // What the session kept is the conversation so far: the third token goes on from there.
  g = hart_generation_new(h.session, s, &first[2], 1, nullptr);
  ASSERT_NE(g, nullptr) << hart_last_error();
  int32_t fourth = 0;
  ASSERT_EQ(hart_generation_next(g, &fourth, nullptr, nullptr), 1);
  hart_generation_free(g);
  hart_seq_truncate(h.session, 0, 0);
  hart_sampler_reset(s);
  hart_generate_params gp = hart_generate_default_params();
  gp.max_tokens = 4;
  Tokens four;
  ASSERT_EQ(hart_generate(h.session, s, prompt.data(), n_prompt, &gp,
                          [](int32_t t, const char*, int32_t, void* user) {
                            if (t != HART_TOKEN_NONE) static_cast<Tokens*>(user)->push_back(t);
                            return true;
                          },
                          &four),
            4);
  EXPECT_EQ(four, (Tokens{first[0], first[1], first[2], fourth}));
  hart_sampler_free(s);
}

TEST(CApiGeneration, HoldsItsSessionAndSamplerAndIsCancelled) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  Handles h{load(path)};
  h.session = new_session(h.model, 2);
  hart_sampler* s = greedy(h.model);
  hart_sampler* s2 = greedy(h.model);
  const Tokens prompt = tokenize(h.model, "Once upon a time");
  const auto n_prompt = int32_t(prompt.size());
  hart_generation* g = hart_generation_new(h.session, s, prompt.data(), n_prompt, nullptr);
  ASSERT_NE(g, nullptr) << hart_last_error();
  // Calls that would move the sequence or the logits under the generation are refused.
  const hart_seq_input other = {1, prompt.data(), n_prompt, HART_LOGITS_LAST};
  EXPECT_EQ(hart_decode_batch(h.session, &other, 1), HART_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hart_last_error()).find("open generation"), std::string::npos) << hart_last_error();
  EXPECT_EQ(hart_decode(h.session, prompt.data(), 1), HART_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hart_seq_truncate(h.session, 0, 0), HART_ERROR_COUNT);
  EXPECT_EQ(hart_seq_copy(h.session, 0, 1), HART_ERR_INVALID_ARGUMENT);
  float e[64];
  EXPECT_EQ(hart_embed(h.session, prompt.data(), n_prompt, e, 64), HART_ERROR_COUNT);
  EXPECT_EQ(hart_generation_new(h.session, s2, prompt.data(), n_prompt, nullptr), nullptr);
  EXPECT_EQ(hart_sampler_accept(s, 1), HART_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hart_sampler_reset(s), HART_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hart_generate(h.session, s2, prompt.data(), n_prompt, nullptr, nullptr, nullptr), HART_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hart_seq_n_past(h.session, 0), n_prompt) << "reading is fine";
  ASSERT_EQ(hart_generation_next(g, nullptr, nullptr, nullptr), 1);

  // Cancelled from the session: the next call says so, and the generation has ended.
  EXPECT_EQ(hart_session_cancel(h.session), HART_OK);
  EXPECT_EQ(hart_generation_next(g, nullptr, nullptr, nullptr), HART_ERR_CANCELLED);
  EXPECT_EQ(hart_generation_next(g, nullptr, nullptr, nullptr), 0);
  hart_generation_free(g);
  EXPECT_EQ(hart_decode_batch(h.session, &other, 1), HART_OK) << "free again";
  EXPECT_EQ(hart_sampler_reset(s), HART_OK);

  // A session or sampler freed under an open generation: refused, not touched.
  hart_session* doomed = new_session(h.model);
  g = hart_generation_new(doomed, s2, prompt.data(), n_prompt, nullptr);
  ASSERT_NE(g, nullptr) << hart_last_error();
  hart_session_free(doomed);
  EXPECT_EQ(hart_generation_next(g, nullptr, nullptr, nullptr), HART_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hart_last_error()).find("session was freed"), std::string::npos) << hart_last_error();
  EXPECT_EQ(hart_generation_n_tokens(g), 0);
  hart_generation_free(g);
  EXPECT_EQ(hart_sampler_accept(s2, 1), HART_OK) << "the sampler was let go";
  g = hart_generation_new(h.session, s2, prompt.data(), 1, nullptr);
  ASSERT_NE(g, nullptr) << hart_last_error();
  hart_sampler_free(s2);
  EXPECT_EQ(hart_generation_next(g, nullptr, nullptr, nullptr), HART_ERR_INVALID_ARGUMENT);
  hart_generation_free(g);
  EXPECT_EQ(hart_decode(h.session, prompt.data(), 1), HART_OK) << "the session was let go";
  hart_sampler_free(s);
}

TEST(CApiGeneration, BadArgumentsAreRefused) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  Handles h{load(path)};
  h.session = new_session(h.model, 1, 16);
  hart_sampler* s = greedy(h.model);
  const int32_t t[2] = {1, 403}, bad = 512;
  EXPECT_EQ(hart_generation_new(nullptr, s, t, 2, nullptr), nullptr);
  EXPECT_STREQ(hart_last_error(), "session is NULL");
  EXPECT_EQ(hart_generation_new(h.session, nullptr, t, 2, nullptr), nullptr);
  EXPECT_EQ(hart_generation_new(h.session, reinterpret_cast<hart_sampler*>(h.session), t, 2, nullptr), nullptr);
  EXPECT_EQ(hart_generation_new(h.session, s, nullptr, 2, nullptr), nullptr);
  EXPECT_EQ(hart_generation_new(h.session, s, t, 0, nullptr), nullptr);
  EXPECT_EQ(hart_generation_new(h.session, s, t, -2, nullptr), nullptr);
  EXPECT_EQ(hart_generation_new(h.session, s, &bad, 1, nullptr), nullptr);
  EXPECT_EQ(hart_last_status(), HART_ERR_INVALID_ARGUMENT);
  const Tokens long_prompt(17, 403);
  EXPECT_EQ(hart_generation_new(h.session, s, long_prompt.data(), 17, nullptr), nullptr);
  EXPECT_EQ(hart_last_status(), HART_ERR_CONTEXT_FULL);
  hart_generate_params gp = hart_generate_default_params();
  gp.n_stops = 2;  // stops NULL
  EXPECT_EQ(hart_generation_new(h.session, s, t, 2, &gp), nullptr);
  gp.n_stops = -1;
  EXPECT_EQ(hart_generation_new(h.session, s, t, 2, &gp), nullptr);
  const char* stops[2] = {"x", nullptr};
  gp.stops = stops;
  gp.n_stops = 2;
  EXPECT_EQ(hart_generation_new(h.session, s, t, 2, &gp), nullptr);
  EXPECT_NE(std::string(hart_last_error()).find("stop string 1"), std::string::npos) << hart_last_error();
  EXPECT_EQ(hart_seq_n_past(h.session, 0), 0) << "a refused generation changes nothing";
  hart_model* other = load(path);  // a sampler of another model
  hart_sampler* foreign = greedy(other);
  EXPECT_EQ(hart_generation_new(h.session, foreign, t, 2, nullptr), nullptr);
  hart_sampler_free(foreign);
  hart_model_free(other);

  EXPECT_EQ(hart_generation_next(nullptr, nullptr, nullptr, nullptr), HART_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hart_generation_next(reinterpret_cast<hart_generation*>(s), nullptr, nullptr, nullptr),
            HART_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hart_generation_n_tokens(nullptr), HART_ERROR_COUNT);
  hart_generation* g = hart_generation_new(h.session, s, t, 2, nullptr);
  ASSERT_NE(g, nullptr) << hart_last_error();
  hart_generation_free(g);
  EXPECT_EQ(hart_generation_next(g, nullptr, nullptr, nullptr), HART_ERR_INVALID_ARGUMENT) << "freed";
  hart_generation_free(g);  // a second free is ignored
  hart_generation_free(nullptr);
  // The context fills: the generation ends there, with the tokens that fit.
  hart_seq_truncate(h.session, 0, 0);
  gp = hart_generate_default_params();
  gp.max_tokens = -1;
  gp.ignore_eos = true;
  g = hart_generation_new(h.session, s, t, 2, &gp);
  ASSERT_NE(g, nullptr) << hart_last_error();
  int events = 0;
  while (hart_generation_next(g, nullptr, nullptr, nullptr) == 1) events++;
  EXPECT_EQ(hart_generation_n_tokens(g), 16 - 2 + 1) << "the last one sampled into a full context";
  EXPECT_EQ(events, hart_generation_n_tokens(g) + 1);
  EXPECT_EQ(hart_seq_n_past(h.session, 0), 16);
  hart_generation_free(g);
  hart_sampler_free(s);
}

TEST(CApiRequest, ChunksComeAsTheEngineMakesThem) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  Handles h{load(path)};
  hart_engine_params ep = hart_engine_default_params();
  ep.n_ctx = 128;
  hart_engine* e = hart_engine_new(h.model, &ep);
  ASSERT_NE(e, nullptr) << hart_last_error();
  const char* body = R"({"prompt": "Once upon a time", "max_tokens": 8, "temperature": 0, "stream": true})";
  hart_request* r = hart_engine_submit(e, false, body);
  ASSERT_NE(r, nullptr) << hart_last_error();
  std::string streamed, finish;
  const char* json = nullptr;
  int n_chunks = 0;
  for (int got; (got = hart_request_next(r, &json)) != 0; n_chunks++) {
    ASSERT_EQ(got, 1) << hart_last_error();
    const auto chunk = nlohmann::json::parse(json);
    EXPECT_EQ(chunk["object"], "text_completion");
    streamed += chunk["choices"][0]["text"].get<std::string>();
    if (!chunk["choices"][0]["finish_reason"].is_null()) finish = chunk["choices"][0]["finish_reason"];
  }
  EXPECT_GT(n_chunks, 1);
  EXPECT_EQ(finish, "length");
  EXPECT_EQ(hart_request_next(r, &json), 0);
  hart_request_free(r);

  // Not streamed: the one response, with the same text.
  r = hart_engine_submit(e, false, R"({"prompt": "Once upon a time", "max_tokens": 8, "temperature": 0})");
  ASSERT_NE(r, nullptr) << hart_last_error();
  ASSERT_EQ(hart_request_next(r, &json), 1) << hart_last_error();
  EXPECT_EQ(nlohmann::json::parse(json)["choices"][0]["text"], streamed);
  EXPECT_EQ(hart_request_next(r, &json), 0);
  hart_request_free(r);

  // Freed after its first chunk: cancelled, and the engine goes on with the next request.
  r = hart_engine_submit(e, true, R"({"messages": [{"role": "user", "content": "Once"}], "max_tokens": 80,
                                      "stream": true})");
  ASSERT_NE(r, nullptr) << hart_last_error();
  ASSERT_EQ(hart_request_next(r, &json), 1) << hart_last_error();
  EXPECT_EQ(nlohmann::json::parse(json)["object"], "chat.completion.chunk");
  hart_request_free(r);
  char* whole = hart_engine_request(e, false, R"({"prompt": "Once upon a time", "max_tokens": 8, "temperature": 0})",
                                    nullptr, nullptr);
  ASSERT_NE(whole, nullptr) << hart_last_error();
  EXPECT_EQ(nlohmann::json::parse(whole)["choices"][0]["text"], streamed);
  hart_string_free(whole);

  // A callback that stops: cancelled.
  int calls = 0;
  EXPECT_EQ(hart_engine_request(e, false, body, [](const char*, void* n) { return ++*static_cast<int*>(n) < 2; }, &calls),
            nullptr);
  EXPECT_EQ(hart_last_status(), HART_ERR_CANCELLED);
  EXPECT_EQ(calls, 2);

  EXPECT_EQ(hart_engine_submit(nullptr, true, body), nullptr);
  EXPECT_EQ(hart_engine_submit(e, false, nullptr), nullptr);
  EXPECT_EQ(hart_engine_submit(e, false, "{not json"), nullptr);
  EXPECT_EQ(hart_last_status(), HART_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hart_engine_submit(e, true, R"({"messages": 3})"), nullptr);
  EXPECT_EQ(hart_last_status(), HART_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hart_request_next(nullptr, &json), HART_ERR_INVALID_ARGUMENT);
  r = hart_engine_submit(e, false, body);
  ASSERT_NE(r, nullptr) << hart_last_error();
  EXPECT_EQ(hart_request_next(r, nullptr), HART_ERR_INVALID_ARGUMENT);
  hart_engine_free(e);  // before its request: the request says so rather than wait forever
  EXPECT_EQ(hart_request_next(r, &json), HART_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hart_last_error()).find("engine was freed"), std::string::npos) << hart_last_error();
  hart_request_free(r);
  hart_request_free(r);
}

}  // namespace
