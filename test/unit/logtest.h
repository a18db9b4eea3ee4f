/* Helpers shared by the storage unit tests (check_log.c, check_logdir.c): small log configs,
 * batches built and appended, slices read back and checked, files of a partition. Needs
 * tmpdir.h first. */
#ifndef SF_TEST_LOGTEST_H
#define SF_TEST_LOGTEST_H

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "log.h"
#include "recbatch.h"

static inline void small_config(sf_log_config_t *cfg) {
    sf_log_config_default(cfg);
    cfg->index_interval_bytes = 256;
}

/* Build one uncompressed batch of @n records with values of @vsize bytes and timestamps
 * @ts, @ts + 1, ... into @wb (appended). */
static inline void make_batch(sf_wbuf_t *wb, int n, size_t vsize, int64_t ts) {
    sf_recbatch_record_t recs[64];
    static uint8_t value[4096];
    int i;
    ck_assert_int_le(n, 64);
    ck_assert_uint_le(vsize, sizeof(value));
    memset(value, 'x', sizeof(value));
    memset(recs, 0, sizeof(recs));
    for (i = 0; i < n; i++) {
        recs[i].timestamp = ts + i;
        recs[i].key.p = NULL;
        recs[i].key.len = -1;
        recs[i].value.p = value;
        recs[i].value.len = (int32_t)vsize;
    }
    ck_assert_int_eq(sf_recbatch_build(wb, 0, ts, recs, n), SF_OK);
}

/* Append one batch; returns its first offset. */
static inline int64_t append_batch(sf_log_t *log, int n, size_t vsize, int64_t ts,
                                   int64_t now_ms) {
    sf_wbuf_t wb;
    sf_log_append_info_t info;
    sf_wbuf_init(&wb);
    make_batch(&wb, n, vsize, ts);
    ck_assert_int_eq(sf_log_append(log, wb.p, wb.len, now_ms, &info), SF_OK);
    ck_assert_int_eq(info.RecordCount, n);
    ck_assert(info.LastOffset == info.FirstOffset + n - 1);
    sf_wbuf_free(&wb);
    return info.FirstOffset;
}

/* Read a slice's bytes into a new buffer. */
static inline uint8_t *slice_bytes(const sf_log_slice_t *sl) {
    uint8_t *p = malloc(sl->len ? sl->len : 1);
    size_t got = 0;
    ck_assert_ptr_nonnull(p);
    while (got < sl->len) {
        ssize_t r = pread(sl->fd, p + got, sl->len - got, (off_t)(sl->pos + (int64_t)got));
        ck_assert_int_gt(r, 0);
        got += (size_t)r;
    }
    return p;
}

/* Check a slice holds whole valid batches with consecutive offsets starting with the batch
 * that contains @offset; returns the number of batches and the next offset after them. */
static inline int check_slice(const sf_log_slice_t *sl, int64_t offset, int64_t *next) {
    uint8_t *p = slice_bytes(sl);
    size_t pos = 0;
    int n = 0;
    int64_t expect = -1;
    while (pos < sl->len) {
        sf_recbatch_hdr_t hdr;
        size_t size;
        ck_assert_int_eq(sf_recbatch_header_parse(p + pos, sl->len - pos, &hdr, &size), SF_OK);
        ck_assert_int_eq(sf_recbatch_validate(p + pos, size, &hdr), SF_OK);
        if (n == 0)
            ck_assert(hdr.BaseOffset <= offset && offset < sf_recbatch_next_offset(&hdr));
        else
            ck_assert(hdr.BaseOffset == expect);
        expect = sf_recbatch_next_offset(&hdr);
        pos += size;
        n++;
    }
    free(p);
    if (next)
        *next = expect;
    return n;
}

static inline void partition_file(char *buf, size_t size, const char *topic, int part,
                                  int64_t base, const char *ext) {
    snprintf(buf, size, "%s/%s-%d/%020" PRId64 "%s", tmpdir, topic, part, base, ext);
}

static inline int64_t file_size(const char *path) {
    struct stat st;
    if (stat(path, &st) < 0)
        return -1;
    return st.st_size;
}

static inline void write_file(const char *path, const uint8_t *p, size_t len) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(p, 1, len, f), len);
    fclose(f);
}

static inline int file_exists(const char *path) {
    return access(path, F_OK) == 0;
}

static inline void segment_config(sf_log_config_t *cfg) {
    small_config(cfg);
    cfg->segment_bytes = 4096;
}

/* 40 batches of 3 records: offsets 0..119, record k with timestamp 1000 + k, about five
 * batches per 4 KiB segment. */
static inline void fill_segments(sf_log_t *log) {
    int i;
    for (i = 0; i < 40; i++)
        append_batch(log, 3, 200, 1000 + 3 * i, 0);
}

/* The base offsets (ascending) of the segments on disk in @dir/@topic-@part, up to @leo: a
 * segment's files are named by its base offset. */
static inline size_t segment_bases(const char *dir, const char *topic, int part, int64_t leo,
                                   int64_t *bases, size_t max) {
    char path[512];
    size_t n = 0;
    int64_t off;
    for (off = 0; off <= leo && n < max; off++) {
        snprintf(path, sizeof(path), "%s/%s-%d/%020" PRId64 ".log", dir, topic, part, off);
        if (file_exists(path))
            bases[n++] = off;
    }
    return n;
}

static inline uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    uint8_t *p;
    int64_t n = file_size(path);
    ck_assert_ptr_nonnull(f);
    p = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return p;
}

#endif
