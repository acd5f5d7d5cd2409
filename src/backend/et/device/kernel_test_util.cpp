#include "backend/et/device/kernel_test_util.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "backend/cpu/kernels.h"
#include "backend/et/minion/et_minion.h"
#include "backend/et/sysemu/sysemu_device.h"
#include "common/fp16.h"
#include "quant/quant.h"

namespace hart::et::test {

// Each test's device allocations are freed when it ends, so the memory the et-sysemu device
// loads and dumps per launch stays one test's.
class FreeAtTestEnd : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo&) override { Dev::get().free_test_allocations(); }
};

Dev& Dev::get() {
  static Dev dev;
  return dev;
}

Dev::Dev() {
  std::string dir = (std::filesystem::temp_directory_path() / "hart-et-kernels-XXXXXX").string();
  if (!mkdtemp(dir.data())) std::abort();
  emu::EmuConfig cfg;
  cfg.lock_dir = lock_dir_ = dir;
  cfg.memory_bytes = 256ull << 20;
  const char* mirror = std::getenv("HART_ET_TEST_DEVICE");
  if (mirror && std::string(mirror) == "et-sysemu") {
    cfg.memory_base = ET_MINION_HEAP;  // the same addresses on both devices
    emu::EmuConfig sys = cfg;
    sys.name = "sysemu-test";
    mirror_ = sysemu::open_sysemu(sys);
    mirror_stream_ = mirror_->create_stream();
  } else if (mirror) {
    std::fprintf(stderr, "HART_ET_TEST_DEVICE: unknown device '%s' (known: et-sysemu)\n", mirror);
    std::abort();
  }
  device_ = emu::open_emulator(cfg);
  stream_ = device_->create_stream();
  ::testing::UnitTest::GetInstance()->listeners().Append(new FreeAtTestEnd);
}

Dev::~Dev() {
  device_.reset();
  mirror_.reset();
  std::filesystem::remove_all(lock_dir_);
}

DeviceAddr Dev::alloc(size_t bytes) {
  const DeviceAddr a = device_->malloc(bytes);
  allocs_.emplace_back(a, bytes);
  if (mirror_ && mirror_->malloc(bytes) != a) {
    std::fprintf(stderr, "et-sysemu mirror: allocation at another address\n");
    std::abort();
  }
  return a;
}

void Dev::free_test_allocations() {
  for (const auto& [a, bytes] : allocs_) {
    device_->free(a);
    if (mirror_) mirror_->free(a);
  }
  allocs_.clear();
}

DeviceAddr Dev::upload(const void* data, size_t bytes) {
  const DeviceAddr a = alloc(bytes);
  device_->memcpy_h2d(a, data, bytes);
  if (mirror_) mirror_->memcpy_h2d(a, data, bytes);
  return a;
}

void Dev::compare_mirror(const char* name) {
  for (const auto& [a, bytes] : allocs_) {
    std::vector<uint8_t> want(bytes), got(bytes);
    device_->memcpy_d2h(want.data(), a, bytes);
    mirror_->memcpy_d2h(got.data(), a, bytes);
    for (size_t i = 0; i < bytes; i++) {
      if (want[i] == got[i]) continue;
      ADD_FAILURE() << "kernel " << name << ": et-sysemu differs from the emulator at byte " << i << " of the "
                    << bytes << "-byte allocation at 0x" << std::hex << a << std::dec << " (emulator "
                    << int(want[i]) << ", sysemu " << int(got[i]) << ")";
      return;
    }
  }
}

et_tensor Dev::describe(DeviceAddr addr, Type type, Shape ne) {
  et_tensor t{};
  t.addr = addr;
  t.type = int32_t(type);
  const TypeInfo& ti = type_info(type);
  t.nb[0] = int64_t(ti.type_size);
  t.nb[1] = int64_t(row_size(type, ne[0]));
  for (int d = 0; d < 4; d++) t.ne[d] = ne[d];
  for (int d = 2; d < 4; d++) t.nb[d] = t.nb[d - 1] * ne[d - 1];
  return t;
}

et_tensor Dev::output(Type type, Shape ne) {
  const et_tensor t = describe(0, type, ne);
  const size_t bytes = size_t(t.nb[3] * ne[3]);
  // Poison, so elements a kernel forgets to write show up.
  std::vector<uint8_t> poison(bytes, 0xff);
  return describe(upload(poison.data(), bytes), type, ne);
}

void Dev::launch_and_check(const char* name, const void* params, size_t bytes, uint64_t mask) {
  device_->launch(stream_, device_->load_kernel(name), params, bytes, mask);
  device_->wait(stream_);
  const auto err = device_->take_error(stream_);
  ASSERT_FALSE(err.has_value()) << *err;
  if (!mirror_) return;
  mirror_->launch(mirror_stream_, mirror_->load_kernel(name), params, bytes, mask);
  mirror_->wait(mirror_stream_);
  const auto mirror_err = mirror_->take_error(mirror_stream_);
  ASSERT_FALSE(mirror_err.has_value()) << "et-sysemu: " << *mirror_err;
  compare_mirror(name);
}

