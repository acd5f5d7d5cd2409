// The scheduler against the one-sequence path: greedy outputs of requests batched together
// (mixed prefill chunks and decode steps, prefix cache hits, evictions from a tiny pool) equal
// those of Session + generate() run one request at a time.
#include "serve/engine.h"

#include <gtest/gtest.h>

#include "common/testdata.h"
#include "gguf/gguf.h"
#include "model/generate.h"
#include "model/mtp_model.h"

namespace hart::serve {
namespace {

struct Loaded {
  std::unique_ptr<Tokenizer> tok;
  std::unique_ptr<Model> model;
};

Loaded load(const std::string& path) {
  auto f = gguf::File::open(path, gguf::LoadMode::Memory);
  Loaded l;
  l.tok = Tokenizer::from_gguf(*f);
  l.model = Model::from_file(std::move(f));
  return l;
}

// A model and an engine serving it.
struct Served {
  Loaded l;
  Metrics metrics;
  Engine engine;
  Served(const std::string& path, const EngineOptions& opt)
      : l(load(path)), engine(*l.model, *l.tok, opt, BackendSet({"cpu"}, 2, ""), metrics) {}
};

EngineOptions with_ctx(int n_ctx, int kv_size = 0) {
  EngineOptions opt;
  opt.n_ctx = n_ctx;
  opt.kv_size = kv_size;
  return opt;
}

GenParams greedy(const Tokenizer& tok, const std::string& text, int max_tokens) {
  GenParams p;
  p.prompt = tok.encode(text, true, false);
  p.sampling.temperature = 0;
  p.max_tokens = max_tokens;
  return p;
}

// The reference: one Session per request.
std::vector<int32_t> alone(const Loaded& l, const GenParams& p) {
  SessionParams sp;
  sp.n_ctx = 256;
  Session session(*l.model, sp, BackendSet({"cpu"}, 1, ""));
  Sampler sampler(p.sampling, l.model->hp.n_vocab);
  std::vector<int32_t> out;
  GenerateOptions go;
  go.n_predict = p.max_tokens;
  go.is_eog = [&](int32_t t) { return l.tok->is_eog(t); };
  go.on_token = [&](int32_t t) { return out.push_back(t), true; };
  generate(session, sampler, p.prompt, go);
  return out;
}

struct Result {
  std::vector<int32_t> tokens;
  Event done;
};

Result collect(Stream& s) {
  Result r;
  for (Event ev = s.pop();; ev = s.pop()) {
    for (const TokenInfo& t : ev.tokens) r.tokens.push_back(t.id);
    if (ev.done) return r.done = ev, r;
  }
}

std::vector<GenParams> workload(const Tokenizer& tok, int n, int max_tokens, const std::string& lead = "") {
  const char* starts[] = {"Once upon a time", "The little dog", "Lily and Tom went to the park. They",
                          "One day, a big bird", "The sun was hot and", "Mom said"};
  std::vector<GenParams> out;
  for (int i = 0; i < n; i++)
    out.push_back(greedy(tok, lead + starts[i % 6] + std::string(size_t(i / 6), '!'), max_tokens));
  return out;
}

// A lead-in that takes a prompt past the test models' 32-position sliding window.
const std::string kLongLead =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the sun with her big red "
    "ball and her friend Tom. ";

void expect_batched_equals_alone(const EngineOptions& opt, int n_requests, int max_tokens,
                                 const std::string& model = "models/stories260K.gguf", const std::string& lead = "") {
  HART_REQUIRE_TESTDATA(path, model);
  Served sv(path, opt);
  const Loaded& l = sv.l;
  Engine& engine = sv.engine;
  const auto reqs = workload(*l.tok, n_requests, max_tokens, lead);
  std::vector<std::shared_ptr<Stream>> streams;
  for (const GenParams& p : reqs) streams.push_back(engine.submit(p));
  for (size_t i = 0; i < reqs.size(); i++) {
    const Result r = collect(*streams[i]);
    EXPECT_EQ(r.tokens, alone(l, reqs[i])) << "request " << i;
    EXPECT_EQ(r.done.prompt_tokens, int(reqs[i].prompt.size()));
    EXPECT_EQ(r.done.completion_tokens, int(r.tokens.size()));
  }
}

TEST(Engine, BatchedGreedyEqualsOneAtATime) {
  EngineOptions opt = with_ctx(256);
  opt.chunk_size = 7;  // prompts arrive in several chunks, beside other requests' decoding
  expect_batched_equals_alone(opt, 12, 20);
}

TEST(Engine, TinyPoolEvictsAndStillAnswersEveryone) {
  expect_batched_equals_alone(with_ctx(64, 64), 12, 16);  // about two requests at a time
}

TEST(Engine, WithoutPrefixCache) {
  EngineOptions opt = with_ctx(128);
  opt.prefix_cache = false;
  expect_batched_equals_alone(opt, 6, 12);
}

// Sliding-window layers (gemma3: a 32-position window) and recurrent ones (lfm2: short-conv
// state) batched and chunked: the same tokens as one request at a time.
TEST(Engine, SlidingWindowModel) {
  EngineOptions opt = with_ctx(256);
  opt.chunk_size = 7;
  expect_batched_equals_alone(opt, 8, 24, "archs/models/gemma3-tiny-F32.gguf", kLongLead);
}

TEST(Engine, RecurrentModel) {
  EngineOptions opt = with_ctx(256);
  opt.chunk_size = 7;
  expect_batched_equals_alone(opt, 8, 24, "archs/models/lfm2-tiny-F32.gguf", kLongLead);
}

TEST(Engine, RwkvModel) {
  EngineOptions opt = with_ctx(256);
  opt.chunk_size = 7;
  expect_batched_equals_alone(opt, 16, 24, "archs/models/rwkv7-tiny-F32.gguf", kLongLead);
}

TEST(Engine, PerLayerEmbeddingModel) {
  EngineOptions opt = with_ctx(256);
  opt.chunk_size = 7;
  expect_batched_equals_alone(opt, 6, 16, "archs/models/gemma4-tiny-F32.gguf", kLongLead);
}

// One long request: its window layers never hold more than the window (32) and one chunk,
// however long the sequence grows; the prefix cache adds the window its prompt ended with.
TEST(Engine, WindowSlotsStayBoundedInALongSequence) {
  HART_REQUIRE_TESTDATA(path, "archs/models/gemma3-tiny-F32.gguf");
  for (bool prefix_cache : {false, true}) {
    EngineOptions opt = with_ctx(512);
    opt.chunk_size = 16;
    opt.prefix_cache = prefix_cache;
    Served sv(path, opt);
    auto stream = sv.engine.submit(greedy(*sv.l.tok, kLongLead + kLongLead, 200));
    const std::string key = "\nhart_kv_window_slots_used ";
    int64_t peak = 0;
    for (Event ev = stream->pop();; ev = stream->pop()) {
      const std::string m = sv.metrics.prometheus();
      peak = std::max<int64_t>(peak, std::stoll(m.substr(m.find(key) + key.size())));
      if (ev.done) break;
    }
    EXPECT_GE(peak, 31);  // published between steps: after each step's commit
    EXPECT_LE(peak, 31 + 16 + (prefix_cache ? 31 : 0)) << "prefix cache " << prefix_cache;
  }
}

// A request continuing where an earlier one ended (the next turn of a chat) reuses its K/V,
// sliding-window layers too; the output is that of a request computed from scratch.
TEST(Engine, SlidingWindowModelReusesAFinishedSequence) {
  HART_REQUIRE_TESTDATA(path, "archs/models/gemma3-tiny-F32.gguf");
  Served sv(path, with_ctx(512));
  const Loaded& l = sv.l;
  GenParams first = greedy(*l.tok, kLongLead, 24);
  const Result r1 = collect(*sv.engine.submit(first));
  // The next turn: the first prompt, its reply (all but the last token were computed), more text.
  GenParams next = first;
  next.prompt.insert(next.prompt.end(), r1.tokens.begin(), r1.tokens.end());
  const std::vector<int32_t> more = l.tok->encode(" The next day, Lily and Tom", false, false);
  next.prompt.insert(next.prompt.end(), more.begin(), more.end());
  const Result r2 = collect(*sv.engine.submit(next));
  EXPECT_GE(r2.done.cached_tokens, int(first.prompt.size() + r1.tokens.size()) - 1);
  EXPECT_EQ(r2.tokens, alone(l, next));
  // A prompt that leaves the cached path inside its first window reuses nothing past there.
  GenParams other = first;
  other.prompt.resize(first.prompt.size() - 40);
  other.prompt.insert(other.prompt.end(), more.begin(), more.end());
  const Result r3 = collect(*sv.engine.submit(other));
  EXPECT_EQ(r3.tokens, alone(l, other));
}

// Recurrent layers (rwkv7: no KV at all; lfm2: short-conv state beside window attention): a
// request continuing a finished one, or sharing the first prompt chunks of an earlier one,
// starts from the prefix cache's state snapshot, with the output of one computed from scratch.
void expect_snapshots_reused(const std::string& model) {
  HART_REQUIRE_TESTDATA(path, model);
  EngineOptions opt = with_ctx(512);
  opt.chunk_size = 16;
  Served sv(path, opt);
  const Loaded& l = sv.l;
  const GenParams first = greedy(*l.tok, kLongLead, 24);
  const Result r1 = collect(*sv.engine.submit(first));
  EXPECT_EQ(r1.tokens, alone(l, first));
  GenParams next = first;  // the next turn: the first prompt, its reply, more text
  next.prompt.insert(next.prompt.end(), r1.tokens.begin(), r1.tokens.end());
  const std::vector<int32_t> more = l.tok->encode(" The next day, Lily and Tom", false, false);
  next.prompt.insert(next.prompt.end(), more.begin(), more.end());
  const Result r2 = collect(*sv.engine.submit(next));
  EXPECT_EQ(r2.done.cached_tokens, int(first.prompt.size() + r1.tokens.size()) - 1);  // the last reply token was never fed
  EXPECT_EQ(r2.tokens, alone(l, next));
  GenParams other = first;  // the same beginning, then something else: the last whole chunk is shared
  other.prompt.resize(first.prompt.size() - 5);
  other.prompt.insert(other.prompt.end(), more.begin(), more.end());
  const Result r3 = collect(*sv.engine.submit(other));
  EXPECT_EQ(r3.done.cached_tokens, int(first.prompt.size() - 5) / 16 * 16);
  EXPECT_EQ(r3.tokens, alone(l, other));
}

TEST(Engine, RwkvModelReusesStateSnapshots) { expect_snapshots_reused("archs/models/rwkv7-tiny-F32.gguf"); }
TEST(Engine, ShortConvModelReusesStateSnapshots) { expect_snapshots_reused("archs/models/lfm2-tiny-F32.gguf"); }

// Slot persistence: a request's tokens saved from one engine's prefix cache and restored into a
// fresh engine of the same model, whose next request with that prefix computes only what follows
// and answers as one computed from scratch; erase forgets them.
void expect_slot_restored(const std::string& model) {
  HART_REQUIRE_TESTDATA(path, model);
  EngineOptions opt = with_ctx(512);
  opt.chunk_size = 16;
  opt.n_slots = 2;
  SlotContents saved;
  GenParams next;
  {
    Served sv(path, opt);
    GenParams first = greedy(*sv.l.tok, kLongLead, 24);
    first.slot = 1;
    const Result r1 = collect(*sv.engine.submit(first));
    EXPECT_EQ(sv.engine.slots()[1].n_tokens, int(first.prompt.size() + r1.tokens.size()) - 1);
    EXPECT_EQ(sv.engine.save_slot(0).tokens.size(), 0u);  // nothing ran in it
    saved = sv.engine.save_slot(1);
    EXPECT_EQ(int(saved.tokens.size()), sv.engine.slots()[1].n_tokens);
    next = first;
    next.prompt.insert(next.prompt.end(), r1.tokens.begin(), r1.tokens.end());
    const std::vector<int32_t> more = sv.l.tok->encode(" The next day, Lily and Tom", false, false);
    next.prompt.insert(next.prompt.end(), more.begin(), more.end());
  }
  Served sv(path, opt);
  EXPECT_EQ(sv.engine.restore_slot(0, saved), int(saved.tokens.size()));
  EXPECT_EQ(sv.engine.slots()[0].n_tokens, int(saved.tokens.size()));
  next.slot = -1;
  const Result r2 = collect(*sv.engine.submit(next));
  EXPECT_EQ(r2.done.cached_tokens, int(saved.tokens.size()));
  EXPECT_EQ(r2.tokens, alone(sv.l, next));
  // Restoring twice shares what the cache has; erasing frees what only the slot held.
  EXPECT_EQ(sv.engine.restore_slot(1, saved), int(saved.tokens.size()));
  EXPECT_EQ(sv.engine.erase_slot(1), int(saved.tokens.size()));
  EXPECT_EQ(sv.engine.slots()[1].n_tokens, 0);
  EXPECT_EQ(sv.engine.erase_slot(1), 0);
}

TEST(EngineSlots, AttentionModel) { expect_slot_restored("models/stories260K.gguf"); }
TEST(EngineSlots, SlidingWindowModel) { expect_slot_restored("archs/models/gemma3-tiny-F32.gguf"); }
TEST(EngineSlots, ShortConvModel) { expect_slot_restored("archs/models/lfm2-tiny-F32.gguf"); }
TEST(EngineSlots, RwkvModel) { expect_slot_restored("archs/models/rwkv7-tiny-F32.gguf"); }
TEST(EngineSlots, DeltaNetModel) { expect_slot_restored("archs/models/qwen35-tiny-F32.gguf"); }

TEST(EngineSlots, AnotherLayoutOrAFullPoolIsRefused) {
  HART_REQUIRE_TESTDATA(a, "models/stories260K.gguf");
  HART_REQUIRE_TESTDATA(b, "archs/models/gemma3-tiny-F32.gguf");
  SlotContents saved;
  {
    Served sv(a, with_ctx(256));
    GenParams p = greedy(*sv.l.tok, kLongLead, 8);
    p.slot = 0;
    collect(*sv.engine.submit(p));
    saved = sv.engine.save_slot(0);
    ASSERT_GT(saved.tokens.size(), 0u);
    SlotContents cut = saved;  // its state no longer matches its tokens
    cut.tokens.pop_back();
    EXPECT_THROW(sv.engine.restore_slot(0, cut), Error);
    SlotContents bad = saved;
    bad.tokens[0] = sv.l.model->hp.n_vocab;
    EXPECT_THROW(sv.engine.restore_slot(0, bad), Error);
  }
  {
    Served other(b, with_ctx(256));
    EXPECT_THROW(other.engine.restore_slot(0, saved), Error);
    EXPECT_EQ(other.engine.slots()[0].n_tokens, 0);
  }
  Served small(a, with_ctx(16, 16));  // a pool of 16 tokens cannot take them
  EXPECT_THROW(small.engine.restore_slot(0, saved), Error);
  EngineOptions off = with_ctx(256);
  off.prefix_cache = false;
  Served uncached(a, off);
  EXPECT_THROW(uncached.engine.save_slot(0), Error);
}

// Slot actions run between steps: requests running meanwhile (in the slot acted on, or beside
// it) answer as they would alone; a slot is processing until its requests have ended.
TEST(EngineSlots, ActionsBetweenTheStepsOfRunningRequests) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  EngineOptions opt = with_ctx(256, 1024);
  opt.n_slots = 2;
  opt.chunk_size = 4;
  Served sv(path, opt);
  GenParams first = greedy(*sv.l.tok, kLongLead, 8);
  first.slot = 1;
  collect(*sv.engine.submit(first));
  const SlotContents saved = sv.engine.save_slot(1);
  auto reqs = workload(*sv.l.tok, 6, 120);
  std::vector<std::shared_ptr<Stream>> streams;
  for (GenParams& p : reqs) {
    p.slot = 0;
    streams.push_back(sv.engine.submit(p));
  }
  for (int i = 0; i < 5; i++) {
    sv.engine.save_slot(0);
    EXPECT_EQ(sv.engine.restore_slot(1, saved), int(saved.tokens.size()));
    EXPECT_EQ(sv.engine.erase_slot(1), int(saved.tokens.size()));
  }
  for (size_t i = 0; i < reqs.size(); i++) EXPECT_EQ(collect(*streams[i]).tokens, alone(sv.l, reqs[i])) << "request " << i;
  EXPECT_FALSE(sv.engine.slots()[0].processing);
  EXPECT_GT(sv.engine.slots()[0].n_tokens, 0);
}

TEST(EngineSlots, PickSlotPrefersTheLongestSharedPrefix) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  EngineOptions opt = with_ctx(256);
  opt.n_slots = 3;
  Served sv(path, opt);
  // (Prompts longer than ten tokens: their BOS alone is not a tenth of them.)
  const GenParams a = greedy(*sv.l.tok, "Once upon a time, there was a little girl named Lily.", 4),
                  b = greedy(*sv.l.tok, "The little dog ran to the park to play with his red ball.", 4);
  for (const GenParams* p : {&a, &b}) {
    GenParams q = *p;
    q.slot = sv.engine.pick_slot(q.prompt, -1);
    collect(*sv.engine.submit(q));
  }
  EXPECT_EQ(sv.engine.pick_slot(greedy(*sv.l.tok, "The little dog ran to the park to play with his red ball. Then", 4).prompt, -1), 1);
  EXPECT_EQ(sv.engine.pick_slot(greedy(*sv.l.tok, "Once upon a time, there was a little girl named Lily. She", 4).prompt, -1), 0);
  EXPECT_EQ(sv.engine.pick_slot(std::vector<int32_t>{7, 7}, -1), 2);  // nothing shared: the one unused
  EXPECT_EQ(sv.engine.pick_slot(a.prompt, 2), 2);
}

