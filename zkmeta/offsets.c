/* Committed offsets in ZooKeeper (cluster.h): /consumers/<group>/offsets/<topic>/<partition>
 * holds the offset in decimal, as Kafka's ZooKeeper-era consumers wrote it (so tools that read
 * ZooKeeper see it), and /consumers/<group>/meta/<topic>/<partition> the leader epoch,
 * metadata and commit time. A commit creates the missing topic znodes first (idempotent), then
 * writes the leaves in multi-ops that check the coordinator bucket's epoch; when a leaf
 * existed or vanished against the caller's hint, the chunk's leaves are probed and written
 * again. */
#include "cluster_int.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "logging.h"

#define OFF_ROUNDS 3           /* write rounds (topic znodes, then leaves) before giving up */
#define OFF_CHUNK (800 * 1000) /* bytes of ops per multi-op, under SF_ZK_MAX_REQUEST */

void sf_cluster_group_znode(const char *group, char *out) {
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *s = (const unsigned char *)group;
    for (; *s; s++) {
        int plain = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                    (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' ||
                    (*s == '.' && s != (const unsigned char *)group);
        if (plain) {
            *out++ = (char)*s;
        } else {
            *out++ = '%';
            *out++ = hex[*s >> 4];
            *out++ = hex[*s & 15];
        }
    }
    *out = '\0';
}

static char *group_dir(const char *group) {
    char *gz = malloc(3 * strlen(group) + 1);
    if (gz)
        sf_cluster_group_znode(group, gz);
    return gz;
}

/* ---- loading ---- */

struct oload;

struct oentry {
    struct oload *l;
    char *topic, *metadata;
    int32_t partition, leader_epoch;
    int64_t offset, commit_ms;
    int have;
};

struct oload {
    sf_cluster_t *cl;
    sf_cluster_offsets_cb cb;
    void *arg;
    char *gz, *state;
    struct oentry **e;
    int n, cap, pending, err;
};

static void load_finish(struct oload *l) {
    sf_cluster_offset_t *v = calloc((size_t)l->n + 1, sizeof(*v));
    int i, m = 0;
    if (!v && !l->err)
        l->err = SF_ERR_NOMEM;
    for (i = 0; v && i < l->n; i++) {
        struct oentry *e = l->e[i];
        if (!e->have)
            continue;
        v[m].topic = e->topic;
        v[m].partition = e->partition;
        v[m].offset = e->offset;
        v[m].leader_epoch = e->leader_epoch;
        v[m].metadata = e->metadata ? e->metadata : "";
        v[m].commit_ms = e->commit_ms;
        m++;
    }
    if (!l->cl->closing)
        l->cb(l->arg, l->err ? SF_ERR_IO : SF_OK, v, l->err ? 0 : m, l->state);
    else
        l->cb(l->arg, SF_ERR_IO, NULL, 0, NULL);
    free(v);
    for (i = 0; i < l->n; i++) {
        free(l->e[i]->topic);
        free(l->e[i]->metadata);
        free(l->e[i]);
    }
    free(l->e);
    free(l->gz);
    free(l->state);
    free(l);
}

static void load_step_done(struct oload *l) {
    if (--l->pending == 0)
        load_finish(l);
}

static void load_issued(struct oload *l, int rc) {
    if (rc == SF_OK)
        l->pending++;
    else
        l->err = rc;
}

static void offset_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                      void *arg) {
    struct oentry *e = arg;
    char *end;
    (void)zrc;
    (void)len;
    if (err == SF_OK && data) {
        long long v = strtoll(data, &end, 10);
        if (end != data && *end == '\0' && v >= -1) {
            e->offset = v;
            e->have = 1;
            if (!e->commit_ms && stat)
                e->commit_ms = stat->mtime;
        }
    } else if (err != SF_ERR_NOTFOUND) {
        e->l->err = err;
    }
    load_step_done(e->l);
}

