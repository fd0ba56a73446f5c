# Pastes gorge.glsl and the check body into a shader template (for GLSL ES, which has no
# #include) and validates the result with glslangValidator; fails with the compiler's messages.
# -DVALIDATOR= -DTEMPLATE= -DGLSL= -DBODY= -DOUTPUT=
foreach(var VALIDATOR TEMPLATE GLSL BODY OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "compile_pasted.cmake: -D${var}= is required")
  endif()
endforeach()
file(READ ${TEMPLATE} shader)
file(READ ${GLSL} GORGE_GLSL_SOURCE)
file(READ ${BODY} GORGE_CHECK_BODY)
string(REPLACE "@GORGE_GLSL_SOURCE@" "${GORGE_GLSL_SOURCE}" shader "${shader}")
string(REPLACE "@GORGE_CHECK_BODY@" "${GORGE_CHECK_BODY}" shader "${shader}")
file(WRITE ${OUTPUT} "${shader}")
execute_process(COMMAND ${VALIDATOR} ${OUTPUT} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "glslangValidator rejected ${OUTPUT}:\n${out}")
endif()
message(STATUS "glslangValidator accepted ${OUTPUT}")
