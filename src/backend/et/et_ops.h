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
// or an ADD was fused into it, else node itself), `fused` the fused op's other operand.
struct EtOp {
  Tensor* node = nullptr;
  Tensor* head = nullptr;
  Tensor* fused = nullptr;
};

// The launches of a part, in order. A node is fused into its predecessor only when it is the
// next computing node and the predecessor's result is read by nothing else (in the part, or
// outside it: host_reads).
std::vector<EtOp> plan_ops(const Graph& part, std::span<Tensor* const> host_reads);

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

using AddressOf = std::function<DeviceAddr(const Tensor&)>;
// matrix_engine: the engine kernels take the shapes they are chosen for (et_ops.cpp), else today's.
KernelCall make_call(const EtOp& op, const AddressOf& address, bool matrix_engine);

}  // namespace hart::et
