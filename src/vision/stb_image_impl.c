// The decoder of Debian's libstb-dev (stb_image.h, a header that holds its implementation),
// compiled here for the formats hart accepts, so the cross build needs no riscv64 copy of libstb.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_JPEG
#define STBI_ONLY_PNG
#define STBI_ONLY_BMP
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#include <stb_image.h>

// And its PNG writer, for the test images the vision fixtures make.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>
