// Synthetic models: the tensor list a spec asks for, without generating the weights (a whole
// model takes minutes under QEMU); generation stores exactly the listed types (make_synthetic_model
// builds from the same list).
#include "model/synthetic.h"

#include <gtest/gtest.h>

#include <map>

#include "common/error.h"

namespace hart {
namespace {

std::map<std::string, Type> types_of(std::string_view spec) {
  std::map<std::string, Type> out;
  for (const gguf::TensorInfo& t : synthetic_model_tensors(spec)) out[t.name] = t.type;
  return out;
}

TEST(Synthetic, PlainTypeForEveryMatrix) {
  const auto types = types_of("tinyllama-1.1b:q4_0");
  EXPECT_EQ(types.size(), 2u + 22u * 9u + 1u);  // embeddings, 22 layers of 9, output norm, output
  EXPECT_EQ(types.at("token_embd.weight"), Type::Q4_0);
  EXPECT_EQ(types.at("output.weight"), Type::Q4_0);
  EXPECT_EQ(types.at("blk.7.ffn_down.weight"), Type::Q4_0);
  EXPECT_EQ(types.at("blk.7.ffn_norm.weight"), Type::F32);
}

// llama.cpp's Q4_K_M rules on SmolLM2-135M (30 layers, 576-wide rows that fit no 256-block):
// attn_v and ffn_down get Q6_K in layers 0-2, 26-29 and every third layer from 5, the tied
// embeddings Q6_K; a Q6_K row of 576 falls back to Q8_0 and a Q4_K one to Q5_0.
TEST(Synthetic, MixGivesLlamaCppTypes) {
  const auto types = types_of("smollm2-135m:q4_k_m");
  EXPECT_EQ(types.count("output.weight"), 0u);
  EXPECT_EQ(types.at("token_embd.weight"), Type::Q8_0);
  for (int il = 0; il < 30; il++) {
    const std::string p = "blk." + std::to_string(il) + ".";
    const bool more_bits = il < 3 || il >= 26 || (il - 3) % 3 == 2;
    SCOPED_TRACE(p);
    EXPECT_EQ(types.at(p + "attn_v.weight"), more_bits ? Type::Q8_0 : Type::Q5_0);
    EXPECT_EQ(types.at(p + "ffn_down.weight"), more_bits ? Type::Q6_K : Type::Q4_K);  // 1536-wide rows
    EXPECT_EQ(types.at(p + "attn_q.weight"), Type::Q5_0);
    EXPECT_EQ(types.at(p + "attn_norm.weight"), Type::F32);
  }
}

TEST(Synthetic, UnknownNameOrTypeIsAnError) {
  EXPECT_THROW(synthetic_model_tensors("no-such-model"), Error);
  EXPECT_THROW(synthetic_model_tensors("smollm2-135m:q9_9"), Error);
  EXPECT_THROW(synthetic_model_tensors("smollm2-135m:q4_k_s"), Error);
}

}  // namespace
}  // namespace hart
