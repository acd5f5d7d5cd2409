// End-to-end tests of the `hart` binary: what a user types, what they get back.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "common/testdata.h"
#include "run_command.h"
#include "gguf/gguf.h"

namespace {

using hart::testing::Result;
using hart::testing::run_command;

// Runs `hart ARGS` with stderr discarded, returns exit status and stdout.
Result hart(const std::string& args, const std::string& env = "") {
  return run_command(env + " " + HART_BINARY + std::string(" ") + args + " 2>/dev/null");
}

// Runs `hart ARGS`, returns exit status and stderr.
Result hart_stderr(const std::string& args, const std::string& env = "") {
  return run_command(env + " " + HART_BINARY + std::string(" ") + args + " 2>&1 >/dev/null");
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
  const std::vector<int> want = g["generated_token_ids"].get<std::vector<int>>();
  EXPECT_EQ(j["generated_tokens"].get<std::vector<int>>(), want);
  EXPECT_EQ(j["text"].get<std::string>(), g["expected_text"].get<std::string>());

  // The streamed text (no --json) is the same.
  Result s = hart("run -m " + model + " -n 200 --temp 0");
  ASSERT_EQ(s.status, 0);
  EXPECT_EQ(s.out, g["expected_text"].get<std::string>() + "\n");
}

std::vector<int> greedy_tokens(const std::string& model, int n, const std::string& env = "") {
  Result r = hart("run -m " + model + " -n " + std::to_string(n) + " --temp 0 --json", env);
  EXPECT_EQ(r.status, 0) << model;
  if (r.status != 0) return {};
  return nlohmann::json::parse(r.out)["generated_tokens"].get<std::vector<int>>();
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("hart_cli_test_" + std::to_string(getpid()) + "_" + name)).string();
}

// llama.cpp's flow: quantize the F32 model to Q8_0 (rows that do not fit a block stay wide),
// then generate: the first 20 greedy tokens are those of the F32 model.
TEST(Cli, QuantizeToQ8_0KeepsGreedyTokens) {
  HART_REQUIRE_TESTDATA(model, "models/stories260K.gguf");
  const std::string out = temp_path("q8_0.gguf");
  ASSERT_EQ(hart("quantize " + model + " " + out + " q8_0").status, 0);
  const std::vector<int> f32 = greedy_tokens(model, 20), q8 = greedy_tokens(out, 20);
  std::filesystem::remove(out);
  ASSERT_EQ(f32.size(), 20u);
  EXPECT_EQ(q8, f32);
}

// The tensor types of a GGUF file by name.
std::map<std::string, std::string> tensor_types(const std::string& path) {
  std::map<std::string, std::string> m;
  const auto file = hart::gguf::File::open(path);
  for (const auto& t : file->tensors()) m[t.name] = std::string(hart::type_name(t.type));
  return m;
}

// llama-quantize's arguments: INPUT TYPE writes ggml-model-TYPE.gguf beside the input; INPUT OUTPUT
// TYPE NTHREADS takes the type's number too; --pure, --output-tensor-type, --token-embedding-type,
// --leave-output-tensor and --allow-requantize reach the plan (their per-tensor choices are
// quantize_model_test's). stories260K's 64-wide rows fit no 256-block: Q4_K_M's mix gives the last
// layer's attn_v Q6_K, which falls back to Q8_0, --pure Q4_K, which falls back to Q5_0.
TEST(Cli, QuantizeTakesLlamaQuantizesArguments) {
  HART_REQUIRE_TESTDATA(model, "models/stories260K.gguf");
  const std::filesystem::path dir = temp_path("quantize_args");
  std::filesystem::create_directories(dir);
  const std::string in = (dir / "in.gguf").string(), out = (dir / "out.gguf").string();
  std::filesystem::copy_file(model, in);

  ASSERT_EQ(hart("quantize " + in + " q8_0").status, 0);
  EXPECT_EQ(tensor_types((dir / "ggml-model-Q8_0.gguf").string()).at("output.weight"), "q8_0");
  ASSERT_EQ(hart("quantize " + in + " " + out + " 15 2").status, 0);  // 15: Q4_K (= Q4_K_M), 2 threads
  EXPECT_EQ(hart::gguf::File::open(out)->get_int("general.file_type"), 15);
  EXPECT_EQ(tensor_types(out).at("blk.4.attn_v.weight"), "q8_0");
  ASSERT_EQ(hart("quantize --pure --output-tensor-type F16 --token-embedding-type q8_0 " + in + " " + out + " Q4_K").status, 0);
  auto types = tensor_types(out);
  EXPECT_EQ(types.at("output.weight"), "f16");
  EXPECT_EQ(types.at("token_embd.weight"), "q8_0");
  EXPECT_EQ(types.at("blk.4.attn_v.weight"), "q5_0");
  ASSERT_EQ(hart("quantize --leave-output-tensor " + in + " " + out + " q4_k_m").status, 0);
  EXPECT_EQ(tensor_types(out).at("output.weight"), "f32");

  // out is Q4_K_M now: converting its tensors again needs --allow-requantize.
  const std::string again = (dir / "again.gguf").string();
  const Result refused = hart_stderr("quantize " + out + " " + again + " Q8_0");
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.out.find("--allow-requantize"), std::string::npos) << refused.out;
  EXPECT_EQ(hart("quantize --allow-requantize " + out + " " + again + " Q8_0").status, 0);
  EXPECT_EQ(tensor_types(again).at("blk.0.attn_q.weight"), "q8_0");

  for (const std::string& bad : {in + " " + out, in + " " + out + " Q9_9", in + " " + out + " Q8_0 two",
                                 "-t 2 " + in + " " + out + " Q8_0 2", "--output-tensor-type q9 " + in + " Q8_0",
                                 in + " " + out + " Q8_0 2 extra"}) {
    const Result r = hart_stderr("quantize " + bad);
    EXPECT_NE(r.status, 0) << bad;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << bad << ": " << r.out;
  }
  std::filesystem::remove_all(dir);
}

