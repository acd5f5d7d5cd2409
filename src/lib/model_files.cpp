#include "lib/model_files.h"

#include "common/error.h"
#include "model/synthetic.h"

namespace hart {

LoadedModel open_model(const std::string& path, bool mmap, const std::function<void(size_t, size_t)>& progress) {
  if (!is_synthetic_name(path))
    return open_model(gguf::File::open(path, mmap ? gguf::LoadMode::Mmap : gguf::LoadMode::Memory, progress));
  LoadedModel lm = open_model(make_synthetic_model(path.substr(10)));
  lm.synthetic = true;
  return lm;
}

LoadedModel open_model(std::unique_ptr<gguf::File> file) {
  LoadedModel lm;
  lm.tokenizer = Tokenizer::from_gguf(*file);
  lm.model = Model::from_file(std::move(file));
  if (lm.tokenizer->n_vocab() != lm.model->hp.n_vocab)
    throw Error("vocabulary has " + std::to_string(lm.tokenizer->n_vocab()) +
                " tokens but the model's embedding has " + std::to_string(lm.model->hp.n_vocab));
  return lm;
}

}  // namespace hart
