// Flags shared by the commands that load a model and generate (run, chat, bench, serve), and
// the loading itself, so every command spells them the same way.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "lib/model_files.h"
#include "model/model.h"
#include "model/session.h"
#include "sample/sampler.h"
#include "tokenizer/tokenizer.h"

namespace hart::cli {

// hart bench's default -m: a benchmark wants a real model's shapes, not the built-in's.
constexpr const char* kBenchDefaultModel = "synthetic:smollm2-135m:q8_0";

struct ModelOptions {
  std::string model;  // empty: the built-in model (builtin_model.h)
  int threads = 0;
  std::string cpu_mask;  // hex, e.g. 0xF0: pin the CPU threads to CPUs 4-7
  int ctx_size = 0;
  std::string cache_type = "f16";
  bool mmap = false;
  std::vector<std::string> devices;  // --device et,cpu (empty: the CPU)
  std::string perf_log;
  bool list_devices = false;
  std::vector<std::string> lora;         // --lora FNAME[,FNAME...]
  std::vector<std::string> lora_scaled;  // --lora-scaled FNAME:SCALE[,...] or FNAME SCALE

  void add_to(CLI::App& app);
  // The LoRA adapters --lora (scale 1) and --lora-scaled name, in that order: their ids.
  struct LoraFile {
    std::string path;
    float scale;
  };
  std::vector<LoraFile> lora_files() const;
  SessionParams session_params() const;
  // The backends --device names (the CPU last), with -t threads (or `threads` when > 0),
  // --cpu-mask and --perf-log.
  BackendSet backends(int threads = 0) const;
};

struct SamplingOptions {
  SamplerParams p;
  void add_to(CLI::App& app);
};

// --list-devices: prints the devices and returns true (the command then exits).
bool print_devices_if_asked(const ModelOptions& opt);

// A GGUF file by path, or the built-in model for an empty path, which says on stderr which model
// that is and how to run one's own (-m FILE).
std::unique_ptr<gguf::File> open_gguf(const std::string& path, gguf::LoadMode mode);

// Opens MODEL (a GGUF path, "" for the built-in model, or synthetic:NAME:TYPE) with a progress line on stderr. First checks
// what the options name besides the model (--cpu-mask, --device, the HART_ISA kernel set): a
// mistake there ends the command before a large file is read or a synthetic model built.
// Then loads the LoRA adapters of --lora / --lora-scaled for it (session_params() carries their scales).
LoadedModel load_model(const ModelOptions& opt);

// "12.3 MiB read per token", and for a mixture of experts "(experts: 4.5 of 36.0 MiB, 8 of 64
// per layer)": what the bandwidth roofline of a generated token counts (decode_reads).
std::string describe_decode_reads(const Model& m);

}  // namespace hart::cli