// Every kernel set this CPU runs gives the F32 model's greedy tokens.
TEST(Cli, EveryKernelSetGivesTheSameGreedyTokens) {
  HART_REQUIRE_TESTDATA(model, "models/TinyStories-656K-Q8_0.gguf");
  const std::vector<int> ref = greedy_tokens(model, 16, "HART_ISA=ref");
  ASSERT_EQ(ref.size(), 16u);
  for (const char* isa : {"avx2", "avx512", "avx512_vnni", "rvv", "rvv_zvfh"}) {
    Result probe = hart("run -m " + model + " -n 1 --temp 0", std::string("HART_ISA=") + isa);
    if (probe.status != 0) continue;  // not supported by this CPU (a clear error, tested below)
    EXPECT_EQ(greedy_tokens(model, 16, std::string("HART_ISA=") + isa), ref) << isa;
  }
}

// A LoRA adapter applied at run time gives llama.cpp's text (tests/golden/lora, from
// llama-completion de3ff81 with the same flags); at scale 0 the base model's.
TEST(Cli, LoraAdapterGivesLlamaCppText) {
  const std::string root = HART_REPO_GOLDEN "/../../";
  const nlohmann::json g = read_json(HART_REPO_GOLDEN "/lora/stories260K-lora.json");
  const std::string model = root + g["model"].get<std::string>(), adapter = root + g["adapter"].get<std::string>();
  const std::string args = "run -m " + model + " -p '" + g["prompt"].get<std::string>() + "' -n " +
                           std::to_string(g["n_predict"].get<int>()) + " --temp 0 --json ";
  const auto text = [&](const std::string& flags) {
    Result r = hart(args + flags);
    EXPECT_EQ(r.status, 0) << flags;
    return r.status == 0 ? nlohmann::json::parse(r.out)["text"].get<std::string>() : std::string();
  };
  EXPECT_EQ(text("--lora " + adapter), g["with_adapter"].get<std::string>());
  EXPECT_EQ(text("--lora-scaled " + adapter + ":0"), g["without_adapter"].get<std::string>());
  EXPECT_EQ(text(""), g["without_adapter"].get<std::string>());
  EXPECT_NE(text("--lora-scaled " + adapter + " 0.5"), g["with_adapter"].get<std::string>());
  // A file that is not there, or an adapter of another model: an error naming the file.
  Result missing = hart_stderr(args + "--lora /nonexistent/adapter.gguf");
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.out.find("/nonexistent/adapter.gguf"), std::string::npos) << missing.out;
  HART_REQUIRE_TESTDATA(qwen3, "models/qwen3-tiny-Q8_0.gguf");
  Result other = hart_stderr("run -m " + qwen3 + " -p hi -n 2 --lora " + adapter);
  EXPECT_NE(other.status, 0);
  EXPECT_NE(other.out.find("stories260K-lora.gguf"), std::string::npos) << other.out;
}

TEST(Cli, InfoAndTokenize) {
  HART_REQUIRE_TESTDATA(model, "models/stories260K.gguf");
  Result info = hart("info " + model + " --json");
  ASSERT_EQ(info.status, 0);
  EXPECT_NE(info.out.find("token_embd.weight"), std::string::npos);
  EXPECT_NE(info.out.find("general.architecture"), std::string::npos);

  Result tok = hart("tokenize -m " + model + " --ids 'Once upon a time'");
  ASSERT_EQ(tok.status, 0);
  const nlohmann::json g = read_json(hart::testdata_path("golden/stories260K__once_upon_a_time.json"));
  std::string want;
  for (int id : g["prompt_tokens"]) {
    if (!want.empty()) want += ' ';
    want += std::to_string(id);
  }
  EXPECT_NE(tok.out.find(want), std::string::npos) << tok.out;
}

