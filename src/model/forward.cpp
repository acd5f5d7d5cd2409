#include "model/forward.h"

#include <algorithm>

#include "common/error.h"
#include "model/arch.h"
#include "model/lora.h"

namespace hart {
namespace {

// PAGED_ATTN's index: the (offset, count) pairs of the n tokens with offsets made absolute, then
// the lists; its size is rounded up to the shape's step.
int64_t attn_index_size(const Batch::Attn& a, int64_t n) {
  const int64_t need = 2 * n + int64_t(a.lists.size());
  return (need + BatchShape::kIndexStep - 1) / BatchShape::kIndexStep * BatchShape::kIndexStep;
}

void write_attn_index(int32_t* index, int64_t size, const Batch::Attn& a, int64_t n) {
  if (attn_index_size(a, n) != size) throw Error("forward: the batch does not have the graph's shape");
  for (int64_t i = 0; i < 2 * n; i++) index[i] = a.ranges[size_t(i)] + (i % 2 == 0 ? int32_t(2 * n) : 0);
  int32_t* lists = std::copy(a.lists.begin(), a.lists.end(), index + 2 * n);
  std::fill(lists, index + size, 0);
}

template <class T, class V>
void write(const ForwardInput& in, const V& values) {
  if (int64_t(values.size()) != in.t->ne[0]) throw Error("forward: the batch does not have the graph's shape");
  std::copy(values.begin(), values.end(), static_cast<T*>(in.t->data));
}

}  // namespace

size_t Batch::add(const kv::SeqState& s, const kv::StateLayout& layout, std::span<const int32_t> new_tokens,
                  Logits logits, std::span<const float> lora_scales) {
  const int n = int(new_tokens.size());
  if (!lora_scales.empty() && n_lora == 0) {  // the tokens before have none: all 0
    n_lora = int(lora_scales.size());
    lora.assign(tokens.size() * size_t(n_lora), 0.0f);
  }
  if (!lora_scales.empty() && int(lora_scales.size()) != n_lora)
    throw Error("batch: " + std::to_string(lora_scales.size()) + " adapter scales, the batch has " + std::to_string(n_lora));
  const int end = s.n + n;
  const size_t first_row = out_rows.size();
  seqs.push_back({int32_t(tokens.size()), n, s.cell_src, s.cell});
  for (int p = 0; p < kv::kPools; p++) {
    if (!layout.uses(kv::Pool(p))) continue;
    const bool window = kv::Pool(p) == kv::Pool::WINDOW;
    const std::vector<int32_t>& held = window ? s.window : s.full;
    const int begin = window ? s.window_begin : 0;  // position of held[0]
    if (begin + int(held.size()) < end || (window && begin > std::max({0, s.n - layout.window + 1, s.window_from})))
      throw Error("batch: the sequence holds no " + std::string(window ? "window " : "") + "slots for positions " +
                  std::to_string(s.n) + ".." + std::to_string(end - 1));
    Attn& a = attn[p];
    const int32_t offset = int32_t(a.lists.size());
    // Grown by doubling: a range insert into the emptied vector of the last step would take
    // exactly the new size, and reallocate at every decode step for the one slot more.
    const size_t listed = a.lists.size() + size_t(end - begin);
    if (a.lists.capacity() < listed) a.lists.reserve(std::max(listed, 2 * a.lists.capacity()));
    a.lists.insert(a.lists.end(), held.begin(), held.begin() + (end - begin));
    for (int pos = s.n; pos < end; pos++) {
      const int from = window ? std::max(begin, pos - layout.window + 1) : 0;
      a.slots.push_back(held[size_t(pos - begin)]);
      a.ranges.push_back(offset + (from - begin));
      a.ranges.push_back(pos - from + 1);
    }
  }
  for (int i = 0; i < n && n_lora > 0; i++) {
    if (lora_scales.empty()) lora.insert(lora.end(), size_t(n_lora), 0.0f);
    else lora.insert(lora.end(), lora_scales.begin(), lora_scales.end());
  }
  for (int i = 0; i < n; i++) {
    if (logits == Logits::ALL || (logits == Logits::LAST && i + 1 == n)) out_rows.push_back(int32_t(tokens.size()));
    tokens.push_back(new_tokens[size_t(i)]);
    pos.push_back(s.n + i);
  }
  return first_row;
}

size_t Batch::add_embeddings(const kv::SeqState& s, const kv::StateLayout& layout, std::span<const float> e, int n_embd,
                             Logits logits, std::span<const float> lora_scales) {
  if (n_embd <= 0 || e.empty() || e.size() % size_t(n_embd) != 0)
    throw Error("batch: " + std::to_string(e.size()) + " floats are not whole embeddings of " + std::to_string(n_embd));
  if (tokens.size() != embd.size() / size_t(n_embd)) throw Error("batch: tokens and embeddings in one batch");
  const std::vector<int32_t> none(e.size() / size_t(n_embd), 0);
  const size_t row = add(s, layout, none, logits, lora_scales);
  embd.insert(embd.end(), e.begin(), e.end());
  return row;
}

void Batch::clear() {
  tokens.clear();
  embd.clear();
  pos.clear();
  out_rows.clear();
  for (Attn& a : attn) a.slots.clear(), a.ranges.clear(), a.lists.clear();
  seqs.clear();
  n_lora = 0;
  lora.clear();
}

std::vector<bool> lora_used(const Batch& b) {
  std::vector<bool> used(size_t(b.n_lora), false);
  for (size_t i = 0; i < b.lora.size(); i++)
    if (b.lora[i] != 0.0f) used[i % size_t(b.n_lora)] = true;
  while (!used.empty() && !used.back()) used.pop_back();  // so that all 0 and none compare equal
  return used;
}

Forward::Forward(ForwardGraph& fg_, const Model& m_, const kv::SequenceStore& store_, const Batch& b, int n_ctx_)
    : c(fg_.ctx), fg(fg_), m(m_), hp(m_.hp), w(m_.w), store(store_), batch(b), n_ctx(n_ctx_), n(int64_t(b.size())),
      kv_written(size_t(m_.hp.n_layer)) {}

Tensor* Forward::input(InputKind kind, int which, Type type, int64_t n, const char* name) {
  void* data = type == Type::I32 ? static_cast<void*>(fg.i32.emplace_back(size_t(n)).data())
                                 : static_cast<void*>(fg.i64.emplace_back(size_t(n)).data());
  const int64_t ne[1] = {n};
  Tensor* t = c.new_leaf(type, ne, data);
  t->flags |= kFlagInput;
  t->set_name("%s", name);
  fg.inputs.push_back({kind, which, t});
  return t;
}

const std::vector<SeqRun>& Forward::seq_runs() {
  if (!runs_.empty()) return runs_;
  const auto& seqs = batch.seqs;
  for (size_t i = 0; i < seqs.size();) {
    size_t j = i + 1;
    while (j < seqs.size() && seqs[j].n == seqs[i].n) j++;
    const int64_t n_seq = int64_t(j - i);
    runs_.push_back({seqs[i].first, seqs[i].n, n_seq, input(InputKind::CELLS_READ, int(i), Type::I32, n_seq, "inp_cells_read"),
                     input(InputKind::CELLS_WRITE, int(i), Type::I64, n_seq, "inp_cells_write")});
    i = j;
  }
  return runs_;
}

Tensor* Forward::output_rows(Tensor* x) {
  const std::vector<int32_t>& rows = batch.out_rows;
  if (rows.empty()) return nullptr;  // a prefill chunk that is not a prompt's last: only the state matters
  at_out_rows = true;
  if (int64_t(rows.size()) == n && std::is_sorted(rows.begin(), rows.end())) return x;
  return get_rows(c, x, input(InputKind::OUT_ROWS, 0, Type::I32, int64_t(rows.size()), "inp_out_rows"));
}

Tensor* Forward::lora_scale(size_t i, int64_t rank) {
  const auto& entries = fg.lora_scales;
  for (size_t e = 0; e < entries.size(); e++)
    if (entries[e].adapter == i && entries[e].rank == rank && entries[e].out_rows == at_out_rows) {
      for (const ForwardInput& in : fg.inputs)
        if (in.kind == InputKind::LORA_SCALE && in.which == int(e)) return in.t;
    }
  const int64_t ne[2] = {1, at_out_rows ? int64_t(batch.out_rows.size()) : n};
  Tensor* t = c.new_leaf(Type::F32, ne, fg.f32.emplace_back(size_t(ne[1])).data());
  t->flags |= kFlagInput;
  t->set_name("inp_lora_scale_%zu", i);
  fg.lora_scales.push_back({i, rank, m.loras.at(i)->alpha, at_out_rows});
  fg.inputs.push_back({InputKind::LORA_SCALE, int(fg.lora_scales.size() - 1), t});
  return t;
}

void build_forward(ForwardGraph& fg, const Model& m, const kv::SequenceStore& store, const Batch& b, int n_ctx) {
  if (b.size() == 0) throw Error("forward: the batch has no tokens");
  Forward f(fg, m, store, b, n_ctx);
  f.lora_used = lora_used(b);
  if (f.lora_used.size() > m.loras.size())
    throw Error("forward: the batch has scales for " + std::to_string(f.lora_used.size()) + " adapters, the model " +
                std::to_string(m.loras.size()));
  fg.key_rope.assign(size_t(m.hp.n_layer), nullptr);
  f.tokens = f.input(InputKind::TOKENS, 0, Type::I32, f.n, "inp_tokens");
  if (!b.embd.empty()) {
    if (b.embd.size() != size_t(f.n) * size_t(m.hp.n_embd))
      throw Error("forward: a batch mixes tokens and embeddings, or its embeddings are not " +
                  std::to_string(m.hp.n_embd) + " wide");
    fg.embd.resize(b.embd.size());
    const int64_t ne[2] = {m.hp.n_embd, f.n};
    f.embd = f.c.new_leaf(Type::F32, ne, fg.embd.data());
    f.embd->flags |= kFlagInput;
    f.embd->set_name("inp_embd");
    fg.inputs.push_back({InputKind::EMBD, 0, f.embd});
  }
  f.pos = f.input(InputKind::POS, 0, Type::I32, f.n, "inp_pos");
  for (int p = 0; p < kv::kPools; p++) {
    if (!store.layout().uses(kv::Pool(p))) continue;
    f.slots[p] = f.input(InputKind::SLOTS, p, Type::I64, f.n, p == 0 ? "inp_slots" : "inp_slots_window");
    f.attn_index[p] = f.input(InputKind::ATTN_INDEX, p, Type::I32, attn_index_size(b.attn[p], f.n),
                              p == 0 ? "inp_kv_index" : "inp_kv_index_window");
  }
  fg.logits = m.hp.arch->build(f);
  if (fg.hidden_states) {  // what follows the output norm (the head, a softcap) is left out of the graph
    if (fg.logits && !f.hidden) throw Error("forward: architecture " + m.hp.arch_name + " gives no hidden states (embeddings)");
    fg.logits = f.hidden;
  }
  std::vector<Tensor*> outputs;
  if (fg.logits) {
    fg.logits->set_name("result_output");  // llama.cpp's name of the graph's last node
    outputs.push_back(fg.logits);
  }
  if (fg.keep_hidden) {
    if (!fg.hidden_all) throw Error("forward: architecture " + m.hp.arch_name + " gives no hidden states of every token");
    outputs.push_back(fg.hidden_all);
  }
  outputs.insert(outputs.end(), f.writes.begin(), f.writes.end());
  fg.graph = build_graph(outputs);
  write_inputs(fg, b);
}

void write_inputs(ForwardGraph& fg, const Batch& b) {
  const int64_t n = int64_t(b.size());
  for (const ForwardInput& in : fg.inputs) {
    switch (in.kind) {
      case InputKind::TOKENS: write<int32_t>(in, b.tokens); break;
      case InputKind::EMBD:
        if (b.embd.size() != size_t(in.t->nelements())) throw Error("forward: the batch does not have the graph's shape");
        std::copy(b.embd.begin(), b.embd.end(), static_cast<float*>(in.t->data));
        break;
      case InputKind::POS: write<int32_t>(in, b.pos); break;
      case InputKind::SLOTS: write<int64_t>(in, b.attn[in.which].slots); break;
      case InputKind::ATTN_INDEX:
        write_attn_index(static_cast<int32_t*>(in.t->data), in.t->ne[0], b.attn[in.which], n);
        break;
      case InputKind::CELLS_READ:
      case InputKind::CELLS_WRITE:
        for (int64_t k = 0; k < in.t->ne[0]; k++) {
          const Batch::Seq& s = b.seqs.at(size_t(in.which + k));
          if (in.kind == InputKind::CELLS_READ) static_cast<int32_t*>(in.t->data)[k] = s.cell_src;
          else static_cast<int64_t*>(in.t->data)[k] = s.cell;
        }
        break;
      case InputKind::OUT_ROWS: write<int32_t>(in, b.out_rows); break;
      case InputKind::LORA_SCALE: {
        const ForwardGraph::LoraScale& ls = fg.lora_scales[size_t(in.which)];
        float* out = static_cast<float*>(in.t->data);
        const int64_t rows = ls.out_rows ? int64_t(b.out_rows.size()) : n;
        if (rows != in.t->ne[1]) throw Error("forward: the batch does not have the graph's shape");
        for (int64_t r = 0; r < rows; r++) {
          const int64_t t = ls.out_rows ? b.out_rows[size_t(r)] : r;
          out[r] = lora_scale(b.lora.at(size_t(t) * size_t(b.n_lora) + ls.adapter), ls.alpha, ls.rank);
        }
        break;
      }
    }
  }
}

BatchShape::BatchShape(const Batch& b)
    : n(int64_t(b.size())),
      n_out(int64_t(b.out_rows.size())),
      out_in_order(n_out == n && std::is_sorted(b.out_rows.begin(), b.out_rows.end())),
      embd(!b.embd.empty()) {
  for (int p = 0; p < kv::kPools; p++) index_size[p] = attn_index_size(b.attn[p], n);
  for (const Batch::Seq& s : b.seqs) seq_tokens.push_back(s.n);
  lora_used = hart::lora_used(b);
}

bool BatchShape::matches(const Batch& b) const {
  if (int64_t(b.size()) != n || int64_t(b.out_rows.size()) != n_out || b.seqs.size() != seq_tokens.size()) return false;
  if (b.embd.empty() == embd) return false;
  if ((n_out == n && std::is_sorted(b.out_rows.begin(), b.out_rows.end())) != out_in_order) return false;
  for (int p = 0; p < kv::kPools; p++)
    if (attn_index_size(b.attn[p], n) != index_size[p]) return false;
  for (size_t i = 0; i < seq_tokens.size(); i++)
    if (b.seqs[i].n != seq_tokens[i]) return false;
  return hart::lora_used(b) == lora_used;
}

kv::StateLayout state_layout(const HParams& hp) {
  kv::StateLayout l;
  l.window = hp.sliding_window;
  for (int il = 0; il < hp.n_layer; il++) {
    const LayerConfig& c = hp.layers[size_t(il)];
    kv::KvLayer& kl = l.kv.emplace_back();
    if (c.owns_kv(il)) {
      kl.row = c.n_embd_kv();
      kl.pool = c.attn == AttnKind::SLIDING ? kv::Pool::WINDOW : kv::Pool::FULL;
    }
    l.recurrent.push_back(c.state);
  }
  return l;
}

}  // namespace hart
