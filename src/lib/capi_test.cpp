// The C API against the C++ classes it wraps: the same tokens, logits, embeddings and replies;
// several sequences in one batch, copies, rollbacks and saved states that compute what the
// original would; and every bad argument an error with a message, never a crash.
#include <gtest/gtest.h>
#include <hart.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/base64.h"
#include "common/testdata.h"
#include "lib/capi_test_util.h"
#include "lib/model_files.h"
#include "model/session.h"
#include "serve/embeddings.h"
#include "vision/vision_testing.h"

namespace {

using namespace hart::capi_test;

TEST(CApi, VersionAndStatusNames) {
  EXPECT_STREQ(hart_version(), "0.1.0");
  EXPECT_EQ(hart_abi_version(), HART_ABI_VERSION);
  EXPECT_STREQ(hart_status_name(HART_ERR_CONTEXT_FULL), "HART_ERR_CONTEXT_FULL");
}

TEST(CApi, BadFilesAreErrorsWithMessages) {
  EXPECT_EQ(hart_model_load("/nonexistent.gguf", nullptr), nullptr);
  EXPECT_EQ(hart_last_status(), HART_ERR_BAD_FILE);
  EXPECT_NE(std::string(hart_last_error()).find("/nonexistent.gguf"), std::string::npos);
  const std::string junk = testing::TempDir() + "/capi_junk.gguf";
  std::ofstream(junk) << "GGUF but not really a model file";
  EXPECT_EQ(hart_model_load(junk.c_str(), nullptr), nullptr);
  EXPECT_EQ(hart_last_status(), HART_ERR_BAD_FILE);
  hart_model_params p = hart_model_default_params();
  p.devices = "gpu";
  EXPECT_EQ(hart_model_load("synthetic:smollm2-135m:q8_0", &p), nullptr);
  EXPECT_EQ(hart_last_status(), HART_ERR_INVALID_ARGUMENT);
  p = hart_model_default_params();
  p.n_threads = -1;
  EXPECT_EQ(hart_model_load("synthetic:smollm2-135m:q8_0", &p), nullptr);
  EXPECT_EQ(hart_last_status(), HART_ERR_INVALID_ARGUMENT);
}

TEST(CApi, TokensAndMetadataMatchTheTokenizer) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  Handles h{load(path)};
  const hart::LoadedModel lm = hart::open_model(path, false);
  const std::string text = "Once upon a time, there was a <s> tiny bird.";
  EXPECT_EQ(tokenize(h.model, text), lm.tokenizer->encode(text, true, true));
  int32_t t[64];
  const int32_t n_plain = hart_tokenize(h.model, text.c_str(), -1, t, 64, false, false);
  EXPECT_EQ(Tokens(t, t + n_plain), lm.tokenizer->encode(text, false, false));
  char buf[256];
  const int32_t n = hart_detokenize(h.model, t, n_plain, buf, sizeof buf, false);
  EXPECT_EQ(std::string(buf, size_t(n)), lm.tokenizer->decode(std::span(t, size_t(n_plain))));
  EXPECT_EQ(hart_detokenize(h.model, t, n_plain, buf, n, false), -(n + 1)) << "no room for the NUL";
  const int32_t piece = hart_token_to_piece(h.model, t[1], buf, sizeof buf);
  EXPECT_EQ(std::string(buf, size_t(piece)), lm.tokenizer->token_to_piece(t[1]));
  EXPECT_EQ(hart_token_to_piece(h.model, t[1], buf, 0), -piece);
  EXPECT_EQ(hart_last_status(), HART_ERR_BUFFER_TOO_SMALL);

  EXPECT_EQ(hart_n_vocab(h.model), 512);
  EXPECT_EQ(hart_n_embd(h.model), 64);
  EXPECT_EQ(hart_n_layer(h.model), 5);
  EXPECT_EQ(hart_token_bos(h.model), 1);
  EXPECT_EQ(hart_token_eos(h.model), 2);
  EXPECT_TRUE(hart_token_is_eog(h.model, 2));
  EXPECT_GT(hart_model_meta(h.model, "general.architecture", buf, sizeof buf), 0);
  EXPECT_STREQ(buf, "llama");
  EXPECT_GT(hart_model_meta(h.model, "llama.block_count", buf, sizeof buf), 0);
  EXPECT_STREQ(buf, "5");
  EXPECT_EQ(hart_model_meta(h.model, "no.such.key", buf, sizeof buf), HART_ERROR_COUNT);
  EXPECT_EQ(hart_model_meta(h.model, "general.architecture", buf, 3), -6);
}

