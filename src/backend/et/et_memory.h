// Where the tensors of a graph part live in device memory.
//  - Weights (kFlagWeight leafs) are uploaded once and kept, keyed by tensor identity (and its
//    host bytes), counted against a budget; least recently used ones are dropped when it is full.
//  - State leafs (kFlagState: the KV cache) are uploaded when first seen and then stay on the
//    device, which holds the authoritative copy (graphs write them there with SET_ROWS).
//  - Everything else a part touches (its results, inputs, results of other parts) is transient:
//    laid out in one scratch buffer per part. Tensors close together in host memory keep their
//    relative offsets, so the host planner's buffer reuse carries over and the scratch stays as
//    small as the host arena.
#pragma once

#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

#include "backend/et/device.h"
#include "graph/tensor.h"

namespace hart::et {

class EtMemory {
 public:
  EtMemory(Device& dev, uint64_t budget_bytes);
  ~EtMemory();
  EtMemory(const EtMemory&) = delete;
  EtMemory& operator=(const EtMemory&) = delete;

  enum class Kind { Weight, State, Transient };
  static Kind kind_of(const Tensor& owner);

  // Starts a part whose transient owners are given (each once); resident owners are looked up
  // (and uploaded) lazily by address().
  void begin_part(const std::vector<const Tensor*>& transients);
  // Device address of t's first byte (t may be a view; its owner is classified by kind_of).
  DeviceAddr address(const Tensor& t);
  // True once a state owner has been uploaded.
  bool is_resident(const Tensor& owner) const { return resident_.count(&owner) != 0; }

  uint64_t resident_bytes() const { return resident_bytes_; }
  uint64_t weight_uploads() const { return weight_uploads_; }

 private:
  struct Resident {
    DeviceAddr addr = 0;
    const void* host = nullptr;
    uint64_t bytes = 0;
    uint64_t last_part = 0;
    std::list<const Tensor*>::iterator lru;
  };
  DeviceAddr resident(const Tensor& owner);
  void make_room(uint64_t bytes);

  Device& dev_;
  uint64_t budget_;
  uint64_t part_ = 0;
  uint64_t resident_bytes_ = 0, weight_uploads_ = 0;
  std::unordered_map<const Tensor*, Resident> resident_;
  std::list<const Tensor*> lru_;  // front: least recently used
  std::unordered_map<const Tensor*, DeviceAddr> transient_;
  DeviceAddr scratch_ = 0;
  uint64_t scratch_bytes_ = 0;
};

}  // namespace hart::et
