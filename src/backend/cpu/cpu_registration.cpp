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

// Referred to by the C API (src/lib/api_model.cpp), so that a program linking libhart.a, where
// this file is an archive member like any other, takes the registration in.
extern const int kCpuRegistrationAnchor = 0;

}  // namespace hart::cpu
