// "et" and "et-sysemu" in the backend registry: the accelerator on the built-in emulator, or on
// the vendor's simulator, configured from the environment.
#include <cstdlib>

#include "backend/et/et_backend.h"
#include "backend/et/sysemu/sysemu_device.h"
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

// The matrix engine's kernels are not chosen there: the minion program does not issue the tensor
// instructions yet (minion/minion_env.c).
const RegisterBackend kEtSysemu({"et-sysemu", {"sysemu"},
                                 "ET-SoC-1 on the vendor's simulator (sw-sysemu's sys_emu, a process per launch; "
                                 "HART_ET_SYSEMU)",
                                 false, [](const BackendOptions& o) -> std::unique_ptr<Backend> {
                                   EtOptions options = EtOptions::from_env();
                                   options.perf_log = o.perf_log;
                                   options.matrix_engine = false;
                                   // One kernel per launch unless asked: between an uberkernel's
                                   // phases sys_emu's memory checker still reports a stale read.
                                   if (!std::getenv("HART_ET_UBERKERNEL") && !std::getenv("GGML_ET_UBERKERNEL"))
                                     options.uberkernel = false;
                                   emu::EmuConfig config;
                                   config.name = "sysemu0";
                                   return std::make_unique<EtBackend>(sysemu::open_sysemu(config), options);
                                 }});

}  // namespace

// As cpu_registration.cpp's anchor: what libhart.a's users link to take this registration in.
extern const int kEtRegistrationAnchor = 0;

}  // namespace hart::et
