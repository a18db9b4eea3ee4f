/* Listing groups and deleting committed offsets in ZooKeeper (cluster.h; the layout is in
 * offsets.c). A deletion probes which leaves exist, deletes them in multi-ops checked against
 * the bucket's epoch, then, for a whole group, the znodes above them one by one (a znode that
 * still has children, kept by other tools, stays). */
#include "cluster_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "logging.h"

#define DEL_CHUNK 2000 /* leaves per multi-op: two small ops each, far below 1 MB */

/* ---- listing ---- */

struct glist {
    sf_cluster_groups_cb cb;
    void *arg;
};

static int hexval(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The group id of a znode name (undoing sf_cluster_group_znode), malloc'd. */
static char *group_of_znode(const char *z) {
    char *out = malloc(strlen(z) + 1), *o = out;
    for (; out && *z; z++) {
        int hi, lo;
        if (*z == '%' && (hi = hexval(z[1])) >= 0 && (lo = hexval(z[2])) >= 0) {
            *o++ = (char)(hi * 16 + lo);
            z += 2;
        } else {
            *o++ = *z;
        }
    }
    if (out)
        *o = '\0';
    return out;
}

static void groups_cb(int err, int zrc, char *const *children, int n, const sf_zk_stat_t *stat,
                      void *arg) {
    struct glist *l = arg;
    char **ids = calloc((size_t)n + 1, sizeof(char *));
    int i, m = 0;
    (void)zrc;
    (void)stat;
    if (err == SF_ERR_NOTFOUND)
        err = SF_OK, n = 0;
    for (i = 0; ids && err == SF_OK && i < n; i++)
        if ((ids[m] = group_of_znode(children[i])) && ids[m][0])
            m++;
        else
            free(ids[m]);
    l->cb(l->arg, !ids ? SF_ERR_NOMEM : err == SF_OK ? SF_OK : SF_ERR_IO, ids, ids ? m : 0);
    for (i = 0; ids && i < m; i++)
        free(ids[i]);
    free(ids);
    free(l);
}

int cl_list_names(sf_cluster_t *cl, const char *path, sf_cluster_groups_cb cb, void *arg) {
    struct glist *l;
    int rc;
    if (!cl || !cl_alive(cl) || !cl->registered)
        return SF_ERR_STATE;
    if (!(l = malloc(sizeof(*l))))
        return SF_ERR_NOMEM;
    l->cb = cb;
    l->arg = arg;
    if ((rc = sf_zk_get_children(cl->zk, path, NULL, NULL, groups_cb, l)) != SF_OK)
        free(l);
    return rc;
}

int sf_cluster_groups_list(sf_cluster_t *cl, sf_cluster_groups_cb cb, void *arg) {
    return cl_list_names(cl, "/consumers", cb, arg);
}

/* ---- deleting ---- */

struct odel {
    sf_cluster_t *cl;
    sf_cluster_done_cb done;
    void *arg;
    char *gz;
    char **paths; /* the leaves: 2 per item (offset, meta) */
    char *exists;
    int npaths, pending, err, whole, bucket;
    int32_t epoch;
    char **dirs; /* for a whole group: the znodes above, deepest first */
    int ndirs, next_dir;
};

static void del_free(struct odel *d) {
    int i;
    for (i = 0; i < d->npaths; i++)
        free(d->paths[i]);
    for (i = 0; i < d->ndirs; i++)
        free(d->dirs[i]);
    free(d->paths);
    free(d->dirs);
    free(d->exists);
    free(d->gz);
    free(d);
}

static void del_finish(struct odel *d) {
    d->done(d->arg, d->err);
    del_free(d);
}

static void dir_cb(int err, int zrc, void *arg);

/* The znodes above the leaves, one at a time (each only if empty). */
static void del_dirs(struct odel *d) {
    while (d->next_dir < d->ndirs && !d->cl->closing) {
        if (sf_zk_delete(d->cl->zk, d->dirs[d->next_dir++], -1, dir_cb, d) == SF_OK)
            return;
    }
    del_finish(d);
}

static void dir_cb(int err, int zrc, void *arg) {
    (void)err; /* NOTEMPTY (other content) and NONODE are fine */
    (void)zrc;
    del_dirs(arg);
}

static void leaves_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct odel *d = arg;
    (void)zrc;
    if (err != SF_OK && !d->err)
        d->err = n >= 1 && res[0].err != SF_OK && err != SF_ERR_IO ? SF_ERR_STATE : SF_ERR_IO;
    if (--d->pending > 0)
        return;
    if (d->err || !d->whole || d->cl->closing)
        del_finish(d);
    else
        del_dirs(d);
}

