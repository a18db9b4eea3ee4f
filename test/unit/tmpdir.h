/* A temporary directory for each test of the storage engine: tmpdir_make in the fixture's
 * setup, tmpdir_remove (with everything in it) in its teardown. Included by one test file
 * each (static). */
#ifndef SF_TEST_TMPDIR_H
#define SF_TEST_TMPDIR_H

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static char tmpdir[64];

static int tmpdir_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* /tmp/sf-check-@name-XXXXXX, in tmpdir. */
static void tmpdir_make(const char *name) {
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/sf-check-%s-XXXXXX", name);
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmpdir_remove(void) {
    nftw(tmpdir, tmpdir_rm, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
