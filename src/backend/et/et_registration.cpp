// "et", "et-sysemu" and (built with -DHART_ET_PLATFORM) "et-rt" in the backend registry: the
// accelerator on the built-in emulator, on the vendor's simulator, or through the vendor's
// runtime (the card, or the simulator behind it), configured from the environment.
#include "backend/et/et_backend.h"
#include "backend/et/sysemu/sysemu_device.h"
#include "backend/registry.h"
#ifdef HART_HAVE_ET_RT
#include "backend/et/rt/rt_device.h"
#endif

namespace hart::et {
namespace {

const RegisterBackend kEt({"et", {"et0"},
                           "ET-SoC-1 style accelerator (et0: functional emulator, 32 shires x 32 minions x 2 harts)",
                           false, [](const BackendOptions& o) -> std::unique_ptr<Backend> {
                             EtOptions options = EtOptions::from_env();
                             options.perf_log = o.perf_log;
                             return open_et_backend(options);
                           }});

const RegisterBackend kEtSysemu({"et-sysemu", {"sysemu"},
                                 "ET-SoC-1 on the vendor's simulator (sw-sysemu's sys_emu, a process per launch; "
                                 "HART_ET_SYSEMU)",
                                 false, [](const BackendOptions& o) -> std::unique_ptr<Backend> {
                                   EtOptions options = EtOptions::from_env();
                                   options.perf_log = o.perf_log;
                                   emu::EmuConfig config;
                                   config.name = "sysemu0";
                                   return std::make_unique<EtBackend>(
                                       shared_device(config.name, [&] { return sysemu::open_sysemu(config); }), options);
                                 }});

#ifdef HART_HAVE_ET_RT
const RegisterBackend kEtRt({"et-rt", {"rt0"},
                             "ET-SoC-1 through the vendor's runtime (esperanto-tools-libs): the card, or the "
                             "simulator behind it with HART_ET_RT_LAYER=sysemu",
                             false, [](const BackendOptions& o) -> std::unique_ptr<Backend> {
                               EtOptions options = EtOptions::from_env();
                               options.perf_log = o.perf_log;
                               return std::make_unique<EtBackend>(
                                   shared_device("rt0", [] { return etrt::open_rt(etrt::RtConfig::from_env()); }), options);
                             }});
#endif

}  // namespace

// As cpu_registration.cpp's anchor: what libhart.a's users link to take this registration in.
extern const int kEtRegistrationAnchor = 0;

}  // namespace hart::et
