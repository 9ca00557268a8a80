# Finds every third-party dependency; all of them come from Debian packages (scripts/setup.sh).
find_package(Threads REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(TBB REQUIRED)
find_package(zstd REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)

# libxxhash-dev ships neither a CMake config nor a usable static library, so find it by hand.
find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
find_library(XXHASH_LIBRARY NAMES xxhash REQUIRED)
add_library(retra_xxhash INTERFACE)
target_include_directories(retra_xxhash SYSTEM INTERFACE ${XXHASH_INCLUDE_DIR})
target_link_libraries(retra_xxhash INTERFACE ${XXHASH_LIBRARY})

if(TARGET zstd::libzstd_shared)
  set(RETRA_ZSTD zstd::libzstd_shared)
else()
  set(RETRA_ZSTD zstd::libzstd_static)
endif()

if(RETRA_BUILD_TESTS)
  find_package(GTest REQUIRED)
  find_package(rapidcheck REQUIRED)
endif()
if(RETRA_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()
