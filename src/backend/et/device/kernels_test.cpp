// Device kernels run on the emulator against plain host references, on random data with odd
// sizes (rows that do not fill cache lines), on a 2-shire mask and on the full 32-shire mask.
#include <cmath>
#include <vector>

#include "backend/et/device/et_device.h"
#include "backend/et/device/kernel_test_util.h"
#include "common/fp16.h"
#include "quant/quant.h"

namespace hart::et::test {
namespace {

// The line split gives every element to exactly one hart, and every boundary between two harts'
// ranges falls on a 64-byte line boundary, for aligned and unaligned outputs.
TEST(EtSplit, PartitionsOutputsOnCacheLineBoundaries) {
  for (uint64_t addr : {0x1000ull, 0x1004ull, 0x103cull}) {
    for (int64_t elem : {2, 4}) {
      for (int64_t n : {1, 15, 16, 17, 1000, 4099}) {
        for (int64_t row : {int64_t(1), int64_t(16), int64_t(64), int64_t(7)}) {
          for (uint32_t threads : {1u, 3u, 64u, 2048u}) {
            int64_t expect_begin = 0;
            for (uint32_t t = 0; t < threads; t++) {
              et_env env{};
              env.thread_id = t;
              env.num_threads = threads;
              const et_range r = et_split_lines(&env, addr, n, elem, row);
              ASSERT_LE(r.begin, r.end);
              if (r.begin == r.end) continue;
              ASSERT_EQ(r.begin, expect_begin) << "gap or overlap at thread " << t;
              if (r.begin != 0) {
                ASSERT_EQ((addr + uint64_t(r.begin * elem)) % 64, 0u) << "thread " << t;
              }
              expect_begin = r.end;
            }
            ASSERT_EQ(expect_begin, n) << "addr " << addr << " n " << n << " threads " << threads;
          }
        }
      }
    }
  }
}

// ---- MUL_MAT -------------------------------------------------------------------------------

struct MulMatCase {
  Type type;
  int64_t k, n, m, planes;
  uint64_t mask;
  const char* kernel = "mul_mat";
  bool f16_x = false;  // F16 activations (the F16 engine kernel's)
  bool add = false;    // + an addend repeated over the planes (MUL_MAT+ADD)
};

void check_mul_mat(const MulMatCase& c) {
  Dev& dev = Dev::get();
  // W (K, N, 1, 1) broadcast over X (K, M, planes, 1).
  const std::vector<float> w = random_floats(size_t(c.k * c.n), 1);
  std::vector<float> x = random_floats(size_t(c.k * c.m * c.planes), 2);
  if (c.f16_x) x = from_f16(to_f16(x));  // the values the device reads
  std::vector<uint8_t> wq;
  if (c.type == Type::F32) wq.assign(reinterpret_cast<const uint8_t*>(w.data()), reinterpret_cast<const uint8_t*>(w.data() + w.size()));
  else if (c.type == Type::F16) {
    const auto h = to_f16(w);
    wq.assign(reinterpret_cast<const uint8_t*>(h.data()), reinterpret_cast<const uint8_t*>(h.data() + h.size()));
  } else {
    wq = quantize(c.type, w, c.k);
  }
  std::vector<float> wd(w.size());  // the weights as the device sees them
  for (int64_t r = 0; r < c.n; r++) dequantize_row(c.type, wq.data() + r * row_size(c.type, c.k), wd.data() + r * c.k, c.k);

  et_mul_mat_params p{};
  p.src0 = dev.tensor(wq, c.type, {c.k, c.n, 1, 1});
  p.src1 = c.f16_x ? dev.tensor(to_f16(x), Type::F16, {c.k, c.m, c.planes, 1}) : dev.tensor(x, Type::F32, {c.k, c.m, c.planes, 1});
  p.dst = dev.output(Type::F32, {c.n, c.m, c.planes, 1});
  const std::vector<float> addend = random_floats(size_t(c.n * c.m), 3);
  if (c.add) {
    p.addend = dev.tensor(addend, Type::F32, {c.n, c.m, 1, 1});
    p.has_add = 1;
  }
  dev.run(c.kernel, p, c.mask);

  std::vector<float> want(size_t(c.n * c.m * c.planes));
  for (int64_t b = 0; b < c.planes; b++) {
    for (int64_t j = 0; j < c.m; j++) {
      for (int64_t i = 0; i < c.n; i++) {
        double s = 0;
        for (int64_t q = 0; q < c.k; q++) s += double(wd[size_t(i * c.k + q)]) * x[size_t((b * c.m + j) * c.k + q)];
        want[size_t((b * c.m + j) * c.n + i)] = float(s + (c.add ? addend[size_t(j * c.n + i)] : 0.0));
      }
    }
  }
  expect_near_all(dev.download_f32(p.dst), want, c.f16_x ? 1e-4f : 2e-5f);  // fp16 steps round toward zero
}

TEST(EtMulMat, F32) { check_mul_mat({Type::F32, 67, 37, 3, 2, kSmallMask}); }
TEST(EtMulMat, F16) { check_mul_mat({Type::F16, 64, 29, 5, 1, kSmallMask}); }
TEST(EtMulMat, Q8_0) { check_mul_mat({Type::Q8_0, 96, 41, 2, 2, kSmallMask}); }
TEST(EtMulMat, Q4_0) { check_mul_mat({Type::Q4_0, 128, 53, 1, 1, kSmallMask}); }
// The other block types of et_blocks.h: odd N and M, K one or more blocks (super-blocks).
TEST(EtMulMat, Q4_1) { check_mul_mat({Type::Q4_1, 96, 37, 3, 1, kSmallMask}); }
TEST(EtMulMat, Q5_0) { check_mul_mat({Type::Q5_0, 160, 29, 3, 1, kSmallMask}); }
TEST(EtMulMat, Q5_1) { check_mul_mat({Type::Q5_1, 64, 41, 5, 1, kSmallMask}); }
TEST(EtMulMat, IQ4_NL) { check_mul_mat({Type::IQ4_NL, 96, 23, 3, 1, kSmallMask}); }
TEST(EtMulMat, Q5_K) { check_mul_mat({Type::Q5_K, 512, 37, 3, 1, kSmallMask}); }
TEST(EtMulMat, Q6_K) { check_mul_mat({Type::Q6_K, 768, 29, 3, 1, kSmallMask}); }
TEST(EtMulMat, Q6_KDecodeOnAll32Shires) { check_mul_mat({Type::Q6_K, 256, 523, 1, 1, kFullMask}); }
TEST(EtMulMat, Q4_0OnAll32Shires) { check_mul_mat({Type::Q4_0, 64, 515, 4, 1, kFullMask}); }
TEST(EtMulMat, F32OnAll32Shires) { check_mul_mat({Type::F32, 33, 1031, 3, 1, kFullMask}); }

// The matrix-engine kernels (et_engine.h) on 16-column tiles: rows that do not fill a tile (N of
// 1, 5, 37, 70), K a multiple of 16 but not of 32 (a short last fp16 step), weights broadcast over
// activation planes, the fused addend, and few tiles on many minions (K split over a reduce tree).
TEST(EtMulMatEngine, F32) { check_mul_mat({Type::F32, 48, 32, 37, 2, kSmallMask, "mul_mat_f32_matrix_engine"}); }
TEST(EtMulMatEngine, F32SingleRowAndAddend) {
  check_mul_mat({Type::F32, 80, 64, 1, 1, kSmallMask, "mul_mat_f32_matrix_engine", false, true});
}
TEST(EtMulMatEngine, F16) { check_mul_mat({Type::F16, 48, 48, 5, 3, kSmallMask, "mul_mat_f16_matrix_engine", true}); }
TEST(EtMulMatEngine, F16FullChunks) { check_mul_mat({Type::F16, 128, 16, 70, 1, kSmallMask, "mul_mat_f16_matrix_engine", true}); }
TEST(EtMulMatEngine, Q8_0) { check_mul_mat({Type::Q8_0, 96, 80, 53, 1, kSmallMask, "mul_mat_q8_0_matrix_engine"}); }
TEST(EtMulMatEngine, Q8_0WithAddend) {
  check_mul_mat({Type::Q8_0, 64, 32, 70, 1, kSmallMask, "mul_mat_q8_0_matrix_engine", false, true});
}
TEST(EtMulMatEngine, Q4_0) { check_mul_mat({Type::Q4_0, 128, 48, 61, 2, kSmallMask, "mul_mat_q4_0_matrix_engine"}); }
TEST(EtMulMatEngine, Q4_0KSplitOnAll32Shires) {
  check_mul_mat({Type::Q4_0, 1024, 32, 20, 1, kFullMask, "mul_mat_q4_0_matrix_engine"});
}
TEST(EtMulMatEngine, Q8_0ManyTilesOnAll32Shires) {
  check_mul_mat({Type::Q8_0, 64, 1040, 64, 1, kFullMask, "mul_mat_q8_0_matrix_engine"});
}

TEST(EtMulMatEngine, RejectsColumnsThatDoNotFillTiles) {
  Dev& dev = Dev::get();
  et_mul_mat_params p{};
  p.src0 = dev.tensor(random_floats(16 * 24, 1), Type::F32, {16, 24, 1, 1});
  p.src1 = dev.tensor(random_floats(16 * 4, 2), Type::F32, {16, 4, 1, 1});
  p.dst = dev.output(Type::F32, {24, 4, 1, 1});
  const std::string err = dev.launch_error("mul_mat_f32_matrix_engine", p);
  EXPECT_NE(err.find("M must be a multiple of 16"), std::string::npos) << err;
}

// ---- MUL_MAT fused with its GLU; activations an earlier call of the phase read -------------

double glu_activation_ref(Glu kind, double g) {
  if (kind == Glu::SWIGLU) return g / (1.0 + std::exp(-g));
  return 0.5 * g * (1.0 + std::tanh(0.7978845608 * (g + 0.044715 * g * g * g)));  // GEGLU (tanh)
}

// dst = act(Wg x) * (Wu x), the gate and up weights of one block type.
void check_mul_mat_glu(Type type, int64_t k, int64_t n, int64_t m, Glu kind, int32_t act, uint64_t mask) {
  Dev& dev = Dev::get();
  const std::vector<float> x = random_floats(size_t(k * m), 5);
  std::vector<std::vector<uint8_t>> wq;
  std::vector<std::vector<float>> wd;
  for (uint32_t seed : {6u, 7u}) {
    wq.push_back(quantize(type, random_floats(size_t(k * n), seed), k));
    wd.emplace_back(size_t(k * n));
    for (int64_t r = 0; r < n; r++) dequantize_row(type, wq.back().data() + r * row_size(type, k), wd.back().data() + r * k, k);
  }
  et_mul_mat_params p{};
  p.src0 = dev.tensor(wq[0], type, {k, n, 1, 1});
  p.up = dev.tensor(wq[1], type, {k, n, 1, 1});
  p.src1 = dev.tensor(x, Type::F32, {k, m, 1, 1});
  p.dst = dev.output(Type::F32, {n, m, 1, 1});
  p.glu = 1 + act;
  dev.run("mul_mat", p, mask);
  std::vector<float> want(size_t(n * m));
  for (int64_t j = 0; j < m; j++) {
    for (int64_t i = 0; i < n; i++) {
      double g = 0, u = 0;
      for (int64_t q = 0; q < k; q++) {
        g += double(wd[0][size_t(i * k + q)]) * x[size_t(j * k + q)];
        u += double(wd[1][size_t(i * k + q)]) * x[size_t(j * k + q)];
      }
      want[size_t(j * n + i)] = float(glu_activation_ref(kind, g) * u);
    }
  }
  expect_near_all(dev.download_f32(p.dst), want, 1e-4f);
}

TEST(EtMulMat, Q8_0SwigluOddRows) { check_mul_mat_glu(Type::Q8_0, 96, 41, 3, Glu::SWIGLU, ET_ACT_SILU, kSmallMask); }
TEST(EtMulMat, Q6_KGegluDecodeOnAll32Shires) {
  check_mul_mat_glu(Type::Q6_K, 256, 523, 1, Glu::GEGLU, ET_ACT_GELU, kFullMask);
}

TEST(EtMulMat, RejectsAGluWithAnAddend) {
  Dev& dev = Dev::get();
  et_mul_mat_params p{};
  p.src0 = dev.tensor(random_floats(32 * 4, 1), Type::F32, {32, 4, 1, 1});
  p.up = p.src0;
  p.src1 = dev.tensor(random_floats(32, 2), Type::F32, {32, 1, 1, 1});
  p.dst = dev.output(Type::F32, {4, 1, 1, 1});
  p.addend = dev.tensor(random_floats(4, 3), Type::F32, {4, 1, 1, 1});
  p.has_add = 1;
  p.glu = 1 + ET_ACT_SILU;
  expect_rejected("mul_mat", p, "no addend");
}

// A decode row's activations cost each shire one read; with x_shared (an earlier call of the
// phase read them) none, and the products are the same.
TEST(EtMulMat, SharedActivationsAreNotReadAgain) {
  Dev& dev = Dev::get();
  const int64_t k = 256, n = 4096;
  et_mul_mat_params p{};
  p.src0 = dev.tensor(quantize(Type::Q8_0, random_floats(size_t(k * n), 8), k), Type::Q8_0, {k, n, 1, 1});
  p.src1 = dev.tensor(random_floats(size_t(k), 9), Type::F32, {k, 1, 1, 1});
  p.dst = dev.output(Type::F32, {n, 1, 1, 1});
  auto bytes_read = [&](int32_t shared) {
    p.x_shared = shared;
    dev.device().profiler_start();
    dev.run("mul_mat", p, kFullMask);
    const std::vector<ProfileRecord> recs = dev.device().profiler_stop();
    for (const ProfileRecord& r : recs)
      if (r.kind == ProfileRecord::Kind::Launch) return r.bytes_read;
    return uint64_t(0);
  };
  const uint64_t alone = bytes_read(0);
  const std::vector<float> first = dev.download_f32(p.dst);
  const uint64_t shared = bytes_read(1);
  EXPECT_EQ(alone - shared, uint64_t(32 * k * 4)) << "one activation row per shire";
  EXPECT_EQ(dev.download_f32(p.dst), first);
}

// A folded RMS_NORM+MUL (has_norm) gives what the RMS_NORM kernel and then the product give, bit
// for bit: K over several norm pieces with a tail, the plain product and the fused GLU.
void check_mul_mat_norm(Type type, int64_t k, int64_t n, bool glu) {
  Dev& dev = Dev::get();
  const std::vector<float> x = random_floats(size_t(k), 10, -3.0f, 3.0f), g = random_floats(size_t(k), 11);
  const auto weights = [&](uint32_t seed) {
    const std::vector<float> w = random_floats(size_t(k * n), seed);
    if (type == Type::F32) return dev.tensor(w, type, {k, n, 1, 1});
    return dev.tensor(quantize(type, w, k), type, {k, n, 1, 1});
  };
  et_rms_norm_params norm{};
  norm.src = dev.tensor(x, Type::F32, {k, 1, 1, 1});
  norm.weight = dev.tensor(g, Type::F32, {k, 1, 1, 1});
  norm.dst = dev.output(Type::F32, {k, 1, 1, 1});
  norm.eps = 1e-6f;
  norm.has_weight = 1;
  dev.run("rms_norm", norm, kSmallMask);
  et_mul_mat_params p{};
  p.src0 = weights(12);
  p.up = weights(13);
  p.glu = glu ? 1 + ET_ACT_SILU : 0;
  p.src1 = norm.dst;
  p.dst = dev.output(Type::F32, {n, 1, 1, 1});
  dev.run("mul_mat", p, kFullMask);
  const std::vector<float> want = dev.download_f32(p.dst);
  p.src1 = norm.src;
  p.norm_weight = norm.weight;
  p.norm_eps = norm.eps;
  p.has_norm = 1;
  p.dst = dev.output(Type::F32, {n, 1, 1, 1});
  dev.run("mul_mat", p, kFullMask);
  EXPECT_EQ(dev.download_f32(p.dst), want);
}

TEST(EtMulMat, FoldedNormQ8_0) { check_mul_mat_norm(Type::Q8_0, 608, 37, false); }
TEST(EtMulMat, FoldedNormQ4_KSwiglu) { check_mul_mat_norm(Type::Q4_K, 768, 523, true); }
TEST(EtMulMat, FoldedNormF32OddK) { check_mul_mat_norm(Type::F32, 300, 41, false); }

TEST(EtMulMat, RejectsMismatchedShapesAsAStreamError) {
  Dev& dev = Dev::get();
  et_mul_mat_params p{};
  p.src0 = dev.tensor(random_floats(64, 1), Type::F32, {16, 4, 1, 1});
  p.src1 = dev.tensor(random_floats(32, 2), Type::F32, {8, 4, 1, 1});
  p.dst = dev.output(Type::F32, {4, 4, 1, 1});
  const std::string err = dev.launch_error("mul_mat", p);
  EXPECT_NE(err.find("activation rows must be K contiguous values"), std::string::npos) << err;
}

// ---- RMS_NORM (+ fused MUL) ----------------------------------------------------------------

void check_rms_norm(int64_t ne0, int64_t rows, bool with_weight, uint64_t mask) {
  Dev& dev = Dev::get();
  const auto x = random_floats(size_t(ne0 * rows), 3, -2.0f, 2.0f);
  const auto w = random_floats(size_t(ne0), 4);
  et_rms_norm_params p{};
  p.src = dev.tensor(x, Type::F32, {ne0, rows, 1, 1});
  p.weight = dev.tensor(w, Type::F32, {ne0, 1, 1, 1});
  p.dst = dev.output(Type::F32, {ne0, rows, 1, 1});
  p.eps = 1e-5f;
  p.has_weight = with_weight;
  dev.run("rms_norm", p, mask);
  std::vector<float> want(x.size());
  for (int64_t r = 0; r < rows; r++) {
    double ss = 0;
    for (int64_t i = 0; i < ne0; i++) ss += double(x[size_t(r * ne0 + i)]) * x[size_t(r * ne0 + i)];
    const double scale = 1.0 / std::sqrt(ss / double(ne0) + 1e-5);
    for (int64_t i = 0; i < ne0; i++) {
      want[size_t(r * ne0 + i)] = float(x[size_t(r * ne0 + i)] * scale * (with_weight ? w[size_t(i)] : 1.0f));
    }
  }
  expect_near_all(dev.download_f32(p.dst), want, 1e-5f);
}

TEST(EtRmsNorm, OddRows) { check_rms_norm(67, 5, false, kSmallMask); }
TEST(EtRmsNorm, FusedWithWeight) { check_rms_norm(67, 9, true, kSmallMask); }
TEST(EtRmsNorm, AlignedRowsOnAll32Shires) { check_rms_norm(128, 70, true, kFullMask); }

// ---- ADD / MUL / SCALE ---------------------------------------------------------------------

void check_binary(int32_t op) {
  Dev& dev = Dev::get();
  const Shape shape{19, 7, 3, 1};
  const auto a = random_floats(19 * 7 * 3, 5);
  const auto b = random_floats(19 * 3, 6);  // (19, 1, 3): repeated over dim 1
  et_binary_params p{};
  p.src0 = dev.tensor(a, Type::F32, shape);
  p.src1 = dev.tensor(b, Type::F32, {19, 1, 3, 1});
  p.dst = dev.output(Type::F32, shape);
  p.op = op;
  dev.run("binary", p);
  std::vector<float> want(a.size());
  for (int64_t k = 0; k < 3; k++) {
    for (int64_t j = 0; j < 7; j++) {
      for (int64_t i = 0; i < 19; i++) {
        const float x = a[size_t((k * 7 + j) * 19 + i)], y = b[size_t(k * 19 + i)];
        want[size_t((k * 7 + j) * 19 + i)] = op == ET_BINARY_ADD ? x + y : x * y;
      }
    }
  }
  expect_near_all(dev.download_f32(p.dst), want, 0.0f);
}

TEST(EtBinary, AddBroadcastsSrc1) { check_binary(ET_BINARY_ADD); }
TEST(EtBinary, MulBroadcastsSrc1) { check_binary(ET_BINARY_MUL); }

TEST(EtScale, ScaleAndBias) {
  Dev& dev = Dev::get();
  const auto x = random_floats(23 * 11, 7);
  et_scale_params p{};
  p.src = dev.tensor(x, Type::F32, {23, 11, 1, 1});
  p.dst = dev.output(Type::F32, {23, 11, 1, 1});
  p.scale = 0.125f;
  p.bias = -3.0f;
  dev.run("scale", p);
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); i++) want[i] = x[i] * 0.125f - 3.0f;
  expect_near_all(dev.download_f32(p.dst), want, 1e-7f);
}

