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

// The IQ mixes that are no type name (a type name puts every matrix in that type), on TinyLlama
// (22 layers, 8 query heads per KV head): IQ2_M keeps IQ3_S embeddings, attn_output and the first
// 22 / 8 = 2 ffn_down, a Q5_K output and Q4_K attn_v (GQA) over IQ2_S; IQ3_M gives Q4_K attn_v,
// attn_output and first ffn_down and a Q6_K output over IQ3_S.
TEST(Synthetic, IqMixesGiveLlamaCppTypes) {
  const auto m2 = types_of("tinyllama-1.1b:iq2_m");
  EXPECT_EQ(m2.at("token_embd.weight"), Type::IQ3_S);
  EXPECT_EQ(m2.at("output.weight"), Type::Q5_K);
  const auto m3 = types_of("tinyllama-1.1b:IQ3_M");
  EXPECT_EQ(m3.at("token_embd.weight"), Type::IQ3_S);
  EXPECT_EQ(m3.at("output.weight"), Type::Q6_K);
  for (int il = 0; il < 22; il++) {
    const std::string p = "blk." + std::to_string(il) + ".";
    SCOPED_TRACE(p);
    EXPECT_EQ(m2.at(p + "attn_v.weight"), Type::Q4_K);
    EXPECT_EQ(m2.at(p + "attn_output.weight"), Type::IQ3_S);
    EXPECT_EQ(m2.at(p + "ffn_down.weight"), il < 2 ? Type::IQ3_S : Type::IQ2_S);
    EXPECT_EQ(m2.at(p + "attn_q.weight"), Type::IQ2_S);
    EXPECT_EQ(m3.at(p + "attn_v.weight"), Type::Q4_K);
    EXPECT_EQ(m3.at(p + "attn_output.weight"), Type::Q4_K);
    EXPECT_EQ(m3.at(p + "ffn_down.weight"), il < 2 ? Type::Q4_K : Type::IQ3_S);
    EXPECT_EQ(m3.at(p + "ffn_up.weight"), Type::IQ3_S);
  }
  EXPECT_EQ(types_of("tinyllama-1.1b:iq2_xxs").at("output.weight"), Type::IQ2_XXS);
  EXPECT_EQ(types_of("smollm2-135m:iq3_xs").at("blk.0.attn_q.weight"), Type::IQ4_NL);  // 576-wide rows
}

// "mix:" takes llama-quantize's mix where its name is also a type's: Q2_K on TinyLlama keeps Q4_K
// attn_v (GQA), Q3_K attn_output and ffn_down and a Q6_K output over Q2_K.
TEST(Synthetic, MixPrefixForNamesThatAreTypes) {
  const auto types = types_of("tinyllama-1.1b:mix:q2_k");
  EXPECT_EQ(types.at("token_embd.weight"), Type::Q2_K);
  EXPECT_EQ(types.at("output.weight"), Type::Q6_K);
  EXPECT_EQ(types.at("blk.3.attn_q.weight"), Type::Q2_K);
  EXPECT_EQ(types.at("blk.3.attn_v.weight"), Type::Q4_K);
  EXPECT_EQ(types.at("blk.3.attn_output.weight"), Type::Q3_K);
  EXPECT_EQ(types.at("blk.3.ffn_down.weight"), Type::Q3_K);
  EXPECT_EQ(types_of("tinyllama-1.1b:q2_k").at("output.weight"), Type::Q2_K);  // the plain type
  EXPECT_THROW(synthetic_model_tensors("tinyllama-1.1b:mix:q9_9"), Error);
}

// Rules the test data's 2-layer files cannot show, on TinyLlama (22 layers, rows that fit every
// block): Q4_K_S gives Q5_K to the first 4 attn_v and the first 22 / 8 = 2 ffn_down; Q4_0 with an
// importance matrix (as synthetic mixes are planned) gives those 2 ffn_down Q4_1.
TEST(Synthetic, Q4_K_SAndQ4_0WithImatrixRaiseTheFirstLayers) {
  const auto ks = types_of("tinyllama-1.1b:q4_k_s"), q40 = types_of("tinyllama-1.1b:mix:q4_0");
  EXPECT_EQ(ks.at("output.weight"), Type::Q6_K);
  EXPECT_EQ(q40.at("output.weight"), Type::Q6_K);
  for (int il = 0; il < 22; il++) {
    const std::string p = "blk." + std::to_string(il) + ".";
    SCOPED_TRACE(p);
    EXPECT_EQ(ks.at(p + "attn_v.weight"), il < 4 ? Type::Q5_K : Type::Q4_K);
    EXPECT_EQ(ks.at(p + "ffn_down.weight"), il < 2 ? Type::Q5_K : Type::Q4_K);
    EXPECT_EQ(ks.at(p + "attn_q.weight"), Type::Q4_K);
    EXPECT_EQ(q40.at(p + "ffn_down.weight"), il < 2 ? Type::Q4_1 : Type::Q4_0);
    EXPECT_EQ(q40.at(p + "attn_v.weight"), Type::Q4_0);
  }
}

TEST(Synthetic, UnknownNameOrTypeIsAnError) {
  EXPECT_THROW(synthetic_model_tensors("no-such-model"), Error);
  EXPECT_THROW(synthetic_model_tensors("smollm2-135m:q9_9"), Error);
  EXPECT_THROW(synthetic_model_tensors("smollm2-135m:q4_k_xl"), Error);
  EXPECT_THROW(synthetic_model_tensors("smollm2-135m:copy"), Error);  // nothing to copy
}

}  // namespace
}  // namespace hart
