// The decoder of Debian's libstb-dev (stb_image.h, a header that holds its implementation),
// compiled here for the formats hart accepts, so the cross build needs no riscv64 copy of libstb.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_JPEG
#define STBI_ONLY_PNG
#define STBI_ONLY_BMP
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR

// Every allocation of the decoder is bounded (stb_image_limit.h): a small file can claim a zlib
// stream that inflates without end, which stb's PNG reader grows a buffer for; past the bound the
// allocation fails and the decode ends with stb's "outofmem".
#include <stdlib.h>
#include "vision/stb_image_limit.h"
static _Thread_local size_t max_alloc = (size_t)-1;
void hart_stbi_set_max_alloc(size_t bytes) { max_alloc = bytes; }
static void* limited_malloc(size_t n) { return n > max_alloc ? NULL : malloc(n); }
static void* limited_realloc(void* p, size_t n) { return n > max_alloc ? NULL : realloc(p, n); }
#define STBI_MALLOC limited_malloc
#define STBI_REALLOC limited_realloc
#define STBI_FREE free
#include <stb_image.h>

// And its PNG writer, for the test images the vision fixtures make.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>
