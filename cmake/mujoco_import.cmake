# MJCF / URDF import through MuJoCo's own compiler (docs/import.md): where a MuJoCo ≥ 3.3 is found,
# libsteer compiles src/models/articulated/mujoco/mjcf_import.cpp, loads MuJoCo when an import
# needs it (mujoco_library.cpp) and defines
# STEER_MUJOCO_IMPORT, which config_articulated.cpp tests; without it, model.mjcf / model.urdf are
# refused with exit 2, naming why (STEER_MUJOCO_OFF_REASON). STEER_MUJOCO=OFF builds without it
# even where MuJoCo is found.
# Where: STEER_MUJOCO_ROOT, a folder with include/mujoco/mujoco.h and lib/libmujoco.so* (what
# tools/fetch_mujoco.sh unpacks from PyPI's mujoco-core wheel; tools/bootstrap.sh passes it), or
# an installed wheel's mujoco/ folder (include/ and libmujoco.so.X.Y.Z side by side); else the
# system's (CMAKE_PREFIX_PATH, /usr). A MuJoCo older than 3.3 (Debian 12's libmujoco-dev 2.2.2)
# is reported and not used: steer builds without the import, as without MuJoCo.
# The cache variables STEER_MUJOCO_INCLUDE_DIR / STEER_MUJOCO_LIBRARY can also be set directly;
# the MuJoCo-linked tests use them where STEER_MUJOCO_FOUND (the MuJoCo is ≥ 3.3).
option(STEER_MUJOCO "import MJCF and URDF files through MuJoCo's compiler when MuJoCo is installed" ON)
set(STEER_MUJOCO_ROOT "" CACHE PATH "a MuJoCo >= 3.3: folder with include/mujoco/mujoco.h and lib/libmujoco.so* (tools/fetch_mujoco.sh)")
# a new root: search again rather than keep what an earlier configure found elsewhere
if(NOT "${STEER_MUJOCO_ROOT}" STREQUAL "${STEER_MUJOCO_ROOT_SEARCHED}")
  unset(STEER_MUJOCO_INCLUDE_DIR CACHE)
  unset(STEER_MUJOCO_LIBRARY CACHE)
  set(STEER_MUJOCO_ROOT_SEARCHED "${STEER_MUJOCO_ROOT}" CACHE INTERNAL "")
endif()
if(STEER_MUJOCO_ROOT)
  find_path(STEER_MUJOCO_INCLUDE_DIR mujoco/mujoco.h PATHS ${STEER_MUJOCO_ROOT}/include NO_DEFAULT_PATH)
  # the wheel's library is libmujoco.so.X.Y.Z only (fetch_mujoco.sh adds libmujoco.so)
  file(GLOB steer_mujoco_versioned ${STEER_MUJOCO_ROOT}/lib/libmujoco.so.* ${STEER_MUJOCO_ROOT}/libmujoco.so.*)
  find_library(STEER_MUJOCO_LIBRARY mujoco PATHS ${STEER_MUJOCO_ROOT}/lib ${STEER_MUJOCO_ROOT} NO_DEFAULT_PATH)
  if(NOT STEER_MUJOCO_LIBRARY AND steer_mujoco_versioned)
    list(GET steer_mujoco_versioned 0 steer_mujoco_lib0)
    set(STEER_MUJOCO_LIBRARY "${steer_mujoco_lib0}" CACHE FILEPATH "libmujoco" FORCE)
  endif()
else()
  find_path(STEER_MUJOCO_INCLUDE_DIR mujoco/mujoco.h)
  find_library(STEER_MUJOCO_LIBRARY mujoco)
endif()

