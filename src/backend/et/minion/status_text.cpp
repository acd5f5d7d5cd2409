#include "backend/et/minion/status_text.h"

#include <cstring>

#include "backend/et/hex.h"

namespace hart::et {

std::optional<std::string> hart_status_error(const et_minion_status& s) {
  const std::string h = "hart " + std::to_string(s.hart);
  const std::string msg(s.message, strnlen(s.message, sizeof s.message));
  switch (s.state) {
    case ET_MINION_FAILED: return h + " failed: " + msg;
    case ET_MINION_BAD_TENSOR: return h + ": " + msg;
    case ET_MINION_BAD_ACCESS:
      return h + " accessed " + std::to_string(s.bytes) + " bytes at " + hex(s.addr) + ", outside device allocations";
    case ET_MINION_TRAP:
      return h + " trapped: mcause " + std::to_string(s.bytes) + " at pc " + hex(s.addr) + " (mtval " + hex(s.value) + ")";
    default: return std::nullopt;
  }
}

}  // namespace hart::et