TEST(CApi, BadArgumentsAreRefused) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  Handles h{load(path)};
  h.session = new_session(h.model);
  int32_t t[4] = {1, 2, 3, 4};
  char buf[8];
  EXPECT_EQ(hart_tokenize(h.model, nullptr, 0, t, 4, true, true), HART_ERROR_COUNT);
  EXPECT_EQ(hart_tokenize(h.model, "x", -1, nullptr, 4, true, true), HART_ERROR_COUNT);
  EXPECT_EQ(hart_token_to_piece(h.model, 512, buf, 8), HART_ERROR_COUNT);
  EXPECT_EQ(hart_token_to_piece(h.model, -1, buf, 8), HART_ERROR_COUNT);
  EXPECT_EQ(hart_detokenize(h.model, t, 4, buf, -1, false), HART_ERROR_COUNT);
  EXPECT_EQ(hart_decode(h.session, t, 0), HART_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hart_decode(h.session, nullptr, 3), HART_ERR_INVALID_ARGUMENT);
  const int32_t bad = 9999;
  EXPECT_EQ(hart_decode(h.session, &bad, 1), HART_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hart_last_error()).find("outside the vocabulary"), std::string::npos);
  EXPECT_EQ(hart_seq_n_past(h.session, 0), 0) << "a refused decode changes nothing";
  EXPECT_EQ(hart_logits(h.session), nullptr);
  EXPECT_EQ(hart_seq_truncate(h.session, 1, 0), HART_ERROR_COUNT);
  EXPECT_EQ(hart_seq_truncate(h.session, 0, -1), HART_ERROR_COUNT);
  hart_session_params sp = hart_session_default_params();
  sp.n_batch = 0;
  EXPECT_EQ(hart_session_new(h.model, &sp), nullptr);
  sp = hart_session_default_params();
  sp.cache_type = hart_cache_type(7);
  EXPECT_EQ(hart_session_new(h.model, &sp), nullptr);
  hart_sampler_params smp = hart_sampler_default_params();
  smp.top_p = 2;
  EXPECT_EQ(hart_sampler_new(h.model, &smp), nullptr);
  smp = hart_sampler_default_params();
  smp.grammar = "root ::= [";
  EXPECT_EQ(hart_sampler_new(h.model, &smp), nullptr);
  EXPECT_EQ(hart_last_status(), HART_ERR_INVALID_ARGUMENT);
  smp.grammar = nullptr;
  smp.json_schema = "{not json";
  EXPECT_EQ(hart_sampler_new(h.model, &smp), nullptr);
  // Handles of the wrong kind, freed ones, and NULL.
  EXPECT_EQ(hart_n_vocab(reinterpret_cast<hart_model*>(h.session)), HART_ERROR_COUNT);
  EXPECT_EQ(hart_last_status(), HART_ERR_INVALID_ARGUMENT);
  hart_sampler* s = hart_sampler_new(h.model, nullptr);
  hart_sampler_free(s);
  EXPECT_EQ(hart_sampler_accept(s, 1), HART_ERR_INVALID_ARGUMENT);
  hart_sampler_free(s);  // a second free is ignored
  EXPECT_EQ(hart_generate(h.session, nullptr, t, 1, nullptr, nullptr, nullptr), HART_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hart_session_n_ctx(nullptr), HART_ERROR_COUNT);
  EXPECT_STREQ(hart_last_error(), "session is NULL");
}

TEST(CApi, ContextFullIsItsOwnStatusAndChangesNothing) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  Handles h{load(path)};
  h.session = new_session(h.model, 1, 8);
  const Tokens t = {1, 403, 407, 261, 378, 1, 2, 3, 4};
  EXPECT_EQ(hart_decode(h.session, t.data(), 9), HART_ERR_CONTEXT_FULL);
  EXPECT_EQ(hart_decode(h.session, t.data(), 8), HART_OK);
  EXPECT_EQ(hart_decode(h.session, t.data(), 1), HART_ERR_CONTEXT_FULL);
  EXPECT_EQ(hart_seq_n_past(h.session, 0), 8);
}

