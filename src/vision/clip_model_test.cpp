#include <gtest/gtest.h>

#include <functional>

#include "common/error.h"
#include "gguf/gguf.h"
#include "vision/clip_model.h"
#include "vision/vision_testing.h"

namespace hart::vision {
namespace {

using testing::TempDir;

// The fixture projector written again with `edit` applied to its metadata and tensors.
struct Edit {
  std::function<void(gguf::Writer&)> keys = [](gguf::Writer&) {};
  std::function<bool(const gguf::TensorInfo&)> keep = [](const gguf::TensorInfo&) { return true; };
  std::function<void(gguf::Writer&)> more = [](gguf::Writer&) {};
};

std::unique_ptr<ClipModel> load_edited(const TempDir& dir, const Edit& e) {
  fixtures::write_mmproj(dir.file("base.gguf"));
  const auto in = gguf::File::open(dir.file("base.gguf"), gguf::LoadMode::Memory);
  gguf::Writer w;
  for (const gguf::KeyValue& kv : in->metadata())
    if (kv.key != "general.alignment") w.set(kv.key, kv.value);
  e.keys(w);
  for (const gguf::TensorInfo& t : in->tensors())
    if (e.keep(t)) w.add_tensor(t.name, t.type, std::span<const int64_t>(t.ne, t.n_dims), t.data, t.nbytes);
  e.more(w);
  const std::vector<uint8_t> bytes = w.to_bytes();
  return ClipModel::from_file(gguf::File::from_bytes(bytes, "edited.gguf"));
}

std::string load_error(const Edit& e) {
  TempDir dir;
  try {
    load_edited(dir, e);
  } catch (const Error& err) {
    return err.what();
  }
  return "(loaded)";
}

Edit set_key(const std::string& key, gguf::Value v) {
  Edit e;
  e.keys = [key, v](gguf::Writer& w) { w.set(key, v); };
  return e;
}

TEST(ClipModel, LoadsTheTinyIdefics3Projector) {
  TempDir dir;
  fixtures::write_mmproj(dir.file("mmproj.gguf"), {.n_embd_out = 48});
  const auto m = ClipModel::open(dir.file("mmproj.gguf"));
  EXPECT_EQ(m->hp.projector, Projector::IDEFICS3);
  EXPECT_EQ(m->hp.image_size, 16);
  EXPECT_EQ(m->hp.patch_size, 4);
  EXPECT_EQ(m->hp.n_embd, 32);
  EXPECT_EQ(m->hp.n_layer, 2);
  EXPECT_EQ(m->hp.head_dim, 8);
  EXPECT_EQ(m->hp.n_merge, 2);
  EXPECT_EQ(m->hp.longest_edge, 32);
  EXPECT_EQ(m->hp.ffn, FfnAct::GELU);
  EXPECT_EQ(m->hp.tokens_per_tile(), 4);
  EXPECT_EQ(m->n_embd_out(), 48);
  EXPECT_FLOAT_EQ(m->hp.std[1], 0.5f);
  ASSERT_NE(m->w.layers[1].down_w, nullptr);
  EXPECT_EQ(m->w.layers[1].gate_w, nullptr);
}

TEST(ClipModel, RefusesFilesThatAreNotItsProjector) {
  EXPECT_NE(load_error(set_key("general.architecture", std::string("llama"))).find("not a multimodal projector"),
            std::string::npos);
  EXPECT_NE(load_error(set_key("clip.has_vision_encoder", false)).find("no vision encoder"), std::string::npos);
  EXPECT_NE(load_error(set_key("clip.projector_type", std::string("gemma3"))).find("'gemma3' is not supported"),
            std::string::npos);
  EXPECT_NE(load_error(set_key("clip.projector_type", std::string("no-such-thing"))).find("not supported"),
            std::string::npos);
}

TEST(ClipModel, RefusesHostileHyperParameters) {
  EXPECT_NE(load_error(set_key("clip.vision.image_size", uint32_t(0))).find("image_size' is 0"), std::string::npos);
  EXPECT_NE(load_error(set_key("clip.vision.block_count", uint32_t(1u << 30))).find("block_count"), std::string::npos);
  EXPECT_NE(load_error(set_key("clip.vision.image_size", uint32_t(18))).find("not a multiple of patch_size"),
            std::string::npos);
  EXPECT_NE(load_error(set_key("clip.vision.projector.scale_factor", uint32_t(3))).find("do not divide"),
            std::string::npos);
  EXPECT_NE(load_error(set_key("clip.vision.attention.head_count", uint32_t(5))).find("not a multiple of 5 heads"),
            std::string::npos);
  EXPECT_NE(load_error(set_key("clip.vision.attention.layer_norm_epsilon", -1.0f)).find("layer_norm_epsilon"),
            std::string::npos);
  auto zero_std = std::make_shared<gguf::Array>(gguf::Array{gguf::ValueType::FLOAT32, {0.5f, 0.0f, 0.5f}});
  EXPECT_NE(load_error(set_key("clip.vision.image_std", zero_std)).find("image_std"), std::string::npos);
  auto short_mean = std::make_shared<gguf::Array>(gguf::Array{gguf::ValueType::FLOAT32, {0.5f}});
  EXPECT_NE(load_error(set_key("clip.vision.image_mean", short_mean)).find("3 numbers"), std::string::npos);
  EXPECT_NE(load_error(set_key("clip.use_silu", true)).find("both"), std::string::npos);
  EXPECT_NE(load_error(set_key("clip.vision.embedding_length", std::string("wide"))).find("embedding_length"),
            std::string::npos);
}

TEST(ClipModel, RefusesMissingExtraAndMisshapenTensors) {
  Edit missing;
  missing.keep = [](const gguf::TensorInfo& t) { return t.name != "v.blk.1.attn_k.weight"; };
  EXPECT_NE(load_error(missing).find("'v.blk.1.attn_k.weight' is missing"), std::string::npos);
  Edit no_projector;
  no_projector.keep = [](const gguf::TensorInfo& t) { return t.name != "mm.model.fc.weight"; };
  EXPECT_NE(load_error(no_projector).find("'mm.model.fc.weight' is missing"), std::string::npos);
  static const std::vector<float> row(32, 1.0f);
  Edit extra;
  extra.more = [](gguf::Writer& w) {
    const int64_t ne[1] = {32};
    w.add_tensor("v.blk.9.ln1.weight", Type::F32, ne, row.data(), row.size() * 4);
  };
  EXPECT_NE(load_error(extra).find("not part of"), std::string::npos);
  Edit shape;
  shape.keep = [](const gguf::TensorInfo& t) { return t.name != "v.post_ln.bias"; };
  shape.more = [](gguf::Writer& w) {
    const int64_t ne[2] = {16, 2};
    w.add_tensor("v.post_ln.bias", Type::F32, ne, row.data(), row.size() * 4);
  };
  EXPECT_NE(load_error(shape).find("'v.post_ln.bias' has shape [16, 2], expected [32]"), std::string::npos);
  // Fewer layers declared than the file holds: the extra layer's tensors are not the model's.
  EXPECT_NE(load_error(set_key("clip.vision.block_count", uint32_t(1))).find("not part of"), std::string::npos);
}

}  // namespace
}  // namespace hart::vision
