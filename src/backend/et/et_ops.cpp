#include "backend/et/et_ops.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "backend/et/device/et_params.h"
#include "common/error.h"

namespace hart::et {

namespace {

// TOP_K's largest k on the device (top_k.c passes over the row once per result; MoE routers pick
// at most 16 of a few hundred experts, llama.cpp's sampling top-k of 40 stays on the host).
constexpr int64_t kDeviceTopKMax = 64;

bool device_float(Type t) { return t == Type::F32 || t == Type::F16; }
// The block types device/et_blocks.h reads (ggml's ids).
bool device_blocks(Type t) {
  switch (t) {
    case Type::Q4_0: case Type::Q4_1: case Type::Q5_0: case Type::Q5_1: case Type::Q8_0: case Type::Q4_K:
    case Type::Q5_K: case Type::Q6_K: case Type::IQ4_NL: return true;
    default: return false;
  }
}
bool rows_contiguous(const Tensor& t) { return t.nb[0] == type_info(t.type).type_size; }
bool f32_rows(const Tensor* t) { return t && t->type == Type::F32 && rows_contiguous(*t); }
bool broadcasts_to(const Tensor& b, const Tensor& a) {
  for (int d = 0; d < kMaxDims; d++)
    if (b.ne[d] <= 0 || a.ne[d] % b.ne[d] != 0) return false;
  return true;
}
// The device's et_activation of a UNARY kind: the device names each ET_ACT_<ggml name>.
int32_t device_activation(Unary u) {
  static constexpr int32_t act[] = {
#define HART_X(name) ET_ACT_##name,
      HART_UNARY_KINDS(HART_X)
#undef HART_X
  };
  return act[size_t(u)];
}
bool same_shape(const Tensor& a, const Tensor& b) {
  for (int d = 0; d < kMaxDims; d++)
    if (a.ne[d] != b.ne[d]) return false;
  return true;
}

// Whether two tensors' bytes overlap in (host-planned) memory.
bool overlaps(const Tensor& a, const Tensor& b) {
  const auto* pa = static_cast<const char*>(a.data);
  const auto* pb = static_cast<const char*>(b.data);
  return pa && pb && pa < pb + b.nbytes() && pb < pa + a.nbytes();
}

// The planner may give the second op's result the memory of an input of the first once that
// input's last reader (the first op) has run; fused, both run at once, so that must not happen.
bool reads_own_output(const Tensor& head, const Tensor& fused_dst) {
  for (const Tensor* s : head.src)
    if (s && overlaps(*s, fused_dst)) return true;
  return false;
}

// The shapes the matrix-engine kernels take (llama.cpp's conditions, engine_mul_mat below) apart
// from where dst lies: weights w (K, M), activations x (K, N).
bool engine_shape(Type w, Type x, int64_t k, int64_t m, int64_t n) {
  if (m % 16 != 0) return false;
  if ((w == Type::Q4_0 || w == Type::Q8_0) && x == Type::F32) return n >= 53 && k % 32 == 0;
  return w == x && (w == Type::F16 || w == Type::F32) && k % 16 == 0 && n > 1;
}

// A GLU whose gate and up are the last two launches, plain MUL_MATs of weights laid out alike over
// the same F32 activations, read by nothing else: one vector kernel computes both and the GLU (the
// activations read once, no phase between the products and the GLU). Not where the engine would
// take the products (prefill).
template <class PrivateResult>
bool fuses_gate_and_up(const std::vector<EtOp>& ops, const Tensor& n, const PrivateResult& private_result) {
  if (n.op != Op::GLU || ops.size() < 2) return false;
  const Tensor* gate = n.src[0];
  const Tensor* up = n.src[1];
  const EtOp &a = ops[ops.size() - 2], &b = ops.back();
  const bool last_two = (a.node == gate && b.node == up) || (a.node == up && b.node == gate);
  if (!last_two || a.head != a.node || b.head != b.node || gate->op != Op::MUL_MAT || up->op != Op::MUL_MAT) return false;
  const Tensor *wg = gate->src[0], *wu = up->src[0], *x = gate->src[1];
  if (up->src[1] != x || x->type != Type::F32 || wg->type != wu->type || !private_result(gate) || !private_result(up))
    return false;
  for (int d = 0; d < kMaxDims; d++)
    if (wg->ne[d] != wu->ne[d] || wg->nb[d] != wu->nb[d]) return false;
  if (engine_shape(wg->type, x->type, wg->ne[0], wg->ne[1], x->ne[1])) return false;
  return !reads_own_output(*gate, n) && !overlaps(*wu, n);
}

// The longest row the ROPE kernel normalizes in front of its rotation (rope.c).
constexpr int64_t kRopeMaxNormRow = 512;

// An RMS_NORM+MUL by one weight row (ops.back()) whose result only this ROPE reads: the ROPE
// normalizes each row itself.
template <class PrivateResult>
bool fuses_norm_into_rope(const std::vector<EtOp>& ops, const Tensor& n, const PrivateResult& private_result) {
  if (n.op != Op::ROPE || ops.empty()) return false;
  const EtOp& prev = ops.back();
  if (prev.head->op != Op::RMS_NORM || prev.node->op != Op::MUL || !prev.fused || prev.norm || prev.store) return false;
  const Tensor* w = prev.fused;
  return n.src[0] == prev.node && private_result(prev.node) && n.ne[0] <= kRopeMaxNormRow && w->ne[0] == n.ne[0] &&
         w->ne[1] == 1 && w->ne[2] == 1 && w->ne[3] == 1 && !reads_own_output(*prev.head, n) && !overlaps(*w, n);
}

// A SET_ROWS storing this ROPE's result (ops.back(), through views of the same bytes read by
// nothing else) into a contiguous cache matrix, each cache row whole ROPE rows on whole lines: the
// ROPE stores each row it computes.
template <class PrivateResult>
bool fuses_store_into_rope(const std::vector<EtOp>& ops, const Tensor& n, const PrivateResult& private_result,
                           const AddressOf& address) {
  if (n.op != Op::SET_ROWS || ops.empty() || ops.back().head->op != Op::ROPE || ops.back().store) return false;
  const Tensor* rope = ops.back().node;
  const Tensor *values = n.src[1], *rows = n.src[2];
  for (const Tensor* t = values; t != rope; t = t->src[0])
    if (!is_view_op(t->op) || !private_result(t)) return false;
  const auto on_line = [&](const Tensor& t) { return address(t) % 64 == 0; };
  const int64_t width = n.ne[0];
  return private_result(rope) && rope->is_contiguous() && values->is_contiguous() && values->data == rope->data &&
         values->ne[2] == 1 && values->ne[3] == 1 && rows->ne[0] == values->ne[1] && rows->ne[1] == 1 &&
         rows->ne[2] == 1 && rows->ne[3] == 1 && (rows->type == Type::I32 || rows->type == Type::I64) &&
         n.is_contiguous() && n.ne[2] == 1 && n.ne[3] == 1 && width % rope->ne[0] == 0 &&
         row_size(n.type, rope->ne[0]) % 64 == 0 && on_line(n) && on_line(*rope);
}

// ops[i], an RMS_NORM+MUL by one weight row of a single row, read only by vector MUL_MATs of
// later launches (as their activations): each of those launches normalizes the row itself (a
// decode step's norm costs a phase, more than every shire reading the weight row). Nothing
// between may write the norm's input, which is now read later.
bool fold_norm_into_products(std::vector<EtOp>& ops, size_t i, const std::unordered_map<const Tensor*, int>& uses,
                             const std::unordered_set<const Tensor*>& read_outside) {
  const EtOp& norm = ops[i];
  if (norm.head->op != Op::RMS_NORM || norm.node->op != Op::MUL || !norm.fused) return false;
  const Tensor *x = norm.head->src[0], *w = norm.fused, *normed = norm.node;
  const bool one_row = x->ne[1] == 1 && x->ne[2] == 1 && x->ne[3] == 1;
  if (!one_row || w->ne[1] != 1 || w->ne[2] != 1 || w->ne[3] != 1 || read_outside.count(normed)) return false;
  const auto use = uses.find(normed);
  int readers = 0;
  std::vector<size_t> products;
  for (size_t j = i + 1; j < ops.size(); j++) {
    const EtOp& op = ops[j];
    if (op.head->op != Op::MUL_MAT || op.head->src[1] != normed || op.head->src[0] == normed || op.norm) continue;
    readers += op.node->op == Op::GLU ? 2 : 1;  // a fused GLU's up product reads it too
    products.push_back(j);
    if (reads_own_output(*op.head, *op.node) || overlaps(*x, *op.node)) return false;
  }
  if (use == uses.end() || readers != use->second || readers == 0) return false;
  for (size_t j = i + 1; j <= products.back(); j++)
    for (const Tensor* t : ops[j].writes())
      if (overlaps(*t, *x)) return false;
  for (size_t j : products) {
    ops[j].norm = norm.head;
    ops[j].norm_weight = w;
    ops[j].normed = normed;
  }
  return true;
}

}  // namespace

std::vector<const Tensor*> EtOp::reads() const {
  std::vector<const Tensor*> r;
  for (const Tensor* s : head->src)
    if (s && s != normed) r.push_back(s);  // a folded norm's result is never written
  if (norm) {
    r.push_back(norm->src[0]);
    r.push_back(norm_weight);
  }
  if (fused) r.push_back(fused);
  if (store) r.push_back(store->src[2]);
  return r;
}

std::vector<const Tensor*> EtOp::writes() const {
  if (store) return {node, store};
  return {node};
}

bool supports(const Tensor& n) {
  const Tensor* a = n.src[0];
  const Tensor* b = n.src[1];
  switch (n.op) {
    case Op::RESHAPE: case Op::VIEW: case Op::PERMUTE: case Op::TRANSPOSE:
      return true;  // no computation
    case Op::MUL_MAT: case Op::MUL_MAT_ID: {  // MUL_MAT_ID's ids: I32 of any strides
      const Type w = a->type;
      const bool weight_ok = device_float(w) || device_blocks(w);
      // F16 activations (llama.cpp's KQ products over an F16 cache) against float weights
      const bool x_ok = f32_rows(b) || (n.op == Op::MUL_MAT && b->type == Type::F16 && rows_contiguous(*b) && device_float(w));
      return weight_ok && rows_contiguous(*a) && x_ok && (n.op == Op::MUL_MAT || n.src[2]->type == Type::I32);
    }
    case Op::RMS_NORM: case Op::NORM: case Op::L2_NORM: case Op::SUM_ROWS: case Op::SCALE:
      return f32_rows(a);
    case Op::TOP_K:  // the kernel makes a pass over the row per result: an expert router's k
      return f32_rows(a) && n.ne[0] <= kDeviceTopKMax;
    case Op::ADD: case Op::SUB: case Op::MUL: case Op::DIV:
      return a->type == Type::F32 && b->type == Type::F32 && broadcasts_to(*b, *a);
    case Op::CLAMP:
      return a->type == Type::F32;
    case Op::GET_ROWS:
      return (device_float(a->type) || device_blocks(a->type)) && b->type == Type::I32;
    case Op::SET_ROWS:  // the destination is written line by line: it must be contiguous
      return device_float(a->type) && a->is_contiguous() && f32_rows(b);
    case Op::ROPE: {  // frequency factors (Llama 3.1, LongRoPE, Gemma 4): F32, n_dims / 2 of them
      const Tensor* ff = n.src[2];
      return f32_rows(a) && (!ff || (ff->type == Type::F32 && ff->ne[0] >= n.params[1] / 2));
    }
    case Op::SOFT_MAX:  // mask F32/F16, ALiBi, sinks
      return f32_rows(a) && (!b || device_float(b->type)) && (!n.src[2] || n.src[2]->type == Type::F32);
    case Op::UNARY:
      return a->type == Type::F32;  // every kind
    case Op::CONCAT:
      return a->type == Type::F32 && b->type == Type::F32;
    case Op::SSM_CONV:
      return a->type == Type::F32 && b->type == Type::F32;
    case Op::RWKV_WKV7:  // r, w, k, v, a, b and the state: contiguous F32; cells contiguous I32
      for (int i = 0; i < 7; i++)
        if (n.src[i]->type != Type::F32 || !n.src[i]->is_contiguous()) return false;
      return !n.src[7] || (n.src[7]->type == Type::I32 && n.src[7]->is_contiguous());
    case Op::GATED_DELTA_NET:  // q, k, v: F32 rows of any strides; g, beta and the state: contiguous F32
      for (int i = 0; i < 6; i++)
        if (!f32_rows(n.src[i]) || (i >= 3 && !n.src[i]->is_contiguous())) return false;
      return !n.src[6] || (n.src[6]->type == Type::I32 && n.src[6]->is_contiguous());
    case Op::GLU:
      return a->type == Type::F32 && b->type == Type::F32;  // every kind
    case Op::CPY:
      return device_float(a->type) && device_float(b->type) && b->is_contiguous();
    case Op::CONT:
      return device_float(a->type);
    case Op::FLASH_ATTN_EXT: {
      const Tensor* k = n.src[1];
      const Tensor* v = n.src[2];
      const Tensor* mask = n.src[3];
      return f32_rows(a) && device_float(k->type) && device_float(v->type) && a->ne[0] <= 512 && v->ne[0] <= 512 &&
             (!mask || ((mask->type == Type::F32 || mask->type == Type::F16) && rows_contiguous(*mask)));
    }
    case Op::PAGED_ATTN: {
      const Tensor* k = n.src[1];
      const Tensor* v = n.src[2];
      return f32_rows(a) && device_float(k->type) && device_float(v->type) && a->ne[0] <= 512 && v->ne[0] <= 512;
    }
    default:
      return false;  // no device kernel
  }
}

std::vector<EtOp> plan_ops(const Graph& part, std::span<Tensor* const> host_reads, const AddressOf& address) {
  std::unordered_map<const Tensor*, int> uses;
  for (const Tensor* n : part.nodes)
    for (const Tensor* s : n->src)
      if (s) uses[s]++;
  const std::unordered_set<const Tensor*> read_outside(host_reads.begin(), host_reads.end());
  auto private_result = [&](const Tensor* t) { return uses[t] == 1 && !read_outside.count(t); };

  std::vector<EtOp> ops;
  for (Tensor* n : part.nodes) {
    if (is_view_op(n->op)) continue;
    if (fuses_gate_and_up(ops, *n, private_result)) {
      Tensor* gate = n->src[0];
      Tensor* up = n->src[1];
      ops.pop_back();
      ops.back() = EtOp{n, gate, up->src[0]};
      continue;
    }
    if (fuses_norm_into_rope(ops, *n, private_result)) {
      const EtOp norm = ops.back();
      ops.back() = EtOp{n, n};
      ops.back().norm = norm.head;
      ops.back().norm_weight = norm.fused;
      ops.back().normed = norm.node;
      continue;
    }
    if (fuses_store_into_rope(ops, *n, private_result, address)) {
      ops.back().store = n;
      continue;
    }
    if (!ops.empty() && ops.back().plain()) {
      Tensor* prev = ops.back().node;
      const bool row_norm = prev->op == Op::RMS_NORM || prev->op == Op::NORM;
      const bool pair = (row_norm && n->op == Op::MUL) || (prev->op == Op::MUL_MAT && n->op == Op::ADD);
      Tensor* other = n->src[0] == prev ? n->src[1] : n->src[1] == prev ? n->src[0] : nullptr;
      // The other operand must broadcast as the fused kernels read it (rows repeated).
      if (pair && other && private_result(prev) && same_shape(*n, *prev) && other->type == Type::F32 &&
          rows_contiguous(*other) && broadcasts_to(*other, *n) &&
          (!row_norm || other->ne[0] == n->ne[0]) && !reads_own_output(*prev, *n) &&
          !overlaps(*other, *n)) {
        ops.back() = EtOp{n, prev, other};
        continue;
      }
    }
    ops.push_back(EtOp{n, n, nullptr});
  }
  for (size_t i = 0; i < ops.size();) {
    if (fold_norm_into_products(ops, i, uses, read_outside)) {
      ops.erase(ops.begin() + std::ptrdiff_t(i));
    } else {
      i++;
    }
  }
  return ops;
}

namespace {

class Params {
 public:
  explicit Params(const AddressOf& address) : address_(address) {}
  et_tensor tensor(const Tensor& t) const {
    et_tensor e{};
    e.addr = address_(t);
    e.type = int32_t(t.type);
    for (int d = 0; d < kMaxDims; d++) {
      e.ne[d] = t.ne[d];
      e.nb[d] = int64_t(t.nb[d]);
    }
    return e;
  }
  // hart's attention layout [d, heads, tokens] seen as ggml's [d, tokens, heads].
  et_tensor heads_outer(const Tensor& t) const {
    et_tensor e = tensor(t);
    std::swap(e.ne[1], e.ne[2]);
    std::swap(e.nb[1], e.nb[2]);
    return e;
  }

