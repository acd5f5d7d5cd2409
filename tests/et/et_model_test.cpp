// Real models on the ET backend: the same greedy tokens as the CPU, with every op of the decode
// graph on the device (no CPU part), with and without the uberkernel (the default, which these
// runs of every architecture justify): the TinyStories models and
// the tiny test files of the other architectures (Gemma 3's soft-capping TANH, Gemma 4's and
// Phi-3's RoPE frequency factors, LFM2's CONCAT and SSM_CONV short convolution, RWKV-7's WKV
// recurrence and norms, the MoE block's TOP_K, MUL_MAT_ID, DIV and CLAMP, Qwen 3.5's
// GATED_DELTA_NET and SOFTPLUS).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>

#include "backend/cpu/kernels.h"
#include "common/testdata.h"
#include "gguf/gguf.h"
#include "model/model.h"
#include "model/session.h"
#include "sched/scheduler.h"

namespace hart {
namespace {

// The devices lock in a private folder, so a concurrent hart process is never disturbed.
struct PrivateLockDir {
  std::string path = (std::filesystem::temp_directory_path() / "hart-et-model-XXXXXX").string();
  PrivateLockDir() {
    if (!mkdtemp(path.data())) std::abort();
    setenv("XDG_RUNTIME_DIR", path.c_str(), 1);
  }
  ~PrivateLockDir() { std::filesystem::remove_all(path); }
};

struct Run {
  std::vector<int32_t> tokens;
  size_t cpu_nodes = 0;  // nodes the scheduler gave the CPU, over all steps
};

Run greedy(const Model& m, std::vector<std::string> devices, int n, const std::string& perf_log = "") {
  SessionParams sp;
  sp.n_ctx = 64;
  Session s(m, sp, BackendSet(devices, 1, perf_log));
  Run r;
  std::vector<int32_t> next = {1, 403, 407};  // BOS and two tokens: a prefill, then decode steps
  for (int i = 0; i < n; i++) {
    const std::span<const float> logits = s.decode(next);
    const int32_t t = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
    r.tokens.push_back(t);
    next = {t};
    r.cpu_nodes += s.scheduler().last_stats().nodes.back();
  }
  return r;
}

// n_tokens greedy steps; shire_mask (HART_ET_SHIRE_MASK) nullptr for the whole device.
void check_model(const std::string& path, int n_tokens = 8, const char* shire_mask = nullptr) {
  PrivateLockDir lock_dir;
  auto model = Model::from_file(gguf::File::open(path, gguf::LoadMode::Memory));
  // The device multiplies quantized weights by F32 activations, as the CPU's reference kernels
  // do; the optimized CPU sets quantize activations to 8 bits, which may flip a close greedy step.
  cpu::select_kernels("ref");
  const Run cpu = greedy(*model, {}, n_tokens);
  if (shire_mask) setenv("HART_ET_SHIRE_MASK", shire_mask, 1);
  for (const char* uber : {"0", "1"}) {
    setenv("HART_ET_UBERKERNEL", uber, 1);
    const Run et = greedy(*model, {"et"}, n_tokens);
    EXPECT_EQ(et.tokens, cpu.tokens) << "uberkernel " << uber;
    EXPECT_EQ(et.cpu_nodes, 0u) << "uberkernel " << uber << ": ops fell back to the CPU";
  }
  unsetenv("HART_ET_UBERKERNEL");
  unsetenv("HART_ET_SHIRE_MASK");
}

TEST(EtModel, Stories260K) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  check_model(path);
}

TEST(EtModel, TinyStories656KQ8_0) {
  HART_REQUIRE_TESTDATA(path, "models/TinyStories-656K-Q8_0.gguf");
  check_model(path);
}

TEST(EtModel, TinyStories656KQ4_0) {
  HART_REQUIRE_TESTDATA(path, "models/TinyStories-656K-requant-Q4_0.gguf");
  check_model(path);
}

// K-quants (Q4_K_M: Q4_K and Q6_K matrices; Q6_K throughout) and the other 32-element block types,
// every matrix and the embedding read on the device.
TEST(EtModel, KqTinyQ4_K_M) {
  HART_REQUIRE_TESTDATA(path, "models/kq-tiny-Q4_K_M.gguf");
  check_model(path);
}

TEST(EtModel, KqTinyQ6_K) {
  HART_REQUIRE_TESTDATA(path, "models/kq-tiny-Q6_K.gguf");
  check_model(path);
}

class EtQuantModel : public ::testing::TestWithParam<const char*> {};

TEST_P(EtQuantModel, GreedyTokensOnTheDeviceAlone) {
  HART_REQUIRE_TESTDATA(path, std::string("models/TinyStories-656K-requant-") + GetParam() + ".gguf");
  check_model(path, 4, "3");
}

INSTANTIATE_TEST_SUITE_P(Types, EtQuantModel, ::testing::Values("Q4_1", "Q5_1", "IQ4_NL"));

// Every ET_PERF line of a model run names its tensor, with llama.cpp's names where the graph
// builders give them ("Qcur-0", "ffn_out-1") and ggml's "node_<i>" elsewhere.
TEST(EtModel, PerfLogNamesEveryTensor) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  PrivateLockDir lock_dir;
  const std::string log = lock_dir.path + "/perf.log";
  auto model = Model::from_file(gguf::File::open(path, gguf::LoadMode::Memory));
  greedy(*model, {"et"}, 2, log);
  std::ifstream in(log);
  size_t lines = 0;
  std::set<std::string> names;
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("ET_PERF|", 0) != 0) continue;
    lines++;
    const size_t at = l.find("|tensor=");
    ASSERT_NE(at, std::string::npos) << l;
    const std::string name = l.substr(at + 8, l.find('|', at + 8) - at - 8);
    EXPECT_FALSE(name.empty()) << l;
    names.insert(name);
  }
  EXPECT_GT(lines, 0u);
  // (attn_out and ffn_out are MUL_MATs whose residual ADD is fused in, ffn_gate and ffn_up fused
  // with their GLU: the line names the fused op's result. The norm of the last row alone folds
  // into result_output; the prompt's norms of several rows are launches of their own.)
  for (const char* want : {"attn_norm-0", "Qcur-0", "Kcur-0", "Vcur-0", "kqv_out-0", "ffn_inp-0", "ffn_norm-0",
                           "ffn_swiglu-0", "l_out-1", "result_output"})
    EXPECT_TRUE(names.count(want)) << want;
}

// archs/models/<arch>-tiny-<type>.gguf. Four tokens (a prefill and three decode steps) on two
// shires keep the suite's QEMU runs short: the emulator's cost is per hart and launch, and the
// kernels' split over 32 shires is tested in et_kernels_test.
class EtArchModel : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(EtArchModel, GreedyTokensOnTheDeviceAlone) {
  const auto [arch, type] = GetParam();
  HART_REQUIRE_TESTDATA(path, std::string("archs/models/") + arch + "-tiny-" + type + ".gguf");
  check_model(path, 4, "3");
}

INSTANTIATE_TEST_SUITE_P(Archs, EtArchModel,
                         ::testing::Combine(::testing::Values("gemma3", "gemma4", "phi3", "smollm3", "granite", "lfm2",
                                                              "rwkv7", "arwkv7", "olmoe", "qwen3moe", "granitemoe", "qwen35",
                                                              "qwen35moe"),
                                            ::testing::Values("F32", "Q8_0")),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
                         });

}  // namespace
}  // namespace hart
