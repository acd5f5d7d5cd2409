// F16 / BF16 weights in 32-row panels (rvv_panels.h; from 3 X rows rvv_panels_wide.h's widened
// groups, tested at 1, 3 and 9 panels: one, several and a part group), Q8_0 / Q4_0 / Q5_0 / IQ4_NL ones
// (rvv_panels_q.h), Q2_K / Q3_K / IQ4_XS ones (rvv_panels_levels.h), Q4_K / Q5_K ones
// (rvv_panels_q4_k.h) and Q6_K ones (rvv_panels_q6_k.h): the panel GEMV (1 X row) and GEMM
// (2..17 X rows: every remainder of a strip's 4 and several strips) against a double-precision
// reference and against the same set's row-major vec_dot, on random data with K odd and not a
// multiple of any vector length (the block types: odd block counts, past a chunk of block scales
// at VLEN 128; the super-block types: 1 and 3 super-blocks); and MUL_MAT through the CPU backend
// with N a multiple of 32 (packed) and not (its whole panels packed, the last rows read as
// stored). Run under QEMU at several VLENs by scripts/riscv-test; the panel tests skip on a core
// without V.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include "backend/cpu/arch/riscv/cpu_features.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/repack.h"
#include "quant/blocks.h"
#include "quant/quant.h"