TEST(Engine, SharedPrefixIsReusedAndGivesTheSameOutput) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  Served sv(path, with_ctx(256));
  const Loaded& l = sv.l;
  Engine& engine = sv.engine;
  const std::string shared = "Once upon a time, there was a little girl named Lily. She loved to play outside.";
  const GenParams a = greedy(*l.tok, shared + " One day", 8), b = greedy(*l.tok, shared + " Her mom", 8);
  const Result ra = collect(*engine.submit(a));
  EXPECT_EQ(ra.done.cached_tokens, 0);
  const Result rb = collect(*engine.submit(b));
  const size_t common = size_t(std::mismatch(a.prompt.begin(), a.prompt.end(), b.prompt.begin()).first - a.prompt.begin());
  EXPECT_GE(rb.done.cached_tokens, int(common));
  EXPECT_EQ(rb.tokens, alone(l, b));
  // The same prompt again: all but its last token come from the cache.
  const Result rb2 = collect(*engine.submit(b));
  EXPECT_EQ(rb2.done.cached_tokens, int(b.prompt.size()) - 1);
  EXPECT_EQ(rb2.tokens, rb.tokens);
  EXPECT_NE(sv.metrics.prometheus().find("hart_prefix_cache_hit_rate 0."), std::string::npos);
}