TEST(Cli, TokenizeVectorsReproduceLlamaCpp) {
  HART_REQUIRE_TESTDATA(dir, "tokenizer");
  for (const char* name : {"llama-spm", "gpt-2", "falcon"}) {
    const std::string base = dir + "/ggml-vocab-" + name + ".gguf";
    Result r = hart("tokenize -m " + base + " --vectors " + base + ".inp");
    ASSERT_EQ(r.status, 0) << name;
    std::ifstream in(base + ".out");
    const std::string want((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(r.out, want) << name;
  }
}

// Two turns through a chat template; the second reuses the cached prefix of the first.
TEST(Cli, ChatKeepsHistory) {
  HART_REQUIRE_TESTDATA(model, "models/stories260K.gguf");
  const std::string input = temp_path("chat.txt");
  std::ofstream(input) << "Hi\nTell me a story\n";
  Result r = hart("chat -m " + model + " --chat-template chatml --temp 0 -n 8 < " + input);
  Result again = hart("chat -m " + model + " --chat-template chatml --temp 0 -n 8 < " + input);
  std::filesystem::remove(input);
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;
  EXPECT_EQ(r.out, again.out);
  // stories260K has no template of its own: without --chat-template that is a clear error.
  EXPECT_NE(hart("chat -m " + model + " < /dev/null").status, 0);
}

// hart chat with the speculative flags: the replies are the plain run's, turn after turn (the
// drafters see the earlier turns, and the session keeps them across speculative steps), the
// drafts are counted, and -lcd gets each turn's text.
TEST(Cli, ChatWithSpeculationGivesThePlainReplies) {
  HART_REQUIRE_TESTDATA(target, "models/TinyStories-656K-Q8_0.gguf");
  HART_REQUIRE_TESTDATA(draft, "models/TinyStories-656K-requant-Q4_0.gguf");
  const std::string input = temp_path("chat_spec.txt"), lcd = temp_path("chat_spec_lcd.bin");
  std::ofstream(input) << "Once upon a time\nTell me a story\n";
  const std::string base = "chat -m " + target + " --chat-template chatml --temp 0 -n 24";
  const Result plain = hart(base + " < " + input);
  ASSERT_EQ(plain.status, 0);
  for (const std::string& spec : {" --spec-type draft-simple -md " + draft + " --spec-draft-n-max 4",
                                 " --spec-type ngram-cache -lcd " + lcd}) {
    const Result r = hart(base + spec + " < " + input);
    ASSERT_EQ(r.status, 0) << spec;
    EXPECT_EQ(r.out, plain.out) << spec;
    const Result err = hart_stderr(base + spec + " < " + input);
    EXPECT_NE(err.out.find("draft acceptance"), std::string::npos) << err.out;
  }
  EXPECT_GT(std::filesystem::file_size(lcd), 0u);
  const Result err = hart_stderr(base + " --spec-type draft-simple -md " + draft + " < " + input);
  EXPECT_EQ(err.out.find(" 0 drafted"), std::string::npos) << err.out;
  std::filesystem::remove(input);
  std::filesystem::remove(lcd);
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
  EXPECT_NE(hart("run -n 1 --cpu-mask zz").status, 0);
}

// hart run's speculative flags (llama.cpp's spellings, -md and -lcs included): the text is the
// same with and without, the timings count the drafts, and what cannot be honoured is refused.
TEST(Cli, SpeculativeRunGivesTheSameTextAndRefusesBadInput) {
  HART_REQUIRE_TESTDATA(target, "models/TinyStories-656K-Q8_0.gguf");
  HART_REQUIRE_TESTDATA(draft, "models/TinyStories-656K-requant-Q4_0.gguf");
  HART_REQUIRE_TESTDATA(other, "models/stories260K.gguf");
  const std::string base = "run -m " + target + " -p 'Once upon a time' -n 32 --temp 0 --json";
  const Result plain = hart(base);
  ASSERT_EQ(plain.status, 0);
  for (const std::string& spec : {" --spec-type draft-simple -md " + draft + " --spec-draft-n-max 4",
                                 std::string(" --spec-type ngram-simple --spec-ngram-simple-size-n 2")}) {
    const Result r = hart(base + spec);
    ASSERT_EQ(r.status, 0) << spec;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["generated_tokens"], nlohmann::json::parse(plain.out)["generated_tokens"]) << spec;
    EXPECT_TRUE(j["timings"].contains("draft_n_accepted")) << spec;
  }
  EXPECT_GT(nlohmann::json::parse(hart(base + " --spec-type draft-simple -md " + draft).out)["timings"]["draft_n"], 0);

  const auto refused = [&](const std::string& args, const std::string& says) {
    const Result r = hart_stderr("run -m " + target + " -n 4 " + args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_NE(r.out.find(says), std::string::npos) << args << ": " << r.out;
  };
  refused("--spec-type draft-simple -md " + other, "vocabulary is not the target's");
  refused("--spec-type draft-simple -md " + draft + " --spec-draft-n-max 0", "at least 1");
  refused("--spec-type draft-simple -md " + draft + " --spec-draft-n-max 100000", "does not fit");
  refused("--draft-max 8", "use --spec-draft-n-max");
  refused("--spec-type draft-mtp", "needs a model with multi-token-prediction layers");
  refused("--spec-type draft-eagle3", "not implemented in hart");
  const std::string bad = std::filesystem::temp_directory_path() / "hart_cli_bad_lookup.bin";
  std::ofstream(bad) << "not a lookup cache";
  refused("--spec-type ngram-cache -lcs " + bad, "is corrupt");
  std::filesystem::remove(bad);
}

// `hart serve` listens before it loads the model; a model that fails to load still ends it with
// the one-line error and status 1 (no abort from threads left running, no hang in the HTTP loop).
// draft-mtp with the tiny qwen35's MTP block (src/spec/mtp_drafter_test.cpp checks its drafts
// against llama.cpp's): run, bench and chat give the plain text; serve refuses it for a model
// without MTP layers (src/serve/engine_test.cpp serves it).
TEST(Cli, DraftMtpGivesTheSameTextInRunBenchAndChat) {
  const std::string m = HART_REPO_GOLDEN "/mtp/qwen35-mtp-tiny-F32.gguf";
  const std::string base = "run -m " + m + " -p 'Once upon a time' -n 40 --ignore-eos --json";
  for (const char* sampling : {" --temp 0", " --temp 0.8 --seed 3"}) {
    const Result plain = hart(base + sampling);
    ASSERT_EQ(plain.status, 0);
    const Result r = hart(base + sampling + " --spec-type draft-mtp --spec-draft-n-max 3");
    ASSERT_EQ(r.status, 0);
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["generated_tokens"], nlohmann::json::parse(plain.out)["generated_tokens"]) << sampling;
    EXPECT_GT(j["timings"]["draft_n_accepted"], 0) << sampling;
  }
  const Result bench = hart("bench -m " + m + " -p 0 -n 24 -t 1 -r 1 --spec-type draft-mtp --spec-prompt 'Once upon'");
  ASSERT_EQ(bench.status, 0);
  EXPECT_NE(bench.out.find("the same tokens as plain"), std::string::npos) << bench.out;
  const Result chat = run_command("printf 'Once upon a time\\n' | " + std::string(HART_BINARY) + " chat -m " + m +
                                  " --chat-template chatml -n 12 --spec-type draft-mtp 2>&1");
  EXPECT_EQ(chat.status, 0) << chat.out;
  EXPECT_NE(chat.out.find("hart: draft acceptance"), std::string::npos) << chat.out;
  HART_REQUIRE_TESTDATA(plain_model, "models/stories260K.gguf");
  const Result serve = run_command("timeout 30 " + std::string(HART_BINARY) + " serve -m " + plain_model +
                                   " --spec-type draft-mtp --port " + std::to_string(20000 + getpid() % 20000) +
                                   " 2>&1 >/dev/null");
  EXPECT_EQ(serve.status, 1) << serve.out;
  EXPECT_NE(serve.out.find("needs a model with multi-token-prediction layers"), std::string::npos) << serve.out;
}

TEST(Cli, ServeEndsWithTheErrorWhenTheModelFailsToLoad) {
  for (int i = 0; i < 3; i++) {  // the failure races the HTTP thread's start
    const Result r = run_command("timeout 30 " + std::string(HART_BINARY) + " serve -m /nonexistent.gguf --port " +
                                 std::to_string(20000 + getpid() % 20000) + " 2>&1 >/dev/null");
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("hart: error: /nonexistent.gguf: cannot open"), std::string::npos) << r.out;
  }
}

