// WordPiece (BERT) as llama.cpp runs it: normalize (NFD + accent stripping, lowercasing,
// dropping control characters), split on whitespace and around punctuation / CJK characters,
// then cut each word greedily into the longest tokens. The GGUF vocabulary writes word-initial
// pieces with a leading "▁" and continuations bare (HF's "##" removed), so each word is matched
// as "▁" + word. A word that cannot be cut completely becomes [UNK].
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <string>

#include "common/error.h"
#include "tokenizer/encoder.h"
#include "tokenizer/utf8.h"

namespace hart::tok {

namespace {

// CJK ideograph blocks that BERT treats as one-character words (the HF definition).
bool is_cjk(UChar32 c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool in_categories(UChar32 c, uint32_t mask) { return (U_GET_GC_MASK(c) & mask) != 0; }

constexpr uint32_t kControl = U_GC_CC_MASK | U_GC_CF_MASK | U_GC_CO_MASK | U_GC_CS_MASK;
constexpr uint32_t kMark = U_GC_M_MASK;
constexpr uint32_t kPunct = U_GC_P_MASK;
constexpr uint32_t kSymbol = U_GC_S_MASK;

class WpmEncoder final : public Encoder {
 public:
  explicit WpmEncoder(const Vocab& vocab) : v_(vocab) {}

  void encode(std::string_view text, bool, std::vector<int32_t>& out) const override {
    for (const std::string& word : words(text)) {
      const std::string w = std::string(kSpaceMarker) + word;
      const size_t before = out.size();
      for (size_t i = 0; i < w.size();) {
        size_t j = std::min(w.size(), i + v_.max_token_len);
        int32_t id = kNoToken;
        for (; j > i; --j)
          if ((id = v_.find(std::string_view(w).substr(i, j - i))) != kNoToken) break;
        if (id == kNoToken) {
          out.resize(before);
          break;
        }
        out.push_back(id);
        i = j;
      }
      if (out.size() != before) continue;
      if (v_.unk == kNoToken) throw Error("cannot encode '" + word + "': no token fits and there is no [UNK] token");
      out.push_back(v_.unk);
    }
  }

 private:
  std::vector<std::string> words(std::string_view text) const {
    UErrorCode status = U_ZERO_ERROR;
    icu::UnicodeString u = icu::UnicodeString::fromUTF8(
        icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
    if (v_.strip_accents) {
      const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
      if (U_SUCCESS(status)) u = nfd->normalize(u, status);
      if (U_FAILURE(status)) throw Error(std::string("unicode normalization failed: ") + u_errorName(status));
    }

    std::vector<std::string> words(1);
    const auto finish_word = [&] {
      if (!words.back().empty()) words.emplace_back();
    };
    for (int32_t i = 0; i < u.length(); i = u.moveIndex32(i, 1)) {
      const UChar32 c = u.char32At(i);
      if (u_isUWhiteSpace(c)) {
        finish_word();
        continue;
      }
      if (c == 0 || c == 0xFFFD || in_categories(c, kControl)) continue;
      if (v_.strip_accents && in_categories(c, kMark)) continue;
      std::string s;
      append_utf8(s, static_cast<char32_t>(v_.lowercase ? u_tolower(c) : c));
      if (in_categories(c, kPunct) || (c < 0x7F && in_categories(c, kSymbol)) || is_cjk(c)) {
        finish_word();
        words.back() = std::move(s);
        words.emplace_back();
      } else {
        words.back() += s;
      }
    }
    if (words.back().empty()) words.pop_back();
    return words;
  }

  const Vocab& v_;
};

}  // namespace

std::unique_ptr<Encoder> make_wpm_encoder(const Vocab& vocab) { return std::make_unique<WpmEncoder>(vocab); }

}  // namespace hart::tok
