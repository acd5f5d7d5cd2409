// SequenceStore::save / load: one sequence's state as bytes (the C API's state save and load, and
// its sequence copy). The bytes: a header that spells out the layout (so a state is only loaded
// into a store whose rows mean the same), then per layer the K and V rows of the positions its
// pool holds, then per recurrent layer the floats of the sequence's cell.
#include <cstring>
#include <string>

#include "common/error.h"
#include "kv/sequence_state.h"

namespace hart::kv {
namespace {

constexpr uint32_t kMagic = 0x53545248;  // "HRTS" in little-endian bytes
constexpr uint32_t kVersion = 1;

// resize + memcpy rather than insert: GCC 12 warns of overflows in inserts of a few bytes.
void append(std::vector<uint8_t>& out, const void* p, size_t n) {
  const size_t at = out.size();
  out.resize(at + n);
  std::memcpy(out.data() + at, p, n);
}

template <class T>
void put(std::vector<uint8_t>& out, T v) {
  append(out, &v, sizeof v);
}

// Reads fixed-size fields from the front of the bytes, failing on a short read.
struct Reader {
  std::span<const uint8_t> rest;
  template <class T>
  T get() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  const uint8_t* take(size_t n) {
    if (rest.size() < n) throw Error("the saved state is cut short");
    const uint8_t* p = rest.data();
    rest = rest.subspan(n);
    return p;
  }
};

std::vector<uint8_t> layout_header(const StateLayout& l, Type kv_type) {
  std::vector<uint8_t> h;
  put(h, kMagic);
  put(h, kVersion);
  put(h, uint32_t(kv_type));
  put(h, int32_t(l.window));
  put(h, uint32_t(l.kv.size()));
  for (size_t il = 0; il < l.kv.size(); il++) {
    put(h, l.kv[il].row);
    put(h, uint8_t(l.kv[il].pool));
    const auto& parts = il < l.recurrent.size() ? l.recurrent[il] : std::vector<int64_t>{};
    put(h, uint32_t(parts.size()));
    for (int64_t floats : parts) put(h, floats);
  }
  return h;
}

// The slots of layer pool p that hold a sequence's positions, in position order.
std::span<const int32_t> held(const SeqState& s, Pool p) {
  if (p == Pool::FULL) return std::span(s.full).first(size_t(s.n));
  return std::span(s.window).first(size_t(s.n - s.window_begin));
}

}  // namespace

void SequenceStore::save(const SeqState& s, std::vector<uint8_t>& out) const {
  const std::vector<uint8_t> header = layout_header(layout_, kv_.type());
  append(out, header.data(), header.size());
  put(out, int32_t(s.n));
  put(out, int32_t(s.window_begin));
  const bool has_cell = cells_ && s.n > 0;
  put(out, uint8_t(has_cell));
  for (size_t il = 0; il < layout_.kv.size(); il++) {
    if (layout_.kv[il].row <= 0) continue;
    for (const Tensor* t : {kv_.k(int(il)), kv_.v(int(il))})
      for (int32_t slot : held(s, layout_.kv[il].pool)) {
        append(out, static_cast<const uint8_t*>(t->data) + size_t(slot) * t->nb[1], t->nb[1]);
      }
  }
  if (!has_cell) return;
  for (size_t il = 0; il < states_.size(); il++)
    for (const Tensor* t : states_[il]) {
      append(out, static_cast<const uint8_t*>(t->data) + size_t(s.cell_src) * t->nb[1], t->nb[1]);
    }
}

void SequenceStore::load(SeqState& s, std::span<const uint8_t> bytes) {
  release(s);
  const std::vector<uint8_t> header = layout_header(layout_, kv_.type());
  uint32_t magic = 0;
  if (bytes.size() >= sizeof magic) std::memcpy(&magic, bytes.data(), sizeof magic);
  if (magic != kMagic) throw Error("the bytes are not a saved hart state");
  if (bytes.size() < header.size() || std::memcmp(bytes.data(), header.data(), header.size()) != 0)
    throw Error("the saved state is of another model, cache type or state format");
  Reader r{bytes.subspan(header.size())};
  const int32_t n = r.get<int32_t>(), window_begin = r.get<int32_t>();
  const bool has_cell = r.get<uint8_t>() != 0;
  const int64_t n_window = n - window_begin;
  if (n < 0 || window_begin < 0 || n_window < 0 || (pools_[1] && n_window > layout_.window - 1) ||
      has_cell != (cells_ && n > 0))
    throw Error("the saved state's positions are inconsistent");
  const int64_t want_full = pools_[0] ? n : 0, want_window = pools_[1] ? n_window : 0;
  if (want_full > n_free(Pool::FULL) || want_window > n_free(Pool::WINDOW) || (has_cell && n_free_cells() == 0))
    throw Error("the session has no room for a saved state of " + std::to_string(n) + " positions");
  // Take the slots, then fill them; a malformed tail gives everything back.
  if (pools_[0]) pools_[0]->alloc(int32_t(want_full), s.full);
  if (pools_[1]) pools_[1]->alloc(int32_t(want_window), s.window);
  s.window_begin = pools_[1] ? window_begin : 0;
  s.n = n;
  if (has_cell) {
    std::vector<int32_t> c;
    cells_->alloc(1, c);
    s.cell = s.cell_src = c[0];
  }
  try {
    for (size_t il = 0; il < layout_.kv.size(); il++) {
      if (layout_.kv[il].row <= 0) continue;
      for (Tensor* t : {kv_.k(int(il)), kv_.v(int(il))})
        for (int32_t slot : held(s, layout_.kv[il].pool))
          std::memcpy(static_cast<uint8_t*>(t->data) + size_t(slot) * t->nb[1], r.take(t->nb[1]), t->nb[1]);
    }
    if (has_cell)
      for (auto& parts : states_)
        for (Tensor* t : parts)
          std::memcpy(static_cast<uint8_t*>(t->data) + size_t(s.cell) * t->nb[1], r.take(t->nb[1]), t->nb[1]);
    if (!r.rest.empty()) throw Error("the saved state has " + std::to_string(r.rest.size()) + " bytes too many");
  } catch (...) {
    release(s);
    throw;
  }
}

}  // namespace hart::kv
