// Writes the models the server's end-to-end tests need beyond ../shared/testdata:
//   qwen3-tiny-fim.gguf  qwen3-tiny with Qwen2.5-Coder's FIM tokens (<|fim_prefix|> 151659 ...
//                        <|file_sep|> 151664, control tokens), named by their text only, as
//                        Qwen2.5-Coder's GGUF files name them: /infill finds them as llama.cpp does.
//   qwen3-tiny-rerank.gguf  qwen3-tiny as llama.cpp converts a Qwen3-Reranker: pooling type rank,
//                        labels yes / no, cls.output.weight the LM head's (the tied embeddings')
//                        rows of "yes" and "no", and Qwen3-Reranker's rerank template.
// Usage: serve_test_models TESTDATA OUT_DIR
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "gguf/gguf.h"

using namespace hart;

namespace {

constexpr int32_t kControl = 3;  // llama.cpp's token type

// A copy of `file` with `edit` applied to its metadata, the tensors' bytes as they are; `more`
// adds to the copy.
void write_edited(const gguf::File& file, const std::string& out, const std::function<void(const std::string&, gguf::Value&)>& edit,
                  const std::function<void(gguf::Writer&)>& more = {}) {
  gguf::Writer w;
  if (file.alignment() != gguf::kDefaultAlignment) w.set_alignment(file.alignment());
  for (const gguf::KeyValue& kv : file.metadata()) {
    gguf::Value v = kv.value;
    if (const auto* a = std::get_if<std::shared_ptr<gguf::Array>>(&v)) v = std::make_shared<gguf::Array>(**a);  // edits must not reach the file's
    edit(kv.key, v);
    w.set(kv.key, std::move(v));
  }
  for (const gguf::TensorInfo& t : file.tensors()) w.add_tensor(t.name, t.type, std::span(t.ne, t.n_dims), t.data, t.nbytes);
  if (more) more(w);
  w.write(out);
}

void fim_model(const std::string& testdata, const std::string& out) {
  const auto file = gguf::File::open(testdata + "/models/qwen3-tiny-Q8_0.gguf");
  const std::pair<int, const char*> fim[] = {{151659, "<|fim_prefix|>"}, {151660, "<|fim_middle|>"}, {151661, "<|fim_suffix|>"},
                                             {151662, "<|fim_pad|>"},    {151663, "<|repo_name|>"},  {151664, "<|file_sep|>"}};
  write_edited(*file, out, [&](const std::string& key, gguf::Value& v) {
    if (key != "tokenizer.ggml.tokens" && key != "tokenizer.ggml.token_type") return;
    auto& items = std::get<std::shared_ptr<gguf::Array>>(v)->items;
    for (const auto& [id, text] : fim) items.at(size_t(id)) = key == "tokenizer.ggml.tokens" ? gguf::Value(std::string(text)) : gguf::Value(kControl);
  });
}

void rerank_model(const std::string& testdata, const std::string& out) {
  const auto file = gguf::File::open(testdata + "/models/qwen3-tiny-Q8_0.gguf");
  const auto tokens = file->get_string_array("tokenizer.ggml.tokens").value();
  const gguf::TensorInfo& embd = *file->find_tensor("token_embd.weight");
  const size_t row = embd.nbytes / size_t(embd.ne[1]);
  std::vector<uint8_t> head;
  for (const char* label : {"yes", "no"}) {
    const size_t id = size_t(std::find(tokens.begin(), tokens.end(), label) - tokens.begin());
    if (id == tokens.size()) throw Error(std::string("no token '") + label + "'");
    head.insert(head.end(), embd.data + id * row, embd.data + (id + 1) * row);
  }
  auto labels = std::make_shared<gguf::Array>();
  labels->elem_type = gguf::ValueType::STRING;
  labels->items = {std::string("yes"), std::string("no")};
  const int64_t ne[2] = {embd.ne[0], 2};
  write_edited(*file, out, [](const std::string&, gguf::Value&) {}, [&](gguf::Writer& w) {
    w.set("qwen3.pooling_type", uint32_t(4));  // llama.cpp's LLAMA_POOLING_TYPE_RANK
    w.set("qwen3.classifier.output_labels", labels);
    w.set("tokenizer.chat_template.rerank",
          std::string("<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct "
                      "provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n<|im_start|>user\n<Instruct>: Given a "
                      "web search query, retrieve relevant passages that answer the query\n<Query>: {query}\n<Document>: "
                      "{document}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"));
    w.add_tensor("cls.output.weight", embd.type, ne, head.data(), head.size());
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: serve_test_models TESTDATA OUT_DIR\n");
    return 2;
  }
  const std::string testdata = argv[1], dir = argv[2];
  if (!std::filesystem::exists(testdata + "/models")) {
    std::fprintf(stderr, "serve_test_models: no test data at %s\n", testdata.c_str());
    return 77;
  }
  try {
    std::filesystem::create_directories(dir);
    fim_model(testdata, dir + "/qwen3-tiny-fim.gguf");
    rerank_model(testdata, dir + "/qwen3-tiny-rerank.gguf");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "serve_test_models: %s\n", e.what());
    return 1;
  }
  return 0;
}
