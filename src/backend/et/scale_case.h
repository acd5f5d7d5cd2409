// A scale launch for the device tests of the chip's runtimes (sysemu/, rt/): the kernel is the
// simplest one that reads and writes device memory on every hart. And a matrix-engine MUL_MAT
// whose minions add their partial tiles by a TensorReduce tree.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "backend/et/device.h"
#include "backend/et/device/et_params.h"

namespace hart::et {

// dst = src * scale + bias over x.size() floats: src uploaded from x, dst a fresh allocation.
inline et_scale_params scale_case(Device& d, const std::vector<float>& x, float scale, float bias) {
  et_scale_params p{};
  const uint64_t bytes = x.size() * 4;
  for (et_tensor* t : {&p.src, &p.dst}) {
    t->addr = d.malloc(bytes);
    t->type = ET_TYPE_F32;
    t->ne[0] = int64_t(x.size());
    t->ne[1] = t->ne[2] = t->ne[3] = 1;
    t->nb[0] = 4;
    t->nb[1] = t->nb[2] = t->nb[3] = int64_t(bytes);
  }
  d.memcpy_h2d(p.src.addr, x.data(), bytes);
  p.scale = scale;
  p.bias = bias;
  return p;
}

// Two scales in one uberkernel launch (the block for launch(uberkernel)): the second, after a
// launch barrier, reads the upper half of what the first wrote, i.e. lines other harts (of other
// minions and, on two shires, of the other shire) wrote; out holds want after the launch. Without
// the barrier's L1 and L2 evictions sysemu's memory checker reports a stale read.
struct UberScales {
  std::vector<uint64_t> blob;
  DeviceAddr out = 0;
  std::vector<float> want;
};

inline UberScales uber_scales_case(Device& d, const std::vector<float>& x) {
  const size_t half = x.size() / 2;
  const et_scale_params a = scale_case(d, x, 2.0f, 1.0f);
  et_scale_params b = scale_case(d, std::vector<float>(half), -0.5f, 3.0f);
  b.src.addr = a.dst.addr + half * 4;
  b.src.ne[0] = int64_t(half);
  b.src.nb[1] = b.src.nb[2] = b.src.nb[3] = int64_t(half * 4);
  UberScales u;
  u.blob.resize(1 + 2);
  const et_uber_params head{2, 0};
  std::memcpy(u.blob.data(), &head, sizeof head);
  for (int i = 0; i < 2; i++) {
    const et_scale_params& p = i == 0 ? a : b;
    const et_uber_op op{uint16_t(ET_KERNEL_ID_scale), uint16_t(i == 1 ? ET_UBER_WAIT : 0u), uint32_t(u.blob.size() * 8)};
    std::memcpy(&u.blob[1 + i], &op, sizeof op);
    const size_t at = u.blob.size();
    u.blob.resize(at + (sizeof p + 7) / 8);
    std::memcpy(&u.blob[at], &p, sizeof p);
  }
  u.out = b.dst.addr;
  for (size_t i = 0; i < half; i++) u.want.push_back((x[half + i] * 2.0f + 1.0f) * -0.5f + 3.0f);
  return u;
}

// One 16 x 16 tile of F32 W (K, 16) x X (K, 16) for mul_mat_f32_matrix_engine: on one shire its
// k / 16 chunks split over up to 32 minions, which add their partial C by TensorReduce before
// the group's first stores it. Inputs are small exact multiples of 1/64, uploaded to d.
inline et_mul_mat_params engine_tile_case(Device& d, int64_t k) {
  et_mul_mat_params p{};
  const auto tensor = [&](et_tensor& t, int64_t ne0, int64_t ne1) {
    std::vector<float> v(size_t(ne0 * ne1));
    for (size_t i = 0; i < v.size(); i++) v[i] = float(int(i * 37 % 101) - 50) / 64.0f;
    t.addr = d.malloc(v.size() * 4);
    d.memcpy_h2d(t.addr, v.data(), v.size() * 4);
    t.type = ET_TYPE_F32;
    t.ne[0] = ne0;
    t.ne[1] = ne1;
    t.ne[2] = t.ne[3] = 1;
    t.nb[0] = 4;
    t.nb[1] = ne0 * 4;
    t.nb[2] = t.nb[3] = ne0 * ne1 * 4;
  };
  tensor(p.src0, k, 16);
  tensor(p.src1, k, 16);
  tensor(p.dst, 16, 16);
  return p;
}

}  // namespace hart::et
