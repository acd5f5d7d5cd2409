#include "testing/op_cases.h"

#include <algorithm>
#include <cmath>

#include "testing/dense.h"

namespace hart::testing {

namespace {

std::string tn(Type t) { return std::string(type_name(t)); }

std::string shape(std::initializer_list<int64_t> ne) {
  std::string s = "[";
  for (int64_t v : ne) {
    if (s.size() > 1) s += ',';
    s += std::to_string(v);
  }
  return s + "]";
}

}  // namespace

double nmse(const Tensor& got, const Tensor& want) {
  const std::vector<double> a = read(got).v, b = read(want).v;
  double err = 0, ref = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); i++) {
    if (std::isnan(a[i]) != std::isnan(b[i])) return INFINITY;
    if (std::isinf(b[i]) && a[i] == b[i]) continue;
    err += (a[i] - b[i]) * (a[i] - b[i]);
    ref += b[i] * b[i];
  }
  return a.size() == b.size() ? err / std::max(ref, 1e-30) : INFINITY;
}

std::vector<OpCase> op_cases() {
  std::vector<OpCase> cases;
  // The weight types of MUL_MAT, MUL_MAT_ID and GET_ROWS (the types of the model files hart reads).
  const Type weight_types[] = {Type::F32,     Type::F16,    Type::BF16,    Type::Q8_0,    Type::Q4_0,
                               Type::Q4_1,    Type::Q5_0,   Type::Q5_1,    Type::Q4_K,    Type::Q5_K,
                               Type::Q6_K,    Type::IQ4_NL, Type::IQ2_XXS, Type::IQ2_XS,  Type::IQ2_S,
                               Type::IQ3_XXS, Type::IQ3_S,  Type::IQ1_S,   Type::IQ1_M};
  for (Type w : weight_types) {
    const double tol = type_info(w).quantized ? 5e-4 : 5e-6;
    for (int64_t m : {1, 7}) {
      cases.push_back({op_name(Op::MUL_MAT), "type_a=" + tn(w) + ",type_b=f32,m=" + std::to_string(m) + ",n=32,k=256", tol,
                       [=](RandomLeaves& l) {
                         return mul_mat(l.ctx, l.random(w, {256, 32}), l.random(Type::F32, {256, m}));
                       }});
    }
  }
  cases.push_back({op_name(Op::MUL_MAT), "type_a=q8_0,type_b=f32,m=3,n=16,k=64,bs=[2,1],nr=[2,1]", 5e-4, [](RandomLeaves& l) {
                     return mul_mat(l.ctx, l.random(Type::Q8_0, {64, 16, 2}), l.random(Type::F32, {64, 3, 4}));
                   }});
  // MUL_MAT_ID as ggml's test names it: n_mats experts, n_used per token, b = 1 for per-slot
  // activations (the down projection), n tokens; ids a strided view as top_k's callers make them.
  for (Type w : weight_types)
    for (int64_t b : {0, 1}) {
      cases.push_back({op_name(Op::MUL_MAT_ID),
                       "type_a=" + tn(w) + ",type_b=f32,n_mats=4,n_used=2,b=" + std::to_string(b) + ",m=32,n=3,k=256",
                       type_info(w).quantized ? 5e-4 : 5e-6, [=](RandomLeaves& l) {
                         Tensor* ids = l.random(Type::I32, {4, 3}, 0, 4);
                         return mul_mat_id(l.ctx, l.random(w, {256, 32, 4}), l.random(Type::F32, {256, b ? 2 : 1, 3}),
                                           view(l.ctx, ids, {2, 3}, {ids->nb[1]}, 0));
                       }});
    }
  for (Type t : weight_types) {
    cases.push_back({op_name(Op::GET_ROWS), "type=" + tn(t) + ",n=256,rows=10,m=5", 1e-7, [=](RandomLeaves& l) {
                       return get_rows(l.ctx, l.random(t, {256, 10}), l.random(Type::I32, {5}, 0, 10));
                     }});
  }
  // The MoE router's chosen probabilities: one row per expert of each token's plane.
  cases.push_back({op_name(Op::GET_ROWS), "type=f32,ne=[1,8,5],m=2", 1e-7, [](RandomLeaves& l) {
                     return get_rows(l.ctx, l.random(Type::F32, {1, 8, 5}), l.random(Type::I32, {2, 5}, 0, 8));
                   }});
  for (Type d : {Type::F32, Type::F16})
    for (Type ids : {Type::I64, Type::I32}) {
      cases.push_back({op_name(Op::SET_ROWS), "type=" + tn(d) + ",type_idx=" + tn(ids) + ",ne=[64,8],m=3", 1e-7, [=](RandomLeaves& l) {
                         Tensor* src = l.random(Type::F32, {64, 3});
                         Tensor* rows = l.random(ids, {3}, 0, 1);  // distinct rows 1, 3, 5: no write races
                         for (int64_t i = 0; i < 3; i++) {
                           if (ids == Type::I64) static_cast<int64_t*>(rows->data)[i] = 2 * i + 1;
                           else static_cast<int32_t*>(rows->data)[i] = int32_t(2 * i + 1);
                         }
                         return set_rows(l.ctx, l.random(d, {64, 8}), src, rows);
                       }});
    }
  for (auto ne : {std::initializer_list<int64_t>{67, 5}, std::initializer_list<int64_t>{256, 4, 3}}) {
    std::vector<int64_t> v(ne);
    cases.push_back({op_name(Op::RMS_NORM), "ne=" + shape(ne) + ",eps=1e-06", 1e-7, [v](RandomLeaves& l) {
                       return rms_norm(l.ctx, l.random(Type::F32, {v[0], v[1], v.size() > 2 ? v[2] : 1}), 1e-6f);
                     }});
  }
  // NORM (LayerNorm without weights) and L2_NORM (RWKV-7's kk) per row, as ggml's test shapes.
  using NormFn = Tensor* (*)(Context&, Tensor*, float);
  for (auto [op, fn] : {std::pair<Op, NormFn>{Op::NORM, norm}, std::pair<Op, NormFn>{Op::L2_NORM, l2_norm}}) {
    const float eps = op == Op::NORM ? 1e-5f : 1e-12f;
    cases.push_back({op_name(op), std::string("type=f32,ne=[67,5,4,1],eps=") + (op == Op::NORM ? "1e-05" : "1e-12"), 1e-7,
                     [fn, eps](RandomLeaves& l) { return fn(l.ctx, l.random(Type::F32, {67, 5, 4}), eps); }});
  }
  cases.push_back({op_name(Op::SUM_ROWS), "type=f32,ne=[33,5,4,1]", 1e-7,
                   [](RandomLeaves& l) { return sum_rows(l.ctx, l.random(Type::F32, {33, 5, 4})); }});
  for (int k : {3, 8}) {
    cases.push_back({op_name(Op::TOP_K), "type=f32,ne=[60,10,3,1],k=" + std::to_string(k), 0.0,
                     [k](RandomLeaves& l) { return top_k(l.ctx, l.random(Type::F32, {60, 10, 3}), k); }});
  }
  struct Bin {
    Op op;
    Tensor* (*fn)(Context&, Tensor*, Tensor*);
  };
  for (Bin b : {Bin{Op::ADD, add}, Bin{Op::SUB, sub}, Bin{Op::MUL, mul}, Bin{Op::DIV, div}}) {
    cases.push_back({op_name(b.op), "type=f32,ne=[32,10,1,1],nr=[1,1,1,1]", 1e-7, [b](RandomLeaves& l) {
                       return b.fn(l.ctx, l.random(Type::F32, {32, 10}), l.random(Type::F32, {32, 10}));
                     }});
    cases.push_back({op_name(b.op), "type=f32,ne=[32,10,1,1],nr=[1,10,1,1]", 1e-7, [b](RandomLeaves& l) {
                       return b.fn(l.ctx, l.random(Type::F32, {32, 10}), l.random(Type::F32, {32}));
                     }});
  }
  cases.push_back({op_name(Op::SCALE), "type=f32,ne=[40,7],scale=0.25", 1e-7,
                   [](RandomLeaves& l) { return scale(l.ctx, l.random(Type::F32, {40, 7}), 0.25f); }});
  cases.push_back({op_name(Op::CLAMP), "type=f32,ne=[10,5,4,3],min=-0.5,max=0.5", 0.0, [](RandomLeaves& l) {
                     return clamp(l.ctx, l.random(Type::F32, {10, 5, 4, 3}), -0.5f, 0.5f);
                   }});
  for (int32_t i = 0; i < int32_t(Unary::COUNT); i++) {
    const Unary u = Unary(i);
    const char* name = unary_name(u);
    cases.push_back({op_name(Op::UNARY), std::string("op=") + name + ",type=f32,ne=[64,3]", 1e-6, [u](RandomLeaves& l) {
                       return unary(l.ctx, l.random(Type::F32, {64, 3}, -4.0f, 4.0f), u);
                     }});
  }
  for (int32_t i = 0; i < int32_t(Glu::COUNT); i++) {
    const Glu g = Glu(i);
    cases.push_back({op_name(Op::GLU), std::string("op=") + glu_name(g) + ",type=f32,ne=[96,4]",
                     1e-6, [g](RandomLeaves& l) {
                       return glu(l.ctx, l.random(Type::F32, {96, 4}), l.random(Type::F32, {96, 4}), g);
                     }});
  }
  for (bool mask : {false, true}) {
    cases.push_back({op_name(Op::SOFT_MAX), std::string("type=f32,ne=[33,6],mask=") + (mask ? "1" : "0") + ",scale=0.5", 1e-6,
                     [mask](RandomLeaves& l) {
                       Tensor* m = mask ? l.random(Type::F32, {33, 6}, -2.0f, 0.0f) : nullptr;
                       return soft_max(l.ctx, l.random(Type::F32, {33, 6}), m, 0.5f, 0.0f);
                     }});
  }
  for (RopeMode mode : {RopeMode::NORMAL, RopeMode::NEOX})
    for (bool ff : {false, true}) {
      cases.push_back({op_name(Op::ROPE),
                       std::string("type=f32,ne=[64,4,3],mode=") + std::to_string(int(mode)) + ",n_dims=64,ff=" +
                           (ff ? "1" : "0"),
                       1e-6, [mode, ff](RandomLeaves& l) {
                         Tensor* f = ff ? l.random(Type::F32, {32}, 1.0f, 4.0f) : nullptr;
                         return rope(l.ctx, l.random(Type::F32, {64, 4, 3}), l.random(Type::I32, {3}, 0, 512), f, mode,
                                     64, 10000.0f, 1.0f);
                       }});
    }
  // ROPE's attn_factor (LongRoPE's mscale) and freq_scale, with factors, and on part of the dims.
  for (RopeMode mode : {RopeMode::NORMAL, RopeMode::NEOX}) {
    cases.push_back({op_name(Op::ROPE),
                     "type=f32,ne=[64,4,3],mode=" + std::to_string(int(mode)) +
                         ",n_dims=32,ff=1,freq_scale=0.25,attn_factor=1.19",
                     1e-6, [mode](RandomLeaves& l) {
                       return rope(l.ctx, l.random(Type::F32, {64, 4, 3}), l.random(Type::I32, {3}, 0, 512),
                                   l.random(Type::F32, {16}, 1.0f, 4.0f), mode, 32, 10000.0f, 0.25f, 1.19f);
                     }});
  }
  // CONCAT as ggml's test: a [11,5,3,2] and b with 4 along dim; v=1 makes b a permuted view.
  for (int dim = 0; dim < kMaxDims; dim++)
    for (bool v : {false, true}) {
      cases.push_back({op_name(Op::CONCAT),
                       "type=f32,ne_a=[11,5,3,2],ne_b_d=4,dim=" + std::to_string(dim) + ",v=" + (v ? "1" : "0"), 0.0,
                       [dim, v](RandomLeaves& l) {
                         int64_t ne_b[kMaxDims] = {11, 5, 3, 2};
                         ne_b[dim] = 4;
                         Tensor* b = v ? permute(l.ctx, l.random(Type::F32, {ne_b[0], ne_b[2], ne_b[1], ne_b[3]}),
                                                 0, 2, 1, 3)
                                       : l.random(Type::F32, {ne_b[0], ne_b[1], ne_b[2], ne_b[3]});
                         return concat(l.ctx, l.random(Type::F32, {11, 5, 3, 2}), b, dim);
                       }});
    }
  // SSM_CONV (LFM2's short conv, Mamba): sx [K-1+n_t, C, n_s], kernel [K, C]; decode and prefill.
  for (int64_t k : {2, 4})
    for (int64_t n_t : {1, 5}) {
      const int64_t len = k - 1 + n_t;
      cases.push_back({op_name(Op::SSM_CONV), "type=f32,ne_a=" + shape({len, 67, 2, 1}) + ",ne_b=" + shape({k, 67, 1, 1}),
                       1e-7, [k, len](RandomLeaves& l) {
                         return ssm_conv(l.ctx, l.random(Type::F32, {len, 67, 2}), l.random(Type::F32, {k, 67}));
                       }});
    }
  // RWKV_WKV7 as ggml's test names it: H heads of S, n_t tokens of each of n_s sequences; decays
  // w in (0.5, 1) as RWKV-7 makes them.
  for (auto [n_t, n_s] : {std::pair{int64_t(1), int64_t(1)}, std::pair{int64_t(4), int64_t(2)}}) {
    const int64_t S = 64, H = 3, T = n_t * n_s;
    cases.push_back({op_name(Op::RWKV_WKV7),
                     "type=f32,head_count=" + std::to_string(H) + ",head_size=" + std::to_string(S) +
                         ",n_seq_tokens=" + std::to_string(n_t) + ",n_seqs=" + std::to_string(n_s),
                     1e-7, [=](RandomLeaves& l) {
                       auto head = [&](float lo, float hi) { return l.random(Type::F32, {S, H, T}, lo, hi); };
                       Tensor* r = head(-1.0f, 1.0f);
                       Tensor* w = head(0.5f, 1.0f);
                       Tensor* k = head(-1.0f, 1.0f);
                       Tensor* v = head(-1.0f, 1.0f);
                       Tensor* a = head(-0.2f, 0.2f);
                       Tensor* b = head(-0.2f, 0.2f);
                       return rwkv_wkv7(l.ctx, r, w, k, v, a, b, l.random(Type::F32, {S * S * H, n_s}));
                     }});
  }
  // GATED_DELTA_NET (Qwen 3.5): H value heads of S over H_k key heads, n_t tokens of each of n_s
  // sequences; q, k, v strided views of one row per token, as the model cuts them from its
  // convolution; log-decays g <= 0.
  for (auto [n_t, n_s] : {std::pair{int64_t(1), int64_t(1)}, std::pair{int64_t(4), int64_t(2)}}) {
    const int64_t S = 64, H = 4, H_k = 2, T = n_t * n_s;
    cases.push_back({op_name(Op::GATED_DELTA_NET),
                     "type=f32,head_count=" + std::to_string(H) + ",head_count_k=" + std::to_string(H_k) +
                         ",head_size=" + std::to_string(S) + ",n_seq_tokens=" + std::to_string(n_t) +
                         ",n_seqs=" + std::to_string(n_s),
                     1e-7, [=](RandomLeaves& l) {
                       Tensor* mixed = l.random(Type::F32, {2 * S * H_k + S * H, T}, -0.3f, 0.3f);
                       auto heads = [&](int64_t at, int64_t count) {
                         return view(l.ctx, mixed, {S, count, T}, {size_t(S) * 4, mixed->nb[1]}, size_t(at) * 4);
                       };
                       return gated_delta_net(l.ctx, heads(0, H_k), heads(S * H_k, H_k), heads(2 * S * H_k, H),
                                              l.random(Type::F32, {H, T}, -2.0f, 0.0f),
                                              l.random(Type::F32, {H, T}, 0.0f, 1.0f),
                                              l.random(Type::F32, {S * S * H, n_s}));
                     }});
  }
  for (auto [a, b] : {std::pair{Type::F32, Type::F16}, std::pair{Type::F16, Type::F32}, std::pair{Type::F32, Type::F32}}) {
    cases.push_back({op_name(Op::CPY), "type_src=" + tn(a) + ",type_dst=" + tn(b) + ",ne=[32,6,2]", 1e-6, [=](RandomLeaves& l) {
                       return cpy(l.ctx, l.random(a, {32, 6, 2}), l.random(b, {32, 6, 2}));
                     }});
  }
  for (Type t : {Type::F32, Type::F16}) {
    cases.push_back({op_name(Op::CONT), "type=" + tn(t) + ",ne=[20,12],transposed=1", 1e-7,
                     [t](RandomLeaves& l) { return cont(l.ctx, transpose(l.ctx, l.random(t, {12, 20}))); }});
  }
  for (Type kv : {Type::F32, Type::F16, Type::BF16})
    for (bool mask : {false, true}) {
      cases.push_back({op_name(Op::FLASH_ATTN_EXT),
                       "hs=64,nh=4,nh_kv=2,kv=19,nb=3,mask=" + std::string(mask ? "1" : "0") + ",type_KV=" + tn(kv),
                       5e-6, [kv, mask](RandomLeaves& l) {
                         Tensor* m = mask ? l.random(Type::F32, {19, 3}, -3.0f, 0.0f) : nullptr;
                         return flash_attn_ext(l.ctx, l.random(Type::F32, {64, 4, 3}), l.random(kv, {64, 2, 19}),
                                               l.random(kv, {64, 2, 19}), m, 0.125f);
                       }});
    }
  for (Type kv : {Type::F32, Type::F16}) {
    cases.push_back({op_name(Op::PAGED_ATTN), "hs=64,nh=4,nh_kv=2,slots=10,nb=3,lists=[5,6,7],type_KV=" + tn(kv), 5e-6,
                     [kv](RandomLeaves& l) {
                       // three tokens' (offset, count) pairs, then their slot lists (slots repeat)
                       Tensor* index = l.random(Type::I32, {24}, 0, 10);
                       auto* ix = static_cast<int32_t*>(index->data);
                       const int32_t pairs[6] = {6, 5, 11, 6, 17, 7};
                       std::copy(pairs, pairs + 6, ix);
                       return paged_attn(l.ctx, l.random(Type::F32, {64, 4, 3}), l.random(kv, {64, 2, 10}),
                                         l.random(kv, {64, 2, 10}), index, 0.125f);
                     }});
  }
  return cases;
}

}  // namespace hart::testing
