# The installable library: libhart.so (SONAME libhart.so.<ABI>, only the C API's hart_* symbols
# exported), libhart.a (every hart archive the API needs, merged into one), the header, a CMake
# package (find_package(hart) -> hart::hart) and hart.pc; and cpack's .deb packages: libhart<ABI>
# (the shared library), libhart-dev (header, libhart.a, CMake and pkg-config files) and hart (the
# CLI, which links the same library's objects statically: it also uses the C++ classes under the
# C API, which libhart.so does not export).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)


# libhart.a: every static archive hart_lib links, directly or through others, and the backends'
# self-registering objects, merged by ar's MRI script (GNU ar and llvm-ar both read it). The list
# is walked from the link graph, so a new library under hart_lib cannot be left out.
function(hart_collect_links target)
  get_target_property(type ${target} TYPE)
  set(links "")
  foreach(prop LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
    if(NOT type STREQUAL "INTERFACE_LIBRARY" OR prop STREQUAL "INTERFACE_LINK_LIBRARIES")
      get_target_property(l ${target} ${prop})
      if(l)
        list(APPEND links ${l})
      endif()
    endif()
  endforeach()
  foreach(item ${links})
    # $<LINK_ONLY:lib> is a private dependency, $<TARGET_OBJECTS:lib> a self-registering object
    string(REGEX REPLACE "^\\$<(LINK_ONLY|TARGET_OBJECTS):(.*)>$" "\\2" item "${item}")
    if(NOT TARGET ${item} OR item IN_LIST hart_seen)
      continue()
    endif()
    list(APPEND hart_seen ${item})
    set(hart_seen ${hart_seen} PARENT_SCOPE)
    get_target_property(item_type ${item} TYPE)
    get_target_property(imported ${item} IMPORTED)
    if(imported)
      continue()
    elseif(item_type STREQUAL "STATIC_LIBRARY")
      set_property(GLOBAL APPEND PROPERTY hart_archives ${item})
    elseif(item_type STREQUAL "OBJECT_LIBRARY")
      set_property(GLOBAL APPEND PROPERTY hart_objects ${item})
    endif()
    hart_collect_links(${item})
    set(hart_seen ${hart_seen} PARENT_SCOPE)
  endforeach()
endfunction()
set(hart_seen "")
hart_collect_links(hart_lib)
get_property(hart_archives GLOBAL PROPERTY hart_archives)
get_property(hart_objects GLOBAL PROPERTY hart_objects)
list(PREPEND hart_archives hart_lib)
set(mri "CREATE ${PROJECT_BINARY_DIR}/libhart.a\n")
foreach(t ${hart_archives})
  string(APPEND mri "ADDLIB $<TARGET_FILE:${t}>\n")
endforeach()
foreach(t ${hart_objects})
  string(APPEND mri "ADDMOD $<JOIN:$<TARGET_OBJECTS:${t}>, >\n")
endforeach()
string(APPEND mri "SAVE\nEND\n")
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/libhart.mri CONTENT "${mri}")
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/libhart.a
                   COMMAND ${CMAKE_COMMAND} -E rm -f ${PROJECT_BINARY_DIR}/libhart.a
                   COMMAND ${CMAKE_AR} -M < ${PROJECT_BINARY_DIR}/libhart.mri
                   DEPENDS ${hart_archives} ${PROJECT_BINARY_DIR}/libhart.mri VERBATIM)
add_custom_target(hart_static ALL DEPENDS ${PROJECT_BINARY_DIR}/libhart.a)

# pkg-config and CMake package files, relative to where they are installed.
# What a static link of libhart.a needs besides it: the libraries hart links (ICU where the
# tokenizer was built with it) and the C++ runtime. As Libs.private, not Requires.private: a
# dynamic link needs no other .pc file (a riscv64 board may have none of their -dev packages).
set(HART_PC_LIBS_PRIVATE "-lpcre2-8 -lfmt")
set(HART_DEV_DEPENDS ", libpcre2-dev, libfmt-dev")
pkg_check_modules(HART_PC_ICU QUIET icu-uc)
if(HART_PC_ICU_FOUND)
  string(APPEND HART_PC_LIBS_PRIVATE " -licuuc")
  string(APPEND HART_DEV_DEPENDS ", libicu-dev")
endif()
if(HART_WEBP_FOUND)  # src/vision: WebP images
  string(APPEND HART_PC_LIBS_PRIVATE " -lwebp")
  string(APPEND HART_DEV_DEPENDS ", libwebp-dev")
endif()
string(APPEND HART_PC_LIBS_PRIVATE " -lstdc++ -lm -lpthread")
if(CMAKE_CROSSCOMPILING)
  set(HART_DEV_DEPENDS "")  # the riscv64 dependencies are built by scripts/riscv-deps, not packaged
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/hart.pc.in ${PROJECT_BINARY_DIR}/hart.pc @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/hartConfig.cmake.in ${PROJECT_BINARY_DIR}/hartConfig.cmake @ONLY)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hartConfigVersion.cmake COMPATIBILITY SameMinorVersion)

install(TARGETS hart_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev)
install(FILES ${PROJECT_BINARY_DIR}/libhart.a DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(FILES ${PROJECT_SOURCE_DIR}/include/hart.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(FILES ${PROJECT_BINARY_DIR}/hart.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
install(FILES ${PROJECT_BINARY_DIR}/hartConfig.cmake ${PROJECT_BINARY_DIR}/hartConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hart COMPONENT dev)
install(TARGETS hart RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tool)

# cpack -G DEB: one package per component, named as Debian names libraries.
set(CPACK_PACKAGE_NAME hart)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "hart developers <hart@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "LLM inference engine for GGUF models")
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev tool)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libhart${HART_ABI_VERSION})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libhart-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libhart${HART_ABI_VERSION} (= ${PROJECT_VERSION})${HART_DEV_DEPENDS}")
set(CPACK_DEBIAN_TOOL_PACKAGE_NAME hart)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "hart's C API as a shared library (include/hart.h)")
set(CPACK_COMPONENT_DEV_DESCRIPTION "hart's C API: header, static library, CMake package and pkg-config file")
set(CPACK_COMPONENT_TOOL_DESCRIPTION "hart: run, chat, serve (OpenAI API), bench and quantize GGUF models")
if(HART_ET_PLATFORM)
  # The et-rt device links the vendor's runtime (libetrt, g3log) from an et-platform prefix, which
  # no Debian package carries: packages come from a build without HART_ET_PLATFORM
  # (scripts/package-test configures one).
  message(STATUS "packages: none from a build with HART_ET_PLATFORM (configure one without it for cpack)")
  return()
endif()
if(CMAKE_CROSSCOMPILING)
  # dpkg-shlibdeps cannot read the target's libraries: hart links its riscv64 dependencies
  # statically (scripts/riscv-deps), so only the C and C++ runtimes remain.
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${CMAKE_SYSTEM_PROCESSOR})
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libstdc++6, libgcc-s1")
else()
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()
include(CPack)