static void meta_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                    void *arg) {
    struct oentry *e = arg;
    json_t *o = err == SF_OK && data ? json_loadb(data, (size_t)len, 0, NULL) : NULL;
    json_t *le = json_object_get(o, "leader_epoch"), *md = json_object_get(o, "metadata");
    json_t *ts = json_object_get(o, "commit_timestamp");
    (void)zrc;
    (void)stat;
    if (json_is_integer(le) && json_integer_value(le) >= -1 && json_integer_value(le) <= INT32_MAX)
        e->leader_epoch = (int32_t)json_integer_value(le);
    if (json_is_string(md) && !(e->metadata = strdup(json_string_value(md))))
        e->l->err = SF_ERR_NOMEM;
    if (json_is_integer(ts))
        e->commit_ms = json_integer_value(ts);
    if (err != SF_OK && err != SF_ERR_NOTFOUND)
        e->l->err = err;
    json_decref(o);
    load_step_done(e->l);
}

static void read_partition(struct oload *l, const char *topic, const char *part) {
    struct oentry *e;
    char path[2048];
    int32_t p;
    if (sf_znode_parse_id(part, &p) != SF_OK)
        return;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        struct oentry **v = realloc(l->e, (size_t)cap * sizeof(*v));
        if (!v) {
            l->err = SF_ERR_NOMEM;
            return;
        }
        l->e = v;
        l->cap = cap;
    }
    if (!(e = calloc(1, sizeof(*e))) || !(e->topic = strdup(topic))) {
        free(e);
        l->err = SF_ERR_NOMEM;
        return;
    }
    e->l = l;
    e->partition = p;
    e->leader_epoch = -1;
    l->e[l->n++] = e;
    snprintf(path, sizeof(path), "/consumers/%s/offsets/%s/%s", l->gz, topic, part);
    load_issued(l, sf_zk_get(l->cl->zk, path, NULL, NULL, offset_cb, e));
    snprintf(path, sizeof(path), "/consumers/%s/meta/%s/%s", l->gz, topic, part);
    load_issued(l, sf_zk_get(l->cl->zk, path, NULL, NULL, meta_cb, e));
}

struct otopic {
    struct oload *l;
    char name[];
};

static void partitions_cb(int err, int zrc, char *const *children, int n,
                          const sf_zk_stat_t *stat, void *arg) {
    struct otopic *t = arg;
    struct oload *l = t->l;
    int i;
    (void)zrc;
    (void)stat;
    if (err != SF_OK && err != SF_ERR_NOTFOUND)
        l->err = err;
    for (i = 0; err == SF_OK && i < n && !l->err; i++)
        read_partition(l, t->name, children[i]);
    free(t);
    load_step_done(l);
}

static void topics_cb(int err, int zrc, char *const *children, int n, const sf_zk_stat_t *stat,
                      void *arg) {
    struct oload *l = arg;
    int i;
    (void)zrc;
    (void)stat;
    if (err != SF_OK && err != SF_ERR_NOTFOUND)
        l->err = err;
    for (i = 0; err == SF_OK && i < n && !l->err; i++) {
        size_t len = strlen(children[i]);
        struct otopic *t = malloc(sizeof(*t) + len + 1);
        char path[2048];
        if (!t) {
            l->err = SF_ERR_NOMEM;
            break;
        }
        t->l = l;
        memcpy(t->name, children[i], len + 1);
        snprintf(path, sizeof(path), "/consumers/%s/offsets/%s", l->gz, t->name);
        load_issued(l, sf_zk_get_children(l->cl->zk, path, NULL, NULL, partitions_cb, t));
        if (l->err)
            free(t);
    }
    load_step_done(l);
}

static void state_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                     void *arg) {
    struct oload *l = arg;
    (void)zrc;
    (void)stat;
    if (err == SF_OK && data && len > 0 && !(l->state = strdup(data)))
        l->err = SF_ERR_NOMEM;
    else if (err != SF_OK && err != SF_ERR_NOTFOUND)
        l->err = err;
    load_step_done(l);
}

