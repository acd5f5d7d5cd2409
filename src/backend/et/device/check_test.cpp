// The riscv64 kernel check (scripts/et-check-kernel) run the way the build runs it: a kernel with
// a float division must be rejected with a message naming file, function and address; a kernel
// calling into libm must be rejected for its undefined symbol; a real device kernel passes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <string>

namespace {

struct Result {
  int status;
  std::string output;
};

Result run(const std::string& cmd) {
  Result r{-1, {}};
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) r.output += buf;
  const int status = pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class EtKernelCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("hart-et-check-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Compiles src (in dir_) with the device flags, then checks it; returns the checker's result.
  Result compile_and_check(const std::string& src, const std::string& name) {
    const std::string obj = (dir_ / (name + ".o")).string();
    const Result cc = run(std::string(HART_ET_CLANG) +
                          " --target=riscv64-unknown-elf -march=rv64imf -mabi=lp64f -ffreestanding -nostdlib"
                          " -fno-builtin -O2 -I" HART_ET_DEVICE_DIR " -c " + src + " -o " + obj);
    EXPECT_EQ(cc.status, 0) << cc.output;
    return run("ET_OBJDUMP=" HART_ET_OBJDUMP " ET_NM=" HART_ET_NM " " HART_ET_CHECK_SCRIPT " " + obj + " " + name + ".c");
  }

  std::string write(const std::string& name, const std::string& text) {
    const auto path = dir_ / (name + ".c");
    std::ofstream(path) << text;
    return path.string();
  }

  std::filesystem::path dir_;
};

TEST_F(EtKernelCheck, RejectsFloatDivision) {
  const std::string src = write("bad_div",
                                "float bad_ratio(float a, float b) { return a / b; }\n"
                                "float fine(float a, float b) { return a * b; }\n");
  const Result r = compile_and_check(src, "bad_div");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("bad_div.c: forbidden instruction fdiv.s in bad_ratio at 0x"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(" in fine "), std::string::npos) << r.output;
}

TEST_F(EtKernelCheck, RejectsLongFloatConversionsAndLibmCalls) {
  const std::string src = write("bad_calls",
                                "float sqrtf(float);\n"
                                "float root(float a) { return sqrtf(a); }\n"
                                "long to_long(float a) { return (long)a; }\n");
  const Result r = compile_and_check(src, "bad_calls");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("bad_calls.c: undefined symbol sqrtf"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("forbidden instruction fcvt.l.s in to_long"), std::string::npos) << r.output;
}

TEST_F(EtKernelCheck, AcceptsTheDeviceKernels) {
  const Result r = compile_and_check(HART_ET_DEVICE_DIR "/flash_attn_ext.c", "flash_attn_ext");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "");
}

}  // namespace
