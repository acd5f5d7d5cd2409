// Device kernels of the attention path (ROPE, SOFT_MAX, GLU, CPY/CONT, FLASH_ATTN_EXT,
// PAGED_ATTN) against plain host references.
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "backend/et/device/kernel_test_util.h"
#include "common/fp16.h"

namespace hart::et::test {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// ---- ROPE ----------------------------------------------------------------------------------

// One row (head) of d values rotated at position pos (freq_base 10000, freq_scale 0.5, attn_factor 1.25).
void rope_reference(const float* in, float* out, int32_t mode, int64_t d, int32_t n_dims, int32_t pos) {
  for (int64_t i = n_dims; i < d; i++) out[i] = in[i];
  for (int64_t k = 0; k < n_dims / 2; k++) {
    const double theta = 0.5 * pos * std::pow(10000.0, -2.0 * double(k) / n_dims);
    const double c = std::cos(theta) * 1.25, s = std::sin(theta) * 1.25;
    const int64_t i0 = mode == ET_ROPE_NEOX ? k : 2 * k, i1 = mode == ET_ROPE_NEOX ? k + n_dims / 2 : 2 * k + 1;
    out[i0] = float(in[i0] * c - in[i1] * s);
    out[i1] = float(in[i0] * s + in[i1] * c);
  }
}

void check_rope(int32_t mode, int64_t d, int32_t n_dims, uint64_t mask) {
  Dev& dev = Dev::get();
  const int64_t heads = 3, tokens = 5;
  const auto x = random_floats(size_t(d * heads * tokens), 11);
  const std::vector<int32_t> pos{0, 1, 7, 20, 33};
  et_rope_params p{};
  p.src = dev.tensor(x, Type::F32, {d, heads, tokens, 1});
  p.pos = dev.tensor(pos, Type::I32, {tokens, 1, 1, 1});
  p.dst = dev.output(Type::F32, {d, heads, tokens, 1});
  p.n_dims = n_dims;
  p.mode = mode;
  p.freq_base = 10000.0f;
  p.freq_scale = 0.5f;
  p.attn_factor = 1.25f;
  dev.run("rope", p, mask);
  std::vector<float> want(x.size());
  for (int64_t row = 0; row < heads * tokens; row++) {
    rope_reference(x.data() + row * d, want.data() + row * d, mode, d, n_dims, pos[size_t(row / heads)]);
  }
  expect_near_all(dev.download_f32(p.dst), want, 2e-5f);
}

TEST(EtRope, Normal) { check_rope(ET_ROPE_NORMAL, 64, 64, kSmallMask); }
TEST(EtRope, NeoxPartialDims) { check_rope(ET_ROPE_NEOX, 40, 24, kSmallMask); }
TEST(EtRope, NeoxOnAll32Shires) { check_rope(ET_ROPE_NEOX, 128, 128, kFullMask); }

// The fusions: each head RMS-normalized and weighted first (Qwen3's Q/K norms), and/or the result
// also stored into a cache at the token's row (SET_ROWS of K).
struct RopeFusion {
  int32_t mode;
  int64_t d;
  int32_t n_dims;
  bool norm;
  std::optional<Type> cache;  // the cache's type, or no store
  uint64_t mask = kSmallMask;
};

void check_rope_fused(const RopeFusion& c) {
  Dev& dev = Dev::get();
  const int64_t heads = 4, tokens = 3, slots = 9, width = c.d * heads, d = c.d;
  const auto x = random_floats(size_t(d * heads * tokens), 13, -2.0f, 2.0f);
  const auto w = random_floats(size_t(d), 14);
  const auto cache0 = random_floats(size_t(width * slots), 15);
  const std::vector<int32_t> pos{3, 4, 90}, rows{5, 0, 7};
  const bool store = c.cache.has_value();
  et_rope_params p{};
  p.src = dev.tensor(x, Type::F32, {d, heads, tokens, 1});
  p.pos = dev.tensor(pos, Type::I32, {tokens, 1, 1, 1});
  p.dst = dev.output(Type::F32, {d, heads, tokens, 1});
  p.n_dims = c.n_dims;
  p.mode = c.mode;
  p.freq_base = 10000.0f;
  p.freq_scale = 0.5f;
  p.attn_factor = 1.25f;
  p.norm_weight = dev.tensor(w, Type::F32, {d, 1, 1, 1});
  p.norm_eps = 1e-6f;
  p.has_norm = c.norm;
  if (store) {
    p.cache = c.cache == Type::F16 ? dev.tensor(to_f16(cache0), Type::F16, {width, slots, 1, 1})
                                   : dev.tensor(cache0, Type::F32, {width, slots, 1, 1});
    p.store_rows = dev.tensor(rows, Type::I32, {tokens, 1, 1, 1});
    p.has_store = 1;
  }
  dev.run("rope", p, c.mask);

  std::vector<float> want(x.size()), cache = c.cache == Type::F16 ? from_f16(to_f16(cache0)) : cache0;
  for (int64_t row = 0; row < heads * tokens; row++) {
    std::vector<float> in(x.begin() + row * d, x.begin() + (row + 1) * d);
    if (c.norm) {
      double ss = 0;
      for (float v : in) ss += double(v) * v;
      const double scale = 1.0 / std::sqrt(ss / double(d) + 1e-6);
      for (int64_t i = 0; i < d; i++) in[size_t(i)] = float(in[size_t(i)] * scale * w[size_t(i)]);
    }
    const int64_t t = row / heads;
    rope_reference(in.data(), want.data() + row * d, c.mode, d, c.n_dims, pos[size_t(t)]);
    for (int64_t i = 0; i < d; i++) cache[size_t(rows[size_t(t)] * width + row % heads * d + i)] = want[size_t(row * d + i)];
  }
  expect_near_all(dev.download_f32(p.dst), want, 2e-5f);
  if (!store) return;
  if (c.cache == Type::F16) {
    expect_near_all(from_f16(dev.download_f16(p.cache)), from_f16(to_f16(cache)), 1e-3f);
  } else {
    expect_near_all(dev.download_f32(p.cache), cache, 2e-5f);
  }
}

TEST(EtRope, NormalizedFirstOddHead) { check_rope_fused({ET_ROPE_NEOX, 40, 24, true, std::nullopt}); }
TEST(EtRope, NormalizedAndStoredIntoAnF16Cache) {
  check_rope_fused({ET_ROPE_NEOX, 128, 128, true, Type::F16, kFullMask});
}
TEST(EtRope, StoredIntoAnF32Cache) { check_rope_fused({ET_ROPE_NORMAL, 64, 64, false, Type::F32, kSmallMask}); }

// A store needs each head's place in the cache on whole lines (40 F16 values are 80 bytes).
TEST(EtRope, RefusesAStoreThatSplitsCacheLines) {
  Dev& dev = Dev::get();
  const std::vector<float> x(40 * 2, 0.5f), cache(80 * 3, 0.0f);
  et_rope_params p{};
  p.src = dev.tensor(x, Type::F32, {40, 2, 1, 1});
  p.pos = dev.tensor(std::vector<int32_t>{1}, Type::I32, {1, 1, 1, 1});
  p.dst = dev.output(Type::F32, {40, 2, 1, 1});
  p.n_dims = 40;
  p.freq_base = 10000.0f;
  p.freq_scale = 1.0f;
  p.attn_factor = 1.0f;
  p.cache = dev.tensor(to_f16(cache), Type::F16, {80, 3, 1, 1});
  p.store_rows = dev.tensor(std::vector<int32_t>{2}, Type::I32, {1, 1, 1, 1});
  p.has_store = 1;
  expect_rejected("rope", p, "whole 64-byte lines");
}

// ---- SOFT_MAX ------------------------------------------------------------------------------

void check_soft_max(bool with_mask) {
  Dev& dev = Dev::get();
  const int64_t n = 37, rows = 5, planes = 2, mask_rows = 8;
  const auto x = random_floats(size_t(n * rows * planes), 12, -4.0f, 4.0f);
  std::vector<float> m(size_t(n * mask_rows));
  for (int64_t r = 0; r < mask_rows; r++) {
    for (int64_t i = 0; i < n; i++) m[size_t(r * n + i)] = i > 30 + r ? kNegInf : 0.25f * float(i % 3);
  }
  et_soft_max_params p{};
  p.src = dev.tensor(x, Type::F32, {n, rows, planes, 1});
  p.mask = dev.tensor(to_f16(m), Type::F16, {n, mask_rows, 1, 1});
  p.dst = dev.output(Type::F32, {n, rows, planes, 1});
  p.scale = 0.3f;
  p.has_mask = with_mask;
  dev.run("soft_max", p);
  const auto mh = from_f16(to_f16(m));
  std::vector<float> want(x.size());
  for (int64_t b = 0; b < planes; b++) {
    for (int64_t r = 0; r < rows; r++) {
      std::vector<double> v(static_cast<size_t>(n));
      double mx = -INFINITY, sum = 0;
      for (int64_t i = 0; i < n; i++) {
        v[size_t(i)] = x[size_t((b * rows + r) * n + i)] * 0.3 + (with_mask ? mh[size_t(r * n + i)] : 0.0f);
        mx = std::max(mx, v[size_t(i)]);
      }
      for (double& e : v) sum += (e = std::exp(e - mx));
      for (int64_t i = 0; i < n; i++) want[size_t((b * rows + r) * n + i)] = float(v[size_t(i)] / sum);
    }
  }
  expect_near_all(dev.download_f32(p.dst), want, 1e-6f);
}

TEST(EtSoftMax, WithF16Mask) { check_soft_max(true); }
TEST(EtSoftMax, WithoutMask) { check_soft_max(false); }

// ---- GLU (SwiGLU) on the two halves of one projection ----------------------------------------

TEST(EtGlu, SwigluOnHalvesOfOneTensor) {
  Dev& dev = Dev::get();
  const int64_t half = 45, rows = 6;
  const auto x = random_floats(size_t(2 * half * rows), 13, -6.0f, 6.0f);
  const et_tensor whole = dev.tensor(x, Type::F32, {2 * half, rows, 1, 1});
  et_glu_params p{};
  p.gate = whole;
  p.gate.ne[0] = half;
  p.up = p.gate;
  p.up.addr = whole.addr + uint64_t(half) * 4;
  p.dst = dev.output(Type::F32, {half, rows, 1, 1});
  dev.run("glu", p);
  std::vector<float> want(size_t(half * rows));
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t i = 0; i < half; i++) {
      const double g = x[size_t(r * 2 * half + i)], u = x[size_t(r * 2 * half + half + i)];
      want[size_t(r * half + i)] = float(g / (1.0 + std::exp(-g)) * u);
    }
  }
  expect_near_all(dev.download_f32(p.dst), want, 2e-6f);
}

