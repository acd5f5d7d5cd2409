// The bound on each allocation of the stb_image decoder (stb_image_impl.c), per thread: set by
// decode_image around a decode from the image's pixel limit, unbounded otherwise.
#pragma once
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
void hart_stbi_set_max_alloc(size_t bytes);
#ifdef __cplusplus
}
#endif
