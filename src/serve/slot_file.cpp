#include "serve/slot_file.h"

#include <algorithm>
#include <cstring>

#include "common/sha256.h"
#include "gguf/gguf.h"
#include "model/lora.h"
#include "model/model.h"

namespace hart::serve {
namespace {

constexpr char kMagic[8] = {'H', 'A', 'R', 'T', 'S', 'L', 'O', 'T'};
constexpr uint32_t kVersion = 2;  // 2: the adapter scales
constexpr size_t kHex = 64;
// Of each tensor's data, this many bytes from its start and from its end go into the fingerprint.
constexpr size_t kSampleBytes = 256;

template <class T>
void hash_value(Sha256& h, T v) {
  h.update(&v, sizeof v);
}
void hash_string(Sha256& h, const std::string& s) {
  hash_value(h, uint64_t(s.size()));
  h.update(s.data(), s.size());
}

// resize + memcpy rather than insert: GCC 12 warns of overflows in inserts of a few bytes.
void append(std::vector<uint8_t>& out, const void* p, size_t n) {
  const size_t at = out.size();
  out.resize(at + n);
  if (n > 0) std::memcpy(out.data() + at, p, n);
}
template <class T>
void put(std::vector<uint8_t>& out, T v) {
  append(out, &v, sizeof v);
}

// A u32 count, then the elements (Reader::get_array's).
template <class T>
void put_array(std::vector<uint8_t>& out, const std::vector<T>& v) {
  put(out, uint32_t(v.size()));
  append(out, v.data(), v.size() * sizeof(T));
}

struct Reader {
  std::span<const uint8_t> rest;
  const uint8_t* take(size_t n) {
    if (rest.size() < n) throw SlotFileError("the slot file is cut short");
    const uint8_t* p = rest.data();
    rest = rest.subspan(n);
    return p;
  }
  // A u32 count, then that many T (the count checked against what is left before anything is allocated).
  template <class T>
  std::vector<T> get_array() {
    const uint32_t n = get<uint32_t>();
    if (rest.size() / sizeof(T) < n) throw SlotFileError("the slot file is cut short");
    std::vector<T> v(n);
    const uint8_t* p = take(size_t(n) * sizeof(T));
    if (n > 0) std::memcpy(v.data(), p, size_t(n) * sizeof(T));  // an empty vector has no buffer to copy into
    return v;
  }
  template <class T>
  T get() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
};

std::string digest(std::span<const uint8_t> bytes) {
  Sha256 h;
  h.update(bytes.data(), bytes.size());
  return h.hex_digest();
}

// The code point starting at s[i] (advancing i), or -1 for a byte sequence that is not UTF-8.
int32_t next_code_point(const std::string& s, size_t& i) {
  const auto b = [&](size_t k) { return uint8_t(s[k]); };
  const uint8_t c = b(i);
  int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (len == 0 || i + size_t(len) > s.size()) return -1;
  int32_t cp = len == 1 ? c : c & (0x3f >> (len - 1));
  for (int k = 1; k < len; k++) {
    if ((b(i + size_t(k)) >> 6) != 2) return -1;
    cp = (cp << 6) | (b(i + size_t(k)) & 0x3f);
  }
  static constexpr int32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return -1;  // overlong, out of range, surrogate
  i += size_t(len);
  return cp;
}

void hash_tensors(Sha256& h, const gguf::File& f) {
  for (const gguf::TensorInfo& t : f.tensors()) {
    hash_string(h, t.name);
    hash_value(h, uint32_t(t.type));
    for (uint32_t d = 0; d < t.n_dims; d++) hash_value(h, t.ne[d]);
    const size_t n = std::min(kSampleBytes, t.nbytes);
    h.update(t.data, n);
    h.update(t.data + (t.nbytes - n), n);
  }
}

}  // namespace

SlotModel slot_model(const Model& m) {
  Sha256 h;
  hash_string(h, m.hp.arch_name);
  hash_tensors(h, *m.file);
  if (const auto tokens = m.file->get_string_array("tokenizer.ggml.tokens"))
    for (const std::string& t : *tokens) hash_string(h, t);
  for (const auto& lora : m.loras) {
    hash_value(h, lora->alpha);
    hash_tensors(h, *lora->file);
  }
  std::string description = m.hp.arch_name + ", " + std::to_string(m.hp.n_layer) + " layers, " +
                            std::to_string(m.hp.n_embd) + " wide, " + std::to_string(m.hp.n_vocab) + " tokens";
  if (!m.loras.empty()) description += ", " + std::to_string(m.loras.size()) + " LoRA adapters";
  return {h.hex_digest(), description};
}

std::vector<uint8_t> encode_slot_file(const SlotModel& model, const SlotContents& c) {
  std::vector<uint8_t> out;
  out.reserve(128 + model.description.size() + c.tokens.size() * 4 + c.state.size());
  append(out, kMagic, sizeof kMagic);
  put(out, kVersion);
  append(out, model.fingerprint.data(), kHex);
  put(out, uint32_t(model.description.size()));
  append(out, model.description.data(), model.description.size());
  put_array(out, c.tokens);
  put_array(out, c.lora);
  put(out, uint64_t(c.state.size()));
  append(out, c.state.data(), c.state.size());
  const std::string sum = digest(out);
  append(out, sum.data(), kHex);
  return out;
}

SlotContents decode_slot_file(std::span<const uint8_t> bytes, const SlotModel& model) {
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw SlotFileError("not a hart slot file");
  if (bytes.size() < sizeof kMagic + sizeof kVersion + kHex) throw SlotFileError("the slot file is cut short");
  Reader r{bytes.subspan(sizeof kMagic)};
  if (const uint32_t v = r.get<uint32_t>(); v != kVersion)
    throw SlotFileError("the slot file has version " + std::to_string(v) + "; this server reads version " + std::to_string(kVersion));
  const auto body = bytes.first(bytes.size() - kHex);
  if (std::memcmp(bytes.data() + body.size(), digest(body).data(), kHex) != 0)
    throw SlotFileError("the slot file is damaged (its checksum does not match its contents)");
  r.rest = body.subspan(sizeof kMagic + sizeof kVersion);
  const std::string fingerprint(reinterpret_cast<const char*>(r.take(kHex)), kHex);
  const uint32_t n_desc = r.get<uint32_t>();
  const std::string description(reinterpret_cast<const char*>(r.take(n_desc)), n_desc);
  if (fingerprint != model.fingerprint)
    throw SlotFileError("the slot file was saved by another model (" + description + "; this server runs " + model.description + ")");
  SlotContents c;
  c.tokens = r.get_array<int32_t>();
  c.lora = r.get_array<float>();
  const uint64_t n_state = r.get<uint64_t>();
  if (n_state != r.rest.size()) throw SlotFileError("the slot file's state has " + std::to_string(r.rest.size()) +
                                                    " bytes where its header says " + std::to_string(n_state));
  c.state.assign(r.rest.begin(), r.rest.end());
  return c;
}

bool valid_slot_filename(const std::string& name) {
  if (name.empty() || name.size() > 255 || name == "." || name == ".." || name.front() == ' ' || name.back() == ' ' ||
      name.back() == '.')
    return false;
  for (size_t i = 0; i < name.size();) {
    const int32_t cp = next_code_point(name, i);
    if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0xfeff || cp == 0xfffd || cp == 0x2028 ||
        cp == 0x2029 || cp == 0xff0e || cp == 0x2215 || cp == 0x2216)
      // Not UTF-8 (-1), control characters, BOM, U+FFFD, line and paragraph separators, and the
      // look-alikes of dot, slash and backslash.
      return false;
    if (std::strchr("/\\:*?\"<>|", int(cp)) != nullptr && cp < 0x80) return false;
  }
  return true;
}

}  // namespace hart::serve