int sf_cluster_offsets_load(sf_cluster_t *cl, const char *group, sf_cluster_offsets_cb cb,
                            void *arg) {
    struct oload *l;
    char path[2048];
    int rc;
    if (!cl || !cl_alive(cl) || !cl->registered)
        return SF_ERR_STATE;
    if (strlen(group) > 255)
        return SF_ERR_INVALID;
    if (!(l = calloc(1, sizeof(*l))) || !(l->gz = group_dir(group))) {
        free(l);
        return SF_ERR_NOMEM;
    }
    l->cl = cl;
    l->cb = cb;
    l->arg = arg;
    snprintf(path, sizeof(path), "/consumers/%s/offsets", l->gz);
    rc = sf_zk_get_children(cl->zk, path, NULL, NULL, topics_cb, l);
    if (rc != SF_OK) {
        free(l->gz);
        free(l);
        return rc;
    }
    l->pending = 1;
    snprintf(path, sizeof(path), "/consumers/%s/group", l->gz);
    load_issued(l, sf_zk_get(cl->zk, path, NULL, NULL, state_cb, l));
    return SF_OK;
}

/* ---- the group's state ---- */

struct gstate {
    sf_cluster_t *cl;
    sf_cluster_done_cb done;
    void *arg;
    char *path, *parent, *check, *data;
    int32_t epoch;
    int create; /* the state znode was missing: create it (once) */
};

static void gstate_finish(struct gstate *w, int err) {
    w->done(w->arg, err);
    free(w->path);
    free(w->parent);
    free(w->check);
    free(w->data);
    free(w);
}

static void gstate_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg);

static void gstate_issue(struct gstate *w) {
    int len = (int)strlen(w->data);
    sf_zk_op_t ops[2];
    ops[0] = sf_zk_op_check(w->check, w->epoch);
    ops[1] = w->create ? sf_zk_op_create(w->path, w->data, len, 0)
                       : sf_zk_op_set(w->path, w->data, len, -1);
    if (sf_zk_multi(w->cl->zk, ops, 2, gstate_multi_cb, w) != SF_OK)
        gstate_finish(w, SF_ERR_IO);
}

static void gstate_parent_cb(int err, int zrc, const char *path, const sf_zk_stat_t *stat,
                             void *arg) {
    struct gstate *w = arg;
    (void)err; /* it exists now, or the create fails and says why */
    (void)zrc;
    (void)path;
    (void)stat;
    if (w->cl->closing)
        gstate_finish(w, SF_ERR_IO);
    else
        gstate_issue(w);
}

static void gstate_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct gstate *w = arg;
    (void)zrc;
    if (err != SF_OK && !w->cl->closing && !w->create && n >= 2 &&
        res[1].err == SF_ERR_NOTFOUND) {
        w->create = 1;
        if (sf_zk_create(w->cl->zk, w->parent, NULL, 0, SF_ZK_CREATE_PARENTS, gstate_parent_cb,
                         w) != SF_OK)
            gstate_finish(w, SF_ERR_IO);
        return;
    }
    gstate_finish(w, err == SF_OK                                    ? SF_OK
                     : n >= 1 && res[0].err != SF_OK && err != SF_ERR_IO ? SF_ERR_STATE
                                                                        : SF_ERR_IO);
}

