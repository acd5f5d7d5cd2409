// SentencePiece (BPE flavour) as llama.cpp runs it: start from single characters and keep
// merging the adjacent pair whose concatenation is the highest-scoring token (leftmost pair on
// ties). Characters that never became a token fall back to their bytes (<0xNN> tokens).
#include <cstdio>
#include <string>

#include "common/error.h"
#include "tokenizer/encoder.h"
#include "tokenizer/pair_merge.h"
#include "tokenizer/utf8.h"

namespace hart::tok {

namespace {

class SpmEncoder final : public Encoder {
 public:
  explicit SpmEncoder(const Vocab& vocab) : v_(vocab) {}

  void encode(std::string_view text, bool after_special, std::vector<int32_t>& out) const override {
    std::string s = after_special && v_.add_space_prefix ? " " : "";
    s += repair_utf8(text);
    merge(replace_all(s, " ", kSpaceMarker), out);
  }

 private:
  void merge(std::string_view s, std::vector<int32_t>& out) const {
    // A pair's priority is the score of the token it would form. Every merged symbol is a token
    // by construction; only single characters can be missing from the vocabulary.
    const auto score = [&](std::string_view l, std::string_view r) -> std::optional<double> {
      const int32_t id = v_.find(std::string_view(l.data(), l.size() + r.size()));
      if (id == kNoToken) return std::nullopt;
      return v_.tokens[id].score;
    };
    for (std::string_view piece : merge_pairs(s, score)) {
      if (const int32_t id = v_.find(piece); id != kNoToken) {
        out.push_back(id);
        continue;
      }
      for (char c : piece) out.push_back(byte_fallback(static_cast<uint8_t>(c)));
    }
  }

  int32_t byte_fallback(uint8_t byte) const {
    const int32_t id = v_.byte_token(byte);
    if (id != kNoToken) return id;
    if (v_.unk != kNoToken) return v_.unk;
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", byte);
    throw Error(std::string("cannot encode byte ") + hex + ": no byte token and no <unk> token");
  }

  const Vocab& v_;
};

}  // namespace

std::unique_ptr<Encoder> make_spm_encoder(const Vocab& vocab) { return std::make_unique<SpmEncoder>(vocab); }

}  // namespace hart::tok