// ---- GET_ROWS / SET_ROWS -------------------------------------------------------------------

void check_get_rows(Type type, int64_t ne0 = 64) {
  Dev& dev = Dev::get();
  const int64_t rows = 10;
  const auto table = random_floats(size_t(ne0 * rows), 8);
  std::vector<uint8_t> raw;
  if (type == Type::F32) raw.assign(reinterpret_cast<const uint8_t*>(table.data()), reinterpret_cast<const uint8_t*>(table.data() + table.size()));
  else if (type == Type::F16) {
    const auto h = to_f16(table);
    raw.assign(reinterpret_cast<const uint8_t*>(h.data()), reinterpret_cast<const uint8_t*>(h.data() + h.size()));
  } else {
    raw = quantize(type, table, ne0);
  }
  const std::vector<int32_t> ids{3, 0, 9, 3, 7};
  et_get_rows_params p{};
  p.src = dev.tensor(raw, type, {ne0, rows, 1, 1});
  p.rows = dev.tensor(ids, Type::I32, {5, 1, 1, 1});
  p.dst = dev.output(Type::F32, {ne0, 5, 1, 1});
  dev.run("get_rows", p);
  std::vector<float> want(size_t(ne0) * ids.size());
  for (size_t r = 0; r < ids.size(); r++) dequantize_row(type, raw.data() + size_t(ids[r]) * row_size(type, ne0), want.data() + r * size_t(ne0), ne0);
  expect_near_all(dev.download_f32(p.dst), want, 0.0f);
}