TEST(Engine, CancelledRequestEndsAndOthersContinue) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  Served sv(path, with_ctx(256));
  const Loaded& l = sv.l;
  Engine& engine = sv.engine;
  auto gone = engine.submit(greedy(*l.tok, "The little dog", 200));
  gone->cancel();
  const GenParams p = greedy(*l.tok, "Mom said", 10);
  const Result r = collect(*engine.submit(p));
  EXPECT_EQ(r.tokens, alone(l, p));
  EXPECT_EQ(collect(*gone).done.finish_reason, "cancelled");
}

// The events of every choice of one stream, by choice.
std::vector<Result> collect_choices(Stream& s, int n) {
  std::vector<Result> r(static_cast<size_t>(n));
  for (int done = 0; done < n;) {
    const Event ev = s.pop();
    Result& c = r.at(size_t(ev.index));
    for (const TokenInfo& t : ev.tokens) c.tokens.push_back(t.id);
    if (ev.done) c.done = ev, done++;
  }
  return r;
}

// n choices: the prompt is computed once (the other choices find all but its last token in the
// prefix cache), and choice i samples as a lone request with seed + i does.
TEST(Engine, ChoicesSharePrefillAndSeedPlusIndex) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  Served sv(path, with_ctx(256));
  const Loaded& l = sv.l;
  GenParams p = greedy(*l.tok, "Once upon a time, there was a little girl named Lily.", 12);
  p.sampling.temperature = 1.0f;
  p.sampling.seed = 1234;
  p.n = 3;
  const std::vector<Result> rs = collect_choices(*sv.engine.submit(p), 3);
  EXPECT_EQ(rs[0].done.cached_tokens, 0);
  for (int i = 0; i < 3; i++) {
    EXPECT_EQ(rs[size_t(i)].done.index, i);
    if (i > 0) {
      EXPECT_EQ(rs[size_t(i)].done.cached_tokens, int(p.prompt.size()) - 1);
    }
    GenParams one = p;
    one.n = 1;
    one.sampling.seed = 1234 + uint64_t(i);
    EXPECT_EQ(rs[size_t(i)].tokens, alone(l, one)) << "choice " << i;
  }
  EXPECT_NE(rs[0].tokens, rs[1].tokens);  // distinct sampling streams
  EXPECT_NE(rs[1].tokens, rs[2].tokens);
}

