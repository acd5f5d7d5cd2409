// The real GGUF files in the shared test data: every one parses in both load modes with the
// same bytes, and a few known facts about them hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>

#include "common/testdata.h"
#include "gguf/gguf.h"

namespace hart::gguf {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> gguf_files_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".gguf") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::map<Type, int> type_counts(const File& f) {
  std::map<Type, int> counts;
  for (const TensorInfo& t : f.tensors()) counts[t.type]++;
  return counts;
}

TEST(GgufTestdata, EveryFileParsesTheSameInBothModes) {
  HART_REQUIRE_TESTDATA(root, "models");
  std::vector<std::string> files = gguf_files_in(root);
  for (const char* dir : {"tokenizer", "quant"}) {
    auto more = gguf_files_in(testdata_path(dir));
    files.insert(files.end(), more.begin(), more.end());
  }
  ASSERT_GE(files.size(), 20u);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    auto mapped = File::open(path, LoadMode::Mmap);
    auto loaded = File::open(path, LoadMode::Memory);
    EXPECT_EQ(mapped->file_size(), fs::file_size(path));
    EXPECT_EQ(mapped->metadata().size(), loaded->metadata().size());
    EXPECT_TRUE(mapped->get_string("general.architecture").has_value());
    ASSERT_EQ(mapped->tensors().size(), loaded->tensors().size());
    for (size_t i = 0; i < mapped->tensors().size(); i++) {
      const TensorInfo& a = mapped->tensors()[i];
      const TensorInfo& b = loaded->tensors()[i];
      EXPECT_EQ(a.name, b.name);
      ASSERT_EQ(a.nbytes, b.nbytes);
      EXPECT_EQ(std::memcmp(a.data, b.data, a.nbytes), 0) << a.name;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data) % loaded->alignment(), 0u) << a.name;
    }
  }
}

TEST(GgufTestdata, Stories260K) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  auto f = File::open(path);
  EXPECT_EQ(f->require_string("general.architecture"), "llama");
  EXPECT_EQ(f->require_int("llama.embedding_length"), 64);
  EXPECT_EQ(f->require_int("llama.block_count"), 5);
  const TensorInfo* emb = f->find_tensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->type, Type::F32);
  EXPECT_EQ(emb->n_dims, 2u);
  EXPECT_EQ(emb->ne[0], 64);
  EXPECT_EQ(emb->ne[1], 512);
  EXPECT_EQ(emb->nbytes, 64u * 512 * 4);
  EXPECT_NE(f->find_tensor("output.weight"), nullptr);
  EXPECT_EQ(f->get_string_array("tokenizer.ggml.tokens")->size(), 512u);
  const auto counts = type_counts(*f);
  EXPECT_EQ(counts.size(), 1u);  // all F32
}

TEST(GgufTestdata, TinyStoriesQ8_0) {
  HART_REQUIRE_TESTDATA(path, "models/TinyStories-656K-Q8_0.gguf");
  auto f = File::open(path, LoadMode::Memory);
  const auto counts = type_counts(*f);
  EXPECT_EQ(counts.at(Type::Q8_0), 15);
  EXPECT_EQ(counts.at(Type::F32), 5);
  EXPECT_EQ(f->find_tensor("output.weight"), nullptr);  // tied embeddings
  EXPECT_EQ(f->find_tensor("token_embd.weight")->type, Type::Q8_0);
  EXPECT_EQ(f->get_float_array("tokenizer.ggml.scores")->size(), 2048u);
}

TEST(GgufTestdata, KQuantMix) {
  HART_REQUIRE_TESTDATA(path, "models/kq-tiny-Q4_K_M.gguf");
  auto f = File::open(path);
  const auto counts = type_counts(*f);
  EXPECT_EQ(counts.at(Type::Q4_K), 13);
  EXPECT_EQ(f->find_tensor("output.weight")->type, Type::Q6_K);
}

TEST(GgufTestdata, QwenVocab) {
  HART_REQUIRE_TESTDATA(path, "models/qwen3-tiny-Q8_0.gguf");
  auto f = File::open(path);
  EXPECT_EQ(f->require_string("general.architecture"), "qwen3");
  const auto* tokens = std::get_if<std::shared_ptr<Array>>(f->find("tokenizer.ggml.tokens"));
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ((*tokens)->elem_type, ValueType::STRING);
  EXPECT_EQ((*tokens)->items.size(), 151936u);
}

TEST(GgufTestdata, QuantVectors) {
  HART_REQUIRE_TESTDATA(path, "quant/ggml_quant_vectors.gguf");
  auto f = File::open(path);
  const TensorInfo* src = f->find_tensor("src.f32");
  ASSERT_NE(src, nullptr);
  EXPECT_EQ(src->ne[0], 512);
  EXPECT_EQ(src->ne[1], 4);
  for (const char* name : {"q4_0", "q8_0", "q4_K", "q6_K", "iq4_xs", "bf16"}) {
    const TensorInfo* q = f->find_tensor(std::string(name) + ".q");
    ASSERT_NE(q, nullptr) << name;
    EXPECT_EQ(q->type, type_from_name(name)) << name;
    EXPECT_EQ(f->find_tensor(std::string(name) + ".deq")->type, Type::F32) << name;
  }
}

}  // namespace
}  // namespace hart::gguf