// ---- CPY / CONT ----------------------------------------------------------------------------

TEST(EtCpy, TransposedF32ToContiguousF16) {
  Dev& dev = Dev::get();
  const int64_t a = 5, b = 7, c = 3;  // src storage (a, b, c); the copy reads it as (b, a, c)
  const auto x = random_floats(size_t(a * b * c), 14);
  et_cpy_params p{};
  p.src = dev.tensor(x, Type::F32, {a, b, c, 1});
  p.src.ne[0] = b;
  p.src.ne[1] = a;
  p.src.nb[0] = a * 4;
  p.src.nb[1] = 4;
  p.dst = dev.output(Type::F16, {b, a, c, 1});
  dev.run("cpy", p);
  std::vector<float> want(x.size());
  for (int64_t k = 0; k < c; k++) {
    for (int64_t i = 0; i < a; i++) {
      for (int64_t j = 0; j < b; j++) want[size_t((k * a + i) * b + j)] = x[size_t((k * b + j) * a + i)];
    }
  }
  EXPECT_EQ(dev.download_f16(p.dst), to_f16(want));
}

TEST(EtCpy, F16ToF32ReshapedOnAll32Shires) {
  Dev& dev = Dev::get();
  const auto h = to_f16(random_floats(3000, 15));
  et_cpy_params p{};
  p.src = dev.tensor(h, Type::F16, {100, 30, 1, 1});
  p.dst = dev.output(Type::F32, {600, 5, 1, 1});  // same elements, another shape
  dev.run("cpy", p, kFullMask);
  expect_near_all(dev.download_f32(p.dst), from_f16(h), 0.0f);
}

