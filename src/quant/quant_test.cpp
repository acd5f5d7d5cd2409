#include "quant/quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "common/error.h"
#include "common/testdata.h"
#include "gguf/gguf.h"
#include "quant/blocks.h"
#include "quant/random_blocks.h"

namespace hart {
namespace {

const Type kQuantizable[] = {Type::F32,    Type::F16,    Type::BF16,  Type::Q4_0,  Type::Q4_1,  Type::Q5_0,
                             Type::Q5_1,   Type::Q8_0,   Type::Q8_1,  Type::Q2_K,  Type::Q3_K,  Type::Q4_K,
                             Type::Q5_K,   Type::Q6_K,   Type::Q8_K,  Type::IQ4_NL, Type::IQ4_XS, Type::TQ1_0,
                             Type::TQ2_0,  Type::MXFP4, Type::IQ2_XXS, Type::IQ2_XS, Type::IQ2_S,
                             Type::IQ3_XXS, Type::IQ3_S, Type::IQ1_S, Type::IQ1_M, Type::Q1_0, Type::Q2_0};
const Type kWeights[] = {Type::F32,  Type::F16,  Type::BF16, Type::Q4_0,   Type::Q4_1,   Type::Q5_0,  Type::Q5_1,
                         Type::Q8_0, Type::Q2_K, Type::Q3_K, Type::Q4_K,   Type::Q5_K,   Type::Q6_K,  Type::IQ4_NL,
                         Type::IQ4_XS, Type::TQ1_0, Type::TQ2_0, Type::MXFP4, Type::IQ2_XXS, Type::IQ2_XS,
                         Type::IQ2_S, Type::IQ3_XXS, Type::IQ3_S, Type::IQ1_S, Type::IQ1_M, Type::Q1_0, Type::Q2_0};

std::vector<float> random_floats(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<uint8_t> quantize(Type t, const std::vector<float>& x) {
  std::vector<uint8_t> q(row_size(t, int64_t(x.size())));
  quantize_test_row(t, x.data(), q.data(), int64_t(x.size()));
  return q;
}

std::vector<float> dequantize(Type t, const std::vector<uint8_t>& q, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  dequantize_row(t, q.data(), y.data(), n);
  return y;
}

double rms(const std::vector<float>& a) {
  double s = 0;
  for (float v : a) s += double(v) * v;
  return std::sqrt(s / double(a.size()));
}

double rmse(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); i++) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  return std::sqrt(s / double(a.size()));
}

// Upper bounds on RMSE / RMS for Gaussian input (a few times what each format achieves).
double error_bound(Type t) {
  switch (t) {
    case Type::F32: return 0;
    case Type::F16: return 1e-3;
    case Type::BF16: return 5e-3;
    case Type::Q8_0: case Type::Q8_1: case Type::Q8_K: return 0.01;
    case Type::Q6_K: return 0.03;
    case Type::Q5_0: case Type::Q5_1: case Type::Q5_K: return 0.06;
    case Type::Q3_K: return 0.25;
    case Type::Q2_K: return 0.45;
    case Type::IQ3_XXS: case Type::IQ3_S: return 0.3;
    case Type::IQ2_XXS: case Type::IQ2_XS: case Type::IQ2_S: return 0.5;
    case Type::IQ1_S: case Type::IQ1_M: return 0.8;
    case Type::MXFP4: return 0.2;
    case Type::TQ1_0: case Type::TQ2_0: return 0.9;  // ternary, scaled to the block's largest value
    case Type::Q2_0: return 0.9;                      // levels -1..2 of the block's largest value
    case Type::Q1_0: return 0.8;                      // signs times the mean magnitude
    default: return 0.12;  // 4-bit types
  }
}

// Rows of 1, 3 and 7 blocks, and for the plain types lengths that are no block multiple.
std::vector<int64_t> lengths(Type t) {
  const int64_t bs = type_info(t).block_size;
  std::vector<int64_t> n = {bs, 3 * bs, 7 * bs};
  if (bs == 1) n.insert(n.end(), {1, 33, 257});
  return n;
}

TEST(Quant, RoundTripErrorIsBounded) {
  for (Type t : kQuantizable) {
    for (int64_t n : lengths(t)) {
      SCOPED_TRACE(std::string(type_name(t)) + " n=" + std::to_string(n));
      const auto xs = random_floats(n, 7, 0.02f);
      const auto y = dequantize(t, quantize(t, xs), n);
      EXPECT_LE(rmse(xs, y), error_bound(t) * rms(xs));
    }
  }
}

TEST(Quant, ZerosStayZeros) {
  for (Type t : kQuantizable) {
    SCOPED_TRACE(std::string(type_name(t)));
    const std::vector<float> x(512, 0.0f);
    for (float v : dequantize(t, quantize(t, x), 512)) ASSERT_EQ(v, 0.0f);
  }
}

TEST(Quant, Q8_0KeepsExactlyRepresentableValues) {
  // One block holding -127..127 steps of 0.5 (d = 0.5 is exact in fp16).
  std::vector<float> x(32);
  for (int j = 0; j < 32; j++) x[j] = 0.5f * float(j * 8 - 127 > 127 ? 127 : j * 8 - 127);
  EXPECT_EQ(dequantize(Type::Q8_0, quantize(Type::Q8_0, x), 32), x);
}

TEST(Quant, Q8_0RoundsHalfAwayFromZero) {
  // amax 127 makes d = 1, so each value is its own level: ties go away from zero, like roundf.
  std::vector<float> x(32, 0.0f);
  const float in[] = {127, 2.5f, -2.5f, 0.5f, -0.5f, 126.5f, -3.49f, 1.51f};
  const int8_t want[] = {127, 3, -3, 1, -1, 127, -3, 2};
  std::copy(std::begin(in), std::end(in), x.begin());
  const auto q = quantize(Type::Q8_0, x);
  const auto* b = reinterpret_cast<const block_q8_0*>(q.data());
  EXPECT_EQ(fp16_to_f32(b->d), 1.0f);
  for (size_t j = 0; j < std::size(want); j++) EXPECT_EQ(b->qs[j], want[j]) << "value " << in[j];
}

TEST(Quant, Q4_0LayoutMatchesGgml) {
  // d = 0.5; byte j holds element j in its low nibble and element j+16 in its high nibble.
  block_q4_0 b;
  b.d = f32_to_fp16(0.5f);
  for (int j = 0; j < 16; j++) b.qs[j] = uint8_t(j | ((15 - j) << 4));
  float y[32];
  dequantize_row(Type::Q4_0, &b, y, 32);
  for (int j = 0; j < 16; j++) {
    EXPECT_EQ(y[j], 0.5f * float(j - 8));
    EXPECT_EQ(y[j + 16], 0.5f * float(7 - j));
  }
}

// Random weight blocks: quantized Gaussians, or random IQ blocks for the types hart cannot quantize.
std::vector<uint8_t> random_weights(Type t, int64_t n, uint32_t seed) {
  if (can_quantize(t)) return quantize(t, random_floats(n, seed, 0.05f));
  std::mt19937 rng(seed);
  return random_iq_blocks(t, n, rng);
}

// Q8_1 stores s = fp16(d * sum(levels)) with the unrounded d, so the minimum term m*s of a Q4_1 /
// Q5_1 dot differs from m * sum(dequantized x) by up to ~2^-10 relative: allow that per block.
double q8_1_slack(Type t, const std::vector<uint8_t>& w, const std::vector<uint8_t>& x, int64_t n) {
  if (vec_dot_type(t) != Type::Q8_1) return 0;
  const size_t ts = type_info(t).type_size;
  const auto* xb = reinterpret_cast<const block_q8_1*>(x.data());
  double slack = 0;
  for (int64_t i = 0; i < n / 32; i++) {
    fp16_t m;  // Q4_1 and Q5_1 blocks both start with fp16 d, fp16 m
    std::memcpy(&m, w.data() + size_t(i) * ts + 2, 2);
    slack += std::fabs(fp16_to_f32(m) * fp16_to_f32(xb[i].s)) / 1024;
  }
  return slack;
}

TEST(Quant, VecDotMatchesDequantizedDot) {
  for (Type t : kWeights) {
    const Type act = vec_dot_type(t);
    const int64_t bs = std::max(type_info(t).block_size, type_info(act).block_size);
    for (int64_t blocks : {1, 3, 7}) {
      const int64_t n = blocks * bs;
      SCOPED_TRACE(std::string(type_name(t)) + " x " + std::string(type_name(act)) + " n=" +
                   std::to_string(n));
      const auto w = random_weights(t, n, uint32_t(100 + blocks));
      const auto x = quantize(act, random_floats(n, uint32_t(200 + blocks)));
      const auto wf = dequantize(t, w, n);
      const auto xf = dequantize(act, x, n);
      double expect = 0, magnitude = 0;
      for (int64_t i = 0; i < n; i++) {
        expect += double(wf[size_t(i)]) * xf[size_t(i)];
        magnitude += std::fabs(double(wf[size_t(i)]) * xf[size_t(i)]);
      }
      float got = NAN;
      vec_dot(t, n, &got, w.data(), x.data());
      // Float accumulation over blocks (the per-block sums are exact integers).
      EXPECT_NEAR(got, expect, 1e-5 * magnitude + q8_1_slack(t, w, x, n));
    }
  }
}

TEST(Quant, ReportsUnsupportedUse) {
  float y[64];
  const std::vector<uint8_t> q(256);
  EXPECT_THROW(dequantize_row(Type::Q4_0, q.data(), y, 33), Error);
  EXPECT_THROW(dequantize_row(Type::NVFP4, q.data(), y, 256), Error);
  EXPECT_THROW(quantize_row(Type::NVFP4, y, nullptr, 256), Error);
  EXPECT_THROW(vec_dot_type(Type::Q8_K), Error);
  EXPECT_FALSE(can_dequantize(Type::NVFP4));
  EXPECT_FALSE(can_quantize(Type::NVFP4));
  // ggml's IQ2_XXS / IQ2_XS quantizers need importance weights; IQ3_XXS works without.
  std::vector<float> x(256, 1.0f);
  std::vector<uint8_t> out(row_size(Type::IQ2_XXS, 256));
  EXPECT_TRUE(quantize_needs_importance(Type::IQ2_XXS));
  EXPECT_FALSE(quantize_needs_importance(Type::IQ3_XXS));
  EXPECT_THROW(quantize_row(Type::IQ2_XXS, x.data(), out.data(), 256), Error);
  EXPECT_NO_THROW(quantize_row(Type::IQ2_XXS, x.data(), out.data(), 256, x.data()));
  EXPECT_EQ(vec_dot_type(Type::Q4_1), Type::Q8_1);
  EXPECT_EQ(vec_dot_type(Type::Q6_K), Type::Q8_K);
  EXPECT_EQ(vec_dot_type(Type::BF16), Type::BF16);
}

// ggml's own blocks and dequantization of a fixed [512, 4] input: every type of `names` dequantizes
// bit for bit, and where hart quantizes it, ggml's reference quantizer gives the same blocks.
void check_ggml_vectors(const std::string& path, std::initializer_list<const char*> names) {
  const auto file = gguf::File::open(path);
  auto floats = [&](const std::string& name) {
    const gguf::TensorInfo* t = file->find_tensor(name);
    if (!t || t->type != Type::F32) throw Error("missing F32 tensor " + name);
    std::vector<float> v(static_cast<size_t>(t->nelements()));
    std::memcpy(v.data(), t->data, t->nbytes);
    return v;
  };
  const auto src = floats("src.f32");
  for (const char* name : names) {
    SCOPED_TRACE(name);
    const gguf::TensorInfo* q = file->find_tensor(std::string(name) + ".q");
    ASSERT_NE(q, nullptr);
    const Type t = q->type;
    const int64_t n = q->nelements();
    const auto ggml_deq = floats(std::string(name) + ".deq");

    std::vector<float> deq(static_cast<size_t>(n));
    dequantize_row(t, q->data, deq.data(), n);
    EXPECT_EQ(std::memcmp(deq.data(), ggml_deq.data(), deq.size() * 4), 0) << "not bit-exact";

    if (!can_quantize(t)) continue;
    // ggml had the file's importance weights (one per column) for the types listed in
    // imatrix.types; quantized row by row with them.
    const std::string weighted = file->get_string("imatrix.types").value_or("");
    const bool with_imatrix = (',' + weighted + ',').find(std::string(",") + name + ",") != std::string::npos;
    std::vector<uint8_t> ours(row_size(t, n));
    if (with_imatrix) {
      const auto imatrix = floats("imatrix.f32");
      const int64_t cols = int64_t(imatrix.size()), rs = int64_t(row_size(t, cols));
      for (int64_t r = 0; r < n / cols; r++)
        quantize_row(t, src.data() + r * cols, ours.data() + r * rs, cols, imatrix.data());
    } else {
      ours = quantize(t, src);
    }
    // The file states ggml's RMSE (the second file); the first one's is computed from its .deq.
    const double ggml_rmse = file->get_float(std::string("rmse.") + name).value_or(rmse(src, ggml_deq));
    const double ours_rmse = rmse(src, dequantize(t, ours, n));
    EXPECT_LE(ours_rmse, 1.02 * ggml_rmse);
    std::printf("  %-7s rmse %.5f, ggml %.5f (x%.4f)\n", name, ours_rmse, ggml_rmse, ours_rmse / ggml_rmse);
    const size_t ts = type_info(t).type_size, n_blocks = ours.size() / ts;
    size_t same = 0;
    for (size_t b = 0; b < n_blocks; b++)
      same += std::memcmp(&ours[b * ts], q->data + b * ts, ts) == 0;
    // Same algorithms in the same float order: the very same bytes.
    EXPECT_EQ(same, n_blocks) << "blocks byte-identical to ggml";
  }
}

TEST(Quant, MatchesGgmlVectors) {
  HART_REQUIRE_TESTDATA(path, "quant/ggml_quant_vectors.gguf");
  check_ggml_vectors(path, {"f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q6_K", "q8_0", "q2_K", "q3_K", "q4_K",
                            "q5_K", "iq4_nl", "iq4_xs"});
}

// The second file: the types ggml_quant_vectors.gguf lacks, and Q8_K.
TEST(Quant, MatchesGgmlVectors2) {
  HART_REQUIRE_TESTDATA(path, "qtypes/ggml_quant_vectors_2.gguf");
  check_ggml_vectors(path, {"tq1_0", "tq2_0", "mxfp4", "q8_K", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s",
                            "iq1_s", "iq1_m", "q1_0", "q2_0"});
}

}  // namespace
}  // namespace hart