TEST(Engine, ChoicesWithoutPrefixCacheEachPrefill) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  EngineOptions opt = with_ctx(256);
  opt.prefix_cache = false;
  Served sv(path, opt);
  GenParams p = greedy(*sv.l.tok, "The little dog", 6);
  p.n = 2;
  const std::vector<Result> rs = collect_choices(*sv.engine.submit(p), 2);
  EXPECT_EQ(rs[0].tokens, rs[1].tokens);  // greedy: the same text twice
  EXPECT_EQ(rs[1].done.cached_tokens, 0);
}

TEST(Engine, FullQueueRefuses) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  EngineOptions opt = with_ctx(64, 64);
  opt.max_queue = 0;
  Served sv(path, opt);
  EXPECT_THROW(sv.engine.submit(greedy(*sv.l.tok, "Mom said", 4)), QueueFull);
}

// Speculative decoding per request inside the continuous batch.
struct SpecServed {
  Loaded l, draft;
  std::unique_ptr<Model> block;  // draft-mtp: the target's MTP block
  spec::SpecFactory factory;
  Metrics metrics;
  Engine engine;
  static EngineOptions with(EngineOptions opt, const spec::SpecFactory* f) {
    opt.speculation = f;
    return opt;
  }
  SpecServed(const std::string& path, const std::string& draft_path, const EngineOptions& opt,
             const spec::SpecParams& sp)
      : l(load(path)),
        draft(draft_path.empty() ? Loaded{} : load(draft_path)),
        block(sp.uses_mtp() ? mtp_model(*l.model) : nullptr),
        factory(sp, l.model->hp.n_vocab, sessions(draft.model.get(), false), sessions(block.get(), true)),
        engine(*l.model, *l.tok, with(opt, &factory), BackendSet({"cpu"}, 2, ""), metrics) {}
  static std::unique_ptr<spec::DraftSessions> sessions(const Model* m, bool keep_hidden) {
    if (!m) return nullptr;
    SessionParams p;
    p.n_ctx = 256;
    p.keep_hidden = keep_hidden;
    return std::make_unique<spec::DraftSessions>(*m, p, [] { return BackendSet({"cpu"}, 1, ""); });
  }
};

