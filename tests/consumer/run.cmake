# ctest Install.FindPackageConsumer: installs the build tree into WORK/prefix, configures and
# builds tests/consumer against it with find_package(steer), and runs the consumer.
# -DBUILD=<steer build dir> -DSOURCE=<tests/consumer> -DWORK=<scratch> -DGENERATOR=<gen> -DCXX=<compiler>
file(REMOVE_RECURSE ${WORK})
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()
run_step("install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
run_step("configure" ${CMAKE_COMMAND} -S ${SOURCE} -B ${WORK}/build -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release
         -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
run_step("build" ${CMAKE_COMMAND} --build ${WORK}/build)
# the package carries the floating-point flags that keep a rollout's bits (no fused
# multiply-add, no errno from sqrt): the consumer's compile line must have them though its own
# CMakeLists.txt does not ask for them
file(READ ${WORK}/build/compile_commands.json commands)
foreach(flag -ffp-contract=off -fno-math-errno)
  if(NOT commands MATCHES "${flag}")
    message(FATAL_ERROR "the consumer was compiled without ${flag}: ${commands}")
  endif()
endforeach()
# the pipeline's headers are reached as "steer/pipeline/...", through include/ alone: no include
# root inside the package (a bare "config/config.h") reaches the consumer
if(commands MATCHES "steer/pipeline")
  message(FATAL_ERROR "the consumer's include path reaches inside include/steer: ${commands}")
endif()
run_step("run" ${WORK}/build/steer_consumer ${SOURCE}/../../configs/projectile.json)
message(STATUS "${step_output}")
