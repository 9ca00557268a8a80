# Build options and the warning/sanitizer/architecture flags every retra target uses.
option(RETRA_WERROR "Treat compiler warnings as errors" ON)
option(RETRA_BUILD_TESTS "Build the GoogleTest suite" ON)
option(RETRA_BUILD_BENCHMARKS "Build the Google Benchmark micro benchmarks" ON)
option(RETRA_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(RETRA_TSAN "Build with ThreadSanitizer (clang with libomp, whose Archer tool tells TSan about OpenMP's synchronization)" OFF)
option(RETRA_FUZZ "Also link the fuzz targets with libFuzzer (clang; scripts/fuzz.sh)" OFF)
option(RETRA_FUZZ_QUICK "With RETRA_FUZZ: the games' module tables at -O0 (a faster build for short fuzzing runs)" OFF)
option(RETRA_STATIC "Link the retra executable fully statically (for machines without the -dev packages)" OFF)
# The Python module is built in plain builds only: an instrumented extension would need the
# sanitizer runtime preloaded into the interpreter.
if(RETRA_SANITIZE OR RETRA_TSAN OR RETRA_STATIC)
  set(retra_python_default OFF)
else()
  set(retra_python_default ON)
endif()
# MPI (Open MPI from Debian) for builds over several processes; a static retra cannot link
# Debian's shared-only libmpi.
if(RETRA_STATIC)
  set(retra_mpi_default OFF)
else()
  set(retra_mpi_default ON)
endif()
option(RETRA_MPI "Build retra with MPI support (mpirun -np N retra build ...)" ${retra_mpi_default})
option(RETRA_PYTHON "Build the Python module (pybind11) and its tests" ${retra_python_default})
set(RETRA_ARCH "native" CACHE STRING "Value for -march (empty: compiler default)")

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()

# One interface target carries the flags so that every retra target gets the same ones.
add_library(retra_flags INTERFACE)
target_compile_options(retra_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
  -Wnull-dereference -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
if(RETRA_WERROR)
  target_compile_options(retra_flags INTERFACE -Werror)
endif()
if(RETRA_ARCH)
  target_compile_options(retra_flags INTERFACE -march=${RETRA_ARCH})
endif()
if(RETRA_SANITIZE)
  target_compile_options(retra_flags INTERFACE
    -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(retra_flags INTERFACE -fsanitize=address,undefined)
  target_compile_definitions(retra_flags INTERFACE RETRA_SANITIZE=1)
endif()
if(RETRA_FUZZ)
  # Coverage for libFuzzer on every retra target; the fuzz executables add the fuzzer's main.
  target_compile_options(retra_flags INTERFACE -fsanitize=fuzzer-no-link)
endif()
if(RETRA_TSAN)
  target_compile_options(retra_flags INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(retra_flags INTERFACE -fsanitize=thread)
  target_compile_definitions(retra_flags INTERFACE RETRA_SANITIZE=1 RETRA_TSAN=1)
endif()
