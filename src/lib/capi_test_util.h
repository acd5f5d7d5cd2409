// What the C API's tests share: loading stories260K through the API, sessions, tokens, logits rows.
#pragma once

#include <gtest/gtest.h>
#include <hart.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/testdata.h"

namespace hart::capi_test {

using Tokens = std::vector<int32_t>;

struct Handles {
  hart_model* model = nullptr;
  hart_session* session = nullptr;
  ~Handles() {
    hart_session_free(session);
    hart_model_free(model);
  }
};

inline hart_model* load(const std::string& path) {
  hart_model_params p = hart_model_default_params();
  p.n_threads = 1;
  hart_model* m = hart_model_load(path.c_str(), &p);
  EXPECT_NE(m, nullptr) << hart_last_error();
  return m;
}

inline hart_session* new_session(hart_model* m, int n_seq = 1, int n_ctx = 256, int n_batch = 512) {
  hart_session_params p = hart_session_default_params();
  p.n_seq = n_seq;
  p.n_ctx = n_ctx;
  p.n_batch = n_batch;
  hart_session* s = hart_session_new(m, &p);
  EXPECT_NE(s, nullptr) << hart_last_error();
  return s;
}

inline Tokens tokenize(const hart_model* m, const std::string& text) {
  const int32_t n = -hart_tokenize(m, text.data(), int32_t(text.size()), nullptr, 0, true, true);
  Tokens t(size_t(std::max(n, 0)));
  EXPECT_EQ(hart_tokenize(m, text.data(), int32_t(text.size()), t.data(), n, true, true), n);
  return t;
}

inline std::vector<float> row(const float* p, int n) { return p ? std::vector<float>(p, p + n) : std::vector<float>{}; }

inline void expect_near(const std::vector<float>& a, const std::vector<float>& b, float tol = 1e-4f) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); i++) ASSERT_NEAR(a[i], b[i], tol) << "at " << i;
}

// A token callback that appends the text to the std::string at `user`.
inline bool collect_text(int32_t, const char* piece, int32_t len, void* user) {
  static_cast<std::string*>(user)->append(piece, size_t(len));
  return true;
}

inline std::string stories() { return hart::testdata_path("models/stories260K.gguf"); }

}  // namespace hart::capi_test
