// Embeddings: pooling and normalization by hand-made numbers, requests checked, and a model's
// embeddings (stories260K through Embedder) equal for equal inputs, different for different.
#include "serve/embeddings.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/testdata.h"
#include "gguf/gguf.h"
#include "serve/openai_api.h"

namespace hart::serve {
namespace {

using nlohmann::json;

TEST(Embeddings, PoolingAndNormalization) {
  const std::vector<float> h = {1, 2, 3, 5, 8, 14};  // 3 tokens of 2
  EXPECT_EQ(pool(h, 2, Pooling::MEAN), (std::vector<float>{4, 7}));
  EXPECT_EQ(pool(h, 2, Pooling::CLS), (std::vector<float>{1, 2}));
  EXPECT_EQ(pool(h, 2, Pooling::LAST), (std::vector<float>{8, 14}));
  std::vector<float> v = {3, -4};
  normalize(v, 2);
  EXPECT_FLOAT_EQ(v[0], 0.6f);
  EXPECT_FLOAT_EQ(v[1], -0.8f);
  v = {3, -4};
  normalize(v, 1);
  EXPECT_FLOAT_EQ(v[1], -4.0f / 7);
  v = {3, -4};
  normalize(v, 0);
  EXPECT_FLOAT_EQ(v[1], -32760.0f);
  v = {3, -4};
  normalize(v, -1);
  EXPECT_EQ(v, (std::vector<float>{3, -4}));
}

// Rerank requests on a model without a rerank template: query and document joined as the
// vocabulary adds BOS / EOS (stories260K adds BOS only); scores sorted, top_n of them.
TEST(Rerank, RequestsAndResponses) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  const auto m = Model::from_file(gguf::File::open(path, gguf::LoadMode::Mmap));
  const auto tok = Tokenizer::from_gguf(*m->file);
  RerankRequest r = parse_rerank_request(json::parse(R"({"query": "dog", "documents": ["a dog", "a cat"], "top_n": 1})"), *m->file, *tok, 512);
  ASSERT_EQ(r.inputs.size(), 2u);
  std::vector<int32_t> want = {tok->bos()};
  for (const char* part : {"dog", "a cat"})
    for (int32_t id : tok->encode(part, false, false)) want.push_back(id);
  EXPECT_EQ(r.inputs[1], want);
  EXPECT_FALSE(r.tei);
  const json j = rerank_response({0.2f, 0.9f}, r, json::object(), "m", 11);
  EXPECT_EQ(j["results"], json::parse(R"([{"index": 1, "relevance_score": 0.8999999761581421}])"));
  EXPECT_EQ(j["usage"]["prompt_tokens"], 11);
  RerankRequest tei = parse_rerank_request(json::parse(R"({"query": "q", "texts": ["x", "y"], "return_text": true})"), *m->file, *tok, 512);
  const json t = rerank_response({0.5f, 0.25f}, tei, json::object(), "m", 4);
  EXPECT_EQ(t[0]["text"], "x");
  EXPECT_EQ(t[1]["score"], 0.25);
  for (const char* bad : {R"({"documents": ["a"]})", R"({"query": "q"})", R"({"query": "q", "documents": []})",
                          R"({"query": "q", "documents": [1]})", R"({"query": "q", "documents": ["a"], "top_n": -1})"})
    EXPECT_THROW(parse_rerank_request(json::parse(bad), *m->file, *tok, 512), ApiError) << bad;
  EXPECT_EQ(pool(std::vector<float>{1, 2, 3, 4}, 2, Pooling::RANK), (std::vector<float>{3, 4}));  // Qwen3's last token
  EXPECT_EQ(pooling_from_name("rank"), Pooling::RANK);
  EXPECT_EQ(pooling_from_name("none"), Pooling::MEAN);
  EXPECT_FALSE(pooling_from_name("max"));
}

TEST(Embeddings, ResponseFloatAndBase64) {
  EmbeddingsRequest r;
  const std::vector<std::vector<float>> vs = {{1.0f, -2.0f}, {0.5f, 0.0f}};
  json j = embeddings_response(vs, r, "m", 7);
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["data"][1]["index"], 1);
  EXPECT_EQ(j["data"][0]["embedding"], json({1.0, -2.0}));
  EXPECT_EQ(j["usage"]["prompt_tokens"], 7);
  r.base64 = true;
  j = embeddings_response(vs, r, "m", 7);
  // 1.0f = 00 00 80 3f, -2.0f = 00 00 00 c0 (little-endian).
  EXPECT_EQ(j["data"][0]["embedding"], "AACAPwAAAMA=");
}

