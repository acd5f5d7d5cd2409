// llama.cpp's lookup decoding (common/ngram-cache.cpp): n-grams of 1 to 4 tokens, each with the
// counts of the tokens seen after it. Three caches vote: the context's (built from the sequence
// as it grows), a dynamic one (kept across generations, in a file), a static one (2-grams of a
// large text, written by llama-lookup-create); a token is drafted when the context or dynamic
// cache gives it enough of the count (their thresholds), weighted by the static cache, else when
// the static cache alone does.
//
// The file format is llama.cpp's: records of an n-gram (4 int32 tokens, -1 past its length), an
// int32 count of following tokens, then that many (int32 token, int32 count) pairs, little-
// endian, in no order; a cache is its records up to the end of the file.
#pragma once

#include <array>
#include <memory>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "spec/drafter.h"

namespace hart::spec {

constexpr int kNgramMax = 4;     // LLAMA_NGRAM_MAX
constexpr int kNgramStatic = 2;  // LLAMA_NGRAM_STATIC: the static cache's n-gram length

using Ngram = std::array<int32_t, kNgramMax>;
struct NgramHash {
  size_t operator()(const Ngram& g) const;
};

class NgramCache {
 public:
  using Counts = std::unordered_map<int32_t, int32_t>;

  // Reads a file in llama.cpp's format; throws hart::Error for a file that cannot be read, is cut
  // short or holds a count below 1, and for a token id outside [0, n_vocab) (a cache of another
  // vocabulary).
  static NgramCache load(const std::string& path, int n_vocab);
  void save(const std::string& path) const;

  // Counts the n-grams of n_min..n_max tokens that end in tokens' last `n_new` (llama.cpp's
  // common_ngram_cache_update).
  void update(const std::vector<int32_t>& tokens, int n_new, int n_min, int n_max);
  const Counts* find(const Ngram& g) const;
  size_t size() const { return map_.size(); }
  bool operator==(const NgramCache& o) const { return map_ == o.map_; }

 private:
  std::unordered_map<Ngram, Counts, NgramHash> map_;
};

// The static and dynamic caches of a command or a server, read by the drafters of all its
// sequences; the dynamic one is counted into after a generation (hart run, hart chat) and written
// back to its file.
struct LookupCaches {
  NgramCache static_cache, dynamic_cache;
  std::string dynamic_path;

  // Either path may be empty (no such cache); a dynamic file that does not exist yet starts empty.
  static std::shared_ptr<LookupCaches> load(const std::string& static_path, const std::string& dynamic_path,
                                            int n_vocab);
  // A generation's text counted into the dynamic cache, and the cache written to its file.
  void update_dynamic(const std::vector<int32_t>& tokens);
  void save_dynamic() const;
};

class NgramCacheDrafter final : public Drafter {
 public:
  explicit NgramCacheDrafter(std::shared_ptr<const LookupCaches> caches) : caches_(std::move(caches)) {}
  SpecType type() const override { return SpecType::NGRAM_CACHE; }
  void draft(std::span<const int32_t> history, int n_max, Draft& out) override;

 private:
  std::shared_ptr<const LookupCaches> caches_;
  NgramCache context_;  // this sequence's own
  std::vector<int32_t> counted_;  // the history context_ has counted
};

}  // namespace hart::spec
