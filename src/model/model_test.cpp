// decode_reads: the weight bytes a generated token reads, which bench's roofline and
// `hart run --verbose` report; a mixture of experts counts only the experts a token picks.
#include <gtest/gtest.h>

#include "common/testdata.h"
#include "model/model.h"

namespace hart {
namespace {

std::unique_ptr<Model> load(const std::string& path) {
  return Model::from_file(gguf::File::open(path, gguf::LoadMode::Memory));
}

TEST(DecodeReads, DenseModelReadsEveryMatrixAndOneEmbeddingRow) {
  HART_REQUIRE_TESTDATA(path, "archs/models/granite-tiny-F32.gguf");
  const std::unique_ptr<Model> m = load(path);
  const DecodeReads r = decode_reads(*m);
  EXPECT_EQ(r.experts, 0u);
  EXPECT_EQ(r.experts_stored, 0u);
  size_t unread = 0;  // of an embedding table that is not also the output matrix, all rows but one
  if (m->w.tok_embd != m->w.output.w) unread = m->w.tok_embd->nbytes() - m->w.tok_embd->row_bytes();
  EXPECT_EQ(r.total, m->weight_bytes - unread);
}

TEST(DecodeReads, MixtureOfExpertsReadsTheChosenExpertsOnly) {
  HART_REQUIRE_TESTDATA(path, "archs/models/olmoe-tiny-F32.gguf");
  std::unique_ptr<Model> m = load(path);
  ASSERT_EQ(m->hp.n_expert, 2);
  const DecodeReads all = decode_reads(*m);  // the file's tokens use both experts
  size_t stored = 0;
  for (const LayerWeights& L : m->w.layers)
    for (const Tensor* e : {L.gate_exps.w, L.up_exps.w, L.gate_up_exps.w, L.down_exps.w})
      if (e) stored += e->nbytes();
  ASSERT_GT(stored, 0u);
  EXPECT_EQ(all.experts_stored, stored);
  EXPECT_EQ(all.experts, stored);

  for (LayerConfig& l : m->hp.layers) l.n_expert_used = 1;  // as if the router picked one of two
  const DecodeReads one = decode_reads(*m);
  EXPECT_EQ(one.experts_stored, stored);
  EXPECT_EQ(one.experts, stored / 2);
  EXPECT_EQ(one.total, all.total - stored / 2);
}

}  // namespace
}  // namespace hart