# the headers' version: mjVERSION_HEADER is S*1e6 + M*1e3 + P since 3.5 (semantic versions), S*100 +
# M*10 + P before
set(STEER_MUJOCO_FOUND OFF)
set(STEER_MUJOCO_VERSION "")
if(STEER_MUJOCO_INCLUDE_DIR AND STEER_MUJOCO_LIBRARY)
  file(STRINGS ${STEER_MUJOCO_INCLUDE_DIR}/mujoco/mujoco.h steer_mj_line REGEX "^#define mjVERSION_HEADER [0-9]+")
  string(REGEX MATCH "[0-9]+$" steer_mj_v "${steer_mj_line}")
  if(steer_mj_v GREATER_EQUAL 1000000)
    math(EXPR steer_mj_major "${steer_mj_v} / 1000000")
    math(EXPR steer_mj_minor "(${steer_mj_v} / 1000) % 1000")
    math(EXPR steer_mj_patch "${steer_mj_v} % 1000")
  elseif(steer_mj_v)
    math(EXPR steer_mj_major "${steer_mj_v} / 100")
    math(EXPR steer_mj_minor "(${steer_mj_v} / 10) % 10")
    math(EXPR steer_mj_patch "${steer_mj_v} % 10")
  else()
    set(steer_mj_major 0)
    set(steer_mj_minor 0)
    set(steer_mj_patch 0)
  endif()
  set(STEER_MUJOCO_VERSION "${steer_mj_major}.${steer_mj_minor}.${steer_mj_patch}")
  if(STEER_MUJOCO_VERSION VERSION_GREATER_EQUAL 3.3)
    set(STEER_MUJOCO_FOUND ON)
  else()
    set(steer_mujoco_off "MuJoCo ${STEER_MUJOCO_VERSION} at ${STEER_MUJOCO_INCLUDE_DIR} is older than 3.3")
  endif()
else()
  set(steer_mujoco_off "no MuJoCo found")
endif()
if(STEER_MUJOCO_FOUND AND NOT STEER_MUJOCO)
  set(steer_mujoco_off "STEER_MUJOCO=OFF")
endif()

if(STEER_MUJOCO AND STEER_MUJOCO_FOUND)
  target_sources(steer PRIVATE ${PROJECT_SOURCE_DIR}/src/models/articulated/mujoco/mjcf_import.cpp
                               ${PROJECT_SOURCE_DIR}/src/models/articulated/mujoco/mujoco_library.cpp)
  target_include_directories(steer SYSTEM PRIVATE ${STEER_MUJOCO_INCLUDE_DIR})
  # libmujoco is loaded when an import needs it (mujoco_library.cpp: dlopen), not linked: PyPI's
  # build runs AVX instructions as it loads, which would stop every program on a CPU without AVX.
  # The file found here is tried first, then its name on the loader's path.
  get_filename_component(steer_mujoco_real "${STEER_MUJOCO_LIBRARY}" REALPATH)
  get_filename_component(steer_mujoco_name "${steer_mujoco_real}" NAME)
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/models/articulated/mujoco/mujoco_library.cpp TARGET_DIRECTORY steer APPEND PROPERTY
               COMPILE_DEFINITIONS STEER_MUJOCO_LIBRARY_PATH="${steer_mujoco_real}"
                                   STEER_MUJOCO_LIBRARY_NAME="${steer_mujoco_name}")
  target_link_libraries(steer PUBLIC ${CMAKE_DL_LIBS})
  target_compile_definitions(steer PRIVATE STEER_MUJOCO_IMPORT)
  # steer --version asks the loaded MuJoCo for its version (apps/steer/version.cpp)
  target_include_directories(steer_cli SYSTEM PRIVATE ${STEER_MUJOCO_INCLUDE_DIR})
  target_compile_definitions(steer_cli PRIVATE STEER_CLI_MUJOCO)
  set(STEER_MUJOCO_IMPORT ON)
  message(STATUS "steer: MJCF/URDF import: ON (MuJoCo ${STEER_MUJOCO_VERSION}, ${STEER_MUJOCO_LIBRARY})")
else()
  set(STEER_MUJOCO_IMPORT OFF)
  # the refusal of model.mjcf / model.urdf names why (config_articulated.cpp), and so does
  # steer --version (apps/steer/version.cpp): a generated header, rewritten only when the reason
  # changes
  string(REPLACE "\\" "\\\\" steer_mujoco_off_c "${steer_mujoco_off}")
  string(REPLACE "\"" "\\\"" steer_mujoco_off_c "${steer_mujoco_off_c}")
  file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/mujoco_status/steer_mujoco_status.h
       CONTENT "// generated by cmake/mujoco_import.cmake\n#define STEER_MUJOCO_OFF_REASON \"${steer_mujoco_off_c}\"\n")
  target_include_directories(steer PRIVATE ${PROJECT_BINARY_DIR}/mujoco_status)
  target_include_directories(steer_cli PRIVATE ${PROJECT_BINARY_DIR}/mujoco_status)
  message(STATUS "steer: MJCF/URDF import: OFF (${steer_mujoco_off}; model.mjcf and model.urdf are refused; "
                 "bash tools/fetch_mujoco.sh fetches MuJoCo 4.0.1 from PyPI for -DSTEER_MUJOCO_ROOT=<folder>)")
endif()
