// Writing GGUF v3: metadata in insertion order, tensor data aligned, written to "<path>.tmp"
// and renamed into place only once every byte is on disk.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "common/error.h"
#include "gguf/gguf.h"

namespace hart::gguf {
namespace {

constexpr uint32_t kVersion = 3;
constexpr std::string_view kAlignmentKey = "general.alignment";
constexpr size_t kDataChunk = size_t(16) << 20;  // progress is reported at least this often
constexpr size_t kWriteBuffer = size_t(1) << 20;

size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

// Every array (at any depth) holds items of its declared type and nests at most
// kMaxArrayNesting deep, so what we write reads back.
void check_value(const std::string& key, const Value& v, int depth) {
  const auto* a = std::get_if<std::shared_ptr<Array>>(&v);
  if (!a) return;
  if (!*a) throw Error("gguf writer: key '" + key + "' holds a null array");
  if (depth >= kMaxArrayNesting)
    throw Error("gguf writer: key '" + key + "' nests arrays deeper than " + std::to_string(kMaxArrayNesting));
  for (const Value& item : (*a)->items) {
    if (value_type(item) != (*a)->elem_type)
      throw Error("gguf writer: key '" + key + "' is an array of " + std::string(value_type_name((*a)->elem_type)) +
                  " holding a " + std::string(value_type_name(value_type(item))));
    check_value(key, item, depth + 1);
  }
}

using Put = std::function<void(const void*, size_t)>;

template <class T>
void put_scalar(const Put& put, T v) {
  put(&v, sizeof v);
}

void put_string(const Put& put, std::string_view s) {
  put_scalar<uint64_t>(put, s.size());
  put(s.data(), s.size());
}

void put_value(const Put& put, const Value& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) {
          put_scalar<uint8_t>(put, x ? 1 : 0);
        } else if constexpr (std::is_arithmetic_v<T>) {
          put_scalar<T>(put, x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          put_string(put, x);
        } else {
          put_scalar<uint32_t>(put, uint32_t(x->elem_type));
          put_scalar<uint64_t>(put, x->items.size());
          for (const Value& item : x->items) put_value(put, item);
        }
      },
      v);
}

void put_zeros(const Put& put, size_t n) {
  static constexpr uint8_t kZeros[256] = {};
  while (n > 0) {
    const size_t k = std::min(n, sizeof kZeros);
    put(kZeros, k);
    n -= k;
  }
}

// Buffered writes to a file descriptor; a failed write names the file and the reason.
class FdWriter {
 public:
  FdWriter(int fd, const std::string& path) : fd_(fd), path_(path) { buf_.reserve(kWriteBuffer); }

  void put(const void* data, size_t n) {
    if (buf_.size() + n > kWriteBuffer) flush();
    if (n >= kWriteBuffer) {
      write_all(static_cast<const uint8_t*>(data), n);
    } else {
      const auto* p = static_cast<const uint8_t*>(data);
      buf_.insert(buf_.end(), p, p + n);
    }
  }

  void flush() {
    write_all(buf_.data(), buf_.size());
    buf_.clear();
  }

 private:
  void write_all(const uint8_t* p, size_t n) {
    while (n > 0) {
      const ssize_t k = ::write(fd_, p, n);
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) throw Error(path_ + ": write failed: " + std::strerror(errno));
      if (k == 0) throw Error(path_ + ": write failed: no progress");
      p += k;
      n -= size_t(k);
    }
  }

  int fd_;
  const std::string& path_;
  std::vector<uint8_t> buf_;
};

}  // namespace

void Writer::set(std::string key, Value value) {
  check_value(key, value, 0);
  if (key == kAlignmentKey) {
    const auto* a = std::get_if<uint32_t>(&value);
    if (!a || *a == 0 || !std::has_single_bit(*a))
      throw Error("gguf writer: general.alignment must be a u32 power of two");
    alignment_ = *a;
  }
  auto it = std::find_if(kv_.begin(), kv_.end(), [&](const KeyValue& kv) { return kv.key == key; });
  if (it != kv_.end()) {
    it->value = std::move(value);
  } else {
    kv_.push_back({std::move(key), std::move(value)});
  }
}

