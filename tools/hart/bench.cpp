// hart bench: prompt-processing (pp) and token-generation (tg) speed, the llama-bench of hart.
// Each test runs -r times after a warm-up; we report the median and the spread (min..max), the
// first run alone as "cold" (the first use of a shape: its plan, and the weights' repacking on
// the first graph), the peak RSS of the model run, and tg as a fraction of the memory-bandwidth
// roofline (weight bytes read per token over the read bandwidth this tool measures, or
// --bandwidth). "size" is all weights, as in llama-bench; a token reads less of a mixture of
// experts (its chosen experts only). --json records what was measured: the build (revision,
// compiler, flags), the CPU, kernel set, threads and pinning, and the model file's sha256.
// -d (llama-bench's --n-depth) runs each test after that many context tokens (prefilled, not
// timed), as "tg32 @ d1024": what attention over a long context costs. The roofline counts
// weights only, so it is reported for depth 0 alone.
// With --spec-type (and the other speculative flags of hart run), a last test per thread count
// generates -n tokens greedily from --spec-prompt, plain and speculative by turns (bench_spec.h),
// and reports both rates, the speed-up and the drafts' acceptance side by side; at depth 0,
// reading the lookup caches but writing none.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/repack.h"
#include "bench_spec.h"
#include "build_info.h"
#include "command.h"
#include "parse_args.h"
#include "common/error.h"
#include "common/sha256.h"
#include "model/synthetic.h"
#include "model_options.h"
#include "spec_options.h"

namespace hart::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Stats {
  double median = 0, min = 0, max = 0;
};

Stats stats_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v.front(), v.back()};
}

// Read bandwidth in GB/s: `threads` threads sum disjoint slices of a 512 MiB buffer
// (larger than any cache); the median of 5 passes.
double measure_read_bandwidth(int threads) {
  const size_t n = (512u << 20) / sizeof(uint64_t);
  std::vector<uint64_t> buf(n);
  for (size_t i = 0; i < n; i++) buf[i] = i;
  std::vector<double> gbs;
  std::vector<uint64_t> sums(static_cast<size_t>(threads));
  for (int pass = 0; pass < 6; pass++) {
    const auto t0 = Clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++)
      pool.emplace_back([&, t] {
        const size_t b = n * t / threads, e = n * (t + 1) / threads;
        uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (size_t i = b; i + 4 <= e; i += 4) s0 += buf[i], s1 += buf[i + 1], s2 += buf[i + 2], s3 += buf[i + 3];
        sums[t] = s0 + s1 + s2 + s3;
      });
    for (auto& th : pool) th.join();
    if (pass > 0) gbs.push_back(double(n * sizeof(uint64_t)) / seconds_since(t0) / 1e9);
  }
  static volatile uint64_t sink;  // keeps the sums (and so the reads) alive
  for (uint64_t v : sums) sink = sink + v;
  return stats_of(gbs).median;
}

// The process's peak resident set (VmHWM) in MiB.
long peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6)) / 1024;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024;
}

// Lowers the peak to the current resident set (Linux's clear_refs "5"), so that the peak measured
// afterwards is the model run's and not the bandwidth test's buffer; false where it cannot.
bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return bool(f);
}

// The CPU's model name as /proc/cpuinfo gives it (x86 "model name", RISC-V "uarch" or "isa").
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::map<std::string, std::string> first;
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    const size_t v = line.find_first_not_of(' ', colon + 1);
    first.emplace(key, v == std::string::npos ? "" : line.substr(v));
  }
  for (const char* key : {"model name", "uarch", "isa"})
    if (auto it = first.find(key); it != first.end() && !it->second.empty()) return it->second;
  return "unknown";
}

std::vector<int32_t> random_tokens(int n, int n_vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(0, n_vocab - 1);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (auto& x : t) x = dist(rng);
  return t;
}

