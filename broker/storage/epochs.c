/* The leader-epoch cache and its checkpoint file (see epochs.h). */
#include "epochs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "logging.h"

/* The longest line of a checkpoint: an int32, a space, an int64, the newline. */
#define EPOCHS_LINE_MAX 32

int sf_epochs_init(sf_epochs_t *ec, const char *dir) {
    size_t n = strlen(dir) + sizeof("/" SF_EPOCHS_FILE);
    memset(ec, 0, sizeof(*ec));
    ec->path = malloc(n);
    if (!ec->path)
        return SF_ERR_NOMEM;
    snprintf(ec->path, n, "%s/%s", dir, SF_EPOCHS_FILE);
    return SF_OK;
}

void sf_epochs_free(sf_epochs_t *ec) {
    free(ec->v);
    free(ec->path);
    memset(ec, 0, sizeof(*ec));
}

static int reserve(sf_epochs_t *ec, size_t n) {
    sf_epoch_entry_t *p;
    size_t cap;
    if (n <= ec->cap)
        return SF_OK;
    cap = ec->cap ? ec->cap : 8;
    while (cap < n)
        cap *= 2;
    p = realloc(ec->v, cap * sizeof(*p));
    if (!p)
        return SF_ERR_NOMEM;
    ec->v = p;
    ec->cap = cap;
    return SF_OK;
}

/* ---- the checkpoint file ---- */

/* A decimal number in [0, @max] at *@pp, ended by @end; *@pp moves past @end. */
static int parse_num(const char **pp, const char *lim, char end, int64_t max, int64_t *out) {
    const char *p = *pp;
    int64_t v = 0;
    if (p >= lim || *p < '0' || *p > '9')
        return 0;
    while (p < lim && *p >= '0' && *p <= '9') {
        if (v > (max - (*p - '0')) / 10)
            return 0;
        v = v * 10 + (*p - '0');
        p++;
    }
    if (p >= lim || *p != end)
        return 0;
    *pp = p + 1;
    *out = v;
    return 1;
}

/* Parse a whole checkpoint: version 0, the count, then exactly that many entries in order. */
static int parse_checkpoint(sf_epochs_t *ec, const char *p, const char *lim) {
    int64_t version, count, epoch, start, i;
    if (!parse_num(&p, lim, '\n', INT32_MAX, &version) || version != 0 ||
        !parse_num(&p, lim, '\n', SF_EPOCHS_MAX_ENTRIES, &count))
        return SF_ERR_CORRUPT;
    if (reserve(ec, (size_t)count) != SF_OK)
        return SF_ERR_NOMEM;
    for (i = 0; i < count; i++) {
        if (!parse_num(&p, lim, ' ', INT32_MAX, &epoch) ||
            !parse_num(&p, lim, '\n', INT64_MAX, &start))
            return SF_ERR_CORRUPT;
        /* Both columns strictly increase in a cache written by assign. */
        if (ec->n > 0 && (epoch <= ec->v[ec->n - 1].epoch ||
                          start <= ec->v[ec->n - 1].start_offset))
            return SF_ERR_CORRUPT;
        ec->v[ec->n].epoch = (int32_t)epoch;
        ec->v[ec->n].start_offset = start;
        ec->n++;
    }
    return p == lim ? SF_OK : SF_ERR_CORRUPT;
}

int sf_epochs_load(sf_epochs_t *ec) {
    struct stat st;
    char *buf = NULL;
    ssize_t r = 0;
    size_t got = 0;
    int fd, rc;

    ec->n = 0;
    fd = open(ec->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? SF_ERR_NOTFOUND : SF_ERR_IO;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return SF_ERR_IO;
    }
    if (st.st_size <= 0 || st.st_size > (off_t)EPOCHS_LINE_MAX * (SF_EPOCHS_MAX_ENTRIES + 2)) {
        close(fd);
        return SF_ERR_CORRUPT;
    }
    if (!(buf = malloc((size_t)st.st_size))) {
        close(fd);
        return SF_ERR_NOMEM;
    }
    while (got < (size_t)st.st_size) {
        r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    rc = r < 0 ? SF_ERR_IO : parse_checkpoint(ec, buf, buf + got);
    if (rc != SF_OK)
        ec->n = 0;
    free(buf);
    return rc;
}

static int write_all(int fd, const char *p, size_t len) {
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return SF_ERR_IO;
        p += w;
        len -= (size_t)w;
    }
    return SF_OK;
}

