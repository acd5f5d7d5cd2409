// Reading GGUF: bring the file's bytes into memory (mmap or one heap buffer), then parse and
// validate the header, metadata and tensor infos against the bytes actually present.
#include <algorithm>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>
#include <type_traits>

#include "common/error.h"
#include "common/memory_budget.h"
#include "gguf/gguf.h"

namespace hart::gguf {

static_assert(std::endian::native == std::endian::little, "GGUF is used in place: little-endian hosts only");
static_assert(sizeof(size_t) == 8, "byte sizes are computed in 64 bits");

namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr size_t kHeapAlignment = 64;    // one cache line / one AVX-512 register

// Smallest encodings, used to bound counts by the bytes left before allocating anything.
constexpr size_t kMinKeyValueBytes = 8 + 4 + 1;       // empty key, type, one-byte value
constexpr size_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;  // empty name, n_dims 0, type, offset

std::string errno_text() { return std::strerror(errno); }

size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

size_t scalar_size(ValueType t) {
  switch (t) {
    case ValueType::UINT8: case ValueType::INT8: case ValueType::BOOL: return 1;
    case ValueType::UINT16: case ValueType::INT16: return 2;
    case ValueType::UINT32: case ValueType::INT32: case ValueType::FLOAT32: return 4;
    case ValueType::UINT64: case ValueType::INT64: case ValueType::FLOAT64: return 8;
    case ValueType::STRING: case ValueType::ARRAY: return 0;
  }
  return 0;
}

size_t min_encoded_size(ValueType t) {
  if (t == ValueType::STRING) return 8;     // length
  if (t == ValueType::ARRAY) return 4 + 8;  // element type, count
  return scalar_size(t);
}

bool valid_value_type(uint32_t t) { return t <= uint32_t(ValueType::FLOAT64); }

// Sequential little-endian reader over the file's bytes; every read is bounds-checked and a
// failure names the file, the offset and what was being read.
class Parser {
 public:
  Parser(const uint8_t* base, size_t size, const std::string& path)
      : base_(base), size_(size), path_(path) {}

  [[noreturn]] void fail(const std::string& what) const { throw Error(path_ + ": " + what); }

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

  // Error context: `what` is being read, for the key or tensor `of` (when not empty). Built
  // only on failure, so reading a 150k-entry vocabulary allocates no messages.
  static std::string describe(std::string_view what, std::string_view of) {
    std::string s(what);
    if (!of.empty()) s += " of '" + std::string(of) + "'";
    return s;
  }

  const uint8_t* take(size_t n, std::string_view what, std::string_view of = {}) {
    if (n > remaining())
      fail("truncated: " + describe(what, of) + " at offset " + std::to_string(pos_) + " needs " +
           std::to_string(n) + " bytes, " + std::to_string(remaining()) + " left");
    const uint8_t* p = base_ + pos_;
    pos_ += n;
    return p;
  }

  template <class T>
  T read(std::string_view what, std::string_view of = {}) {
    static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
    T v;
    std::memcpy(&v, take(sizeof v, what, of), sizeof v);
    return v;
  }

  std::string read_string(std::string_view what, std::string_view of = {}) {
    const uint64_t n = read<uint64_t>(what, of);
    if (n > remaining())
      fail("truncated: " + describe(what, of) + " claims " + std::to_string(n) + " bytes at offset " +
           std::to_string(pos_) + ", only " + std::to_string(remaining()) + " left");
    const auto* p = reinterpret_cast<const char*>(take(size_t(n), what, of));
    return std::string(p, size_t(n));
  }

  // `count` items of at least `min_size` bytes each must fit in what is left.
  void check_count(uint64_t count, size_t min_size, std::string_view what, std::string_view of = {}) {
    if (min_size != 0 && count > remaining() / min_size)
      fail("absurd " + describe(what, of) + " " + std::to_string(count) + " at offset " +
           std::to_string(pos_) + ": only " + std::to_string(remaining()) + " bytes left");
  }

