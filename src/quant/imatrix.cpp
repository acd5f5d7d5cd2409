#include "quant/imatrix.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>

#include "common/error.h"
#include "gguf/gguf.h"

namespace hart {
namespace {

constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF"

bool is_gguf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the importance matrix");
  uint32_t magic = 0;
  in.read(reinterpret_cast<char*>(&magic), 4);
  return in && magic == kGgufMagic;
}

std::vector<float> f32_values(const gguf::TensorInfo& t, const std::string& path) {
  if (t.type != Type::F32) throw Error(path + ": " + t.name + " is not F32");
  std::vector<float> v(size_t(t.nelements()));
  std::memcpy(v.data(), t.data, v.size() * sizeof(float));
  return v;
}

bool strip_suffix(std::string& s, std::string_view suffix) {
  if (!std::string_view(s).ends_with(suffix)) return false;
  s.resize(s.size() - suffix.size());
  return true;
}

}  // namespace

ImportanceMatrix ImportanceMatrix::load(const std::string& path) {
  if (!is_gguf(path)) return load_legacy(path);
  const auto file = gguf::File::open(path);
  ImportanceMatrix m;
  // Like llama-quantize: a GGUF imatrix without its metadata is refused.
  if (!file->find("imatrix.datasets") || !file->find("imatrix.chunk_count") || !file->find("imatrix.chunk_size"))
    throw Error(path + ": missing imatrix metadata (imatrix.datasets, imatrix.chunk_count, imatrix.chunk_size)");
  m.datasets_ = file->get_string_array("imatrix.datasets").value_or(std::vector<std::string>{});
  m.chunk_count_ = int(file->get_int("imatrix.chunk_count").value_or(0));
  std::map<std::string, std::pair<const gguf::TensorInfo*, const gguf::TensorInfo*>> pairs;
  for (const gguf::TensorInfo& t : file->tensors()) {
    std::string name = t.name;
    if (strip_suffix(name, ".in_sum2")) pairs[name].first = &t;
    else if (strip_suffix(name, ".counts")) pairs[name].second = &t;
  }
  if (pairs.empty()) throw Error(path + ": no importance data");
  for (const auto& [name, p] : pairs) {
    if (!p.first || !p.second) throw Error(path + ": mismatched sums and counts for " + name);
    std::vector<float> sums = f32_values(*p.first, path);
    const std::vector<float> counts = f32_values(*p.second, path);
    if (counts.empty() || sums.size() % counts.size() != 0)
      throw Error(path + ": " + name + " has " + std::to_string(counts.size()) + " counts for " +
                  std::to_string(sums.size()) + " values");
    // Each matrix's sums over its count of tokens (counts are whole numbers stored as floats);
    // a matrix that saw no token gets 1s.
    const size_t ne0 = sums.size() / counts.size();
    for (size_t j = 0; j < counts.size(); j++) {
      const float count = float(std::lround(counts[j]));
      for (size_t i = 0; i < ne0; i++) sums[j * ne0 + i] = count > 0 ? sums[j * ne0 + i] / count : 1.0f;
    }
    m.values_[name] = std::move(sums);
  }
  return m;
}

// The legacy .dat: int32 n_entries, then per entry int32 name length, the name, int32 ncall,
// int32 nval, nval floats (mean squares times ncall); optionally int32 chunk count, int32
// dataset name length and the name.
ImportanceMatrix ImportanceMatrix::load_legacy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  auto read_i32 = [&](const char* what) {
    int32_t v = 0;
    in.read(reinterpret_cast<char*>(&v), 4);
    if (!in) throw Error(path + ": truncated importance matrix (" + what + ")");
    return v;
  };
  auto read_string = [&](int32_t len, const char* what) {
    if (len < 0 || len > (1 << 20)) throw Error(path + ": bad " + std::string(what) + " length");
    std::string s(size_t(len), '\0');
    in.read(s.data(), len);
    if (!in) throw Error(path + ": truncated importance matrix (" + what + ")");
    return s;
  };
  ImportanceMatrix m;
  const int32_t n_entries = read_i32("entry count");
  if (n_entries < 1) throw Error(path + ": not an importance matrix (neither GGUF nor llama.cpp's .dat)");
  for (int32_t e = 0; e < n_entries; e++) {
    std::string name = read_string(read_i32("name length"), "name");
    const int32_t ncall = read_i32("call count"), nval = read_i32("value count");
    if (nval < 1 || nval > (1 << 28)) throw Error(path + ": bad value count for " + name);
    std::vector<float> v(static_cast<size_t>(nval));
    in.read(reinterpret_cast<char*>(v.data()), std::streamsize(v.size() * sizeof(float)));
    if (!in) throw Error(path + ": truncated importance matrix (values of " + name + ")");
    if (ncall > 0)
      for (float& x : v) x /= float(ncall);
    m.values_[std::move(name)] = std::move(v);
  }
  int32_t chunks = 0;
  if (in.read(reinterpret_cast<char*>(&chunks), 4)) {
    m.chunk_count_ = chunks;
    int32_t len = 0;
    if (in.read(reinterpret_cast<char*>(&len), 4) && len > 0 && len <= (1 << 20)) {
      std::string dataset(size_t(len), '\0');
      if (in.read(dataset.data(), len)) m.datasets_.push_back(std::move(dataset));
    }
  }
  return m;
}

const std::vector<float>* ImportanceMatrix::find(std::string_view tensor) const {
  const auto it = values_.find(std::string(tensor));
  return it == values_.end() ? nullptr : &it->second;
}

}  // namespace hart
