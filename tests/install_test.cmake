# Installs retra into a scratch prefix, then configures, builds and runs examples/consumer, a
# project that finds the probing library with find_package(retra). Run by ctest (script mode).
file(REMOVE_RECURSE ${WORK})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()
# Only the library, headers and executable: the Python component installs into the user's
# site-packages, which a test must not touch (Python.Installed stages it instead).
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK}/prefix --component Unspecified)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/consumer -B ${WORK}/build -G Ninja
    -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK}/build)
run(${WORK}/build/consumer_c ${DB} 1 1 1 1 1 2 1 0 0 0 0 0)
run(${WORK}/build/consumer_cpp ${DB})
