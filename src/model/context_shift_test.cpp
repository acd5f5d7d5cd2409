// A context shift (Session::shift, llama.cpp's --context-shift) forgets a range of positions,
// numbers the later ones lower and turns their cached keys to the new positions. The next token
// must then see what it would see in the whole sequence with the forgotten positions masked out
// (keys, values and recurrent states as the whole sequence made them): on every kind of layer
// the test models have (GQA, NEOX and NORMAL RoPE, frequency factors, sliding windows that have
// dropped positions, layers without RoPE, shared KV layers, recurrent and hybrid models).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "common/error.h"
#include "common/testdata.h"
#include "model/executor.h"
#include "model/session.h"

namespace hart {
namespace {

std::vector<int32_t> random_tokens(int n, int n_vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int32_t& x : t) x = int32_t(3 + rng() % uint32_t(n_vocab - 3));  // past the control tokens
  return t;
}

float max_abs_diff(std::span<const float> a, std::span<const float> b) {
  float d = 0;
  for (size_t i = 0; i < a.size(); i++) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

float max_abs(std::span<const float> a) {
  float m = 0;
  for (float x : a) m = std::max(m, std::abs(x));
  return m;
}

std::vector<float> copy(std::span<const float> l) { return {l.begin(), l.end()}; }

// The logits of `next` after `tokens` when it attends every position but [keep, keep + n_discard)
// (PAGED_ATTN's lists edited by hand), each layer's keys and values as the whole sequence made
// them, recurrent states included: what a shift must give. With keep 0 the positions agree too,
// as RoPE sees only distances: the shifted sequence is the same one, n_discard positions lower.
std::vector<float> masked_reference(const Model& m, const SessionParams& sp, std::span<const int32_t> tokens,
                                    int keep, int n_discard, int32_t next) {
  kv::SequenceStore store(state_layout(m.hp), {sp.n_ctx, sp.n_ctx, 1}, sp.cache_type);
  Executor ex(m, store, sp.n_ctx, BackendSet({"cpu"}, 1, ""));
  kv::SeqState s;
  Batch b;
  EXPECT_TRUE(store.reserve(s, int(tokens.size())));
  b.add(s, store.layout(), tokens, Logits::LAST);
  ex.forward(b);
  store.commit(s, int(tokens.size()));
  EXPECT_TRUE(store.reserve(s, 1));
  b.clear();
  b.add(s, store.layout(), std::span(&next, 1), Logits::LAST);
  for (int p = 0; p < kv::kPools; p++) {
    const bool window = kv::Pool(p) == kv::Pool::WINDOW;
    const std::vector<int32_t>& held = window ? s.window : s.full;
    const int begin = window ? s.window_begin : 0;
    std::vector<int32_t>& list = b.attn[p].lists;  // one token: its list is all of it
    const auto forgotten = [&](int32_t slot) {
      const int pos = begin + int(std::find(held.begin(), held.end(), slot) - held.begin());
      return pos >= keep && pos < keep + n_discard;
    };
    list.erase(std::remove_if(list.begin(), list.end(), forgotten), list.end());
    if (!b.attn[p].ranges.empty()) b.attn[p].ranges[1] = int32_t(list.size());
  }
  const Tensor* logits = ex.forward(b).logits;
  return copy({static_cast<const float*>(logits->data), size_t(logits->nelements())});
}

class ContextShift : public ::testing::TestWithParam<const char*> {};

TEST_P(ContextShift, ShiftedCacheGivesTheLogitsOfTheSequenceWithoutTheForgottenTokens) {
  const std::string rel = GetParam();
  const std::string path = rel == "builtin" ? std::string(HART_BUILTIN_MODEL_FILE) : testdata_path(rel);
  if (rel != "builtin" && !std::filesystem::exists(path)) GTEST_SKIP() << "SKIP: test data missing: " << path;
  const auto model = Model::from_file(gguf::File::open(path, gguf::LoadMode::Memory));
  const std::vector<int32_t> tokens = random_tokens(41, model->hp.n_vocab, 5);
  // 40 positions pass the test models' sliding windows (32): their pools have dropped some.
  const std::span<const int32_t> prompt(tokens.data(), 40);
  std::vector<float> want_f32;
  for (const Type cache : {Type::F32, Type::F16}) {
    SCOPED_TRACE(type_name(cache));
    SessionParams sp;
    sp.n_ctx = 64;
    sp.cache_type = cache;
    Session s(*model, sp, BackendSet({"cpu"}, 1, ""));
    s.decode(prompt);
    s.shift(0, 15);
    EXPECT_EQ(s.n_past(), 25);
    const std::vector<float> shifted = copy(s.decode(std::span(&tokens[40], 1)));
    const std::vector<float> want = masked_reference(*model, sp, prompt, 0, 15, tokens[40]);
    // F32 keys are turned up to float rounding. F16 keys are rounded to F16 once more after the
    // turn (as llama.cpp's K-shift rounds them): that costs no more than F16 keys cost at all.
    if (cache == Type::F32) {
      EXPECT_LE(max_abs_diff(shifted, want), 1e-4f * max_abs(want));
      want_f32 = want;
    } else {
      EXPECT_LE(max_abs_diff(shifted, want), std::max(1e-3f * max_abs(want), 2 * max_abs_diff(want, want_f32)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ContextShift,
                         ::testing::Values("builtin", "models/llama3-tiny-Q4_0.gguf", "models/qwen3-tiny-Q8_0.gguf",
                                           "archs/models/gemma3-tiny-F32.gguf", "archs/models/gemma4-tiny-F32.gguf",
                                           "archs/models/phi3-tiny-F32.gguf", "archs/models/smollm3-tiny-F32.gguf",
                                           "archs/models/granite-tiny-F32.gguf", "archs/models/olmoe-tiny-F32.gguf",
                                           "archs/models/qwen3moe-tiny-F32.gguf", "archs/models/lfm2-tiny-F32.gguf",
                                           "archs/models/qwen35-tiny-F32.gguf", "archs/models/rwkv7-tiny-F32.gguf"),
                         [](const auto& info) {
                           std::string name = info.param;
                           name = name.substr(name.find_last_of('/') + 1);
                           name = name.substr(0, name.find('.'));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(ContextShift, RangeOutsideTheSequenceIsRefused) {
  const auto model = Model::from_file(gguf::File::open(HART_BUILTIN_MODEL_FILE, gguf::LoadMode::Memory));
  Session s(*model, {}, BackendSet({"cpu"}, 1, ""));
  const std::vector<int32_t> t = random_tokens(8, model->hp.n_vocab, 1);
  s.decode(t);
  EXPECT_THROW(s.shift(4, 5), Error);
  EXPECT_THROW(s.shift(1, 0), Error);
  EXPECT_EQ(s.n_past(), 8);
  s.shift(1, 7);
  EXPECT_EQ(s.n_past(), 1);
}

}  // namespace
}  // namespace hart
