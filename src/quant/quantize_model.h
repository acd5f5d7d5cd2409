// Quantizing a whole GGUF model, with llama.cpp's `llama-quantize` rules for which tensor gets
// which type: matrices named *weight are converted, norms / biases / other 1-D tensors are copied
// as they are, mixes (Q2_K, Q3_K_M, Q4_K_M, IQ4_XS, ...) give sensitive tensors more bits unless
// --pure, and a row length that does not fit the block size falls back to a type that fits.
// Sources may be any type hart can dequantize, so quantized models can be requantized.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf.h"
#include "quant/imatrix.h"
#include "types/tensor_type.h"

namespace hart {

// A TYPE of llama-quantize (its QUANT_OPTIONS): the default type of matrices and the mix of
// per-tensor rules that goes with the file type.
struct QuantizeTarget {
  std::string_view name;      // as llama-quantize lists it: "Q4_K_M"
  Type type;                  // the type of ordinary matrices (llama_ftype_get_default_type)
  uint32_t file_type;         // llama.cpp's LLAMA_FTYPE number, stored as general.file_type
  std::string_view alias_of = {};  // "Q4_K_M" for Q4_K: the same target under a second name
  bool copy = false;          // COPY: every tensor kept as it is
};

// llama-quantize's targets, in its order.
const std::vector<QuantizeTarget>& quantize_targets();
// A name (case-insensitive) or a LLAMA_FTYPE number ("15": the first target with it, Q4_K);
// nullptr when unknown.
const QuantizeTarget* find_quantize_target(std::string_view name);

// llama-quantize's options beyond the type.
struct QuantizeOptions {
  bool pure = false;                         // --pure: no mix rules, every matrix in the target's type
  std::optional<Type> output_tensor_type = {};    // --output-tensor-type: output.weight's type, as it is
  std::optional<Type> token_embedding_type = {};  // --token-embedding-type: token_embd.weight's type
  bool leave_output_tensor = false;          // --leave-output-tensor: output.weight kept as it is
  bool allow_requantize = false;             // --allow-requantize: convert tensors already quantized
};

// general.file_type of the output: the target's, or for COPY the input's (llama.cpp's guess,
// flagged LLAMA_FTYPE_GUESSED, when the input has none).
uint32_t output_file_type(const gguf::File& in, const QuantizeTarget& target);

// The type each tensor of `in` gets, in the file's tensor order. Throws hart::Error when a
// tensor would need a conversion hart cannot do.
// `has_imatrix`: an importance matrix will be given, which changes a few of llama.cpp's choices.
struct TensorPlan {
  Type type;
  bool fallback;       // the row length did not fit the chosen type
  bool needs_imatrix;  // llama-quantize refuses this tensor's type without an importance matrix
};
std::vector<TensorPlan> plan_quantization(const gguf::File& in, const QuantizeTarget& target,
                                          const QuantizeOptions& options = {}, bool has_imatrix = false);
// The same for tensors that exist only as names, types and shapes (a model still to be written);
// the model facts (architecture, layer and head counts) come from meta's metadata.
std::vector<TensorPlan> plan_quantization(const gguf::File& meta, std::span<const gguf::TensorInfo> tensors,
                                          const QuantizeTarget& target, const QuantizeOptions& options = {},
                                          bool has_imatrix = false);

// Progress, reported on the calling thread: rows of the tensor being converted, then bytes
// written.
struct QuantizeProgress {
  enum class Stage { Convert, Write } stage = Stage::Convert;
  size_t tensor = 0, n_tensors = 0;  // Convert: which tensor (0-based) of how many
  std::string_view name;
  Type from{}, to{};
  uint64_t done = 0, total = 0;  // rows (Convert) or bytes (Write)
};
using QuantizeCallback = std::function<void(const QuantizeProgress&)>;

struct QuantizeSummary {
  size_t n_tensors = 0, n_converted = 0, n_fallback = 0;
  uint64_t tensor_bytes_in = 0, tensor_bytes_out = 0;
  uint64_t file_bytes_in = 0, file_bytes_out = 0;
};

// Reads in_path, writes out_path (through "<out_path>.tmp" and a rename), with `threads` worker
// threads (<= 0: one per CPU). With an importance matrix, each matrix's per-column values weight
// its quantization as in llama-quantize --imatrix; the IQ1-IQ3 types are refused without one, and
// a tensor that is already quantized is converted only with options.allow_requantize, both before
// anything is written. Throws hart::Error naming the problem.
QuantizeSummary quantize_model(const std::string& in_path, const std::string& out_path,
                               const QuantizeTarget& target, const QuantizeOptions& options, int threads,
                               const QuantizeCallback& progress = {},
                               const ImportanceMatrix* imatrix = nullptr);

}  // namespace hart