TEST(CApi, GreedyTokensEqualTheGolden) {
  HART_REQUIRE_TESTDATA(path, "golden/stories260K__once_upon_a_time.json");
  const auto golden = nlohmann::json::parse(std::ifstream(path));
  Handles h{load(stories())};
  h.session = new_session(h.model);
  const Tokens prompt = tokenize(h.model, "Once upon a time");
  EXPECT_EQ(prompt, golden["prompt_tokens"].get<Tokens>());
  hart_sampler_params sp = hart_sampler_default_params();
  sp.temperature = 0;
  hart_sampler* s = hart_sampler_new(h.model, &sp);
  struct Out {
    Tokens tokens;
    std::string text;
  } out;
  hart_generate_params gp = hart_generate_default_params();
  gp.max_tokens = 32;
  const int32_t n = hart_generate(h.session, s, prompt.data(), int32_t(prompt.size()), &gp,
                                  [](int32_t t, const char* piece, int32_t len, void* user) {
                                    auto* o = static_cast<Out*>(user);
                                    if (t != HART_TOKEN_NONE) o->tokens.push_back(t);
                                    o->text.append(piece, size_t(len));
                                    return true;
                                  },
                                  &out);
  EXPECT_EQ(n, 32) << hart_last_error();
  EXPECT_EQ(out.tokens, golden["generated_tokens"].get<Tokens>());
  char text[1024];
  const int32_t n_text = hart_detokenize(h.model, out.tokens.data(), 32, text, sizeof text, false);
  EXPECT_EQ(out.text, std::string(text, size_t(n_text)));
  // The logits after the prompt are the golden step 0's (an F16 KV cache: close, not equal).
  hart_seq_truncate(h.session, 0, 0);
  ASSERT_EQ(hart_decode(h.session, prompt.data(), int32_t(prompt.size())), HART_OK);
  expect_near(row(hart_logits(h.session), 512), golden["logits_step0"].get<std::vector<float>>(), 2e-2f);
  hart_sampler_free(s);
}

TEST(CApi, GenerateStopsOnCallbackCancelAndStopStrings) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  Handles h{load(path)};
  h.session = new_session(h.model);
  hart_sampler_params sp = hart_sampler_default_params();
  sp.temperature = 0;
  hart_sampler* s = hart_sampler_new(h.model, &sp);
  const Tokens prompt = tokenize(h.model, "Once upon a time");
  int calls = 0;
  const auto count_to_3 = [](int32_t, const char*, int32_t, void* user) { return ++*static_cast<int*>(user) < 3; };
  EXPECT_EQ(hart_generate(h.session, s, prompt.data(), 5, nullptr, count_to_3, &calls), 3);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(hart_seq_n_past(h.session, 0), 5 + 2) << "the third token is sampled, not decoded";

  struct Cancel {
    hart_session* s;
    int calls = 0;
  } c{h.session};
  hart_seq_truncate(h.session, 0, 0);
  const auto cancel_at_2 = [](int32_t, const char*, int32_t, void* user) {
    auto* c = static_cast<Cancel*>(user);
    if (++c->calls == 2) hart_session_cancel(c->s);
    return true;
  };
  EXPECT_EQ(hart_generate(h.session, s, prompt.data(), 5, nullptr, cancel_at_2, &c), HART_ERR_CANCELLED);
  EXPECT_EQ(c.calls, 2);

  // A stop string ends the text before it; the golden text starts ", there was a little".
  hart_seq_truncate(h.session, 0, 0);
  const char* stops[] = {"little"};
  hart_generate_params gp = hart_generate_default_params();
  gp.stops = stops;
  gp.n_stops = 1;
  std::string text;
  const int32_t n = hart_generate(h.session, s, prompt.data(), 5, &gp, collect_text, &text);
  EXPECT_GT(n, 0);
  EXPECT_LT(n, 128);
  EXPECT_EQ(text.find("little"), std::string::npos) << text;
  hart_sampler_free(s);
}