int cmd_bench(int argc, char** argv) {
  CLI::App app{"Measure prompt processing (pp) and generation (tg) speed", "hart bench"};
  ModelOptions mo;
  int n_prompt = 512, n_gen = 128, reps = 5, warmup = 1;
  std::vector<int> threads_list, depths{0};
  double bandwidth = 0;
  bool json = false;
  std::string save_synthetic, spec_prompt;
  SpecOptions spo;
  mo.model = kBenchDefaultModel;
  mo.add_to(app);
  spo.add_to(app);
  app.add_option("--spec-prompt", spec_prompt,
                 "the speculative test's prompt (special tokens parsed; default: BOS alone)");
  app.remove_option(app.get_option("--threads"));
  app.add_option("-p,--n-prompt", n_prompt, "prompt tokens of the pp test (0: skip)")->capture_default_str();
  app.add_option("-n,--n-gen", n_gen, "generated tokens of the tg test (0: skip)")->capture_default_str();
  app.add_option("-t,--threads", threads_list, "thread counts to test, e.g. -t 1,2 (default: all cores)")
      ->delimiter(',');
  app.add_option("-d,--n-depth", depths, "context tokens before each test, e.g. -d 0,1024 (prefilled, not timed)")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("-r,--repetitions", reps, "measured repetitions of each test")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "unmeasured runs before each test (the first run is reported alone, as cold)")->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--bandwidth", bandwidth, "memory read bandwidth in GB/s for the roofline (default: measured)");
  app.add_flag("--json", json, "print the results as JSON");
  app.add_option("--save-synthetic", save_synthetic,
                 "write the synthetic model given with -m to this GGUF file and exit");
  if (!parse_args(app, argc, argv, kSpecShortAliases)) return 0;
  if (print_devices_if_asked(mo)) return 0;
  const bool speculative = spo.enabled(mo.session_params().n_batch);
  if (speculative && n_gen <= 0) throw Error("--spec-type needs a tg test to speed up (-n above 0)");

  if (!save_synthetic.empty()) {
    if (mo.model.rfind("synthetic:", 0) != 0) throw Error("--save-synthetic needs -m synthetic:NAME:TYPE");
    write_synthetic_model(mo.model.substr(10), save_synthetic);
    std::fprintf(stderr, "hart: wrote %s\n", save_synthetic.c_str());
    return 0;
  }
  if (threads_list.empty()) threads_list.push_back(int(std::max(1u, std::thread::hardware_concurrency())));
  const int max_depth = *std::max_element(depths.begin(), depths.end());
  if (mo.ctx_size == 0) mo.ctx_size = max_depth + std::max(n_prompt, n_gen) + 1;
  if (max_depth + std::max(n_prompt, n_gen) >= mo.ctx_size)
    throw Error("-d " + std::to_string(max_depth) + " plus the longest test does not fit the context of " +
                std::to_string(mo.ctx_size) + " tokens (-c)");

  // The bandwidth test's 512 MiB buffer is gone before the model loads, and the peak reset.
  std::map<int, double> bw;
  for (int threads : threads_list) bw[threads] = bandwidth > 0 ? bandwidth : measure_read_bandwidth(threads);
  const bool rss_of_model = reset_peak_rss();
  const bool synthetic = mo.model.rfind("synthetic:", 0) == 0;
  if (json && !synthetic) std::fprintf(stderr, "hart: sha256 of %s\n", mo.model.c_str());
  const nlohmann::json sha256 = synthetic || !json ? nlohmann::json() : nlohmann::json(sha256_of_file(mo.model));
  const BuildInfo& build = build_info();
  const std::string cpu_name = cpu_model();

  LoadedModel lm = load_model(mo);
  const Model& m = *lm.model;
  const DecodeReads reads = decode_reads(m);
  std::vector<int32_t> spec_tokens;
  if (speculative) {
    const bool have_prompt = app.count("--spec-prompt") > 0;
    if (!have_prompt && lm.tokenizer->bos() < 0) throw Error("the model has no BOS token: give a --spec-prompt");
    spec_tokens = have_prompt ? lm.tokenizer->encode(spec_prompt, true, true) : std::vector<int32_t>{lm.tokenizer->bos()};
    if (spec_tokens.empty()) throw Error("--spec-prompt is empty after tokenization");
    // The prompt, the tokens generated and a draft past the last one.
    const int need = int(spec_tokens.size()) + n_gen + spo.p.max_draft() + 1;
    if (!app.count("--ctx-size")) mo.ctx_size = std::max(mo.ctx_size, need);
    else if (need > mo.ctx_size)
      throw Error("the speculative test's prompt, -n tokens and a draft do not fit the context of " +
                  std::to_string(mo.ctx_size) + " tokens (-c)");
  }
  const size_t wbytes = reads.total;
  nlohmann::json results = nlohmann::json::array();
  if (!json) {
    std::printf("hart %s (%s), %s, kernels %s%s%s\n", build.revision, build.compiler, cpu_name.c_str(),
                cpu::kernels().name.c_str(), mo.cpu_mask.empty() ? "" : ", threads pinned to ", mo.cpu_mask.c_str());
    std::printf("| %-28s | %9s | %7s | %13s | %16s | %8s | %8s |\n", "model", "size MiB", "threads", "test",
                "t/s (min..max)", "cold t/s", "roofline");
  }
  const auto peak = [&]() -> nlohmann::json { return rss_of_model ? nlohmann::json(peak_rss_mib()) : nlohmann::json(); };

  for (int threads : threads_list) {
    SessionParams sp = mo.session_params();
    sp.speculative = speculative;
    sp.keep_hidden = spo.p.uses_mtp();
    Session session(m, sp, mo.backends(threads));
    const double roofline_tps = bw[threads] * 1e9 / double(wbytes);

    // One result: a JSON object (returned, to add to) and a row of the table.
    auto record = [&](const std::string& test, int depth, const Stats& s, double cold, double frac) -> nlohmann::json& {
      results.push_back({{"model", mo.model}, {"model_sha256", sha256}, {"test", test}, {"n_depth", depth}, {"threads", threads},
                         {"cpu_mask", mo.cpu_mask}, {"tokens_per_s", s.median}, {"min", s.min}, {"max", s.max},
                         {"cold_tokens_per_s", cold}, {"repetitions", reps}, {"warmup", warmup},
                         {"weight_bytes", m.weight_bytes}, {"bytes_per_token", wbytes},
                         {"expert_bytes_per_token", reads.experts}, {"expert_bytes", reads.experts_stored},
                         {"bandwidth_gbs", bw[threads]}, {"roofline_tokens_per_s", roofline_tps},
                         {"roofline_fraction", frac > 0 ? nlohmann::json(frac) : nlohmann::json()}, {"peak_rss_mib", peak()},
                         {"repacked_bytes", cpu::repacked_bytes()}, {"kernels", cpu::kernels().name},
                         {"cpu", cpu_name}, {"build_revision", build.revision}, {"compiler", build.compiler},
                         {"build_flags", build.flags}});
      if (!json) {
        char tpsbuf[64], coldbuf[32], roof[32] = "";
        std::snprintf(tpsbuf, sizeof tpsbuf, "%.2f (%.1f..%.1f)", s.median, s.min, s.max);
        std::snprintf(coldbuf, sizeof coldbuf, "%.2f", cold);
        if (frac > 0) std::snprintf(roof, sizeof roof, "%.0f%%", frac * 100);
        std::printf("| %-28s | %9.1f | %7d | %13s | %16s | %8s | %8s |\n",
                    mo.model.substr(mo.model.find_last_of('/') + 1).c_str(), double(m.weight_bytes) / (1 << 20),
                    threads, test.c_str(), tpsbuf, coldbuf, roof);
        std::fflush(stdout);
      }
      return results.back();
    };
    auto run_test = [&](const char* kind, int n, int depth) {
      std::vector<double> tps;
      double cold = 0;
      for (int r = 0; r < warmup + reps; r++) {
        session.truncate(0);
        if (depth > 0) session.decode(random_tokens(depth, m.hp.n_vocab, uint32_t(1000 + r)));
        const std::vector<int32_t> toks = random_tokens(n, m.hp.n_vocab, uint32_t(r));
        const auto t0 = Clock::now();
        if (kind[0] == 'p') {
          session.decode(toks);
        } else {
          for (int i = 0; i < n; i++) session.decode(std::span<const int32_t>(&toks[size_t(i)], 1));
        }
        const double rate = n / seconds_since(t0);
        if (r == 0) cold = rate;  // reported alone; with --warmup 0 also the first measured run
        if (r >= warmup) tps.push_back(rate);
      }
      const Stats s = stats_of(tps);
      const std::string test =
          std::string(kind) + std::to_string(n) + (depth > 0 ? " @ d" + std::to_string(depth) : std::string());
      const double frac = kind[0] == 't' && depth == 0 ? s.median / roofline_tps : 0;
      record(test, depth, s, cold, frac);
    };
    for (int depth : depths) {
      if (n_prompt > 0) run_test("pp", n_prompt, depth);
      if (n_gen > 0) run_test("tg", n_gen, depth);
    }
    if (speculative) {
      SamplerParams greedy;
      greedy.temperature = 0.0f;
      const Speculation sn = make_speculation(spo, mo, lm, &greedy, threads);
      const SpecBenchRuns runs = bench_speculative(session, *sn.speculator, spec_tokens, n_gen, warmup, reps);
      const Stats plain = stats_of(runs.plain_tps), sped = stats_of(runs.spec_tps);
      const bool synth = !sn.speculator->synth_probs().empty();
      // The roofline is that of one token a weight read: speculation is how a run passes it.
      const std::string test = "tg" + std::to_string(n_gen) + " " + spo.types;
      nlohmann::json& j = record(test, 0, sped, runs.spec_cold, sped.median / roofline_tps);
      j.update({{"spec_type", spo.types}, {"spec_prompt_tokens", spec_tokens.size()}, {"n_generated", runs.n_generated},
                {"plain_tokens_per_s", plain.median}, {"plain_min", plain.min}, {"plain_max", plain.max},
                {"plain_cold_tokens_per_s", runs.plain_cold}, {"speedup", sped.median / plain.median},
                {"draft_n", runs.stats.n_drafted}, {"draft_n_accepted", runs.stats.n_accepted},
                {"acceptance", runs.stats.acceptance()}, {"verification_steps", runs.stats.n_verified},
                {"synthetic_acceptance", synth}, {"same_tokens", runs.same_tokens}});
      if (!json)
        std::printf("  (%s: plain %.2f t/s (%.1f..%.1f) -> %.2f t/s, %.2fx; %lld of %lld drafted tokens accepted (%.2f) "
                    "in %lld verification steps; %s)\n",
                    test.c_str(), plain.median, plain.min, plain.max, sped.median, sped.median / plain.median,
                    (long long)runs.stats.n_accepted, (long long)runs.stats.n_drafted, runs.stats.acceptance(),
                    (long long)runs.stats.n_verified,
                    synth ? "synthetic acceptance: the output is not the model's"
                          : runs.same_tokens ? "the same tokens as plain" : "NOT the same tokens as plain (a bug)");
    }
    // Repacked weights are copies the CPU backend made in its own layout (in the peak RSS too).
    if (!json)
      std::printf("  (threads %d: read bandwidth %.1f GB/s, tg roofline %.1f t/s at %s, peak RSS %s, "
                  "repacked weights %.1f MiB)\n",
                  threads, bw[threads], roofline_tps, describe_decode_reads(m).c_str(),
                  rss_of_model ? (std::to_string(peak_rss_mib()) + " MiB").c_str() : "unknown",
                  double(cpu::repacked_bytes()) / (1 << 20));
  }
  if (json) std::printf("%s\n", results.dump(2).c_str());
  return 0;
}

}  // namespace

HART_COMMAND(bench, "measure prompt and generation speed (pp / tg tokens per second)", cmd_bench);

}  // namespace hart::cli
