// The tensors a model file of one architecture holds, as one list: the loader binds a file's
// tensors through it, synthetic models are generated from it, and `hart info` checks a file
// against it. Every tensor of a file must be on the list: used (bound to a Weights field), or one
// llama.cpp loads and then ignores (IGNORED); any other tensor makes the file an error, as it
// does in llama.cpp ("wrong number of tensors").
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "model/weights.h"

namespace hart::gguf {
class File;
}

namespace hart {

enum class TensorNeed : uint8_t { REQUIRED, OPTIONAL, IGNORED };
// What a tensor is, for synthetic models (which values to generate) and for hart info.
enum class TensorRole : uint8_t {
  MATRIX,   // a weight matrix (quantizable), values ~ 1/sqrt(k)
  EMBED,    // token embeddings (quantizable), values ~ 1
  NORM,     // norm weights: ones
  BIAS,     // small values
  SCALE,    // per-tensor scalar: one
  FACTORS,  // RoPE frequency factors: ones
  CONV,     // convolution kernel
};

struct TensorSpec {
  std::string name;
  std::array<int64_t, 4> ne{1, 1, 1, 1};
  int n_dims = 1;
  TensorRole role = TensorRole::MATRIX;
  TensorNeed need = TensorNeed::REQUIRED;
  bool synthetic = true;   // synthetic models of the architecture hold it
  Tensor** bind = nullptr; // where the loader puts it; nullptr for IGNORED
};

// What accompanies a weight matrix. llama.cpp loads `<name>.scale` and `<name>.input_scale` for
// every matrix that has them; whether the scale is multiplied in depends on the architecture's
// graph (`scale_used`), the input scale never is (at llama.cpp de3ff81).
enum class Bias : uint8_t { NONE, OPTIONAL, TYPICAL /* optional, and real checkpoints carry it */ };
enum class Synthetic : uint8_t { IF_REQUIRED, YES, NO };  // is it in synthetic models?
struct LinearSpec {
  TensorNeed need = TensorNeed::REQUIRED;
  Bias bias = Bias::NONE;
  bool scale_used = true;
  Synthetic synthetic = Synthetic::IF_REQUIRED;
};

class TensorList {
 public:
  void add(std::string name, std::initializer_list<int64_t> ne, TensorRole role, Tensor** bind,
           TensorNeed need = TensorNeed::REQUIRED);
  // A matrix `<base>.weight` (k inputs, n outputs) with its bias, scale and input scale.
  void linear(const std::string& base, int64_t k, int64_t n, Linear& lin, const LinearSpec& spec = {});
  // n_expert such matrices stacked, `<base>.weight` (k, n, n_expert), with one scale and one
  // input scale per expert (no bias: none of hart's MoE architectures has one).
  void experts(const std::string& base, int64_t k, int64_t n, int64_t n_expert, Linear& lin,
               const LinearSpec& spec = {});
  // A tensor llama.cpp accepts and does not use; `synthetic`: synthetic models hold it anyway
  // (llama.cpp requires it).
  void ignore(std::string name, std::initializer_list<int64_t> ne, TensorRole role, bool synthetic = false);
  // A file holds either every tensor named in `a` or every one in `b` (a fused QKV matrix or
  // three separate ones), listed as OPTIONAL.
  void one_of(std::vector<std::string> a, std::vector<std::string> b);

  const std::vector<TensorSpec>& specs() const { return specs_; }
  const TensorSpec* find(std::string_view name) const;
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>>& alternatives() const {
    return alternatives_;
  }

 private:
  // A weight of shape ne with `scales` scales and input scales; a bias (n_out,) where spec has one.
  void matrix(const std::string& base, std::initializer_list<int64_t> ne, int64_t n_out, int64_t scales, Linear& lin,
              const LinearSpec& spec);
  std::vector<TensorSpec> specs_;
  std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> alternatives_;
};

// "blk.3.attn_q"
std::string blk(int il, const char* name);

// How a file's tensors compare with the list; `problems` is empty when the file is loadable.
struct TensorCheck {
  int used = 0, ignored = 0;
  std::vector<std::string> problems;  // missing, unexpected, wrong shape or unsupported type
};
TensorCheck check_tensors(const gguf::File& f, const TensorList& list);

// Binds every listed tensor the file holds to its field: a weight leaf in `ctx` over the file's
// bytes (used in place). Returns the bytes bound. The list must have passed check_tensors.
size_t bind_tensors(const gguf::File& f, const TensorList& list, Context& ctx);

}  // namespace hart
