/* entry_point of one kernel's ELF in the ET runtime's format (et_rt.h): compiled once per kernel
 * of kernels.def with -DET_RT_KERNEL=<name>. */
#include "../device/et_device.h"
#include "et_rt.h"

#define ET_RT_FN_(name) et_kernel_##name
#define ET_RT_FN(name) ET_RT_FN_(name)

void ET_RT_FN(ET_RT_KERNEL)(const void* params, const et_env* env);
int et_rt_run(const et_rt_args* args, et_kernel_fn kernel);
int entry_point(const et_rt_args* args);

int entry_point(const et_rt_args* args) { return et_rt_run(args, ET_RT_FN(ET_RT_KERNEL)); }
