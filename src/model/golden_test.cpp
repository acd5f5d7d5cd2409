// Every golden file under testdata/golden (a float64 reference forward pass, llama.cpp beside it):
// the prompt tokenizes identically; greedy tokens agree up to the first step whose top-2 margin
// is small; the first step's logits are close. Run twice: with the scalar reference kernels and an
// F32 KV cache (tight bounds), and with the default kernels and F16 cache (looser bounds).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backend/cpu/kernels.h"
#include "common/testdata.h"
#include "model/generate.h"
#include "tokenizer/tokenizer.h"

namespace hart {
namespace {

struct Mode {
  const char* name;
  const char* kernels;  // nullptr: the default set
  Type cache;
  float margin;     // compare tokens up to the first step with a smaller top-2 margin
  float logit_tol;  // max |logit - reference| at step 0
};

constexpr Mode kRef = {"ref", "ref", Type::F32, 0.05f, 0.02f};
constexpr Mode kDefault = {"default", nullptr, Type::F16, 0.3f, 0.35f};

std::vector<std::string> golden_files() {
  std::vector<std::string> files;
  const std::string dir = testdata_path("golden");
  if (!std::filesystem::exists(dir)) return files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find("__") != std::string::npos && e.path().extension() == ".json") files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  return files;
}

void check_golden(const std::string& file, const Mode& mode) {
  std::ifstream in(testdata_path("golden/" + file));
  const nlohmann::json g = nlohmann::json::parse(in);
  const std::string model_file = g["model"].get<std::string>();
  SCOPED_TRACE(file + " [" + mode.name + "]");

  cpu::select_kernels(mode.kernels ? mode.kernels : cpu::available_kernels().back()->name);
  auto gf = gguf::File::open(testdata_path("models/" + model_file), gguf::LoadMode::Memory);
  auto tok = Tokenizer::from_gguf(*gf);
  auto model = Model::from_file(std::move(gf));

  const std::vector<int32_t> want_prompt = g["prompt_tokens"];
  const std::vector<int32_t> prompt = tok->encode(g["prompt"].get<std::string>(), true, true);
  ASSERT_EQ(prompt, want_prompt);

  SessionParams sp;
  sp.cache_type = mode.cache;
  sp.n_threads = 2;
  Session session(*model, sp);
  SamplerParams greedy;
  greedy.temperature = 0;
  Sampler sampler(greedy, model->hp.n_vocab);
  const std::vector<int32_t> want = g["generated_tokens"];
  const std::vector<float> margins = g["top2_margin"];
  // Tokens after the first small-margin step may differ between correct engines: stop there.
  size_t comparable = 0;
  while (comparable < want.size() && margins[comparable] >= mode.margin) comparable++;
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

  const std::vector<float> ref0 = g["logits_step0"];
  ASSERT_EQ(logits0.size(), ref0.size());
  float max_diff = 0;
  for (size_t i = 0; i < ref0.size(); i++) max_diff = std::max(max_diff, std::fabs(logits0[i] - ref0[i]));
  EXPECT_LE(max_diff, mode.logit_tol) << "step-0 logits differ";

  for (size_t i = 0; i < comparable; i++) {
    ASSERT_LT(i, got.size()) << "generation stopped early";
    ASSERT_EQ(got[i], want[i]) << "greedy token " << i << " differs (margin " << margins[i] << ")";
  }
  std::printf("  %-50s %-8s max|dlogit| %.4f, %zu/%zu tokens compared\n", file.c_str(), mode.name,
              max_diff, comparable, want.size());
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, ReferenceKernelsF32Cache) { check_golden(GetParam(), kRef); }
TEST_P(Golden, DefaultKernels) { check_golden(GetParam(), kDefault); }

INSTANTIATE_TEST_SUITE_P(AllFiles, Golden, ::testing::ValuesIn(golden_files()),
                         [](const auto& info) {
                           std::string n = info.param.substr(0, info.param.size() - 5);
                           for (char& ch : n)
                             if (!std::isalnum((unsigned char)ch)) ch = '_';
                           return n;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Golden);

TEST(GoldenData, Present) {
  if (golden_files().empty()) GTEST_SKIP() << "test data not found: " << testdata_path("golden");
  EXPECT_GE(golden_files().size(), 20u);
}

}  // namespace
}  // namespace hart