TEST(CApi, GrammarAndSchemaConstrainTheOutput) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  Handles h{load(path)};
  h.session = new_session(h.model);
  const Tokens prompt = tokenize(h.model, "Once upon a time");
  for (const char* schema : {R"({"type": "string", "enum": ["dragon", "cat"]})", R"({"type": "integer"})"}) {
    hart_sampler_params sp = hart_sampler_default_params();
    sp.seed = 7;
    sp.json_schema = schema;
    hart_sampler* s = hart_sampler_new(h.model, &sp);
    ASSERT_NE(s, nullptr) << hart_last_error();
    std::string text;
    hart_generate_params gp = hart_generate_default_params();
    gp.max_tokens = 12;
    hart_seq_truncate(h.session, 0, 0);
    ASSERT_GT(hart_generate(h.session, s, prompt.data(), 5, &gp, collect_text, &text), 0) << hart_last_error();
    text.erase(text.find_last_not_of(" \n") + 1);  // the schema's grammar allows trailing space
    if (std::string(schema).find("enum") != std::string::npos) {
      EXPECT_TRUE(text == "\"dragon\"" || text == "\"cat\"") << text;
      EXPECT_TRUE(hart_sampler_done(s));
    } else {
      EXPECT_FALSE(text.empty());
      EXPECT_EQ(text.find_first_not_of("-0123456789"), std::string::npos) << text;
    }
    // A token the grammar does not allow is refused; reset starts it over.
    const Tokens word = tokenize(h.model, "Once");
    EXPECT_EQ(hart_sampler_reset(s), HART_OK);
    EXPECT_FALSE(hart_sampler_done(s));
    EXPECT_EQ(hart_sampler_accept(s, word.back()), HART_ERR_INVALID_ARGUMENT);
    hart_sampler_free(s);
  }
}

TEST(CApi, SequencesInOneBatchComputeWhatEachDoesAlone) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  Handles h{load(path)};
  h.session = new_session(h.model, 3, 64, 8);  // n_batch 8: the batch below takes three steps
  const Tokens a = tokenize(h.model, "Once upon a time"), b = tokenize(h.model, "The little dog ran to the park");
  // Alone, in a session of its own.
  std::vector<std::vector<float>> alone;
  for (const Tokens* t : {&a, &b}) {
    hart_session* s = new_session(h.model);
    ASSERT_EQ(hart_decode(s, t->data(), int32_t(t->size())), HART_OK);
    alone.push_back(row(hart_logits(s), 512));
    hart_session_free(s);
  }
  const hart_seq_input in[2] = {{2, a.data(), int32_t(a.size()), HART_LOGITS_ALL},
                                {0, b.data(), int32_t(b.size()), HART_LOGITS_LAST}};
  ASSERT_EQ(hart_decode_batch(h.session, in, 2), HART_OK) << hart_last_error();
  expect_near(row(hart_logits_ith(h.session, 0, -1), 512), alone[0]);
  expect_near(row(hart_logits_ith(h.session, 1, 0), 512), alone[1]);
  expect_near(row(hart_logits(h.session), 512), alone[1]);
  EXPECT_NE(hart_logits_ith(h.session, 0, int32_t(a.size()) - 1), nullptr);
  EXPECT_EQ(hart_logits_ith(h.session, 0, int32_t(a.size())), nullptr);
  EXPECT_EQ(hart_logits_ith(h.session, 1, 1), nullptr);
  EXPECT_EQ(hart_logits_ith(h.session, 2, 0), nullptr);
  EXPECT_EQ(hart_seq_n_past(h.session, 2), int32_t(a.size()));
  EXPECT_EQ(hart_seq_n_past(h.session, 1), 0);
  const hart_seq_input twice[2] = {{1, a.data(), 1, HART_LOGITS_LAST}, {1, a.data(), 1, HART_LOGITS_LAST}};
  EXPECT_EQ(hart_decode_batch(h.session, twice, 2), HART_ERR_INVALID_ARGUMENT);
  const hart_seq_input outside = {3, a.data(), 1, HART_LOGITS_LAST};
  EXPECT_EQ(hart_decode_batch(h.session, &outside, 1), HART_ERR_INVALID_ARGUMENT);
}