struct EmbedModel : ::testing::Test {
  std::unique_ptr<Tokenizer> tok;
  std::unique_ptr<Model> model;
  void SetUp() override {
    HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
    auto f = gguf::File::open(path, gguf::LoadMode::Memory);
    tok = Tokenizer::from_gguf(*f);
    model = Model::from_file(std::move(f));
  }
  std::string blamed(const json& body) {
    try {
      parse_embeddings_request(body, *tok, 64);
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      return e.param;
    }
    return "(accepted)";
  }
};

TEST_F(EmbedModel, InputShapes) {
  EXPECT_EQ(parse_embeddings_request({{"input", "Once upon"}}, *tok, 64).inputs.size(), 1u);
  EXPECT_EQ(parse_embeddings_request({{"input", {"a", "b", "c"}}}, *tok, 64).inputs.size(), 3u);
  EXPECT_EQ(parse_embeddings_request({{"input", {1, 2, 3}}}, *tok, 64).inputs, (std::vector<std::vector<int32_t>>{{1, 2, 3}}));
  EXPECT_EQ(parse_embeddings_request({{"input", {{1, 2}, {3}}}}, *tok, 64).inputs.size(), 2u);
  EXPECT_EQ(blamed({{"input", 5}}), "input");
  EXPECT_EQ(blamed(json::object()), "input");
  EXPECT_EQ(blamed({{"input", json::array()}}), "input");
  EXPECT_EQ(blamed({{"input", {1, -1}}}), "input");
  EXPECT_EQ(blamed({{"input", {"a", 1}}}), "input");
  EXPECT_EQ(blamed({{"input", std::string(300, 'a') + " b c d e f g h i j k l m n o p q r s t u v w x y z"}}), "input");
  EXPECT_EQ(blamed({{"input", "a"}, {"encoding_format", "int8"}}), "encoding_format");
  EXPECT_EQ(blamed({{"input", "a"}, {"encoding_format", 1}}), "encoding_format");
  EXPECT_EQ(blamed({{"input", "a"}, {"dimensions", 8}}), "dimensions");
  EXPECT_EQ(blamed({{"input", "a"}, {"embd_normalize", "2"}}), "embd_normalize");
  EXPECT_EQ(blamed({{"input", "a"}, {"embd_normalize", 18446744073709551615ULL}}), "embd_normalize");  // not -1
}

TEST_F(EmbedModel, MeanOfTheLastHiddenStatesNormalized) {
  ASSERT_EQ(pooling_of(*model), Pooling::MEAN);  // a decoder model that names no pooling
  Embedder e(*model, BackendSet({"cpu"}, 2, ""), 128);
  const auto a = tok->encode("Once upon a time", true, true), b = tok->encode("The little dog ran", true, true);
  const std::vector<float> ea = e.embed(a, 2), eb = e.embed(b, 2), ea2 = e.embed(a, 2);
  ASSERT_EQ(ea.size(), size_t(model->hp.n_embd));
  EXPECT_EQ(ea, ea2);
  EXPECT_NE(ea, eb);
  double norm = 0;
  for (float x : ea) norm += double(x) * x;
  EXPECT_NEAR(norm, 1.0, 1e-5);
  // The mean of the hidden states of a session of its own, normalized.
  Session s(*model, SessionParams{128}, BackendSet({"cpu"}, 1, ""));
  const std::span<const float> h = s.hidden_states(a);
  ASSERT_EQ(h.size(), a.size() * size_t(model->hp.n_embd));
  std::vector<float> want = pool(h, model->hp.n_embd, Pooling::MEAN);
  normalize(want, 2);
  for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(ea[i], want[i], 1e-5) << i;
}

}  // namespace
}  // namespace hart::serve
