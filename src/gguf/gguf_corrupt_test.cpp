// Broken files: every validation rule fires with a message naming the problem, and no
// truncation or bit flip makes the reader crash, hang or allocate absurdly.
#include <gtest/gtest.h>

#include <functional>
#include <limits>

#include "common/error.h"
#include "gguf/gguf.h"
#include "gguf/gguf_test_util.h"

namespace hart::gguf {
namespace {

using namespace testing;

struct Corruption {
  std::string name;
  std::function<void(RawFile&)> mutate;
  std::string fragment;  // expected in the error message
};

std::vector<uint8_t> u64_bytes(uint64_t v) { return Bytes().put(v).b; }

// An array header (element type, count) followed by `payload`.
std::vector<uint8_t> array_bytes(uint32_t elem, uint64_t count, const std::vector<uint8_t>& payload = {}) {
  return Bytes().put(elem).put(count).raw(payload).b;
}

std::vector<uint8_t> nested_arrays(int depth) {
  Bytes b;
  for (int i = 0; i < depth; i++) b.put(uint32_t(ValueType::ARRAY)).put<uint64_t>(1);
  return b.put(uint32_t(ValueType::UINT8)).put<uint64_t>(0).b;
}

const std::vector<Corruption>& corruptions() {
  constexpr auto kArray = uint32_t(ValueType::ARRAY);
  constexpr int64_t kBig = int64_t(1) << 62;
  static const std::vector<Corruption> table = {
      {"bad magic", [](RawFile& f) { f.magic = 0x46554746; }, "mem.gguf: not a GGUF file (bad magic)"},
      {"version 1", [](RawFile& f) { f.version = 1; }, "unsupported GGUF version 1"},
      {"version 4", [](RawFile& f) { f.version = 4; }, "unsupported GGUF version 4"},
      {"big endian", [](RawFile& f) { f.version = 0x03000000; }, "big-endian"},
      {"absurd kv count", [](RawFile& f) { f.n_kv = uint64_t(1) << 60; }, "absurd metadata count"},
      {"absurd tensor count", [](RawFile& f) { f.n_tensors = ~uint64_t(0); }, "absurd tensor count"},
      {"key length past end", [](RawFile& f) { f.kvs[0] = u64_bytes(~uint64_t(0) - 3); }, "metadata key claims"},
      {"string value past end",
       [](RawFile& f) { f.kvs[1] = kv_raw("s", uint32_t(ValueType::STRING), u64_bytes(1 << 20)); },
       "string value of 's' claims 1048576 bytes"},
      {"unknown value type", [](RawFile& f) { f.kvs[1] = kv_raw("k", 13, {0, 0, 0, 0}); }, "unknown value type 13"},
      {"unknown array element type", [](RawFile& f) { f.kvs[1] = kv_raw("k", kArray, array_bytes(99, 0)); },
       "unknown value type 99 for array element type of 'k'"},
      {"absurd array length",
       [](RawFile& f) { f.kvs[1] = kv_raw("k", kArray, array_bytes(uint32_t(ValueType::UINT64), uint64_t(1) << 61)); },
       "absurd array length of 'k'"},
      {"absurd string array length",
       [](RawFile& f) { f.kvs[1] = kv_raw("k", kArray, array_bytes(uint32_t(ValueType::STRING), 1 << 30)); },
       "absurd array length of 'k'"},
      {"arrays nested too deep",
       [](RawFile& f) { f.kvs[1] = kv_raw("deep", kArray, nested_arrays(kMaxArrayNesting)); }, "nested deeper than"},
      {"bool not 0 or 1", [](RawFile& f) { f.kvs[1] = kv_raw("b", uint32_t(ValueType::BOOL), {2}); },
       "bool value of 'b' is 2"},
      {"duplicate key", [](RawFile& f) { f.kvs[1] = f.kvs[0]; }, "duplicate metadata key 'general.architecture'"},
      {"alignment not a power of two", [](RawFile& f) { f.kvs.push_back(kv_u32("general.alignment", 48)); },
       "general.alignment 48 is not a power of two"},
      {"alignment zero", [](RawFile& f) { f.kvs.push_back(kv_u32("general.alignment", 0)); },
       "general.alignment 0 is not a power of two"},
      {"alignment of wrong type",
       [](RawFile& f) { f.kvs.push_back(kv_raw("general.alignment", uint32_t(ValueType::UINT64), u64_bytes(32))); },
       "general.alignment must be of type u32"},
      {"unknown tensor type", [](RawFile& f) { f.tensors[0].type = 4; }, "tensor 'a' has unknown type 4"},
      {"tensor type out of range", [](RawFile& f) { f.tensors[0].type = 1000; }, "unknown type 1000"},
      {"too many dims", [](RawFile& f) { f.tensors[0].ne = {8, 2, 1, 1, 1}; }, "tensor 'a' has 5 dimensions"},
      {"negative dim", [](RawFile& f) { f.tensors[0].ne = {8, -2}; }, "negative dimension ne[1] = -2"},
      {"element count overflow", [](RawFile& f) { f.tensors[0].ne = {kBig, 4}; }, "too many elements"},
      {"byte size overflow", [](RawFile& f) { f.tensors[0].ne = {kBig}; }, "byte size overflows"},
      {"row not a multiple of the block", [](RawFile& f) { f.tensors[1].ne = {16, 2}; },
       "row length 16 is not a multiple of the q8_0 block size 32"},
      {"misaligned offset", [](RawFile& f) { f.tensors[1].offset = 40; }, "data offset 40 is not a multiple of the alignment 32"},
      {"data past end", [](RawFile& f) { f.tensors[1].offset = 96; }, "tensor 'b' data (offset 96, 34 bytes) runs past the end"},
      {"huge offset", [](RawFile& f) { f.tensors[1].offset = ~uint64_t(0) - 31; }, "runs past the end"},
      {"data truncated", [](RawFile& f) { f.data_bytes -= 1; }, "runs past the end"},
      {"duplicate tensor", [](RawFile& f) { f.tensors[1].name = f.tensors[0].name; }, "duplicate tensor 'a'"},
  };
  return table;
}

void expect_error(const std::vector<uint8_t>& bytes, const std::string& fragment) {
  try {
    File::from_bytes(bytes, "mem.gguf");
    ADD_FAILURE() << "accepted; expected an error containing: " << fragment;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("mem.gguf: ", 0), 0u) << e.what();
  }
}

TEST(GgufCorrupt, BaselineIsValid) {
  auto f = File::from_bytes(small_raw_file().bytes());
  ASSERT_EQ(f->tensors().size(), 2u);
  EXPECT_EQ(f->tensors()[1].nbytes, 34u);
  EXPECT_EQ(f->tensors()[1].data[0], 64);  // the ramp of data bytes
  EXPECT_EQ(f->require_int("test.count"), 7);
}

TEST(GgufCorrupt, EveryRuleNamesTheProblem) {
  for (const Corruption& c : corruptions()) {
    SCOPED_TRACE(c.name);
    RawFile f = small_raw_file();
    c.mutate(f);
    expect_error(f.bytes(), c.fragment);
  }
}

TEST(GgufCorrupt, VersionTwoIsAccepted) {
  RawFile f = small_raw_file();
  f.version = 2;
  EXPECT_EQ(File::from_bytes(f.bytes())->version(), 2u);
}

// Every prefix that cuts into the header or tensor data fails; prefixes that only drop the
// trailing padding are still complete files.
TEST(GgufCorrupt, EveryTruncationThrows) {
  RawFile raw = small_raw_file();
  raw.data_bytes = 128;  // 30 bytes of trailing padding after tensor 'b'
  const auto bytes = raw.bytes();
  const auto full = File::from_bytes(bytes);
  const size_t end = full->data_offset() + 64 + 34;
  ASSERT_LE(end, bytes.size());
  for (size_t n = 0; n < bytes.size(); n++) {
    const std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + ptrdiff_t(n));
    if (n < end) {
      EXPECT_THROW(File::from_bytes(prefix), Error) << "prefix " << n;
    } else {
      EXPECT_NO_THROW(File::from_bytes(prefix)) << "prefix " << n;
    }
  }
}

