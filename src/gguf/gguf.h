// GGUF v2/v3 files (llama.cpp's format), read byte-compatibly and written back.
//
// Reading validates everything before trusting it: a corrupt, truncated or hostile file is
// rejected with a hart::Error that names the problem (bad magic, offset past the end, absurd
// count, overflowing dims, unknown type), never a crash, hang or huge allocation.
// Tensor data is used in place: either in the mmap of the file (inspection) or in one heap
// buffer the whole file was read into (generation; immune to page-cache eviction).
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "types/tensor_type.h"

namespace hart::gguf {

enum class ValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
  STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
std::string_view value_type_name(ValueType t);

struct Array;
// One metadata value. Arrays may nest (an array of arrays).
using Value = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                           std::string, std::shared_ptr<Array>, uint64_t, int64_t, double>;
struct Array {
  ValueType elem_type;
  std::vector<Value> items;
};
ValueType value_type(const Value& v);

struct KeyValue {
  std::string key;
  Value value;
};

constexpr int kMaxDims = 4;
constexpr uint32_t kDefaultAlignment = 32;
constexpr int kMaxArrayNesting = 8;  // arrays of arrays deeper than this are rejected

struct TensorInfo {
  std::string name;
  Type type;
  uint32_t n_dims;
  int64_t ne[kMaxDims];  // unused dims are 1
  uint64_t offset;       // relative to the start of the data section
  size_t nbytes;
  const uint8_t* data;   // into the file's bytes (mmap or heap copy)
  int64_t nelements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

enum class LoadMode {
  Mmap,    // map the file read-only; pages come and go with the page cache
  Memory,  // read the whole file into anonymous memory (default for generation)
};

class File {
 public:
  // Throws hart::Error("<path>: <what is wrong>") on any problem. In Memory mode `progress`
  // (if set) is called with the bytes read so far and the file size as the file is read.
  using ReadProgress = std::function<void(size_t done, size_t total)>;
  static std::unique_ptr<File> open(const std::string& path, LoadMode mode = LoadMode::Mmap,
                                    const ReadProgress& progress = {});
  // Parse a file already in memory (tests, fuzzers). The bytes are copied.
  static std::unique_ptr<File> from_bytes(std::span<const uint8_t> bytes, std::string name = "<memory>");
  // Parse bytes that stay valid and unchanged as long as the File (a model embedded in the
  // binary), using them in place: nothing is copied. They must start on a 64-byte boundary, as a
  // file read into memory does, since tensors are used where they lie.
  static std::unique_ptr<File> from_memory(std::span<const uint8_t> bytes, std::string name);
  ~File();

  // Gives back to the system the memory of the whole pages within bytes [p, p + n) of an open
  // file's data, which reads then take from the file itself (the same bytes): a file read into
  // memory has those pages remapped from the file, a mapped file has them dropped until read
  // again. For data a backend keeps its own copy of (repacked weights). Returns false, doing
  // nothing, when p is in no file opened from disk or the file on disk is no longer the one
  // loaded (replaced or changed since), whose bytes could not stand in for the memory.
  static bool release_pages(const void* p, size_t n);
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  size_t data_offset() const { return data_offset_; }
  size_t file_size() const { return size_; }

  const std::vector<KeyValue>& metadata() const { return kv_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }

  const Value* find(std::string_view key) const;
  const TensorInfo* find_tensor(std::string_view name) const;

  // Typed accessors. get_* throw hart::Error naming the key when it is missing or has an
  // incompatible type; integer getters accept any integer type whose value fits.
  std::optional<std::string> get_string(std::string_view key) const;
  std::optional<int64_t> get_int(std::string_view key) const;
  std::optional<double> get_float(std::string_view key) const;  // any numeric type
  std::optional<bool> get_bool(std::string_view key) const;
  std::string require_string(std::string_view key) const;
  int64_t require_int(std::string_view key) const;
  double require_float(std::string_view key) const;
  // Arrays of one element type; nullopt when missing, Error when of another type.
  std::optional<std::vector<std::string>> get_string_array(std::string_view key) const;
  std::optional<std::vector<float>> get_float_array(std::string_view key) const;
  std::optional<std::vector<int64_t>> get_int_array(std::string_view key) const;

 private:
  File() = default;
  void parse();

  std::string path_;
  uint32_t version_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  size_t data_offset_ = 0;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  void* mmap_ = nullptr;             // open(): the file mapped, or read into anonymous pages
  bool mapped_ = false;              // which of the two
  std::unique_ptr<uint8_t[]> heap_;  // from_bytes (from_memory owns nothing)
  struct stat disk_ {};              // the file as loaded (release_pages checks it is unchanged)
  std::vector<KeyValue> kv_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> kv_index_, tensor_index_;
};

// Builds a GGUF v3 file. Metadata keeps insertion order; setting a key again replaces it.
// write() goes to "<path>.tmp" and renames on success, so a failed write (disk full)
// never leaves a half-written file behind under the final name.
class Writer {
 public:
  void set(std::string key, Value value);
  void set_alignment(uint32_t alignment);  // also stored as general.alignment
  // `data` must stay valid until write(); nbytes must equal the size of `ne` in `type`.
  void add_tensor(std::string name, Type type, std::span<const int64_t> ne, const void* data,
                  size_t nbytes);
  // Progress callback: bytes of tensor data written so far, and the total.
  using Progress = void (*)(size_t done, size_t total, void* user);
  void write(const std::string& path, Progress progress = nullptr, void* user = nullptr) const;
  std::vector<uint8_t> to_bytes() const;

 private:
  struct PendingTensor {
    std::string name;
    Type type;
    std::vector<int64_t> ne;
    const void* data;
    size_t nbytes;
  };
  std::vector<KeyValue> kv_;
  std::vector<PendingTensor> tensors_;
  uint32_t alignment_ = kDefaultAlignment;

  // Emits the whole file (header, metadata, tensor infos, aligned data) through `put`.
  void emit(const std::function<void(const void*, size_t)>& put, Progress progress,
            void* user) const;
};

}  // namespace hart::gguf
