#include "serve/slot_file.h"

#include <gtest/gtest.h>

#include "common/testdata.h"
#include "gguf/gguf.h"
#include "model/lora.h"
#include "model/model.h"

namespace hart::serve {
namespace {

const SlotModel kModel{std::string(64, 'a'), "llama, 5 layers, 64 wide, 512 tokens"};
const SlotContents kContents{{1, 15, 42, -7}, {0.5f, 0.0f}, {9, 8, 7, 6, 5}};

std::string error_of(const std::vector<uint8_t>& bytes, const SlotModel& model = kModel) {
  try {
    decode_slot_file(bytes, model);
  } catch (const SlotFileError& e) {
    return e.what();
  }
  return "";
}

TEST(SlotFile, RoundTrip) {
  const SlotContents c = decode_slot_file(encode_slot_file(kModel, kContents), kModel);
  EXPECT_EQ(c.tokens, kContents.tokens);
  EXPECT_EQ(c.lora, kContents.lora);
  EXPECT_EQ(c.state, kContents.state);
  const SlotContents empty = decode_slot_file(encode_slot_file(kModel, {}), kModel);
  EXPECT_TRUE(empty.tokens.empty() && empty.lora.empty() && empty.state.empty());
}

TEST(SlotFile, DamagedCutOrForeignFilesAreRefused) {
  const std::vector<uint8_t> good = encode_slot_file(kModel, kContents);
  EXPECT_EQ(error_of({}), "not a hart slot file");
  EXPECT_EQ(error_of({'G', 'G', 'U', 'F', 3, 0, 0, 0, 0, 0}), "not a hart slot file");
  for (size_t at = 0; at < good.size(); at++) {  // any byte changed
    std::vector<uint8_t> bad = good;
    bad[at] ^= 0x20;
    EXPECT_FALSE(error_of(bad).empty()) << "byte " << at;
  }
  for (size_t n = 0; n < good.size(); n++)  // any length cut
    EXPECT_FALSE(error_of(std::vector<uint8_t>(good.begin(), good.begin() + long(n))).empty()) << n << " bytes";
  std::vector<uint8_t> flipped = good;
  flipped[20] ^= 1;
  EXPECT_NE(error_of(flipped).find("damaged"), std::string::npos);
  const SlotModel other{std::string(64, 'b'), "gemma3, 2 layers, 32 wide, 256 tokens"};
  EXPECT_EQ(error_of(good, other), "the slot file was saved by another model (llama, 5 layers, 64 wide, 512 tokens; this server runs "
                                   "gemma3, 2 layers, 32 wide, 256 tokens)");
}

// The fingerprint tells apart files of one shape whose weights or vocabulary differ.
TEST(SlotFile, ModelFingerprint) {
  HART_REQUIRE_TESTDATA(a, "models/stories260K.gguf");
  HART_REQUIRE_TESTDATA(b, "models/stories260K-Q6_K.gguf");
  const auto fa = slot_model(*Model::from_file(gguf::File::open(a)));
  EXPECT_EQ(fa.fingerprint.size(), 64u);
  EXPECT_EQ(fa.fingerprint, slot_model(*Model::from_file(gguf::File::open(a))).fingerprint);
  EXPECT_NE(fa.fingerprint, slot_model(*Model::from_file(gguf::File::open(b))).fingerprint);
  EXPECT_NE(fa.description.find("llama"), std::string::npos);
  // And one whose LoRA adapters differ: the same base with the test adapter loaded.
  auto with_adapter = Model::from_file(gguf::File::open(a));
  with_adapter->loras.push_back(load_lora(*with_adapter, HART_LORA_ADAPTER));
  const auto fl = slot_model(*with_adapter);
  EXPECT_NE(fl.fingerprint, fa.fingerprint);
  EXPECT_NE(fl.description.find("1 LoRA adapters"), std::string::npos) << fl.description;
}

TEST(SlotFile, Filenames) {
  for (const char* ok : {"x.bin", "slot-1_a.bin", "caf\xc3\xa9.bin", ".hidden", "a b", "日本.bin"}) EXPECT_TRUE(valid_slot_filename(ok)) << ok;
  for (const std::string& bad : std::vector<std::string>{"", ".", "..", "../x.bin", "a/b", "a\\b", "/etc/passwd", "c:x", "a*", "a?", "a\"", "a<", "a>", "a|",
                                " a", "a ", "a.", std::string("a\0b", 3), "a\nb", "a\x7f", "\xef\xbb\xbf" "a", "\xc3", "\xc0\xaf",
                                "\xed\xa0\x80", "a\xe2\x88\x95" "b", "a\xef\xbc\x8e" "b", "\xef\xbf\xbd", std::string(256, 'x')})
    EXPECT_FALSE(valid_slot_filename(bad)) << bad;
  EXPECT_TRUE(valid_slot_filename(std::string(255, 'x')));
}

}  // namespace
}  // namespace hart::serve