// llama.cpp's single-dash `-dev LIST` spelling is --device LIST (CLI11 alone rejects it).
TEST(Cli, DevFlagInLlamaCppSpelling) {
  EXPECT_EQ(hart("run -dev cpu --list-devices").status, 0);
  EXPECT_EQ(hart("run -dev=et,cpu --list-devices").status, 0);
  EXPECT_NE(hart("run -n 1 -dev no-such-device").status, 0);
}

// Sanitizer builds (scripts/sanitize) hold freed memory in quarantine and shadow every byte:
// their resident sizes say nothing about hart's.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// The JSON says what was measured (build, CPU, kernels, the file's digest), reports the cold
// first run apart, and the peak RSS is the model run's, not the bandwidth test's 512 MiB buffer.
TEST(Cli, BenchRecordsWhatItMeasured) {
  HART_REQUIRE_TESTDATA(model, "models/stories260K.gguf");
  Result r = hart("bench -m " + model + " -p 8 -n 4 -t 1 -r 2 --json");
  ASSERT_EQ(r.status, 0);
  const nlohmann::json rows = nlohmann::json::parse(r.out);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    // sha256sum of the test file.
    EXPECT_EQ(row["model_sha256"], "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d");
    for (const char* key : {"build_revision", "compiler", "cpu", "kernels"})
      EXPECT_FALSE(row[key].get<std::string>().empty()) << key;
    EXPECT_GT(row["cold_tokens_per_s"].get<double>(), 0);
    EXPECT_EQ(row["warmup"], 1);
    ASSERT_TRUE(row["peak_rss_mib"].is_number());
    if (!kSanitized) {
      EXPECT_LT(row["peak_rss_mib"].get<int>(), 256);
    }
  }
}


