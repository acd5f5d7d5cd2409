// Builds without ICU (the riscv64 cross build has no ICU): WordPiece needs Unicode
// normalization (NFD for accent stripping) that only ICU provides here, so BERT vocabularies
// are refused with a clear error instead of being tokenized differently.
#include "common/error.h"
#include "tokenizer/encoder.h"

namespace hart::tok {

std::unique_ptr<Encoder> make_wpm_encoder(const Vocab&) {
  throw Error("WordPiece (BERT) vocabularies need ICU, and this build of hart has none");
}

}  // namespace hart::tok
