#include "tokenizer/text_output.h"

#include <gtest/gtest.h>

#include "common/testdata.h"
#include "gguf/gguf.h"

namespace hart {
namespace {

std::unique_ptr<Tokenizer> tokenizer(const std::string& path) {
  return Tokenizer::from_gguf(*gguf::File::open(path, gguf::LoadMode::Mmap));
}

// Feeds the tokens of `text` one by one; returns what was released, with flush() at the end.
std::string run(TextOutput& out, const Tokenizer& tok, const std::string& text, bool* stopped = nullptr) {
  std::string got;
  for (int32_t id : tok.encode(text, false, false)) got += out.push(id);
  got += out.flush();
  if (stopped) *stopped = out.stopped();
  return got;
}

TEST(TextOutput, StopStringSpanningTokensEndsTheText) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  auto tok = tokenizer(path);
  TextOutput out(*tok, {"upon a", "zzz"}, {}, /*at_text_start=*/true);
  bool stopped = false;
  EXPECT_EQ(run(out, *tok, "Once upon a time there", &stopped), "Once ");
  EXPECT_TRUE(stopped);
  EXPECT_EQ(out.stop_word(), "upon a");
}

TEST(TextOutput, TheEarliestStopStringIsTheOneReported) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  auto tok = tokenizer(path);
  TextOutput out(*tok, {"time", "upon"}, {}, /*at_text_start=*/true);
  EXPECT_EQ(run(out, *tok, "Once upon a time there"), "Once ");
  EXPECT_EQ(out.stop_word(), "upon");
  TextOutput none(*tok, {"zzz"}, {}, /*at_text_start=*/true);
  run(none, *tok, "Once upon a time");
  EXPECT_EQ(none.stop_word(), "");
}

TEST(TextOutput, WithoutStopEverythingComesOut) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  auto tok = tokenizer(path);
  TextOutput out(*tok, {"time!"}, {}, /*at_text_start=*/true);
  bool stopped = true;
  EXPECT_EQ(run(out, *tok, "Once upon a time there", &stopped), "Once upon a time there");
  EXPECT_FALSE(stopped);
}

TEST(TextOutput, HoldsBackAPossibleStopStart) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  auto tok = tokenizer(path);
  TextOutput out(*tok, {"a time!"}, {}, /*at_text_start=*/true);
  std::string released;
  for (int32_t id : tok->encode("Once upon a time", false, false)) released += out.push(id);
  EXPECT_EQ(released.find("time"), std::string::npos);  // "a time" could still become "a time!"
  EXPECT_EQ(released + out.flush(), "Once upon a time");
}

// A generation continues its prompt: its first word keeps the space SentencePiece gives it, as
// llama.cpp prints it; only at the text's start (a prompt of BOS alone) is it dropped.
TEST(TextOutput, AContinuationKeepsItsFirstSpace) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  auto tok = tokenizer(path);
  TextOutput continuing(*tok, {}), starting(*tok, {}, {}, /*at_text_start=*/true);
  EXPECT_EQ(run(continuing, *tok, "there was"), " there was");
  EXPECT_EQ(run(starting, *tok, "there was"), "there was");
}

TEST(TextOutput, IncompleteUtf8IsHeldBack) {
  EXPECT_EQ(complete_utf8_prefix("ab\xC3"), 2u);
  EXPECT_EQ(complete_utf8_prefix("ab\xC3\xA9"), 4u);
  EXPECT_EQ(complete_utf8_prefix("\xE2\x82"), 0u);
  EXPECT_EQ(complete_utf8_prefix("\xF0\x9F\x98\x80x"), 5u);
}

}  // namespace
}  // namespace hart
