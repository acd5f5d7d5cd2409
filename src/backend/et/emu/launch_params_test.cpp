// Host-side validation of launch parameter blocks (launch_params.h), directly and through the
// emulator's launch(), which must refuse a bad block before any hart runs.
#include "backend/et/emu/launch_params.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "backend/et/device/et_params.h"
#include "common/error.h"

namespace hart::et::emu {
namespace {

// A contiguous F32 tensor of n elements at addr.
et_tensor f32(uint64_t addr, int64_t n) {
  et_tensor t{};
  t.addr = addr;
  t.type = ET_TYPE_F32;
  t.ne[0] = n;
  t.ne[1] = t.ne[2] = t.ne[3] = 1;
  t.nb[0] = 4;
  t.nb[1] = t.nb[2] = t.nb[3] = 4 * n;
  return t;
}

std::string rejection(uint32_t id, const void* p, size_t bytes) {
  try {
    check_launch_params(id, p, bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LaunchParams, AcceptsWellFormedBlocksAndUnusedOperands) {
  et_scale_params s{};
  s.src = s.dst = f32(0x8000000040, 64);
  EXPECT_EQ(rejection(ET_KERNEL_ID_scale, &s, sizeof s), "");
  et_rms_norm_params r{};  // weight left all zero: has_weight = 0
  r.src = r.dst = f32(0x8000000000, 32);
  EXPECT_EQ(rejection(ET_KERNEL_ID_rms_norm, &r, sizeof r), "");
}

TEST(LaunchParams, KnowsQ4_KWeightsAndTheUnaryKernel) {
  et_mul_mat_params m{};
  m.src0 = f32(0x8000000002, 256);  // Q4_K blocks start with an fp16: 2-byte alignment suffices
  m.src0.type = ET_TYPE_Q4_K;
  m.src0.nb[0] = 144;
  m.src1 = f32(0x8000001000, 256);
  m.dst = f32(0x8000002000, 1);
  EXPECT_EQ(rejection(ET_KERNEL_ID_mul_mat, &m, sizeof m), "");
  m.src0.addr += 1;
  EXPECT_NE(rejection(ET_KERNEL_ID_mul_mat, &m, sizeof m).find("2-byte aligned"), std::string::npos);
  et_unary_params u{};
  u.src = u.dst = f32(0x8000000000, 8);
  EXPECT_EQ(rejection(ET_KERNEL_ID_unary, &u, sizeof u), "");
  EXPECT_NE(rejection(ET_KERNEL_ID_unary, &u, sizeof u - 8).find("expected at least"), std::string::npos);
}

TEST(LaunchParams, KnowsConcatSsmConvAndRopeFrequencyFactors) {
  et_concat_params c{};
  c.src0 = c.src1 = f32(0x8000000000, 8);
  c.dst = f32(0x8000000040, 16);
  EXPECT_EQ(rejection(ET_KERNEL_ID_concat, &c, sizeof c), "");
  EXPECT_NE(rejection(ET_KERNEL_ID_concat, &c, sizeof c - 8).find("expected at least"), std::string::npos);
  et_ssm_conv_params s{};
  s.sx = s.kernel = s.dst = f32(0x8000000000, 4);
  EXPECT_EQ(rejection(ET_KERNEL_ID_ssm_conv, &s, sizeof s), "");
  s.kernel.nb[1] = 6;
  EXPECT_NE(rejection(ET_KERNEL_ID_ssm_conv, &s, sizeof s).find("tensor 1 has stride nb[1] = 6"), std::string::npos);
  // The factors are the rope block's fourth descriptor, checked like the others; unused, all zero.
  et_rope_params r{};
  r.src = r.dst = f32(0x8000000000, 16);
  r.pos = f32(0x8000000100, 1);
  r.pos.type = ET_TYPE_I32;
  EXPECT_EQ(rejection(ET_KERNEL_ID_rope, &r, sizeof r), "");
  r.freq_factors = f32(0x8000000200, 8);
  r.has_freq_factors = 1;
  EXPECT_EQ(rejection(ET_KERNEL_ID_rope, &r, sizeof r), "");
  r.freq_factors.addr += 1;
  EXPECT_NE(rejection(ET_KERNEL_ID_rope, &r, sizeof r).find("tensor 3 address"), std::string::npos);
}

TEST(LaunchParams, KnowsNormSumRowsAndRwkvWkv7) {
  et_norm_params n{};  // weight unused: all zero
  n.src = n.dst = f32(0x8000000000, 16);
  EXPECT_EQ(rejection(ET_KERNEL_ID_norm, &n, sizeof n), "");
  n.weight = f32(0x8000000100, 16);
  n.weight.type = ET_TYPE_I64 + 1;
  EXPECT_NE(rejection(ET_KERNEL_ID_norm, &n, sizeof n).find("tensor 1 has unknown type"), std::string::npos);
  et_sum_rows_params s{};
  s.src = f32(0x8000000000, 16);
  s.dst = f32(0x8000000100, 1);
  EXPECT_EQ(rejection(ET_KERNEL_ID_sum_rows, &s, sizeof s), "");
  EXPECT_NE(rejection(ET_KERNEL_ID_sum_rows, &s, sizeof s - 1).find("expected at least"), std::string::npos);
  // Nine descriptors, every one checked: the state is the seventh, then the cells (unused: all
  // zeros), dst the ninth.
  et_rwkv_wkv7_params w{};
  et_tensor* all[8] = {&w.r, &w.w, &w.k, &w.v, &w.a, &w.b, &w.state, &w.dst};
  for (int i = 0; i < 8; i++) *all[i] = f32(0x8000000000 + 0x1000 * uint64_t(i), 64);
  EXPECT_EQ(rejection(ET_KERNEL_ID_rwkv_wkv7, &w, sizeof w), "");
  w.dst.ne[2] = 0;
  EXPECT_NE(rejection(ET_KERNEL_ID_rwkv_wkv7, &w, sizeof w).find("tensor 8 has extent ne[2] = 0"), std::string::npos);
  w.dst.ne[2] = 1;
  w.state.addr += 2;
  EXPECT_NE(rejection(ET_KERNEL_ID_rwkv_wkv7, &w, sizeof w).find("tensor 6 address"), std::string::npos);
}

TEST(LaunchParams, KnowsGatedDeltaNet) {  // eight descriptors: q, k, v, g, beta, state, cells, dst
  et_gated_delta_net_params d{};
  d.q = d.k = d.v = d.g = d.beta = d.state = f32(0x8000000000, 64);
  d.dst = f32(0x8000001000, 64);
  EXPECT_EQ(rejection(ET_KERNEL_ID_gated_delta_net, &d, sizeof d), "");
  EXPECT_NE(rejection(ET_KERNEL_ID_gated_delta_net, &d, sizeof d - 1).find("expected at least"), std::string::npos);
  d.dst.nb[1] = 2;
  EXPECT_NE(rejection(ET_KERNEL_ID_gated_delta_net, &d, sizeof d).find("tensor 7 has stride nb[1] = 2"),
            std::string::npos);
}

TEST(LaunchParams, KnowsTopKAndMulMatIds) {
  et_top_k_params k{};
  k.src = f32(0x8000000000, 16);
  k.dst = f32(0x8000000100, 4);
  k.dst.type = ET_TYPE_I32;
  EXPECT_EQ(rejection(ET_KERNEL_ID_top_k, &k, sizeof k), "");
  EXPECT_NE(rejection(ET_KERNEL_ID_top_k, &k, sizeof k - 1).find("expected at least"), std::string::npos);
  // MUL_MAT_ID's ids are the fifth descriptor of mul_mat's block: checked like the others.
  et_mul_mat_params m{};
  m.src0 = m.src1 = f32(0x8000000000, 16);
  m.dst = f32(0x8000000100, 1);
  m.ids = f32(0x8000000200, 2);
  m.ids.type = ET_TYPE_I32;
  m.has_ids = 1;
  EXPECT_EQ(rejection(ET_KERNEL_ID_mul_mat, &m, sizeof m), "");
  m.ids.addr += 2;
  EXPECT_NE(rejection(ET_KERNEL_ID_mul_mat, &m, sizeof m).find("tensor 4 address"), std::string::npos);
}

TEST(LaunchParams, RejectsShortBlocks) {
  et_scale_params s{};
  s.src = s.dst = f32(0x8000000000, 8);
  EXPECT_NE(rejection(ET_KERNEL_ID_scale, &s, sizeof s - 1).find("expected at least"), std::string::npos);
  EXPECT_NE(rejection(ET_KERNEL_ID_scale, nullptr, 0).find("parameter block of 0 bytes"), std::string::npos);
  EXPECT_THROW(launch_params_bytes(ET_KERNEL_COUNT), Error);
}

TEST(LaunchParams, RejectsHostileTensorDescriptors) {
  struct Case {
    const char* what;
    void (*spoil)(et_tensor&);
  };
  const Case cases[] = {
      {"unknown type", [](et_tensor& t) { t.type = 4; }},
      {"extent ne[1] = 0", [](et_tensor& t) { t.ne[1] = 0; }},
      {"extent ne[2] = -1", [](et_tensor& t) { t.ne[2] = -1; }},
      {"more than 2^40 elements", [](et_tensor& t) { t.ne[0] = t.ne[1] = int64_t(1) << 21; }},
      {"stride nb[1] = -4", [](et_tensor& t) { t.nb[1] = -4; }},
      {"stride nb[0] = 2", [](et_tensor& t) { t.nb[0] = 2; }},
      {"48-bit address space", [](et_tensor& t) { t.addr = uint64_t(1) << 60; }},
      {"4-byte aligned", [](et_tensor& t) { t.addr += 2; }},
  };
  for (const Case& c : cases) {
    et_scale_params s{};
    s.src = s.dst = f32(0x8000000000, 16);
    c.spoil(s.dst);
    const std::string why = rejection(ET_KERNEL_ID_scale, &s, sizeof s);
    EXPECT_NE(why.find("tensor 1"), std::string::npos) << c.what << ": " << why;
    EXPECT_NE(why.find(c.what), std::string::npos) << c.what << ": " << why;
  }
}

// An uberkernel block: header, ops, then each op's parameters at its offset.
std::vector<uint8_t> uber(const std::vector<et_uber_op>& ops, size_t bytes) {
  std::vector<uint8_t> b(bytes);
  const et_uber_params h{uint32_t(ops.size()), 0};
  std::memcpy(b.data(), &h, sizeof h);
  std::memcpy(b.data() + sizeof h, ops.data(), ops.size() * sizeof(et_uber_op));
  return b;
}

TEST(LaunchParams, ChecksUberkernelOpsAgainstTheirBlock) {
  const uint32_t first = sizeof(et_uber_params) + 2 * sizeof(et_uber_op);
  const uint32_t second = first + sizeof(et_scale_params);
  std::vector<uint8_t> ok = uber({{ET_KERNEL_ID_scale, 0, first}, {ET_KERNEL_ID_scale, ET_UBER_WAIT, second}},
                                 second + sizeof(et_scale_params));
  et_scale_params s{};
  s.src = s.dst = f32(0x8000000000, 16);
  std::memcpy(ok.data() + first, &s, sizeof s);
  std::memcpy(ok.data() + second, &s, sizeof s);
  EXPECT_EQ(rejection(ET_KERNEL_ID_uberkernel, ok.data(), ok.size()), "");

  // The second op's block runs past the end.
  EXPECT_NE(rejection(ET_KERNEL_ID_uberkernel, ok.data(), ok.size() - 8).find("uberkernel op 1"), std::string::npos);
  // More ops than the block holds.
  std::vector<uint8_t> many = ok;
  const et_uber_params lie{1000, 0};
  std::memcpy(many.data(), &lie, sizeof lie);
  EXPECT_NE(rejection(ET_KERNEL_ID_uberkernel, many.data(), many.size()).find("1000 ops"), std::string::npos);
  // A nested uberkernel, a misaligned offset, an offset inside the op list, a bad tensor inside.
  EXPECT_NE(rejection(ET_KERNEL_ID_uberkernel, uber({{ET_KERNEL_ID_uberkernel, 0, first}}, 512).data(), 512)
                .find("not a sub-kernel"),
            std::string::npos);
  EXPECT_NE(rejection(ET_KERNEL_ID_uberkernel, uber({{ET_KERNEL_ID_scale, 0, first + 4}}, 512).data(), 512)
                .find("misaligned"),
            std::string::npos);
  EXPECT_NE(rejection(ET_KERNEL_ID_uberkernel, uber({{ET_KERNEL_ID_scale, 0, 0}}, 512).data(), 512).find("offset 0"),
            std::string::npos);
  EXPECT_NE(rejection(ET_KERNEL_ID_uberkernel, uber({{ET_KERNEL_ID_scale, 2, first}}, 512).data(), 512)
                .find("unknown flags 2"),
            std::string::npos);
  std::vector<uint8_t> bad = ok;
  bad[second + offsetof(et_scale_params, dst) + offsetof(et_tensor, type)] = 4;  // ggml's retired Q4_2
  EXPECT_NE(rejection(ET_KERNEL_ID_uberkernel, bad.data(), bad.size()).find("unknown type"), std::string::npos);
}

}  // namespace
}  // namespace hart::et::emu
