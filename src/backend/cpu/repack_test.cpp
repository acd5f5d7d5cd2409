// Repacked weights (repack.h): every kernel set's panel GEMM against the same set's row-major
// dot products (the same integer sums, so equal up to float summation order), and MUL_MAT on a
// backend that packs (a weight) against one that cannot (the same bytes, not a weight).
#include "backend/cpu/repack.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/sets_under_test.h"
#include "common/fp16.h"
#include "quant/blocks.h"
#include "quant/quant.h"

namespace hart::cpu {
namespace {

std::vector<uint8_t> random_rows(Type t, int64_t k, int64_t rows, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> f(static_cast<size_t>(k));
  std::vector<uint8_t> out(row_size(t, k) * size_t(rows));
  for (int64_t r = 0; r < rows; r++) {
    for (float& v : f) v = dist(rng);
    quantize_row(t, f.data(), out.data() + size_t(r) * row_size(t, k), k);
  }
  return out;
}

// `tol`: a looser bound where the sums are float sums (order_tolerance).
void expect_close(float got, float want, const char* what, int64_t i, int64_t j, double tol = 0) {
  ASSERT_NEAR(got, want, std::max(1e-5 * (1.0 + std::fabs(want)), tol)) << what << " row " << i << " token " << j;
}

// The panel kernels add the same products (float, or per-block integer sums times scales) in
// another order than vec_dot: the rounding error grows with sum |w x| over K terms, not with the
// result (which may be near 0).
double order_tolerance(Type type, Type act, const uint8_t* w, const uint8_t* x, int64_t k) {
  std::vector<float> wf(static_cast<size_t>(k)), xf(static_cast<size_t>(k));
  dequantize_row(type, w, wf.data(), k);
  dequantize_row(act, x, xf.data(), k);
  double abs_sum = 0;
  for (size_t i = 0; i < wf.size(); i++) abs_sum += std::fabs(double(wf[i]) * double(xf[i]));
  return 1e-6 * abs_sum;
}

// Elements per K block of the tests: the type's block, 32 for the float types.
int64_t block_elems(Type t) { return std::max<int64_t>(type_info(t).block_size, 32); }

std::vector<const Kernels*> sets_with_panels() {
  std::vector<const Kernels*> out;
  for (const Kernels* k : sets_under_test())
    for (const PanelKernel& p : k->panel)
      if (p.rows > 0) {
        out.push_back(k);
        break;
      }
  return out;
}

class PanelSet : public ::testing::TestWithParam<const Kernels*> {
 protected:
  const Kernels& k() const { return *GetParam(); }
  std::mt19937 rng{7};
};

// Several K per type (blocks of 32 elements for the float types); 1 and 3 panels; 1..17
// activation rows; y rows wider than the output so that writes past the tile show.
TEST_P(PanelSet, GemmMatchesRowMajorDots) {
  for (uint32_t t = 0; t < kTypeCount; t++) {
    const PanelKernel& pk = k().panel[t];
    if (pk.rows == 0) continue;
    const Type type = Type(t);
    const DotKernel& d = k().dot[t];
    // K of 1, 7 and 33 blocks of 32 (odd, past any scale chunk), and for the float types also an
    // odd K (the "_pairs" layout's single last column); 1, 3 and 5 super-blocks.
    const bool is_float = !type_info(type).quantized;
    const std::vector<int64_t> k_list = type_info(type).block_size == 256 ? std::vector<int64_t>{256, 768, 1280}
                                        : is_float ? std::vector<int64_t>{32, 224, 1056, 69}
                                                   : std::vector<int64_t>{32, 224, 1056};
    for (int64_t k_len : k_list) {
      for (int64_t n_panels : {1, 3}) {
        const int64_t n = n_panels * pk.rows;
        const size_t w_row = row_size(type, k_len), x_row = row_size(d.act_type, k_len);
        const std::vector<uint8_t> w = random_rows(type, k_len, n, rng);
        std::vector<uint8_t> panels(w.size());
        for (int64_t p = 0; p < n_panels; p++)
          pk.pack(k_len, pk.rows, w.data() + size_t(p * pk.rows) * w_row, w_row,
                  panels.data() + size_t(p * pk.rows) * w_row);
        // 17 X rows and each (W row, X row) dot of the set's vec_dot; the GEMM of nx rows takes
        // the first nx.
        constexpr int64_t kRowsX = 17;
        std::vector<uint8_t> x(x_row * size_t(kRowsX));
        std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
        std::vector<float> xf(static_cast<size_t>(k_len));
        for (int64_t j = 0; j < kRowsX; j++) {
          for (float& v : xf) v = dist(rng);
          k().from_f32[size_t(d.act_type)](xf.data(), x.data() + size_t(j) * x_row, k_len);
        }
        std::vector<float> want(size_t(n * kRowsX));
        std::vector<double> tol(want.size());
        for (int64_t j = 0; j < kRowsX; j++)
          for (int64_t i = 0; i < n; i++) {
            const uint8_t* wi = w.data() + size_t(i) * w_row;
            const uint8_t* xj = x.data() + size_t(j) * x_row;
            d.vec_dot(k_len, &want[size_t(j * n + i)], wi, xj);
            tol[size_t(j * n + i)] = order_tolerance(type, d.act_type, wi, xj, k_len);
          }
        // Every remainder of a tile of up to 8 X rows, and several tiles.
        for (int64_t nx : {1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17}) {
          const size_t y_stride = size_t(n) + 5;
          std::vector<float> y(y_stride * size_t(nx), -7.0f);
          std::vector<std::byte> scratch(pk.scratch_bytes(k_len, nx));  // exactly: ASan sees an overrun
          pk.gemm(k_len, n_panels, nx, panels.data(), size_t(pk.rows) * w_row, x.data(), x_row, y.data(), y_stride,
                  scratch.data());
          for (int64_t j = 0; j < nx; j++) {
            for (int64_t i = 0; i < n; i++)
              expect_close(y[size_t(j) * y_stride + size_t(i)], want[size_t(j * n + i)], type_name(type).data(), i, j,
                           tol[size_t(j * n + i)]);
            for (size_t i = size_t(n); i < y_stride; i++) ASSERT_EQ(y[size_t(j) * y_stride + i], -7.0f);
          }
        }
      }
    }
  }
}

// The "_bytes" layouts (repack.h) on every build, whether or not a set uses them: per block column
// the R fp16 scales (bits unchanged), then byte j of row r at [j * R + r] (Q4_0: ^ 0x88).
TEST(Repack, BytePanelLayout) {
  std::mt19937 rng(13);
  constexpr int kRows = 32;
  constexpr int64_t kBlocks = 3;
  struct Case {
    Type type;
    PackFn pack;
    uint8_t xor_mask;
  };
  for (const Case& c : {Case{Type::Q8_0, pack_panel_q8_0_bytes, 0}, Case{Type::Q4_0, pack_panel_q4_0_bytes, 0x88},
                        Case{Type::IQ4_NL, pack_panel_iq4_nl_bytes, 0}, Case{Type::Q4_K, pack_panel_q4_K_bytes, 0}}) {
    const int64_t k_len = kBlocks * block_elems(c.type);
    const size_t w_row = row_size(c.type, k_len), block = w_row / kBlocks;
    const size_t halves = c.type == Type::Q4_K ? 2 : 1;  // fp16 d (and dmin) lead each block
    const std::vector<uint8_t> w = random_rows(c.type, k_len, kRows, rng);
    std::vector<uint8_t> panel(w.size());
    c.pack(k_len, kRows, w.data(), w_row, panel.data());
    for (int64_t b = 0; b < kBlocks; b++) {
      const uint8_t* column = panel.data() + size_t(b) * block * kRows;
      for (size_t r = 0; r < kRows; r++) {
        const uint8_t* in = w.data() + r * w_row + size_t(b) * block;
        for (size_t h = 0; h < halves; h++)
          ASSERT_EQ(std::memcmp(column + 2 * (h * kRows + r), in + 2 * h, 2), 0) << type_name(c.type) << " row " << r;
        for (size_t j = 0; j < block - 2 * halves; j++)
          ASSERT_EQ(column[2 * halves * kRows + j * kRows + r], in[2 * halves + j] ^ c.xor_mask)
              << type_name(c.type) << " block " << b << " row " << r << " byte " << j;
      }
    }
  }
}

// The 2-byte float "_pairs" layout: pair p of row r in 32-bit lane r of column pair p; an odd
// last element single, at [(n - 1) * R + r].
TEST(Repack, PairPanelLayout) {
  constexpr int kRows = 32;
  for (int64_t n : {2, 6, 7}) {
    std::vector<uint16_t> w(size_t(n * kRows)), panel(w.size());
    for (size_t i = 0; i < w.size(); i++) w[i] = uint16_t(i * 2654435761u >> 7);
    pack_panel_16bit_pairs(n, kRows, w.data(), size_t(n) * 2, panel.data());
    for (int64_t r = 0; r < kRows; r++)
      for (int64_t k = 0; k < n; k++) {
        const uint16_t want = w[size_t(r * n + k)];
        const size_t at = k + 1 < n || n % 2 == 0 ? size_t(((k / 2) * kRows + r) * 2 + k % 2) : size_t(k * kRows + r);
        ASSERT_EQ(panel[at], want) << "n=" << n << " row " << r << " element " << k;
      }
  }
}

// Q5_0 "_masks": the scales and qs bytes as "_bytes", and bit r of element e's mask = NOT bit e of
// row r's qh.
TEST(Repack, Q5MaskPanelLayout) {
  std::mt19937 rng(17);
  constexpr int kRows = 32;
  constexpr int64_t kBlocks = 2;
  const int64_t k_len = kBlocks * QK5_0;
  const size_t w_row = row_size(Type::Q5_0, k_len);
  const std::vector<uint8_t> w = random_rows(Type::Q5_0, k_len, kRows, rng);
  std::vector<uint8_t> panel(w.size());
  pack_panel_q5_0_masks(k_len, kRows, w.data(), w_row, panel.data());
  for (int64_t b = 0; b < kBlocks; b++) {
    const uint8_t* column = panel.data() + size_t(b) * sizeof(block_q5_0) * kRows;
    for (size_t r = 0; r < kRows; r++) {
      const auto& blk = reinterpret_cast<const block_q5_0*>(w.data() + r * w_row)[b];
      ASSERT_EQ(std::memcmp(column + 2 * r, &blk.d, 2), 0) << "row " << r;
      uint32_t qh;
      std::memcpy(&qh, blk.qh, sizeof qh);
      for (int e = 0; e < QK5_0; e++)
        ASSERT_EQ(column[2 * kRows + size_t(e) * kRows / 8 + r / 8] >> (r % 8) & 1, ~qh >> e & 1)
            << "block " << b << " row " << r << " element " << e;
      for (int j = 0; j < QK5_0 / 2; j++) ASSERT_EQ(column[6 * kRows + size_t(j) * kRows + r], blk.qs[j]) << "row " << r;
    }
  }
}

// Q6_K "_bytes": d and the group scales moved, and every weight's level recovered from the level
// bytes as the kernel does (top 6 bits of one byte, or the low 2 bits of three) equals the level
// read from ql / qh as the format defines it.
TEST(Repack, Q6KBytePanelLayout) {
  std::mt19937 rng(19);
  constexpr int kRows = 32;
  constexpr int64_t kBlocks = 2;
  const int64_t k_len = kBlocks * QK_K;
  const size_t w_row = row_size(Type::Q6_K, k_len);
  const std::vector<uint8_t> w = random_rows(Type::Q6_K, k_len, kRows, rng);
  std::vector<uint8_t> panel(w.size());
  pack_panel_q6_K_bytes(k_len, kRows, w.data(), w_row, panel.data());
  for (int64_t b = 0; b < kBlocks; b++) {
    const uint8_t* column = panel.data() + size_t(b) * sizeof(block_q6_K) * kRows;
    const uint8_t* levels = column + 18 * kRows;
    for (size_t r = 0; r < kRows; r++) {
      const auto& blk = reinterpret_cast<const block_q6_K*>(w.data() + r * w_row)[b];
      ASSERT_EQ(std::memcmp(column + 2 * r, &blk.d, 2), 0) << "row " << r;
      for (int g = 0; g < 16; g++) ASSERT_EQ(int8_t(column[(2 + size_t(g)) * kRows + r]), blk.scales[g]) << "row " << r;
      const auto byte = [&](int j) { return levels[size_t(j) * kRows + r]; };
      for (int e = 0; e < QK_K; e++) {
        const int half = e / 128, quarter = e % 128 / 32, l = e % 32;
        const int want = ((blk.ql[64 * half + l + 32 * (quarter % 2)] >> (4 * (quarter / 2))) & 0xF) |
                         ((blk.qh[32 * half + l] >> (2 * quarter)) & 3) << 4;
        const int g = e / 16, t = e % 16 / 4, c = e % 4;
        int v = 0;
        if (t < 3)
          v = byte(12 * g + 4 * t + c) >> 2;
        else
          for (int i = 0; i < 3; i++) v |= (byte(12 * g + 4 * i + c) & 3) << (2 * i);
        ASSERT_EQ(v ^ 32, want) << "block " << b << " row " << r << " weight " << e;
      }
    }
  }
}

// Q2_K, Q3_K, IQ4_XS, IQ4_NL "_bytes" and Q5_K "_masks": every weight's value read from the panel
// as repack.h describes it (fp16 fields at the front, scale bytes as stored, re-cut level bytes;
// IQ4_NL's and Q5_K's nibbles as stored, Q5_K's fifth bits from the row masks) equals the
// reference dequantization of the row.
TEST(Repack, LevelBytePanelLayouts) {
  std::mt19937 rng(23);
  constexpr size_t kRows = 32;
  constexpr int64_t kBlocks = 2;
  for (const Type type : {Type::Q2_K, Type::Q3_K, Type::IQ4_XS, Type::IQ4_NL, Type::Q5_K}) {
    const int64_t elems = type_info(type).block_size;  // per block
    const int64_t k_len = kBlocks * elems;
    const size_t w_row = row_size(type, k_len), block = w_row / kBlocks;
    const std::vector<uint8_t> w = random_rows(type, k_len, kRows, rng);
    std::vector<uint8_t> panel(w.size());
    const PackFn pack = type == Type::Q2_K     ? pack_panel_q2_K_bytes
                        : type == Type::Q3_K   ? pack_panel_q3_K_bytes
                        : type == Type::IQ4_XS ? pack_panel_iq4_xs_bytes
                        : type == Type::Q5_K   ? pack_panel_q5_K_masks
                                               : pack_panel_iq4_nl_bytes;
    pack(k_len, kRows, w.data(), w_row, panel.data());
    const size_t halves = type == Type::Q2_K || type == Type::Q5_K ? 2 : 1;
    std::vector<float> want(static_cast<size_t>(k_len));
    for (size_t r = 0; r < kRows; r++) {
      dequantize_row(type, w.data() + r * w_row, want.data(), k_len);
      for (int64_t b = 0; b < kBlocks; b++) {
        const uint8_t* column = panel.data() + size_t(b) * block * kRows;
        const auto half = [&](size_t h) {
          fp16_t v;
          std::memcpy(&v, column + 2 * (h * kRows + r), 2);
          return fp16_to_f32(v);
        };
        const auto byte = [&](int j) { return int(column[2 * halves * kRows + size_t(j) * kRows + r]); };
        for (int e = 0; e < elems; e++) {
          const int g = e / 16;
          float got;
          if (type == Type::Q2_K) {
            const int level = byte(16 + e / 4) >> (2 * (e % 4)) & 3;
            got = half(0) * float(byte(g) & 0xF) * float(level) - half(1) * float(byte(g) >> 4);
          } else if (type == Type::Q3_K) {
            const int scale = ((byte(g % 8) >> (g < 8 ? 0 : 4) & 0xF) | (byte(8 + g % 4) >> (2 * (g / 4)) & 3) << 4) - 32;
            const int m = e / 8, i = e % 8;
            const auto tri = [&](int t) { return byte(12 + 3 * m + t); };
            const int u = i < 6 ? tri(i / 2) >> (3 * (i % 2)) & 7 : (tri(i - 6) >> 6) | (tri(2) >> (i == 6 ? 6 : 7) & 1) << 2;
            got = half(0) * float(scale) * float(u - 4);
          } else if (type == Type::IQ4_NL) {
            got = half(0) * float(kIq4Levels[byte(e % 16) >> (4 * (e / 16)) & 0xF]);
          } else if (type == Type::Q5_K) {
            // Sub-block s's 6-bit scale and min from the 12 scale bytes; 256 row masks of
            // kRows / 8 bytes (32 level-byte rows) after them, then qs.
            const int s = e / 32;
            const int scale = s < 4 ? byte(s) & 63 : (byte(s + 4) & 0xF) | (byte(s - 4) >> 6) << 4;
            const int min = s < 4 ? byte(s + 4) & 63 : (byte(s + 4) >> 4) | (byte(s) >> 6) << 4;
            const int fifth = column[(2 * halves + 12) * kRows + size_t(e) * kRows / 8 + r / 8] >> (r % 8) & 1;
            const int level = (byte(12 + 32 + 32 * (e / 64) + e % 32) >> (4 * (e % 64 / 32)) & 0xF) | fifth << 4;
            got = half(0) * float(scale) * float(level) - half(1) * float(min);
          } else {
            const int ib = e / 32;
            const int scale = ((byte(2 + ib / 2) >> (4 * (ib % 2)) & 0xF) | (byte(ib / 4) >> (2 * (ib % 4)) & 3) << 4) - 32;
            got = half(0) * float(scale) * float(kIq4Levels[byte(6 + e / 2) >> (4 * (e % 2)) & 0xF]);
          }
          // The reference may fuse its multiply and subtract differently.
          ASSERT_NEAR(got, want[size_t(b * elems + e)], 1e-6) << type_name(type) << " block " << b << " row " << r << " weight " << e;
        }
      }
    }
  }
}

// A build or core without any panel layout (generic, RISC-V without V) has no set to test here.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PanelSet);
INSTANTIATE_TEST_SUITE_P(Sets, PanelSet, ::testing::ValuesIn(sets_with_panels()),
                         [](const auto& info) { return info.param->name; });

// Y = W X on the selected set: W a weight (packed when the layout allows) against the same bytes
// as a plain tensor (row-major). Rows of W: a multiple of every panel height, one that is a
// multiple of 8 only (8-row sets pack it all, 16- and 32-row ones their whole panels and the last
// rows as stored), an odd count past two panels (a vocabulary such as 49155), and fewer rows than
// any panel (never packed). The row-major product is computed once, for the most tokens; each
// token count's packed product is checked against its first rows.
TEST(Repack, MulMatMatchesRowMajorPath) {
  const Kernels& k = kernels();
  std::mt19937 rng(11);
  // Token counts: decode, a remainder of every tile height, past one X tile of 64; 1 and 2 threads.
  constexpr std::pair<int64_t, int> kTokens[] = {{1, 1}, {5, 2}, {17, 1}, {70, 2}};
  constexpr int64_t kMaxTokens = std::end(kTokens)[-1].first;
  for (Type type : {Type::Q4_0, Type::Q5_0, Type::Q8_0, Type::Q2_K, Type::Q3_K, Type::Q4_K, Type::Q5_K, Type::Q6_K,
                    Type::IQ4_XS, Type::IQ4_NL, Type::F16, Type::BF16}) {
    for (int64_t n : {64, 40, 75, 5}) {
      // Several blocks: 7 of 32 elements, 3 super-blocks of 256 (first, middle, last; more only
      // lengthen the QEMU passes, where this test was the longest at VLEN 256).
      const int64_t k_len = (block_elems(type) >= 256 ? 3 : 7) * block_elems(type);
      std::vector<uint8_t> w = random_rows(type, k_len, n, rng);
      std::vector<float> x(static_cast<size_t>(k_len * kMaxTokens));
      std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
      for (float& v : x) v = dist(rng);
      // Y (n, m) = W X for the first m X rows on a fresh backend, W's bytes as a weight (packed)
      // or as a plain tensor, and the bytes it repacked. `again` computes a second graph, which
      // must reuse the packed copy.
      struct Product {
        std::vector<float> y;
        size_t packed_bytes;
      };
      auto mul = [&](int64_t m, int threads, bool as_weight, bool again) {
        Context ctx;
        const int64_t wne[] = {k_len, n, 1, 1}, xne[] = {k_len, m, 1, 1};
        Tensor* wt = ctx.new_leaf(type, wne, w.data());
        if (as_weight) wt->flags |= kFlagWeight;
        Tensor* yt = mul_mat(ctx, wt, ctx.new_leaf(Type::F32, xne, x.data()));
        Product p{std::vector<float>(size_t(n * m), 0.0f), 0};
        yt->data = p.y.data();
        CpuBackend backend(threads);
        backend.compute(build_graph({yt}));
        if (again) backend.compute(build_graph({yt}));
        p.packed_bytes = backend.repacked_bytes();
        return p;
      };
      const std::vector<float> want = mul(kMaxTokens, 2, false, false).y;
      // F16 sums float products in another order, Q2_K / Q4_K / Q5_K their scales and mins terms (which
      // may cancel), and the x86 Q3_K / IQ4_XS panels scale a super-block's integer sum as one
      // float where the row dots scale it as 8 lane sums (terms that may cancel too): bound by
      // 1e-6 sum |w x| (|w| <= 1, |x| <= 2).
      const bool float_order = type == Type::F16 || type == Type::BF16 || type == Type::Q2_K || type == Type::Q3_K ||
                               type == Type::Q4_K || type == Type::Q5_K || type == Type::IQ4_XS;
      const double float_sum_tol = float_order ? 2e-6 * double(k_len) : 0;
      const PanelKernel& pk = k.panel[size_t(type)];
      const int64_t packed_rows = repack_enabled() && pk.rows > 0 ? n / pk.rows * pk.rows : 0;
      for (const auto& [m, threads] : kTokens) {
        const Product got = mul(m, threads, true, m == 1);
        EXPECT_EQ(got.packed_bytes, w.size() / size_t(n) * size_t(packed_rows))
            << k.name << " " << type_name(type) << " n=" << n << " m=" << m;
        for (int64_t j = 0; j < m; j++)
          for (int64_t i = 0; i < n; i++)
            expect_close(got.y[size_t(j * n + i)], want[size_t(j * n + i)], type_name(type).data(), i, j, float_sum_tol);
      }
    }
  }
}

TEST(Repack, BytesAreReleasedWithTheBackend) {
  const PanelKernel& pk = kernels().panel[size_t(Type::Q4_0)];
  if (pk.rows == 0 || !repack_enabled()) GTEST_SKIP() << "no Q4_0 panel layout in " << kernels().name;
  std::mt19937 rng(3);
  std::vector<uint8_t> w = random_rows(Type::Q4_0, 64, kMaxPanelRows, rng);
  std::vector<float> x(64, 0.5f), y(kMaxPanelRows);
  Context ctx;
  const int64_t wne[] = {64, kMaxPanelRows, 1, 1}, xne[] = {64, 1, 1, 1};
  Tensor* wt = ctx.new_leaf(Type::Q4_0, wne, w.data());
  wt->flags |= kFlagWeight;
  Tensor* yt = mul_mat(ctx, wt, ctx.new_leaf(Type::F32, xne, x.data()));
  yt->data = y.data();
  const size_t before = repacked_bytes();
  {
    CpuBackend backend(1);
    backend.compute(build_graph({yt}));
    EXPECT_EQ(repacked_bytes(), before + w.size());
  }
  EXPECT_EQ(repacked_bytes(), before);
}

}  // namespace
}  // namespace hart::cpu