// hart bench with hart run's speculative flags: one more row, tg with speculation, whose JSON
// carries the plain rate of the same generation beside it, the drafts and their acceptance, and
// whether both generated the same tokens; synthetic acceptance says its output is not the model's.
TEST(Cli, BenchSpeculativeTestReportsBothRatesAndAcceptance) {
  HART_REQUIRE_TESTDATA(target, "models/TinyStories-656K-Q8_0.gguf");
  HART_REQUIRE_TESTDATA(draft, "models/TinyStories-656K-requant-Q4_0.gguf");
  const std::string base = "bench -m " + target + " -p 0 -n 24 -t 1 -r 1 --warmup 0 --bandwidth 10 --json";
  Result r = hart(base + " --spec-type draft-simple -md " + draft + " --spec-draft-n-max 4 --spec-prompt 'Once upon a time'");
  ASSERT_EQ(r.status, 0);
  nlohmann::json rows = nlohmann::json::parse(r.out);
  ASSERT_EQ(rows.size(), 2u);
  const nlohmann::json& s = rows[1];
  EXPECT_EQ(s["test"], "tg24 draft-simple");
  EXPECT_GT(s["plain_tokens_per_s"].get<double>(), 0);
  EXPECT_GT(s["tokens_per_s"].get<double>(), 0);
  EXPECT_GT(s["draft_n"].get<int>(), 0);
  EXPECT_GT(s["draft_n_accepted"].get<int>(), 0);  // a trained model and its own quantization agree
  EXPECT_LE(s["draft_n_accepted"].get<int>(), s["draft_n"].get<int>());
  EXPECT_EQ(s["n_generated"], 24);
  EXPECT_EQ(s["same_tokens"], true);
  EXPECT_EQ(s["synthetic_acceptance"], false);

  // --spec-synth-len: every draft of 4 accepted whatever the model says (length 5 = 4 + 1).
  r = hart(base + " --spec-type draft-simple -md " + draft + " --spec-draft-n-max 4 --spec-synth-len 5");
  ASSERT_EQ(r.status, 0);
  rows = nlohmann::json::parse(r.out);
  EXPECT_EQ(rows[1]["synthetic_acceptance"], true);
  EXPECT_EQ(rows[1]["draft_n_accepted"], rows[1]["draft_n"]);
  // --spec-synth-len 1: none accepted, not even where the model agrees with its own quantization.
  r = hart(base + " --spec-type draft-simple -md " + draft + " --spec-draft-n-max 4 --spec-synth-len 1");
  ASSERT_EQ(r.status, 0);
  rows = nlohmann::json::parse(r.out);
  EXPECT_GT(rows[1]["draft_n"].get<int>(), 0);
  EXPECT_EQ(rows[1]["draft_n_accepted"], 0);

  EXPECT_NE(hart_stderr("bench -m " + target + " -p 8 -n 0 --spec-type ngram-simple").out.find("needs a tg test"),
            std::string::npos);
  EXPECT_NE(hart_stderr(base + " --spec-type ngram-simple --spec-synth-len 100").out.find("--spec-synth-len must be within"),
            std::string::npos);
}
// -d (llama-bench's --n-depth): every test again after that many context tokens, named as
// llama-bench names it; the weights-only roofline is not a bound there, so it is left out. A
// depth the context cannot hold is refused before anything runs.
TEST(Cli, BenchRunsEachTestAtEachDepth) {
  HART_REQUIRE_TESTDATA(model, "models/stories260K.gguf");
  Result r = hart("bench -m " + model + " -p 8 -n 4 -t 1 -r 1 -d 0,24 --bandwidth 10 --json");
  ASSERT_EQ(r.status, 0);
  const nlohmann::json rows = nlohmann::json::parse(r.out);
  ASSERT_EQ(rows.size(), 4u);
  const char* names[] = {"pp8", "tg4", "pp8 @ d24", "tg4 @ d24"};
  for (size_t i = 0; i < 4; i++) {
    EXPECT_EQ(rows[i]["test"], names[i]);
    EXPECT_EQ(rows[i]["n_depth"], i < 2 ? 0 : 24);
    EXPECT_GT(rows[i]["tokens_per_s"].get<double>(), 0);
  }
  EXPECT_TRUE(rows[1]["roofline_fraction"].is_number());
  EXPECT_TRUE(rows[3]["roofline_fraction"].is_null());

  Result too_deep = hart_stderr("bench -m " + model + " -p 8 -n 4 -t 1 -r 1 -c 64 -d 60 --bandwidth 10");
  EXPECT_NE(too_deep.status, 0);
  EXPECT_NE(too_deep.out.find("does not fit the context of 64 tokens"), std::string::npos) << too_deep.out;
}

