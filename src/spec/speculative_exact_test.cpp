// Speculative decoding gives the target's text: for every architecture's tiny test model (the
// recurrent and hybrid ones included: rwkv7, arwkv7, qwen35, lfm2), greedy and seeded sampled
// generation are token for token the same with and without speculation, whatever the draft gets
// right. A drafter that knows the plain run's text proposes a few of its tokens and then wrong
// ones, so steps keep every length of the draft (none, some, all), and the state goes back
// (attention K/V slots dropped, a recurrent state computed again from its checkpoint).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "backend/cpu/kernels.h"
#include "common/testdata.h"
#include "gguf/gguf.h"
#include "model/arch.h"
#include "quant/quant.h"
#include "spec/draft_model.h"
#include "spec/ngram_simple.h"
#include "spec/spec_test_util.h"
#include "spec/speculative.h"
#include "tokenizer/tokenizer.h"

namespace hart::spec {
namespace {

std::vector<std::string> tiny_models() {
  std::vector<std::string> files;
  for (const char* dir : {"archs/models", "models"}) {
    const std::string d = testdata_path(dir);
    if (!std::filesystem::exists(d)) continue;
    for (const auto& e : std::filesystem::directory_iterator(d))
      if (e.path().extension() == ".gguf") files.push_back(std::string(dir) + "/" + e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Proposes the next `right` tokens of the plain run's text and then a wrong one, `right` going
// 0, 1, ..., n_max - 1, n_max (all) round and round.
class OracleDrafter final : public Drafter {
 public:
  OracleDrafter(std::vector<int32_t> text, int n_vocab) : text_(std::move(text)), n_vocab_(n_vocab) {}
  SpecType type() const override { return SpecType::NGRAM_SIMPLE; }
  void draft(std::span<const int32_t> history, int n_max, Draft& out) override {
    out.clear();
    const int right = step_++ % (n_max + 1);
    for (int i = 0; i < n_max; i++) {
      const size_t at = history.size() + size_t(i);
      const int32_t truth = at < text_.size() ? text_[at] : 0;
      out.tokens.push_back(i < right ? truth : (truth + 1 + i) % n_vocab_);
    }
  }

 private:
  std::vector<int32_t> text_;  // prompt and generated tokens of the plain run
  int n_vocab_;
  int step_ = 0;
};

struct Loaded {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tok;
};

Loaded load(const std::string& path) {
  auto gf = gguf::File::open(path, gguf::LoadMode::Memory);
  Loaded l;
  l.tok = Tokenizer::from_gguf(*gf);
  l.model = Model::from_file(std::move(gf));
  return l;
}

std::vector<int32_t> run(const Model& m, const SamplerParams& sp, std::span<const int32_t> prompt, int n,
                         Speculator* spec, SpecStats* stats = nullptr) {
  SessionParams p;
  p.n_ctx = 256;
  p.speculative = spec != nullptr;
  Session session(m, p, BackendSet({"cpu"}, 2, ""));
  Sampler sampler(sp, m.hp.n_vocab);
  std::vector<int32_t> out;
  const GenerateOptions go = collecting(n, out);
  SpecStats local;
  if (spec) spec::generate(session, sampler, prompt, go, *spec, stats ? *stats : local);
  else generate(session, sampler, prompt, go);
  return out;
}

class Exact : public ::testing::TestWithParam<std::string> {};

TEST_P(Exact, SameTokensWithAndWithoutSpeculation) {
  HART_REQUIRE_TESTDATA(path, GetParam());
  {
    auto gf = gguf::File::open(path, gguf::LoadMode::Mmap);
    if (!find_arch(gf->require_string("general.architecture"))) GTEST_SKIP() << "architecture not supported";
    for (const gguf::TensorInfo& t : gf->tensors())
      if (!type_supported(t.type)) GTEST_SKIP() << "tensor type not supported";
  }
  const Loaded l = load(path);
  const Model& m = *l.model;
  std::vector<int32_t> prompt = l.tok->encode("Once upon a time, there was a little", true, false);
  if (prompt.empty()) prompt = {l.tok->bos() >= 0 ? l.tok->bos() : 1};
  constexpr int kTokens = 48;
  for (const bool sampled : {false, true}) {
    SCOPED_TRACE(sampled ? "sampled (seed 7, temperature 0.8)" : "greedy");
    SamplerParams sp;
    sp.temperature = sampled ? 0.8f : 0.0f;
    sp.seed = 7;
    const std::vector<int32_t> plain = run(m, sp, prompt, kTokens, nullptr);
    std::vector<int32_t> text = prompt;
    text.insert(text.end(), plain.begin(), plain.end());
    for (const int n_max : {1, 4}) {
      SCOPED_TRACE("n_max " + std::to_string(n_max));
      SpecParams params;
      params.types = {SpecType::DRAFT_SIMPLE};
      params.n_max = n_max;
      std::vector<std::unique_ptr<Drafter>> drafters;
      drafters.push_back(std::make_unique<OracleDrafter>(text, m.hp.n_vocab));
      Speculator spec(params, std::move(drafters));
      SpecStats stats;
      const std::vector<int32_t> got = run(m, sp, prompt, kTokens, &spec, &stats);
      EXPECT_EQ(got, plain);
      EXPECT_GT(stats.n_accepted, 0);
      EXPECT_LT(stats.n_accepted, stats.n_drafted);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TinyModels, Exact, ::testing::ValuesIn(tiny_models()), [](const auto& info) {
  std::string n = std::filesystem::path(info.param).stem().string();
  for (char& ch : n)
    if (!std::isalnum((unsigned char)ch)) ch = '_';
  return n;
});
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Exact);

// draft-simple with a real draft model: the target's Q8_0 file drafted by its F32 one (the same
// vocabulary), and by itself (every draft token accepted while the draft agrees).
TEST(DraftModel, GreedyOutputIsTheTargets) {
  HART_REQUIRE_TESTDATA(target_path, "archs/models/qwen35-tiny-Q8_0.gguf");
  HART_REQUIRE_TESTDATA(draft_path, "archs/models/qwen35-tiny-F32.gguf");
  const Loaded target = load(target_path), draft = load(draft_path);
  check_compatible(*target.tok, *draft.tok);
  const std::vector<int32_t> prompt = target.tok->encode("The quick brown fox", true, false);
  SamplerParams sp;
  sp.temperature = 0;
  const std::vector<int32_t> plain = run(*target.model, sp, prompt, 40, nullptr);
  for (const Loaded* d : {&draft, &target}) {
    SpecParams params;
    params.types = {SpecType::DRAFT_SIMPLE};
    params.n_max = 5;
    SessionParams dsp;
    dsp.n_ctx = 256;
    DraftSessions sessions(*d->model, dsp, [] { return BackendSet({"cpu"}, 2, ""); });
    std::vector<std::unique_ptr<Drafter>> drafters;
    drafters.push_back(std::make_unique<DraftModelDrafter>(sessions, sp, target.model->hp.n_vocab, 0.0f, 0));
    Speculator spec(params, std::move(drafters));
    SpecStats stats;
    EXPECT_EQ(run(*target.model, sp, prompt, 40, &spec, &stats), plain);
    EXPECT_GT(stats.n_accepted, 0);
    if (d == &target) {
      EXPECT_EQ(stats.n_accepted, stats.n_drafted) << "a model drafting for itself";
    }
  }
}

// A draft model that samples (the target samples too): its tokens are drawn from its own
// distribution and corrected by rejection sampling, so the text is the target's in distribution,
// not token for token. Over fixed seeds, the pairs (first, second) generated token, the second
// always from a verification step, are compared with the target's P(first) P(second | first) by
// a chi-square test.
TEST(DraftModel, SampledOutputFollowsTheTargetsDistribution) {
  HART_REQUIRE_TESTDATA(target_path, "models/TinyStories-656K-Q8_0.gguf");
  HART_REQUIRE_TESTDATA(draft_path, "models/TinyStories-656K-requant-Q4_0.gguf");
  const Loaded target = load(target_path), draft = load(draft_path);
  const Model& m = *target.model;
  const std::vector<int32_t> prompt = target.tok->encode("Once upon a time", true, false);
  SamplerParams sp;
  sp.temperature = 1.0f, sp.top_k = 4, sp.top_p = 1.0f, sp.min_p = 0.0f;

  // The target's distributions: of the first token, and of the second after each first.
  SessionParams plain_params;
  plain_params.n_ctx = 64;
  Session plain(m, plain_params, BackendSet({"cpu"}, 1, ""));
  Sampler dist_sampler(sp, m.hp.n_vocab);
  std::vector<TokenProb> p1, p2;
  dist_sampler.distribution(plain.decode(prompt), p1);
  std::map<std::pair<int32_t, int32_t>, double> want;
  for (const TokenProb& a : p1) {
    plain.truncate(0);
    std::vector<int32_t> text = prompt;
    text.push_back(a.token);
    dist_sampler.distribution(plain.decode(text), p2);
    for (const TokenProb& b : p2) want[{a.token, b.token}] = double(a.p) * b.p;
  }

  SessionParams tp;
  tp.n_ctx = 64;
  tp.speculative = true;
  Session session(m, tp, BackendSet({"cpu"}, 1, ""));
  SpecParams params;
  params.types = {SpecType::DRAFT_SIMPLE};
  params.n_max = 1;
  DraftSessions sessions(*draft.model, tp, [] { return BackendSet({"cpu"}, 1, ""); });
  std::vector<std::unique_ptr<Drafter>> drafters;
  drafters.push_back(std::make_unique<DraftModelDrafter>(sessions, sp, m.hp.n_vocab, 0.0f, 0));
  Speculator spec(params, std::move(drafters));
  SpecStats stats;
  constexpr int kTrials = 3000;
  std::map<std::pair<int32_t, int32_t>, double> got;
  for (int trial = 0; trial < kTrials; trial++) {
    session.truncate(0);
    SamplerParams seeded = sp;
    seeded.seed = uint64_t(trial);
    Sampler sampler(seeded, m.hp.n_vocab);
    std::vector<int32_t> out;
    GenerateOptions go;
    go.n_predict = 2;
    go.on_token = [&](int32_t t) {
      out.push_back(t);
      return true;
    };
    spec::generate(session, sampler, prompt, go, spec, stats);
    ASSERT_EQ(out.size(), 2u);
    ASSERT_TRUE(want.count({out[0], out[1]})) << "a pair the target cannot sample";
    got[{out[0], out[1]}] += 1.0;
  }
  EXPECT_EQ(stats.n_verified, kTrials);  // every second token came from a verification step
  EXPECT_GT(stats.n_accepted, 0);
  EXPECT_LT(stats.n_accepted, stats.n_drafted);
  // Cells expected at least 5 times, the rest lumped into one.
  double chi2 = 0, rest_want = 0, rest_got = 0;
  int cells = 0;
  for (const auto& [pair, pr] : want) {
    const double e = pr * kTrials, o = got.count(pair) ? got[pair] : 0.0;
    if (e < 5) {
      rest_want += e, rest_got += o;
      continue;
    }
    chi2 += (o - e) * (o - e) / e;
    cells++;
  }
  if (rest_want > 0) chi2 += (rest_got - rest_want) * (rest_got - rest_want) / rest_want, cells++;
  // The 99.9th percentile of chi-square with k = cells - 1 degrees of freedom (Wilson-Hilferty);
  // the seeds are fixed, so the statistic is the same at every run.
  const double k = cells - 1, z = 3.09;
  const double critical = k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
  EXPECT_LT(chi2, critical) << cells << " cells";
}

// ngram-simple on text that repeats: drafts are proposed and accepted, the output unchanged.
TEST(NgramSimple, RepeatingTextIsDraftedAndUnchanged) {
  HART_REQUIRE_TESTDATA(path, "archs/models/smollm3-tiny-Q8_0.gguf");
  const Loaded l = load(path);
  std::vector<int32_t> prompt;
  for (int r = 0; r < 6; r++)
    for (int32_t t : {10, 20, 30, 40, 50, 60, 70}) prompt.push_back(t);
  SamplerParams sp;
  sp.temperature = 0;
  const std::vector<int32_t> plain = run(*l.model, sp, prompt, 40, nullptr);
  SpecParams params;
  params.types = {SpecType::NGRAM_SIMPLE};
  params.ngram_size_n = 2;
  params.ngram_size_m = 8;
  std::vector<std::unique_ptr<Drafter>> drafters;
  drafters.push_back(std::make_unique<NgramSimpleDrafter>(2, 8));
  Speculator spec(params, std::move(drafters));
  SpecStats stats;
  EXPECT_EQ(run(*l.model, sp, prompt, 40, &spec, &stats), plain);
  EXPECT_GT(stats.n_drafted, 0);
}

}  // namespace
}  // namespace hart::spec