TEST(EtGetRows, F32) { check_get_rows(Type::F32); }
TEST(EtGetRows, F16) { check_get_rows(Type::F16); }
TEST(EtGetRows, Q8_0) { check_get_rows(Type::Q8_0); }
TEST(EtGetRows, Q4_0) { check_get_rows(Type::Q4_0); }
TEST(EtGetRows, Q4_1) { check_get_rows(Type::Q4_1, 96); }
TEST(EtGetRows, Q5_0) { check_get_rows(Type::Q5_0, 160); }
TEST(EtGetRows, Q5_1) { check_get_rows(Type::Q5_1, 96); }
TEST(EtGetRows, IQ4_NL) { check_get_rows(Type::IQ4_NL, 32); }
TEST(EtGetRows, Q5_K) { check_get_rows(Type::Q5_K, 512); }
TEST(EtGetRows, Q6_K) { check_get_rows(Type::Q6_K, 768); }

void check_set_rows(Type dst_type) {
  Dev& dev = Dev::get();
  const int64_t ne0 = 40, cache_rows = 12, n = 4;  // 40 floats: rows straddle cache lines
  const auto src = random_floats(size_t(ne0 * n), 9);
  const std::vector<int64_t> ids{5, 0, 11, 6};
  et_set_rows_params p{};
  p.src = dev.tensor(src, Type::F32, {ne0, n, 1, 1});
  p.rows = dev.tensor(ids, Type::I64, {n, 1, 1, 1});
  // The cache starts with known contents: rows not named by ids must keep them.
  const auto before = random_floats(size_t(ne0 * cache_rows), 10);
  if (dst_type == Type::F32) p.dst = dev.tensor(before, Type::F32, {ne0, cache_rows, 1, 1});
  else p.dst = dev.tensor(to_f16(before), Type::F16, {ne0, cache_rows, 1, 1});
  dev.run("set_rows", p);
  std::vector<float> want = before;
  for (int64_t i = 0; i < n; i++) {
    for (int64_t e = 0; e < ne0; e++) want[size_t(ids[size_t(i)] * ne0 + e)] = src[size_t(i * ne0 + e)];
  }
  if (dst_type == Type::F32) {
    expect_near_all(dev.download_f32(p.dst), want, 0.0f);
  } else {
    EXPECT_EQ(dev.download_f16(p.dst), to_f16(want));
  }
}

TEST(EtSetRows, IntoF32) { check_set_rows(Type::F32); }
TEST(EtSetRows, IntoF16Cache) { check_set_rows(Type::F16); }

}  // namespace
}  // namespace hart::et::test