int sf_cluster_group_state_write(sf_cluster_t *cl, const char *group, int bucket, int32_t epoch,
                                 const char *data, sf_cluster_done_cb done, void *arg) {
    struct gstate *w;
    char *gz, buf[2048];
    if (!cl || !cl_alive(cl) || !cl->registered)
        return SF_ERR_STATE;
    if (strlen(group) > 255 || bucket < 0)
        return SF_ERR_INVALID;
    if (strlen(data) > OFF_CHUNK)
        return SF_ERR_TOOLARGE;
    if (!(w = calloc(1, sizeof(*w))) || !(gz = group_dir(group))) {
        free(w);
        return SF_ERR_NOMEM;
    }
    w->cl = cl;
    w->done = done;
    w->arg = arg;
    w->epoch = epoch;
    snprintf(buf, sizeof(buf), "/consumers/%s/group", gz);
    w->path = strdup(buf);
    snprintf(buf, sizeof(buf), "/consumers/%s", gz);
    w->parent = strdup(buf);
    snprintf(buf, sizeof(buf), "/coordinators/groups/%d", bucket);
    w->check = strdup(buf);
    w->data = strdup(data);
    free(gz);
    if (!w->path || !w->parent || !w->check || !w->data) {
        free(w->path);
        free(w->parent);
        free(w->check);
        free(w->data);
        free(w);
        return SF_ERR_NOMEM;
    }
    gstate_issue(w);
    return SF_OK;
}

/* ---- committing ---- */

struct ocommit {
    sf_cluster_t *cl;
    sf_cluster_done_cb done;
    void *arg;
    sf_cluster_offset_t *v;
    int n, bucket, round, pending;
    int32_t epoch;
    char *gz;
    char (*exists)[2]; /* per item: its offset leaf and its meta leaf exist */
};

static void commit_round(struct ocommit *c);

static void commit_finish(struct ocommit *c) {
    int i;
    for (i = 0; i < c->n; i++)
        if (c->v[i].err == SF_AGAIN)
            c->v[i].err = SF_ERR_IO;
    c->done(c->arg, SF_OK);
    free(c->exists);
    free(c->gz);
    free(c);
}

/* One asynchronous step of a round completed: the next round once all have. */
static void commit_step_done(struct ocommit *c) {
    if (--c->pending > 0)
        return;
    if (c->cl->closing || ++c->round >= 2 * OFF_ROUNDS)
        commit_finish(c);
    else
        commit_round(c);
}

static void commit_issued(struct ocommit *c, int i, int rc) {
    if (rc == SF_OK)
        c->pending++;
    else if (i >= 0)
        c->v[i].err = SF_ERR_IO;
}

/* -- probing a leaf whose existence the hint got wrong -- */

struct oprobe {
    struct ocommit *c;
    int item, leaf;
};

static void probe_cb(int err, int zrc, const sf_zk_stat_t *stat, void *arg) {
    struct oprobe *pr = arg;
    struct ocommit *c = pr->c;
    (void)zrc;
    (void)stat;
    if (err == SF_OK || err == SF_ERR_NOTFOUND)
        c->exists[pr->item][pr->leaf] = err == SF_OK;
    else
        c->v[pr->item].err = SF_ERR_IO;
    free(pr);
    commit_step_done(c);
}

static void probe(struct ocommit *c, int i) {
    int leaf;
    for (leaf = 0; leaf < 2; leaf++) {
        struct oprobe *pr = malloc(sizeof(*pr));
        char path[2048];
        int rc = SF_ERR_NOMEM;
        snprintf(path, sizeof(path), "/consumers/%s/%s/%s/%d", c->gz, leaf ? "meta" : "offsets",
                 c->v[i].topic, (int)c->v[i].partition);
        if (pr) {
            pr->c = c;
            pr->item = i;
            pr->leaf = leaf;
            if ((rc = sf_zk_exists(c->cl->zk, path, NULL, NULL, probe_cb, pr)) != SF_OK)
                free(pr);
        }
        commit_issued(c, i, rc);
    }
}

/* -- the leaves, in chunks of one multi-op -- */

struct ochunk {
    struct ocommit *c;
    int *items, nitems; /* in op order: ops 1 + 2j and 2 + 2j are those of items[j] */
    sf_zk_op_t *ops;
    char **bufs;
    int nops, nbufs;
};

static void chunk_free(struct ochunk *k) {
    int i;
    for (i = 0; i < k->nbufs; i++)
        free(k->bufs[i]);
    free(k->bufs);
    free(k->ops);
    free(k->items);
    free(k);
}