TEST(CApi, CopyRollbackAndSavedStatesContinueAsTheOriginal) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  Handles h{load(path)};
  h.session = new_session(h.model, 2, 64);
  const Tokens prompt = tokenize(h.model, "Once upon a time"), next = {261, 378};
  ASSERT_EQ(hart_decode(h.session, prompt.data(), int32_t(prompt.size())), HART_OK);
  const int64_t size = -hart_seq_state_save(h.session, 0, nullptr, 0);
  ASSERT_GT(size, 0);
  std::vector<uint8_t> saved(static_cast<size_t>(size));
  ASSERT_EQ(hart_seq_state_save(h.session, 0, saved.data(), size), size);
  ASSERT_EQ(hart_decode(h.session, next.data(), 2), HART_OK);
  const std::vector<float> want = row(hart_logits(h.session), 512);

  ASSERT_EQ(hart_seq_copy(h.session, 0, 1), HART_OK);  // copy, then both go on the same way
  EXPECT_EQ(hart_seq_n_past(h.session, 1), int32_t(prompt.size()) + 2);
  ASSERT_EQ(hart_seq_truncate(h.session, 1, int32_t(prompt.size())), int32_t(prompt.size()));
  const hart_seq_input in = {1, next.data(), 2, HART_LOGITS_LAST};
  ASSERT_EQ(hart_decode_batch(h.session, &in, 1), HART_OK);
  expect_near(row(hart_logits(h.session), 512), want);

  hart_session* other = new_session(h.model);  // the saved state, in another session
  ASSERT_EQ(hart_seq_state_load(other, 0, saved.data(), size), HART_OK) << hart_last_error();
  EXPECT_EQ(hart_seq_n_past(other, 0), int32_t(prompt.size()));
  ASSERT_EQ(hart_decode(other, next.data(), 2), HART_OK);
  expect_near(row(hart_logits(other), 512), want);
  EXPECT_EQ(hart_seq_state_load(other, 0, saved.data(), size - 1), HART_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hart_seq_n_past(other, 0), 0) << "a refused load leaves the sequence empty";
  EXPECT_EQ(hart_seq_state_save(other, 0, saved.data(), -1), HART_ERROR_COUNT);
  hart_session_free(other);
}

TEST(CApi, EmbeddingsAreTheServers) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  Handles h{load(path)};
  h.session = new_session(h.model);
  const Tokens t = tokenize(h.model, "Once upon a time");
  std::vector<float> e(64);
  EXPECT_EQ(hart_embed(h.session, t.data(), int32_t(t.size()), e.data(), 63), -64);
  ASSERT_EQ(hart_embed(h.session, t.data(), int32_t(t.size()), e.data(), 64), 64);
  const hart::LoadedModel lm = hart::open_model(path, false);
  hart::Session s(*lm.model, hart::SessionParams{128}, hart::BackendSet({"cpu"}, 1, ""));
  std::vector<float> want = hart::serve::pool(s.hidden_states(t), 64, hart::serve::Pooling::MEAN);
  hart::serve::normalize(want, 2);
  expect_near(e, want, 1e-3f);
  EXPECT_EQ(hart_seq_n_past(h.session, 0), 0);
}

TEST(CApi, ChatTemplateAndEngineRequests) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  Handles h{load(path)};
  const hart_chat_message msgs[2] = {{"system", "Be brief."}, {"user", "Hi"}};
  char buf[256];
  const int32_t n = hart_chat_apply(h.model, msgs, 2, true, buf, sizeof buf);
  ASSERT_GT(n, 0) << hart_last_error();  // the file has no template: chatml, as `hart serve` uses
  EXPECT_STREQ(buf, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  char* json = hart_chat_apply_json(h.model, R"({"messages": [{"role": "system", "content": "Be brief."},
                                                              {"role": "user", "content": "Hi"}]})");
  ASSERT_NE(json, nullptr) << hart_last_error();
  EXPECT_STREQ(json, buf);
  hart_string_free(json);
  EXPECT_EQ(hart_chat_apply_json(h.model, R"({"messages": []})"), nullptr);
  EXPECT_EQ(hart_last_status(), HART_ERR_INVALID_ARGUMENT);

  hart_engine_params ep = hart_engine_default_params();
  ep.n_ctx = 128;
  hart_engine* e = hart_engine_new(h.model, &ep);
  ASSERT_NE(e, nullptr) << hart_last_error();
  char* r = hart_engine_request(e, true, R"({"messages": [{"role": "user", "content": "Once"}], "max_tokens": 16,
      "seed": 1, "response_format": {"type": "json_schema", "json_schema": {"name": "a",
      "schema": {"type": "string", "enum": ["dragon", "cat"]}}}})", nullptr, nullptr);
  ASSERT_NE(r, nullptr) << hart_last_error();
  const auto reply = nlohmann::json::parse(r);
  hart_string_free(r);
  EXPECT_EQ(reply["object"], "chat.completion");
  std::string content = reply["choices"][0]["message"]["content"];
  content.erase(content.find_last_not_of(" \n") + 1);
  EXPECT_TRUE(content == "\"dragon\"" || content == "\"cat\"") << content;
  std::vector<std::string> chunks;
  r = hart_engine_request(e, false, R"({"prompt": "Once upon a time", "max_tokens": 4, "stream": true})",
                          [](const char* chunk, void* user) {
                            static_cast<std::vector<std::string>*>(user)->push_back(chunk);
                            return true;
                          },
                          &chunks);
  ASSERT_NE(r, nullptr) << hart_last_error();
  EXPECT_STREQ(r, "null");
  hart_string_free(r);
  ASSERT_FALSE(chunks.empty());
  EXPECT_EQ(nlohmann::json::parse(chunks[0])["object"], "text_completion");
  EXPECT_EQ(hart_engine_request(e, true, R"({"messages": "hi"})", nullptr, nullptr), nullptr);
  EXPECT_EQ(hart_last_status(), HART_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hart_last_error()).find("messages"), std::string::npos);
  EXPECT_EQ(hart_engine_request(e, false, R"({"prompt": "x", "stream": true})", nullptr, nullptr), nullptr);
  hart_engine_free(e);
}