// Every other request drafts, the others decode plainly in the same steps (and prompt chunks
// share them): each request's tokens are those it gets alone without speculation, greedy and
// seeded. Drafts are both kept and refused, so attention layers give slots back and a recurrent
// state goes back to the cell the verification step did not write, its kept tokens computed
// again beside the next draft; prompts share prefixes in the radix cache (state snapshots too).
void expect_served_equals_alone(const std::string& path, const std::string& draft_path, const spec::SpecParams& sp,
                                float temperature, const std::string& lead, EngineOptions opt) {
  opt.chunk_size = 16;
  SpecServed sv(path, draft_path, opt, sp);
  std::vector<GenParams> reqs = workload(*sv.l.tok, 8, 32, lead);
  std::vector<std::shared_ptr<Stream>> streams;
  for (size_t i = 0; i < reqs.size(); i++) {
    reqs[i].sampling.temperature = temperature;
    reqs[i].sampling.seed = 100 + i;
    if (i % 2 == 0) reqs[i].spec = sp;
    streams.push_back(sv.engine.submit(reqs[i]));
  }
  int64_t drafted = 0, accepted = 0;
  for (size_t i = 0; i < reqs.size(); i++) {
    const Result r = collect(*streams[i]);
    EXPECT_EQ(r.tokens, alone(sv.l, reqs[i])) << "request " << i;
    EXPECT_EQ(r.done.completion_tokens, int(r.tokens.size()));
    if (i % 2) {
      EXPECT_EQ(r.done.draft_n, 0) << "request " << i;
    }
    drafted += r.done.draft_n, accepted += r.done.draft_n_accepted;
  }
  EXPECT_GT(accepted, 0) << path;
  EXPECT_LT(accepted, drafted) << path << ": some drafts must be refused";
  EXPECT_NE(sv.metrics.prometheus().find("hart_spec_decode_num_draft_tokens_total " + std::to_string(drafted) + "\n"),
            std::string::npos);
}