  ValueType read_value_type(std::string_view what, std::string_view of) {
    const uint32_t t = read<uint32_t>(what, of);
    if (!valid_value_type(t)) fail("unknown value type " + std::to_string(t) + " for " + describe(what, of));
    return ValueType(t);
  }

  Value read_value(ValueType t, int depth, std::string_view key) {
    switch (t) {
      case ValueType::STRING: return read_string("string value", key);
      case ValueType::ARRAY: return read_array(depth, key);
      case ValueType::BOOL: {
        const uint8_t b = read<uint8_t>("bool value", key);
        if (b > 1) fail(describe("bool value", key) + " is " + std::to_string(b) + ", not 0 or 1");
        return b != 0;
      }
      default: return read_scalar(size_t(t), key);
    }
  }

 private:
  // The arithmetic alternative of Value with variant index `index` (== its ValueType).
  template <size_t I = 0>
  Value read_scalar(size_t index, std::string_view key) {
    if constexpr (I < std::variant_size_v<Value>) {
      using T = std::variant_alternative_t<I, Value>;
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        if (index == I) return Value(std::in_place_index<I>, read<T>("value", key));
      }
      return read_scalar<I + 1>(index, key);
    } else {
      fail("internal: not a scalar value type " + std::to_string(index));
    }
  }

  Value read_array(int depth, std::string_view key) {
    if (depth >= kMaxArrayNesting)
      fail(describe("arrays nested deeper than " + std::to_string(kMaxArrayNesting), key));
    auto array = std::make_shared<Array>();
    array->elem_type = read_value_type("array element type", key);
    const uint64_t count = read<uint64_t>("array length", key);
    check_count(count, min_encoded_size(array->elem_type), "array length", key);
    array->items.reserve(size_t(count));
    for (uint64_t i = 0; i < count; i++) array->items.push_back(read_value(array->elem_type, depth + 1, key));
    return array;
  }

  const uint8_t* base_;
  size_t size_;
  size_t pos_ = 0;
  const std::string& path_;
};

// Owns a file descriptor for the duration of open().
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// The files open() has opened from disk, for release_pages.
std::mutex g_open_mutex;
std::vector<const File*> g_open;

// A buffer of `size` bytes starting on a kHeapAlignment boundary inside `storage`.
uint8_t* alloc_aligned(std::unique_ptr<uint8_t[]>& storage, size_t size) {
  storage = std::make_unique_for_overwrite<uint8_t[]>(size + kHeapAlignment);
  const auto addr = reinterpret_cast<uintptr_t>(storage.get());
  return storage.get() + (align_up(addr, kHeapAlignment) - addr);
}

// One tensor info: name, shape, type and data offset, checked for a known type, a shape whose
// element and byte counts fit in 64 bits, whole blocks per row and an aligned offset.
TensorInfo read_tensor_info(Parser& p, uint32_t alignment) {
  TensorInfo ti{};
  ti.name = p.read_string("tensor name");
  const std::string what = "tensor '" + ti.name + "'";
  ti.n_dims = p.read<uint32_t>("dimension count", ti.name);
  if (ti.n_dims > uint32_t(kMaxDims))
    p.fail(what + " has " + std::to_string(ti.n_dims) + " dimensions (at most " + std::to_string(kMaxDims) + ")");
  int64_t nelements = 1;
  for (int d = 0; d < kMaxDims; d++) {
    ti.ne[d] = uint32_t(d) < ti.n_dims ? p.read<int64_t>("shape", ti.name) : 1;
    if (ti.ne[d] < 0)
      p.fail(what + " has negative dimension ne[" + std::to_string(d) + "] = " + std::to_string(ti.ne[d]));
    if (__builtin_mul_overflow(nelements, ti.ne[d], &nelements))
      p.fail(what + " has too many elements (overflows int64)");
  }
  const uint32_t type = p.read<uint32_t>("type", ti.name);
  const auto info = find_type_info(type);
  if (!info) p.fail(what + " has unknown type " + std::to_string(type));
  ti.type = Type(type);
  ti.offset = p.read<uint64_t>("data offset", ti.name);
  if (ti.ne[0] % info->block_size != 0)
    p.fail(what + " row length " + std::to_string(ti.ne[0]) + " is not a multiple of the " +
           std::string(info->name) + " block size " + std::to_string(info->block_size));
  uint64_t nbytes;
  if (__builtin_mul_overflow(uint64_t(nelements / info->block_size), uint64_t(info->type_size), &nbytes))
    p.fail(what + " byte size overflows");
  ti.nbytes = size_t(nbytes);
  if (ti.offset % alignment != 0)
    p.fail(what + " data offset " + std::to_string(ti.offset) + " is not a multiple of the alignment " +
           std::to_string(alignment));
  return ti;
}

}  // namespace