static void chunk_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct ochunk *k = arg;
    struct ocommit *c = k->c;
    int i, failed = -1, result = SF_OK;
    for (i = 0; err != SF_OK && i < n && failed < 0; i++)
        if (res[i].err != SF_OK)
            failed = i;
    if (err != SF_OK) {
        if (failed == 0 && (err == SF_ERR_STATE || err == SF_ERR_NOTFOUND))
            result = SF_ERR_STATE; /* the bucket's epoch moved on */
        else if (failed > 0 && (err == SF_ERR_EXISTS || err == SF_ERR_NOTFOUND))
            result = SF_AGAIN; /* a wrong hint: probed, then written again */
        else
            result = SF_ERR_IO;
        sf_log(SF_LOG_DEBUG, "ZK", "offset commit multi-op failed: %s", sf_zk_strerror(zrc));
    }
    for (i = 0; i < k->nitems; i++) {
        c->v[k->items[i]].err = result;
        /* the hints were wrong (another commit of the same new partitions got there first):
         * look at every leaf of the chunk, so that one more round writes it all */
        if (result == SF_AGAIN)
            probe(c, k->items[i]);
    }
    chunk_free(k);
    commit_step_done(c);
}

static char *chunk_keep(struct ochunk *k, char *s) {
    if (s)
        k->bufs[k->nbufs++] = s;
    return s;
}

static char *meta_json(const sf_cluster_offset_t *o) {
    json_t *j = json_object();
    char *s = NULL;
    if (j && !json_object_set_new(j, "version", json_integer(1)) &&
        !json_object_set_new(j, "leader_epoch", json_integer(o->leader_epoch)) &&
        !json_object_set_new(j, "metadata", json_string(o->metadata)) &&
        !json_object_set_new(j, "commit_timestamp", json_integer(o->commit_ms)))
        s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return s;
}

/* The two ops of item @i: its offset leaf and its meta leaf, created or set as they exist. */
static int chunk_item(struct ochunk *k, int i, size_t *bytes) {
    struct ocommit *c = k->c;
    const sf_cluster_offset_t *o = &c->v[i];
    char path[2048], num[32], *p[2], *d[2];
    int leaf;
    snprintf(num, sizeof(num), "%" PRId64, o->offset);
    for (leaf = 0; leaf < 2; leaf++) {
        snprintf(path, sizeof(path), "/consumers/%s/%s/%s/%d", c->gz, leaf ? "meta" : "offsets",
                 o->topic, (int)o->partition);
        p[leaf] = chunk_keep(k, strdup(path));
        d[leaf] = chunk_keep(k, leaf ? meta_json(o) : strdup(num));
        if (!p[leaf] || !d[leaf])
            return SF_ERR_NOMEM;
    }
    for (leaf = 0; leaf < 2; leaf++) {
        int len = (int)strlen(d[leaf]);
        k->ops[k->nops++] = c->exists[i][leaf] ? sf_zk_op_set(p[leaf], d[leaf], len, -1)
                                               : sf_zk_op_create(p[leaf], d[leaf], len, 0);
        *bytes += strlen(p[leaf]) + (size_t)len + 32;
    }
    k->items[k->nitems++] = i;
    return SF_OK;
}

