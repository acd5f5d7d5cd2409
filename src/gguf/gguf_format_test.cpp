// Writer -> reader round trips, typed accessors, and failed writes leaving nothing behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "common/error.h"
#include "gguf/gguf.h"
#include "gguf/gguf_test_util.h"

namespace hart::gguf {
namespace {

using testing::array_of;
using testing::same_value;
namespace fs = std::filesystem;

// One value of every type, including empty, nested and NaN cases.
std::vector<KeyValue> every_value_type() {
  const Value nested = array_of(ValueType::ARRAY, {array_of(ValueType::UINT32, {uint32_t(1), uint32_t(2)}),
                                                   array_of(ValueType::UINT32, {}),
                                                   array_of(ValueType::STRING, {std::string("x")})});
  Value deep = array_of(ValueType::INT8, {int8_t(-3)});
  for (int i = 1; i < kMaxArrayNesting; i++) deep = array_of(ValueType::ARRAY, {deep});
  return {
      {"u8", uint8_t(250)},
      {"i8", int8_t(-100)},
      {"u16", uint16_t(65000)},
      {"i16", int16_t(-32000)},
      {"u32", uint32_t(4000000000u)},
      {"i32", int32_t(-2000000000)},
      {"f32", 1.5e-5f},
      {"f32.nan", std::numeric_limits<float>::quiet_NaN()},
      {"bool.true", true},
      {"bool.false", false},
      {"string", std::string("héllo \n world")},
      {"string.empty", std::string()},
      {"string.nul", std::string("a\0b", 3)},
      {"u64", uint64_t(18000000000000000000ull)},
      {"i64", int64_t(-9000000000000000000ll)},
      {"f64", 3.141592653589793},
      {"array.f32", array_of(ValueType::FLOAT32, {1.0f, -2.5f, 0.0f})},
      {"array.empty", array_of(ValueType::INT64, {})},
      {"array.strings", array_of(ValueType::STRING, {std::string(), std::string("b"), std::string()})},
      {"array.bool", array_of(ValueType::BOOL, {true, false})},
      {"array.nested", nested},
      {"array.deepest", deep},
  };
}

TEST(GgufFormat, EveryValueTypeRoundTrips) {
  Writer w;
  const auto kvs = every_value_type();
  for (const auto& kv : kvs) w.set(kv.key, kv.value);
  auto f = File::from_bytes(w.to_bytes());
  EXPECT_EQ(f->version(), 3u);
  ASSERT_EQ(f->metadata().size(), kvs.size());
  for (size_t i = 0; i < kvs.size(); i++) {
    SCOPED_TRACE(kvs[i].key);
    EXPECT_EQ(f->metadata()[i].key, kvs[i].key);  // insertion order kept
    EXPECT_TRUE(same_value(f->metadata()[i].value, kvs[i].value));
    ASSERT_NE(f->find(kvs[i].key), nullptr);
  }
  EXPECT_TRUE(f->tensors().empty());
}

TEST(GgufFormat, SetReplacesInPlace) {
  Writer w;
  w.set("a", uint32_t(1));
  w.set("b", uint32_t(2));
  w.set("a", std::string("again"));
  auto f = File::from_bytes(w.to_bytes());
  ASSERT_EQ(f->metadata().size(), 2u);
  EXPECT_EQ(f->metadata()[0].key, "a");
  EXPECT_EQ(f->get_string("a"), "again");
}

TEST(GgufFormat, WriterRejectsMalformedValuesAndTensors) {
  Writer w;
  EXPECT_THROW(w.set("mixed", array_of(ValueType::UINT8, {uint8_t(1), int8_t(2)})), Error);
  EXPECT_THROW(w.set("null", std::shared_ptr<Array>()), Error);
  Value too_deep = array_of(ValueType::UINT8, {});
  for (int i = 0; i < kMaxArrayNesting; i++) too_deep = array_of(ValueType::ARRAY, {too_deep});
  EXPECT_THROW(w.set("deep", too_deep), Error);
  EXPECT_THROW(w.set_alignment(48), Error);
  EXPECT_THROW(w.set("general.alignment", uint64_t(32)), Error);
  std::vector<uint8_t> data(64);
  const int64_t ne_bad_row[] = {16};
  EXPECT_THROW(w.add_tensor("q", Type::Q8_0, ne_bad_row, data.data(), 34), Error);
  const int64_t ne[] = {4, 2};
  EXPECT_THROW(w.add_tensor("f", Type::F32, ne, data.data(), 16), Error);  // needs 32 bytes
  const int64_t ne5[] = {1, 1, 1, 1, 1};
  EXPECT_THROW(w.add_tensor("f5", Type::F32, ne5, data.data(), 4), Error);
  EXPECT_THROW(w.add_tensor("t", Type(4), ne, data.data(), 32), Error);  // removed ggml type
  w.add_tensor("f", Type::F32, ne, data.data(), 32);
  EXPECT_THROW(w.add_tensor("f", Type::F32, ne, data.data(), 32), Error);
}

struct TensorCase {
  std::string name;
  Type type;
  std::vector<int64_t> ne;
};

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(rng());
  return v;
}

void check_tensors_round_trip(uint32_t alignment) {
  const std::vector<TensorCase> cases = {
      {"f32", Type::F32, {3, 5}},          {"f16", Type::F16, {7}},
      {"bf16", Type::BF16, {2, 2, 2, 2}},  {"q8_0", Type::Q8_0, {64, 3}},
      {"q4_k", Type::Q4_K, {256, 2}},      {"q6_k", Type::Q6_K, {512}},
      {"i32", Type::I32, {5, 1, 2}},       {"empty", Type::F32, {0, 4}},
  };
  std::vector<std::vector<uint8_t>> data;
  Writer w;
  if (alignment != kDefaultAlignment) w.set_alignment(alignment);
  w.set("general.name", std::string("round trip"));
  for (size_t i = 0; i < cases.size(); i++) {
    const auto& c = cases[i];
    int64_t n = 1;
    for (int64_t d : c.ne) n *= d;
    const auto& ti = type_info(c.type);
    data.push_back(random_bytes(size_t(n / ti.block_size) * ti.type_size, uint32_t(i)));
    w.add_tensor(c.name, c.type, c.ne, data.back().data(), data.back().size());
  }
  auto f = File::from_bytes(w.to_bytes());
  EXPECT_EQ(f->alignment(), alignment);
  EXPECT_EQ(f->data_offset() % alignment, 0u);
  ASSERT_EQ(f->tensors().size(), cases.size());
  for (size_t i = 0; i < cases.size(); i++) {
    const TensorInfo& t = f->tensors()[i];
    SCOPED_TRACE(t.name);
    EXPECT_EQ(t.name, cases[i].name);
    EXPECT_EQ(t.type, cases[i].type);
    ASSERT_EQ(t.n_dims, cases[i].ne.size());
    for (int d = 0; d < kMaxDims; d++)
      EXPECT_EQ(t.ne[d], size_t(d) < cases[i].ne.size() ? cases[i].ne[d] : 1);
    EXPECT_EQ(t.offset % alignment, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % alignment, 0u);
    ASSERT_EQ(t.nbytes, data[i].size());
    EXPECT_TRUE(std::equal(t.data, t.data + t.nbytes, data[i].begin()));
    EXPECT_EQ(f->find_tensor(cases[i].name), &t);
  }
  EXPECT_EQ(f->find_tensor("missing"), nullptr);
}

TEST(GgufFormat, TensorsRoundTripByteIdentical) { check_tensors_round_trip(kDefaultAlignment); }
TEST(GgufFormat, TensorsRoundTripWithLargerAlignment) { check_tensors_round_trip(64); }

TEST(GgufFormat, TypedAccessors) {
  Writer w;
  w.set("s", std::string("text"));
  w.set("u32", uint32_t(7));
  w.set("u64.big", uint64_t(1) << 63);
  w.set("f", 0.25f);
  w.set("b", true);
  w.set("strings", array_of(ValueType::STRING, {std::string("x"), std::string("y")}));
  w.set("floats", array_of(ValueType::FLOAT32, {1.0f, 2.0f}));
  w.set("ints", array_of(ValueType::INT32, {int32_t(-1), int32_t(5)}));
  auto f = File::from_bytes(w.to_bytes(), "acc.gguf");
  EXPECT_EQ(f->require_string("s"), "text");
  EXPECT_EQ(f->require_int("u32"), 7);
  EXPECT_EQ(f->require_float("u32"), 7.0);  // any numeric type
  EXPECT_EQ(f->require_float("f"), 0.25);
  EXPECT_EQ(f->get_bool("b"), true);
  EXPECT_EQ(f->get_string("missing"), std::nullopt);
  EXPECT_EQ(f->get_string_array("strings"), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(f->get_float_array("floats"), (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(f->get_int_array("ints"), (std::vector<int64_t>{-1, 5}));
  EXPECT_EQ(f->get_float_array("ints"), (std::vector<float>{-1.0f, 5.0f}));
  EXPECT_EQ(f->get_int_array("missing"), std::nullopt);

  auto expect_error = [](auto fn, const std::string& fragment) {
    try {
      fn();
      ADD_FAILURE() << "no error, expected: " << fragment;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error([&] { f->require_string("nope"); }, "acc.gguf: required key 'nope' is missing");
  expect_error([&] { f->get_string("u32"); }, "key 'u32' is of type u32, expected a string");
  expect_error([&] { f->get_int("s"); }, "expected an integer");
  expect_error([&] { f->get_int("f"); }, "expected an integer");
  expect_error([&] { f->get_int("u64.big"); }, "does not fit in int64");
  expect_error([&] { f->get_bool("u32"); }, "expected a bool");
  expect_error([&] { f->get_string_array("floats"); }, "is an array of f32, expected an array of string");
  expect_error([&] { f->get_int_array("floats"); }, "expected an array of integers");
  expect_error([&] { f->get_float_array("s"); }, "expected an array of numbers");
}

// A scratch directory removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "hart_gguf_XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

void record_progress(size_t done, size_t total, void* user) {
  auto* calls = static_cast<std::vector<std::pair<size_t, size_t>>*>(user);
  calls->emplace_back(done, total);
}

TEST(GgufFormat, WriteThenOpenInBothModes) {
  TempDir dir;
  const auto a = random_bytes(4 * 100, 1), b = random_bytes(34 * 10, 2);
  Writer w;
  w.set("general.architecture", std::string("llama"));
  const int64_t ne_a[] = {100}, ne_b[] = {32, 10};
  w.add_tensor("a", Type::F32, ne_a, a.data(), a.size());
  w.add_tensor("b", Type::Q8_0, ne_b, b.data(), b.size());
  const std::string path = (dir.path / "model.gguf").string();
  std::vector<std::pair<size_t, size_t>> calls;
  w.write(path, record_progress, &calls);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.back(), std::make_pair(a.size() + b.size(), a.size() + b.size()));
  for (size_t i = 1; i < calls.size(); i++) EXPECT_GT(calls[i].first, calls[i - 1].first);

  const auto expected = w.to_bytes();
  EXPECT_EQ(fs::file_size(path), expected.size());
  for (LoadMode mode : {LoadMode::Mmap, LoadMode::Memory}) {
    auto f = File::open(path, mode);
    EXPECT_EQ(f->file_size(), expected.size());
    EXPECT_EQ(f->require_string("general.architecture"), "llama");
    ASSERT_EQ(f->tensors().size(), 2u);
    EXPECT_EQ(std::memcmp(f->tensors()[0].data, a.data(), a.size()), 0);
    EXPECT_EQ(std::memcmp(f->tensors()[1].data, b.data(), b.size()), 0);
    EXPECT_EQ(std::memcmp(f->tensors()[0].data - f->data_offset(), expected.data(), expected.size()), 0);
  }
}

// from_memory parses bytes where they lie (the binary's embedded model): the tensors point into
// them, nothing is copied; bytes off a 64-byte boundary, or not GGUF, are refused by name.
TEST(GgufFormat, FromMemoryUsesTheBytesInPlace) {
  const auto a = random_bytes(4 * 64, 3);
  Writer w;
  w.set("general.architecture", std::string("llama"));
  const int64_t ne[] = {64};
  w.add_tensor("a", Type::F32, ne, a.data(), a.size());
  const std::vector<uint8_t> bytes = w.to_bytes();
  alignas(64) static uint8_t buf[4096];
  ASSERT_LE(bytes.size() + 1, sizeof buf);
  std::memcpy(buf, bytes.data(), bytes.size());
  auto f = File::from_memory({buf, bytes.size()}, "built-in");
  EXPECT_EQ(f->path(), "built-in");
  EXPECT_EQ(f->file_size(), bytes.size());
  EXPECT_EQ(f->require_string("general.architecture"), "llama");
  ASSERT_EQ(f->tensors().size(), 1u);
  EXPECT_EQ(f->tensors()[0].data, buf + f->data_offset());
  EXPECT_EQ(std::memcmp(f->tensors()[0].data, a.data(), a.size()), 0);
  EXPECT_FALSE(File::release_pages(f->tensors()[0].data, a.size()));  // no file behind it

  const auto error_of = [](std::span<const uint8_t> b) -> std::string {
    try {
      File::from_memory(b, "built-in");
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  std::memmove(buf + 1, buf, bytes.size());
  EXPECT_EQ(error_of({buf + 1, bytes.size()}), "built-in: in-memory GGUF bytes must start on a 64-byte boundary");
  buf[0] = 'X';
  EXPECT_EQ(error_of({buf, bytes.size()}), "built-in: not a GGUF file (bad magic)");
}

TEST(GgufFormat, OpenReportsMissingAndNonRegularFiles) {
  TempDir dir;
  for (LoadMode mode : {LoadMode::Mmap, LoadMode::Memory}) {
    try {
      File::open((dir.path / "absent.gguf").string(), mode);
      ADD_FAILURE() << "opened a missing file";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("absent.gguf: cannot open: No such file"), std::string::npos) << e.what();
    }
    EXPECT_THROW(File::open(dir.path.string(), mode), Error);  // a directory
    const std::string empty = (dir.path / "empty.gguf").string();
    { std::FILE* fp = std::fopen(empty.c_str(), "w"); std::fclose(fp); }
    EXPECT_THROW(File::open(empty, mode), Error);
  }
}

TEST(GgufFormat, WriteIntoMissingDirectoryThrowsAndLeavesNothing) {
  TempDir dir;
  const fs::path path = dir.path / "no_such_dir" / "x.gguf";
  Writer w;
  w.set("k", uint32_t(1));
  EXPECT_THROW(w.write(path.string()), Error);
  EXPECT_FALSE(fs::exists(dir.path / "no_such_dir"));
}

// Disk full, simulated with a file size limit: writes past it fail with EFBIG the way a full
// disk fails with ENOSPC.
TEST(GgufFormat, FailedWriteThrowsAndRemovesTheTemporaryFile) {
  TempDir dir;
  const std::string path = (dir.path / "big.gguf").string();
  const auto data = random_bytes(4 << 20, 3);
  Writer w;
  const int64_t ne[] = {int64_t(data.size() / 4)};
  w.add_tensor("big", Type::F32, ne, data.data(), data.size());

  struct rlimit old;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 1 << 20;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  try {
    w.write(path);
  } catch (const Error& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_NE(message.find("write failed"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

}  // namespace
}  // namespace hart::gguf

namespace hart::gguf {
namespace {

// The mapping /proc/self/maps shows for address p ("" for anonymous memory).
std::string mapped_file_at(const void* p) {
  std::ifstream maps("/proc/self/maps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  for (std::string line; std::getline(maps, line);) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) != 2 || at < lo || at >= hi) continue;
    const size_t slash = line.find('/');
    return slash == std::string::npos ? "" : line.substr(slash);
  }
  return "<unmapped>";
}

// A weight whose memory a backend releases is read from the file from then on: the same bytes,
// and for a file read into memory no longer anonymous pages; never once the file changed.
TEST(GgufFormat, ReleasedPagesAreReadFromTheFile) {
  const std::string path = ::testing::TempDir() + "release_pages_test.gguf";
  const std::vector<uint8_t> bytes = random_bytes(size_t(1) << 20, 9);
  Writer w;
  w.add_tensor("w", Type::I8, std::vector<int64_t>{int64_t(bytes.size())}, bytes.data(), bytes.size());
  w.write(path);
  const std::string real = std::filesystem::canonical(path).string();
  for (LoadMode mode : {LoadMode::Memory, LoadMode::Mmap}) {
    SCOPED_TRACE(mode == LoadMode::Memory ? "memory" : "mmap");
    auto f = File::open(path, mode);
    const uint8_t* data = f->tensors()[0].data;
    const uint8_t* middle = data + bytes.size() / 2;
    if (mode == LoadMode::Memory) {
      EXPECT_EQ(mapped_file_at(middle), "");
    }
    EXPECT_TRUE(File::release_pages(data + 100, bytes.size() - 200));
    EXPECT_EQ(mapped_file_at(middle), real);
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), data));
    EXPECT_FALSE(File::release_pages(bytes.data(), 64));  // not a file's memory
  }
  auto f = File::open(path, LoadMode::Memory);
  std::filesystem::last_write_time(path, std::filesystem::last_write_time(path) + std::chrono::seconds(5));
  EXPECT_FALSE(File::release_pages(f->tensors()[0].data, bytes.size()));
  EXPECT_EQ(mapped_file_at(f->tensors()[0].data + bytes.size() / 2), "");
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), f->tensors()[0].data));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace hart::gguf
