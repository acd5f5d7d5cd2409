// Resource limits and bad input, through the hart binary: a model or a context too big for the
// memory, a disk that fills up during `hart quantize`, unknown flags and bad numbers. Each must
// end with exactly one line on stderr naming the problem and a non-zero exit code: never a
// crash, an OOM kill or a half-written output file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/testdata.h"

namespace {

namespace fs = std::filesystem;

struct Limit {
  int resource;
  rlim_t bytes;
};

struct Result {
  int exit_code = -1;  // -1 when killed by a signal
  std::string err;     // stderr
};

// Runs `hart ARGS` (through the cross-build emulator, if any) under the given resource limits,
// with stdout discarded and stderr captured.
// HART_BINARY: "[emulator args...] path/to/hart".
std::vector<std::string> hart_command() {
  std::vector<std::string> words;
  std::istringstream in(HART_BINARY);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

Result run_hart(const std::vector<std::string>& args, const std::vector<Limit>& limits = {}) {
  std::vector<std::string> argv_s = hart_command();
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);

  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const Limit& l : limits) {
      const struct rlimit r = {l.bytes, l.bytes};
      if (::setrlimit(l.resource, &r) != 0) ::_exit(125);
    }
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, STDOUT_FILENO);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    ::close(pipe_fds[0]);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  Result r;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) r.err.append(buf, size_t(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

// The command failed with a non-zero exit code (not a signal) and its last stderr line names the
// problem; `only_line`: that line is all it printed (commands without progress output).
void expect_error_line(const Result& r, const std::string& must_contain, bool only_line = true) {
  EXPECT_GT(r.exit_code, 0) << "killed by a signal or exit 0; stderr: " << r.err;
  ASSERT_FALSE(r.err.empty());
  ASSERT_EQ(r.err.back(), '\n') << r.err;
  const size_t start = r.err.rfind('\n', r.err.size() - 2) + 1;  // npos + 1 == 0
  if (only_line) {
    EXPECT_EQ(start, 0u) << "more than one line:\n" << r.err;
  }
  EXPECT_NE(r.err.find(must_contain, start), std::string::npos) << r.err;
}

// A temporary folder, removed with everything in it.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("hart_limits_test_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

// RLIMIT_AS cannot be combined with a sanitizer's shadow memory or with an emulator reserving
// the guest's address space up front.
bool address_space_limit_usable() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return false;
#endif
#endif
  return hart_command().size() == 1;
}

constexpr rlim_t kMiB = rlim_t(1) << 20;

TEST(Limits, UnknownFlagsAndBadNumbersAreOneLineErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", "--no-such-flag"}, "--no-such-flag"},
      {{"run", "--ctx-size", "many"}, "--ctx-size"},
      {{"run", "--ctx-size", "99999999999"}, "--ctx-size"},
      {{"run", "--threads", "-3"}, "-3"},
      {{"run", "--temp", "1.2.3"}, "--temp"},
      {{"quantize", "only-the-input.gguf"}, "required"},
      {{"quantize", "in.gguf", "out.gguf", "q9_9"}, "q9_9"},
      {{"info", "a.gguf", "b.gguf"}, "b.gguf"},
      {{"no-such-command"}, "no-such-command"},
      {{"run", "--model", "/no/such/model.gguf"}, "/no/such/model.gguf"},
  };
  for (const auto& [args, names] : cases) {
    SCOPED_TRACE(args[0] + " " + (args.size() > 1 ? args[1] : ""));
    expect_error_line(run_hart(args), names);
  }
  EXPECT_EQ(run_hart({"run", "--help"}).exit_code, 0);
}

// A file bigger than the memory (sparse: it costs no disk) is refused before any allocation,
// with the sizes in the message, when it would be read into memory.
TEST(Limits, ModelLargerThanMemoryIsRefused) {
  HART_REQUIRE_TESTDATA(model, "models/stories260K.gguf");
  TempDir dir;
  const fs::path big = dir.path / "huge.gguf";
  fs::copy_file(model, big);
  std::error_code ec;
  fs::resize_file(big, uintmax_t(1) << 40, ec);  // 1 TiB: more than any machine this runs on
  if (ec) GTEST_SKIP() << "cannot make a sparse file here: " << ec.message();
  const Result r = run_hart({"run", "-m", big.string(), "-n", "1"});
  expect_error_line(r, "of memory is available");
  EXPECT_NE(r.err.find(big.string()), std::string::npos) << r.err;
}

TEST(Limits, ModelLargerThanTheAddressSpaceLimitIsRefused) {
  if (!address_space_limit_usable()) GTEST_SKIP() << "RLIMIT_AS unusable under sanitizers / emulators";
  HART_REQUIRE_TESTDATA(model, "models/stories260K.gguf");
  TempDir dir;
  const fs::path big = dir.path / "big.gguf";
  fs::copy_file(model, big);
  fs::resize_file(big, 2048 * kMiB);
  expect_error_line(run_hart({"run", "-m", big.string(), "-n", "1"}, {{RLIMIT_AS, 1024 * kMiB}}),
                        "of memory is available");
}

TEST(Limits, ContextLargerThanMemoryFailsAtSessionCreation) {
  HART_REQUIRE_TESTDATA(model, "models/stories260K.gguf");
  // 2e9 tokens of F16 KV for 5 layers x 32 KV dims: about 1.2 TiB.
  expect_error_line(run_hart({"run", "-m", model, "-c", "2000000000", "-n", "1"}),
                        "a context of 2000000000 tokens", /*only_line=*/false);  // after "loading"
  if (!address_space_limit_usable()) return;
  // 5e6 tokens: 3 GiB, over a 1 GiB address-space limit though the machine may have it.
  expect_error_line(run_hart({"run", "-m", model, "-c", "5000000", "-n", "1"}, {{RLIMIT_AS, 1024 * kMiB}}),
                        "a context of 5000000 tokens", /*only_line=*/false);
}

// A full disk (a file-size limit, which makes write() fail with EFBIG as a full disk does with
// ENOSPC) during `hart quantize`: an error line, the previous output untouched, no temporary.
TEST(Limits, QuantizeOntoAFullDiskLeavesNoPartialOutput) {
  HART_REQUIRE_TESTDATA(model, "models/stories260K.gguf");
  TempDir dir;
  const fs::path out = dir.path / "out.gguf";
  std::ofstream(out) << "previous contents";
  const Result r = run_hart({"quantize", model, out.string(), "q8_0"}, {{RLIMIT_FSIZE, 64 << 10}});
  expect_error_line(r, "write failed", /*only_line=*/false);  // after per-tensor lines
  std::ifstream in(out);
  const std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, "previous contents");
  EXPECT_FALSE(fs::exists(out.string() + ".tmp"));
}

}  // namespace
