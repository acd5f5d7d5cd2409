#include <gtest/gtest.h>

#include "common/error.h"
#include "common/testdata.h"
#include "gguf/gguf.h"
#include "vision/image_prompt.h"
#include "vision/vision_testing.h"

namespace hart::vision {
namespace {

using testing::TempDir;

ClipHParams idefics3() {
  ClipHParams hp;
  hp.projector = Projector::IDEFICS3;
  return hp;
}

std::unique_ptr<Tokenizer> tokenizer(const std::string& path) {
  return Tokenizer::from_gguf(*gguf::File::open(path, gguf::LoadMode::Memory));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ImagePrompt, LaysOutIdefics3SlicesThenTheOverview) {
  HART_REQUIRE_TESTDATA(base, "models/stories260K.gguf");
  TempDir dir;
  fixtures::write_text_model(base, dir.file("text.gguf"));
  const auto tok = tokenizer(dir.file("text.gguf"));
  auto id = [&](const char* piece) { return *tok->find_token(piece); };
  const std::vector<PromptChunk> c =
      tokenize_prompt(*tok, idefics3(), "Look:<__media__>What is it?", {{5, 2, 2}}, /*add_special=*/true);
  ASSERT_EQ(c.size(), 11u);
  std::vector<int32_t> head = tok->encode("Look:", false, true);
  head.insert(head.begin(), tok->bos());
  head.insert(head.end(), {id("<fake_token_around_image>"), id("<row_1_col_1>")});
  EXPECT_EQ(c[0].tokens, head);
  for (int t = 0; t < 5; t++) {
    ASSERT_TRUE(c[size_t(1 + 2 * t)].is_tile());
    EXPECT_EQ(c[size_t(1 + 2 * t)].tile, t);
    EXPECT_EQ(c[size_t(1 + 2 * t)].image, 0);
  }
  EXPECT_EQ(c[2].tokens, (std::vector<int32_t>{id("<fake_token_around_image>"), id("<row_1_col_2>")}));
  const int32_t newline = *tok->find_token("<0x0A>");
  EXPECT_EQ(c[4].tokens, (std::vector<int32_t>{newline, id("<fake_token_around_image>"), id("<row_2_col_1>")}));
  EXPECT_EQ(c[8].tokens, (std::vector<int32_t>{id("\n\n"), id("<fake_token_around_image>"), id("<global-img>")}));
  std::vector<int32_t> tail = {id("<fake_token_around_image>")};
  const std::vector<int32_t> rest = tok->encode("What is it?", false, true);
  tail.insert(tail.end(), rest.begin(), rest.end());
  EXPECT_EQ(c[10].tokens, tail);
}

TEST(ImagePrompt, RefusesMarkersWithoutImagesAndAForeignVocabulary) {
  HART_REQUIRE_TESTDATA(base, "models/stories260K.gguf");
  TempDir dir;
  fixtures::write_text_model(base, dir.file("text.gguf"));
  const auto tok = tokenizer(dir.file("text.gguf"));
  EXPECT_NE(error_of([&] { tokenize_prompt(*tok, idefics3(), "<__media__><__media__>", {{2, 1, 1}}, true); })
                .find("more <__media__> markers than the 1 images"),
            std::string::npos);
  EXPECT_NE(error_of([&] { tokenize_prompt(*tok, idefics3(), "no marker", {{2, 1, 1}}, true); })
                .find("has 0 <__media__> markers for 1 images"),
            std::string::npos);
  const auto plain = tokenizer(base);  // stories260K itself: no image tokens
  EXPECT_NE(error_of([&] { tokenize_prompt(*plain, idefics3(), "<__media__>", {{2, 1, 1}}, true); })
                .find("has no token '\\n\\n', which idefics3's image layout needs"),
            std::string::npos);
}

}  // namespace
}  // namespace hart::vision