void expect_speculative_equals_alone(const std::string& model, const spec::SpecParams& sp, float temperature,
                                     const std::string& draft = "", const std::string& lead = kLongLead,
                                     EngineOptions opt = with_ctx(256)) {
  HART_REQUIRE_TESTDATA(path, model);
  HART_REQUIRE_TESTDATA(draft_path, draft.empty() ? model : draft);
  expect_served_equals_alone(path, draft.empty() ? "" : draft_path, sp, temperature, lead, opt);
}

spec::SpecParams ngram_simple() {
  spec::SpecParams sp;
  sp.types = {spec::SpecType::NGRAM_SIMPLE};
  sp.ngram_size_n = 1, sp.ngram_size_m = 4;  // drafts nearly every step, often wrong
  return sp;
}

TEST(EngineSpeculative, AttentionModelGreedyAndSeeded) {
  for (float t : {0.0f, 0.9f}) expect_speculative_equals_alone("models/stories260K.gguf", ngram_simple(), t, "", "");
}

TEST(EngineSpeculative, SlidingWindowModel) {
  expect_speculative_equals_alone("archs/models/gemma3-tiny-F32.gguf", ngram_simple(), 0.0f);
}

// Recurrent state (lfm2: short-conv beside attention; qwen35: DeltaNet beside attention; rwkv7,
// arwkv7: no K/V at all). Greedy drafted by the file's own quantization or by n-grams, seeded
// with n-grams; the temperatures are ones at which these random-weight models' drafts are
// partly kept, partly refused.
TEST(EngineSpeculative, RecurrentModelsGreedy) {
  spec::SpecParams sp;
  sp.types = {spec::SpecType::DRAFT_SIMPLE};
  sp.n_max = 4;
  expect_speculative_equals_alone("archs/models/lfm2-tiny-F32.gguf", sp, 0.0f, "archs/models/lfm2-tiny-Q8_0.gguf");
  expect_speculative_equals_alone("archs/models/qwen35-tiny-F32.gguf", sp, 0.0f, "archs/models/qwen35-tiny-Q4_0.gguf");
  expect_speculative_equals_alone("archs/models/qwen35-tiny-F32.gguf", ngram_simple(), 0.0f);
}