/* Issue the multi-op for the items from @from on that fit in one; returns the next item. */
static int chunk_issue(struct ocommit *c, int from) {
    struct ochunk *k = calloc(1, sizeof(*k));
    size_t bytes = 64;
    char path[64];
    int i = from, rc = SF_ERR_NOMEM, left = c->n - from;
    if (!k || !(k->ops = calloc((size_t)(2 * left + 1), sizeof(*k->ops))) ||
        !(k->bufs = calloc((size_t)(4 * left + 1), sizeof(char *))) ||
        !(k->items = calloc((size_t)left, sizeof(int))))
        goto fail;
    k->c = c;
    snprintf(path, sizeof(path), "/coordinators/groups/%d", c->bucket);
    if (!chunk_keep(k, strdup(path)))
        goto fail;
    k->ops[k->nops++] = sf_zk_op_check(k->bufs[0], c->epoch);
    for (; i < c->n && bytes < OFF_CHUNK; i++)
        if (c->v[i].err == SF_AGAIN && chunk_item(k, i, &bytes) != SF_OK)
            goto fail;
    if (!k->nitems) {
        chunk_free(k);
        return i;
    }
    if ((rc = sf_zk_multi(c->cl->zk, k->ops, k->nops, chunk_cb, k)) != SF_OK)
        goto fail;
    c->pending++;
    return i;
fail:
    for (i = from; i < c->n; i++)
        if (c->v[i].err == SF_AGAIN)
            c->v[i].err = rc == SF_ERR_NOMEM ? SF_ERR_NOMEM : SF_ERR_IO;
    if (k)
        chunk_free(k);
    return c->n;
}

/* -- rounds: the topic znodes a new leaf needs, then the leaves -- */

static void parent_cb(int err, int zrc, const char *path, const sf_zk_stat_t *stat, void *arg) {
    (void)err; /* a leaf without its parent fails in the multi-op, which says why */
    (void)zrc;
    (void)path;
    (void)stat;
    commit_step_done(arg);
}

static void create_parents(struct ocommit *c) {
    int i, j, leaf;
    for (i = 0; i < c->n; i++) {
        const char *t = c->v[i].topic;
        if (c->v[i].err != SF_AGAIN || (c->exists[i][0] && c->exists[i][1]))
            continue;
        for (j = 0; j < i; j++) /* each topic once (commits name few topics) */
            if (c->v[j].err == SF_AGAIN && !(c->exists[j][0] && c->exists[j][1]) &&
                !strcmp(c->v[j].topic, t))
                break;
        if (j < i)
            continue;
        for (leaf = 0; leaf < 2; leaf++) {
            char path[2048];
            snprintf(path, sizeof(path), "/consumers/%s/%s/%s", c->gz, leaf ? "meta" : "offsets",
                     t);
            commit_issued(c, -1, sf_zk_create(c->cl->zk, path, NULL, 0, SF_ZK_CREATE_PARENTS,
                                              parent_cb, c));
        }
    }
}

static void commit_round(struct ocommit *c) {
    int i, left = 0;
    for (i = 0; i < c->n; i++)
        left += c->v[i].err == SF_AGAIN;
    if (!left) {
        commit_finish(c);
        return;
    }
    c->pending = 1; /* guard while issuing */
    if (c->round % 2 == 0)
        create_parents(c);
    else
        for (i = 0; i < c->n;)
            i = chunk_issue(c, i);
    commit_step_done(c);
}

int sf_cluster_offsets_commit(sf_cluster_t *cl, const char *group, int bucket, int32_t epoch,
                              sf_cluster_offset_t *v, int n, sf_cluster_done_cb done, void *arg) {
    struct ocommit *c;
    int i;
    if (!cl || !cl_alive(cl) || !cl->registered)
        return SF_ERR_STATE;
    if (n < 1 || strlen(group) > 255 || bucket < 0)
        return SF_ERR_INVALID;
    if (!(c = calloc(1, sizeof(*c))) || !(c->gz = group_dir(group)) ||
        !(c->exists = calloc((size_t)n, sizeof(*c->exists)))) {
        if (c)
            free(c->gz);
        free(c);
        return SF_ERR_NOMEM;
    }
    c->cl = cl;
    c->done = done;
    c->arg = arg;
    c->v = v;
    c->n = n;
    c->bucket = bucket;
    c->epoch = epoch;
    for (i = 0; i < n; i++) {
        v[i].err = SF_AGAIN;
        c->exists[i][0] = c->exists[i][1] = v[i].exists != 0;
    }
    commit_round(c);
    return SF_OK;
}
