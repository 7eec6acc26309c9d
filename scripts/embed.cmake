# wafersim_embed(TARGET FUNCTION GLOB...) compiles the files matched by the globs
# into TARGET as a table returned by FUNCTION (see models/config/embedded.h).
function(wafersim_embed target function)
  file(GLOB files CONFIGURE_DEPENDS ${ARGN})
  list(SORT files)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${function}.cpp")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${out} -DFUNCTION=${function}
            -DROOT=${PROJECT_SOURCE_DIR} "-DFILES=${files}"
            -P ${PROJECT_SOURCE_DIR}/scripts/embed_files.cmake
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/scripts/embed_files.cmake
    COMMENT "Embedding ${function}"
    VERBATIM)
  target_sources(${target} PRIVATE "${out}")
endfunction()
