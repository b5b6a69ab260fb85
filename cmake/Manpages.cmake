# The tools are installed with a man page each, made at build time by help2man from their
# --help: the same option definitions they parse with (src/tools/cli), so the pages cannot drift
# from the code. The version is given rather than read from --version, whose first line,
# "Chorus 0.1.0", help2man would take for the program's name.
find_program(CHORUS_HELP2MAN help2man)
if(NOT CHORUS_HELP2MAN)
  message(STATUS "help2man not found: the tools' man pages are not built (apt-get install help2man)")
endif()
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/man)

# chorus_install_tool(<target> <one line for the page's NAME section>)
function(chorus_install_tool target summary)
  install(TARGETS ${target} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  if(NOT CHORUS_HELP2MAN)
    return()
  endif()
  set(page ${CMAKE_BINARY_DIR}/man/${target}.1)
  add_custom_command(OUTPUT ${page}
    COMMAND ${CHORUS_HELP2MAN} --no-info --section=1 --name=${summary} --output=${page}
            --version-string=${PROJECT_VERSION} $<TARGET_FILE:${target}>
    DEPENDS ${target}
    COMMENT "man page ${target}.1"
    VERBATIM)
  add_custom_target(${target}-man ALL DEPENDS ${page})
  install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endfunction()
