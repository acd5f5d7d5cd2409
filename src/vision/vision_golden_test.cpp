// hart's image path against llama.cpp's on the same files (tests/golden/vision, written by
// tools/llamacpp-golden/make-vision from the fixtures this test makes again): the prompt's layout
// token for token, each tile's embeddings, the text model's logits after the prompt and its
// greedy continuation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backend/backend_set.h"
#include "common/testdata.h"
#include "vision/multimodal.h"
#include "vision/vision_testing.h"

namespace hart::vision {
namespace {

using testing::TempDir;

float max_abs_diff(std::span<const float> a, const nlohmann::json& b) {
  float d = 0;
  for (size_t i = 0; i < a.size(); i++) d = std::max(d, std::fabs(a[i] - b[i].get<float>()));
  return d;
}

int32_t argmax(std::span<const float> v) {
  size_t best = 0;
  for (size_t i = 1; i < v.size(); i++)
    if (v[i] > v[best]) best = i;
  return int32_t(best);
}

// `f16`: the projector's matrices and patch kernel in F16 (as converted files hold them), where
// ggml also rounds the pixels to F16 (its im2col takes the kernel's type).
void check_against_llama_cpp(bool f16, float embd_tolerance) {
  HART_REQUIRE_TESTDATA(base, "models/stories260K.gguf");
  const std::string name = f16 ? "idefics3-tiny-f16.json" : "idefics3-tiny.json";
  std::ifstream in(std::string(HART_REPO_GOLDEN) + "/vision/" + name);
  ASSERT_TRUE(in) << "tests/golden/vision/" << name << " is missing";
  const nlohmann::json g = nlohmann::json::parse(in);
  TempDir dir;
  fixtures::write_text_model(base, dir.file("text.gguf"));
  fixtures::write_mmproj(dir.file("mmproj.gguf"), {.f16_matrices = f16});
  fixtures::write_png(dir.file("image.png"));

  const auto text = Model::from_file(gguf::File::open(dir.file("text.gguf"), gguf::LoadMode::Memory));
  const auto tok = Tokenizer::from_gguf(*text->file);
  const auto clip = ClipModel::open(dir.file("mmproj.gguf"));
  check_pair(*clip, *text);
  Encoder encoder(*clip, BackendSet({"cpu"}, 2, ""));
  const std::vector<RgbImage> images(2, load_image(dir.file("image.png")));
  const EncodedPrompt p = encode_prompt(*clip, encoder, *tok, g["prompt"].get<std::string>(), images, true);

  const nlohmann::json& chunks = g["chunks"];
  ASSERT_EQ(p.chunks.size(), chunks.size());
  float worst = 0;
  for (size_t i = 0; i < chunks.size(); i++) {
    const PromptChunk& c = p.chunks[i];
    if (chunks[i].contains("tokens")) {
      ASSERT_FALSE(c.is_tile()) << "chunk " << i;
      EXPECT_EQ(c.tokens, chunks[i]["tokens"].get<std::vector<int32_t>>()) << "chunk " << i;
    } else {
      ASSERT_TRUE(c.is_tile()) << "chunk " << i;
      ASSERT_EQ(p.tile(c).size(), chunks[i]["embd"].size()) << "chunk " << i;
      worst = std::max(worst, max_abs_diff(p.tile(c), chunks[i]["embd"]));
    }
  }
  // ggml's GELU reads a table of F16 values (hart computes it in F32): the largest difference
  // measured is 1.8e-3 on embeddings of magnitude ~2 (F16 matrices: 2.2e-3, the logits after
  // ten tiles 1.0e-2).
  EXPECT_LT(worst, embd_tolerance) << "largest difference of an image embedding";
  std::printf("largest difference from llama.cpp: image embeddings %g", double(worst));
  EXPECT_EQ(p.n_tokens(), g["n_past"].get<int>());

  SessionParams sp;
  sp.n_ctx = 1024;
  sp.cache_type = Type::F32;
  Session s(*text, sp, BackendSet({"cpu"}, 2, ""));
  const std::vector<int32_t> last = decode_all_but_last(s, p);
  std::span<const float> logits = s.decode(last);
  const float logits_diff = max_abs_diff(logits, g["logits"]);
  std::printf(", logits %g\n", double(logits_diff));
  EXPECT_LT(logits_diff, embd_tolerance) << "logits after the prompt";
  std::vector<int32_t> generated;
  for (int step = 0; step < 8; step++) {
    generated.push_back(argmax(logits));
    logits = s.decode(std::span(&generated.back(), 1));
  }
  EXPECT_EQ(generated, g["generated_tokens"].get<std::vector<int32_t>>());
}

TEST(VisionGolden, Idefics3MatchesLlamaCpp) { check_against_llama_cpp(false, 5e-3f); }

TEST(VisionGolden, Idefics3WithF16MatricesMatchesLlamaCpp) { check_against_llama_cpp(true, 2e-2f); }

}  // namespace
}  // namespace hart::vision
