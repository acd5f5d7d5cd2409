// Real models on the ET backend: the same greedy tokens as the CPU, with every op of the decode
// graph on the device (no CPU part), with and without the uberkernel.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

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

Run greedy(const Model& m, std::vector<std::string> devices, int n) {
  SessionParams sp;
  sp.n_ctx = 64;
  Session s(m, sp, BackendSet(devices, 1, ""));
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

void check_model(const std::string& path) {
  PrivateLockDir lock_dir;
  auto model = Model::from_file(gguf::File::open(path, gguf::LoadMode::Memory));
  // The device multiplies quantized weights by F32 activations, as the CPU's reference kernels
  // do; the optimized CPU sets quantize activations to 8 bits, which may flip a close greedy step.
  cpu::select_kernels("ref");
  const Run cpu = greedy(*model, {}, 8);
  for (const char* uber : {"0", "1"}) {
    setenv("HART_ET_UBERKERNEL", uber, 1);
    const Run et = greedy(*model, {"et"}, 8);
    EXPECT_EQ(et.tokens, cpu.tokens) << "uberkernel " << uber;
    EXPECT_EQ(et.cpu_nodes, 0u) << "uberkernel " << uber << ": ops fell back to the CPU";
  }
  unsetenv("HART_ET_UBERKERNEL");
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

}  // namespace
}  // namespace hart
