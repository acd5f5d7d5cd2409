#include "model/forward.h"

#include <algorithm>

#include "common/error.h"
#include "model/arch.h"

namespace hart {
namespace {

Tensor* input_leaf(Context& c, Type type, int64_t n, void* data, const char* name) {
  const int64_t ne[1] = {n};
  Tensor* t = c.new_leaf(type, ne, data);
  t->flags |= kFlagInput;
  t->set_name("%s", name);
  return t;
}

// PAGED_ATTN's index: the (offset, count) pairs with offsets made absolute, then the lists.
std::vector<int32_t> attn_index(const Batch::Attn& a, int64_t n) {
  std::vector<int32_t> index = a.ranges;
  for (int64_t i = 0; i < n; i++) index[size_t(2 * i)] += int32_t(2 * n);
  index.insert(index.end(), a.lists.begin(), a.lists.end());
  return index;
}

}  // namespace

size_t Batch::add(const kv::SeqState& s, const kv::StateLayout& layout, std::span<const int32_t> new_tokens,
                  Logits logits) {
  const int n = int(new_tokens.size());
  const int end = s.n + n;
  const size_t first_row = out_rows.size();
  seqs.push_back({int32_t(tokens.size()), n, s.cell_src, s.cell});
  for (int p = 0; p < kv::kPools; p++) {
    if (!layout.uses(kv::Pool(p))) continue;
    const bool window = kv::Pool(p) == kv::Pool::WINDOW;
    const std::vector<int32_t>& held = window ? s.window : s.full;
    const int begin = window ? s.window_begin : 0;  // position of held[0]
    if (begin + int(held.size()) < end || (window && begin > std::max(0, s.n - layout.window + 1)))
      throw Error("batch: the sequence holds no " + std::string(window ? "window " : "") + "slots for positions " +
                  std::to_string(s.n) + ".." + std::to_string(end - 1));
    Attn& a = attn[p];
    const int32_t offset = int32_t(a.lists.size());
    a.lists.insert(a.lists.end(), held.begin(), held.begin() + (end - begin));
    for (int pos = s.n; pos < end; pos++) {
      const int from = window ? std::max(begin, pos - layout.window + 1) : 0;
      a.slots.push_back(held[size_t(pos - begin)]);
      a.ranges.push_back(offset + (from - begin));
      a.ranges.push_back(pos - from + 1);
    }
  }
  for (int i = 0; i < n; i++) {
    if (logits == Logits::ALL || (logits == Logits::LAST && i + 1 == n)) out_rows.push_back(int32_t(tokens.size()));
    tokens.push_back(new_tokens[size_t(i)]);
    pos.push_back(s.n + i);
  }
  return first_row;
}

Forward::Forward(ForwardGraph& fg_, const Model& m_, const kv::SequenceStore& store_, const Batch& b, int n_ctx_)
    : c(fg_.ctx), fg(fg_), m(m_), hp(m_.hp), w(m_.w), store(store_), batch(b), n_ctx(n_ctx_), n(int64_t(b.size())),
      kv_written(size_t(m_.hp.n_layer)) {}

Tensor* Forward::input_i32(std::vector<int32_t> data, const char* name) {
  std::vector<int32_t>& v = fg.i32.emplace_back(std::move(data));
  return input_leaf(c, Type::I32, int64_t(v.size()), v.data(), name);
}

Tensor* Forward::input_i64(std::vector<int64_t> data, const char* name) {
  std::vector<int64_t>& v = fg.i64.emplace_back(std::move(data));
  return input_leaf(c, Type::I64, int64_t(v.size()), v.data(), name);
}

const std::vector<SeqRun>& Forward::seq_runs() {
  if (!runs_.empty()) return runs_;
  const auto& seqs = batch.seqs;
  for (size_t i = 0; i < seqs.size();) {
    size_t j = i + 1;
    while (j < seqs.size() && seqs[j].n == seqs[i].n) j++;
    std::vector<int32_t> read;
    std::vector<int64_t> write;
    for (size_t k = i; k < j; k++) {
      read.push_back(seqs[k].cell_src);
      write.push_back(seqs[k].cell);
    }
    runs_.push_back({seqs[i].first, seqs[i].n, int64_t(j - i), input_i32(std::move(read), "inp_cells_read"),
                     input_i64(std::move(write), "inp_cells_write")});
    i = j;
  }
  return runs_;
}

Tensor* Forward::output_rows(Tensor* x) {
  const std::vector<int32_t>& rows = batch.out_rows;
  if (rows.empty()) return nullptr;  // a prefill chunk that is not a prompt's last: only the state matters
  if (int64_t(rows.size()) == n && std::is_sorted(rows.begin(), rows.end())) return x;
  return get_rows(c, x, input_i32(rows, "inp_out_rows"));
}

void build_forward(ForwardGraph& fg, const Model& m, const kv::SequenceStore& store, const Batch& b, int n_ctx) {
  if (b.size() == 0) throw Error("forward: the batch has no tokens");
  Forward f(fg, m, store, b, n_ctx);
  f.tokens = f.input_i32(b.tokens, "inp_tokens");
  f.pos = f.input_i32(b.pos, "inp_pos");
  for (int p = 0; p < kv::kPools; p++) {
    if (!store.layout().uses(kv::Pool(p))) continue;
    f.slots[p] = f.input_i64(b.attn[p].slots, p == 0 ? "inp_slots" : "inp_slots_window");
    f.attn_index[p] = f.input_i32(attn_index(b.attn[p], f.n), p == 0 ? "inp_kv_index" : "inp_kv_index_window");
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
  outputs.insert(outputs.end(), f.writes.begin(), f.writes.end());
  fg.graph = build_graph(outputs);
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