// Flipping bits anywhere in the header either still parses (to something self-consistent) or
// throws hart::Error: never another exception, a crash or an out-of-bounds tensor.
TEST(GgufCorrupt, BitFlipsInTheHeaderNeverCrash) {
  RawFile raw = small_raw_file();
  raw.kvs.push_back(kv_raw("arr", uint32_t(ValueType::ARRAY),
                           array_bytes(uint32_t(ValueType::STRING), 2, Bytes().str("ab").str("").b)));
  const auto bytes = raw.bytes();
  const size_t header = File::from_bytes(bytes)->data_offset();
  size_t accepted = 0, rejected = 0;
  for (size_t i = 0; i < header; i++) {
    for (uint8_t mask : {0x01, 0x10, 0x80, 0xff}) {
      auto flipped = bytes;
      flipped[i] ^= mask;
      try {
        auto f = File::from_bytes(flipped);
        accepted++;
        for (const TensorInfo& t : f->tensors())
          EXPECT_LE(f->data_offset() + t.offset + t.nbytes, f->file_size()) << "byte " << i;
      } catch (const Error&) {
        rejected++;
      }
    }
  }
  EXPECT_GT(rejected, 0u);
  EXPECT_GT(accepted, 0u);  // e.g. flips inside key names and string values
}

}  // namespace
}  // namespace hart::gguf