TEST(EngineSpeculative, RecurrentModelsSeeded) {
  expect_speculative_equals_alone("archs/models/rwkv7-tiny-F32.gguf", ngram_simple(), 0.6f);
  expect_speculative_equals_alone("archs/models/qwen35-tiny-F32.gguf", ngram_simple(), 0.3f);
  expect_speculative_equals_alone("archs/models/arwkv7-tiny-F32.gguf", ngram_simple(), 0.3f);
}

// Pools that hold two or three requests at a time: admission promises a drafting request its
// verification slots and, for a recurrent state, its second cell; the prefix cache is evicted
// for them (snapshots too) while others draft and decode.
TEST(EngineSpeculative, TinyPoolsEvictWhileDrafting) {
  expect_speculative_equals_alone("models/stories260K.gguf", ngram_simple(), 0.0f, "", "", with_ctx(64, 96));
  expect_speculative_equals_alone("archs/models/qwen35-tiny-F32.gguf", ngram_simple(), 0.0f, "", kLongLead,
                                  with_ctx(128, 160));
}

// draft-simple: a draft model's session per drafting request, reused by the next one.
TEST(EngineSpeculative, DraftModel) {
  spec::SpecParams sp;
  sp.types = {spec::SpecType::DRAFT_SIMPLE};
  sp.n_max = 4;
  expect_speculative_equals_alone("models/TinyStories-656K-Q8_0.gguf", sp, 0.0f,
                                  "models/TinyStories-656K-requant-Q4_0.gguf", "");
}

