// Tokenizer construction from arbitrary GGUF bytes (seeded with small vocabulary files that
// scripts/fuzz derives from the shared test data): a vocabulary is either rejected with a
// hart::Error or tokenizes and detokenizes text with ids inside it. A text the vocabulary has
// no token for (no byte token, no <unk>) may be refused with a hart::Error too.
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"

using namespace hart;

namespace {

// Text that reaches every path: words, spaces, digits, punctuation, multi-byte UTF-8, an
// invalid byte, control-token texts.
constexpr std::string_view kTexts[] = {
    "Hello world! It's 2025, isn't it?  \n\tTabs\tand   spaces",
    "\xC3\xA9t\xC3\xA9 \xE2\x96\x81 \xF0\x9F\x98\x80 \xE4\xBD\xA0\xE5\xA5\xBD \xFF end",
    "<s></s><|endoftext|><|im_start|>user\nhi<|im_end|>[CLS][SEP]<unk>",
    "",
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<Tokenizer> tok;
  try {
    const std::unique_ptr<gguf::File> f = gguf::File::from_bytes(std::span<const uint8_t>(data, size));
    tok = Tokenizer::from_gguf(*f);  // keeps no reference to the file
  } catch (const Error&) {
    return 0;
  }
  for (std::string_view text : kTexts) {
    for (int flags = 0; flags < 4; flags++) {
      std::vector<int32_t> ids;
      try {
        ids = tok->encode(text, flags & 1, flags & 2);
      } catch (const Error&) {
        continue;
      }
      for (int32_t id : ids) {
        if (id < 0 || id >= tok->n_vocab()) __builtin_trap();
        tok->token_to_piece(id, true);
        tok->is_eog(id);
      }
      tok->decode(ids, flags & 1);
    }
  }
  return 0;
}
