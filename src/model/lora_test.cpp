// LoRA adapters (model/lora.h): the loader's checks, and the run-time product W x + s B (A x)
// held to a model whose weights have the adapter merged in (W + s B A, token_embd's rows
// likewise), to the base model at scale 0 (bit for bit), and within a batch whose sequences use
// different scales. llama.cpp's own tokens with the adapter are tests/cli's (cli_test).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/error.h"
#include "model/executor.h"
#include "model/lora.h"
#include "model/session.h"

namespace hart {
namespace {

std::unique_ptr<Model> base() { return Model::from_file(gguf::File::open(HART_BUILTIN_MODEL_FILE, gguf::LoadMode::Memory)); }

const std::vector<int32_t> kPrompt = {1, 403, 407, 261, 378, 11, 30, 77};

std::vector<float> logits(const Model& m, std::vector<float> lora) {
  SessionParams sp;
  sp.n_ctx = 64;
  sp.lora = std::move(lora);
  Session s(m, sp, BackendSet({"cpu"}, 1, ""));
  std::span<const float> l = s.decode(kPrompt, /*all_logits=*/true);
  return {l.begin(), l.end()};
}

float max_abs_diff(std::span<const float> a, std::span<const float> b) {
  float d = 0;
  for (size_t i = 0; i < a.size(); i++) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

std::vector<float> floats(const Tensor* t) {
  const float* p = static_cast<const float*>(t->data);
  return {p, p + t->nelements()};
}

// The model's file with every adapted weight replaced by W + s B A (F32 weights).
std::unique_ptr<Model> merged(const Model& m, const LoraAdapter& ad, float user) {
  gguf::Writer w;
  for (const gguf::KeyValue& kv : m.file->metadata()) w.set(kv.key, kv.value);
  std::vector<std::vector<float>> keep;
  for (const gguf::TensorInfo& t : m.file->tensors()) {
    const Tensor* base_w = m.tensor(t.name);
    const LoraPair* p = base_w ? ad.find(base_w) : nullptr;
    const bool embd = t.name == "token_embd.weight" && ad.embd.a;
    if (!p && !embd) {
      w.add_tensor(t.name, t.type, std::span<const int64_t>(t.ne, t.n_dims), t.data, t.nbytes);
      continue;
    }
    EXPECT_EQ(t.type, Type::F32);
    std::vector<float>& v = keep.emplace_back(floats(base_w));
    const LoraPair& q = embd ? ad.embd : *p;
    const std::vector<float> a = floats(q.a), b = floats(q.b);
    const int64_t r = q.rank(), k = t.ne[0], n = t.ne[1];
    const float s = lora_scale(user, ad.alpha, r);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < k; i++) {
        double d = 0;  // W (k, n): element (i, j) += s sum_r B(r, j) A(i, r); token_embd: B(r, i) A(r, j)
        for (int64_t x = 0; x < r; x++) d += embd ? double(b[size_t(i * r + x)]) * a[size_t(j * r + x)]
                                                  : double(b[size_t(j * r + x)]) * a[size_t(x * k + i)];
        v[size_t(j * k + i)] += s * float(d);
      }
    w.add_tensor(t.name, t.type, std::span<const int64_t>(t.ne, t.n_dims), v.data(), v.size() * sizeof(float));
  }
  return Model::from_file(gguf::File::from_bytes(w.to_bytes(), "merged"));
}

TEST(Lora, RunTimeProductIsTheMergedModels) {
  auto m = base();
  m->loras.push_back(load_lora(*m, HART_LORA_ADAPTER));
  const LoraAdapter& ad = *m->loras[0];
  EXPECT_EQ(ad.alpha, 8.0f);
  EXPECT_TRUE(ad.embd.a);
  EXPECT_EQ(ad.pairs.size(), 5u * 4 + 1);  // q, v, attn_output, ffn_up per layer; output
  const std::vector<float> plain = logits(*m, {});
  for (float user : {1.0f, 0.5f, -2.0f}) {
    const std::vector<float> with = logits(*m, {user});
    const std::vector<float> want = logits(*merged(*m, ad, user), {});
    EXPECT_GT(max_abs_diff(with, plain), 0.5f) << user;  // the adapter changes the logits
    EXPECT_LT(max_abs_diff(with, want), 2e-3f) << user;
  }
}

TEST(Lora, ScaleZeroIsTheBaseModelBitForBit) {
  auto m = base();
  const std::vector<float> plain = logits(*m, {});
  m->loras.push_back(load_lora(*m, HART_LORA_ADAPTER));
  m->loras.push_back(load_lora(*m, HART_LORA_ADAPTER));
  EXPECT_EQ(logits(*m, {0.0f, 0.0f}), plain);
  EXPECT_EQ(logits(*m, {}), plain);
  // Two copies of one adapter at 0.25 each are one at 0.5 (up to rounding, through an F16 cache).
  EXPECT_LT(max_abs_diff(logits(*m, {0.25f, 0.25f}), logits(*m, {0.5f, 0.0f})), 5e-3f);
}

// One batch, three sequences at scales 0, 1 and 0.5: each gets the logits it gets alone.
TEST(Lora, SequencesOfABatchHaveTheirOwnScales) {
  auto m = base();
  m->loras.push_back(load_lora(*m, HART_LORA_ADAPTER));
  const std::vector<float> scales = {0.0f, 1.0f, 0.5f};
  kv::SequenceStore store(state_layout(m->hp), {3 * 64, 3 * 64, 3}, Type::F16);
  Executor ex(*m, store, 64, BackendSet({"cpu"}, 1, ""));
  std::vector<kv::SeqState> seqs(3);
  Batch b;
  for (size_t i = 0; i < 3; i++) {
    ASSERT_TRUE(store.reserve(seqs[i], int(kPrompt.size())));
    b.add(seqs[i], store.layout(), kPrompt, Logits::ALL, std::span(&scales[i], 1));
  }
  const ForwardGraph& fg = ex.forward(b);
  const size_t rows = kPrompt.size() * size_t(m->hp.n_vocab);
  const float* out = static_cast<const float*>(fg.logits->data);
  for (size_t i = 0; i < 3; i++) {
    const std::vector<float> alone = logits(*m, {scales[i]});
    EXPECT_LT(max_abs_diff({out + i * rows, rows}, alone), 1e-5f) << scales[i];
  }
}

std::string load_error(const Model& m, const gguf::Writer& w) {
  try {
    load_lora(m, gguf::File::from_bytes(w.to_bytes(), "bad.gguf"));
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Lora, RefusesFilesThatAreNotAnAdapterOfTheModel) {
  auto m = base();
  try {
    load_lora(*m, HART_BUILTIN_MODEL_FILE);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(": not a LoRA adapter (general.type is missing, an adapter's is 'adapter')"),
              std::string::npos) << e.what();
  }
  const auto adapter = [](const std::string& arch) {
    gguf::Writer w;
    w.set("general.architecture", arch);
    w.set("general.type", std::string("adapter"));
    w.set("adapter.type", std::string("lora"));
    w.set("adapter.lora.alpha", 4.0f);
    return w;
  };
  static const std::vector<float> zeros(64 * 64);
  const int64_t a_ne[2] = {64, 4}, b_ne[2] = {4, 64}, bad_ne[2] = {4, 65};
  gguf::Writer other = adapter("qwen3");
  EXPECT_EQ(load_error(*m, other), "bad.gguf: an adapter for architecture 'qwen3', the model is 'llama'");
  gguf::Writer empty = adapter("llama");
  EXPECT_EQ(load_error(*m, empty), "bad.gguf: the adapter has no LoRA tensors");
  gguf::Writer half = adapter("llama");
  half.add_tensor("blk.0.attn_q.weight.lora_a", Type::F32, a_ne, zeros.data(), 64 * 4 * 4);
  EXPECT_EQ(load_error(*m, half), "bad.gguf: the LoRA pair of 'blk.0.attn_q.weight' lacks its lora_b");
  gguf::Writer shape = adapter("llama");
  shape.add_tensor("blk.0.attn_q.weight.lora_a", Type::F32, a_ne, zeros.data(), 64 * 4 * 4);
  shape.add_tensor("blk.0.attn_q.weight.lora_b", Type::F32, bad_ne, zeros.data(), 65 * 4 * 4);
  EXPECT_EQ(load_error(*m, shape),
            "bad.gguf: tensor 'blk.0.attn_q.weight' (64, 64) does not match its LoRA pair (64, 4) x (4, 65) (an adapter "
            "for another model?)");
  gguf::Writer missing = adapter("llama");
  missing.add_tensor("blk.9.attn_q.weight.lora_a", Type::F32, a_ne, zeros.data(), 64 * 4 * 4);
  missing.add_tensor("blk.9.attn_q.weight.lora_b", Type::F32, b_ne, zeros.data(), 64 * 4 * 4);
  EXPECT_EQ(load_error(*m, missing), "bad.gguf: tensor 'blk.9.attn_q.weight' is not in the model (an adapter for another model?)");
  gguf::Writer stray = adapter("llama");
  stray.add_tensor("blk.0.attn_q.weight", Type::F32, b_ne, zeros.data(), 64 * 4 * 4);
  EXPECT_EQ(load_error(*m, stray), "bad.gguf: tensor 'blk.0.attn_q.weight' is neither a .lora_a nor a .lora_b");
  gguf::Writer kind = adapter("llama");
  kind.set("adapter.type", std::string("control_vector"));
  EXPECT_EQ(load_error(*m, kind), "bad.gguf: adapter.type is 'control_vector', only 'lora' adapters are supported");
  // A session's scales must be one per adapter.
  m->loras.push_back(load_lora(*m, HART_LORA_ADAPTER));
  SessionParams sp;
  sp.lora = {1.0f, 1.0f};
  EXPECT_THROW(Session(*m, sp, BackendSet({"cpu"}, 1, "")), Error);
}

}  // namespace
}  // namespace hart
