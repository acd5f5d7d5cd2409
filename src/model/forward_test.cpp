// The forward pass over a sequence gives the same logits however its tokens are split into
// steps: one batch, chunks, or one token at a time, for prompts far longer than a sliding
// window (the window slots a step needs are still held, the rest freed) and through recurrent
// state (carried from step to step). Also: Batch::add lists exactly the positions a token sees.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backend/cpu/kernels.h"
#include "common/error.h"
#include "common/testdata.h"
#include "model/arch.h"
#include "model/forward.h"
#include "model/session.h"
#include "model/tensor_list.h"

namespace hart {
namespace {

constexpr int kPrompt = 100;  // > 3 windows of the test models' 32

std::vector<int32_t> random_tokens(int n, int n_vocab) {
  std::mt19937 rng(7);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int32_t& x : t) x = int32_t(rng() % uint32_t(n_vocab));
  return t;
}

// The logits of every prompt position, computed in steps of at most n_batch tokens.
std::vector<float> all_logits(const Model& m, const std::vector<int32_t>& prompt, int n_batch) {
  SessionParams sp;
  sp.cache_type = Type::F32;
  sp.n_ctx = 1024;
  sp.n_batch = n_batch;
  Session s(m, sp, BackendSet({"cpu"}, 2, ""));
  const auto l = s.decode(prompt, true);
  return {l.begin(), l.end()};
}

float max_diff(std::span<const float> a, std::span<const float> b) {
  float d = 0;
  for (size_t i = 0; i < a.size(); i++) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

class Splits : public ::testing::TestWithParam<const char*> {};

TEST_P(Splits, ChunksAndSingleTokensGiveOneBatchsLogits) {
  const std::string name = GetParam();
  HART_REQUIRE_TESTDATA(path, "archs/models/" + name + ".gguf");
  cpu::select_kernels("ref");
  auto model = Model::from_file(gguf::File::open(path, gguf::LoadMode::Memory));
  const size_t n_vocab = size_t(model->hp.n_vocab);
  const std::vector<int32_t> prompt = random_tokens(kPrompt, model->hp.n_vocab);

  const std::vector<float> whole = all_logits(*model, prompt, 512);
  const std::vector<float> chunked = all_logits(*model, prompt, 37);
  ASSERT_EQ(whole.size(), n_vocab * kPrompt);
  EXPECT_LE(max_diff(whole, chunked), 1e-4f);

  // The last tokens one by one after the rest as one batch.
  SessionParams sp;
  sp.cache_type = Type::F32;
  sp.n_ctx = 1024;
  Session s(*model, sp, BackendSet({"cpu"}, 2, ""));
  const int head = kPrompt - 8;
  s.decode(std::span(prompt).first(size_t(head)));
  for (int p = head; p < kPrompt; p++) {
    const auto l = s.decode(std::span(prompt).subspan(size_t(p), 1));
    EXPECT_LE(max_diff(l, std::span(whole).subspan(size_t(p) * n_vocab, n_vocab)), 1e-4f) << "position " << p;
  }
}

// A model whose sliding layers attend the whole sequence instead gives other logits far past
// the window: the window is really applied (and the test above really tests it).
TEST(Splits, TheWindowMatters) {
  HART_REQUIRE_TESTDATA(path, "archs/models/gemma3-tiny-F32.gguf");
  cpu::select_kernels("ref");
  auto model = Model::from_file(gguf::File::open(path, gguf::LoadMode::Memory));
  const std::vector<int32_t> prompt = random_tokens(kPrompt, model->hp.n_vocab);
  const std::vector<float> windowed = all_logits(*model, prompt, 512);
  for (LayerConfig& l : model->hp.layers)
    if (l.attn == AttnKind::SLIDING) l.attn = AttnKind::FULL;
  const std::vector<float> full = all_logits(*model, prompt, 512);
  const size_t v = size_t(model->hp.n_vocab);
  EXPECT_LE(max_diff(std::span(windowed).first(31 * v), std::span(full).first(31 * v)), 1e-5f);  // within the window
  EXPECT_GE(max_diff(std::span(windowed).last(v), std::span(full).last(v)), 1e-2f);
}

INSTANTIATE_TEST_SUITE_P(ArchModels, Splits,
                         ::testing::Values("gemma3-tiny-F32", "gemma4-tiny-F32", "lfm2-tiny-F32", "phi3-tiny-F32",
                                           "granite-tiny-F32", "smollm3-tiny-F32", "rwkv7-tiny-F32", "arwkv7-tiny-F32",
                                           "olmoe-tiny-F32", "qwen3moe-tiny-F32", "granitemoe-tiny-F32",
                                           "qwen35-tiny-F32", "qwen35moe-tiny-F32",
                                           "gemma3-tiny-Q8_0", "lfm2-tiny-Q8_0", "rwkv7-tiny-Q4_0", "qwen3moe-tiny-Q4_0"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum((unsigned char)c)) c = '_';
                           return n;
                         });

// Gemma 4's shared-KV layers (the test file has none): the same file with layers local, local,
// global, local, global, attention.shared_kv_layers = 2 and the last two layers' K/V tensors
// dropped, as such files come.
std::unique_ptr<gguf::File> with_shared_kv(const gguf::File& f, int n_shared) {
  gguf::Writer w;
  for (const gguf::KeyValue& kv : f.metadata()) w.set(kv.key, kv.value);
  auto pattern = std::make_shared<gguf::Array>();
  pattern->elem_type = gguf::ValueType::BOOL;
  for (bool sliding : {true, true, false, true, false}) pattern->items.emplace_back(sliding);
  w.set("gemma4.attention.sliding_window_pattern", gguf::Value(pattern));
  w.set("gemma4.attention.shared_kv_layers", uint32_t(n_shared));
  const int n_layer = int(f.require_int("gemma4.block_count"));
  for (const gguf::TensorInfo& t : f.tensors()) {
    bool dropped = false;
    for (int il = n_layer - n_shared; il < n_layer; il++)
      for (const char* name : {"attn_k.", "attn_v.", "attn_k_norm."}) dropped |= t.name.starts_with(blk(il, name));
    if (!dropped) w.add_tensor(t.name, t.type, std::span<const int64_t>(t.ne, t.n_dims), t.data, t.nbytes);
  }
  return gguf::File::from_bytes(w.to_bytes(), "gemma4-shared-kv");
}

TEST(Splits, SharedKvLayersReadTheirSourcesCache) {
  HART_REQUIRE_TESTDATA(path, "archs/models/gemma4-tiny-F32.gguf");
  cpu::select_kernels("ref");
  const auto file = gguf::File::open(path, gguf::LoadMode::Memory);
  auto model = Model::from_file(with_shared_kv(*file, 2));
  // llama.cpp's reuse rule: a shared local layer reads the cache of the layer two before the
  // first shared one (local), a shared global layer the one just before it (global).
  EXPECT_EQ(model->hp.layers[3].kv_layer, 1);
  EXPECT_EQ(model->hp.layers[4].kv_layer, 2);
  const std::vector<int32_t> prompt = random_tokens(kPrompt, model->hp.n_vocab);
  const std::vector<float> whole = all_logits(*model, prompt, 512);
  EXPECT_LE(max_diff(whole, all_logits(*model, prompt, 37)), 1e-4f);
  const auto unshared = Model::from_file(gguf::File::open(path, gguf::LoadMode::Memory));
  const std::vector<float> own = all_logits(*unshared, prompt, 512);
  const size_t v = size_t(model->hp.n_vocab);
  EXPECT_GE(max_diff(std::span(whole).last(v), std::span(own).last(v)), 1e-3f);
}

// Token t of a sequence at position p sees the window slots of positions max(0, p - W + 1)..p
// and the full slots of 0..p, in order.
TEST(Batch, ListsThePositionsEachTokenSees) {
  kv::StateLayout layout;
  layout.kv = {{4, kv::Pool::FULL}, {4, kv::Pool::WINDOW}};
  layout.window = 3;
  layout.recurrent = {{}, {}};
  kv::SeqState s;
  s.n = 5;
  s.full = {10, 11, 12, 13, 14, 15, 16};  // positions 0..6
  s.window_begin = 3;
  s.window = {23, 24, 25, 26};  // positions 3..6
  Batch b;
  const int32_t tokens[2] = {1, 2};
  b.add(s, layout, tokens, Logits::LAST);
  const Batch::Attn& full = b.attn[int(kv::Pool::FULL)];
  const Batch::Attn& window = b.attn[int(kv::Pool::WINDOW)];
  EXPECT_EQ(full.slots, (std::vector<int64_t>{15, 16}));
  EXPECT_EQ(window.slots, (std::vector<int64_t>{25, 26}));
  auto seen = [](const Batch::Attn& a, int t) {
    return std::vector<int32_t>(a.lists.begin() + a.ranges[size_t(2 * t)],
                                a.lists.begin() + a.ranges[size_t(2 * t)] + a.ranges[size_t(2 * t + 1)]);
  };
  EXPECT_EQ(seen(full, 0), (std::vector<int32_t>{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(seen(full, 1), (std::vector<int32_t>{10, 11, 12, 13, 14, 15, 16}));
  EXPECT_EQ(seen(window, 0), (std::vector<int32_t>{23, 24, 25}));  // positions 3..5
  EXPECT_EQ(seen(window, 1), (std::vector<int32_t>{24, 25, 26}));  // 4..6
  EXPECT_EQ(b.pos, (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(b.out_rows, (std::vector<int32_t>{1}));

  kv::SeqState moved_on = s;  // the window no longer holds position 3, which position 5 sees
  moved_on.window_begin = 4;
  moved_on.window.erase(moved_on.window.begin());
  Batch b2;
  EXPECT_THROW(b2.add(moved_on, layout, tokens, Logits::LAST), Error);
}

}  // namespace
}  // namespace hart
