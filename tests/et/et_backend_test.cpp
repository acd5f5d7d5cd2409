// The ET backend against the CPU reference: graph parts with every device op, the fusions, the
// uberkernel, the KV cache staying on the device, and the device lock across processes.
#include "backend/et/et_backend.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/op_test_util.h"
#include "backend/et/device_lock.h"
#include "backend/et/emu/emulator.h"
#include "backend/perf_log.h"
#include "common/error.h"
#include "sched/scheduler.h"
#include "testing/dense.h"

namespace hart::et {
namespace {

using cpu::test::Bench;
using testing::Dense;
using testing::read;

struct TempDir {
  std::string path = (std::filesystem::temp_directory_path() / "hart-et-backend-XXXXXX").string();
  TempDir() {
    if (!mkdtemp(path.data())) std::abort();
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

emu::EmuConfig small_device(const std::string& lock_dir) {
  emu::EmuConfig cfg;
  cfg.lock_dir = lock_dir;
  cfg.shires = 4;
  cfg.memory_bytes = 256ull << 20;
  return cfg;
}

std::unique_ptr<EtBackend> make_backend(const std::string& lock_dir, bool uber, PerfLog* log = nullptr) {
  EtOptions o;
  o.uberkernel = uber;
  o.perf_log = log;
  return std::make_unique<EtBackend>(emu::open_emulator(small_device(lock_dir)), o);
}

// Owns a graph's planned memory (reuse_after: plan_memory's, as a backend asks for it).
struct Planned {
  Graph g;
  std::vector<std::byte> mem;
  explicit Planned(std::initializer_list<Tensor*> outs, size_t reuse_after = 0) : g(build_graph(outs)) {
    mem.resize(plan_memory(g, nullptr, 64, reuse_after) + 64);
    plan_memory(g, mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64, 64, reuse_after);
  }
};

// One decoder-layer-like graph: every device op, both fusions, a 4-D broadcast.
struct Layer {
  Bench b;
  Tensor* out;
  explicit Layer(Type wtype) {
    Context& c = b.ctx;
    const int64_t d = 64, hd = 16, nh = 4, nkv = 2, t = 3;
    Tensor* tokens = b.random(Type::I32, {t}, 0, 10);
    Tensor* x = get_rows(c, b.random(wtype, {d, 10}), tokens);                         // (d, t)
    Tensor* h = mul(c, rms_norm(c, x, 1e-5f), b.random(Type::F32, {d}));               // fused
    Tensor* q = reshape(c, mul_mat(c, b.random(wtype, {d, hd * nh}), h), {hd, nh, t});
    Tensor* k = reshape(c, mul_mat(c, b.random(wtype, {d, hd * nkv}), h), {hd, nkv, t});
    Tensor* v = reshape(c, mul_mat(c, b.random(wtype, {d, hd * nkv}), h), {hd, nkv, t});
    Tensor* pos = b.random(Type::I32, {t}, 0, 100);
    q = rope(c, q, pos, nullptr, RopeMode::NEOX, hd, 10000.0f, 1.0f);
    k = rope(c, k, pos, nullptr, RopeMode::NORMAL, hd, 10000.0f, 1.0f);
    Tensor* kf16 = cpy(c, k, b.random(Type::F16, {hd, nkv, t}));
    Tensor* mask = b.random(Type::F32, {t, t}, -1.0f, 0.0f);
    Tensor* attn = flash_attn_ext(c, q, kf16, v, mask, 0.25f);                          // (hd, nh, t)
    Tensor* o = mul_mat(c, b.random(wtype, {hd * nh, d}), reshape(c, attn, {hd * nh, t}));
    x = add(c, x, o);                                                                   // fused
    Tensor* g = mul_mat(c, b.random(wtype, {d, 96}), x);
    Tensor* u = mul_mat(c, b.random(wtype, {d, 96}), x);
    Tensor* f = mul_mat(c, b.random(wtype, {96, d}), glu(c, g, u, Glu::SWIGLU));
    Tensor* sm = soft_max(c, scale(c, cont(c, transpose(c, f)), 0.005f), nullptr, 1.0f, 0.0f);
    out = add(c, sm, b.random(Type::F32, {1, d}));
  }
};

double nmse(const Dense& got, const Dense& want) {
  double err = 0, ref = 0;
  for (size_t i = 0; i < want.v.size(); i++) {
    err += (got.v[i] - want.v[i]) * (got.v[i] - want.v[i]);
    ref += want.v[i] * want.v[i];
  }
  return err / std::max(ref, 1e-30);
}

void check_layer(Type wtype, bool uber) {
  TempDir dir;
  auto et = make_backend(dir.path, uber);
  cpu::CpuBackend cpu(1);
  Layer a(wtype), b(wtype);
  Planned pa({a.out}, et->reuse_after()), pb({b.out});
  sched::Scheduler s({et.get(), &cpu});
  s.compute(pa.g);
  cpu.compute(pb.g);
  EXPECT_EQ(s.last_stats().nodes[1], 0u) << "every op of the layer runs on the device";
  EXPECT_EQ(s.last_stats().splits, 1u);
  // Quantized weights: the CPU also quantizes activations (Q8), which the device does not.
  EXPECT_LT(nmse(read(*a.out), read(*b.out)), type_info(wtype).quantized ? 2e-2 : 1e-6);
  // 20 computing nodes; RMS_NORM+MUL and MUL_MAT+ADD fuse (the second only because the planner
  // did not give the ADD the memory of the MUL_MAT's input at once: EtBackend::reuse_after), and
  // the gate and up products with their GLU (not F32's, which the matrix engine takes)
  const size_t ops = wtype == Type::F32 ? 18 : 16;
  EXPECT_EQ(et->stats().ops, ops);
  EXPECT_EQ(et->stats().launches, uber ? 1u : ops);
  EXPECT_GT(et->stats().launch_device_s, 0.0);
}

TEST(EtBackend, LayerMatchesCpuF32) { check_layer(Type::F32, false); }
TEST(EtBackend, LayerMatchesCpuQ8_0) { check_layer(Type::Q8_0, false); }
TEST(EtBackend, LayerMatchesCpuQ4_0Uberkernel) { check_layer(Type::Q4_0, true); }
TEST(EtBackend, LayerMatchesCpuF16Uberkernel) { check_layer(Type::F16, true); }

// The graph `build` makes, run by the scheduler (the device first, the CPU for the rest) and by
// the CPU alone: where the nodes went, and how far the results are apart.
struct Placed {
  sched::Scheduler::Stats stats;
  double nmse;
};

Placed place_and_compare(EtBackend& et, Tensor* (*build)(Bench&)) {
  cpu::CpuBackend cpu(1);
  Bench ba, bb;
  Tensor* oa = build(ba);
  Tensor* ob = build(bb);
  Planned pa({oa}), pb({ob});
  sched::Scheduler s({&et, &cpu});
  s.compute(pa.g);
  cpu.compute(pb.g);
  return {s.last_stats(), nmse(read(*oa), read(*ob))};
}

TEST(EtBackend, SplitsWithCpuAroundUnsupportedOps) {
  TempDir dir;
  auto et = make_backend(dir.path, false);
  const Placed r = place_and_compare(*et, [](Bench& b) {
    Tensor* x = b.random(Type::F32, {32, 4});
    Tensor* y = mul_mat(b.ctx, b.random(Type::Q8_0, {32, 32}), x);
    Tensor* z = mul_mat(b.ctx, b.random(Type::BF16, {32, 32}), y);  // no device kernel for BF16 weights
    return add(b.ctx, mul_mat(b.ctx, b.random(Type::Q4_0, {32, 32}), z), y);
  });
  EXPECT_EQ(r.stats.splits, 3u);
  EXPECT_EQ(r.stats.nodes, (std::vector<size_t>{3, 1}));
  EXPECT_LT(r.nmse, 5e-4);  // the CPU quantizes activations to Q8
}

// A GeGLU feed-forward block (Gemma's) over Q4_K weights with a SiLU-gated branch and a SUB:
// every op is placed on the device, each launch names its kernel, and the result matches the CPU.
TEST(EtBackend, GegluFfnWithQ4_KWeightsRunsOnTheDevice) {
  TempDir dir;
  const std::string path = dir.path + "/perf.log";
  auto log = std::make_unique<PerfLog>(path);
  auto et = make_backend(dir.path, false, log.get());
  const Placed r = place_and_compare(*et, [](Bench& b) {
    Context& c = b.ctx;
    const int64_t d = 256, ff = 512, t = 3;
    Tensor* x = b.random(Type::F32, {d, t});
    Tensor* g = mul_mat(c, b.random(Type::Q4_K, {d, ff}), x);
    Tensor* u = mul_mat(c, b.random(Type::Q4_K, {d, ff}), x);
    Tensor* f = mul_mat(c, b.random(Type::Q4_K, {ff, d}), glu(c, g, u, Glu::GEGLU));
    Tensor* s = mul(c, unary(c, x, Unary::SILU), unary(c, f, Unary::GELU));
    return sub(c, s, b.random(Type::F32, {d}));
  });
  EXPECT_EQ(r.stats.nodes[1], 0u) << "every op runs on the device";
  EXPECT_EQ(r.stats.splits, 1u);
  EXPECT_EQ(et->stats().ops, 6u);  // the gate and up products fused with their GLU
  EXPECT_LT(r.nmse, 5e-4);  // the CPU quantizes activations to Q8_K
  et.reset();
  log.reset();
  std::ifstream in(path);
  std::vector<std::string> kernels;
  for (std::string l; std::getline(in, l);) {
    const size_t at = l.find("|kernel=") + 8;
    kernels.push_back(l.substr(at, l.find('|', at) - at));
  }
  std::sort(kernels.begin(), kernels.end());  // in any topological order
  EXPECT_EQ(kernels, (std::vector<std::string>{"mul_f32", "mul_mat_Q4_Kxf32", "mul_mat_Q4_Kxf32_geglu", "sub_f32",
                                               "unary_gelu_f32", "unary_silu_f32"}));
}

// The kernels each launch names in a perf log, sorted (launches run in any topological order).
std::vector<std::string> logged_kernels(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> kernels;
  for (std::string l; std::getline(in, l);) {
    const size_t at = l.find("|kernel=") + 8;
    kernels.push_back(l.substr(at, l.find('|', at) - at));
  }
  std::sort(kernels.begin(), kernels.end());
  return kernels;
}

// The matrix-engine kernels take the shapes llama.cpp's ET backend gives them (et_ops.cpp) and
// no others; with the engine off (HART_ET_MATRIX_ENGINE=0) every MUL_MAT runs today's kernel.
// Either way the result matches the CPU's.
TEST(EtBackend, MatrixEngineKernelsAreChosenByShape) {
  Tensor* (*const prefill)(Bench&) = [](Bench& b) {  // 60 rows: Q4_0 and Q8_0 on the engine
    Context& c = b.ctx;
    Tensor* y = mul_mat(c, b.random(Type::Q8_0, {64, 64}), b.random(Type::F32, {64, 60}));
    Tensor* z = add(c, mul_mat(c, b.random(Type::Q4_0, {64, 64}), y), y);  // fused: the engine adds it
    return mul_mat(c, b.random(Type::Q4_0, {64, 40}), z);                  // 40 columns: no whole tiles
  };
  Tensor* (*const short_batch)(Bench&) = [](Bench& b) {  // 52 rows: below Q8_0's 53, F32 still
    Context& c = b.ctx;
    Tensor* y = mul_mat(c, b.random(Type::Q8_0, {64, 64}), b.random(Type::F32, {64, 52}));
    Tensor* z = mul_mat(c, b.random(Type::F32, {64, 32}), y);
    return mul_mat(c, b.random(Type::F16, {32, 16}), z);  // F32 activations: not the F16 engine's
  };
  for (const bool engine : {true, false}) {
    TempDir dir;
    const std::string path = dir.path + "/perf.log";
    auto log = std::make_unique<PerfLog>(path);
    EtOptions o;
    o.perf_log = log.get();
    o.matrix_engine = engine;
    auto et = std::make_unique<EtBackend>(emu::open_emulator(small_device(dir.path)), o);
    EXPECT_LT(place_and_compare(*et, prefill).nmse, 5e-4);  // the CPU quantizes activations to Q8
    EXPECT_LT(place_and_compare(*et, short_batch).nmse, 5e-4);
    et.reset();
    log.reset();
    const std::vector<std::string> want =
        engine ? std::vector<std::string>{"mul_mat_Q4_0_matrix_engine_add", "mul_mat_Q4_0xf32", "mul_mat_Q8_0_matrix_engine",
                                          "mul_mat_Q8_0xf32", "mul_mat_f16xf32", "mul_mat_f32_matrix_engine"}
               : std::vector<std::string>{"mul_mat_Q4_0xf32", "mul_mat_Q4_0xf32_add", "mul_mat_Q8_0xf32", "mul_mat_Q8_0xf32",
                                          "mul_mat_f16xf32", "mul_mat_f32xf32"};
    EXPECT_EQ(logged_kernels(path), want) << "engine " << engine;
  }
}

// Two decode steps into a KV cache leaf: the cache is uploaded once and never copied back, the
// weights once; the second step reads the row the first wrote on the device.
TEST(EtBackend, KvCacheStaysOnTheDevice) {
  TempDir dir;
  auto et = make_backend(dir.path, false);
  cpu::CpuBackend cpu(1);
  Bench b;
  const int64_t d = 32;
  Tensor* w = b.random(Type::Q8_0, {d, d});
  w->flags |= kFlagWeight;
  Tensor* cache_et = b.random(Type::F16, {d, 4}, 0.0f, 0.0f);
  Tensor* cache_cpu = b.random(Type::F16, {d, 4}, 0.0f, 0.0f);
  cache_et->flags |= kFlagState;
  auto host_bytes = [&] {
    const auto* p = static_cast<const uint8_t*>(cache_et->data);
    return std::vector<uint8_t>(p, p + cache_et->nbytes());
  };
  const std::vector<uint8_t> host_before = host_bytes();
  for (int step = 0; step < 2; step++) {
    auto build = [&](Bench& bench, Tensor* cache) {
      Tensor* x = bench.random(Type::F32, {d, 1});
      Tensor* slot = bench.random(Type::I64, {1}, float(step), float(step + 1));
      Tensor* kc = set_rows(bench.ctx, cache, mul_mat(bench.ctx, w, x), slot);
      Tensor* kv = view(bench.ctx, kc, {d, 1, step + 1}, {kc->nb[1], kc->nb[1]}, 0);
      return flash_attn_ext(bench.ctx, reshape(bench.ctx, x, {d, 1, 1}), kv, kv, nullptr, 0.2f);
    };
    Bench b1(7 + step), b2(7 + step);
    Tensor* oa = build(b1, cache_et);
    Tensor* ob = build(b2, cache_cpu);
    Planned pa({oa}), pb({ob});
    sched::Scheduler({et.get(), &cpu}).compute(pa.g);
    cpu.compute(pb.g);
    EXPECT_LT(nmse(read(*oa), read(*ob)), 5e-4) << "step " << step;
  }
  EXPECT_EQ(et->memory().weight_uploads(), 1u);
  EXPECT_TRUE(et->memory().is_resident(*cache_et));
  EXPECT_EQ(host_bytes(), host_before)
      << "the device cache is authoritative: nothing was copied back";
}

// Qwen3's attention input: a head-wise RMS_NORM+MUL, the ROPE and the SET_ROWS of the result into
// an F16 cache run as one ROPE call (rope.c's fusions); the cache matches the CPU's.
TEST(EtBackend, QkNormRopeAndCacheStoreAreOneCall) {
  TempDir dir;
  const std::string path = dir.path + "/perf.log";
  auto log = std::make_unique<PerfLog>(path);
  auto et = make_backend(dir.path, true, log.get());
  cpu::CpuBackend cpu(1);
  const int64_t hd = 64, heads = 2, d = hd * heads;
  Bench b;
  Tensor* w = b.random(Type::Q8_0, {d, d});
  Tensor* norm_w = b.random(Type::F32, {hd});
  w->flags |= kFlagWeight;
  norm_w->flags |= kFlagWeight;
  auto build = [&](Bench& bench, Tensor* cache) {
    Context& c = bench.ctx;
    Tensor* x = bench.random(Type::F32, {d, 1});
    Tensor* k = reshape(c, mul_mat(c, w, x), {hd, heads, 1});
    k = mul(c, rms_norm(c, k, 1e-6f), norm_w);
    k = rope(c, k, bench.random(Type::I32, {1}, 5, 6), nullptr, RopeMode::NEOX, hd, 10000.0f, 1.0f);
    Tensor* kc = set_rows(c, cache, reshape(c, k, {d, 1}), bench.random(Type::I64, {1}, 2.0f, 3.0f));
    Tensor* kv = view(c, kc, {hd, heads, 4}, {kc->nb[1] / heads, kc->nb[1]}, 0);
    return flash_attn_ext(c, reshape(c, x, {hd, heads, 1}), kv, kv, nullptr, 0.125f);
  };
  Tensor* cache_et = b.random(Type::F16, {d, 4});
  Tensor* cache_cpu = b.random(Type::F16, {d, 4});
  std::memcpy(cache_cpu->data, cache_et->data, cache_et->nbytes());
  cache_et->flags |= kFlagState;
  Bench b1(3), b2(3);
  Tensor* oa = build(b1, cache_et);
  Tensor* ob = build(b2, cache_cpu);
  Planned pa({oa}, et->reuse_after()), pb({ob});
  sched::Scheduler({et.get(), &cpu}).compute(pa.g);
  cpu.compute(pb.g);
  EXPECT_LT(nmse(read(*oa), read(*ob)), 5e-4);  // the CPU quantizes activations to Q8
  EXPECT_EQ(et->stats().ops, 3u);
  et.reset();
  log.reset();
  EXPECT_EQ(logged_kernels(path), (std::vector<std::string>{"flash_attn_ext_f16_me", "mul_mat_Q8_0xf32",
                                                            "rms_norm_mul_rope_f32_set_rows_f16"}));
}

// A norm of one activation row (decode) folds into the products that read it; of two rows it stays
// a launch. Either way the result matches the CPU's.
TEST(EtBackend, NormOfOneRowFoldsIntoItsProducts) {
  for (const int64_t rows : {1, 2}) {
    TempDir dir;
    const std::string path = dir.path + "/perf.log";
    auto log = std::make_unique<PerfLog>(path);
    auto et = make_backend(dir.path, true, log.get());
    static int64_t n_rows;
    n_rows = rows;
    const Placed r = place_and_compare(*et, [](Bench& b) {
      Context& c = b.ctx;
      Tensor* x = b.random(Type::F32, {64, n_rows});
      Tensor* h = mul(c, rms_norm(c, x, 1e-6f), b.random(Type::F32, {64}));
      Tensor* a = mul_mat(c, b.random(Type::Q8_0, {64, 32}), h);
      return add(c, mul_mat(c, b.random(Type::Q8_0, {64, 32}), h), a);
    });
    EXPECT_LT(r.nmse, 5e-4) << rows;  // the CPU quantizes activations to Q8
    EXPECT_EQ(et->stats().ops, rows == 1 ? 3u : 4u) << rows;
    et.reset();
    log.reset();
    const std::vector<std::string> want =
        rows == 1 ? std::vector<std::string>{"add_f32", "rms_norm_mul_mul_mat_Q8_0xf32", "rms_norm_mul_mul_mat_Q8_0xf32"}
                  : std::vector<std::string>{"add_f32", "mul_mat_Q8_0xf32", "mul_mat_Q8_0xf32", "rms_norm_mul_f32"};
    EXPECT_EQ(logged_kernels(path), want) << rows;
  }
}

TEST(EtBackend, PerfLogHasOneLinePerKernelCall) {
  TempDir dir;
  const std::string path = dir.path + "/perf.log";
  {
    PerfLog log(path);
    EtOptions o;
    o.perf_log = &log;
    o.profile_dir = dir.path + "/prof";
    EtBackend et(emu::open_emulator(small_device(dir.path)), o);
    Bench b;
    Tensor* x = b.random(Type::F32, {64, 2});
    Tensor* y = rope(b.ctx, reshape(b.ctx, mul_mat(b.ctx, b.random(Type::Q8_0, {64, 64}), x), {16, 4, 2}),
                     b.random(Type::I32, {2}, 0, 9), nullptr, RopeMode::NEOX, 16, 10000.0f, 1.0f);
    y->set_name("Qcur-0");
    Planned p({y});
    et.compute(p.g);
  }
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("ET_PERF|op=MUL_MAT|kernel=mul_mat_Q8_0xf32|duration_us=", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("|flops=16384|"), std::string::npos) << lines[0];  // 2 K per output, 64 x 2 outputs
  // The call's DRAM traffic as the kernel counts it: at least the 64 weight rows of 68 bytes.
  const size_t at = lines[0].find("|bytes=");
  ASSERT_NE(at, std::string::npos) << lines[0];
  EXPECT_GE(std::stoull(lines[0].substr(at + 7)), 64u * 68u) << lines[0];
  EXPECT_NE(lines[0].find("|tensor=node_0|"), std::string::npos) << lines[0];  // unnamed: ggml's node name
  EXPECT_NE(lines[1].find("|tensor=Qcur-0|shape=[16,4,2,1]|start_us="), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("|mode=0x2|n_dims=16|freq_base=10000.00|freq_scale=1.00"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("|device_us="), std::string::npos) << lines[1];
  // The trace is trace-event JSON: complete events with times, the launches named by kernel.
  const nlohmann::json trace = nlohmann::json::parse(std::ifstream(dir.path + "/prof/et_runtime_trace.json"));
  size_t launches = 0, copies = 0;
  std::vector<std::string> tensors;  // the device track's launches name the tensors they compute
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    EXPECT_TRUE(e.at("ts").is_number() && e.at("dur").is_number());
    launches += e.at("cat") == "launch" && e.at("tid") == 1;
    copies += e.at("cat") == "memcpy_h2d" && e.at("tid") == 1;
    if (e.at("cat") == "launch" && e.at("tid") == 2) tensors.push_back(e.at("args").at("tensor"));
  }
  EXPECT_EQ(launches, 2u);
  EXPECT_EQ(tensors, (std::vector<std::string>{"node_0", "Qcur-0"}));
  EXPECT_EQ(copies, 3u);  // weights, activations, positions
  const nlohmann::json ids = nlohmann::json::parse(std::ifstream(dir.path + "/prof/kernel_id.json"));
  EXPECT_EQ(ids.at("mul_mat"), 0);
  EXPECT_TRUE(ids.contains("uberkernel"));
}

// In an uberkernel launch, the device track nests one event per sub-kernel, named by its tensor.
TEST(EtBackend, TraceNamesTheTensorsOfAnUberkernel) {
  TempDir dir;
  {
    EtOptions o;
    o.uberkernel = true;
    o.profile_dir = dir.path + "/prof";
    EtBackend et(emu::open_emulator(small_device(dir.path)), o);
    Bench b;
    Tensor* h = mul_mat(b.ctx, b.random(Type::F32, {32, 16}), b.random(Type::F32, {32, 3}));
    h->set_name("ffn_up-2");
    Tensor* y = unary(b.ctx, h, Unary::SILU);
    y->set_name("ffn_silu-2");
    Planned p({y});
    et.compute(p.g);
  }
  const nlohmann::json trace = nlohmann::json::parse(std::ifstream(dir.path + "/prof/et_runtime_trace.json"));
  std::vector<std::string> subs, tensors;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    if (e.at("cat") == "kernel") subs.push_back(e.at("name"));
    if (e.at("cat") == "launch" && e.at("tid") == 1) tensors = e.at("args").at("tensors");
  }
  EXPECT_EQ(subs, (std::vector<std::string>{"ffn_up-2", "ffn_silu-2"}));
  EXPECT_EQ(tensors, subs);
}

// HART_ET_* or the seed's GGML_ET_* names; HART_ wins when both are set. The uberkernel is on
// unless one says 0.
TEST(EtBackend, OptionsFromEitherNameOfTheEnvironment) {
  for (const char* v : {"HART_ET_UBERKERNEL", "GGML_ET_UBERKERNEL", "HART_ET_PROFILE", "GGML_ET_PROFILE"}) unsetenv(v);
  EXPECT_TRUE(EtOptions::from_env().uberkernel);  // the default
  setenv("GGML_ET_UBERKERNEL", "0", 1);
  EXPECT_FALSE(EtOptions::from_env().uberkernel);
  setenv("GGML_ET_UBERKERNEL", "1", 1);
  setenv("GGML_ET_PROFILE", "/tmp/ggml-prof", 1);
  EXPECT_TRUE(EtOptions::from_env().uberkernel);
  EXPECT_EQ(EtOptions::from_env().profile_dir, "/tmp/ggml-prof");
  setenv("HART_ET_UBERKERNEL", "0", 1);
  setenv("HART_ET_PROFILE", "/tmp/hart-prof", 1);
  EXPECT_FALSE(EtOptions::from_env().uberkernel);
  EXPECT_EQ(EtOptions::from_env().profile_dir, "/tmp/hart-prof");
  setenv("GGML_ET_UBERKERNEL", "0", 1);
  setenv("HART_ET_UBERKERNEL", "1", 1);
  EXPECT_TRUE(EtOptions::from_env().uberkernel);
  for (const char* v : {"HART_ET_UBERKERNEL", "GGML_ET_UBERKERNEL", "HART_ET_PROFILE", "GGML_ET_PROFILE"}) unsetenv(v);
  EXPECT_EQ(EtOptions::from_env().profile_dir, "");
  EXPECT_TRUE(EtOptions::from_env().matrix_engine);  // on unless HART_ET_MATRIX_ENGINE=0
  setenv("HART_ET_MATRIX_ENGINE", "0", 1);
  EXPECT_FALSE(EtOptions::from_env().matrix_engine);
  unsetenv("HART_ET_MATRIX_ENGINE");
}

// A MUL_MAT_ID line names the experts there are and those each token takes, as llama.cpp's does.
TEST(EtBackend, PerfLogNamesTheExpertsOfMulMatId) {
  TempDir dir;
  const std::string path = dir.path + "/perf.log";
  {
    PerfLog log(path);
    EtOptions o;
    o.perf_log = &log;
    EtBackend et(emu::open_emulator(small_device(dir.path)), o);
    Bench b;
    Tensor* y = mul_mat_id(b.ctx, b.random(Type::Q8_0, {64, 32, 4}), b.random(Type::F32, {64, 1, 3}),
                           b.random(Type::I32, {2, 3}, 0, 4));
    Planned p({y});
    et.compute(p.g);
  }
  std::ifstream in(path);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line.rfind("ET_PERF|op=MUL_MAT_ID|kernel=mul_mat_id_Q8_0xf32|", 0), 0u) << line;
  EXPECT_NE(line.find("|n_expert=4|n_expert_used=2"), std::string::npos) << line;
}

TEST(EtBackend, ShireMaskFromTheEnvironment) {
  setenv("HART_ET_SHIRE_MASK", "0x3", 1);
  EXPECT_EQ(EtOptions::from_env().shire_mask, 3u);
  for (const char* bad : {"", "0", "3g"}) {
    setenv("HART_ET_SHIRE_MASK", bad, 1);
    EXPECT_THROW(EtOptions::from_env(), Error) << "'" << bad << "'";
  }
  unsetenv("HART_ET_SHIRE_MASK");
  EXPECT_EQ(EtOptions::from_env().shire_mask, 0u);
  TempDir dir;
  EtOptions o;
  o.shire_mask = 0x10;  // the small device has shires 0..3
  EXPECT_THROW(EtBackend(emu::open_emulator(small_device(dir.path)), o), Error);
}

// A draft model on the target's --device: the second backend of the process gets the device the
// first opened (opening it again would fail on its lock), both compute right through it, and it
// closes with the last of them.
TEST(EtBackend, BackendsOfOneProcessShareItsDevice) {
  TempDir dir;
  int opened = 0;
  auto open = [&] {
    opened++;
    return emu::open_emulator(small_device(dir.path));
  };
  const std::string key = "et0@" + dir.path;
  {
    EtOptions o;
    EtBackend target(shared_device(key, open), o), draft(shared_device(key, open), o);
    EXPECT_EQ(opened, 1);
    EXPECT_EQ(&target.device(), &draft.device());
    cpu::CpuBackend cpu(1);
    for (EtBackend* et : {&target, &draft, &target}) {
      Layer a(Type::Q8_0), b(Type::Q8_0);
      Planned pa({a.out}, et->reuse_after()), pb({b.out});
      sched::Scheduler({et, &cpu}).compute(pa.g);
      cpu.compute(pb.g);
      EXPECT_LT(nmse(read(*a.out), read(*b.out)), 2e-2);
    }
  }
  EtBackend again(shared_device(key, open), EtOptions{});  // the last backend closed it: a new open
  EXPECT_EQ(opened, 2);
}

TEST(EtBackend, SecondProcessIsToldWhoHoldsTheDevice) {
  TempDir dir;
  int ready[2], release[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(release), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // holds the lock until told to let go
    DeviceLock lock("et0", dir.path);
    char c = 1;
    if (write(ready[1], &c, 1) != 1 || ::read(release[0], &c, 1) != 1) _exit(2);
    _exit(0);
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  try {
    emu::open_emulator(small_device(dir.path));
    ADD_FAILURE() << "the device opened while another process held it";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "device et0 is in use by process " + std::to_string(child));
  }
  c = 1;
  ASSERT_EQ(write(release[1], &c, 1), 1);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NO_THROW(emu::open_emulator(small_device(dir.path)));  // free again
}

}  // namespace
}  // namespace hart::et
