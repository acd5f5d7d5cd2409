#include "quant/imatrix.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "common/error.h"
#include "common/testdata.h"
#include "gguf/gguf.h"

namespace hart {
namespace {

// The qtypes models' imatrix: one entry per matrix llama-imatrix saw, each value in_sum2 / counts.
TEST(ImportanceMatrix, ReadsLlamaCppGguf) {
  HART_REQUIRE_TESTDATA(path, "qtypes/qt-llama.imatrix.gguf");
  const ImportanceMatrix m = ImportanceMatrix::load(path);
  const auto raw = gguf::File::open(path);
  ASSERT_GT(m.size(), 0u);
  EXPECT_EQ(m.size() * 2, raw->tensors().size());
  EXPECT_GT(m.chunk_count(), 0);
  const std::vector<float>* q = m.find("blk.0.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->size(), 256u);  // n_embd input columns
  const gguf::TensorInfo* sums = raw->find_tensor("blk.0.attn_q.weight.in_sum2");
  const gguf::TensorInfo* counts = raw->find_tensor("blk.0.attn_q.weight.counts");
  ASSERT_TRUE(sums && counts);
  float count = 0, sum5 = 0;
  std::memcpy(&count, counts->data, 4);
  std::memcpy(&sum5, sums->data + 5 * 4, 4);
  ASSERT_GT(count, 0);
  EXPECT_FLOAT_EQ((*q)[5], sum5 / count);
  for (float v : *q) EXPECT_GE(v, 0.0f);
  EXPECT_EQ(m.find("no.such.weight"), nullptr);
}

// llama.cpp's legacy .dat: values stored times the call count, which the reader divides out.
TEST(ImportanceMatrix, ReadsLegacyDat) {
  const std::string path = (std::filesystem::temp_directory_path() / ("hart_imatrix_" + std::to_string(getpid()) + ".dat")).string();
  {
    std::ofstream out(path, std::ios::binary);
    auto i32 = [&](int32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
    const std::string name = "blk.0.ffn_up.weight", dataset = "calibration.txt";
    const float values[3] = {2.0f, 4.0f, 6.5f};
    i32(1);
    i32(int32_t(name.size()));
    out.write(name.data(), std::streamsize(name.size()));
    i32(2);  // ncall
    i32(3);
    out.write(reinterpret_cast<const char*>(values), sizeof(values));
    i32(10);  // chunks
    i32(int32_t(dataset.size()));
    out.write(dataset.data(), std::streamsize(dataset.size()));
  }
  const ImportanceMatrix m = ImportanceMatrix::load(path);
  std::filesystem::remove(path);
  ASSERT_NE(m.find("blk.0.ffn_up.weight"), nullptr);
  EXPECT_EQ(*m.find("blk.0.ffn_up.weight"), (std::vector<float>{1.0f, 2.0f, 3.25f}));
  EXPECT_EQ(m.chunk_count(), 10);
  EXPECT_EQ(m.datasets(), std::vector<std::string>{"calibration.txt"});
}

TEST(ImportanceMatrix, RefusesOtherFiles) {
  EXPECT_THROW(ImportanceMatrix::load("/nonexistent/imatrix.gguf"), Error);
  HART_REQUIRE_TESTDATA(model, "qtypes/models/qt-llama-F32.gguf");
  EXPECT_THROW(ImportanceMatrix::load(model), Error);  // a GGUF without imatrix metadata
}

}  // namespace
}  // namespace hart