// ---- FLASH_ATTN_EXT ------------------------------------------------------------------------

// kernel "flash_attn_ext", or "flash_attn_ext_f16_me", which rounds q to fp16 for the engine.
void check_flash_attn(Type kv_type, int64_t d, uint64_t mask, const char* kernel = "flash_attn_ext", int64_t n_q = 3) {
  Dev& dev = Dev::get();
  const int64_t n_kv = 37, heads = 4, kv_heads = 2, mask_rows = n_q + 1;
  const bool engine = std::string(kernel) == "flash_attn_ext_f16_me";
  const auto q = random_floats(size_t(d * n_q * heads), 16);
  const auto qd = engine ? from_f16(to_f16(q)) : q;  // what the device multiplies
  auto k = random_floats(size_t(d * n_kv * kv_heads), 17);
  auto v = random_floats(size_t(d * n_kv * kv_heads), 18);
  if (kv_type == Type::F16) {  // the reference sees the rounded values the device reads
    k = from_f16(to_f16(k));
    v = from_f16(to_f16(v));
  }
  std::vector<float> m(size_t(n_kv * mask_rows));
  for (int64_t r = 0; r < mask_rows; r++) {
    for (int64_t j = 0; j < n_kv; j++) m[size_t(r * n_kv + j)] = j > 33 + r ? kNegInf : 0.0f;
  }
  et_flash_attn_params p{};
  p.q = dev.tensor(q, Type::F32, {d, n_q, heads, 1});
  p.k = kv_type == Type::F16 ? dev.tensor(to_f16(k), Type::F16, {d, n_kv, kv_heads, 1}) : dev.tensor(k, Type::F32, {d, n_kv, kv_heads, 1});
  p.v = kv_type == Type::F16 ? dev.tensor(to_f16(v), Type::F16, {d, n_kv, kv_heads, 1}) : dev.tensor(v, Type::F32, {d, n_kv, kv_heads, 1});
  p.mask = dev.tensor(to_f16(m), Type::F16, {n_kv, mask_rows, 1, 1});
  p.dst = dev.output(Type::F32, {d, heads, n_q, 1});
  p.scale = 1.0f / std::sqrt(float(d));
  p.has_mask = 1;
  dev.run(kernel, p, mask);
  std::vector<float> want(size_t(d * heads * n_q));
  for (int64_t iq = 0; iq < n_q; iq++) {
    for (int64_t h = 0; h < heads; h++) {
      const int64_t hk = h / (heads / kv_heads);
      std::vector<double> w(static_cast<size_t>(n_kv));
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < n_kv; j++) {
        double s = 0;
        for (int64_t i = 0; i < d; i++) s += double(qd[size_t((h * n_q + iq) * d + i)]) * k[size_t((hk * n_kv + j) * d + i)];
        w[size_t(j)] = s * p.scale + m[size_t(iq * n_kv + j)];
        mx = std::max(mx, w[size_t(j)]);
      }
      for (double& e : w) sum += (e = std::exp(e - mx));
      for (int64_t i = 0; i < d; i++) {
        double o = 0;
        for (int64_t j = 0; j < n_kv; j++) o += w[size_t(j)] * v[size_t((hk * n_kv + j) * d + i)];
        want[size_t((iq * heads + h) * d + i)] = float(o / sum);
      }
    }
  }
  expect_near_all(dev.download_f32(p.dst), want, 1e-5f);
}