std::string Dev::launch_for_error(const char* name, const void* params, size_t bytes) {
  const auto error_of = [&](emu::EmuDevice& d) {
    const Stream s = d.create_stream();
    d.launch(s, d.load_kernel(name), params, bytes, kSmallMask);
    d.wait(s);
    const auto err = d.take_error(s);
    d.destroy_stream(s);
    return err;
  };
  const auto err = error_of(*device_);
  EXPECT_TRUE(err.has_value()) << name << " did not fail";
  if (mirror_) {
    EXPECT_TRUE(error_of(*mirror_).has_value()) << name << " did not fail on et-sysemu";
  }
  return err.value_or("");
}

std::vector<float> Dev::download_f32(const et_tensor& t) {
  std::vector<float> v(size_t(t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]));
  device_->memcpy_d2h(v.data(), t.addr, v.size() * 4);
  return v;
}

std::vector<uint16_t> Dev::download_f16(const et_tensor& t) {
  std::vector<uint16_t> v(size_t(t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]));
  device_->memcpy_d2h(v.data(), t.addr, v.size() * 2);
  return v;
}

std::vector<int32_t> Dev::download_i32(const et_tensor& t) {
  std::vector<int32_t> v(size_t(t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]));
  device_->memcpy_d2h(v.data(), t.addr, v.size() * 4);
  return v;
}

std::vector<float> random_floats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

std::vector<uint16_t> to_f16(const std::vector<float>& v) {
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < v.size(); i++) h[i] = f32_to_fp16(v[i]);
  return h;
}

std::vector<float> from_f16(const std::vector<uint16_t>& v) {
  std::vector<float> f(v.size());
  for (size_t i = 0; i < v.size(); i++) f[i] = fp16_to_f32(v[i]);
  return f;
}

std::vector<uint8_t> quantize(Type t, const std::vector<float>& v, int64_t k) {
  const size_t rows = v.size() / size_t(k);
  std::vector<uint8_t> q(rows * row_size(t, k));
  for (size_t r = 0; r < rows; r++) quantize_row(t, v.data() + r * size_t(k), q.data() + r * row_size(t, k), k);
  return q;
}

std::pair<Tensor*, Tensor*> initial_states(cpu::test::Bench& b, int64_t row, int64_t n_s, int64_t cells) {
  Tensor* state = b.random(Type::F32, {row, cells ? cells : n_s}, -1.0f, 1.0f);
  if (!cells) return {state, nullptr};
  Tensor* ids = b.random(Type::I32, {n_s}, 0.0f, float(cells));
  static_cast<int32_t*>(ids->data)[n_s - 1] = static_cast<int32_t*>(ids->data)[0];
  return {state, ids};
}

et_tensor upload(const Tensor& t) {
  const Tensor& owner = t.view_src ? *t.view_src : t;
  const auto offset = size_t(static_cast<const char*>(t.data) - static_cast<const char*>(owner.data));
  et_tensor e{};
  e.addr = Dev::get().upload(owner.data, owner.nbytes()) + offset;
  e.type = int32_t(t.type);
  for (int d = 0; d < 4; d++) {
    e.ne[d] = t.ne[d];
    e.nb[d] = int64_t(t.nb[d]);
  }
  return e;
}

et_tensor output_like(const Tensor& node) {
  return Dev::get().output(node.type, {node.ne[0], node.ne[1], node.ne[2], node.ne[3]});
}

std::vector<float> device_values(const et_tensor& t) {
  if (t.type != ET_TYPE_I32) return Dev::get().download_f32(t);
  const std::vector<int32_t> v = Dev::get().download_i32(t);
  return std::vector<float>(v.begin(), v.end());
}

std::vector<float> cpu_result(cpu::test::Bench& b, Tensor* node) {
  cpu::select_kernels("ref");
  b.run_without_reuse({node}, 2);
  const std::vector<double> v = testing::read(*node).v;
  return std::vector<float>(v.begin(), v.end());
}

Tensor* narrow(cpu::test::Bench& b, std::initializer_list<int64_t> wide, int64_t ne0) {
  Tensor* w = b.random(Type::F32, wide, -2.0f, 2.0f);
  return view(b.ctx, w, {ne0, w->ne[1], w->ne[2], w->ne[3]}, {w->nb[1], w->nb[2], w->nb[3]}, 0);
}

void expect_unary(Unary kind, int32_t act, Tensor* x, cpu::test::Bench& b, uint64_t mask, float tol) {
  Tensor* node = unary(b.ctx, x, kind);
  et_unary_params p{};
  p.src = upload(*x);
  p.act = act;
  expect_cpu_result("unary", p, node, b, mask, tol);
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); i++) {
    if (got[i] == want[i]) continue;  // infinities too
    if (std::fabs(got[i] - want[i]) <= tol * std::max(1.0f, std::fabs(want[i]))) continue;
    if (++bad <= 5) ADD_FAILURE() << "element " << i << ": got " << got[i] << ", want " << want[i];
  }
  EXPECT_EQ(bad, 0u) << "of " << got.size() << " elements";
}

}  // namespace hart::et::test
