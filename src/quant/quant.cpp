// The one table that maps each tensor type to its codec; quant.h's functions dispatch through it.
#include "quant/quant.h"

#include <array>
#include <string>

#include "common/error.h"
#include "quant/codec.h"

namespace hart {
namespace {

using quant::Codec;

std::array<Codec, kTypeCount> make_table() {
  std::array<Codec, kTypeCount> t{};
  auto set = [&](Type type, Codec c) { t[uint32_t(type)] = c; };
  set(Type::F32, quant::codec_f32());
  set(Type::F16, quant::codec_f16());
  set(Type::BF16, quant::codec_bf16());
  set(Type::Q4_0, quant::codec_q4_0());
  set(Type::Q4_1, quant::codec_q4_1());
  set(Type::Q5_0, quant::codec_q5_0());
  set(Type::Q5_1, quant::codec_q5_1());
  set(Type::Q8_0, quant::codec_q8_0());
  set(Type::Q8_1, quant::codec_q8_1());
  set(Type::Q2_K, quant::codec_q2_k());
  set(Type::Q3_K, quant::codec_q3_k());
  set(Type::Q4_K, quant::codec_q4_k());
  set(Type::Q5_K, quant::codec_q5_k());
  set(Type::Q6_K, quant::codec_q6_k());
  set(Type::Q8_K, quant::codec_q8_k());
  set(Type::IQ4_NL, quant::codec_iq4_nl());
  set(Type::IQ4_XS, quant::codec_iq4_xs());
  set(Type::TQ1_0, quant::codec_tq1_0());
  set(Type::TQ2_0, quant::codec_tq2_0());
  set(Type::MXFP4, quant::codec_mxfp4());
  set(Type::Q1_0, quant::codec_q1_0());
  set(Type::Q2_0, quant::codec_q2_0());
  set(Type::IQ2_XXS, quant::codec_iq2_xxs());
  set(Type::IQ2_XS, quant::codec_iq2_xs());
  set(Type::IQ2_S, quant::codec_iq2_s());
  set(Type::IQ3_XXS, quant::codec_iq3_xxs());
  set(Type::IQ3_S, quant::codec_iq3_s());
  set(Type::IQ1_S, quant::codec_iq1_s());
  set(Type::IQ1_M, quant::codec_iq1_m());
  return t;
}

const Codec* find(Type t) {
  static const std::array<Codec, kTypeCount> table = make_table();
  return uint32_t(t) < kTypeCount ? &table[uint32_t(t)] : nullptr;
}

std::string describe(Type t) {
  const auto info = find_type_info(uint32_t(t));
  return info ? std::string(info->name) : "type " + std::to_string(uint32_t(t));
}

// The codec of t, checked to have the wanted function, and n checked against the block size.
const Codec& checked(Type t, int64_t n, bool has_fn, const char* what) {
  if (!has_fn) throw Error(std::string("no ") + what + " for tensor type " + describe(t));
  const int64_t bs = type_info(t).block_size;
  if (n < 0 || n % bs != 0)
    throw Error(std::string(what) + " of " + describe(t) + ": row length " + std::to_string(n) +
                " is not a multiple of the block size " + std::to_string(bs));
  return *find(t);
}

}  // namespace

bool type_supported(Type t) {
  switch (t) {
    case Type::F32: case Type::F16: case Type::BF16: case Type::Q4_0: case Type::Q4_1:
    case Type::Q5_0: case Type::Q5_1: case Type::Q8_0: case Type::Q2_K: case Type::Q3_K:
    case Type::Q4_K: case Type::Q5_K: case Type::Q6_K: case Type::IQ4_NL: case Type::IQ4_XS:
    case Type::TQ1_0: case Type::TQ2_0: case Type::MXFP4: case Type::IQ2_XXS: case Type::IQ2_XS:
    case Type::IQ2_S: case Type::IQ3_XXS: case Type::IQ3_S: case Type::IQ1_S: case Type::IQ1_M:
    case Type::Q1_0: case Type::Q2_0: case Type::I32: case Type::I64:
      return true;
    default:
      return false;
  }
}

bool can_dequantize(Type t) { return find(t) && find(t)->dequantize; }
bool can_quantize(Type t) { return find(t) && (find(t)->quantize || find(t)->quantize_weighted); }
bool quantize_needs_importance(Type t) { return find(t) && !find(t)->quantize && find(t)->quantize_weighted; }

void dequantize_row(Type t, const void* src, float* dst, int64_t n) {
  checked(t, n, can_dequantize(t), "dequantization").dequantize(src, dst, n);
}

void quantize_row(Type t, const float* src, void* dst, int64_t n, const float* importance) {
  const Codec& c = checked(t, n, can_quantize(t), "quantization");
  if (c.quantize_weighted && (importance || !c.quantize)) {
    if (!importance) throw Error("quantization to " + describe(t) + " needs importance weights (an imatrix)");
    c.quantize_weighted(src, dst, n, importance);
  } else {
    c.quantize(src, dst, n);
  }
}

Type vec_dot_type(Type weight) {
  const Codec* c = find(weight);
  if (!c || !c->vec_dot) throw Error("no dot product for weight type " + describe(weight));
  return c->dot_type;
}

void vec_dot(Type weight, int64_t n, float* out, const void* w, const void* x) {
  const Codec* c = find(weight);
  checked(weight, n, c && c->vec_dot, "dot product").vec_dot(n, out, w, x);
}

}  // namespace hart