std::unique_ptr<File> File::open(const std::string& path, LoadMode mode, const ReadProgress& progress) {
  std::unique_ptr<File> f(new File());
  f->path_ = path;
  Fd fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0) throw Error(path + ": cannot open: " + errno_text());
  struct stat st;
  if (::fstat(fd.fd, &st) != 0) throw Error(path + ": cannot stat: " + errno_text());
  if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
  f->size_ = size_t(st.st_size);

  if (f->size_ == 0) {
    f->base_ = nullptr;  // parse() reports the truncation
  } else if (mode == LoadMode::Mmap) {
    void* m = ::mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd.fd, 0);
    if (m == MAP_FAILED) throw Error(path + ": cannot mmap: " + errno_text());
    f->mmap_ = m;
    f->mapped_ = true;
    f->base_ = static_cast<const uint8_t*>(m);
  } else {
    require_memory(f->size_, path + ": reading the file into memory (hart --mmap maps it instead)");
    // Anonymous pages at the file's own page offsets, so that release_pages can map any whole
    // page of them from the file.
    void* m = ::mmap(nullptr, f->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw Error(path + ": cannot allocate " + std::to_string(f->size_) + " bytes: " + errno_text());
    f->mmap_ = m;
    uint8_t* buf = static_cast<uint8_t*>(m);
    size_t done = 0;
    while (done < f->size_) {
      constexpr size_t kChunk = size_t(64) << 20;  // progress granularity
      const ssize_t n = ::read(fd.fd, buf + done, std::min(kChunk, f->size_ - done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error(path + ": cannot read: " + errno_text());
      if (n == 0) throw Error(path + ": file shrank while being read");
      done += size_t(n);
      if (progress) progress(done, f->size_);
    }
    f->base_ = buf;
  }
  f->parse();
  f->disk_ = st;
  std::lock_guard lock(g_open_mutex);
  g_open.push_back(f.get());
  return f;
}

std::unique_ptr<File> File::from_bytes(std::span<const uint8_t> bytes, std::string name) {
  std::unique_ptr<File> f(new File());
  f->path_ = std::move(name);
  f->size_ = bytes.size();
  uint8_t* buf = alloc_aligned(f->heap_, bytes.size());
  if (!bytes.empty()) std::memcpy(buf, bytes.data(), bytes.size());
  f->base_ = buf;
  f->parse();
  return f;
}

std::unique_ptr<File> File::from_memory(std::span<const uint8_t> bytes, std::string name) {
  if (reinterpret_cast<uintptr_t>(bytes.data()) % kHeapAlignment != 0)
    throw Error(name + ": in-memory GGUF bytes must start on a " + std::to_string(kHeapAlignment) + "-byte boundary");
  std::unique_ptr<File> f(new File());
  f->path_ = std::move(name);
  f->size_ = bytes.size();
  f->base_ = bytes.data();
  f->parse();
  return f;
}

File::~File() {
  if (!mmap_) return;
  {
    std::lock_guard lock(g_open_mutex);
    g_open.erase(std::remove(g_open.begin(), g_open.end(), this), g_open.end());
  }
  ::munmap(mmap_, size_);
}

bool File::release_pages(const void* p, size_t n) {
  std::lock_guard lock(g_open_mutex);  // the file stays open meanwhile
  const auto* at = static_cast<const uint8_t*>(p);
  const auto it = std::find_if(g_open.begin(), g_open.end(), [&](const File* f) {
    return at >= f->base_ && at < f->base_ + f->size_ && n <= size_t(f->base_ + f->size_ - at);
  });
  if (it == g_open.end()) return false;
  const File& f = **it;
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  const size_t begin = align_up(size_t(at - f.base_), page), end = (size_t(at - f.base_) + n) / page * page;
  if (end <= begin) return true;  // no whole page
  const auto same = [&](const struct stat& st) {
    return st.st_dev == f.disk_.st_dev && st.st_ino == f.disk_.st_ino && st.st_size == f.disk_.st_size &&
           st.st_mtim.tv_sec == f.disk_.st_mtim.tv_sec && st.st_mtim.tv_nsec == f.disk_.st_mtim.tv_nsec;
  };
  void* range = const_cast<uint8_t*>(f.base_) + begin;
  struct stat st;
  if (f.mapped_) return ::stat(f.path_.c_str(), &st) == 0 && same(st) && ::madvise(range, end - begin, MADV_DONTNEED) == 0;
  Fd fd{::open(f.path_.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0 || ::fstat(fd.fd, &st) != 0 || !same(st)) return false;
  // Writable like the memory it replaces (copy on write: the file never changes).
  return ::mmap(range, end - begin, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd.fd, off_t(begin)) != MAP_FAILED;
}

void File::parse() {
  Parser p(base_, size_, path_);

  const uint32_t magic = p.read<uint32_t>("magic");
  if (magic != kMagic) p.fail("not a GGUF file (bad magic)");
  version_ = p.read<uint32_t>("version");
  if (version_ != 2 && version_ != 3) {
    if (__builtin_bswap32(version_) == 2 || __builtin_bswap32(version_) == 3)
      p.fail("big-endian GGUF files are not supported");
    p.fail("unsupported GGUF version " + std::to_string(version_) + " (only 2 and 3 are supported)");
  }
  const uint64_t n_tensors = p.read<uint64_t>("tensor count");
  const uint64_t n_kv = p.read<uint64_t>("metadata count");
  p.check_count(n_kv, kMinKeyValueBytes, "metadata count");

  kv_.reserve(size_t(n_kv));
  for (uint64_t i = 0; i < n_kv; i++) {
    std::string key = p.read_string("metadata key");
    const ValueType t = p.read_value_type("value type", key);
    Value value = p.read_value(t, 0, key);
    if (!kv_index_.emplace(key, kv_.size()).second) p.fail("duplicate metadata key '" + key + "'");
    kv_.push_back({std::move(key), std::move(value)});
  }

  if (const Value* a = find("general.alignment")) {
    const auto* v = std::get_if<uint32_t>(a);
    if (!v)
      p.fail("general.alignment must be of type u32, not " + std::string(value_type_name(value_type(*a))));
    if (*v == 0 || !std::has_single_bit(*v))
      p.fail("general.alignment " + std::to_string(*v) + " is not a power of two");
    alignment_ = *v;
  }

  // Tensor infos follow the metadata, so the bytes left now bound the tensor count.
  p.check_count(n_tensors, kMinTensorInfoBytes, "tensor count");
  tensors_.reserve(size_t(n_tensors));
  for (uint64_t i = 0; i < n_tensors; i++) {
    TensorInfo ti = read_tensor_info(p, alignment_);
    if (!tensor_index_.emplace(ti.name, tensors_.size()).second) p.fail("duplicate tensor '" + ti.name + "'");
    tensors_.push_back(std::move(ti));
  }

  data_offset_ = align_up(p.pos(), alignment_);
  const size_t data_size = data_offset_ <= size_ ? size_ - data_offset_ : 0;
  for (TensorInfo& ti : tensors_) {
    if (data_offset_ > size_ || ti.offset > data_size || ti.nbytes > data_size - ti.offset)
      p.fail("tensor '" + ti.name + "' data (offset " + std::to_string(ti.offset) + ", " +
             std::to_string(ti.nbytes) + " bytes) runs past the end of the file (data section holds " +
             std::to_string(data_size) + " bytes)");
    ti.data = base_ + data_offset_ + ti.offset;
  }
}

}  // namespace hart::gguf