// Repacked weights give the memory of their stored rows back to the file: a model is resident
// about once (a 137 MiB SmolLM2-135M Q8_0 peaked at 2.1x its size before, 1.4x now).
TEST(Cli, WeightsAreResidentOnce) {
  if (kSanitized) GTEST_SKIP() << "resident memory of a sanitizer build";
  const std::string file = temp_path("resident_once.gguf");
  ASSERT_EQ(hart("bench -m synthetic:smollm2-135m:q8_0 --save-synthetic " + file).status, 0);
  const double file_mib = double(std::filesystem::file_size(file)) / (1 << 20);
  Result r = hart("bench -m " + file + " -p 8 -n 2 -t 1 -r 1 --json");
  ASSERT_EQ(r.status, 0);
  const nlohmann::json rows = nlohmann::json::parse(r.out);
  EXPECT_GT(rows[0]["repacked_bytes"].get<double>(), 0.9 * file_mib * (1 << 20));
  EXPECT_LT(rows[0]["peak_rss_mib"].get<double>(), 1.6 * file_mib);
  std::filesystem::remove(file);
}

// A draft model on the target's device (--spec-draft-device defaults to --device): the two models
// share the process's one ET device (a second open failed on its lock: "device et0 is in use by
// process <itself>"), the verification batches run there, and the text is the plain run's.
TEST(Cli, SpeculativeDraftSharesTheEtDevice) {
  HART_REQUIRE_TESTDATA(target, "models/TinyStories-656K-Q8_0.gguf");
  HART_REQUIRE_TESTDATA(draft, "models/TinyStories-656K-requant-Q4_0.gguf");
  const std::string lock_dir = temp_path("spec_device_lock");  // a device of its own
  std::filesystem::create_directories(lock_dir);
  const std::string env = "XDG_RUNTIME_DIR=" + lock_dir;
  const std::string base = "run --device et -m " + target + " -p 'Once upon a time' -n 12 --temp 0 --json";
  const Result plain = hart(base, env);
  ASSERT_EQ(plain.status, 0);
  const Result r = hart(base + " --spec-type draft-simple -md " + draft + " --spec-draft-n-max 3", env);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["generated_tokens"], nlohmann::json::parse(plain.out)["generated_tokens"]);
  EXPECT_GT(j["timings"]["draft_n"].get<int>(), 0);
  std::filesystem::remove_all(lock_dir);
}

// Weights uploaded to the ET device give their host pages back to the file too: a 137 MiB
// SmolLM2-135M Q8_0 on the device peaked at 2.9x its size with the host copy kept, 1.9x without
// (the device's copy, the KV cache on both sides).
TEST(Cli, DeviceWeightsAreResidentOnce) {
  if (kSanitized) GTEST_SKIP() << "resident memory of a sanitizer build";
  const std::string file = temp_path("device_resident_once.gguf");
  const std::string lock_dir = temp_path("device_lock");  // a device of its own, whatever else runs
  std::filesystem::create_directories(lock_dir);
  ASSERT_EQ(hart("bench -m synthetic:smollm2-135m:q8_0 --save-synthetic " + file).status, 0);
  const double file_mib = double(std::filesystem::file_size(file)) / (1 << 20);
  Result r = hart("bench --device et -c 512 -m " + file + " -p 8 -n 2 -t 1 -r 1 --json", "XDG_RUNTIME_DIR=" + lock_dir);
  ASSERT_EQ(r.status, 0);
  const nlohmann::json rows = nlohmann::json::parse(r.out);
  EXPECT_LT(rows[0]["peak_rss_mib"].get<double>(), 2.3 * file_mib);
  std::filesystem::remove(file);
  std::filesystem::remove_all(lock_dir);
}

// hart --version (-V): the version, the build as hart bench --json records it, and the kernel set
// this CPU runs (HART_ISA's when set; one it cannot run is the usual one-line error).
TEST(Cli, VersionNamesTheBuildAndTheKernelSet) {
  const Result v = hart("--version");
  ASSERT_EQ(v.status, 0);
  EXPECT_EQ(hart("-V").out, v.out);
  EXPECT_EQ(v.out.rfind("hart " HART_VERSION " (", 0), 0u) << v.out;
  EXPECT_NE(hart("-V", "HART_ISA=ref").out.find("\nCPU kernels: ref (this CPU runs: ref"), std::string::npos);
  const Result bad = hart_stderr("-V", "HART_ISA=no-such-isa");
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.out.rfind("hart: error: HART_ISA=no-such-isa: unknown kernel set", 0), 0u) << bad.out;
  EXPECT_EQ(std::count(bad.out.begin(), bad.out.end(), '\n'), 1) << bad.out;
  EXPECT_NE(hart("--version extra").status, 0);

  HART_REQUIRE_TESTDATA(model, "models/stories260K.gguf");
  const Result b = hart("bench -m " + model + " -p 1 -n 1 -t 1 -r 1 --warmup 0 --bandwidth 10 --json");
  ASSERT_EQ(b.status, 0);
  const nlohmann::json row = nlohmann::json::parse(b.out).at(0);
  EXPECT_EQ(v.out, "hart " HART_VERSION " (" + row["build_revision"].get<std::string>() + ")\nbuilt with " +
                       row["compiler"].get<std::string>() + ", flags: " + row["build_flags"].get<std::string>() +
                       "\nCPU kernels: " + row["kernels"].get<std::string>() + v.out.substr(v.out.rfind(" (")));
}

