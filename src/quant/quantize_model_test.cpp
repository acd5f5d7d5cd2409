#include "quant/quantize_model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/error.h"
#include "common/testdata.h"
#include "quant/quant.h"

namespace hart {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("hart_quant_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

const QuantizeTarget& target(std::string_view name) {
  const QuantizeTarget* t = find_quantize_target(name);
  if (!t) throw Error("no target " + std::string(name));
  return *t;
}

std::map<std::string, Type> types_of(const gguf::File& f) {
  std::map<std::string, Type> m;
  for (const auto& t : f.tensors()) m[t.name] = t.type;
  return m;
}

std::vector<float> to_floats(const gguf::TensorInfo& t) {
  std::vector<float> v(static_cast<size_t>(t.nelements()));
  const int64_t nrows = t.nelements() / t.ne[0];
  for (int64_t r = 0; r < nrows; r++)
    dequantize_row(t.type, t.data + size_t(r) * row_size(t.type, t.ne[0]), v.data() + r * t.ne[0],
                   t.ne[0]);
  return v;
}

// Every tensor of `out` holds the same shape as in `in`, and values within rel_rmse of them.
void expect_close(const gguf::File& in, const gguf::File& out, double rel_rmse) {
  ASSERT_EQ(in.tensors().size(), out.tensors().size());
  for (const auto& a : in.tensors()) {
    SCOPED_TRACE(a.name);
    const gguf::TensorInfo* b = out.find_tensor(a.name);
    ASSERT_NE(b, nullptr);
    ASSERT_EQ(std::vector<int64_t>(a.ne, a.ne + 4), std::vector<int64_t>(b->ne, b->ne + 4));
    const auto x = to_floats(a), y = to_floats(*b);
    double err = 0, norm = 0;
    for (size_t i = 0; i < x.size(); i++) {
      err += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
      norm += double(x[i]) * x[i];
    }
    EXPECT_LE(std::sqrt(err), rel_rmse * std::sqrt(norm));
  }
}

// The types llama.cpp's llama-quantize chose for the same model and target.
void expect_plan_like_llama_cpp(const std::string& source, const std::string& reference,
                                std::string_view target_name, const std::string& dir = "models/",
                                bool has_imatrix = false) {
  SCOPED_TRACE(std::string(target_name));
  HART_REQUIRE_TESTDATA(src_path, dir + source);
  HART_REQUIRE_TESTDATA(ref_path, dir + reference);
  const auto src = gguf::File::open(src_path);
  const auto ref = types_of(*gguf::File::open(ref_path));
  const auto plan = plan_quantization(*src, target(target_name), {}, has_imatrix);
  for (size_t i = 0; i < plan.size(); i++) {
    const std::string& name = src->tensors()[i].name;
    ASSERT_TRUE(ref.count(name)) << name;
    EXPECT_EQ(type_name(plan[i].type), type_name(ref.at(name))) << name;
  }
}

TEST(QuantizeModel, PlanMatchesLlamaCppFallbacks) {
  // 64-wide rows cannot hold K-quant blocks: Q5_0 / Q8_0, and F16 for the 172-wide ffn_down.
  expect_plan_like_llama_cpp("stories260K.gguf", "stories260K-Q4_K_M.gguf", "Q4_K_M");
  expect_plan_like_llama_cpp("stories260K.gguf", "stories260K-Q6_K.gguf", "Q6_K");
}

TEST(QuantizeModel, PlanMatchesLlamaCppMixes) {
  // 256-wide rows: Q6_K for output, blk.1.attn_v and blk.1.ffn_down (use_more_bits), else Q4_K.
  expect_plan_like_llama_cpp("kq-tiny-Q4_K_M.gguf", "kq-tiny-Q4_K_M.gguf", "Q4_K_M");
  expect_plan_like_llama_cpp("kq-tiny-Q6_K.gguf", "kq-tiny-Q6_K.gguf", "Q6_K");
}

TEST(QuantizeModel, PlanMatchesLlamaCppForExperts) {
  // 3-D expert tensors are quantized like their 2-D namesakes; the router (ffn_gate_inp) is kept.
  expect_plan_like_llama_cpp("qwen3moe-tiny-F32.gguf", "qwen3moe-tiny-Q4_0.gguf", "Q4_0", "archs/models/");
  expect_plan_like_llama_cpp("olmoe-tiny-F32.gguf", "olmoe-tiny-Q8_0.gguf", "Q8_0", "archs/models/");
}

// qtypes/: one F32 model (2 layers, 2 heads on 2 KV heads, so no GQA rules; 384-wide ffn_down rows
// that fall back) and llama-quantize's file of each mix.
TEST(QuantizeModel, PlanMatchesLlamaCppLowBitMixes) {
  for (const char* mix : {"Q2_K", "Q3_K_S", "Q3_K_M", "IQ4_XS", "TQ1_0", "TQ2_0", "MXFP4_MOE", "Q4_K_S", "Q5_K_S",
                          "Q5_K_M", "Q6_K"})
    expect_plan_like_llama_cpp("qt-llama-F32.gguf", std::string("qt-llama-") + mix + ".gguf", mix, "qtypes/models/");
}

// llama-quantize's aliases: Q3_K, Q4_K and Q5_K are its Q3_K_M, Q4_K_M and Q5_K_M (the same per-tensor
// types and general.file_type), not one type for every matrix.
TEST(QuantizeModel, AliasesAreLlamaQuantizesMixes) {
  expect_plan_like_llama_cpp("qt-llama-F32.gguf", "qt-llama-Q3_K_M.gguf", "Q3_K", "qtypes/models/");
  expect_plan_like_llama_cpp("qt-llama-F32.gguf", "qt-llama-Q5_K_M.gguf", "q5_k", "qtypes/models/");
  expect_plan_like_llama_cpp("kq-tiny-Q4_K_M.gguf", "kq-tiny-Q4_K_M.gguf", "Q4_K");
  for (auto [alias, mix] : {std::pair{"Q3_K", "Q3_K_M"}, {"Q4_K", "Q4_K_M"}, {"Q5_K", "Q5_K_M"}}) {
    EXPECT_EQ(target(alias).file_type, target(mix).file_type) << alias;
    EXPECT_EQ(target(alias).alias_of, mix);
  }
}

// The target list is llama-quantize's: its names, case-insensitive, and its LLAMA_FTYPE numbers,
// a number naming the first target that has it (12 is listed as Q3_K, 0 as F32 and not COPY).
TEST(QuantizeModel, TargetsAreLlamaQuantizesList) {
  std::vector<std::string> names;
  for (const auto& t : quantize_targets()) names.emplace_back(t.name);
  const std::vector<std::string> want = {
      "Q1_0",   "Q2_0",   "Q4_0",   "Q4_1",   "MXFP4_MOE", "Q5_0",   "Q5_1",   "IQ2_XXS", "IQ2_XS", "IQ2_S",
      "IQ2_M",  "IQ1_S",  "IQ1_M",  "TQ1_0",  "TQ2_0",     "Q2_K",   "Q2_K_S", "IQ3_XXS", "IQ3_S",  "IQ3_M",
      "Q3_K",   "IQ3_XS", "Q3_K_S", "Q3_K_M", "Q3_K_L",    "IQ4_NL", "IQ4_XS", "Q4_K",    "Q4_K_S", "Q4_K_M",
      "Q5_K",   "Q5_K_S", "Q5_K_M", "Q6_K",   "Q8_0",      "F16",    "BF16",   "F32",     "COPY"};
  EXPECT_EQ(names, want);
  const std::pair<const char*, uint32_t> ids[] = {
      {"Q1_0", 40}, {"Q2_0", 41}, {"Q4_0", 2},  {"Q4_1", 3},  {"MXFP4_MOE", 38}, {"Q5_0", 8},   {"Q5_1", 9},
      {"IQ2_XXS", 19}, {"IQ2_XS", 20}, {"IQ2_S", 28}, {"IQ2_M", 29}, {"IQ1_S", 24}, {"IQ1_M", 31}, {"TQ1_0", 36},
      {"TQ2_0", 37}, {"Q2_K", 10}, {"Q2_K_S", 21}, {"IQ3_XXS", 23}, {"IQ3_S", 26}, {"IQ3_M", 27}, {"IQ3_XS", 22},
      {"Q3_K_S", 11}, {"Q3_K_M", 12}, {"Q3_K_L", 13}, {"IQ4_NL", 25}, {"IQ4_XS", 30}, {"Q4_K_S", 14},
      {"Q4_K_M", 15}, {"Q5_K_S", 16}, {"Q5_K_M", 17}, {"Q6_K", 18}, {"Q8_0", 7}, {"F16", 1}, {"BF16", 32},
      {"F32", 0}};
  for (auto [name, id] : ids) EXPECT_EQ(target(name).file_type, id) << name;
  EXPECT_EQ(target("q4_k_s").name, "Q4_K_S");
  EXPECT_EQ(target("copy").name, "COPY");
  EXPECT_TRUE(target("COPY").copy);
  EXPECT_EQ(target("14").name, "Q4_K_S");
  EXPECT_EQ(target("15").name, "Q4_K");
  EXPECT_EQ(target("12").name, "Q3_K");
  EXPECT_EQ(target("0").name, "F32");
  EXPECT_EQ(target("41").name, "Q2_0");
  for (const char* bad : {"99", "-1", "15x", "", "Q4_K_XL", "q8_K"}) EXPECT_EQ(find_quantize_target(bad), nullptr) << bad;
}

// The IQ mixes, quantized by llama-quantize with qt-llama.imatrix.gguf (which changes IQ3_XXS's
// attn_v): Q2_K / IQ3_S embeddings, Q5_K output, IQ2_XXS attn_output for IQ1, IQ4_NL fallbacks.
TEST(QuantizeModel, PlanMatchesLlamaCppIqMixes) {
  for (const char* mix : {"IQ4_NL", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S", "IQ1_M"})
    expect_plan_like_llama_cpp("qt-llama-F32.gguf", std::string("qt-llama-") + mix + ".gguf", mix, "qtypes/models/",
                               true);
}

// The mixes the test data has no llama.cpp file of, by llama_tensor_get_type's rules for this
// model: Q2_K_S is Q2_K but for the Q6_K output (no GQA, and n_layer / 8 = 0 layers of Q4_K
// ffn_down); Q3_K_L gives attn_v, attn_output and ffn_down Q5_K (ffn_down falls back to Q5_1).
TEST(QuantizeModel, PlanOfQ2_K_SAndQ3_K_L) {
  HART_REQUIRE_TESTDATA(path, "qtypes/models/qt-llama-F32.gguf");
  const auto src = gguf::File::open(path);
  for (auto [mix, base] : {std::pair<const char*, Type>{"Q2_K_S", Type::Q2_K}, {"Q3_K_L", Type::Q3_K}}) {
    const bool l = std::string(mix) == "Q3_K_L";
    const auto plan = plan_quantization(*src, target(mix));
    for (size_t i = 0; i < plan.size(); i++) {
      const gguf::TensorInfo& t = src->tensors()[i];
      const std::string& n = t.name;
      Type want = base;
      if (t.n_dims == 1 || !n.ends_with("weight")) want = t.type;
      else if (n == "output.weight") want = Type::Q6_K;
      else if (n.find("ffn_down") != n.npos) want = l ? Type::Q5_1 : Type::Q4_0;
      else if (l && (n.find("attn_v") != n.npos || n.find("attn_output") != n.npos)) want = Type::Q5_K;
      EXPECT_EQ(type_name(plan[i].type), type_name(want)) << mix << " " << n;
    }
  }
}

// IQ2_M, IQ3_XS and IQ3_M (no llama.cpp file in the test data) by llama_tensor_get_type's rules
// for this model (2 layers, no GQA, an untied output; ffn_down 384 wide falls back to IQ4_NL):
// IQ2_M is IQ2_S with IQ3_S embeddings, attn_v and attn_output and a Q5_K output; IQ3_XS is
// IQ3_S with IQ3_XXS attn_q / attn_k and (in layer 0, of [n/8, 7n/8)) ffn_gate / ffn_up; IQ3_M
// is IQ3_S with Q4_K attn_v and attn_output.
TEST(QuantizeModel, PlanOfIQ2_MIQ3_XSAndIQ3_M) {
  HART_REQUIRE_TESTDATA(path, "qtypes/models/qt-llama-F32.gguf");
  const auto src = gguf::File::open(path);
  struct Rule {
    const char* mix;
    const char* part;  // tensor name part ("" for the rest)
    Type type;
  };
  const Rule rules[] = {
      {"IQ2_M", "token_embd", Type::IQ3_S}, {"IQ2_M", "output.weight", Type::Q5_K}, {"IQ2_M", "attn_v", Type::IQ3_S},
      {"IQ2_M", "attn_output", Type::IQ3_S}, {"IQ2_M", "ffn_down", Type::IQ4_NL}, {"IQ2_M", "", Type::IQ2_S},
      {"IQ3_XS", "output.weight", Type::Q6_K}, {"IQ3_XS", "attn_q", Type::IQ3_XXS}, {"IQ3_XS", "attn_k", Type::IQ3_XXS},
      {"IQ3_XS", "blk.0.ffn_gate", Type::IQ3_XXS}, {"IQ3_XS", "blk.0.ffn_up", Type::IQ3_XXS},
      {"IQ3_XS", "ffn_down", Type::IQ4_NL}, {"IQ3_XS", "", Type::IQ3_S},
      {"IQ3_M", "output.weight", Type::Q6_K}, {"IQ3_M", "attn_v", Type::Q4_K}, {"IQ3_M", "attn_output", Type::Q4_K},
      {"IQ3_M", "ffn_down", Type::IQ4_NL}, {"IQ3_M", "", Type::IQ3_S},
  };
  for (const char* mix : {"IQ2_M", "IQ3_XS", "IQ3_M"}) {
    const auto plan = plan_quantization(*src, target(mix), {}, true);
    for (size_t i = 0; i < plan.size(); i++) {
      const gguf::TensorInfo& t = src->tensors()[i];
      const std::string& n = t.name;
      Type want = t.type;
      if (t.n_dims > 1 && n.ends_with("weight")) {
        for (const Rule& r : rules) {
          const bool match = n.rfind(r.part, 0) == 0 || n.find(std::string(".") + r.part) != n.npos;
          if (std::string(r.mix) == mix && match) {
            want = r.type;
            break;
          }
        }
      }
      EXPECT_EQ(type_name(plan[i].type), type_name(want)) << mix << " " << n;
    }
  }
}

// QuantizeOptions from a case's "options" (llama-quantize's flags, named as the struct's fields).
QuantizeOptions options_of(const nlohmann::json& j) {
  QuantizeOptions o;
  auto type = [&](const char* key) -> std::optional<Type> {
    if (!j.contains(key)) return std::nullopt;
    const auto t = type_from_name(j[key].get<std::string>());
    if (!t) throw Error("unknown type in " + j.dump());
    return t;
  };
  o.pure = j.value("pure", false);
  o.leave_output_tensor = j.value("leave_output_tensor", false);
  o.allow_requantize = j.value("allow_requantize", false);
  o.output_tensor_type = type("output_tensor_type");
  o.token_embedding_type = type("token_embedding_type");
  return o;
}

// llama-quantize's own choices, recorded by running it (tests/quantize/llama_quantize_types.json: the
// commands, and in its "about" how they were run) for --pure, --output-tensor-type, --token-embedding-type
// (also on tied embeddings), --leave-output-tensor, --allow-requantize, Q1_0, Q2_0, Q4_K_S as its number,
// the aliases and COPY: every tensor gets llama-quantize's type and the file its general.file_type; where
// llama-quantize stopped (Q1_0 rows with no fallback, a quantized input without --allow-requantize), hart
// refuses before writing anything.
TEST(QuantizeModel, PlansMatchLlamaQuantizeWithItsOptions) {
  std::ifstream file(HART_QUANTIZE_REFERENCE);
  const nlohmann::json doc = nlohmann::json::parse(file);
  TempDir dir;
  int n_cases = 0;
  for (const auto& c : doc["cases"]) {
    SCOPED_TRACE(c["command"].get<std::string>());
    HART_REQUIRE_TESTDATA(path, c["model"].get<std::string>());
    const auto src = gguf::File::open(path);
    const QuantizeTarget& t = target(c["type"].get<std::string>());
    const QuantizeOptions options = options_of(c.value("options", nlohmann::json::object()));
    if (c.contains("error")) {
      EXPECT_THROW(quantize_model(path, dir.file("out.gguf"), t, options, 2), Error);
      EXPECT_FALSE(fs::exists(dir.file("out.gguf")));
      n_cases++;
      continue;
    }
    std::vector<gguf::TensorInfo> tensors;
    for (const auto& info : src->tensors())
      if (info.name != c.value("without", "")) tensors.push_back(info);
    const auto plan = plan_quantization(*src, tensors, t, options);
    const auto& want = c["types"];
    size_t listed = 0;
    for (size_t i = 0; i < plan.size(); i++) {
      const std::string& name = tensors[i].name;
      const bool in_list = want.contains(name);
      listed += in_list;
      EXPECT_EQ(type_name(plan[i].type), in_list ? want[name].get<std::string>() : type_name(tensors[i].type)) << name;
    }
    EXPECT_EQ(listed, want.size());
    EXPECT_EQ(output_file_type(*src, t), c["file_type"].get<uint32_t>());
    n_cases++;
  }
  EXPECT_EQ(n_cases, 25);
}

// Without an importance matrix the IQ1-IQ3 mixes are refused, naming the flag, before anything is
// written; with one they quantize.
TEST(QuantizeModel, IqMixesNeedAnImportanceMatrix) {
  HART_REQUIRE_TESTDATA(path, "qtypes/models/qt-llama-F32.gguf");
  TempDir dir;
  for (const char* mix : {"IQ2_XXS", "IQ3_XXS", "IQ1_M", "Q2_K_S"}) {
    SCOPED_TRACE(mix);
    try {
      quantize_model(path, dir.file("out.gguf"), target(mix), {}, 2);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--imatrix"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(dir.file("out.gguf")));
  }
}

// MXFP4_MOE on a mixture of experts: the stacked (3-D) expert matrices MXFP4, every other matrix
// Q8_0 (output and embeddings included), the rest kept.
TEST(QuantizeModel, PlanOfMXFP4_MOEForExperts) {
  HART_REQUIRE_TESTDATA(path, "archs/models/olmoe-tiny-F32.gguf");
  const auto src = gguf::File::open(path);
  const auto plan = plan_quantization(*src, target("MXFP4_MOE"));
  int n_mxfp4 = 0;
  for (size_t i = 0; i < plan.size(); i++) {
    const gguf::TensorInfo& t = src->tensors()[i];
    const std::string& n = t.name;
    Type want = Type::Q8_0;
    if (t.n_dims == 1 || n.find("_norm") != n.npos || n.find("ffn_gate_inp") != n.npos) want = t.type;
    else if (t.ne[2] > 1) want = Type::MXFP4;
    n_mxfp4 += want == Type::MXFP4;
    EXPECT_EQ(type_name(plan[i].type), type_name(want)) << n;
  }
  EXPECT_GT(n_mxfp4, 0);
}

// Whole-model quantization through the low-bit quantizers (Q2_K, Q3_K, Q4_0 and Q6_K; IQ4_XS, IQ4_NL
// and Q6_K; TQ1_0 / TQ2_0, Q4_K, Q4_0 and Q6_K; Q8_0 for MXFP4_MOE on a model without experts): llama.cpp's tensor types, and values near the source.
TEST(QuantizeModel, QtLlamaToLowBitMixes) {
  HART_REQUIRE_TESTDATA(path, "qtypes/models/qt-llama-F32.gguf");
  TempDir dir;
  const auto in = gguf::File::open(path);
  for (auto [mix, rel_rmse] : {std::pair<const char*, double>{"Q2_K", 0.5}, {"IQ4_XS", 0.15}, {"TQ1_0", 0.9},
                               {"TQ2_0", 0.9}, {"MXFP4_MOE", 0.01}}) {
    SCOPED_TRACE(mix);
    HART_REQUIRE_TESTDATA(ref_path, std::string("qtypes/models/qt-llama-") + mix + ".gguf");
    const std::string out_path = dir.file(std::string(mix) + ".gguf");
    quantize_model(path, out_path, target(mix), {}, 2);
    const auto out = gguf::File::open(out_path);
    EXPECT_EQ(types_of(*out), types_of(*gguf::File::open(ref_path)));
    EXPECT_EQ(out->get_int("general.file_type"), target(mix).file_type);
    expect_close(*in, *out, rel_rmse);
  }
}

// With llama-quantize's importance matrix, the tensors of `exact` types come out byte for byte as
// in llama.cpp's file of the mix (the other types' quantizers do not use the weights yet); returns
// how many tensors were compared. The caller checks that the test data is there.
int expect_imatrix_bytes_like_llama_cpp(const std::string& mix, std::initializer_list<Type> exact) {
  SCOPED_TRACE(mix);
  const std::string path = testdata_path("qtypes/models/qt-llama-F32.gguf");
  const std::string im_path = testdata_path("qtypes/qt-llama.imatrix.gguf");
  const std::string ref_path = testdata_path("qtypes/models/qt-llama-" + mix + ".gguf");
  TempDir dir;
  const auto imatrix = ImportanceMatrix::load(im_path);
  const std::string out_path = dir.file(mix + ".gguf");
  quantize_model(path, out_path, target(mix), {}, 2, {}, &imatrix);
  const auto out = gguf::File::open(out_path), ref = gguf::File::open(ref_path);
  EXPECT_EQ(types_of(*out), types_of(*ref));
  int compared = 0;
  for (const auto& t : out->tensors()) {
    if (std::find(exact.begin(), exact.end(), t.type) == exact.end()) continue;
    const gguf::TensorInfo* r = ref->find_tensor(t.name);
    EXPECT_TRUE(r && r->nbytes == t.nbytes && std::memcmp(r->data, t.data, t.nbytes) == 0)
        << t.name << " (" << type_name(t.type) << ") differs from llama-quantize's";
    compared++;
  }
  return compared;
}

TEST(QuantizeModel, ImatrixQuantizationMatchesLlamaQuantize) {
  HART_REQUIRE_TESTDATA(dir, "qtypes/models");
  HART_REQUIRE_TESTDATA(im_path, "qtypes/qt-llama.imatrix.gguf");
  // token_embd (no imatrix values: unweighted), 12 IQ4_XS matrices, the two 384-wide ffn_down
  // that fall back to IQ4_NL and the Q6_K output.
  EXPECT_EQ(expect_imatrix_bytes_like_llama_cpp("IQ4_XS", {Type::IQ4_XS, Type::IQ4_NL, Type::Q6_K}), 16);
  EXPECT_EQ(expect_imatrix_bytes_like_llama_cpp("Q6_K", {Type::Q6_K}), 14);
  // Q5_K and Q6_K (attn_v and the output); ffn_down's Q5_1 fallback is not compared.
  EXPECT_EQ(expect_imatrix_bytes_like_llama_cpp("Q5_K_M", {Type::Q5_K, Type::Q6_K}), 14);
  // Q3_K_M's Q3_K matrices and embeddings, Q4_K attn_output, Q5_K attn_v and Q6_K output.
  EXPECT_EQ(expect_imatrix_bytes_like_llama_cpp("Q3_K_M", {Type::Q3_K, Type::Q4_K, Type::Q5_K, Type::Q6_K}), 14);
  EXPECT_EQ(expect_imatrix_bytes_like_llama_cpp("Q3_K_S", {Type::Q3_K, Type::Q6_K}), 14);
  EXPECT_EQ(expect_imatrix_bytes_like_llama_cpp("IQ4_NL", {Type::IQ4_NL}), 15);
  // The IQ mixes' tensors but the Q2_K ones (ggml's imatrix Q2_K quantizer is not in hart yet).
  const std::initializer_list<Type> iq = {Type::IQ1_S, Type::IQ1_M, Type::IQ2_XXS, Type::IQ2_XS, Type::IQ2_S,
                                          Type::IQ3_XXS, Type::IQ3_S, Type::IQ4_NL, Type::Q5_K, Type::Q6_K};
  for (const char* mix : {"IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S", "IQ1_M"})
    EXPECT_GE(expect_imatrix_bytes_like_llama_cpp(mix, iq), 8) << mix;
}

TEST(QuantizeModel, StoriesToQ8_0) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  TempDir dir;
  const std::string out_path = dir.file("q8_0.gguf");
  std::vector<QuantizeProgress> events;
  const auto summary = quantize_model(path, out_path, target("q8_0"), {}, 2,
                                      [&](const QuantizeProgress& p) { events.push_back(p); });
  const auto in = gguf::File::open(path);
  const auto out = gguf::File::open(out_path);
  EXPECT_EQ(out->get_int("general.file_type"), 7);
  EXPECT_EQ(out->get_int("llama.block_count"), 5);
  EXPECT_EQ(out->metadata().size(),
            in->metadata().size() + 2);  // + file_type, quantization_version
  for (const auto& t : out->tensors()) {
    SCOPED_TRACE(t.name);
    if (t.n_dims == 1) EXPECT_EQ(t.type, Type::F32);                      // norms
    else if (t.ne[0] % 32 == 0) EXPECT_EQ(t.type, Type::Q8_0);
    else EXPECT_EQ(t.type, Type::F16);  // 172-wide ffn_down: F16, as llama-quantize's fallback
  }
  expect_close(*in, *out, 0.01);
  EXPECT_EQ(summary.n_tensors, in->tensors().size());
  EXPECT_EQ(summary.n_fallback, 5u);
  EXPECT_LT(summary.tensor_bytes_out, summary.tensor_bytes_in / 2);
  EXPECT_EQ(summary.file_bytes_out, fs::file_size(out_path));

  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().stage, QuantizeProgress::Stage::Write);
  EXPECT_EQ(events.back().done, events.back().total);
  size_t finished = 0;  // every tensor reports its last row
  for (const auto& e : events)
    finished += e.stage == QuantizeProgress::Stage::Convert && e.done == e.total;
  EXPECT_EQ(finished, in->tensors().size());
}

TEST(QuantizeModel, StoriesToQ4_K_MAndRequantize) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  HART_REQUIRE_TESTDATA(ref_path, "models/stories260K-Q4_K_M.gguf");
  TempDir dir;
  const std::string q4km = dir.file("q4_k_m.gguf"), back = dir.file("f16.gguf");
  quantize_model(path, q4km, target("Q4_K_M"), {}, 1);
  const auto in = gguf::File::open(path);
  const auto out = gguf::File::open(q4km);
  EXPECT_EQ(types_of(*out), types_of(*gguf::File::open(ref_path)));
  EXPECT_EQ(out->get_int("general.file_type"), 15);
  expect_close(*in, *out, 0.08);

  // Requantization: the quantized tensors dequantize again, to F16 here.
  quantize_model(q4km, back, target("F16"), {.allow_requantize = true}, 3);
  const auto f16 = gguf::File::open(back);
  for (const auto& t : f16->tensors())
    EXPECT_EQ(t.type, t.n_dims == 1 ? Type::F32 : Type::F16) << t.name;
  expect_close(*out, *f16, 1e-3);
}

// llama-quantize refuses to convert a tensor that is already quantized unless --allow-requantize:
// before anything is written, in one line naming the flag. Tensors that keep their type need no
// flag (the same mix again converts nothing), and neither do float sources.
TEST(QuantizeModel, RequantizingNeedsAllowRequantize) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K-Q4_K_M.gguf");
  TempDir dir;
  const std::string out = dir.file("q8_0.gguf");
  try {
    quantize_model(path, out, target("Q8_0"), {}, 2);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--allow-requantize"), std::string::npos) << what;
    EXPECT_NE(what.find("already quantized"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(quantize_model(path, out, target("Q4_K_M"), {}, 2).n_converted, 0u);
  const auto summary = quantize_model(path, out, target("Q8_0"), {.allow_requantize = true}, 2);
  EXPECT_GT(summary.n_converted, 0u);
  const auto q8 = gguf::File::open(out);
  for (const auto& t : q8->tensors()) {
    if (t.n_dims > 1 && t.ne[0] % 32 == 0) {
      EXPECT_EQ(t.type, Type::Q8_0) << t.name;
    }
  }
}

// COPY converts nothing (a quantized source needs no --allow-requantize) and keeps the input's
// file type: its general.file_type, or without one what llama.cpp's loader guesses (the most
// common tensor type's, F32 here) flagged LLAMA_FTYPE_GUESSED (1024).
TEST(QuantizeModel, CopyKeepsEveryTensor) {
  HART_REQUIRE_TESTDATA(q4km, "models/stories260K-Q4_K_M.gguf");
  HART_REQUIRE_TESTDATA(f32, "qtypes/models/qt-llama-F32.gguf");
  TempDir dir;
  for (auto [path, file_type] : {std::pair<std::string, int64_t>{q4km, 15}, {f32, 1024}}) {
    SCOPED_TRACE(path);
    const std::string out = dir.file("copy.gguf");
    EXPECT_EQ(quantize_model(path, out, target("COPY"), {}, 2).n_converted, 0u);
    const auto in = gguf::File::open(path), copy = gguf::File::open(out);
    EXPECT_EQ(copy->get_int("general.file_type"), file_type);
    ASSERT_EQ(copy->tensors().size(), in->tensors().size());
    for (const auto& t : in->tensors()) {
      const gguf::TensorInfo* c = copy->find_tensor(t.name);
      ASSERT_NE(c, nullptr) << t.name;
      EXPECT_TRUE(c->type == t.type && c->nbytes == t.nbytes && std::memcmp(c->data, t.data, t.nbytes) == 0) << t.name;
    }
  }
}

// Q1_0 has no fallback type in llama-quantize: rows of 64 (stories260K) cannot be made Q1_0, and
// the error says so before anything is written.
TEST(QuantizeModel, Q1_0RowsThatDoNotFitAreRefused) {
  HART_REQUIRE_TESTDATA(path, "models/stories260K.gguf");
  TempDir dir;
  try {
    quantize_model(path, dir.file("q1_0.gguf"), target("Q1_0"), {}, 2);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no fallback type for q1_0"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.file("q1_0.gguf")));
}

TEST(QuantizeModel, ReportsBadInput) {
  TempDir dir;
  EXPECT_EQ(find_quantize_target("IQ5_K"), nullptr);
  EXPECT_EQ(find_quantize_target("q3_k_m")->type, Type::Q3_K);
  EXPECT_EQ(find_quantize_target("q5_k_m")->type, Type::Q5_K);
  EXPECT_THROW(quantize_model(dir.file("missing.gguf"), dir.file("out.gguf"), target("Q8_0"), {}, 1),
               Error);
  EXPECT_FALSE(fs::exists(dir.file("out.gguf")));
}

}  // namespace
}  // namespace hart