TEST(EtFlashAttn, F16CacheWithCausalMaskAndGqa) { check_flash_attn(Type::F16, 64, kSmallMask); }
TEST(EtFlashAttn, F32CacheOddHeadSize) { check_flash_attn(Type::F32, 40, kSmallMask); }
TEST(EtFlashAttn, F16CacheOnAll32Shires) { check_flash_attn(Type::F16, 128, kFullMask); }
// The engine kernel: 6 rows per KV head (a tile's tail), 40 rows (two tiles and a tail), 37 keys
// (a block's tail).
TEST(EtFlashAttnEngine, F16CacheWithCausalMaskAndGqa) { check_flash_attn(Type::F16, 64, kSmallMask, "flash_attn_ext_f16_me"); }
TEST(EtFlashAttnEngine, ManyQueriesOnAll32Shires) { check_flash_attn(Type::F16, 128, kFullMask, "flash_attn_ext_f16_me", 20); }

// ---- PAGED_ATTN ----------------------------------------------------------------------------

// Token t attends over a random list of pool slots (token 1's is empty: zeros); GQA with two
// query heads per KV head.
void check_paged_attn(Type cache, int64_t dk, int64_t dv, int64_t heads, int64_t tokens, uint64_t mask) {
  Dev& dev = Dev::get();
  const int64_t heads_kv = heads / 2, slots = 83;
  const auto q = random_floats(size_t(dk * heads * tokens), 31);
  auto k = random_floats(size_t(dk * heads_kv * slots), 32), v = random_floats(size_t(dv * heads_kv * slots), 33);
  if (cache == Type::F16) {
    k = from_f16(to_f16(k));
    v = from_f16(to_f16(v));
  }
  std::vector<int32_t> index(size_t(2 * tokens));
  std::mt19937 rng(34);
  for (int64_t t = 0; t < tokens; t++) {
    const int64_t count = t == 1 ? 0 : 1 + int64_t(rng() % 70);
    index[size_t(2 * t)] = int32_t(index.size());
    index[size_t(2 * t + 1)] = int32_t(count);
    for (int64_t j = 0; j < count; j++) index.push_back(int32_t(rng() % slots));
  }
  et_paged_attn_params p{};
  p.q = dev.tensor(q, Type::F32, {dk, heads, tokens, 1});
  p.k = cache == Type::F16 ? dev.tensor(to_f16(k), cache, {dk, heads_kv, slots, 1}) : dev.tensor(k, cache, {dk, heads_kv, slots, 1});
  p.v = cache == Type::F16 ? dev.tensor(to_f16(v), cache, {dv, heads_kv, slots, 1}) : dev.tensor(v, cache, {dv, heads_kv, slots, 1});
  p.index = dev.tensor(index, Type::I32, {int64_t(index.size()), 1, 1, 1});
  p.dst = dev.output(Type::F32, {dv, heads, tokens, 1});
  p.scale = 0.125f;
  dev.run("paged_attn", p, mask);
  std::vector<float> want(size_t(dv * heads * tokens), 0.0f);
  for (int64_t t = 0; t < tokens; t++) {
    const int32_t* list = index.data() + index[size_t(2 * t)];
    const int64_t count = index[size_t(2 * t + 1)];
    for (int64_t h = 0; h < heads; h++) {
      const int64_t hk = h / 2;
      std::vector<double> score(static_cast<size_t>(count));
      double top = -1e300;
      for (int64_t j = 0; j < count; j++) {
        double s = 0;
        for (int64_t i = 0; i < dk; i++)
          s += double(q[size_t((t * heads + h) * dk + i)]) * k[size_t((list[j] * heads_kv + hk) * dk + i)];
        score[size_t(j)] = s * 0.125;
        top = std::max(top, score[size_t(j)]);
      }
      double sum = 0;
      for (double& s : score) sum += (s = std::exp(s - top));
      for (int64_t i = 0; i < dv && count > 0; i++) {
        double o = 0;
        for (int64_t j = 0; j < count; j++) o += score[size_t(j)] * v[size_t((list[j] * heads_kv + hk) * dv + i)];
        want[size_t((t * heads + h) * dv + i)] = float(o / sum);
      }
    }
  }
  expect_near_all(dev.download_f32(p.dst), want, 2e-5f);
}

