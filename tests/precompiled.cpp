// The translation unit of retra_test_pch, which precompiles the headers every test file parses
// (tests/CMakeLists.txt); linked with gtest_main, it is an empty test binary.