 private:
  const AddressOf& address_;
};

template <class P>
std::vector<uint64_t> words(const P& p) {
  std::vector<uint64_t> w((sizeof p + 7) / 8, 0);
  std::memcpy(w.data(), &p, sizeof p);
  return w;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// ggml-et's kernel names spell block types in capitals (mul_mat_Q8_0xf32), float types not.
std::string kernel_type(Type t) {
  std::string s(type_name(t));
  if (type_info(t).quantized)
    for (char& ch : s) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

const char* const kDeviceKernels[] = {
#define ET_KERNEL_ENTRY(name) #name,
#include "backend/et/device/kernels.def"
#undef ET_KERNEL_ENTRY
};

// The matrix-engine kernels, on the shapes llama.cpp's ET backend gives them (ggml_et_op_mul_mat
// and ggml_et_op_flash_attn_ext in ggml/src/ggml-et/ggml-et-ops.cpp of
// github.com/twinlunarstarz-dev/llama.cpp-optium):
//   Q4_0 x F32      N >= 53, M % 16 == 0, K % 32 == 0 (on fewer rows the vector kernel wins)
//   F16 x F16, F32 x F32   M % 16 == 0, K % 16 == 0, not a matrix-vector product (llama.cpp tests
//                   src1->ne[0] != 1, which is K; its comment means N: we take N > 1)
//   FLASH_ATTN_EXT  K and V F16, K's head size a multiple of 32
// llama.cpp has no Q8_0 engine kernel; Q8_0 takes Q4_0's condition. Added for hart's kernels: no
// MUL_MAT_ID, dst rows on 64-byte lines, V's head size a multiple of 16. 0: today's kernel.
uint32_t engine_mul_mat(const et_mul_mat_params& p, bool by_id) {
  const bool lines = p.dst.addr % 64 == 0 && p.dst.nb[1] % 64 == 0 && p.dst.nb[2] % 64 == 0 && p.dst.nb[3] % 64 == 0;
  const Type w = Type(p.src0.type);
  if (by_id || p.glu || !lines || !engine_shape(w, Type(p.src1.type), p.src0.ne[0], p.src0.ne[1], p.src1.ne[1]))
    return 0;
  switch (w) {
    case Type::Q4_0: return ET_KERNEL_ID_mul_mat_q4_0_matrix_engine;
    case Type::Q8_0: return ET_KERNEL_ID_mul_mat_q8_0_matrix_engine;
    case Type::F16: return ET_KERNEL_ID_mul_mat_f16_matrix_engine;
    default: return ET_KERNEL_ID_mul_mat_f32_matrix_engine;
  }
}

bool engine_flash_attn(const et_flash_attn_params& p) {
  return p.k.type == ET_TYPE_F16 && p.v.type == ET_TYPE_F16 && p.q.ne[0] % 32 == 0 && p.v.ne[0] % 16 == 0 &&
         p.dst.addr % 64 == 0;
}

// A folded RMS_NORM+MUL's fields of a parameter block (mul_mat's and rope's name them alike).
template <class Block>
void set_norm(Block& p, const EtOp& op, const Params& P) {
  if (!op.norm) return;
  p.norm_weight = P.tensor(*op.norm_weight);
  p.norm_eps = op.norm->param_f32(0);
  p.has_norm = 1;
}

std::string fmt_float(float f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", double(f));
  return buf;
}

std::string fmt_g(float f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", double(f));
  return buf;
}

// A recurrent op's sequences: its cells' count (the source after the state), else the state's columns.
int64_t n_seqs(const Tensor& op, int state_src) {
  const Tensor* cells = op.src[state_src + 1];
  return cells ? cells->ne[0] : op.src[state_src]->ne[1];
}

}  // namespace

bool uses_scratchpads(uint32_t kernel_id) {
  switch (kernel_id) {
    case ET_KERNEL_ID_mul_mat_f16_matrix_engine: case ET_KERNEL_ID_mul_mat_f32_matrix_engine:
    case ET_KERNEL_ID_mul_mat_q8_0_matrix_engine: case ET_KERNEL_ID_mul_mat_q4_0_matrix_engine:
    case ET_KERNEL_ID_flash_attn_ext_f16_me:
      return true;
    default:
      return false;
  }
}

bool share_activations(KernelCall& later, const KernelCall& earlier) {
  if (later.kernel_id != ET_KERNEL_ID_mul_mat || earlier.kernel_id != ET_KERNEL_ID_mul_mat) return false;
  et_mul_mat_params a{}, b{};
  std::memcpy(&a, later.params.data(), sizeof a);
  std::memcpy(&b, earlier.params.data(), sizeof b);
  // The same row, and the same norm weight row when the calls normalize it.
  if (std::memcmp(&a.src1, &b.src1, sizeof a.src1) != 0 || a.has_norm != b.has_norm ||
      (a.has_norm && std::memcmp(&a.norm_weight, &b.norm_weight, sizeof a.norm_weight) != 0))
    return false;
  a.x_shared = 1;
  std::memcpy(later.params.data(), &a, sizeof a);
  return true;
}

KernelCall make_call(const EtOp& op, const AddressOf& address, bool matrix_engine) {
  const Params P(address);
  const Tensor& n = *op.node;
  const Tensor& h = *op.head;
  KernelCall c;
  auto set = [&](uint32_t id, const char* kernel, std::string label, std::vector<uint64_t> params) {
    c.kernel_id = id;
    c.kernel = kernel;
    c.label = std::move(label);
    c.params = std::move(params);
  };
  switch (h.op) {
    case Op::MUL_MAT: case Op::MUL_MAT_ID: {
      et_mul_mat_params p{};
      p.src0 = P.tensor(*h.src[0]);
      p.src1 = P.tensor(op.norm ? *op.norm->src[0] : *h.src[1]);
      p.dst = P.tensor(n);
      set_norm(p, op, P);
      const std::string prefix = op.norm ? "rms_norm_mul_" : "";
      std::string suffix;
      if (n.op == Op::GLU) {  // fused: op.fused is the up projection's weights
        p.up = P.tensor(*op.fused);
        p.glu = 1 + device_activation(glu_activation(Glu(n.params[0])));
        suffix = "_" + lower(glu_name(Glu(n.params[0])));
      } else if (op.fused) {
        p.addend = P.tensor(*op.fused);
        p.has_add = 1;
        suffix = "_add";
      }
      const bool by_id = h.op == Op::MUL_MAT_ID;
      if (by_id) {
        p.ids = P.tensor(*h.src[2]);
        p.has_ids = 1;
      }
      // Labelled as ggml-et names its kernels: mul_mat_Q8_0xf32, mul_mat_Q4_0_matrix_engine.
      const uint32_t engine = matrix_engine ? engine_mul_mat(p, by_id) : 0;
      set(engine ? engine : uint32_t(ET_KERNEL_ID_mul_mat), engine ? kDeviceKernels[engine] : "mul_mat",
          prefix + (by_id ? "mul_mat_id_" : "mul_mat_") + kernel_type(h.src[0]->type) +
              (engine ? "_matrix_engine" : "xf32") + suffix,
          words(p));
      // As llama.cpp's ET backend logs MUL_MAT_ID: the experts there are and those each token takes.
      if (by_id)
        c.perf_keys = "|n_expert=" + std::to_string(h.src[0]->ne[2]) + "|n_expert_used=" + std::to_string(h.src[2]->ne[0]);
      break;
    }
    case Op::RMS_NORM: {
      et_rms_norm_params p{};
      p.src = P.tensor(*h.src[0]);
      p.dst = P.tensor(n);
      p.eps = h.param_f32(0);
      if (op.fused) {
        p.weight = P.tensor(*op.fused);
        p.has_weight = 1;
      }
      set(ET_KERNEL_ID_rms_norm, "rms_norm", op.fused ? "rms_norm_mul_f32" : "rms_norm_f32", words(p));
      c.perf_keys = "|eps=" + fmt_g(p.eps);
      break;
    }
    case Op::NORM: case Op::L2_NORM: {
      et_norm_params p{};
      p.src = P.tensor(*h.src[0]);
      p.dst = P.tensor(n);
      p.eps = h.param_f32(0);
      p.kind = h.op == Op::NORM ? ET_NORM_MEAN : ET_NORM_L2;
      if (op.fused) {  // only NORM is fused with its weight (plan_ops)
        p.weight = P.tensor(*op.fused);
        p.has_weight = 1;
      }
      const char* label = h.op == Op::L2_NORM ? "l2_norm_f32" : op.fused ? "norm_mul_f32" : "norm_f32";
      set(ET_KERNEL_ID_norm, "norm", label, words(p));
      c.perf_keys = "|eps=" + fmt_g(p.eps);
      break;
    }
    case Op::SUM_ROWS: {
      et_sum_rows_params p{};
      p.src = P.tensor(*h.src[0]);
      p.dst = P.tensor(n);
      set(ET_KERNEL_ID_sum_rows, "sum_rows", "sum_rows_f32", words(p));
      break;
    }
    case Op::RWKV_WKV7: {
      et_rwkv_wkv7_params p{};
      et_tensor* in[7] = {&p.r, &p.w, &p.k, &p.v, &p.a, &p.b, &p.state};
      for (int i = 0; i < 7; i++) *in[i] = P.tensor(*h.src[i]);
      if ((p.has_cells = h.src[7] != nullptr)) p.cells = P.tensor(*h.src[7]);
      p.dst = P.tensor(n);
      set(ET_KERNEL_ID_rwkv_wkv7, "rwkv_wkv7", "rwkv_wkv7_f32", words(p));
      c.perf_keys = "|head_size=" + std::to_string(h.src[0]->ne[0]) + "|n_seqs=" + std::to_string(n_seqs(h, 6));
      break;
    }
    case Op::GATED_DELTA_NET: {
      et_gated_delta_net_params p{};
      et_tensor* in[6] = {&p.q, &p.k, &p.v, &p.g, &p.beta, &p.state};
      for (int i = 0; i < 6; i++) *in[i] = P.tensor(*h.src[i]);
      if ((p.has_cells = h.src[6] != nullptr)) p.cells = P.tensor(*h.src[6]);
      p.dst = P.tensor(n);
      set(ET_KERNEL_ID_gated_delta_net, "gated_delta_net", "gated_delta_net_f32", words(p));
      c.perf_keys = "|head_size=" + std::to_string(h.src[2]->ne[0]) + "|head_count=" + std::to_string(h.src[2]->ne[1]) +
                    "|head_count_k=" + std::to_string(h.src[0]->ne[1]) + "|n_seqs=" + std::to_string(n_seqs(h, 5));
      break;
    }
    case Op::ADD: case Op::SUB: case Op::MUL: case Op::DIV: {
      et_binary_params p{};
      p.src0 = P.tensor(*h.src[0]);
      p.src1 = P.tensor(*h.src[1]);
      p.dst = P.tensor(n);
      p.op = h.op == Op::ADD ? ET_BINARY_ADD : h.op == Op::SUB ? ET_BINARY_SUB : h.op == Op::MUL ? ET_BINARY_MUL
                                                                                                 : ET_BINARY_DIV;
      set(ET_KERNEL_ID_binary, "binary", lower(op_name(h.op)) + "_f32", words(p));
      break;
    }
    case Op::UNARY: {
      et_unary_params p{};
      p.src = P.tensor(*h.src[0]);
      p.dst = P.tensor(n);
      const Unary u = Unary(h.params[0]);
      p.act = device_activation(u);
      set(ET_KERNEL_ID_unary, "unary", "unary_" + lower(unary_name(u)) + "_f32", words(p));
      break;
    }
    case Op::CLAMP: {
      et_unary_params p{};
      p.src = P.tensor(*h.src[0]);
      p.dst = P.tensor(n);
      p.act = ET_ACT_CLAMP;
      p.min = h.param_f32(0);
      p.max = h.param_f32(1);
      set(ET_KERNEL_ID_unary, "unary", "clamp_f32", words(p));
      c.perf_keys = "|min=" + fmt_g(p.min) + "|max=" + fmt_g(p.max);
      break;
    }
    case Op::TOP_K: {
      et_top_k_params p{};
      p.src = P.tensor(*h.src[0]);
      p.dst = P.tensor(n);
      set(ET_KERNEL_ID_top_k, "top_k", "top_k_f32", words(p));
      c.perf_keys = "|k=" + std::to_string(n.ne[0]);
      break;
    }
    case Op::CONCAT: {
      et_concat_params p{};
      p.src0 = P.tensor(*h.src[0]);
      p.src1 = P.tensor(*h.src[1]);
      p.dst = P.tensor(n);
      p.dim = h.params[0];
      set(ET_KERNEL_ID_concat, "concat", "concat_f32", words(p));
      c.perf_keys = "|dim=" + std::to_string(p.dim);
      break;
    }
    case Op::SSM_CONV: {
      et_ssm_conv_params p{};
      p.sx = P.tensor(*h.src[0]);
      p.kernel = P.tensor(*h.src[1]);
      p.dst = P.tensor(n);
      set(ET_KERNEL_ID_ssm_conv, "ssm_conv", "ssm_conv_f32", words(p));
      c.perf_keys = "|d_conv=" + std::to_string(h.src[1]->ne[0]);
      break;
    }
    case Op::SCALE: {
      et_scale_params p{};
      p.src = P.tensor(*h.src[0]);
      p.dst = P.tensor(n);
      p.scale = h.param_f32(0);
      p.bias = h.param_f32(1);
      set(ET_KERNEL_ID_scale, "scale", "scale_f32", words(p));
      c.perf_keys = "|scale=" + fmt_g(p.scale) + "|bias=" + fmt_g(p.bias);
      break;
    }
    case Op::GET_ROWS: {
      et_get_rows_params p{};
      p.src = P.tensor(*h.src[0]);
      p.rows = P.tensor(*h.src[1]);
      p.dst = P.tensor(n);
      set(ET_KERNEL_ID_get_rows, "get_rows", "get_rows_" + lower(type_name(h.src[0]->type)), words(p));
      break;
    }
    case Op::SET_ROWS: {
      et_set_rows_params p{};
      p.src = P.tensor(*h.src[1]);
      p.rows = P.tensor(*h.src[2]);
      p.dst = P.tensor(n);
      set(ET_KERNEL_ID_set_rows, "set_rows", "set_rows_f32_" + lower(type_name(n.type)), words(p));
      break;
    }
    case Op::ROPE: {
      et_rope_params p{};
      p.src = P.tensor(op.norm ? *op.norm->src[0] : *h.src[0]);
      p.pos = P.tensor(*h.src[1]);
      p.dst = P.tensor(n);
      p.mode = h.params[0];
      p.n_dims = h.params[1];
      p.freq_base = h.param_f32(2);
      p.freq_scale = h.param_f32(3);
      p.attn_factor = h.param_f32(4);
      p.ext_factor = h.param_f32(5);
      p.yarn_lo = h.param_f32(6);
      p.yarn_hi = h.param_f32(7);
      if (h.src[2]) {
        p.freq_factors = P.tensor(*h.src[2]);
        p.has_freq_factors = 1;
      }
      set_norm(p, op, P);
      if (op.store) {
        p.cache = P.tensor(*op.store);
        p.store_rows = P.tensor(*op.store->src[2]);
        p.has_store = 1;
      }
      set(ET_KERNEL_ID_rope, "rope", std::string(op.norm ? "rms_norm_mul_" : "") + "rope_f32" +
                                         (op.store ? "_set_rows_" + lower(type_name(op.store->type)) : ""),
          words(p));
      char keys[160];
      std::snprintf(keys, sizeof keys, "|mode=0x%x|n_dims=%d|freq_base=%s|freq_scale=%s|attn_factor=%s|ff=%d",
                    unsigned(p.mode), p.n_dims, fmt_float(p.freq_base).c_str(), fmt_float(p.freq_scale).c_str(),
                    fmt_float(p.attn_factor).c_str(), p.has_freq_factors);
      c.perf_keys = keys;
      break;
    }
    case Op::SOFT_MAX: {
      et_soft_max_params p{};
      p.src = P.tensor(*h.src[0]);
      p.dst = P.tensor(n);
      p.scale = h.param_f32(0);
      p.max_bias = h.param_f32(1);
      if (h.src[1]) {
        p.mask = P.tensor(*h.src[1]);
        p.has_mask = 1;
      }
      if (h.src[2]) {
        p.sinks = P.tensor(*h.src[2]);
        p.has_sinks = 1;
      }
      set(ET_KERNEL_ID_soft_max, "soft_max", "soft_max_f32", words(p));
      c.perf_keys = "|scale=" + fmt_g(p.scale) + "|max_bias=" + fmt_g(p.max_bias) +
                    "|has_mask=" + std::to_string(p.has_mask) + "|has_sinks=" + std::to_string(p.has_sinks);
      break;
    }
    case Op::GLU: {
      et_glu_params p{};
      p.gate = P.tensor(*h.src[0]);
      p.up = P.tensor(*h.src[1]);
      p.dst = P.tensor(n);
      const Glu g = Glu(h.params[0]);
      p.act = device_activation(glu_activation(g));
      set(ET_KERNEL_ID_glu, "glu", "glu_" + lower(glu_name(g)) + "_f32", words(p));
      break;
    }
    case Op::CPY: case Op::CONT: {
      et_cpy_params p{};
      p.src = P.tensor(*h.src[0]);
      p.dst = P.tensor(n);
      set(ET_KERNEL_ID_cpy, "cpy",
          "cpy_" + lower(type_name(h.src[0]->type)) + "_" + lower(type_name(n.type)), words(p));
      break;
    }
    case Op::FLASH_ATTN_EXT: {
      et_flash_attn_params p{};
      p.q = P.heads_outer(*h.src[0]);
      p.k = P.heads_outer(*h.src[1]);
      p.v = P.heads_outer(*h.src[2]);
      p.dst = P.tensor(n);
      p.scale = h.param_f32(0);
      if (h.src[3]) {
        p.mask = P.tensor(*h.src[3]);
        p.has_mask = 1;
      }
      if (matrix_engine && engine_flash_attn(p))
        set(ET_KERNEL_ID_flash_attn_ext_f16_me, "flash_attn_ext_f16_me", "flash_attn_ext_f16_me", words(p));
      else
        set(ET_KERNEL_ID_flash_attn_ext, "flash_attn_ext", "flash_attn_ext_" + lower(type_name(h.src[1]->type)),
            words(p));
      c.perf_keys = "|scale=" + fmt_g(p.scale) + "|has_mask=" + std::to_string(p.has_mask);
      break;
    }
    case Op::PAGED_ATTN: {
      et_paged_attn_params p{};
      p.q = P.tensor(*h.src[0]);
      p.k = P.tensor(*h.src[1]);
      p.v = P.tensor(*h.src[2]);
      p.index = P.tensor(*h.src[3]);
      p.dst = P.tensor(n);
      p.scale = h.param_f32(0);
      set(ET_KERNEL_ID_paged_attn, "paged_attn", "paged_attn_" + lower(type_name(h.src[1]->type)), words(p));
      c.perf_keys = "|scale=" + fmt_g(p.scale);
      break;
    }
    default:
      throw Error(std::string("ET backend: no device kernel for ") + op_name(h.op) + " ('" + h.name + "')");
  }
  return c;
}

}  // namespace hart::et