int sf_epochs_write(const sf_epochs_t *ec, int durable) {
    char tmp[4200], line[2 * EPOCHS_LINE_MAX];
    size_t i;
    int fd, rc, len;

    snprintf(tmp, sizeof(tmp), "%s.tmp", ec->path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        sf_log(SF_LOG_ERR, "STORAGE", "cannot create %s: %s", tmp, strerror(errno));
        return SF_ERR_IO;
    }
    len = snprintf(line, sizeof(line), "0\n%zu\n", ec->n);
    rc = write_all(fd, line, (size_t)len);
    for (i = 0; rc == SF_OK && i < ec->n; i++) {
        len = snprintf(line, sizeof(line), "%" PRId32 " %" PRId64 "\n", ec->v[i].epoch,
                       ec->v[i].start_offset);
        rc = write_all(fd, line, (size_t)len);
    }
    /* Durable before it replaces the old file: a crash leaves one or the other, whole. */
    if (rc == SF_OK && durable && fsync(fd) < 0)
        rc = SF_ERR_IO;
    if (close(fd) < 0 && rc == SF_OK)
        rc = SF_ERR_IO;
    if (rc == SF_OK && rename(tmp, ec->path) < 0)
        rc = SF_ERR_IO;
    if (rc != SF_OK) {
        sf_log(SF_LOG_ERR, "STORAGE", "cannot write %s: %s", ec->path, strerror(errno));
        (void)unlink(tmp);
    }
    return rc;
}

/* ---- operations ---- */

int sf_epochs_assign(sf_epochs_t *ec, int32_t epoch, int64_t start_offset) {
    if (epoch < 0 || start_offset < 0)
        return 0;
    if (ec->n > 0 && epoch <= ec->v[ec->n - 1].epoch)
        return 0;
    if (reserve(ec, ec->n + 1) != SF_OK)
        return SF_ERR_NOMEM;
    /* Epochs below @epoch stay; those starting at or after @start_offset describe offsets
     * this epoch now owns (maybeTruncateNonMonotonicEntries). */
    while (ec->n > 0 && ec->v[ec->n - 1].start_offset >= start_offset)
        ec->n--;
    ec->v[ec->n].epoch = epoch;
    ec->v[ec->n].start_offset = start_offset;
    ec->n++;
    return 1;
}

int sf_epochs_truncate_from_end(sf_epochs_t *ec, int64_t end_offset) {
    size_t n = ec->n;
    while (ec->n > 0 && ec->v[ec->n - 1].start_offset >= end_offset)
        ec->n--;
    return ec->n != n;
}

int sf_epochs_truncate_from_start(sf_epochs_t *ec, int64_t start_offset) {
    size_t drop = 0;
    int changed;
    /* An entry whose successor starts at or below the new start holds nothing any more. */
    while (drop + 1 < ec->n && ec->v[drop + 1].start_offset <= start_offset)
        drop++;
    changed = drop > 0;
    if (drop > 0) {
        memmove(ec->v, ec->v + drop, (ec->n - drop) * sizeof(*ec->v));
        ec->n -= drop;
    }
    if (ec->n > 0 && ec->v[0].start_offset < start_offset) {
        ec->v[0].start_offset = start_offset;
        changed = 1;
    }
    return changed;
}

int sf_epochs_clear(sf_epochs_t *ec) {
    int changed = ec->n > 0;
    ec->n = 0;
    return changed;
}

int32_t sf_epochs_latest(const sf_epochs_t *ec) {
    return ec->n > 0 ? ec->v[ec->n - 1].epoch : -1;
}

void sf_epochs_end_offset_for(const sf_epochs_t *ec, int32_t epoch, int64_t leo,
                              int32_t *found_epoch, int64_t *end_offset) {
    size_t lo = 0, hi = ec->n;
    *found_epoch = -1;
    *end_offset = -1;
    if (ec->n == 0 || epoch < 0)
        return;
    if (epoch == ec->v[ec->n - 1].epoch) {
        /* The epoch still being written to ends at the LEO. */
        *found_epoch = epoch;
        *end_offset = leo;
        return;
    }
    /* The first entry with an epoch above the requested one. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ec->v[mid].epoch <= epoch)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == ec->n)
        return; /* above the latest: UNDEFINED */
    if (lo == 0) {
        /* Below every cached epoch (its batches are gone from this log): where the first
         * known epoch starts, so a follower with older batches truncates to it. */
        *found_epoch = epoch;
        *end_offset = ec->v[0].start_offset;
        return;
    }
    *found_epoch = ec->v[lo - 1].epoch;
    *end_offset = ec->v[lo].start_offset;
}
