#include "model_options.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "backend/cpu/kernels.h"
#include "backend/registry.h"
#include "common/error.h"
#include "gguf/gguf.h"
#include "model/lora.h"
#include "builtin_model.h"
#include "progress_bar.h"

namespace hart::cli {

void ModelOptions::add_to(CLI::App& app) {
  auto* m = app.add_option("-m,--model", model,
                           "GGUF file, or synthetic:NAME:TYPE for random weights with a real model's shapes");
  if (model.empty()) {
    m->default_str(std::string("the built-in ") + kBuiltinModelName);
  } else {
    m->capture_default_str();
  }
  app.add_option("-t,--threads", threads, "threads (default: all cores)")->check(CLI::Range(0, 4096));
  app.add_option("--cpu-mask", cpu_mask,
                 "pin threads to these CPUs, a hex mask (e.g. 0xF: CPUs 0-3, one cluster of a SpacemiT K1)");
  app.add_option("-c,--ctx-size", ctx_size, "context size in tokens (default: the model's, at most 4096)")
      ->check(CLI::Range(0, std::numeric_limits<int>::max()));
  app.add_option("--cache-type", cache_type, "KV cache type")
      ->check(CLI::IsMember({"f16", "f32"}))
      ->capture_default_str();
  app.add_flag("--mmap", mmap, "map the weights instead of reading them into memory");
  app.add_option("--device,--dev", devices,
                 "devices in order of preference, e.g. et or et,cpu (the CPU runs what others cannot)")
      ->delimiter(',');
  app.add_flag("--list-devices", list_devices, "list the devices and exit");
  app.add_option("--perf-log,--log-file", perf_log,
                 "with --device: write one ET_PERF line per kernel launch to FILE");
  app.add_option("--lora", lora, "LoRA adapter (llama.cpp's GGUF adapter) at scale 1; comma-separated or repeated for several")
      ->type_name("FNAME");
  app.add_option("--lora-scaled", lora_scaled, "LoRA adapter at a scale: FNAME:SCALE (comma-separated or repeated), or FNAME SCALE")
      ->type_name("FNAME:SCALE")
      ->expected(1, 2);
}

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  for (size_t at = 0;;) {
    const size_t comma = s.find(',', at);
    out.push_back(s.substr(at, comma - at));
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

std::optional<float> parse_scale(const std::string& s) {
  try {
    size_t used = 0;
    const float v = std::stof(s, &used);
    if (used == s.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

std::vector<ModelOptions::LoraFile> ModelOptions::lora_files() const {
  std::vector<LoraFile> out;
  for (const std::string& v : lora)
    for (const std::string& path : split_commas(v)) {
      if (path.empty()) throw Error("--lora: an empty file name");
      out.push_back({path, 1.0f});
    }
  for (size_t i = 0; i < lora_scaled.size(); i++) {
    const std::string& v = lora_scaled[i];
    const size_t colon = v.rfind(':');
    if ((colon == std::string::npos || !parse_scale(v.substr(colon + 1))) && i + 1 < lora_scaled.size() &&
        parse_scale(lora_scaled[i + 1])) {  // FNAME SCALE
      out.push_back({v, *parse_scale(lora_scaled[++i])});
      continue;
    }
    for (const std::string& item : split_commas(v)) {
      const size_t c = item.rfind(':');
      const std::optional<float> scale = c == std::string::npos ? std::nullopt : parse_scale(item.substr(c + 1));
      if (!scale || c == 0) throw Error("--lora-scaled '" + item + "': expected FNAME:SCALE (or FNAME SCALE)");
      out.push_back({item.substr(0, c), *scale});
    }
  }
  return out;
}

bool print_devices_if_asked(const ModelOptions& opt) {
  if (!opt.list_devices) return false;
  for (const BackendInfo* b : registered_backends()) std::printf("%-4s %s\n", b->name.c_str(), b->description.c_str());
  return true;
}

SessionParams ModelOptions::session_params() const {
  SessionParams sp;
  sp.n_ctx = ctx_size;
  sp.cache_type = cache_type == "f32" ? Type::F32 : Type::F16;
  for (const LoraFile& f : lora_files()) sp.lora.push_back(f.scale);
  return sp;
}

namespace {

// --cpu-mask's value, 0 when not given.
uint64_t parse_cpu_mask(const std::string& text) {
  if (text.empty()) return 0;
  uint64_t mask = 0;
  size_t used = 0;
  try {
    mask = std::stoull(text, &used, 16);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || mask == 0) throw Error("--cpu-mask '" + text + "' is not a non-zero hex mask (e.g. 0x3)");
  return mask;
}

// Throws the one-line error of the first option that names something this build or CPU lacks.
void check_names(const ModelOptions& opt) {
  parse_cpu_mask(opt.cpu_mask);
  for (const std::string& name : split_backend_names(opt.devices)) find_backend(name);
  cpu::kernels();  // the set HART_ISA names, when set
}

}  // namespace

BackendSet ModelOptions::backends(int n_threads) const {
  return BackendSet(split_backend_names(devices), n_threads > 0 ? n_threads : threads, perf_log,
                    parse_cpu_mask(cpu_mask));
}

void SamplingOptions::add_to(CLI::App& app) {
  app.add_option("--temp", p.temperature, "temperature (<= 0: greedy)")->capture_default_str();
  app.add_option("--top-k", p.top_k, "top-k (<= 0: off)")->capture_default_str();
  app.add_option("--top-p", p.top_p, "top-p (1: off)")->capture_default_str();
  app.add_option("--min-p", p.min_p, "min-p (0: off)")->capture_default_str();
  app.add_option("--repeat-penalty", p.repeat_penalty, "repetition penalty (1: off)")->capture_default_str();
  app.add_option("--repeat-last-n", p.repeat_last_n, "tokens the penalties look back over")->capture_default_str();
  app.add_option("--frequency-penalty", p.frequency_penalty, "frequency penalty")->capture_default_str();
  app.add_option("--presence-penalty", p.presence_penalty, "presence penalty")->capture_default_str();
  app.add_option("-s,--seed", p.seed, "random seed (default: random)");
}

std::unique_ptr<gguf::File> open_gguf(const std::string& path, gguf::LoadMode mode) {
  if (!path.empty()) return gguf::File::open(path, mode);
  std::fprintf(stderr, "hart: running the built-in model %s (TinyStories, MIT, models/README.md); "
               "to run your own GGUF file: -m FILE\n", kBuiltinModelName);
  return gguf::File::from_memory(builtin_model_bytes(), std::string(kBuiltinModelName) + " (built-in)");
}

namespace {

LoadedModel load_base_model(const ModelOptions& opt) {
  if (is_synthetic_name(opt.model)) {
    std::fprintf(stderr, "hart: building %s (random weights, real shapes: output is gibberish)\n",
                 opt.model.c_str());
    return open_model(opt.model, false);
  }
  if (opt.model.empty()) return open_model(open_gguf(opt.model, gguf::LoadMode::Memory));  // already in memory
  if (opt.mmap) std::fprintf(stderr, "hart: mapping %s\n", opt.model.c_str());
  ProgressLine progress("hart: loading " + opt.model);
  return open_model(opt.model, opt.mmap, [&](size_t done, size_t total) { progress.update(done, total); });
}

}  // namespace

LoadedModel load_model(const ModelOptions& opt) {
  check_names(opt);
  const std::vector<ModelOptions::LoraFile> loras = opt.lora_files();  // a malformed flag fails before the model loads
  LoadedModel lm = load_base_model(opt);
  for (const ModelOptions::LoraFile& f : loras) {
    lm.model->loras.push_back(load_lora(*lm.model, f.path, opt.mmap ? gguf::LoadMode::Mmap : gguf::LoadMode::Memory));
    std::fprintf(stderr, "hart: LoRA adapter %zu: %s (scale %g)\n", lm.model->loras.size() - 1, f.path.c_str(),
                 double(f.scale));
  }
  return lm;
}

std::string describe_decode_reads(const Model& m) {
  const DecodeReads r = decode_reads(m);
  const auto mib = [](size_t b) { return double(b) / (1 << 20); };
  char buf[160];
  int n = std::snprintf(buf, sizeof buf, "%.1f MiB read per token", mib(r.total));
  if (r.experts_stored > 0) {
    int used = 0;  // the layers' n_expert_used (the same in every MoE layer of these families)
    for (const LayerConfig& l : m.hp.layers) used = std::max(used, l.n_expert_used);
    std::snprintf(buf + n, sizeof buf - size_t(n), " (experts: %.1f of %.1f MiB, %d of %d per layer)",
                  mib(r.experts), mib(r.experts_stored), used, m.hp.n_expert);
  }
  return buf;
}

}  // namespace hart::cli
