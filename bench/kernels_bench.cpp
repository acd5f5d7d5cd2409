// Google Benchmark micro-benchmarks of the CPU kernel table, one entry per (kernel, set) so the
// reference and each ISA set can be compared directly:
//   vec_dot/<type>/<set>         one 4096-element weight row x one prepared activation row
//   gemv/<type>/<set>            W (4096,4096) @ x (4096,) -> y (4096,), activation conversion included
//   gemm/<type>/<set>/<cols>     W (4096,4096) @ X (4096,cols) through the GEMM tile entry
//   panel/<type>/<set>/<cols>    the same on W repacked into the set's panels (Kernels::panel)
//   from_f32/<act type>/<set>    activation quantizer on 4096 floats
//   <primitive>/<set>            row primitives on 4096 floats
// Bytes/s counters count weight bytes (dots) or row bytes read and written (primitives).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/kernels.h"
#include "quant/quant.h"

namespace hart::cpu {
namespace {

constexpr int64_t kN = 4096;     // row length
constexpr int64_t kRows = 4096;  // GEMV rows
constexpr int64_t kDistinctRows = 16;  // quantized once, then repeated down the matrix

const Type kWeightTypes[] = {Type::F32,  Type::F16,  Type::BF16,   Type::Q8_0, Type::Q4_0, Type::Q4_1,
                             Type::Q5_0, Type::Q5_1, Type::IQ4_NL, Type::Q2_K, Type::Q3_K, Type::Q4_K,
                             Type::Q5_K, Type::Q6_K, Type::IQ4_XS, Type::Q1_0, Type::Q2_0};

std::vector<float> random_floats(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = dist(rng);
  return v;
}

// Weight rows of type t.
std::vector<uint8_t> make_row(Type t, uint32_t seed) {
  std::vector<uint8_t> row(row_size(t, kN));
  const std::vector<float> f = random_floats(kN, seed);
  quantize_row(t, f.data(), row.data(), kN);
  return row;
}

// The (kRows, kN) matrix of type t, built once per type on first use.
const std::vector<uint8_t>& weight_matrix(Type t) {
  static std::map<Type, std::vector<uint8_t>> cache;
  auto [it, fresh] = cache.try_emplace(t);
  if (fresh) {
    const size_t rb = row_size(t, kN);
    it->second.resize(rb * kRows);
    for (int64_t r = 0; r < kDistinctRows; ++r) {
      const std::vector<uint8_t> row = make_row(t, uint32_t(r + 1));
      for (int64_t dst = r; dst < kRows; dst += kDistinctRows)
        std::memcpy(it->second.data() + size_t(dst) * rb, row.data(), rb);
    }
  }
  return it->second;
}

// x converted to the set's activation type for weight type t.
std::vector<uint8_t> activation(const Kernels& k, Type t, const std::vector<float>& x) {
  const Type act = k.dot[int(t)].act_type;
  std::vector<uint8_t> out(row_size(act, kN));
  if (act == Type::F32) std::memcpy(out.data(), x.data(), out.size());
  else k.from_f32[int(act)](x.data(), out.data(), kN);
  return out;
}

void bench_vec_dot(benchmark::State& state, const Kernels* k, Type t) {
  const std::vector<uint8_t>& w = weight_matrix(t);
  const std::vector<uint8_t> x = activation(*k, t, random_floats(kN, 99));
  float out = 0;
  for (auto _ : state) {
    k->dot[int(t)].vec_dot(kN, &out, w.data(), x.data());
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(row_size(t, kN)));
}

// W (kRows, kN) @ x (kN,) -> y (kRows,), one thread.
void bench_gemv(benchmark::State& state, const Kernels* k, Type t) {
  const std::vector<uint8_t>& w = weight_matrix(t);
  const std::vector<float> xf = random_floats(kN, 99);
  std::vector<uint8_t> x = activation(*k, t, xf);
  std::vector<float> y(kRows);
  const Type act = k->dot[int(t)].act_type;
  const size_t rb = row_size(t, kN);
  for (auto _ : state) {
    if (act != Type::F32) k->from_f32[int(act)](xf.data(), x.data(), kN);
    for (int64_t r = 0; r < kRows; ++r) k->dot[int(t)].vec_dot(kN, &y[size_t(r)], w.data() + size_t(r) * rb, x.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(w.size()));
}

// W (kRows, kN) @ X (kN, cols) -> Y (kRows, cols) through the set's GEMM tile entry, or with
// `panels` its panel GEMM on W packed beforehand; one thread, activation conversion included:
// MUL_MAT's path (cols = state.range(0): 1 is decode).
void bench_gemm(benchmark::State& state, const Kernels* k, Type t, bool panels) {
  const int64_t kCols = state.range(0);
  const std::vector<uint8_t>& w = weight_matrix(t);
  const std::vector<float> xf = random_floats(kN * kCols, 99);
  const DotKernel& d = k->dot[int(t)];
  const PanelKernel& pk = k->panel[int(t)];
  const size_t x_row = row_size(d.act_type, kN), rb = row_size(t, kN);
  std::vector<uint8_t> packed(panels ? w.size() : 0);
  for (int64_t r = 0; panels && r < kRows; r += pk.rows)
    pk.pack(kN, pk.rows, w.data() + size_t(r) * rb, rb, packed.data() + size_t(r) * rb);
  std::vector<uint8_t> x(x_row * kCols);
  std::vector<float> y(size_t(kRows * kCols));
  std::vector<std::byte> scratch(panels ? pk.scratch_bytes(kN, kCols) : 0);
  for (auto _ : state) {
    for (int64_t j = 0; j < kCols; ++j) {
      if (d.act_type == Type::F32) std::memcpy(&x[size_t(j) * x_row], &xf[size_t(j * kN)], x_row);
      else k->from_f32[int(d.act_type)](&xf[size_t(j * kN)], &x[size_t(j) * x_row], kN);
    }
    if (panels)
      pk.gemm(kN, kRows / pk.rows, kCols, packed.data(), rb * size_t(pk.rows), x.data(), x_row, y.data(), kRows,
              scratch.data());
    else d.gemm(kN, kRows, kCols, w.data(), rb, x.data(), x_row, y.data(), kRows);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * kN * kRows * kCols * double(state.iterations()),
                                                 benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

void bench_from_f32(benchmark::State& state, const Kernels* k, Type act) {
  const std::vector<float> x = random_floats(kN, 7);
  std::vector<uint8_t> y(row_size(act, kN));
  for (auto _ : state) {
    k->from_f32[int(act)](x.data(), y.data(), kN);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * kN * 4);
}

// Row primitives, all over the same three rows a, b (inputs) and y (output).
struct Rows {
  std::vector<float> a = random_floats(kN, 1), b = random_floats(kN, 2), y = std::vector<float>(kN);
};
using PrimitiveFn = void (*)(const Kernels&, Rows&);
struct Primitive {
  const char* name;
  int rows_touched;  // rows of kN floats read + written per call
  PrimitiveFn run;
};
const Primitive kPrimitives[] = {
    {"dot_f32", 2, [](const Kernels& k, Rows& r) { benchmark::DoNotOptimize(k.dot_f32(kN, r.a.data(), r.b.data())); }},
    {"rms_norm", 2, [](const Kernels& k, Rows& r) { k.rms_norm(kN, r.a.data(), r.y.data(), 1e-5f); }},
    {"softmax", 2, [](const Kernels& k, Rows& r) { r.y = r.a; k.softmax(kN, r.y.data()); }},
    {"silu", 2, [](const Kernels& k, Rows& r) { k.silu(kN, r.a.data(), r.y.data()); }},
    {"gelu", 2, [](const Kernels& k, Rows& r) { k.gelu(kN, r.a.data(), r.y.data()); }},
    {"swiglu", 3, [](const Kernels& k, Rows& r) { k.swiglu(kN, r.a.data(), r.b.data(), r.y.data()); }},
    {"add", 3, [](const Kernels& k, Rows& r) { k.add(kN, r.a.data(), r.b.data(), r.y.data()); }},
    {"mul", 3, [](const Kernels& k, Rows& r) { k.mul(kN, r.a.data(), r.b.data(), r.y.data()); }},
    {"scale", 2, [](const Kernels& k, Rows& r) { k.scale(kN, r.a.data(), 0.5f, r.y.data()); }},
    {"axpy", 3, [](const Kernels& k, Rows& r) { k.axpy(kN, 1e-3f, r.a.data(), r.y.data()); }},
    {"rope", 3, [](const Kernels& k, Rows& r) { k.rope(kN / 2, false, r.a.data(), r.b.data(), r.y.data(), r.y.data()); }},
    {"rope_neox", 3, [](const Kernels& k, Rows& r) { k.rope(kN / 2, true, r.a.data(), r.b.data(), r.y.data(), r.y.data()); }},
};

void bench_primitive(benchmark::State& state, const Kernels* k, const Primitive* p) {
  Rows rows;
  for (auto _ : state) {
    p->run(*k, rows);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * kN * 4 * p->rows_touched);
}

void register_all() {
  for (const Kernels* k : available_kernels()) {
    for (Type t : kWeightTypes) {
      if (!k->dot[int(t)].vec_dot) continue;
      const std::string tail = std::string(type_name(t)) + "/" + k->name;
      benchmark::RegisterBenchmark(("vec_dot/" + tail).c_str(), bench_vec_dot, k, t);
      benchmark::RegisterBenchmark(("gemv/" + tail).c_str(), bench_gemv, k, t)->Unit(benchmark::kMillisecond);
      if (k->dot[int(t)].gemm && k->name != "ref")  // the reference takes minutes per tile
        benchmark::RegisterBenchmark(("gemm/" + tail).c_str(), bench_gemm, k, t, false)
            ->Arg(1)
            ->Arg(64)
            ->Unit(benchmark::kMillisecond);
      if (k->panel[int(t)].rows > 0)
        benchmark::RegisterBenchmark(("panel/" + tail).c_str(), bench_gemm, k, t, true)
            ->Arg(1)
            ->Arg(64)
            ->Unit(benchmark::kMillisecond);
    }
    for (Type act : {Type::Q8_0, Type::Q8_1, Type::Q8_K})
      if (k->from_f32[int(act)])
        benchmark::RegisterBenchmark(("from_f32/" + std::string(type_name(act)) + "/" + k->name).c_str(),
                                     bench_from_f32, k, act);
    for (const Primitive& p : kPrimitives)
      benchmark::RegisterBenchmark((std::string(p.name) + "/" + k->name).c_str(), bench_primitive, k, &p);
  }
}

}  // namespace
}  // namespace hart::cpu

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  hart::cpu::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
