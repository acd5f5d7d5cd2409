// The host half of the device kernels: which graph nodes the device can compute (supports), how
// a part's nodes become kernel launches (plan_ops, with the (RMS_)NORM+MUL and MUL_MAT+ADD
// fusions), and each launch's parameter block in the layout of device/et_params.h (make_call).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "backend/et/device.h"
#include "graph/graph.h"

namespace hart::et {

// The real constraints of the device kernels: types, strides, sizes.
bool supports(const Tensor& node);

// One launch: `node` is the result, `head` the op it computes ((RMS_)NORM or MUL_MAT when a MUL
// or an ADD was fused into it, the gate's MUL_MAT when node is a GLU fused with its gate and up
// products, else node itself), `fused` the fused op's other operand (the up projection's weights
// for a GLU).
// A ROPE, or a MUL_MAT of one activation row (decode), may have an RMS_NORM+MUL folded in front:
// `norm` the RMS_NORM, `norm_weight` the MUL's weight row, `normed` their result, which the launch
// computes itself instead of reading (Qwen3's Q/K norms; a layer's attention and FFN norms). A
// ROPE may also store its result into a cache: `store`, the SET_ROWS it replaces.
struct EtOp {
  Tensor* node = nullptr;
  Tensor* head = nullptr;
  Tensor* fused = nullptr;
  const Tensor* norm = nullptr;
  const Tensor* norm_weight = nullptr;
  const Tensor* normed = nullptr;
  Tensor* store = nullptr;
  bool plain() const { return head == node && !fused && !norm && !store; }
  // The tensors the launch reads and those it writes.
  std::vector<const Tensor*> reads() const;
  std::vector<const Tensor*> writes() const;
};

using AddressOf = std::function<DeviceAddr(const Tensor&)>;

// The launches of a part, in order. A node is fused into its predecessor only when it is the
// next computing node and the predecessor's result is read by nothing else (in the part, or
// outside it: host_reads); a GLU into its gate and up products when they are the two launches
// before it; an attention or FFN norm of one row into the products that read it (all of them).
// `address` (the part's device layout) tells whether a store lies on whole lines.
std::vector<EtOp> plan_ops(const Graph& part, std::span<Tensor* const> host_reads, const AddressOf& address);

struct KernelCall {
  uint32_t kernel_id = 0;      // index in device/kernels.def
  std::string kernel;          // device kernel name ("mul_mat")
  std::string label;           // what ET_PERF reports ("mul_mat_Q8_0xf32_add")
  std::vector<uint64_t> params;  // the parameter block, 8-byte words
  std::string perf_keys;       // op-specific ET_PERF keys ("|mode=0x0|n_dims=128|...")
};

// Kernels that use the minions' L1 scratchpads and the shires' L2 scratch (the matrix engine):
// two of them must not run at once.
bool uses_scratchpads(uint32_t kernel_id);

// When `later` and `earlier` are vector MUL_MAT calls over the same activations and run in one
// uberkernel phase, the shires' L2 holds the activations when `later` reads them: marks `later`
// (x_shared: not counted as DRAM traffic again) and returns true.
bool share_activations(KernelCall& later, const KernelCall& earlier);

// matrix_engine: the engine kernels take the shapes they are chosen for (et_ops.cpp), else today's.
KernelCall make_call(const EtOp& op, const AddressOf& address, bool matrix_engine);

}  // namespace hart::et
