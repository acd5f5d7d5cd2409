// End-to-end tests of the `hart` binary: what a user types, what they get back.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>

#include "common/testdata.h"

namespace {

struct Result {
  int status;
  std::string out;  // stdout
};

// Runs `hart ARGS` with stderr sent to a file, returns exit status and stdout.
Result hart(const std::string& args, const std::string& env = "") {
  const std::string cmd = env + " " + HART_BINARY + std::string(" ") + args + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  Result r{-1, {}};
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(Cli, Stories260KGreedyFromBosMatchesLlama2c) {
  HART_REQUIRE_TESTDATA(model, "models/stories260K.gguf");
  const nlohmann::json g = read_json(hart::testdata_path("golden/stories260K_greedy_from_bos.json"));
  Result r = hart("run -m " + model + " -n 200 --temp 0 --json");
  ASSERT_EQ(r.status, 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const std::vector<int> want = nlohmann::json::parse(g["generated_token_ids"].get<std::string>());
  EXPECT_EQ(j["generated_tokens"].get<std::vector<int>>(), want);
  EXPECT_EQ(j["text"].get<std::string>(), g["expected_text"].get<std::string>());

  // The streamed text (no --json) is the same.
  Result s = hart("run -m " + model + " -n 200 --temp 0");
  ASSERT_EQ(s.status, 0);
  EXPECT_EQ(s.out, g["expected_text"].get<std::string>() + "\n");
}

TEST(Cli, SeededSamplingIsReproducible) {
  HART_REQUIRE_TESTDATA(model, "models/stories260K.gguf");
  const std::string args = "run -m " + model + " -p 'Once upon' -n 24 --temp 0.9 --seed 42 --json";
  Result a = hart(args), b = hart(args);
  ASSERT_EQ(a.status, 0);
  EXPECT_EQ(nlohmann::json::parse(a.out)["generated_tokens"], nlohmann::json::parse(b.out)["generated_tokens"]);
}

TEST(Cli, ErrorsAreOneLineAndNonZero) {
  EXPECT_NE(hart("run -m /nonexistent.gguf -n 1").status, 0);
  EXPECT_NE(hart("run --no-such-flag").status, 0);
  EXPECT_NE(hart("no-such-command").status, 0);
  EXPECT_NE(hart("run -m synthetic:no-such-model").status, 0);
  EXPECT_NE(hart("run -n 1", "HART_ISA=no-such-isa").status, 0);
}

TEST(Cli, DefaultSyntheticModelRuns) {
  Result r = hart("run -n 4 --temp 0 --json");
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(nlohmann::json::parse(r.out)["generated_tokens"].size(), 4u);
}

}  // namespace
