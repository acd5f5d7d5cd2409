# Writes OUT, the C++ source of hart::cli::build_info(): the project version, the source revision
# (git describe of SRC), the compiler and the flags of this build. Run by the hart_build_info target at every build;
# configure_file rewrites OUT only when the text changes, so an unchanged tree relinks nothing.
#   cmake -DSRC=dir -DOUT=file -DVERSION=text -DCOMPILER=text -DFLAGS=text -P build_info.cmake
execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=12
                OUTPUT_VARIABLE REVISION OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR REVISION STREQUAL "")
  set(REVISION "unknown (not a git checkout)")
endif()
foreach(v VERSION REVISION COMPILER FLAGS)
  string(REPLACE "\\" "\\\\" ${v} "${${v}}")
  string(REPLACE "\"" "\\\"" ${v} "${${v}}")
  string(STRIP "${${v}}" ${v})
endforeach()
configure_file("${CMAKE_CURRENT_LIST_DIR}/build_info.cpp.in" "${OUT}" @ONLY)
