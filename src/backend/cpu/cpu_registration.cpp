// "cpu" in the backend registry: the reference backend, which runs every op.
#include "backend/cpu/cpu_backend.h"
#include "backend/registry.h"

namespace hart::cpu {
namespace {

const RegisterBackend kCpu({"cpu", {}, "host CPU (reference backend, supports every op)", true,
                            [](const BackendOptions& o) -> std::unique_ptr<Backend> {
                              return std::make_unique<CpuBackend>(o.n_threads, o.cpu_mask);
                            }});

}  // namespace
}  // namespace hart::cpu
