// What the speculative-decoding tests share.
#pragma once

#include <vector>

#include "model/generate.h"

namespace hart::spec {

// Options that generate at most n tokens and append each to `out`.
inline GenerateOptions collecting(int n, std::vector<int32_t>& out) {
  GenerateOptions go;
  go.n_predict = n;
  go.on_token = [&out](int32_t t) {
    out.push_back(t);
    return true;
  };
  return go;
}

}  // namespace hart::spec