// The README's first command on a fresh clone, without -m and without ../shared: the built-in
// stories260K tells its greedy story for "Once upon a time" (llama.cpp's tokens, where the shared
// golden is there to compare), and stderr says in one line what ran and how to run one's own file.
TEST(Cli, FirstRunTellsTheBuiltInModelsStory) {
  const std::string run = std::string("cd / && HART_TESTDATA=/nonexistent ") + HART_BINARY +
                          " run -p 'Once upon a time' -n 40 --temp 0";
  const Result out = run_command(run + " 2>/dev/null");
  ASSERT_EQ(out.status, 0);
  EXPECT_EQ(out.out, ", there was a little girl named Lily. She loved to play outside in the park. One day, she saw a "
                     "big, red ball.\n");
  const Result err = run_command(run + " 2>&1 >/dev/null");
  EXPECT_EQ(err.out.rfind("hart: running the built-in model stories260K (TinyStories, MIT, models/README.md); "
                          "to run your own GGUF file: -m FILE\n", 0), 0u) << err.out;

  HART_REQUIRE_TESTDATA(golden, "golden/stories260K__once_upon_a_time.json");
  const nlohmann::json g = read_json(golden);
  const Result j = hart("run -p 'Once upon a time' -n 32 --temp 0 --json");
  ASSERT_EQ(j.status, 0);
  const nlohmann::json r = nlohmann::json::parse(j.out);
  EXPECT_EQ(r["prompt_tokens"], g["prompt_tokens"]);
  EXPECT_EQ(r["generated_tokens"], g["llamacpp"]["generated_tokens"]);
}

// Without --context-shift, a context that fills ends the run with one line naming the limit and
// the flag; hart chat says so too and offers /reset.
TEST(Cli, FullContextSaysSoAndNamesTheFlag) {
  const Result r = hart("run -c 32 -n 100 --temp 0 --json");
  ASSERT_EQ(r.status, 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["context_full"].get<bool>());
  EXPECT_EQ(j["generated_tokens"].size(), 32u);  // BOS, then tokens until all 32 positions are taken
  const Result err = hart_stderr("run -c 32 -n 100 --temp 0");
  EXPECT_NE(err.out.find("\nhart: the context is full (32 tokens, -c): generation stopped; --context-shift forgets "
                         "half of it and goes on\n"), std::string::npos) << err.out;
  EXPECT_EQ(hart_stderr("run -c 64 -n 10 --temp 0").out.find("context is full"), std::string::npos);

  const std::string input = temp_path("long_chat.txt");
  std::ofstream(input) << "Hi\n/reset\n" << std::string(200, 'a') << "\n";
  const Result chat = hart_stderr("chat --chat-template chatml -c 64 --temp 0 -n 100 < " + input);
  std::filesystem::remove(input);
  EXPECT_EQ(chat.status, 0);
  EXPECT_NE(chat.out.find("hart: the context is full (64 tokens, -c): the reply stops here; /reset starts over\n"),
            std::string::npos) << chat.out;
  EXPECT_NE(chat.out.find("hart: the context is full (64 tokens, -c): this turn does not fit; /reset starts over\n"),
            std::string::npos) << chat.out;
}

// --context-shift (and --keep) as llama-completion: its text through two shifts of a 256-token
// context (tests/golden/context_shift/stories260K.json, from llama.cpp de3ff81).
TEST(Cli, ContextShiftGoesOnAsLlamaCpp) {
  const nlohmann::json g = read_json(HART_REPO_GOLDEN "/context_shift/stories260K.json");
  for (const nlohmann::json& c : g["cases"]) {
    const std::string keep = c["keep"].is_null() ? "" : " --keep " + std::to_string(c["keep"].get<int>());
    const Result r = hart("run -c 256 -n 400 --temp 0 --context-shift --ignore-eos -p 'Once upon a time' --json" + keep);
    ASSERT_EQ(r.status, 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["context_shifts"], g["context_shifts"]);
    EXPECT_FALSE(j["context_full"].get<bool>());
    EXPECT_EQ(j["generated_tokens"].size(), 400u);
    const std::string want = c["text"].get<std::string>(), text = j["text"].get<std::string>();
    EXPECT_EQ(text.substr(0, want.size()), want) << keep;
  }
  // A --keep that leaves nothing to forget is the one-line error.
  const Result bad = hart_stderr("run -c 8 -n 20 --temp 0 --context-shift --keep -1 -p 'Once upon a time, there'");
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.out.substr(bad.out.rfind("hart: error:")),
            "hart: error: context shift: keeping 7 tokens leaves none to forget in a context of 8\n") << bad.out;
}

