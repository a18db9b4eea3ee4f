/* The high watermarks of partitions held elsewhere, for group lag (see hwcache.h). */
#include "config.h"

#include "hwcache.h"

#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "gateway.h"
#include "group.h"
#include "view.h"

#define MAX_PARTITIONS 10000
#define READ_TIMEOUT_MS 5000

typedef struct entry {
    char *topic;
    int32_t partition;
    int64_t hw;
} entry_t;

struct sf_hwcache {
    sf_gw_t *gw;
    entry_t *entries; /* sorted by topic, then partition */
    size_t n;
    int busy; /* a read is in flight */
};

/* One read: the partitions asked for, answered in place on the admin thread. */
typedef struct reading {
    sf_hwcache_t *cache;
    sf_topic_partition_t *parts;
    size_t n, cap;
} reading_t;

/* Topic, then partition order. */
static int key_cmp(const char *ta, int32_t pa, const char *tb, int32_t pb) {
    int c = strcmp(ta, tb);
    return c ? c : (pa > pb) - (pa < pb);
}

static int tp_cmp(const void *a, const void *b) {
    const sf_topic_partition_t *x = a, *y = b;
    return key_cmp(x->topic, x->partition, y->topic, y->partition);
}

static int entry_cmp(const void *a, const void *b) {
    const entry_t *x = a, *y = b;
    return key_cmp(x->topic, x->partition, y->topic, y->partition);
}

static void entries_free(entry_t *e, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        free(e[i].topic);
    free(e);
}

sf_hwcache_t *sf_hwcache_new(sf_gw_t *gw) {
    sf_hwcache_t *c = calloc(1, sizeof(*c));
    if (c)
        c->gw = gw;
    return c;
}

void sf_hwcache_free(sf_hwcache_t *c) {
    if (!c)
        return;
    entries_free(c->entries, c->n);
    free(c);
}

int64_t sf_hwcache_get(const sf_hwcache_t *c, const char *topic, int32_t partition) {
    entry_t key = {(char *)topic, partition, 0};
    const entry_t *e = c && c->n ? bsearch(&key, c->entries, c->n, sizeof(key), entry_cmp) : NULL;
    return e ? e->hw : -1;
}

static void reading_free(void *arg) {
    reading_t *rd = arg;
    size_t i;
    for (i = 0; i < rd->n; i++)
        free((char *)rd->parts[i].topic);
    free(rd->parts);
    free(rd);
}

/* ---- which partitions ---- */

typedef struct collect {
    reading_t *rd;
    const sf_view_t *v;
} collect_t;

static void collect_offset(void *arg, const sf_goffset_t *off) {
    collect_t *cl = arg;
    reading_t *rd = cl->rd;
    const sf_cluster_topic_t *t = sf_cluster_snapshot_topic(cl->v->snap, off->topic);
    sf_topic_partition_t *tp;
    if (off->offset < 0 || !t || off->partition >= t->npartitions ||
        sf_view_partition(cl->v, off->topic, off->partition) || rd->n == MAX_PARTITIONS)
        return;
    if (rd->n == rd->cap) {
        size_t cap = rd->cap ? 2 * rd->cap : 64;
        sf_topic_partition_t *p = realloc(rd->parts, cap * sizeof(*p));
        if (!p)
            return;
        rd->parts = p;
        rd->cap = cap;
    }
    tp = &rd->parts[rd->n];
    memset(tp, 0, sizeof(*tp));
    if (!(tp->topic = strdup(off->topic)))
        return;
    tp->partition = off->partition;
    tp->offset = -1; /* until read */
    rd->n++;
}

static void collect_group(void *arg, sf_group_t *g) {
    sf_group_offsets(g, collect_offset, arg);
}

/* Sort @rd's partitions and drop the repeats (several groups on one partition). */
static void uniq(reading_t *rd) {
    size_t i, n = 0;
    qsort(rd->parts, rd->n, sizeof(*rd->parts), tp_cmp);
    for (i = 0; i < rd->n; i++) {
        if (n && !tp_cmp(&rd->parts[n - 1], &rd->parts[i]))
            free((char *)rd->parts[i].topic);
        else
            rd->parts[n++] = rd->parts[i];
    }
    rd->n = n;
}

/* ---- the read ---- */

static void run_read(sf_gw_job_t *job, sf_admin_t *a) {
    reading_t *rd = job->arg;
    sf_admin_list_offsets(a, rd->parts, rd->n, SF_OFFSET_END, READ_TIMEOUT_MS);
}

/* On the loop: the answers become the cache. A read the gateway refused or could not run
 * (busy, closing, no client: a status set) keeps the last one. */
static void read_done(sf_gw_job_t *job) {
    reading_t *rd = job->arg;
    sf_hwcache_t *c = rd->cache;
    entry_t *e = job->status ? NULL : calloc(rd->n + 1, sizeof(*e));
    size_t i, n = 0;
    c->busy = 0;
    for (i = 0; e && i < rd->n; i++) {
        if (rd->parts[i].err || rd->parts[i].offset < 0)
            continue;
        e[n].topic = (char *)rd->parts[i].topic;
        rd->parts[i].topic = NULL; /* moved */
        e[n].partition = rd->parts[i].partition;
        e[n++].hw = rd->parts[i].offset;
    }
    if (e) { /* sorted as the request was */
        entries_free(c->entries, c->n);
        c->entries = e;
        c->n = n;
    }
    sf_gw_job_free(job); /* frees the topics not moved */
}

void sf_hwcache_refresh(sf_hwcache_t *c, sf_broker_t *b, const sf_view_t *v) {
    reading_t *rd;
    collect_t cl;
    sf_gw_job_t *job;
    if (c->busy || !v || !(rd = calloc(1, sizeof(*rd))))
        return;
    rd->cache = c;
    cl.rd = rd;
    cl.v = v;
    sf_coord_each_group(sf_broker_coordinator(b), collect_group, &cl);
    if (!rd->n) {
        entries_free(c->entries, c->n); /* nothing held elsewhere any more */
        c->entries = NULL;
        c->n = 0;
        reading_free(rd);
        return;
    }
    uniq(rd);
    if (!(job = sf_gw_job_new(NULL))) {
        reading_free(rd);
        return;
    }
    job->arg = rd;
    job->free_arg = reading_free;
    job->run = run_read;
    job->done = read_done;
    c->busy = 1;
    sf_gw_submit(sf_gw_admin(c->gw), job);
}
