#include "spec/ngram_cache.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/error.h"

namespace hart::spec {
namespace {

constexpr int kNgramMin = 1;  // LLAMA_NGRAM_MIN
// llama.cpp's thresholds per n-gram length (ngram-cache.cpp): the least total count, and the
// least share (percent) of it the drafted token must have.
constexpr int kMinSampleLax[kNgramMax] = {2, 2, 1, 1};
constexpr int kMinPercentLax[kNgramMax] = {66, 50, 50, 50};
constexpr int kMinSampleStrict[kNgramMax] = {4, 3, 2, 2};
constexpr int kMinPercentStrict[kNgramMax] = {75, 66, 66, 66};

Ngram ngram_at(std::span<const int32_t> tokens, size_t start, int n) {
  Ngram g;
  g.fill(-1);
  for (int i = 0; i < n; i++) g[size_t(i)] = tokens[start + size_t(i)];
  return g;
}

struct Best {
  int32_t token = -1;
  int64_t count = 0, total = 0;
  // Whether it is a sure enough draft: at least min_sample counts, min_percent of them its own.
  bool passes(int min_sample, int min_percent) const {
    return token >= 0 && total >= min_sample && 100 * count >= int64_t(min_percent) * total;
  }
};

// The token with the largest count, weighted by the static cache's counts of it (100 times its
// count, 1 where it has none), the lowest id on ties; and the total count.
Best best_of(const NgramCache::Counts& c, const NgramCache::Counts* weights) {
  Best b;
  int64_t best_score = 0;
  for (const auto& [token, count] : c) {
    int64_t w = 1;
    if (weights)
      if (auto it = weights->find(token); it != weights->end()) w = 100 * int64_t(it->second);
    const int64_t score = int64_t(count) * w;
    if (score > best_score || (score == best_score && token < b.token)) b.token = token, b.count = count, best_score = score;
    b.total += count;
  }
  return b;
}

}  // namespace

size_t NgramHash::operator()(const Ngram& g) const {
  // llama.cpp's: each token times a Fibonacci constant, xor-ed (the order does not matter).
  size_t h = 0;
  for (int32_t t : g) h ^= size_t(int64_t(t)) * size_t(11400714819323198485ull);
  return h;
}

NgramCache NgramCache::load(const std::string& path, int n_vocab) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open the lookup cache " + path);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  NgramCache c;
  size_t at = 0;
  const auto corrupt = [&](const std::string& what) {
    throw Error("the lookup cache " + path + " is corrupt at byte " + std::to_string(at) + ": " + what);
  };
  const auto read_i32 = [&]() {
    if (at + 4 > bytes.size()) corrupt("the file ends inside a record");
    int32_t v;
    std::memcpy(&v, bytes.data() + at, 4);
    at += 4;
    return v;
  };
  const auto check_token = [&](int32_t t) {
    if (t < 0 || t >= n_vocab)
      corrupt("token id " + std::to_string(t) + " is outside the vocabulary of " + std::to_string(n_vocab) +
              " (a cache of another model?)");
  };
  while (at < bytes.size()) {
    Ngram g;
    for (int i = 0; i < kNgramMax; i++) {
      g[size_t(i)] = read_i32();
      if (g[size_t(i)] != -1 || i == 0) check_token(g[size_t(i)]);
    }
    const int32_t n = read_i32();
    if (n <= 0) corrupt("an n-gram with " + std::to_string(n) + " following tokens");
    Counts& counts = c.map_[g];
    for (int32_t i = 0; i < n; i++) {
      const int32_t token = read_i32();
      check_token(token);
      const int32_t count = read_i32();
      if (count <= 0) corrupt("a count of " + std::to_string(count));
      counts[token] += count;
    }
  }
  return c;
}

void NgramCache::save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot write the lookup cache " + path);
  const auto put = [&](int32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
  for (const auto& [g, counts] : map_) {
    for (int32_t t : g) put(t);
    put(int32_t(counts.size()));
    for (const auto& [token, count] : counts) put(token), put(count);
  }
  if (!out.flush()) throw Error("cannot write the lookup cache " + path);
}

void NgramCache::update(const std::vector<int32_t>& tokens, int n_new, int n_min, int n_max) {
  const int64_t size = int64_t(tokens.size());
  for (int n = n_min; n <= n_max; n++)
    for (int64_t i = std::max<int64_t>(size - n_new, n); i < size; i++)
      map_[ngram_at(tokens, size_t(i - n), n)][tokens[size_t(i)]]++;
}

const NgramCache::Counts* NgramCache::find(const Ngram& g) const {
  auto it = map_.find(g);
  return it == map_.end() ? nullptr : &it->second;
}

std::shared_ptr<LookupCaches> LookupCaches::load(const std::string& static_path, const std::string& dynamic_path,
                                                 int n_vocab) {
  auto c = std::make_shared<LookupCaches>();
  if (!static_path.empty()) c->static_cache = NgramCache::load(static_path, n_vocab);
  if (!dynamic_path.empty() && std::filesystem::exists(dynamic_path))
    c->dynamic_cache = NgramCache::load(dynamic_path, n_vocab);
  c->dynamic_path = dynamic_path;
  return c;
}

void NgramCacheDrafter::draft(std::span<const int32_t> history, int n_max, Draft& out) {
  out.clear();
  // The context cache counts the history as it grows (a history that went back starts again).
  if (history.size() < counted_.size() || !std::equal(counted_.begin(), counted_.end(), history.begin())) {
    context_ = NgramCache();
    counted_.clear();
  }
  const int n_new = int(history.size() - counted_.size());
  counted_.assign(history.begin(), history.end());
  if (n_new > 0) context_.update(counted_, n_new, kNgramMin, kNgramMax);
  if (history.size() < size_t(kNgramStatic)) return;

  // The history and the draft so far, as one sequence.
  std::vector<int32_t> seq(history.begin(), history.end());
  while (int(out.tokens.size()) < n_max) {
    const size_t len = seq.size();
    const NgramCache::Counts* weights = caches_->static_cache.find(ngram_at(seq, len - kNgramStatic, kNgramStatic));
    int32_t token = -1;
    // Context, then dynamic cache: the longest n-gram whose best token passes the thresholds.
    for (int pass = 0; pass < 2 && token < 0; pass++) {
      const NgramCache& cache = pass == 0 ? context_ : caches_->dynamic_cache;
      const int* min_sample = pass == 0 ? kMinSampleLax : kMinSampleStrict;
      const int* min_percent = pass == 0 ? kMinPercentLax : kMinPercentStrict;
      for (int n = std::min<int>(kNgramMax, int(len)); n >= kNgramMin && token < 0; n--) {
        const NgramCache::Counts* c = cache.find(ngram_at(seq, len - size_t(n), n));
        if (!c) continue;
        if (const Best b = best_of(*c, weights); b.passes(min_sample[n - 1], min_percent[n - 1])) token = b.token;
      }
    }
    if (token < 0 && weights) {  // the static cache alone, with the lax thresholds of its length
      if (const Best b = best_of(*weights, nullptr); b.passes(kMinSampleLax[kNgramStatic - 1], kMinPercentLax[kNgramStatic - 1]))
        token = b.token;
    }
    if (token < 0) break;
    out.tokens.push_back(token);
    seq.push_back(token);
  }
}

void LookupCaches::update_dynamic(const std::vector<int32_t>& tokens) {
  dynamic_cache.update(tokens, int(tokens.size()), kNgramMin, kNgramMax);
}

void LookupCaches::save_dynamic() const {
  if (!dynamic_path.empty()) dynamic_cache.save(dynamic_path);
}

}  // namespace hart::spec
