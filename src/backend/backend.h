// A backend computes (sub-)graphs on one kind of device. The CPU backend supports every op and
// is the reference; other backends (the ET accelerator) answer supports_op honestly and the
// scheduler falls back to the CPU for the rest.
#pragma once

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
};

}  // namespace hart
