// Every golden file of the test data: the prompt tokenizes identically; greedy tokens agree up to
// the first step whose top-2 margin is small; the first step's logits are close. Each file runs
// with the scalar reference kernels and with the default kernels.
//  - golden/: a float64 reference forward pass. Reference kernels with an F32 KV cache (tight
//    bounds), default kernels with the F16 cache (looser).
//  - archs/golden, qtypes/golden: llama.cpp de3ff81 with an F32 cache, which quantizes
//    activations to 8 bits in quantized matmuls: bounds by the file's weights (F32: tight,
//    quantized: looser), F32 cache in both modes.
//  - tests/golden (this repository; tools/llamacpp-golden/make): the same, for prompts far longer
//    than the archs models' sliding window, decoded in one batch and in chunks (`n_batch`).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backend/cpu/kernels.h"
#include "common/testdata.h"
#include "model/arch.h"
#include "model/generate.h"
#include "quant/quant.h"
#include "tokenizer/tokenizer.h"

namespace hart {
namespace {

struct Bounds {
  float margin;     // compare tokens up to the first step with a smaller top-2 margin
  float logit_tol;  // max |logit - reference| at step 0
};
constexpr Bounds kTight = {0.05f, 0.02f};
constexpr Bounds kLoose = {0.3f, 0.35f};

struct Suite {
  const char* golden_dir;  // in the test data, or this repository's tests/golden when "repo"
  const char* model_dir;
  bool llama_cpp;  // llama.cpp's outputs (else the float64 reference)
  std::string dir() const { return std::string(golden_dir) == "repo" ? HART_REPO_GOLDEN : testdata_path(golden_dir); }
};
const Suite kSuites[] = {{"golden", "models", false},
                         {"archs/golden", "archs/models", true},
                         {"qtypes/golden", "qtypes/models", true},
                         {"repo", "archs/models", true}};

struct Case {
  const Suite* suite;
  std::string file;
};

std::vector<Case> golden_cases() {
  std::vector<Case> cases;
  for (const Suite& s : kSuites) {
    const std::string dir = s.dir();
    if (!std::filesystem::exists(dir)) continue;
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (name.find("__") != std::string::npos && e.path().extension() == ".json") files.push_back(name);
    }
    std::sort(files.begin(), files.end());
    for (std::string& f : files) cases.push_back({&s, std::move(f)});
  }
  return cases;
}

bool all_f32(const nlohmann::json& g) {
  const auto& types = g.at("tensor_types");
  return types.size() == 1 && types.contains("F32");
}

void check_golden(const Case& c, bool ref_kernels) {
  std::ifstream in(c.suite->dir() + "/" + c.file);
  const nlohmann::json g = nlohmann::json::parse(in);
  const std::string model_file = g.at("model").get<std::string>();
  const char* mode = ref_kernels ? "ref" : "default";
  SCOPED_TRACE(c.file + " [" + mode + "]");
  const Bounds b = c.suite->llama_cpp ? (all_f32(g) ? kTight : kLoose) : (ref_kernels ? kTight : kLoose);

  const std::string model_path = testdata_path(std::string(c.suite->model_dir) + "/" + model_file);
  if (!std::filesystem::exists(model_path)) GTEST_SKIP() << "test data not found: " << model_path;
  auto gf = gguf::File::open(model_path, gguf::LoadMode::Memory);
  // Architectures and block types later issues add are listed, not silently passed.
  const std::string arch = gf->require_string("general.architecture");
  if (!find_arch(arch)) GTEST_SKIP() << "architecture " << arch << " is not supported yet";
  for (const gguf::TensorInfo& t : gf->tensors())
    if (!type_supported(t.type)) GTEST_SKIP() << "tensor type " << type_name(t.type) << " is not supported yet";
  cpu::select_kernels(ref_kernels ? "ref" : cpu::available_kernels().back()->name);
  auto tok = Tokenizer::from_gguf(*gf);
  auto model = Model::from_file(std::move(gf));

  const std::vector<int32_t> want_prompt = g.at("prompt_tokens");
  const std::vector<int32_t> prompt = tok->encode(g.at("prompt").get<std::string>(), true, true);
  ASSERT_EQ(prompt, want_prompt);

  SessionParams sp;
  sp.cache_type = c.suite->llama_cpp || ref_kernels ? Type::F32 : Type::F16;
  sp.n_ctx = 1024;  // as the llama.cpp goldens were made (it picks Phi-3's RoPE factors)
  sp.n_batch = g.value("n_batch", 512);
  Session session(*model, sp, BackendSet({"cpu"}, 2, ""));
  SamplerParams greedy;
  greedy.temperature = 0;
  Sampler sampler(greedy, model->hp.n_vocab);
  const std::vector<int32_t> want = g.at("generated_tokens");
  const std::vector<float> margins = g.at("top2_margin");
  // Tokens after the first small-margin step may differ between correct engines: stop there.
  size_t comparable = 0;
  while (comparable < want.size() && margins[comparable] >= b.margin) comparable++;
  std::vector<int32_t> got;
  std::vector<float> logits0;
  GenerateOptions go;
  go.n_predict = int(std::max<size_t>(comparable, 1));
  go.on_token = [&](int32_t t) {
    got.push_back(t);
    return true;
  };
  go.logits_step0 = &logits0;
  generate(session, sampler, prompt, go);

  const std::vector<float> ref0 = g.at("logits_step0");
  ASSERT_EQ(logits0.size(), ref0.size());
  float max_diff = 0;
  for (size_t i = 0; i < ref0.size(); i++) max_diff = std::max(max_diff, std::fabs(logits0[i] - ref0[i]));
  EXPECT_LE(max_diff, b.logit_tol) << "step-0 logits differ";

  for (size_t i = 0; i < comparable; i++) {
    ASSERT_LT(i, got.size()) << "generation stopped early";
    ASSERT_EQ(got[i], want[i]) << "greedy token " << i << " differs (margin " << margins[i] << ")";
  }
  std::printf("  %-50s %-8s max|dlogit| %.5f, %zu/%zu tokens compared\n", c.file.c_str(), mode, max_diff, comparable,
              want.size());
}

class Golden : public ::testing::TestWithParam<Case> {};

TEST_P(Golden, ReferenceKernels) { check_golden(GetParam(), true); }
TEST_P(Golden, DefaultKernels) { check_golden(GetParam(), false); }

INSTANTIATE_TEST_SUITE_P(AllFiles, Golden, ::testing::ValuesIn(golden_cases()), [](const auto& info) {
  const std::string dir = info.param.suite->golden_dir;  // "golden", "archs/golden", ... "repo"
  std::string n = dir.substr(0, dir.find('/')) + "_" + info.param.file.substr(0, info.param.file.size() - 5);
  for (char& ch : n)
    if (!std::isalnum((unsigned char)ch)) ch = '_';
  return n;
});
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Golden);

TEST(GoldenData, Present) {
  if (golden_cases().empty()) GTEST_SKIP() << "test data not found: " << testdata_path("golden");
  EXPECT_GE(golden_cases().size(), 20u);
}

}  // namespace
}  // namespace hart
