// GGUF reader on arbitrary bytes: every input is either a File whose accessors all work, or a
// hart::Error. A crash, hang, sanitizer report or huge allocation is a bug.
#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>

#include "common/error.h"
#include "gguf/gguf.h"

using namespace hart;

namespace {

// Each typed getter either returns or throws hart::Error for a value of another type.
void read_every_way(const gguf::File& f, const std::string& key) {
  const auto attempt = [](auto&& get) {
    try {
      get();
    } catch (const Error&) {
    }
  };
  attempt([&] { f.get_string(key); });
  attempt([&] { f.get_int(key); });
  attempt([&] { f.get_float(key); });
  attempt([&] { f.get_bool(key); });
  attempt([&] { f.get_string_array(key); });
  attempt([&] { f.get_float_array(key); });
  attempt([&] { f.get_int_array(key); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<gguf::File> f;
  try {
    f = gguf::File::from_bytes(std::span<const uint8_t>(data, size));
  } catch (const Error&) {
    return 0;
  }
  for (const gguf::KeyValue& kv : f->metadata()) {
    if (f->find(kv.key) == nullptr) __builtin_trap();  // every listed key is found
    gguf::value_type_name(gguf::value_type(kv.value));
    read_every_way(*f, kv.key);
  }
  // A tensor the reader accepted lies wholly inside the file's bytes (a heap copy, so ASan
  // sees any overrun): touch its first and last byte. Names are unique.
  volatile uint8_t sink = 0;
  for (const gguf::TensorInfo& t : f->tensors()) {
    if (f->find_tensor(t.name) != &t) __builtin_trap();
    if (t.nbytes > 0) sink = sink + t.data[0] + t.data[t.nbytes - 1];
  }
  return 0;
}
