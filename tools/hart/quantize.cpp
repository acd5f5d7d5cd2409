// hart quantize [options] IN [OUT] TYPE [NTHREADS]: convert a GGUF model to another tensor type with llama.cpp's
// llama-quantize rules, names and positional syntax (src/quant/quantize_model.h), with a per-tensor progress bar
// on stderr.

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "parse_args.h"
#include "progress_bar.h"
#include "common/error.h"
#include "quant/quantize_model.h"

namespace hart::cli {
namespace {

// "Q1_0 (40), ..., Q4_K (15, = Q4_K_M), ..., COPY": the names and LLAMA_FTYPE numbers --help lists.
std::string target_names() {
  std::string s;
  for (const auto& t : quantize_targets()) {
    s += (s.empty() ? "" : ", ") + std::string(t.name);
    if (t.copy) continue;
    s += " (" + std::to_string(t.file_type);
    if (!t.alias_of.empty()) s += ", = " + std::string(t.alias_of);
    s += ")";
  }
  return s;
}

// A --output-tensor-type / --token-embedding-type value: a ggml type name, as llama-quantize's
// parse_ggml_type takes it (case-insensitive); whether hart can write it is the plan's check.
std::optional<Type> tensor_type_option(const std::string& flag, const std::string& value) {
  if (value.empty()) return std::nullopt;
  const std::optional<Type> t = type_from_name(value);
  if (!t) throw Error("unknown " + flag + " '" + value + "' (a ggml type name: q8_0, q6_K, q4_K, f16, ...)");
  return t;
}

// llama-quantize's positional arguments: IN TYPE [NTHREADS] (the output is ggml-model-TYPE.gguf beside the
// input) or IN OUT TYPE [NTHREADS]; the second one is the type when it names one.
struct Positional {
  std::string in, out;
  const QuantizeTarget* target = nullptr;
  std::optional<int> threads;
};

Positional parse_positional(const std::vector<std::string>& args) {
  const std::string usage = "hart quantize [options] INPUT [OUTPUT] TYPE [NTHREADS]";
  if (args.size() < 2) throw Error("INPUT and TYPE are required: " + usage);
  Positional p;
  p.in = args[0];
  size_t next = 2;
  if ((p.target = find_quantize_target(args[1]))) {
    const size_t slash = p.in.find_last_of('/');
    p.out = (slash == std::string::npos ? "" : p.in.substr(0, slash + 1)) + "ggml-model-" +
            std::string(p.target->name) + ".gguf";
  } else {
    p.out = args[1];
    if (args.size() < 3)
      throw Error("missing TYPE ('" + p.out + "' is no type, so it was taken as the output file): " + usage);
    if (!(p.target = find_quantize_target(args[2])))
      throw Error("unknown type '" + args[2] + "'; valid types: " + target_names());
    next = 3;
  }
  if (next < args.size()) {
    int n = 0;
    const std::string& a = args[next];
    const auto [end, ec] = std::from_chars(a.data(), a.data() + a.size(), n);
    if (a.empty() || ec != std::errc() || end != a.data() + a.size())
      throw Error("NTHREADS '" + a + "' is not a whole number: " + usage);
    p.threads = n;
  }
  if (next + 1 < args.size()) throw Error("unexpected argument '" + args[next + 1] + "': " + usage);
  return p;
}

double mib(uint64_t bytes) { return double(bytes) / (1024.0 * 1024.0); }

// One line per tensor, redrawn in place (carriage return) while it converts when stderr is a
// terminal; only the finished lines otherwise.
class ProgressBar {
 public:
  explicit ProgressBar(std::string out) : out_(std::move(out)), tty_(stderr_is_tty()) {}