// draft-mtp: each drafting request's MTP block session drafts from the hidden states the steps
// it shares with the others give it; requests computing their whole prompt beside ones that
// take theirs from the prefix cache (tests/golden/mtp's files: src/spec/mtp_drafter_test.cpp).
TEST(EngineSpeculative, MtpBlock) {
  spec::SpecParams sp;
  sp.types = {spec::SpecType::DRAFT_MTP};
  sp.n_max = 3;
  for (const char* arch : {"qwen35", "qwen35moe"})
    for (float t : {0.0f, 0.8f}) {
      SCOPED_TRACE(std::string(arch) + " temperature " + std::to_string(t));
      expect_served_equals_alone(std::string(HART_MTP_GOLDEN_DIR "/") + arch + "-mtp-tiny-F32.gguf", "", sp, t, "",
                                 with_ctx(256));
    }
}

// A request may not ask for what the server cannot draft with.
TEST(EngineSpeculative, UnavailableTypeIsRefused) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  SpecServed sv(path, "", with_ctx(64), ngram_simple());
  GenParams p = greedy(*sv.l.tok, "Once", 4);
  p.spec.types = {spec::SpecType::DRAFT_SIMPLE};
  EXPECT_THROW(sv.engine.submit(p), Error);
}

}  // namespace
}  // namespace hart::serve
