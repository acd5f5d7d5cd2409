// The executor compiles a batch shape's graph once and replays it. A replayed step gives exactly
// the logits of a freshly built graph, a step whose attention index outgrows the graph's builds a
// new one, and steady-state decode (the step and `hart run`'s sampling chain) makes no heap
// allocation: this binary replaces operator new to count them.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>

#include "common/error.h"
#include "common/testdata.h"
#include "model/executor.h"
#include "model/session.h"
#include "sample/sampler.h"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<size_t> g_allocations{0};

void* counted(size_t n, size_t align) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  n = n ? n : 1;
  void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align) : std::malloc(n);
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace

// These replace the global operators, so malloc/free is the matched pair here; GCC's inliner
// (at -O1) still pairs the free with the builtin operator new and warns.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(size_t n) { return counted(n, 0); }
void* operator new(size_t n, std::align_val_t a) { return counted(n, size_t(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }

namespace hart {
namespace {

std::unique_ptr<Model> load(const std::string& path) {
  return Model::from_file(gguf::File::open(path, gguf::LoadMode::Memory));
}

std::vector<int32_t> random_tokens(int n, int n_vocab) {
  std::mt19937 rng(11);
  std::vector<int32_t> t(size_t(n), 0);
  for (int32_t& x : t) x = int32_t(rng() % uint32_t(n_vocab));
  return t;
}

// Models of each kind of state: attention (FULL pool), sliding windows (WINDOW pool), recurrent
// cells, and attention beside recurrent layers.
class Replay : public ::testing::TestWithParam<const char*> {};

TEST_P(Replay, SteadyDecodeAllocatesNothing) {
  HART_REQUIRE_TESTDATA(path, GetParam());
  auto model = load(path);
  SessionParams sp;
  sp.n_ctx = 512;
  Session s(*model, sp, BackendSet({"cpu"}, 2, ""));
  SamplerParams chain;  // temperature, top-k, top-p and min-p as `hart run` has them
  chain.seed = 1;
  chain.repeat_penalty = 1.1f;
  Sampler sampler(chain, model->hp.n_vocab);
  auto next = [&](std::span<const float> logits) {
    const int32_t t = sampler.sample(logits);
    sampler.accept(t);
    return t;
  };
  int32_t token = next(s.decode(random_tokens(10, model->hp.n_vocab)));
  for (int i = 0; i < 2; i++) token = next(s.decode({&token, 1}));  // the first replays
  const size_t built = s.executor().graphs_built();

  g_allocations = 0;
  g_counting = true;
  for (int i = 0; i < 40; i++) token = next(s.decode({&token, 1}));
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0u);
  EXPECT_EQ(s.executor().graphs_built(), built);
}

// One step through an executor that replays and one through a new executor (a fresh graph), on
// two stores holding the same sequence.
struct Pair {
  Pair(const Model& m, int n_ctx)
      : m(m), n_ctx(n_ctx), kept_store(state_layout(m.hp), {n_ctx, n_ctx, 1}, Type::F32),
        fresh_store(state_layout(m.hp), {n_ctx, n_ctx, 1}, Type::F32),
        kept(m, kept_store, n_ctx, BackendSet({"cpu"}, 2, "")) {}

  // Returns whether the two steps' logits are equal.
  bool step(std::span<const int32_t> tokens) {
    std::vector<float> out[2];
    for (int which = 0; which < 2; which++) {
      kv::SequenceStore& store = which == 0 ? kept_store : fresh_store;
      kv::SeqState& seq = which == 0 ? kept_seq : fresh_seq;
      if (!store.reserve(seq, int(tokens.size()))) throw Error("the test's store is full");
      Batch b;
      b.add(seq, store.layout(), tokens, Logits::LAST);
      std::unique_ptr<Executor> once;
      if (which == 1) once = std::make_unique<Executor>(m, fresh_store, n_ctx, BackendSet({"cpu"}, 2, ""));
      const ForwardGraph& fg = (which == 0 ? kept : *once).forward(b);
      out[which].assign(static_cast<const float*>(fg.logits->data),
                        static_cast<const float*>(fg.logits->data) + fg.logits->nelements());
      store.commit(seq, int(tokens.size()));
    }
    return out[0] == out[1];
  }

  const Model& m;
  int n_ctx;
  kv::SequenceStore kept_store, fresh_store;
  kv::SeqState kept_seq, fresh_seq;
  Executor kept;
};

TEST_P(Replay, ReplayedStepsEqualFreshGraphsAcrossTheIndexStep) {
  HART_REQUIRE_TESTDATA(path, GetParam());
  auto model = load(path);
  Pair p(*model, 512);
  // A prompt that ends just before the attention index's first step, then decode past it.
  const int n_prompt = int(BatchShape::kIndexStep) - 8;
  const std::vector<int32_t> tokens = random_tokens(n_prompt + 16, model->hp.n_vocab);
  ASSERT_TRUE(p.step(std::span(tokens).first(size_t(n_prompt))));
  std::vector<size_t> built;
  for (int i = n_prompt; i < n_prompt + 16; i++) {
    ASSERT_TRUE(p.step(std::span(tokens).subspan(size_t(i), 1))) << "position " << i;
    built.push_back(p.kept.graphs_built());
  }
  // The prompt's graph, the decode step's, and (for a model with a FULL pool) one more once the
  // decode step's index no longer fits the first.
  const bool full_pool = state_layout(model->hp).uses(kv::Pool::FULL);
  EXPECT_EQ(built.front(), 2u);
  EXPECT_EQ(built.back(), full_pool ? 3u : 2u);
}

INSTANTIATE_TEST_SUITE_P(Models, Replay,
                         ::testing::Values("models/llama3-tiny-Q4_0.gguf", "archs/models/gemma3-tiny-Q8_0.gguf",
                                           "archs/models/rwkv7-tiny-Q8_0.gguf", "archs/models/qwen35-tiny-Q8_0.gguf"),
                         [](const auto& info) {
                           std::string name = std::filesystem::path(info.param).stem().string();
                           for (char& c : name)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace hart
