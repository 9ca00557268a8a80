# Finds every third-party dependency; all of them come from Debian packages (scripts/setup.sh).
find_package(Threads REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(TBB REQUIRED)
find_package(zstd REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
if(RETRA_MPI)
  find_package(MPI REQUIRED COMPONENTS C)
endif()

# libxxhash-dev ships neither a CMake config nor a usable static library, so find it by hand.
find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
find_library(XXHASH_LIBRARY NAMES xxhash REQUIRED)
add_library(retra_xxhash INTERFACE)
target_include_directories(retra_xxhash SYSTEM INTERFACE ${XXHASH_INCLUDE_DIR})
target_link_libraries(retra_xxhash INTERFACE ${XXHASH_LIBRARY})

# cpp-httplib (libcpp-httplib-dev): Debian ships it compiled, with a pkg-config file whose
# definitions (TLS, zlib, brotli) the header needs to match the library's classes.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
add_library(retra_httplib INTERFACE)
target_link_libraries(retra_httplib INTERFACE PkgConfig::HTTPLIB)

if(TARGET zstd::libzstd_shared AND NOT RETRA_STATIC)
  set(RETRA_ZSTD zstd::libzstd_shared)
else()
  set(RETRA_ZSTD zstd::libzstd_static)
endif()
# Debian ships fmt only as a shared library; a static retra uses its header-only form.
if(RETRA_STATIC)
  # FindOpenMP names libgomp.so by path; with -fopenmp the driver picks libgomp.a under -static.
  add_library(retra_openmp INTERFACE)
  target_compile_options(retra_openmp INTERFACE -fopenmp)
  target_link_options(retra_openmp INTERFACE -fopenmp)
  set(RETRA_OPENMP retra_openmp)
  set(RETRA_FMT fmt::fmt-header-only)
  find_library(XXHASH_STATIC_LIBRARY NAMES libxxhash.a REQUIRED)
  set_property(TARGET retra_xxhash PROPERTY INTERFACE_LINK_LIBRARIES ${XXHASH_STATIC_LIBRARY})
else()
  set(RETRA_OPENMP OpenMP::OpenMP_CXX)
  set(RETRA_FMT fmt::fmt)
endif()

if(RETRA_PYTHON)
  # Debian's interpreter, which has numpy, pytest and selenium from apt (scripts/setup.sh), even
  # where another python3 comes first on PATH.
  if(NOT Python_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "Python interpreter for the module")
  endif()
  set(PYBIND11_FINDPYTHON ON)
  find_package(Python COMPONENTS Interpreter Development.Module REQUIRED)
  find_package(pybind11 CONFIG REQUIRED)
endif()

if(RETRA_BUILD_TESTS)
  find_package(GTest REQUIRED)
  find_package(rapidcheck REQUIRED)
endif()
if(RETRA_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()
