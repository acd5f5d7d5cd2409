#include "vision/fixtures.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "common/error.h"
#include "common/fp16.h"
#include "gguf/gguf.h"

extern "C" int stbi_write_png(char const* filename, int w, int h, int comp, const void* data, int stride_in_bytes);

namespace hart::vision::fixtures {
namespace {

// A 64-bit LCG with uniform floats in [-a, a): the values depend on nothing but the seed.
struct Rng {
  uint64_t s;
  float uniform(float a) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float(uint32_t(s >> 40)) / float(1u << 24) * 2.0f - 1.0f) * a;
  }
};

struct Tensors {
  std::vector<std::unique_ptr<std::vector<uint8_t>>> data;
  gguf::Writer w;
  Rng rng{42};

  void add(const std::string& name, std::vector<int64_t> ne, float a, bool f16, float base = 0.0f) {
    int64_t n = 1;
    for (int64_t d : ne) n *= d;
    auto& bytes = *data.emplace_back(std::make_unique<std::vector<uint8_t>>(size_t(n) * (f16 ? 2 : 4)));
    for (int64_t i = 0; i < n; i++) {
      const float v = base + rng.uniform(a);
      if (f16) {
        const fp16_t h = f32_to_fp16(v);
        std::memcpy(&bytes[size_t(i) * 2], &h, 2);
      } else {
        std::memcpy(&bytes[size_t(i) * 4], &v, 4);
      }
    }
    w.add_tensor(name, f16 ? Type::F16 : Type::F32, ne, bytes.data(), bytes.size());
  }
};

gguf::Value f32_array(std::initializer_list<float> v) {
  auto a = std::make_shared<gguf::Array>();
  a->elem_type = gguf::ValueType::FLOAT32;
  for (float x : v) a->items.emplace_back(x);
  return a;
}

}  // namespace

void write_mmproj(const std::string& path, const MmprojShape& shape) {
  constexpr int64_t kEmbd = 32, kFf = 64, kLayers = 2, kPatch = 4, kImage = 16, kMerge = 2;
  constexpr int64_t kPatches = (kImage / kPatch) * (kImage / kPatch);
  Tensors t;
  gguf::Writer& w = t.w;
  w.set("general.architecture", std::string("clip"));
  w.set("general.name", std::string("hart tiny idefics3"));
  w.set("clip.projector_type", std::string("idefics3"));
  w.set("clip.has_vision_encoder", true);
  w.set("clip.has_text_encoder", false);
  w.set("clip.use_gelu", true);
  w.set("clip.vision.image_size", uint32_t(kImage));
  w.set("clip.vision.patch_size", uint32_t(kPatch));
  w.set("clip.vision.embedding_length", uint32_t(kEmbd));
  w.set("clip.vision.feed_forward_length", uint32_t(kFf));
  w.set("clip.vision.block_count", uint32_t(kLayers));
  w.set("clip.vision.projection_dim", uint32_t(shape.n_embd_out));
  w.set("clip.vision.attention.head_count", uint32_t(4));
  w.set("clip.vision.attention.layer_norm_epsilon", 1e-6f);
  w.set("clip.vision.image_mean", f32_array({0.5f, 0.5f, 0.5f}));
  w.set("clip.vision.image_std", f32_array({0.5f, 0.5f, 0.5f}));
  w.set("clip.vision.projector.scale_factor", uint32_t(kMerge));
  w.set("clip.vision.preproc_image_size", uint32_t(32));
  const bool h = shape.f16_matrices;
  const float m = 1.0f / std::sqrt(float(kEmbd));
  t.add("v.patch_embd.weight", {kPatch, kPatch, 3, kEmbd}, 0.25f, h);
  t.add("v.patch_embd.bias", {kEmbd}, 0.1f, false);
  t.add("v.position_embd.weight", {kEmbd, kPatches}, 0.5f, false);
  for (int il = 0; il < kLayers; il++) {
    const std::string b = "v.blk." + std::to_string(il) + ".";
    for (const char* n : {"ln1", "ln2"}) {
      t.add(b + n + ".weight", {kEmbd}, 0.2f, false, 1.0f);
      t.add(b + n + ".bias", {kEmbd}, 0.1f, false);
    }
    for (const char* n : {"attn_q", "attn_k", "attn_v", "attn_out"}) {
      t.add(b + n + ".weight", {kEmbd, kEmbd}, 2 * m, h);
      t.add(b + n + ".bias", {kEmbd}, 0.1f, false);
    }
    t.add(b + "ffn_up.weight", {kEmbd, kFf}, 2 * m, h);
    t.add(b + "ffn_up.bias", {kFf}, 0.1f, false);
    t.add(b + "ffn_down.weight", {kFf, kEmbd}, 2.0f / std::sqrt(float(kFf)), h);
    t.add(b + "ffn_down.bias", {kEmbd}, 0.1f, false);
  }
  t.add("v.post_ln.weight", {kEmbd}, 0.2f, false, 1.0f);
  t.add("v.post_ln.bias", {kEmbd}, 0.1f, false);
  t.add("mm.model.fc.weight", {kEmbd * kMerge * kMerge, shape.n_embd_out}, 1.0f / std::sqrt(float(kEmbd)), h);
  w.write(path);
}

