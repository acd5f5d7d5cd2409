// The element-wise device kernels added for Gemma-style models (UNARY SiLU / GELU, GLU GeGLU and
// SwiGLU, binary SUB) and MUL_MAT over Q4_K weights, on the emulator against the CPU backend's
// scalar reference kernels, on random data with odd row counts and views as inputs.
#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/et/device/kernel_test_util.h"
#include "quant/quant.h"

namespace hart::et::test {
namespace {

const cpu::Kernels& ref() { return cpu::ref_kernels(); }

// ---- UNARY and GLU --------------------------------------------------------------------------

// UNARY dst = act(x), or with `gated` GLU dst = act(x) * up, over rows x rows of ne0.
void check_activation(bool gated, int32_t act, int64_t ne0, int64_t rows, uint64_t mask) {
  Dev& dev = Dev::get();
  const Shape shape{ne0, rows, 1, 1};
  const auto x = random_floats(size_t(ne0 * rows), 21, -8.0f, 8.0f);
  const auto up = random_floats(x.size(), 22, -2.0f, 2.0f);
  std::vector<float> got, want(x.size());
  const int64_t n = int64_t(x.size());
  if (gated) {
    et_glu_params p{};
    p.gate = dev.tensor(x, Type::F32, shape);
    p.up = dev.tensor(up, Type::F32, shape);
    p.dst = dev.output(Type::F32, shape);
    p.act = act;
    dev.run("glu", p, mask);
    got = dev.download_f32(p.dst);
    (act == ET_ACT_SILU ? ref().swiglu : ref().geglu)(n, x.data(), up.data(), want.data());
  } else {
    et_unary_params p{};
    p.src = dev.tensor(x, Type::F32, shape);
    p.dst = dev.output(Type::F32, shape);
    p.act = act;
    dev.run("unary", p, mask);
    got = dev.download_f32(p.dst);
    (act == ET_ACT_SILU ? ref().silu : ref().gelu)(n, x.data(), want.data());
  }
  expect_near_all(got, want, 2e-6f);
}

TEST(EtUnary, SiluOddRows) { check_activation(false, ET_ACT_SILU, 37, 9, kSmallMask); }
TEST(EtUnary, GeluOddRows) { check_activation(false, ET_ACT_GELU, 37, 9, kSmallMask); }
TEST(EtUnary, GeluOnAll32Shires) { check_activation(false, ET_ACT_GELU, 128, 67, kFullMask); }
TEST(EtGlu, GegluOddRows) { check_activation(true, ET_ACT_GELU, 45, 7, kSmallMask); }
TEST(EtGlu, SwigluOddRows) { check_activation(true, ET_ACT_SILU, 45, 7, kSmallMask); }
TEST(EtGlu, GegluOnAll32Shires) { check_activation(true, ET_ACT_GELU, 96, 131, kFullMask); }

// A strided view as input: every other column of a wider tensor.
TEST(EtUnary, SiluOfAStridedView) {
  Dev& dev = Dev::get();
  const int64_t ne0 = 21, rows = 5;
  const auto x = random_floats(size_t(2 * ne0 * rows), 23, -4.0f, 4.0f);
  et_unary_params p{};
  p.src = dev.tensor(x, Type::F32, {2 * ne0, rows, 1, 1});
  p.src.ne[0] = ne0;
  p.src.nb[0] = 8;
  p.dst = dev.output(Type::F32, {ne0, rows, 1, 1});
  p.act = ET_ACT_SILU;
  dev.run("unary", p);
  std::vector<float> picked, want(size_t(ne0 * rows));
  for (size_t i = 0; i < x.size(); i += 2) picked.push_back(x[i]);
  ref().silu(int64_t(picked.size()), picked.data(), want.data());
  expect_near_all(dev.download_f32(p.dst), want, 2e-6f);
}

TEST(EtUnary, RejectsAnUnknownActivation) {
  Dev& dev = Dev::get();
  et_unary_params p{};
  p.src = dev.tensor(random_floats(16, 24), Type::F32, {16, 1, 1, 1});
  p.dst = dev.output(Type::F32, {16, 1, 1, 1});
  p.act = ET_ACT_SQR + 1;  // past the last activation
  const std::string err = dev.launch_error("unary", p);
  EXPECT_NE(err.find("unary: unknown activation"), std::string::npos) << err;
}

// ---- SUB -----------------------------------------------------------------------------------

TEST(EtBinary, SubBroadcastsSrc1OverOddRows) {
  Dev& dev = Dev::get();
  const int64_t ne0 = 23, rows = 9;
  const auto a = random_floats(size_t(ne0 * rows), 26);
  const auto b = random_floats(size_t(ne0), 27);
  et_binary_params p{};
  p.src0 = dev.tensor(a, Type::F32, {ne0, rows, 1, 1});
  p.src1 = dev.tensor(b, Type::F32, {ne0, 1, 1, 1});
  p.dst = dev.output(Type::F32, {ne0, rows, 1, 1});
  p.op = ET_BINARY_SUB;
  dev.run("binary", p);
  std::vector<float> want(a.size());
  for (int64_t r = 0; r < rows; r++) ref().sub(ne0, a.data() + r * ne0, b.data(), want.data() + r * ne0);
  expect_near_all(dev.download_f32(p.dst), want, 0.0f);
}

// ---- Q4_K ----------------------------------------------------------------------------------

// Weights quantized by the CPU reference quantizer; the CPU reference dot product of each weight
// row with F32 activations (the reference set does not quantize activations).
void check_mul_mat_q4_k(int64_t k, int64_t n, int64_t m, uint64_t mask) {
  Dev& dev = Dev::get();
  const auto w = random_floats(size_t(k * n), 28);
  const auto x = random_floats(size_t(k * m), 29);
  const std::vector<uint8_t> wq = quantize(Type::Q4_K, w, k);
  et_mul_mat_params p{};
  p.src0 = dev.tensor(wq, Type::Q4_K, {k, n, 1, 1});
  p.src1 = dev.tensor(x, Type::F32, {k, m, 1, 1});
  p.dst = dev.output(Type::F32, {n, m, 1, 1});
  dev.run("mul_mat", p, mask);
  const cpu::VecDotFn dot = ref().dot[size_t(Type::Q4_K)].vec_dot;
  ASSERT_EQ(ref().dot[size_t(Type::Q4_K)].act_type, Type::F32);
  std::vector<float> want(size_t(n * m));
  for (int64_t j = 0; j < m; j++)
    for (int64_t i = 0; i < n; i++) {
      dot(k, &want[size_t(j * n + i)], wq.data() + i * row_size(Type::Q4_K, k), x.data() + j * k);
    }
  expect_near_all(dev.download_f32(p.dst), want, 2e-5f);
}

TEST(EtMulMat, Q4_KOddRows) { check_mul_mat_q4_k(512, 37, 3, kSmallMask); }
TEST(EtMulMat, Q4_KDecodeOnAll32Shires) { check_mul_mat_q4_k(256, 523, 1, kFullMask); }

// GET_ROWS dequantizes Q4_K bit for bit as the CPU reference does.
TEST(EtGetRows, Q4_KIsBitExact) {
  Dev& dev = Dev::get();
  const int64_t ne0 = 512, rows = 7;
  const std::vector<uint8_t> raw = quantize(Type::Q4_K, random_floats(size_t(ne0 * rows), 30, -3.0f, 3.0f), ne0);
  const std::vector<int32_t> ids{6, 0, 3, 3, 5};
  et_get_rows_params p{};
  p.src = dev.tensor(raw, Type::Q4_K, {ne0, rows, 1, 1});
  p.rows = dev.tensor(ids, Type::I32, {5, 1, 1, 1});
  p.dst = dev.output(Type::F32, {ne0, 5, 1, 1});
  dev.run("get_rows", p);
  std::vector<float> want(size_t(ne0) * ids.size());
  const size_t row_bytes = row_size(Type::Q4_K, ne0);
  for (size_t r = 0; r < ids.size(); r++) {
    ref().to_f32[size_t(Type::Q4_K)](raw.data() + size_t(ids[r]) * row_bytes, want.data() + r * size_t(ne0), ne0);
  }
  const std::vector<float> got = dev.download_f32(p.dst);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)));
}

}  // namespace
}  // namespace hart::et::test
