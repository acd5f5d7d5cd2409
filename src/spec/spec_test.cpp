// The pieces of speculative decoding on their own: rejection sampling's distribution (a
// chi-square test over fixed seeds), ngram-simple's lookup, the lookup cache's file format and
// drafting, the settings' checks, and the second state cell a tentative step writes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "common/error.h"
#include "common/testdata.h"
#include "gguf/gguf.h"
#include "kv/sequence_state.h"
#include "spec/ngram_cache.h"
#include "spec/ngram_simple.h"
#include "spec/spec_params.h"
#include "spec/verify.h"
#include "tokenizer/tokenizer.h"

namespace hart::spec {
namespace {

double uniform(std::mt19937_64& rng) { return double(rng() >> 11) / 9007199254740992.0; }

// Draws x from q, runs speculative_sample against p; returns the output frequencies over n
// trials and the share of trials that kept x.
std::vector<double> output_frequencies(const std::vector<TokenProb>& p, const std::vector<TokenProb>& q, int n,
                                       uint64_t seed, double* kept_share) {
  std::mt19937_64 rng(seed);
  std::vector<double> freq(8, 0.0);
  int kept = 0;
  for (int i = 0; i < n; i++) {
    double u = uniform(rng);
    int32_t x = q.back().token;
    for (const TokenProb& t : q) {
      if (u < t.p) {
        x = t.token;
        break;
      }
      u -= t.p;
    }
    const double u_keep = uniform(rng);
    const Verdict v = speculative_sample(p, q, x, u_keep, uniform(rng));
    freq[size_t(v.token)] += 1.0;
    kept += v.kept;
  }
  *kept_share = double(kept) / n;
  return freq;
}

double chi_square(const std::vector<double>& freq, const std::vector<TokenProb>& p, int n) {
  std::vector<double> want(freq.size(), 0.0);
  for (const TokenProb& t : p) want[size_t(t.token)] = t.p;
  double chi2 = 0.0;
  for (size_t i = 0; i < freq.size(); i++) {
    if (want[i] == 0.0) {
      EXPECT_EQ(freq[i], 0.0) << "token " << i << " has no probability under p";
      continue;
    }
    const double e = want[i] * n;
    chi2 += (freq[i] - e) * (freq[i] - e) / e;
  }
  return chi2;
}

TEST(SpeculativeSampling, OutputFollowsTheTargetWhateverTheDraft) {
  // p over 6 tokens; drafts that agree, disagree, put mass where p has none, or are one token.
  const std::vector<TokenProb> p = {{0, 0.35f}, {1, 0.25f}, {2, 0.15f}, {3, 0.12f}, {4, 0.08f}, {5, 0.05f}};
  const std::vector<std::vector<TokenProb>> drafts = {
      p,
      {{5, 0.4f}, {4, 0.3f}, {0, 0.2f}, {7, 0.1f}},  // token 7: not in p
      {{1, 0.5f}, {2, 0.5f}},
      {{3, 1.0f}},  // a draft of one sure token (the n-gram drafters)
  };
  constexpr int kTrials = 60000;
  // Chi-square with 5 degrees of freedom: 20.5 is its 99.9th percentile. The seeds are fixed, so
  // the statistics are the same at every run.
  constexpr double kCritical = 20.5;
  for (size_t d = 0; d < drafts.size(); d++) {
    double kept = 0;
    const auto freq = output_frequencies(p, drafts[d], kTrials, 1000 + d, &kept);
    EXPECT_LT(chi_square(freq, p, kTrials), kCritical) << "draft " << d;
    // The chance of keeping the draft is sum(min(p, q)) (Leviathan et al., theorem 3.5).
    double overlap = 0;
    for (const TokenProb& t : drafts[d])
      for (const TokenProb& u : p)
        if (t.token == u.token) overlap += std::min(t.p, u.p);
    EXPECT_NEAR(kept, overlap, 0.01) << "draft " << d;
  }
}

TEST(NgramSimple, DraftsWhatFollowedTheLatestEarlierOccurrence) {
  std::vector<int32_t> out;
  const std::vector<int32_t> h = {1, 2, 3, 9, 1, 2, 3, 4, 5, 6, 1, 2, 3};
  ngram_simple_draft(h, 3, 2, out);
  EXPECT_EQ(out, (std::vector<int32_t>{4, 5}));  // after the latest earlier 1 2 3, not the first
  ngram_simple_draft(h, 3, 10, out);
  EXPECT_EQ(out, (std::vector<int32_t>{4, 5, 6, 1, 2, 3}));  // up to the end of the history
  ngram_simple_draft(h, 4, 3, out);
  EXPECT_TRUE(out.empty());  // 6 1 2 3 occurs only at the end
  ngram_simple_draft(std::vector<int32_t>{7}, 1, 3, out);
  EXPECT_TRUE(out.empty());
}

std::string temp_path(const char* name) { return (std::filesystem::temp_directory_path() / name).string(); }

void write_ints(const std::string& path, const std::vector<int32_t>& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * 4));
}