void write_text_model(const std::string& base, const std::string& path) {
  const auto in = gguf::File::open(base, gguf::LoadMode::Memory);
  std::vector<std::string> added = {"<fake_token_around_image>", "<global-img>", "\n\n"};
  for (int r = 1; r <= 4; r++)
    for (int c = 1; c <= 4; c++) added.push_back("<row_" + std::to_string(r) + "_col_" + std::to_string(c) + ">");
  const int64_t n_add = int64_t(added.size());
  gguf::Writer w;
  for (const gguf::KeyValue& kv : in->metadata()) {
    if (kv.key == "general.alignment") continue;
    gguf::Value v = kv.value;
    auto append = [&](auto make) {
      auto a = std::make_shared<gguf::Array>(*std::get<std::shared_ptr<gguf::Array>>(v));
      for (const std::string& s : added) a->items.push_back(make(s));
      v = a;
    };
    if (kv.key == "tokenizer.ggml.tokens") append([](const std::string& s) { return gguf::Value(s); });
    else if (kv.key == "tokenizer.ggml.scores") append([](const std::string&) { return gguf::Value(0.0f); });
    else if (kv.key == "tokenizer.ggml.token_type") append([](const std::string&) { return gguf::Value(int32_t(3)); });
    w.set(kv.key, v);
  }
  w.set("general.name", std::string("stories260K with Idefics3 image tokens"));
  std::vector<std::unique_ptr<std::vector<float>>> grown;
  Rng rng{7};
  for (const gguf::TensorInfo& ti : in->tensors()) {
    const bool vocab_rows = ti.name == "token_embd.weight" || ti.name == "output.weight";
    if (!vocab_rows) {
      w.add_tensor(ti.name, ti.type, std::span<const int64_t>(ti.ne, ti.n_dims), ti.data, ti.nbytes);
      continue;
    }
    if (ti.type != Type::F32) throw Error(base + ": " + ti.name + " is not F32");
    auto& rows = *grown.emplace_back(std::make_unique<std::vector<float>>(size_t(ti.ne[0] * (ti.ne[1] + n_add))));
    std::memcpy(rows.data(), ti.data, ti.nbytes);
    for (size_t i = size_t(ti.ne[0] * ti.ne[1]); i < rows.size(); i++) rows[i] = rng.uniform(0.5f);
    const int64_t ne[2] = {ti.ne[0], ti.ne[1] + n_add};
    w.add_tensor(ti.name, Type::F32, ne, rows.data(), rows.size() * sizeof(float));
  }
  w.write(path);
}

void write_png(const std::string& path, int width, int height) {
  std::vector<uint8_t> px(size_t(width) * size_t(height) * 3);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++) {
      uint8_t* p = &px[(size_t(y) * size_t(width) + size_t(x)) * 3];
      p[0] = uint8_t(x * 255 / (width - 1));
      p[1] = uint8_t(y * 255 / (height - 1));
      p[2] = uint8_t(((x / 5 + y / 4) % 2) * 200 + (x * y) % 56);
    }
  if (!stbi_write_png(path.c_str(), width, height, 3, px.data(), width * 3))
    throw Error(path + ": cannot write the PNG");
}

}  // namespace hart::vision::fixtures