TEST(CApi, HandlesKeepTheirModelAlive) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  hart_model* m = load(path);
  hart_session* s = new_session(m);
  hart_model_free(m);
  const int32_t t = 1;
  EXPECT_EQ(hart_decode(s, &t, 1), HART_OK);
  EXPECT_NE(hart_logits(s), nullptr);
  hart_session_free(s);
}

}  // namespace

namespace hart {
namespace {

// hart_engine_load_mmproj: the engine then answers image_url parts (the vision fixtures); before
// it, and for a file that is not a projector, images are refused.
TEST(CApi, EngineTakesImagesAfterLoadingAProjector) {
  HART_REQUIRE_TESTDATA(base, "models/stories260K.gguf");
  vision::testing::TempDir dir;
  vision::fixtures::write_text_model(base, dir.file("text.gguf"));
  vision::fixtures::write_mmproj(dir.file("mmproj.gguf"));
  vision::fixtures::write_png(dir.file("image.png"));
  std::ifstream in(dir.file("image.png"), std::ios::binary);
  const std::string png{std::istreambuf_iterator<char>(in), {}};
  const std::string body = nlohmann::json{
      {"messages", {{{"role", "user"}, {"content", {{{"type", "image_url"}, {"image_url", {{"url", "data:image/png;base64," +
                                                      base64_encode(png.data(), png.size())}}}},
                                                    {{"type", "text"}, {"text", "What is it?"}}}}}}},
      {"temperature", 0}, {"max_tokens", 6}}.dump();
  hart_model* m = hart_model_load(dir.file("text.gguf").c_str(), nullptr);
  ASSERT_NE(m, nullptr) << hart_last_error();
  hart_engine* e = hart_engine_new(m, nullptr);
  ASSERT_NE(e, nullptr) << hart_last_error();
  EXPECT_EQ(hart_engine_request(e, true, body.c_str(), nullptr, nullptr), nullptr);
  EXPECT_NE(std::string(hart_last_error()).find("--mmproj"), std::string::npos);
  EXPECT_FALSE(hart_engine_load_mmproj(e, dir.file("text.gguf").c_str()));
  EXPECT_EQ(hart_last_status(), HART_ERR_INVALID_ARGUMENT);
  ASSERT_TRUE(hart_engine_load_mmproj(e, dir.file("mmproj.gguf").c_str())) << hart_last_error();
  char* r = hart_engine_request(e, true, body.c_str(), nullptr, nullptr);
  ASSERT_NE(r, nullptr) << hart_last_error();
  const auto reply = nlohmann::json::parse(r);
  hart_string_free(r);
  EXPECT_EQ(reply["usage"]["prompt_tokens"].get<int>() > 20, true);  // the image's 20 positions and the text
  EXPECT_EQ(reply["usage"]["completion_tokens"], 6);
  hart_engine_free(e);
  hart_model_free(m);
}

}  // namespace
}  // namespace hart