TEST(NgramCache, FileRoundTripsAndReadsLlamaCppsLayout) {
  // One record as llama.cpp writes it: the 2-gram (5, 6), two following tokens.
  const std::string path = temp_path("hart_ngram_cache_test.bin");
  write_ints(path, {5, 6, -1, -1, 2, 7, 3, 8, 1});
  NgramCache c = NgramCache::load(path, 100);
  const NgramCache::Counts* counts = c.find({5, 6, -1, -1});
  ASSERT_NE(counts, nullptr);
  EXPECT_EQ(counts->at(7), 3);
  EXPECT_EQ(counts->at(8), 1);

  c.update({1, 2, 3, 1, 2, 4, 1, 2}, 8, 2, 2);
  c.save(path);
  const NgramCache again = NgramCache::load(path, 100);
  EXPECT_TRUE(again == c);
  EXPECT_EQ(again.find({1, 2, -1, -1})->at(3), 1);
  EXPECT_EQ(again.find({1, 2, -1, -1})->at(4), 1);
  std::filesystem::remove(path);
}

TEST(NgramCache, CorruptFilesAreRefusedWithTheReason) {
  const std::string path = temp_path("hart_ngram_cache_bad.bin");
  const auto message = [&](const std::vector<int32_t>& ints, int n_vocab = 100) {
    write_ints(path, ints);
    try {
      NgramCache::load(path, n_vocab);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({5, 6, -1, -1, 2, 7, 3}).find("ends inside a record"), std::string::npos);
  EXPECT_NE(message({5, 6, -1, -1, 0}).find("0 following tokens"), std::string::npos);
  EXPECT_NE(message({5, 6, -1, -1, 1, 7, -2}).find("a count of -2"), std::string::npos);
  EXPECT_NE(message({5, 6, -1, -1, 1, 700, 1}).find("outside the vocabulary of 100"), std::string::npos);
  EXPECT_NE(message({5, 6, -1}).find("ends inside a record"), std::string::npos);
  std::filesystem::remove(path);
  EXPECT_THROW(NgramCache::load(path, 100), Error);  // no such file
}

TEST(NgramCache, StaticCacheDraftsTheTextItWasBuiltFrom) {
  // A static cache of 2-grams of a text (as llama-lookup-create builds it) drafts that text on.
  const std::vector<int32_t> text = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4};
  NgramCache stat;
  std::vector<int32_t> twice = text;
  twice.insert(twice.end(), text.begin(), text.end());  // counts of 2: the lax threshold
  stat.update(twice, int(twice.size()), kNgramStatic, kNgramStatic);
  const std::string path = temp_path("hart_ngram_cache_static.bin");
  stat.save(path);
  NgramCacheDrafter d(LookupCaches::load(path, "", 10));
  Draft out;
  d.draft(std::vector<int32_t>(text.begin(), text.begin() + 6), 8, out);  // ... 5 9
  EXPECT_EQ(out.tokens, (std::vector<int32_t>(text.begin() + 6, text.begin() + 14)));
  std::filesystem::remove(path);
}

// A cache llama.cpp's llama-lookup-create wrote (lookup/README.md) reads as the one hart counts
// from the same text: the 2-grams of its tokens (BOS added, special tokens parsed, the file's last
// newline dropped, as llama.cpp's -f reads it), every record and count.
TEST(NgramCache, ReadsTheFileLlamaLookupCreateWrote) {
  HART_REQUIRE_TESTDATA(model, "models/TinyStories-656K-Q8_0.gguf");
  const auto tok = Tokenizer::from_gguf(*gguf::File::open(model, gguf::LoadMode::Mmap));
  std::ifstream in(std::string(HART_LOOKUP_DIR) + "/tinystories.txt");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!text.empty() && text.back() == '\n') text.pop_back();
  const std::vector<int32_t> tokens = tok->encode(text, true, true);
  NgramCache counted;
  counted.update(tokens, int(tokens.size()), kNgramStatic, kNgramStatic);
  const NgramCache written = NgramCache::load(std::string(HART_LOOKUP_DIR) + "/tinystories-static.bin", tok->n_vocab());
  EXPECT_EQ(written.size(), 37u);  // llama.cpp's records
  EXPECT_TRUE(written == counted);
  // A token id past a smaller vocabulary is refused: a cache of another model.
  EXPECT_THROW(NgramCache::load(std::string(HART_LOOKUP_DIR) + "/tinystories-static.bin", 100), Error);
}