  void operator()(const QuantizeProgress& p) {
    const bool finished = p.done == p.total;
    if (!tty_ && !finished) return;
    const int percent = p.total ? int(100 * p.done / p.total) : 100;
    if (p.stage == QuantizeProgress::Stage::Write) {
      std::fprintf(stderr, "\rwriting %s %s %3d%%", out_.c_str(), progress_bar(percent).c_str(), percent);
    } else {
      std::fprintf(stderr, "\r[%4zu/%4zu] %-32.*s %6s -> %-6s %s %3d%%", p.tensor + 1, p.n_tensors,
                   int(p.name.size()), p.name.data(), std::string(type_name(p.from)).c_str(),
                   std::string(type_name(p.to)).c_str(), progress_bar(percent).c_str(), percent);
    }
    if (finished) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

 private:
  std::string out_;
  bool tty_;
};

int cmd_quantize(int argc, char** argv) {
  std::vector<std::string> args;
  std::string imatrix_path, output_type, embedding_type;
  QuantizeOptions options;
  int threads = 0;
  CLI::App app{"Quantize or convert a GGUF model as llama-quantize does, with its names and arguments: "
               "INPUT [OUTPUT] TYPE [NTHREADS] (without OUTPUT: ggml-model-TYPE.gguf beside the input). "
               "Matrices get TYPE's type with llama.cpp's per-tensor mix (more bits for sensitive tensors; rows "
               "that do not fit a block fall back); norms and other 1-D tensors are copied.\n"
               "TYPE (case-insensitive, or its number): " + target_names() + ".\n"
               "COPY copies every tensor as it is; the IQ1-IQ3 types and Q2_K_S need --imatrix.",
               "hart quantize"};
  app.add_option("args", args, "INPUT [OUTPUT] TYPE [NTHREADS]");
  app.add_option("-t,--threads", threads, "worker threads (default: one per CPU); the same as NTHREADS");
  app.add_option("--imatrix", imatrix_path,
                 "importance matrix (llama-imatrix's GGUF or legacy .dat) weighting the quantization, as "
                 "llama-quantize --imatrix; required by the IQ1-IQ3 types");
  app.add_flag("--pure", options.pure, "no mix: every matrix in TYPE's type (rows that do not fit still fall back)");
  app.add_option("--output-tensor-type", output_type, "ggml type of output.weight (q8_0, q6_K, f16, ...)");
  app.add_option("--token-embedding-type", embedding_type, "ggml type of token_embd.weight");
  app.add_flag("--leave-output-tensor", options.leave_output_tensor, "keep output.weight as it is");
  app.add_flag("--allow-requantize", options.allow_requantize,
               "convert tensors that are already quantized (quality is lower than from F32 / F16)");
  if (!parse_args(app, argc, argv)) return 0;

  const Positional pos = parse_positional(args);
  if (pos.threads) {
    if (app.count("--threads")) throw Error("threads given twice (-t and NTHREADS)");
    threads = *pos.threads;
  }
  options.output_tensor_type = tensor_type_option("--output-tensor-type", output_type);
  options.token_embedding_type = tensor_type_option("--token-embedding-type", embedding_type);
  const std::string &in = pos.in, &out = pos.out;
  const QuantizeTarget* target = pos.target;
  if (!std::filesystem::exists(in)) throw Error(in + ": no such file");
  std::error_code ec;
  if (std::filesystem::equivalent(in, out, ec))
    throw Error("output " + out + " is the input file; choose another name");

  std::optional<ImportanceMatrix> imatrix;
  if (!imatrix_path.empty()) imatrix = ImportanceMatrix::load(imatrix_path);

  ProgressBar progress(out);
  const QuantizeSummary s =
      quantize_model(in, out, *target, options, threads, std::ref(progress), imatrix ? &*imatrix : nullptr);
  std::fprintf(stderr,
               "%s: %zu tensors, %zu converted for %s (%zu to a fallback type)\n"
               "tensor data %.2f MiB -> %.2f MiB, file %.2f MiB -> %.2f MiB\n",
               out.c_str(), s.n_tensors, s.n_converted, std::string(target->name).c_str(),
               s.n_fallback, mib(s.tensor_bytes_in), mib(s.tensor_bytes_out),
               mib(s.file_bytes_in), mib(s.file_bytes_out));
  return 0;
}

}  // namespace

HART_COMMAND(quantize, "quantize or convert a GGUF model as llama-quantize does (Q8_0, Q4_K_M, ...)", cmd_quantize);

}  // namespace hart::cli