void Writer::set_alignment(uint32_t alignment) { set(std::string(kAlignmentKey), alignment); }

void Writer::add_tensor(std::string name, Type type, std::span<const int64_t> ne, const void* data,
                        size_t nbytes) {
  const std::string what = "gguf writer: tensor '" + name + "'";
  const auto info = find_type_info(uint32_t(type));
  if (!info) throw Error(what + " has unknown type " + std::to_string(uint32_t(type)));
  if (ne.size() > size_t(kMaxDims)) throw Error(what + " has more than " + std::to_string(kMaxDims) + " dimensions");
  int64_t nelements = 1;
  for (int64_t n : ne) {
    if (n < 0) throw Error(what + " has a negative dimension");
    if (__builtin_mul_overflow(nelements, n, &nelements)) throw Error(what + " has too many elements");
  }
  const int64_t row = ne.empty() ? 1 : ne[0];
  if (row % info->block_size != 0)
    throw Error(what + " row length " + std::to_string(row) + " is not a multiple of the block size " +
                std::to_string(info->block_size));
  const size_t expected = size_t(nelements / info->block_size) * info->type_size;
  if (nbytes != expected)
    throw Error(what + " has " + std::to_string(nbytes) + " bytes of data, its shape needs " +
                std::to_string(expected));
  if (nbytes > 0 && !data) throw Error(what + " has no data");
  for (const PendingTensor& t : tensors_)
    if (t.name == name) throw Error("gguf writer: duplicate tensor '" + name + "'");
  tensors_.push_back({std::move(name), type, std::vector<int64_t>(ne.begin(), ne.end()), data, nbytes});
}

void Writer::emit(const Put& put, Progress progress, void* user) const {
  size_t pos = 0;
  const Put counted = [&](const void* p, size_t n) {
    put(p, n);
    pos += n;
  };
  counted("GGUF", 4);
  put_scalar<uint32_t>(counted, kVersion);
  put_scalar<uint64_t>(counted, tensors_.size());
  put_scalar<uint64_t>(counted, kv_.size());
  for (const KeyValue& kv : kv_) {
    put_string(counted, kv.key);
    put_scalar<uint32_t>(counted, uint32_t(value_type(kv.value)));
    put_value(counted, kv.value);
  }
  size_t offset = 0, total = 0;
  for (const PendingTensor& t : tensors_) {
    put_string(counted, t.name);
    put_scalar<uint32_t>(counted, uint32_t(t.ne.size()));
    for (int64_t n : t.ne) put_scalar<int64_t>(counted, n);
    put_scalar<uint32_t>(counted, uint32_t(t.type));
    put_scalar<uint64_t>(counted, offset);
    offset = align_up(offset + t.nbytes, alignment_);
    total += t.nbytes;
  }
  if (tensors_.empty()) return;  // no data section (as llama.cpp writes vocab-only files)
  put_zeros(counted, align_up(pos, alignment_) - pos);

  size_t done = 0;
  for (const PendingTensor& t : tensors_) {
    const auto* p = static_cast<const uint8_t*>(t.data);
    for (size_t at = 0; at < t.nbytes; at += kDataChunk) {
      const size_t n = std::min(kDataChunk, t.nbytes - at);
      counted(p + at, n);
      done += n;
      if (progress) progress(done, total, user);
    }
    put_zeros(counted, align_up(t.nbytes, alignment_) - t.nbytes);
  }
}

std::vector<uint8_t> Writer::to_bytes() const {
  std::vector<uint8_t> out;
  emit([&](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  }, nullptr, nullptr);
  return out;
}

void Writer::write(const std::string& path, Progress progress, void* user) const {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(tmp + ": cannot create: " + std::strerror(errno));
  try {
    FdWriter out(fd, tmp);
    emit([&](const void* p, size_t n) { out.put(p, n); }, progress, user);
    out.flush();
    if (::fsync(fd) != 0) throw Error(tmp + ": fsync failed: " + std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw Error(tmp + ": close failed: " + reason);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw Error(path + ": cannot rename " + tmp + " into place: " + reason);
  }
}

}  // namespace hart::gguf
