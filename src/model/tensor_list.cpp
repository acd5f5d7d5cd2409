#include "model/tensor_list.h"

#include <algorithm>
#include <unordered_set>

#include "gguf/gguf.h"
#include "quant/quant.h"

namespace hart {
namespace {

std::string shape_text(const int64_t* ne, int n_dims) {
  std::string s = "[";
  for (int d = 0; d < n_dims; d++) s += (d ? ", " : "") + std::to_string(ne[d]);
  return s + "]";
}

}  // namespace

std::string blk(int il, const char* name) { return "blk." + std::to_string(il) + "." + name; }

void TensorList::add(std::string name, std::initializer_list<int64_t> ne, TensorRole role, Tensor** bind,
                     TensorNeed need) {
  TensorSpec& s = specs_.emplace_back();
  s.name = std::move(name);
  s.n_dims = int(ne.size());
  std::copy(ne.begin(), ne.end(), s.ne.begin());
  s.role = role;
  s.need = need;
  s.synthetic = need == TensorNeed::REQUIRED;
  s.bind = need == TensorNeed::IGNORED ? nullptr : bind;
}

void TensorList::ignore(std::string name, std::initializer_list<int64_t> ne, TensorRole role, bool synthetic) {
  add(std::move(name), ne, role, nullptr, TensorNeed::IGNORED);
  specs_.back().synthetic = synthetic;
}

void TensorList::linear(const std::string& base, int64_t k, int64_t n, Linear& lin, const LinearSpec& spec) {
  matrix(base, {k, n}, n, 1, lin, spec);
}

void TensorList::experts(const std::string& base, int64_t k, int64_t n, int64_t n_expert, Linear& lin,
                         const LinearSpec& spec) {
  matrix(base, {k, n, n_expert}, n, n_expert, lin, {.need = spec.need, .scale_used = spec.scale_used,
                                                     .synthetic = spec.synthetic});
}

void TensorList::matrix(const std::string& base, std::initializer_list<int64_t> ne, int64_t n_out, int64_t scales,
                        Linear& lin, const LinearSpec& spec) {
  const bool synthetic = spec.synthetic == Synthetic::IF_REQUIRED ? spec.need == TensorNeed::REQUIRED
                                                                  : spec.synthetic == Synthetic::YES;
  add(base + ".weight", ne, TensorRole::MATRIX, &lin.w, spec.need);
  specs_.back().synthetic = synthetic;
  if (spec.bias != Bias::NONE) {
    add(base + ".bias", {n_out}, TensorRole::BIAS, &lin.b, TensorNeed::OPTIONAL);
    specs_.back().synthetic = synthetic && spec.bias == Bias::TYPICAL;
  }
  if (spec.scale_used)
    add(base + ".scale", {scales}, TensorRole::SCALE, &lin.s, TensorNeed::OPTIONAL);
  else
    ignore(base + ".scale", {scales}, TensorRole::SCALE);
  ignore(base + ".input_scale", {scales}, TensorRole::SCALE);
}

void TensorList::one_of(std::vector<std::string> a, std::vector<std::string> b) {
  alternatives_.emplace_back(std::move(a), std::move(b));
}

const TensorSpec* TensorList::find(std::string_view name) const {
  for (const TensorSpec& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

TensorCheck check_tensors(const gguf::File& f, const TensorList& list) {
  TensorCheck c;
  std::unordered_set<std::string_view> listed;
  for (const TensorSpec& s : list.specs()) {
    listed.insert(s.name);
    const gguf::TensorInfo* t = f.find_tensor(s.name);
    if (!t) {
      if (s.need == TensorNeed::REQUIRED) c.problems.push_back("tensor '" + s.name + "' is missing");
      continue;
    }
    bool same = true;
    for (int d = 0; d < gguf::kMaxDims; d++) same &= t->ne[d] == s.ne[size_t(d)];
    if (!same) {
      c.problems.push_back("tensor '" + s.name + "' has shape " + shape_text(t->ne, int(t->n_dims)) + ", expected " +
                           shape_text(s.ne.data(), s.n_dims));
      continue;
    }
    if (s.need != TensorNeed::IGNORED && (!type_supported(t->type) || !can_dequantize(t->type))) {
      c.problems.push_back("tensor '" + s.name + "' has type " + std::string(type_name(t->type)) +
                           ", which hart does not support");
      continue;
    }
    (s.need == TensorNeed::IGNORED ? c.ignored : c.used)++;
  }
  for (const auto& [a, b] : list.alternatives()) {
    auto present = [&](const std::vector<std::string>& names) {
      size_t n = 0;
      for (const std::string& name : names) n += f.find_tensor(name) != nullptr;
      return n;
    };
    const size_t na = present(a), nb = present(b);
    if (!((na == a.size() && nb == 0) || (nb == b.size() && na == 0)))
      c.problems.push_back("the file must hold either '" + a[0] + "' or '" + b[0] + "' and its companions, not " +
                           (na + nb == 0 ? "neither" : "a mix"));
  }
  for (const gguf::TensorInfo& t : f.tensors())
    if (!listed.count(t.name)) c.problems.push_back("tensor '" + t.name + "' is not part of this architecture");
  return c;
}

size_t bind_tensors(const gguf::File& f, const TensorList& list, Context& ctx) {
  size_t bytes = 0;
  for (const TensorSpec& s : list.specs()) {
    const gguf::TensorInfo* ti = f.find_tensor(s.name);
    if (!ti || !s.bind) continue;
    Tensor* t = ctx.new_leaf(ti->type, std::span<const int64_t>(ti->ne, kMaxDims), const_cast<uint8_t*>(ti->data));
    t->flags |= kFlagWeight;
    t->set_name("%s", s.name.c_str());
    bytes += ti->nbytes;
    *s.bind = t;
  }
  return bytes;
}

}  // namespace hart
