// A scale launch for the device tests of the chip's runtimes (sysemu/, rt/): the kernel is the
// simplest one that reads and writes device memory on every hart.
#pragma once

#include <cstdint>
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

}  // namespace hart::et