namespace hart::cpu {
namespace {

constexpr Type kTypes[] = {Type::F16, Type::BF16};
// Odd lengths: a single column, tails shorter than any VLMAX, and a real model's width + 1.
constexpr int64_t kLengths[] = {1, 7, 33, 129, 577};
// The super-block types (rvv_panels_levels.h, rvv_panels_q4_k.h, rvv_panels_q6_k.h), against the
// double dot of their dequantized weights and Q8_K activations: 1 and 3 super-blocks.
constexpr Type kSuperBlockTypes[] = {Type::Q2_K, Type::Q3_K, Type::IQ4_XS, Type::Q4_K, Type::Q5_K, Type::Q6_K};
constexpr int64_t kSuperBlockLengths[] = {QK_K, 3 * QK_K};
// The 32-element block types (rvv_panels_q.h) against Q8_0 activations: 1, 3 and 19 blocks (more
// than the 8 scales one e16 vector converts at VLEN 128, and not a multiple of them).
constexpr Type kBlock32Types[] = {Type::Q8_0, Type::Q4_0, Type::Q5_0, Type::IQ4_NL};
constexpr int64_t kBlock32Lengths[] = {32, 3 * 32, 19 * 32};

// The K lengths a type is tested at.
std::vector<int64_t> lengths(Type t) {
  switch (type_info(t).block_size) {
    case QK_K: return {std::begin(kSuperBlockLengths), std::end(kSuperBlockLengths)};
    case 32: return {std::begin(kBlock32Lengths), std::end(kBlock32Lengths)};
    default: return {std::begin(kLengths), std::end(kLengths)};
  }
}

// Each float sum of K products is within this fraction of sum |w x| of the exact sum (one
// rounding per product and per addition, K <= 577: well above the worst case actually seen).
constexpr double kTolerance = 1e-5;

std::vector<float> random_floats(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// rows x k weights of type t (F16 / BF16) and their exact float values.
struct Weights {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};
Weights random_weights(Type t, int64_t k, int64_t rows, std::mt19937& rng) {
  Weights w{std::vector<uint8_t>(row_size(t, k) * size_t(rows)), random_floats(k * rows, rng)};
  quantize_row(t, w.values.data(), w.bytes.data(), k * rows);
  dequantize_row(t, w.bytes.data(), w.values.data(), k * rows);
  return w;
}

// sum_i w[i] x[i] in double, and sum_i |w[i] x[i]| (the scale of the float rounding error).
struct Exact {
  double sum = 0, scale = 0;
};
Exact exact_dot(const float* w, const float* x, int64_t k) {
  Exact e;
  for (int64_t i = 0; i < k; i++) {
    e.sum += double(w[i]) * double(x[i]);
    e.scale += std::fabs(double(w[i]) * double(x[i]));
  }
  return e;
}

std::vector<const Kernels*> sets_with(Type t) {
  std::vector<const Kernels*> out;
  for (const Kernels* k : available_kernels())
    if (k->panel[size_t(t)].rows > 0) out.push_back(k);
  return out;
}

TEST(RvvPanels, SetsHaveTheirLayouts) {
  if (!riscv::has_v()) GTEST_SKIP() << "this core has no V extension";
  for (const Kernels* k : available_kernels()) {
    if (k->name == "rvv" || k->name == "rvv_zvfh") {
      EXPECT_EQ(k->panel[size_t(Type::BF16)].rows, 32) << k->name;
      EXPECT_EQ(k->panel[size_t(Type::F16)].rows, k->name == "rvv_zvfh" ? 32 : 0) << k->name;
      for (Type t : {Type::Q8_0, Type::Q4_0, Type::Q5_0, Type::IQ4_NL, Type::Q2_K, Type::Q3_K, Type::Q4_K, Type::Q5_K,
                     Type::Q6_K, Type::IQ4_XS}) {
        EXPECT_EQ(k->panel[size_t(t)].rows, 32) << k->name << " " << type_name(t);
        // The panel GEMM takes the set's own activation rows.
        const bool k_quant = type_info(t).block_size == QK_K;
        EXPECT_EQ(k->dot[size_t(t)].act_type, k_quant ? Type::Q8_K : Type::Q8_0) << k->name;
      }
    }
  }
  EXPECT_FALSE(sets_with(Type::BF16).empty());
  if (riscv::has_zvfh()) EXPECT_FALSE(sets_with(Type::F16).empty());
}

// The pack layout itself: element k of panel row r at [k * 32 + r], bits unchanged.
TEST(RvvPanels, PackLayout) {
  const int64_t k = 5, rows = 32;
  std::vector<uint16_t> w(size_t(k * rows)), panel(w.size());
  for (size_t i = 0; i < w.size(); i++) w[i] = uint16_t(0x3c00 + i);
  pack_panel_16bit(k, int(rows), w.data(), size_t(k) * 2, panel.data());
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < k; c++) ASSERT_EQ(panel[size_t(c * rows + r)], w[size_t(r * k + c)]) << r << " " << c;
}

// Panel GEMV / GEMM of every set with a F16 / BF16 / block / level-panel layout, y rows wider than
// the output so that writes past the panels show.
TEST(RvvPanels, GemmMatchesReferenceAndRowMajorDots) {
  if (!riscv::has_v()) GTEST_SKIP() << "this core has no V extension";
  std::mt19937 rng(5);
  std::vector<Type> types(std::begin(kTypes), std::end(kTypes));
  types.insert(types.end(), std::begin(kBlock32Types), std::end(kBlock32Types));
  types.insert(types.end(), std::begin(kSuperBlockTypes), std::end(kSuperBlockTypes));
  for (Type t : types) {
    for (int64_t k : lengths(t)) {
      // 9 panels for the 16-bit floats: past the 8 of a widened group (rvv_panels_wide.h) at VLEN
      // 1024, two whole groups and a tail at 512, four at 256.
      const std::vector<int64_t> panel_counts =
          type_info(t).block_size == 1 ? std::vector<int64_t>{1, 3, 9} : std::vector<int64_t>{1, 3};
      for (int64_t n_panels : panel_counts) {
        // One weight for every set (all RISC-V panels have 32 rows, SetsHaveTheirLayouts):
        // quantizing random weights is much of this test's time under QEMU.
        const int64_t n = n_panels * 32;
        const Weights w = random_weights(t, k, n, rng);
        for (const Kernels* set : sets_with(t)) {
          const PanelKernel& pk = set->panel[size_t(t)];
          const DotKernel& d = set->dot[size_t(t)];
          ASSERT_EQ(pk.rows, 32) << set->name << " " << type_name(t);
          const size_t w_row = row_size(t, k), x_row = row_size(d.act_type, k);
          std::vector<uint8_t> panels(w.bytes.size());
          const size_t panel_stride = size_t(pk.rows) * w_row;
          for (int64_t p = 0; p < n_panels; p++)
            pk.pack(k, pk.rows, w.bytes.data() + size_t(p) * panel_stride, w_row, panels.data() + size_t(p) * panel_stride);
          // 17 X rows and their results; the GEMM of nx rows takes the first nx.
          constexpr int64_t kRowsX = 17;
          std::vector<uint8_t> x(x_row * size_t(kRowsX));
          std::vector<float> xf(size_t(k * kRowsX));  // the X rows' exact values after conversion
          for (int64_t j = 0; j < kRowsX; j++) {
            const std::vector<float> row = random_floats(k, rng);
            uint8_t* xj = x.data() + size_t(j) * x_row;
            if (d.act_type == Type::F32)
              std::memcpy(xj, row.data(), x_row);
            else
              set->from_f32[size_t(d.act_type)](row.data(), xj, k);
            dequantize_row(d.act_type, xj, xf.data() + size_t(j * k), k);
          }
          std::vector<Exact> exact(size_t(n * kRowsX));
          std::vector<float> row_major(exact.size());
          for (int64_t j = 0; j < kRowsX; j++)
            for (int64_t i = 0; i < n; i++) {
              exact[size_t(j * n + i)] = exact_dot(w.values.data() + size_t(i * k), xf.data() + size_t(j * k), k);
              d.vec_dot(k, &row_major[size_t(j * n + i)], w.bytes.data() + size_t(i) * w_row, x.data() + size_t(j) * x_row);
            }
          // Strips take up to 4 X rows (S::kMaxT): every remainder, two whole groups and a
          // tail, and many groups.
          for (int64_t nx : {1, 2, 3, 4, 5, 6, 7, 8, 9, 17}) {
            const size_t y_stride = size_t(n) + 3;
            std::vector<float> y(y_stride * size_t(nx), -7.0f);
            std::vector<std::byte> scratch(pk.scratch_bytes(k, nx));  // exactly: ASan sees an overrun
            pk.gemm(k, n_panels, nx, panels.data(), panel_stride, x.data(), x_row, y.data(), y_stride, scratch.data());
            for (int64_t j = 0; j < nx; j++) {
              for (int64_t i = 0; i < n; i++) {
                const float got = y[size_t(j) * y_stride + size_t(i)];
                const Exact& e = exact[size_t(j * n + i)];
                const double tol = kTolerance * e.scale + 1e-30;
                ASSERT_NEAR(got, e.sum, tol) << set->name << " " << type_name(t) << " k=" << k << " row " << i
                                             << " of " << n << ", X row " << j << " of " << nx;
                ASSERT_NEAR(got, row_major[size_t(j * n + i)], 2 * tol) << set->name << " " << type_name(t) << " k=" << k;
              }
              for (size_t i = size_t(n); i < y_stride; i++) ASSERT_EQ(y[size_t(j) * y_stride + i], -7.0f);
            }
          }
        }
      }
    }
  }
}

// MUL_MAT on the selected set: N = 96 packs (when the set has the layout), N = 80 packs its two
// whole panels and reads its last 16 rows as stored; 1 (decode), 5 and 17 tokens; both against
// the double reference. K: odd for F16 / BF16, 5 blocks for the block types, 3 super-blocks.
TEST(RvvPanels, MulMatPackedAndFallback) {
  const Kernels& set = kernels();
  std::mt19937 rng(9);
  std::vector<Type> types(std::begin(kTypes), std::end(kTypes));
  types.insert(types.end(), std::begin(kBlock32Types), std::end(kBlock32Types));
  types.insert(types.end(), std::begin(kSuperBlockTypes), std::end(kSuperBlockTypes));
  for (Type t : types) {
    for (int64_t n : {96, 80}) {
      // One weight for the token counts: quantizing random weights is most of this test's time
      // under QEMU (the K-quant and IQ quantizers' searches in emulated floating point).
      const int64_t block = type_info(t).block_size;
      const int64_t k = block == QK_K ? 3 * QK_K : type_info(t).quantized ? 5 * block : 129;
      const Weights w = random_weights(t, k, n, rng);
      for (int64_t m : {1, 5, 17}) {
        const std::vector<float> x = random_floats(k * m, rng);
        std::vector<float> y(size_t(n * m));
        Context ctx;
        const int64_t wne[] = {k, n, 1, 1}, xne[] = {k, m, 1, 1};
        Tensor* wt = ctx.new_leaf(t, wne, const_cast<uint8_t*>(w.bytes.data()));
        wt->flags |= kFlagWeight;
        Tensor* yt = mul_mat(ctx, wt, ctx.new_leaf(Type::F32, xne, const_cast<float*>(x.data())));
        yt->data = y.data();
        CpuBackend backend(2);
        backend.compute(build_graph({yt}));
        const PanelKernel& pk = set.panel[size_t(t)];
        const int64_t packed_rows = repack_enabled() && pk.rows > 0 ? n / pk.rows * pk.rows : 0;
        EXPECT_EQ(backend.repacked_bytes(), w.bytes.size() / size_t(n) * size_t(packed_rows))
            << set.name << " " << type_name(t) << " n=" << n;
        // X as the set's activation type sees it (BF16 rounds X, F16 takes it as it is).
        const Type act = set.dot[size_t(t)].act_type;
        std::vector<uint8_t> xa(row_size(act, k));
        std::vector<float> xr(static_cast<size_t>(k));
        for (int64_t j = 0; j < m; j++) {
          const float* xj = x.data() + size_t(j * k);
          if (act != Type::F32) {
            quantize_row(act, xj, xa.data(), k);
            dequantize_row(act, xa.data(), xr.data(), k);
            xj = xr.data();
          }
          for (int64_t i = 0; i < n; i++) {
            const Exact e = exact_dot(w.values.data() + size_t(i * k), xj, k);
            ASSERT_NEAR(y[size_t(j * n + i)], e.sum, kTolerance * e.scale + 1e-30)
                << set.name << " " << type_name(t) << " n=" << n << " m=" << m << " row " << i << " token " << j;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace hart::cpu
