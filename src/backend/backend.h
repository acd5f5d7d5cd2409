// A backend computes (sub-)graphs on one kind of device. The CPU backend supports every op and
// is the reference; other backends (the ET accelerator) answer supports_op honestly and the
// scheduler falls back to the CPU for the rest.
#pragma once

#include <span>
#include <string>

#include "graph/graph.h"

namespace hart {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const std::string& name() const = 0;
  virtual bool supports_op(const Tensor& node) const = 0;
  // Computes g.nodes in order. All data pointers are already set (plan_memory).
  virtual void compute(const Graph& g) = 0;
  // Computes g, one part of a larger graph (see src/sched). `host_reads` are nodes of g whose
  // results are read outside it (by other backends or the caller): a backend with its own memory
  // leaves them in host memory; it copies what g reads from host memory itself. Host-memory
  // backends just compute.
  virtual void compute_part(const Graph& g, std::span<Tensor* const> host_reads) {
    (void)host_reads;
    compute(g);
  }
  // How many nodes after its last reader a tensor's memory may go to another tensor (plan_memory's
  // reuse_after). A backend that runs nodes in graph order wants it at once (0: the memory is
  // still in cache); one that runs independent nodes together wants it later, or reused memory
  // ties a node to an unrelated one before it.
  virtual size_t reuse_after() const { return 0; }
};

}  // namespace hart
