# SF_CHECK_ZOOKEEPER
# ------------------
# Find the multi-threaded ZooKeeper C client (libzookeeper_mt, <zookeeper/zookeeper.h>).
# Debian's libzookeeper-mt-dev ships no pkg-config file, so look for the header and the
# library directly. ZOOKEEPER_CFLAGS / ZOOKEEPER_LIBS may be set by the user to override.
AC_DEFUN([SF_CHECK_ZOOKEEPER], [
  AC_ARG_VAR([ZOOKEEPER_CFLAGS], [C compiler flags for the ZooKeeper C client])
  AC_ARG_VAR([ZOOKEEPER_LIBS], [linker flags for the ZooKeeper C client])
  sf_save_CPPFLAGS=$CPPFLAGS
  sf_save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS $ZOOKEEPER_CFLAGS"
  AS_IF([test -z "$ZOOKEEPER_LIBS"], [ZOOKEEPER_LIBS="-lzookeeper_mt"])
  AC_CHECK_HEADER([zookeeper/zookeeper.h], [],
    [AC_MSG_ERROR([zookeeper/zookeeper.h not found: install libzookeeper-mt-dev (apt-get install libzookeeper-mt-dev)])])
  LIBS="$ZOOKEEPER_LIBS $LIBS"
  AC_MSG_CHECKING([for zookeeper_init in $ZOOKEEPER_LIBS])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <zookeeper/zookeeper.h>]],
                                  [[zhandle_t *zh = zookeeper_init("", 0, 1000, 0, 0, 0); (void)zh;]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([libzookeeper_mt not found: install libzookeeper-mt-dev (apt-get install libzookeeper-mt-dev)])])
  CPPFLAGS=$sf_save_CPPFLAGS
  LIBS=$sf_save_LIBS
  AC_SUBST([ZOOKEEPER_CFLAGS])
  AC_SUBST([ZOOKEEPER_LIBS])
])
