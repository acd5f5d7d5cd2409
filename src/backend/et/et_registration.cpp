// "et" in the backend registry: the accelerator, on the emulator, configured from the environment.
#include "backend/et/et_backend.h"
#include "backend/registry.h"

namespace hart::et {
namespace {

const RegisterBackend kEt({"et", {"et0"},
                           "ET-SoC-1 style accelerator (et0: functional emulator, 32 shires x 32 minions x 2 harts)",
                           false, [](const BackendOptions& o) -> std::unique_ptr<Backend> {
                             EtOptions options = EtOptions::from_env();
                             options.perf_log = o.perf_log;
                             return open_et_backend(options);
                           }});

}  // namespace

// As cpu_registration.cpp's anchor: what libhart.a's users link to take this registration in.
extern const int kEtRegistrationAnchor = 0;

}  // namespace hart::et
