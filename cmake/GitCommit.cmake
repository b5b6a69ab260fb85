# cmake -DSOURCE_DIR=... -DOUT=.../chorus_git.h -P GitCommit.cmake
# Writes the commit the tree is at ("-dirty" when it has changes) for the tools' --version; an
# empty one outside a git checkout (a release tarball). OUT is touched only when it changes.
execute_process(COMMAND git -C ${SOURCE_DIR} describe --always --dirty --abbrev=12
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
file(WRITE ${OUT}.new "#pragma once\n#define CHORUS_GIT_COMMIT \"${commit}\"\n")
file(COPY_FILE ${OUT}.new ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.new)
