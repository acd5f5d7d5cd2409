#include "testing/dense.h"

#include "common/fp16.h"
#include "quant/quant.h"

namespace hart::testing {

Dense read(const Tensor& t) {
  Dense d({t.ne[0], t.ne[1], t.ne[2], t.ne[3]});
  std::vector<float> row(size_t(t.ne[0]));
  const bool quantized = type_info(t.type).quantized;
  for (int64_t i3 = 0; i3 < t.ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t.ne[2]; i2++)
      for (int64_t i1 = 0; i1 < t.ne[1]; i1++) {
        const char* base = static_cast<const char*>(t.data) + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
        if (quantized) dequantize_row(t.type, base, row.data(), t.ne[0]);
        for (int64_t i0 = 0; i0 < t.ne[0]; i0++) {
          const char* p = base + i0 * t.nb[0];
          double v = 0.0;
          switch (t.type) {
            case Type::F32: v = *reinterpret_cast<const float*>(p); break;
            case Type::F16: v = fp16_to_f32(*reinterpret_cast<const fp16_t*>(p)); break;
            case Type::BF16: v = bf16_to_f32(*reinterpret_cast<const bf16_t*>(p)); break;
            case Type::I32: v = *reinterpret_cast<const int32_t*>(p); break;
            case Type::I64: v = double(*reinterpret_cast<const int64_t*>(p)); break;
            default: v = row[size_t(i0)]; break;
          }
          d.at(i0, i1, i2, i3) = v;
        }
      }
  return d;
}

}  // namespace hart::testing