static void del_leaves(struct odel *d) {
    sf_zk_op_t *ops = calloc(2 * DEL_CHUNK + 1, sizeof(*ops));
    char check[64];
    int i = 0;
    snprintf(check, sizeof(check), "/coordinators/groups/%d", d->bucket);
    d->pending = 1;
    while (ops && i < d->npaths) {
        int nops = 0;
        ops[nops++] = sf_zk_op_check(check, d->epoch);
        for (; i < d->npaths && nops <= 2 * DEL_CHUNK; i++)
            if (d->exists[i])
                ops[nops++] = sf_zk_op_delete(d->paths[i], -1);
        if (nops > 1 && sf_zk_multi(d->cl->zk, ops, nops, leaves_cb, d) == SF_OK)
            d->pending++;
        else if (nops > 1)
            d->err = SF_ERR_IO;
    }
    if (!ops)
        d->err = SF_ERR_NOMEM;
    free(ops);
    leaves_cb(SF_OK, 0, NULL, 0, d);
}

struct dprobe {
    struct odel *d;
    int i;
};

static void probe_step_done(struct odel *d) {
    if (--d->pending > 0)
        return;
    if (d->err || d->cl->closing)
        del_finish(d);
    else
        del_leaves(d);
}

static void dprobe_cb(int err, int zrc, const sf_zk_stat_t *stat, void *arg) {
    struct dprobe *p = arg;
    struct odel *d = p->d;
    (void)zrc;
    (void)stat;
    d->exists[p->i] = err == SF_OK;
    if (err != SF_OK && err != SF_ERR_NOTFOUND)
        d->err = SF_ERR_IO;
    free(p);
    probe_step_done(d);
}

static int add_dir(struct odel *d, const char *fmt, const char *a, const char *b) {
    char path[2048];
    snprintf(path, sizeof(path), fmt, a, b);
    return (d->dirs[d->ndirs] = strdup(path)) ? (d->ndirs++, SF_OK) : SF_ERR_NOMEM;
}

/* The leaf paths of @v and, for a whole group, the znodes above them (deepest first). */
static int del_paths(struct odel *d, const sf_cluster_offset_t *v, int n) {
    char path[2048];
    int i, j, leaf;
    for (i = 0; i < n; i++)
        for (leaf = 0; leaf < 2; leaf++) {
            snprintf(path, sizeof(path), "/consumers/%s/%s/%s/%d", d->gz,
                     leaf ? "meta" : "offsets", v[i].topic, (int)v[i].partition);
            if (!(d->paths[d->npaths] = strdup(path)))
                return SF_ERR_NOMEM;
            d->npaths++;
        }
    if (!d->whole)
        return SF_OK;
    for (i = 0; i < n; i++) {
        for (j = 0; j < i && strcmp(v[j].topic, v[i].topic); j++)
            ;
        if (j == i && (add_dir(d, "/consumers/%s/offsets/%s", d->gz, v[i].topic) ||
                       add_dir(d, "/consumers/%s/meta/%s", d->gz, v[i].topic)))
            return SF_ERR_NOMEM;
    }
    if (add_dir(d, "/consumers/%s/offsets%s", d->gz, "") ||
        add_dir(d, "/consumers/%s/group%s", d->gz, "") ||
        add_dir(d, "/consumers/%s/meta%s", d->gz, "") || add_dir(d, "/consumers/%s%s", d->gz, ""))
        return SF_ERR_NOMEM;
    return SF_OK;
}

int sf_cluster_offsets_delete(sf_cluster_t *cl, const char *group, int bucket, int32_t epoch,
                              const sf_cluster_offset_t *v, int n, int whole,
                              sf_cluster_done_cb done, void *arg) {
    struct odel *d;
    int i;
    if (!cl || !cl_alive(cl) || !cl->registered)
        return SF_ERR_STATE;
    if (n < 0 || strlen(group) > 255 || bucket < 0)
        return SF_ERR_INVALID;
    if (!(d = calloc(1, sizeof(*d))))
        return SF_ERR_NOMEM;
    d->cl = cl;
    d->done = done;
    d->arg = arg;
    d->whole = whole;
    d->bucket = bucket;
    d->epoch = epoch;
    if (!(d->gz = malloc(3 * strlen(group) + 1)) ||
        !(d->paths = calloc((size_t)(2 * n + 1), sizeof(char *))) ||
        !(d->exists = calloc((size_t)(2 * n + 1), 1)) ||
        !(d->dirs = calloc((size_t)(2 * n + 5), sizeof(char *)))) {
        del_free(d);
        return SF_ERR_NOMEM;
    }
    sf_cluster_group_znode(group, d->gz);
    if (del_paths(d, v, n) != SF_OK) {
        del_free(d);
        return SF_ERR_NOMEM;
    }
    d->pending = 1; /* guard while issuing */
    for (i = 0; i < d->npaths; i++) {
        struct dprobe *p = malloc(sizeof(*p));
        if (p) {
            p->d = d;
            p->i = i;
        }
        if (p && sf_zk_exists(cl->zk, d->paths[i], NULL, NULL, dprobe_cb, p) == SF_OK)
            d->pending++;
        else {
            free(p);
            d->err = SF_ERR_IO;
        }
    }
    probe_step_done(d);
    return SF_OK;
}
