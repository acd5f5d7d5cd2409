// hart quantize IN OUT TYPE [-t N] [--imatrix FILE]: convert a GGUF model to another tensor type with llama.cpp's
// llama-quantize rules (src/quant/quantize_model.h), with a per-tensor progress bar on stderr.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "command.h"
#include "parse_args.h"
#include "progress_bar.h"
#include "common/error.h"
#include "quant/quantize_model.h"

namespace hart::cli {
namespace {

std::string target_names() {
  std::string s;
  for (const auto& t : quantize_targets()) s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
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
  std::string in, out, type, imatrix_path;
  int threads = 0;
  CLI::App app{"Quantize or convert a GGUF model. Matrices get TYPE (mixes and row lengths that do "
               "not fit follow llama.cpp's rules); norms and other 1-D tensors are copied.\n"
               "TYPE: " + target_names() + "\n(Q4_K and Q5_K put every matrix in that type; "
               "Q2_K, Q2_K_S, Q3_K_S/M/L, Q4_K_M, Q5_K_M, Q6_K, IQ4_XS, IQ4_NL, IQ1_S/M, IQ2_XXS/XS/S/M, "
               "IQ3_XXS/XS/S/M, TQ1_0, TQ2_0 and MXFP4_MOE are llama.cpp's mixes; the IQ1-IQ3 ones need "
               "--imatrix.)",
               "hart quantize"};
  app.add_option("input", in, "source GGUF file (any type hart can dequantize)")->required();
  app.add_option("output", out, "GGUF file to write")->required();
  app.add_option("type", type, "target type")->required();
  app.add_option("-t,--threads", threads, "worker threads (default: one per CPU)");
  app.add_option("--imatrix", imatrix_path,
                 "importance matrix (llama-imatrix's GGUF or legacy .dat) weighting the quantization, as "
                 "llama-quantize --imatrix; required by the IQ1-IQ3 types");
  if (!parse_args(app, argc, argv)) return 0;

  const QuantizeTarget* target = find_quantize_target(type);
  if (!target) throw Error("unknown type '" + type + "'; valid types: " + target_names());
  if (!std::filesystem::exists(in)) throw Error(in + ": no such file");
  std::error_code ec;
  if (std::filesystem::equivalent(in, out, ec))
    throw Error("output " + out + " is the input file; choose another name");

  std::optional<ImportanceMatrix> imatrix;
  if (!imatrix_path.empty()) imatrix = ImportanceMatrix::load(imatrix_path);

  ProgressBar progress(out);
  const QuantizeSummary s =
      quantize_model(in, out, *target, threads, std::ref(progress), imatrix ? &*imatrix : nullptr);
  std::fprintf(stderr,
               "%s: %zu tensors, %zu converted for %s (%zu to a fallback type)\n"
               "tensor data %.2f MiB -> %.2f MiB, file %.2f MiB -> %.2f MiB\n",
               out.c_str(), s.n_tensors, s.n_converted, std::string(target->name).c_str(),
               s.n_fallback, mib(s.tensor_bytes_in), mib(s.tensor_bytes_out),
               mib(s.file_bytes_in), mib(s.file_bytes_out));
  return 0;
}

}  // namespace

HART_COMMAND(quantize, "quantize or convert a GGUF model (Q8_0, Q4_K_M, ...)", cmd_quantize);

}  // namespace hart::cli