TEST(SpecParams, BadSettingsAreRefused) {
  const auto refused = [](SpecParams p) {
    try {
      p.validate(512);
    } catch (const Error&) {
      return true;
    }
    return false;
  };
  SpecParams ok;
  ok.types = {SpecType::DRAFT_SIMPLE};
  EXPECT_FALSE(refused(ok));
  SpecParams p = ok;
  p.n_max = 0;
  EXPECT_TRUE(refused(p));
  p.n_max = 512;  // the draft and the last token do not fit a batch of 512
  EXPECT_TRUE(refused(p));
  p = ok, p.n_min = 4;
  EXPECT_TRUE(refused(p));
  p = ok, p.p_min = 1.5f;
  EXPECT_TRUE(refused(p));
  p = ok, p.synth_rates = {0.9, 0.95, 0.5};  // increasing
  EXPECT_TRUE(refused(p));
  p = ok, p.synth_rates = {0.9, 0.5};  // not one per position
  EXPECT_TRUE(refused(p));
  p = SpecParams{}, p.types = {SpecType::NGRAM_CACHE};
  EXPECT_TRUE(refused(p));  // no cache file
  EXPECT_THROW(type_from_name("draft-eagle3"), Error);
  EXPECT_THROW(type_from_name("ngram-fancy"), Error);
  EXPECT_EQ(types_from_list("draft-simple,ngram-simple"),
            (std::vector<SpecType>{SpecType::NGRAM_SIMPLE, SpecType::DRAFT_SIMPLE}));  // llama.cpp's priority
}

TEST(SpecParams, SyntheticRatesAreConditional) {
  SpecParams p;
  p.types = {SpecType::DRAFT_SIMPLE};
  p.synth_rates = {0.9, 0.6, 0.3};
  const std::vector<double> probs = p.synth_probs();
  ASSERT_EQ(probs.size(), 3u);
  EXPECT_DOUBLE_EQ(probs[0], 0.9);
  EXPECT_DOUBLE_EQ(probs[1], 0.6 / 0.9);
  EXPECT_DOUBLE_EQ(probs[2], 0.5);
  p.synth_rates.clear();
  p.synth_len = 2.5;  // 1 + r + r^2 + r^3 = 2.5 with a constant conditional rate r
  const std::vector<double> len = p.synth_probs();
  const double r = len[0];
  EXPECT_NEAR(1 + r + r * r + r * r * r, 2.5, 1e-9);
  EXPECT_NEAR(len[2], r, 1e-9);
}

TEST(SequenceStore, ATentativeStepWritesTheSecondCell) {
  kv::StateLayout l;
  l.kv = {{}};
  l.recurrent = {{4}};
  kv::SequenceStore store(l, {0, 0, 2}, Type::F32);
  kv::SeqState s;
  ASSERT_TRUE(store.reserve(s, 3));
  store.commit(s, 3);
  const int32_t first = s.cell;
  EXPECT_EQ(s.cell_src, first);  // steps update the state in place
  ASSERT_TRUE(store.keep_state_before_step(s));
  EXPECT_EQ(s.cell_src, first);
  EXPECT_NE(s.cell, first);  // the step writes the other cell: the one it reads survives
  EXPECT_EQ(store.n_free_cells(), 0);
  kv::SeqState other;
  EXPECT_FALSE(store.reserve(other, 1));  // both cells are the first sequence's
  store.release(s);
  EXPECT_EQ(store.n_free_cells(), 2);
}

TEST(SequenceStore, UncommittedSlotsAreGivenBack) {
  kv::StateLayout l;
  l.kv = {{8, kv::Pool::FULL}};
  l.recurrent = {{}};
  kv::SequenceStore store(l, {16, 0, 0}, Type::F32);
  kv::SeqState s;
  ASSERT_TRUE(store.reserve(s, 6));
  store.commit(s, 2);  // of 6 verified tokens, 2 kept
  store.drop_uncommitted(s);
  EXPECT_EQ(int(s.full.size()), 2);
  EXPECT_EQ(store.n_free(kv::Pool::FULL), 14);
}

}  // namespace
}  // namespace hart::spec
