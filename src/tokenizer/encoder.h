// The model-specific half of a tokenizer: turns a fragment of plain text (no special tokens
// left in it) into token ids. One implementation per vocabulary kind.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace hart::gguf {
class File;
}

namespace hart::tok {

class Encoder {
 public:
  virtual ~Encoder() = default;
  // Appends the ids of `text` to `out`. `after_special` is true at the start of the input and
  // right after a special token: where SentencePiece adds its space prefix.
  virtual void encode(std::string_view text, bool after_special, std::vector<int32_t>& out) const = 0;
};

// The encoders keep a reference to `vocab`, which must outlive them.
std::unique_ptr<Encoder> make_spm_encoder(const Vocab& vocab);
std::unique_ptr<Encoder> make_bpe_encoder(const Vocab& vocab, const gguf::File& file);  // reads the merges
std::unique_ptr<Encoder> make_wpm_encoder(const Vocab& vocab);
// Throws hart::Error when a token text is not a valid escaped byte string.
std::unique_ptr<Encoder> make_rwkv_encoder(const Vocab& vocab);

}  // namespace hart::tok
