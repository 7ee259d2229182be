# cmake -DSOURCE=<src> -DOUT=<dir> -P namespace_pipeline_headers.cmake
# Copies the pipeline's headers (SOURCE/<area>/**/*.h) to OUT/<area>/..., each include of another
# area's header ("config/config.h", the form the sources use with src/ as an include root)
# written as "steer/pipeline/config/config.h". Installed under include/steer/pipeline, the
# headers then need include/ alone as an include root: a consumer never sees a bare
# "config/config.h" that a header of its own could shadow.
file(REMOVE_RECURSE ${OUT})
file(GLOB areas RELATIVE ${SOURCE} LIST_DIRECTORIES true ${SOURCE}/*)
set(area_names)
foreach(a ${areas})
  if(IS_DIRECTORY ${SOURCE}/${a})
    list(APPEND area_names ${a})
  endif()
endforeach()
list(JOIN area_names "|" area_alternatives)
file(GLOB_RECURSE headers RELATIVE ${SOURCE} ${SOURCE}/*.h)
foreach(h ${headers})
  file(READ ${SOURCE}/${h} text)
  string(REGEX REPLACE "(#[ \t]*include[ \t]*\")(${area_alternatives})/" "\\1steer/pipeline/\\2/" text "${text}")
  file(WRITE ${OUT}/${h} "${text}")
endforeach()
