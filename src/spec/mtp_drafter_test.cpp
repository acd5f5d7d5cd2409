// draft-mtp on tests/golden/mtp's tiny qwen35 and qwen35moe with one MTP block
// (tools/llamacpp-golden/make_mtp_model.py): the block is loaded and left out of the forward pass (the greedy text is
// llama.cpp's), its drafts are llama.cpp de3ff81's at every step of that text
// (tools/llamacpp-golden/make-mtp), and speculation with it gives the plain run's tokens, greedy
// and sampled.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "gguf/gguf.h"
#include "model/mtp_model.h"
#include "sample/candidates.h"
#include "spec/mtp_drafter.h"
#include "spec/spec_test_util.h"
#include "spec/speculative.h"

namespace hart::spec {
namespace {

const std::string kDir = HART_MTP_GOLDEN_DIR;

std::unique_ptr<Model> load(const std::string& path) {
  return Model::from_file(gguf::File::open(path, gguf::LoadMode::Memory));
}

nlohmann::json golden(const std::string& arch) {
  std::ifstream in(kDir + "/" + arch + "-mtp-tiny-F32__drafts.json");
  return nlohmann::json::parse(in);
}

SessionParams params(bool keep_hidden) {
  SessionParams p;
  p.n_ctx = 256;
  p.speculative = true;
  p.keep_hidden = keep_hidden;
  return p;
}

struct Mtp {
  explicit Mtp(const std::string& arch = "qwen35") : target(load(kDir + "/" + arch + "-mtp-tiny-F32.gguf")) {}
  std::unique_ptr<Model> target;
  std::unique_ptr<Model> block = mtp_model(*target);
  DraftSessions sessions{*block, params(true), [] { return BackendSet({"cpu"}, 1, ""); }};
};

TEST(MtpModel, LoadsTheBlockOutsideTheTrunk) {
  const Mtp m;
  EXPECT_EQ(m.target->hp.n_layer, 2);
  ASSERT_EQ(m.target->hp.nextn_layers.size(), 1u);
  ASSERT_EQ(m.target->w.nextn.size(), 1u);
  const NextN& nx = m.target->w.nextn[0].nextn;
  EXPECT_EQ(nx.eh_proj.w, m.target->tensor("blk.2.nextn.eh_proj.weight"));
  EXPECT_EQ(nx.hnorm, m.target->tensor("blk.2.nextn.hnorm.weight"));
  EXPECT_EQ(nx.shared_head_norm, m.target->tensor("blk.2.nextn.shared_head_norm.weight"));
  EXPECT_EQ(nx.embed_tokens, nullptr);
  EXPECT_EQ(m.target->w.nextn[0].q.w, m.target->tensor("blk.2.attn_q.weight"));
  EXPECT_EQ(m.target->hp.nextn_layers[0].attn, AttnKind::FULL);
  EXPECT_EQ(m.block->hp.n_layer, 1);
  EXPECT_EQ(m.block->w.layers[0].o.w, m.target->tensor("blk.2.attn_output.weight"));
}

// A plain decode step reads nothing of the MTP block.
TEST(MtpModel, DecodeReadsLeaveTheBlockOut) {
  const Mtp m;
  size_t block = 0;
  for (const auto& [name, t] : m.target->by_name)
    if (name.rfind("blk.2.", 0) == 0) block += t->nbytes();
  const Tensor* embd = m.target->w.tok_embd;
  EXPECT_GT(block, 0u);
  EXPECT_EQ(decode_reads(*m.target).total, m.target->weight_bytes - block - (embd->nbytes() - embd->row_bytes()));
}

TEST(MtpModel, ModelWithoutMtpLayersIsAClearError) {
  const Mtp m;
  Model plain;
  plain.hp = m.target->hp;
  plain.hp.nextn_layers.clear();
  plain.w = m.target->w;
  plain.w.nextn.clear();
  EXPECT_FALSE(has_mtp(plain));
  try {
    mtp_model(plain);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nextn_predict_layers"), std::string::npos) << e.what();
  }
}

// The target session's kept hidden states are those Session::hidden_states gives, after a
// verification step that kept part of its tokens.
TEST(MtpModel, SessionKeepsEveryPositionsHiddenState) {
  const Mtp m;
  const std::vector<int32_t> text = {1, 260, 261, 262, 263, 270, 280, 290, 295};
  Session s(*m.target, params(true), BackendSet({"cpu"}, 1, ""));
  s.decode(std::span(text).first(4));
  s.begin_tentative();
  s.decode(std::span(text).subspan(4), true);
  s.keep(3);  // positions 0..6 are kept
  Session ref(*m.target, params(false), BackendSet({"cpu"}, 1, ""));
  const std::span<const float> want = ref.hidden_states(std::span(text).first(7));
  const size_t w = size_t(m.target->hp.n_embd);
  ASSERT_EQ(s.n_past(), 7);
  HiddenRows& rows = *s.hidden_rows();
  for (int p = 0; p < 7; p++) {
    const std::span<const float> got = rows.at(p);
    for (size_t i = 0; i < w; i++) ASSERT_NEAR(got[i], want[size_t(p) * w + i], 1e-5f) << "position " << p;
  }
  EXPECT_THROW(rows.at(7), Error);
  rows.forget_before(5);
  EXPECT_EQ(rows.first(), 5);
  EXPECT_THROW(rows.at(4), Error);
  EXPECT_EQ(s.truncate(6), 0);  // a recurrent state cannot go back: all is forgotten, the rows too
  EXPECT_EQ(rows.end(), 0);
}

class MtpArch : public ::testing::TestWithParam<std::string> {};

// At every step of llama.cpp's greedy text, the drafts are llama.cpp's; the text is too.
TEST_P(MtpArch, DraftsAsLlamaCpp) {
  const nlohmann::json g = golden(GetParam());
  Mtp m(GetParam());
  const std::vector<int32_t> prompt = g["prompt_tokens"];
  const int n_max = g["n_max"];
  Session target(*m.target, params(true), BackendSet({"cpu"}, 1, ""));
  MtpDrafter drafter(m.sessions, 0.0f, 0);
  drafter.bind(*target.hidden_rows());
  std::vector<int32_t> history(prompt.begin(), prompt.end() - 1);
  target.decode(history);
  Draft d;
  int32_t last = prompt.back();
  for (const nlohmann::json& step : g["steps"]) {
    ASSERT_EQ(target.n_past(), int(step["n_past"]));
    ASSERT_EQ(last, int(step["last"])) << "the target's greedy text differs from llama.cpp's at " << target.n_past();
    history.push_back(last);
    drafter.draft(history, n_max, d);
    EXPECT_EQ(d.tokens, step["draft"].get<std::vector<int32_t>>()) << "drafted after position " << target.n_past();
    const int32_t one[1] = {last};
    last = argmax(target.decode(one));
  }
}

std::vector<int32_t> run(Mtp& m, const SamplerParams& sp, std::span<const int32_t> prompt, int n, int n_max,
                         SpecStats* stats) {
  Session session(*m.target, params(stats != nullptr), BackendSet({"cpu"}, 1, ""));
  Sampler sampler(sp, m.target->hp.n_vocab);
  std::vector<int32_t> out;
  const GenerateOptions go = collecting(n, out);
  if (!stats) {
    generate(session, sampler, prompt, go);
    return out;
  }
  SpecParams p;
  p.types = {SpecType::DRAFT_MTP};
  p.n_max = n_max;
  std::vector<std::unique_ptr<Drafter>> drafters;
  drafters.push_back(std::make_unique<MtpDrafter>(m.sessions, 0.0f, 0));
  Speculator spec(p, std::move(drafters));
  spec::generate(session, sampler, prompt, go, spec, *stats);
  return out;
}

TEST_P(MtpArch, SpeculationGivesThePlainTokens) {
  const nlohmann::json g = golden(GetParam());
  Mtp m(GetParam());
  const std::vector<int32_t> prompt = g["prompt_tokens"];
  for (const bool sampled : {false, true}) {
    SCOPED_TRACE(sampled ? "sampled (seed 7, temperature 0.8)" : "greedy");
    SamplerParams sp;
    sp.temperature = sampled ? 0.8f : 0.0f;
    sp.seed = 7;
    const std::vector<int32_t> plain = run(m, sp, prompt, 40, 0, nullptr);
    for (const int n_max : {1, 3, 6}) {
      SCOPED_TRACE("n_max " + std::to_string(n_max));
      SpecStats stats;
      EXPECT_EQ(run(m, sp, prompt, 40, n_max, &stats), plain);
      EXPECT_GT(stats.n_drafted, 0);
      EXPECT_GT(stats.n_accepted, 0) << "no draft token was kept: the drafts are not the block's";
      EXPECT_LT(stats.n_accepted, stats.n_drafted) << "every draft token kept: the refusals are not tested";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Files, MtpArch, ::testing::Values("qwen35", "qwen35moe"));

TEST(MtpDrafter, NeedsTheTargetsHiddenStates) {
  Mtp m;
  Session target(*m.target, params(false), BackendSet({"cpu"}, 1, ""));
  EXPECT_EQ(target.hidden_rows(), nullptr);
  MtpDrafter drafter(m.sessions, 0.0f, 0);
  Draft d;
  EXPECT_THROW(drafter.draft(std::vector<int32_t>{1, 260}, 3, d), Error);  // bound to none
  HiddenRows narrow(m.target->hp.n_embd - 1);
  EXPECT_THROW(drafter.bind(narrow), Error);
  // States from position 5 on only (the positions before came from a prefix cache): no draft.
  HiddenRows late(m.target->hp.n_embd);
  const std::vector<float> zeros(size_t(m.target->hp.n_embd) * 4, 0.5f);
  late.store(zeros.data(), 5, 4);
  drafter.bind(late);
  drafter.draft(std::vector<int32_t>{1, 260, 261, 262, 263, 264, 265, 266, 267, 268}, 3, d);
  EXPECT_TRUE(d.tokens.empty());
}

TEST(MtpSpecParams, DraftMtpIsAType) {
  EXPECT_EQ(type_from_name("draft-mtp"), SpecType::DRAFT_MTP);
  SpecParams p;
  p.types = types_from_list("draft-mtp,ngram-simple");
  EXPECT_EQ(p.types, (std::vector<SpecType>{SpecType::NGRAM_SIMPLE, SpecType::DRAFT_MTP}));
  EXPECT_TRUE(p.uses_mtp());
  p.types = {SpecType::DRAFT_MTP};
  p.n_max = 0;
  EXPECT_THROW(p.validate(512), Error);
  p.n_max = 3;
  EXPECT_NO_THROW(p.validate(512));
  EXPECT_EQ(p.max_draft(), 3);
  p.types = types_from_list("draft-simple,draft-mtp");
  EXPECT_THROW(p.validate(512), Error);
}

}  // namespace
}  // namespace hart::spec
