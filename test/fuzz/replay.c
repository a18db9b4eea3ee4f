/* The corpus replay of the fuzz targets (see replay.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "replay.h"

__attribute__((weak)) int sf_fuzz_option(const char *opt) {
    (void)opt;
    return -1;
}

__attribute__((weak)) int sf_fuzz_finish(void) {
    return 0;
}

/* Read a whole file (malloc); NULL on error. */
static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n ? (size_t)n : 1);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        *len = (size_t)n;
    }
    fclose(f);
    return buf;
}

static int replay_file(const char *path) {
    size_t len = 0;
    uint8_t *buf = read_file(path, &len);
    if (!buf) {
        fprintf(stderr, "%s: cannot read %s\n", sf_fuzz_name, path);
        return -1;
    }
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

/* Replay @path (a file, or every regular file in a directory); returns inputs replayed or -1. */
static long replay(const char *path) {
    struct stat st;
    struct dirent *de;
    DIR *dir;
    long n = 0;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "%s: cannot stat %s\n", sf_fuzz_name, path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return replay_file(path) == 0 ? 1 : -1;
    if (!(dir = opendir(path))) {
        fprintf(stderr, "%s: cannot open %s\n", sf_fuzz_name, path);
        return -1;
    }
    while ((de = readdir(dir))) {
        char full[4096];
        if (de->d_name[0] == '.')
            continue;
        snprintf(full, sizeof(full), "%s/%s", path, de->d_name);
        if (stat(full, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (replay_file(full) != 0) {
            closedir(dir);
            return -1;
        }
        n++;
    }
    closedir(dir);
    return n;
}

int main(int argc, char **argv) {
    long total = 0, n;
    int i;
    for (i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--", 2) == 0) {
            if (sf_fuzz_option(argv[i]) != 0) {
                fprintf(stderr, "%s: unknown option %s\n", sf_fuzz_name, argv[i]);
                return 2;
            }
            continue;
        }
        if ((n = replay(argv[i])) < 0)
            return 1;
        total += n;
    }
    printf("%ld inputs replayed\n", total);
    return sf_fuzz_finish();
}