TEST(EtPagedAttn, DecodeF16Cache) { check_paged_attn(Type::F16, 64, 64, 16, 1, kSmallMask); }
TEST(EtPagedAttn, F32CacheOddSizesOnAll32Shires) { check_paged_attn(Type::F32, 40, 24, 6, 3, kFullMask); }
TEST(EtPagedAttn, ManyTokensF16Cache) { check_paged_attn(Type::F16, 64, 48, 4, 20, kSmallMask); }
// Few rows on lines: each GQA group on one shire, each head's row split over 8 minions; shires
// with no group.
TEST(EtPagedAttn, GroupedHeadsOnAll32Shires) { check_paged_attn(Type::F16, 128, 128, 16, 3, kFullMask); }

// Grouped, the heads sharing a KV head read its K and V rows once: the bytes the kernel reports
// are each KV head's listed rows, once.
TEST(EtPagedAttn, GroupedHeadsReadEachKvRowOnce) {
  Dev& dev = Dev::get();
  const int64_t d = 64, heads = 8, heads_kv = 2, slots = 40, count = 30;
  std::vector<int32_t> index{2, int32_t(count)};
  for (int64_t j = 0; j < count; j++) index.push_back(int32_t(j));
  et_paged_attn_params p{};
  p.q = dev.tensor(random_floats(size_t(d * heads), 35), Type::F32, {d, heads, 1, 1});
  p.k = dev.tensor(to_f16(random_floats(size_t(d * heads_kv * slots), 36)), Type::F16, {d, heads_kv, slots, 1});
  p.v = dev.tensor(to_f16(random_floats(size_t(d * heads_kv * slots), 37)), Type::F16, {d, heads_kv, slots, 1});
  p.index = dev.tensor(index, Type::I32, {int64_t(index.size()), 1, 1, 1});
  p.dst = dev.output(Type::F32, {d, heads, 1, 1});
  p.scale = 0.125f;
  dev.device().profiler_start();
  dev.run("paged_attn", p, kFullMask);
  uint64_t bytes = 0;
  for (const ProfileRecord& r : dev.device().profiler_stop())
    if (r.kind == ProfileRecord::Kind::Launch) bytes = r.bytes_read;
  EXPECT_EQ(bytes, uint64_t(heads_kv * count * (2 * d + 2 * d)));
}

}  // namespace
}  // namespace hart::et::test