// Without -m, chat, info and tokenize use the built-in model too; bench keeps a synthetic model
// of a real one's shapes (a benchmark of a 1 MB model measures little).
TEST(Cli, CommandsWithoutAModelUseTheBuiltInOne) {
  const Result info = hart("info --json --no-tensors");
  ASSERT_EQ(info.status, 0);
  const nlohmann::json j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["path"], "stories260K (built-in)");
  EXPECT_EQ(j["file_size"], 1185376);
  const Result tok = hart("tokenize --ids 'Once upon a time'");
  ASSERT_EQ(tok.status, 0);
  EXPECT_EQ(tok.out, "1 403 407 261 378\n");
  const Result chat = hart("chat --chat-template chatml --temp 0 -n 4 < /dev/null");
  EXPECT_EQ(chat.status, 0);
  EXPECT_NE(hart("bench --help").out.find("synthetic:smollm2-135m:q8_0"), std::string::npos);
}

}  // namespace

namespace {

// A copy of `model` that carries `tmpl` as its tokenizer.chat_template.
std::string with_chat_template(const std::string& model, const std::string& tmpl, const std::string& name) {
  const auto in = hart::gguf::File::open(model);
  hart::gguf::Writer w;
  for (const auto& kv : in->metadata())
    if (kv.key != "general.alignment") w.set(kv.key, kv.value);
  w.set("tokenizer.chat_template", tmpl);
  for (const auto& t : in->tensors()) w.add_tensor(t.name, t.type, std::span<const int64_t>(t.ne, t.n_dims), t.data, t.nbytes);
  const std::string out = temp_path(name);
  w.write(out);
  return out;
}

// The first case of cases.json for this template and conversation.
nlohmann::ordered_json find_case(const nlohmann::ordered_json& cases, const std::string& file, const std::string& name) {
  for (const auto& c : cases)
    if (c["template_file"] == file && c["case"] == name) return c;
  ADD_FAILURE() << "no case " << file << " / " << name;
  return {};
}

TEST(Cli, TemplateRendersAsLlamaServer) {
  HART_REQUIRE_TESTDATA(dir, "chat_templates");
  // In file order: a template prints the tools' schemas key by key.
  std::ifstream in(dir + "/cases.json");
  const auto cases = nlohmann::ordered_json::parse(in);
  const std::string tmpl = dir + "/templates/Qwen-Qwen3-0.6B.jinja";
  const std::string case_file = temp_path("case.json");
  std::ofstream(case_file) << find_case(cases, "Qwen-Qwen3-0.6B.jinja", "d_tool_call").dump();
  Result r = hart("template --template " + tmpl + " --case " + case_file);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, find_case(cases, "Qwen-Qwen3-0.6B.jinja", "d_tool_call")["expected"].get<std::string>());

  // The template's raise_exception is the error, word for word.
  std::ofstream(case_file) << find_case(cases, "mistralai-Mistral-Nemo-Instruct-2407.jinja", "d_tool_call").dump();
  Result e = hart_stderr("template --template " + dir + "/templates/mistralai-Mistral-Nemo-Instruct-2407.jinja --case " + case_file);
  EXPECT_NE(e.status, 0);
  EXPECT_EQ(e.out, "hart: error: Tool call IDs should be alphanumeric strings with length 9!\n");
  std::filesystem::remove(case_file);
}

// The GGUF's own template is what hart template -m, hart chat and hart serve use.
TEST(Cli, ModelsJinjaTemplateIsTheDefault) {
  HART_REQUIRE_TESTDATA(model, "models/stories260K.gguf");
  const std::string with = with_chat_template(
      model, "{{ bos_token }}{% for m in messages %}[{{ m.role | upper }}] {{ m.content }}\n{% endfor %}"
             "{% if add_generation_prompt %}[ASSISTANT]{% endif %}", "templated.gguf");
  const std::string case_file = temp_path("hello.json");
  std::ofstream(case_file) << R"({"messages": [{"role": "user", "content": "Hello"}]})";
  Result r = hart("template -m " + with + " --case " + case_file);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "<s>[USER] Hello\n[ASSISTANT]");  // bos_token: the vocabulary's BOS text

  const std::string input = temp_path("chat_in.txt");
  std::ofstream(input) << "Hi\n";
  Result chat = hart_stderr("chat -m " + with + " --temp 0 -n 4 < " + input);
  EXPECT_EQ(chat.status, 0);
  EXPECT_NE(chat.out.find("hart: chat template jinja"), std::string::npos) << chat.out;
  // A built-in family still overrides the file's template.
  Result builtin = hart_stderr("chat -m " + with + " --chat-template chatml --temp 0 -n 4 < " + input);
  EXPECT_NE(builtin.out.find("hart: chat template chatml"), std::string::npos) << builtin.out;
  for (const auto& f : {with, case_file, input}) std::filesystem::remove(f);
}

}  // namespace
