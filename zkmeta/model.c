/* The watched metadata model: every broker, topic, partition state and topic config znode, and
 * the dynamic broker configs of this broker and of the cluster default, read and watched, and
 * the snapshots built from it (cluster_int.h). */
#include "cluster_int.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "err.h"
#include "logging.h"
#include "znode.h"

static void read_children(sf_cluster_t *cl, int kind);
static void read_broker(sf_cluster_t *cl, struct cl_broker *b);
static void read_topic(sf_cluster_t *cl, struct cl_topic *t, int arm);
static void read_pstate(sf_cluster_t *cl, struct cl_topic *t, int32_t p);
static void read_config(sf_cluster_t *cl, struct cl_topic *t);
static void read_bconfig(sf_cluster_t *cl, int which);

/* ---- the model: brokers and topics ---- */

static struct cl_broker *find_broker(sf_cluster_t *cl, int32_t id) {
    int i;
    for (i = 0; i < cl->nbrokers; i++)
        if (cl->brokers[i]->b.id == id)
            return cl->brokers[i];
    return NULL;
}

static struct cl_broker *add_broker(sf_cluster_t *cl, int32_t id) {
    struct cl_broker *b;
    if (cl->nbrokers == cl->capbrokers) {
        int cap = cl->capbrokers ? cl->capbrokers * 2 : 8;
        struct cl_broker **v = realloc(cl->brokers, (size_t)cap * sizeof(*v));
        if (!v)
            return NULL;
        cl->brokers = v;
        cl->capbrokers = cap;
    }
    b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->node.inc = ++cl->next_inc;
    b->b.id = id;
    b->b.port = -1;
    b->b.epoch = -1;
    cl->brokers[cl->nbrokers++] = b;
    return b;
}

void cl_broker_free(struct cl_broker *b) {
    sf_cluster_broker_clear(&b->b);
    free(b);
}

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    while (*s)
        h = (h ^ (uint8_t)*s++) * 1099511628211ULL;
    return h;
}

static struct cl_topic *find_topic(sf_cluster_t *cl, const char *name) {
    struct cl_topic *t;
    if (!cl->nbuckets)
        return NULL;
    for (t = cl->buckets[hash_str(name) & (cl->nbuckets - 1)]; t; t = t->hnext)
        if (!strcmp(t->name, name))
            return t;
    return NULL;
}

static struct cl_topic *add_topic(sf_cluster_t *cl, const char *name) {
    struct cl_topic *t;
    size_t h;
    if (cl->ntopics >= cl->nbuckets) {
        size_t i, nb = cl->nbuckets ? cl->nbuckets * 2 : 64;
        struct cl_topic **v = calloc(nb, sizeof(*v));
        if (!v)
            return NULL;
        for (i = 0; i < cl->nbuckets; i++) {
            struct cl_topic *x, *next;
            for (x = cl->buckets[i]; x; x = next) {
                next = x->hnext;
                h = hash_str(x->name) & (nb - 1);
                x->hnext = v[h];
                v[h] = x;
            }
        }
        free(cl->buckets);
        cl->buckets = v;
        cl->nbuckets = nb;
    }
    t = calloc(1, sizeof(*t));
    if (!t || !(t->name = strdup(name))) {
        free(t);
        return NULL;
    }
    t->node.inc = ++cl->next_inc;
    t->cfg.inc = ++cl->next_inc;
    h = hash_str(name) & (cl->nbuckets - 1);
    t->hnext = cl->buckets[h];
    cl->buckets[h] = t;
    cl->ntopics++;
    return t;
}

void cl_topic_free(struct cl_topic *t) {
    int i;
    for (i = 0; i < t->nparts; i++)
        sf_cluster_partition_clear(&t->parts[i].p);
    free(t->parts);
    sf_cluster_configs_free(t->configs, t->nconfigs);
    sf_cluster_topic_unref(t->built);
    free(t->name);
    free(t);
}

static void remove_topic(sf_cluster_t *cl, struct cl_topic *t) {
    struct cl_topic **pp = &cl->buckets[hash_str(t->name) & (cl->nbuckets - 1)];
    while (*pp && *pp != t)
        pp = &(*pp)->hnext;
    if (*pp)
        *pp = t->hnext;
    cl->ntopics--;
    cl_topic_free(t);
}

/* ---- snapshots ---- */

static int copy_ints(const int32_t *src, int n, int32_t **dst) {
    *dst = NULL;
    if (n <= 0)
        return SF_OK;
    *dst = malloc((size_t)n * sizeof(int32_t));
    if (!*dst)
        return SF_ERR_NOMEM;
    memcpy(*dst, src, (size_t)n * sizeof(int32_t));
    return SF_OK;
}

static int copy_broker(sf_cluster_broker_t *dst, const sf_cluster_broker_t *src) {
    int i;
    memset(dst, 0, sizeof(*dst));
    dst->id = src->id;
    dst->port = src->port;
    dst->epoch = src->epoch;
    if (src->host && !(dst->host = strdup(src->host)))
        return SF_ERR_NOMEM;
    if (src->rack && !(dst->rack = strdup(src->rack)))
        return SF_ERR_NOMEM;
    if (src->nendpoints) {
        dst->endpoints = calloc((size_t)src->nendpoints, sizeof(char *));
        if (!dst->endpoints)
            return SF_ERR_NOMEM;
        for (i = 0; i < src->nendpoints; i++) {
            if (!(dst->endpoints[i] = strdup(src->endpoints[i])))
                return SF_ERR_NOMEM;
            dst->nendpoints = i + 1;
        }
    }
    return SF_OK;
}

/* A copy of @n config entries into *@dst (NULL when none); on no memory what was copied is
 * left in *@dst / *@ndst for the caller to free. */
static int copy_configs(const sf_cluster_config_entry_t *src, int n,
                        sf_cluster_config_entry_t **dst, int *ndst) {
    int i;
    *dst = NULL;
    *ndst = 0;
    if (n <= 0)
        return SF_OK;
    if (!(*dst = calloc((size_t)n, sizeof(**dst))))
        return SF_ERR_NOMEM;
    for (i = 0; i < n; i++) {
        (*dst)[i].name = strdup(src[i].name);
        (*dst)[i].value = strdup(src[i].value);
        *ndst = i + 1;
        if (!(*dst)[i].name || !(*dst)[i].value)
            return SF_ERR_NOMEM;
    }
    return SF_OK;
}

static int copy_topic(sf_cluster_topic_t *dst, const struct cl_topic *t) {
    int i;
    memset(dst, 0, sizeof(*dst));
    if (!(dst->name = strdup(t->name)))
        return SF_ERR_NOMEM;
    memcpy(dst->topic_id, t->topic_id, 16);
    dst->znode_version = t->version;
    if (t->nparts) {
        dst->partitions = calloc((size_t)t->nparts, sizeof(*dst->partitions));
        if (!dst->partitions)
            return SF_ERR_NOMEM;
        dst->npartitions = t->nparts;
        for (i = 0; i < t->nparts; i++) {
            const struct cl_part *src = &t->parts[i];
            sf_cluster_partition_t *p = &dst->partitions[i];
            p->partition = i;
            p->leader = src->have ? src->p.leader : -1;
            p->leader_epoch = src->have ? src->p.leader_epoch : -1;
            p->controller_epoch = src->have ? src->p.controller_epoch : -1;
            p->state_version = src->have ? src->p.state_version : -1;
            if (copy_ints(src->p.replicas, src->p.nreplicas, &p->replicas) ||
                copy_ints(src->p.adding, src->p.nadding, &p->adding) ||
                copy_ints(src->p.removing, src->p.nremoving, &p->removing))
                return SF_ERR_NOMEM;
            p->nreplicas = src->p.nreplicas;
            p->nadding = src->p.nadding;
            p->nremoving = src->p.nremoving;
            if (src->have) {
                if (copy_ints(src->p.isr, src->p.nisr, &p->isr))
                    return SF_ERR_NOMEM;
                p->nisr = src->p.nisr;
            }
        }
    }
    return copy_configs(t->configs, t->nconfigs, &dst->configs, &dst->nconfigs);
}

/* The topic as the next snapshot shows it: the last copy when nothing changed (shared, so one
 * change does not copy every partition of every topic), else a new one. A reference; NULL on
 * no memory. */
static sf_cluster_topic_t *built_topic(struct cl_topic *t) {
    sf_cluster_topic_t tmp, *nt;
    if (t->built && !t->changed)
        return sf_cluster_topic_ref(t->built);
    if (copy_topic(&tmp, t) != SF_OK || !(nt = sf_cluster_topic_new(&tmp))) {
        sf_cluster_topic_clear(&tmp);
        return NULL;
    }
    sf_cluster_topic_unref(t->built);
    t->built = nt;
    t->changed = 0;
    return sf_cluster_topic_ref(nt);
}

static sf_cluster_snapshot_t *build_snapshot(sf_cluster_t *cl) {
    sf_cluster_snapshot_t *snap;
    sf_cluster_broker_t *brokers = NULL;
    sf_cluster_topic_t **topics = NULL;
    char *cid = NULL;
    int nb = 0, nt = 0, i;
    size_t h;

    if (cl->nbrokers && !(brokers = calloc((size_t)cl->nbrokers, sizeof(*brokers))))
        goto nomem;
    for (i = 0; i < cl->nbrokers; i++) {
        if (!cl->brokers[i]->have)
            continue;
        if (copy_broker(&brokers[nb++], &cl->brokers[i]->b))
            goto nomem;
    }
    if (cl->ntopics && !(topics = calloc(cl->ntopics, sizeof(*topics))))
        goto nomem;
    for (h = 0; h < cl->nbuckets; h++) {
        struct cl_topic *t;
        for (t = cl->buckets[h]; t; t = t->hnext) {
            if (!t->have)
                continue;
            if (!(topics[nt] = built_topic(t)))
                goto nomem;
            nt++;
        }
    }
    if (cl->cluster_id && !(cid = strdup(cl->cluster_id)))
        goto nomem;
    snap = sf_cluster_snapshot_build(cid, cl->controller_id, cl->controller_epoch, brokers, nb,
                                     topics, nt);
    if (snap && cl->ndeleting) {
        snap->deleting = calloc((size_t)cl->ndeleting, sizeof(char *));
        for (i = 0; snap->deleting && i < cl->ndeleting; i++)
            if ((snap->deleting[snap->ndeleting] = strdup(cl->deleting[i])))
                snap->ndeleting++;
    }
    if (snap && cl->ngbuckets) {
        if (!(snap->group_buckets = malloc((size_t)cl->ngbuckets * sizeof(*cl->gbuckets)))) {
            sf_cluster_snapshot_unref(snap);
            sf_log(SF_LOG_ERR, "ZK", "out of memory building a metadata snapshot");
            return NULL;
        }
        memcpy(snap->group_buckets, cl->gbuckets, (size_t)cl->ngbuckets * sizeof(*cl->gbuckets));
        snap->ngroup_buckets = cl->ngbuckets;
    }
    /* A snapshot missing a dynamic broker config would change the logs' settings: all or
     * nothing (the caller retries). */
    if (snap && (copy_configs(cl->bconfigs[CL_BCFG_BROKER].configs,
                              cl->bconfigs[CL_BCFG_BROKER].nconfigs, &snap->broker_configs,
                              &snap->nbroker_configs) != SF_OK ||
                 copy_configs(cl->bconfigs[CL_BCFG_DEFAULT].configs,
                              cl->bconfigs[CL_BCFG_DEFAULT].nconfigs, &snap->default_configs,
                              &snap->ndefault_configs) != SF_OK)) {
        sf_cluster_snapshot_unref(snap);
        sf_log(SF_LOG_ERR, "ZK", "out of memory building a metadata snapshot");
        return NULL;
    }
    return snap;
nomem:
    for (i = 0; i < nb; i++)
        sf_cluster_broker_clear(&brokers[i]);
    free(brokers);
    for (i = 0; i < nt; i++)
        sf_cluster_topic_unref(topics[i]);
    free(topics);
    free(cid);
    sf_log(SF_LOG_ERR, "ZK", "out of memory building a metadata snapshot");
    return NULL;
}

void cl_schedule_rebuild(sf_cluster_t *cl) {
    struct timeval tv = {0, CL_REBUILD_DELAY_MS * 1000};
    if (!cl_alive(cl))
        return;
    if (!cl->dirty) {
        cl->dirty = 1;
        cl->dirty_since = sf_clock_mono_ms();
    }
    if (!evtimer_pending(cl->rebuild_timer, NULL))
        evtimer_add(cl->rebuild_timer, &tv);
}

void cl_rebuild_cb(evutil_socket_t fd, short what, void *arg) {
    sf_cluster_t *cl = arg;
    sf_cluster_snapshot_t *snap, *old;
    (void)fd;
    (void)what;
    if (!cl_alive(cl))
        return;
    if (!cl->ready) {
        /* The first snapshot waits for a complete load; the last read's completion
         * schedules this again. */
        if (!cl->registered || !cl->synced || cl->pending_reads > 0 || cl->load_error)
            return;
    } else {
        if (!cl->dirty)
            return;
        if (cl->pending_reads > 0 &&
            sf_clock_mono_ms() - cl->dirty_since < CL_REBUILD_MAX_WAIT_MS) {
            struct timeval tv = {0, CL_REBUILD_DELAY_MS * 1000};
            evtimer_add(cl->rebuild_timer, &tv);
            return;
        }
    }
    snap = build_snapshot(cl);
    if (!snap) {
        struct timeval tv = {0, 100 * 1000};
        evtimer_add(cl->rebuild_timer, &tv);
        return;
    }
    cl->dirty = 0;
    old = cl->current;
    cl->current = snap;
    sf_cluster_snapshot_unref(old);
    if (cl->is_controller)
        cl_controller_run(cl, snap);
    cl_user_enter(cl);
    if (cl->cb.on_snapshot)
        cl->cb.on_snapshot(cl->arg, snap);
    if (cl_user_leave(cl))
        return;
    if (!cl->ready) {
        cl->ready = 1;
        sf_log(SF_LOG_NOTICE, "ZK",
               "broker %d registered in ZooKeeper (epoch %lld, cluster %s): %d brokers, %zu topics",
               (int)cl->broker_id, (long long)cl->broker_epoch,
               cl->cluster_id ? cl->cluster_id : "?", snap->nbrokers, (size_t)snap->ntopics);
        cl_user_enter(cl);
        if (cl->cb.on_ready)
            cl->cb.on_ready(cl->arg, SF_OK, NULL);
        if (cl_user_leave(cl))
            return;
        if (cl->is_controller)
            cl_notify_controller(cl);
    }
}

/* The controller wrote the partition states w[idx[0..n-1]] (those with err SF_OK, at
 * new_version): its own snapshot shows them at once, so a request that follows the answer (a
 * leader's next ISR change) is checked against what was written, not against the state
 * before it. The watches bring the same states back later; the callbacks hear of them at the
 * next rebuild. */
void cl_model_wrote_states(sf_cluster_t *cl, const sf_cluster_state_write_t *w, const int *idx,
                           int n) {
    sf_cluster_snapshot_t *snap, *old;
    int i, changed = 0;
    for (i = 0; i < n; i++) {
        const sf_cluster_state_write_t *x = &w[idx[i]];
        struct cl_topic *t = find_topic(cl, x->topic);
        struct cl_part *part;
        int32_t *isr = NULL;
        if (x->err != SF_OK || !t || x->st.partition < 0 || x->st.partition >= t->nparts)
            continue;
        part = &t->parts[x->st.partition];
        if (!part->have || part->p.state_version >= x->new_version ||
            copy_ints(x->st.isr, x->st.nisr, &isr) != SF_OK)
            continue;
        free(part->p.isr);
        part->p.isr = isr;
        part->p.nisr = x->st.nisr;
        part->p.leader = x->st.leader;
        part->p.leader_epoch = x->st.leader_epoch;
        part->p.controller_epoch = x->st.controller_epoch;
        part->p.state_version = x->new_version;
        t->changed = 1;
        changed = 1;
    }
    if (!changed || !cl->ready || !(snap = build_snapshot(cl)))
        return;
    old = cl->current;
    cl->current = snap;
    sf_cluster_snapshot_unref(old);
    cl_schedule_rebuild(cl);
}

/* ---- model reads ---- */

static void model_watch_cb(sf_zk_t *zk, int event, const char *path, void *arg);
static void model_data_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                          void *arg);

/* Set an exists-watch on @path for @node unless one is set. */
static void arm(sf_cluster_t *cl, struct cl_node *node, int kind, int32_t id, const char *topic,
                const char *path) {
    struct cl_key *k;
    uint64_t wid;
    if (node->armed)
        return;
    wid = ++cl->next_inc;
    k = cl_key_new(cl, kind, wid, id, topic);
    if (!k) {
        cl->load_error = 1;
        return;
    }
    if (sf_zk_exists(cl->zk, path, model_watch_cb, k, NULL, NULL) != SF_OK) {
        free(k);
        cl->load_error = 1;
        return;
    }
    node->watch_id = wid;
    node->armed = 1;
}

static void fetch(sf_cluster_t *cl, int kind, uint64_t inc, int32_t id, const char *topic,
                  const char *path) {
    struct cl_key *k = cl_key_new(cl, kind, inc, id, topic);
    if (!k) {
        cl->load_error = 1;
        return;
    }
    if (sf_zk_get(cl->zk, path, NULL, NULL, model_data_cb, k) != SF_OK) {
        free(k);
        cl->load_error = 1;
        return;
    }
    cl->pending_reads++;
}

static void read_done(sf_cluster_t *cl) {
    if (--cl->pending_reads == 0)
        cl_schedule_rebuild(cl);
}

void cl_path_broker(char *buf, size_t n, int32_t id) {
    snprintf(buf, n, "/brokers/ids/%d", (int)id);
}
void cl_path_topic(char *buf, size_t n, const char *t) {
    snprintf(buf, n, "/brokers/topics/%s", t);
}
static void path_pstate(char *buf, size_t n, const char *t, int32_t p) {
    snprintf(buf, n, "/brokers/topics/%s/partitions/%d/state", t, (int)p);
}
static void path_config(char *buf, size_t n, const char *t) {
    snprintf(buf, n, "/config/topics/%s", t);
}
static void path_bconfig(sf_cluster_t *cl, char *buf, size_t n, int which) {
    if (which == CL_BCFG_DEFAULT)
        snprintf(buf, n, "/config/brokers/%s", SF_CLUSTER_DEFAULT_ENTITY);
    else
        snprintf(buf, n, "/config/brokers/%d", (int)cl->broker_id);
}

static void read_broker(sf_cluster_t *cl, struct cl_broker *b) {
    char path[64];
    cl_path_broker(path, sizeof(path), b->b.id);
    arm(cl, &b->node, K_BROKER, b->b.id, NULL, path);
    fetch(cl, K_BROKER, b->node.inc, b->b.id, NULL, path);
}

static void read_topic(sf_cluster_t *cl, struct cl_topic *t, int do_arm) {
    char path[512];
    cl_path_topic(path, sizeof(path), t->name);
    if (do_arm)
        arm(cl, &t->node, K_TOPIC, -1, t->name, path);
    fetch(cl, K_TOPIC, t->node.inc, -1, t->name, path);
}

static void read_pstate(sf_cluster_t *cl, struct cl_topic *t, int32_t p) {
    char path[512];
    path_pstate(path, sizeof(path), t->name, p);
    arm(cl, &t->parts[p].node, K_PSTATE, p, t->name, path);
    fetch(cl, K_PSTATE, t->parts[p].node.inc, p, t->name, path);
}

static void read_config(sf_cluster_t *cl, struct cl_topic *t) {
    char path[512];
    path_config(path, sizeof(path), t->name);
    arm(cl, &t->cfg, K_CONFIG, -1, t->name, path);
    fetch(cl, K_CONFIG, t->cfg.inc, -1, t->name, path);
}

/* The entity of a dynamic broker config node is permanent: its reads carry incarnation 0. */
static void read_bconfig(sf_cluster_t *cl, int which) {
    char path[64];
    path_bconfig(cl, path, sizeof(path), which);
    arm(cl, &cl->bconfigs[which].node, K_BCONFIG, which, NULL, path);
    fetch(cl, K_BCONFIG, 0, which, NULL, path);
}

#define PREFERRED_PATH "/admin/preferred_replica_election"

void cl_read_preferred(sf_cluster_t *cl) {
    arm(cl, &cl->pref_node, K_PREFERRED, -1, NULL, PREFERRED_PATH);
    fetch(cl, K_PREFERRED, 0, -1, NULL, PREFERRED_PATH);
}

#define REASSIGN_PATH "/admin/reassign_partitions"

void cl_read_reassign(sf_cluster_t *cl) {
    arm(cl, &cl->reassign_node, K_REASSIGN, -1, NULL, REASSIGN_PATH);
    fetch(cl, K_REASSIGN, 0, -1, NULL, REASSIGN_PATH);
}

#define BUCKETS_PATH "/coordinators/groups"

void cl_read_buckets(sf_cluster_t *cl) {
    arm(cl, &cl->gbuckets_node, K_BUCKETS, -1, NULL, BUCKETS_PATH);
    fetch(cl, K_BUCKETS, 0, -1, NULL, BUCKETS_PATH);
}

void cl_read_controller(sf_cluster_t *cl) {
    arm(cl, &cl->ctrl_node, K_CONTROLLER, -1, NULL, "/controller");
    fetch(cl, K_CONTROLLER, 0, -1, NULL, "/controller");
    fetch(cl, K_CEPOCH, 0, -1, NULL, "/controller_epoch");
}

static void model_children_cb(int err, int zrc, char *const *children, int n,
                              const sf_zk_stat_t *stat, void *arg);

static void read_children(sf_cluster_t *cl, int kind) {
    struct cl_node *node = kind == K_IDS      ? &cl->ids_node
                           : kind == K_TOPICS ? &cl->topics_node
                                              : &cl->deletes_node;
    const char *path = kind == K_IDS      ? "/brokers/ids"
                       : kind == K_TOPICS ? "/brokers/topics"
                                          : "/admin/delete_topics";
    struct cl_key *rk, *wk = NULL;
    uint64_t wid = 0;
    int rc;
    rk = cl_key_new(cl, kind, 0, -1, NULL);
    if (!rk) {
        cl->load_error = 1;
        return;
    }
    if (!node->armed) {
        wid = ++cl->next_inc;
        wk = cl_key_new(cl, kind, wid, -1, NULL);
        if (!wk) {
            free(rk);
            cl->load_error = 1;
            return;
        }
    }
    rc = sf_zk_get_children(cl->zk, path, wk ? model_watch_cb : NULL, wk, model_children_cb, rk);
    if (rc != SF_OK) {
        free(rk);
        free(wk);
        cl->load_error = 1;
        return;
    }
    if (wk) {
        node->watch_id = wid;
        node->armed = 1;
    }
    cl->pending_reads++;
}

/* Everything, again: after (re)connecting. Watches still set are kept. */
void cl_sync_all(sf_cluster_t *cl) {
    size_t h;
    int i;
    cl->load_error = 0;
    cl->synced = 1;
    read_children(cl, K_IDS);
    read_children(cl, K_TOPICS);
    read_children(cl, K_DELETES);
    for (i = 0; i < CL_BCFG_N; i++)
        read_bconfig(cl, i);
    for (i = 0; i < cl->nbrokers; i++)
        read_broker(cl, cl->brokers[i]);
    for (h = 0; h < cl->nbuckets; h++) {
        struct cl_topic *t;
        for (t = cl->buckets[h]; t; t = t->hnext) {
            int32_t p;
            read_topic(cl, t, 1);
            read_config(cl, t);
            for (p = 0; p < t->nparts; p++)
                read_pstate(cl, t, p);
        }
    }
    cl_read_controller(cl);
    cl_read_preferred(cl);
    cl_read_reassign(cl);
    cl_read_buckets(cl);
}

static void apply_ids(sf_cluster_t *cl, char *const *children, int n) {
    int i, j;
    /* drop brokers no longer listed */
    for (i = 0; i < cl->nbrokers;) {
        int found = 0;
        for (j = 0; j < n && !found; j++) {
            int32_t id;
            found = !sf_znode_parse_id(children[j], &id) && id == cl->brokers[i]->b.id;
        }
        if (found) {
            i++;
            continue;
        }
        cl_broker_free(cl->brokers[i]);
        cl->brokers[i] = cl->brokers[--cl->nbrokers];
    }
    for (j = 0; j < n; j++) {
        int32_t id;
        struct cl_broker *b;
        if (sf_znode_parse_id(children[j], &id))
            continue;
        b = find_broker(cl, id);
        if (!b) {
            if (!(b = add_broker(cl, id))) {
                cl->load_error = 1;
                continue;
            }
            read_broker(cl, b);
        } else if (!b->node.armed) {
            read_broker(cl, b);
        }
    }
}

static void apply_topics(sf_cluster_t *cl, char *const *children, int n) {
    size_t h;
    int j;
    for (h = 0; h < cl->nbuckets; h++) {
        struct cl_topic *t;
        for (t = cl->buckets[h]; t; t = t->hnext)
            t->seen = 0;
    }
    for (j = 0; j < n; j++) {
        struct cl_topic *t;
        if (!sf_znode_topic_name_valid(children[j])) {
            sf_log(SF_LOG_WARNING, "ZK", "ignoring /brokers/topics/%s: not a legal topic name",
                   children[j]);
            continue;
        }
        t = find_topic(cl, children[j]);
        if (!t) {
            if (!(t = add_topic(cl, children[j]))) {
                cl->load_error = 1;
                continue;
            }
            t->seen = 1;
            read_topic(cl, t, 1);
            read_config(cl, t);
            continue;
        }
        t->seen = 1;
        if (!t->node.armed)
            read_topic(cl, t, 1);
        if (!t->cfg.armed)
            read_config(cl, t);
    }
    for (h = 0; h < cl->nbuckets; h++) {
        struct cl_topic *t, *next;
        for (t = cl->buckets[h]; t; t = next) {
            next = t->hnext;
            if (!t->seen)
                remove_topic(cl, t);
        }
    }
}

static int str_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The topics whose deletion was requested. */
static void apply_deletes(sf_cluster_t *cl, char *const *children, int n) {
    char **v = n ? calloc((size_t)n, sizeof(char *)) : NULL;
    int i, m = 0;
    if (n && !v) {
        cl->load_error = 1;
        return;
    }
    for (i = 0; i < n; i++)
        if (sf_znode_topic_name_valid(children[i]) && (v[m] = strdup(children[i])))
            m++;
    if (m > 1)
        qsort(v, (size_t)m, sizeof(char *), str_cmp);
    for (i = 0; i < cl->ndeleting; i++)
        free(cl->deleting[i]);
    free(cl->deleting);
    cl->deleting = v;
    cl->ndeleting = m;
}

static void model_children_cb(int err, int zrc, char *const *children, int n,
                              const sf_zk_stat_t *stat, void *arg) {
    struct cl_key *k = arg;
    sf_cluster_t *cl = k->cl;
    (void)zrc;
    (void)stat;
    if (!cl_alive(cl)) {
        free(k);
        return;
    }
    if (err == SF_OK) {
        if (k->kind == K_IDS)
            apply_ids(cl, children, n);
        else if (k->kind == K_TOPICS)
            apply_topics(cl, children, n);
        else
            apply_deletes(cl, children, n);
        cl_schedule_rebuild(cl);
    } else if (err != SF_ERR_NOTFOUND) {
        cl->load_error = 1;
    }
    free(k);
    read_done(cl);
}

/* Replace a topic's partition list from its decoded znode; keep the state of partitions that
 * stay, start new ones empty. */
static int apply_topic(sf_cluster_t *cl, struct cl_topic *t, sf_cluster_topic_t *dec) {
    int32_t i;
    if (dec->npartitions != t->nparts) {
        struct cl_part *parts = NULL;
        if (dec->npartitions) {
            parts = calloc((size_t)dec->npartitions, sizeof(*parts));
            if (!parts)
                return SF_ERR_NOMEM;
        }
        for (i = 0; i < t->nparts; i++) {
            if (i < dec->npartitions)
                parts[i] = t->parts[i];
            else
                sf_cluster_partition_clear(&t->parts[i].p);
        }
        for (i = t->nparts; i < dec->npartitions; i++) {
            parts[i].node.inc = ++cl->next_inc;
            parts[i].p.partition = i;
            parts[i].p.leader = -1;
            parts[i].p.leader_epoch = -1;
            parts[i].p.controller_epoch = -1;
            parts[i].p.state_version = -1;
        }
        free(t->parts);
        t->parts = parts;
        t->nparts = dec->npartitions;
    }
    for (i = 0; i < t->nparts; i++) {
        sf_cluster_partition_t *p = &t->parts[i].p, *d = &dec->partitions[i];
        free(p->replicas);
        free(p->adding);
        free(p->removing);
        p->replicas = d->replicas;
        p->nreplicas = d->nreplicas;
        p->adding = d->adding;
        p->nadding = d->nadding;
        p->removing = d->removing;
        p->nremoving = d->nremoving;
        d->replicas = d->adding = d->removing = NULL;
        d->nreplicas = d->nadding = d->nremoving = 0;
    }
    memcpy(t->topic_id, dec->topic_id, 16);
    return SF_OK;
}


/* 1 if two sorted config arrays hold the same entries. */
static int configs_equal(const sf_cluster_config_entry_t *a, int na,
                         const sf_cluster_config_entry_t *b, int nb) {
    int i;
    if (na != nb)
        return 0;
    for (i = 0; i < na; i++)
        if (strcmp(a[i].name, b[i].name) || strcmp(a[i].value, b[i].value))
            return 0;
    return 1;
}

static void model_data_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                          void *arg) {
    struct cl_key *k = arg;
    sf_cluster_t *cl = k->cl;
    (void)zrc;
    if (!cl_alive(cl)) {
        free(k);
        return;
    }
    if (err != SF_OK && err != SF_ERR_NOTFOUND)
        cl->load_error = 1;
    switch (k->kind) {
    case K_BROKER: {
        struct cl_broker *b = find_broker(cl, k->id);
        sf_cluster_broker_t dec;
        if (!b || b->node.inc != k->inc || (err != SF_OK && err != SF_ERR_NOTFOUND))
            break;
        if (err == SF_ERR_NOTFOUND) {
            b->have = 0;
        } else if (sf_znode_broker_decode(data, (size_t)len, &dec) == SF_OK) {
            sf_cluster_broker_clear(&b->b);
            b->b = dec;
            b->b.id = k->id;
            b->b.epoch = stat ? stat->czxid : -1;
            b->have = 1;
        } else {
            sf_log(SF_LOG_WARNING, "ZK", "ignoring malformed /brokers/ids/%d", (int)k->id);
            b->have = 0;
        }
        cl_schedule_rebuild(cl);
        break;
    }
    case K_TOPIC: {
        struct cl_topic *t = find_topic(cl, k->topic);
        sf_cluster_topic_t dec;
        int32_t p;
        if (!t || t->node.inc != k->inc || (err != SF_OK && err != SF_ERR_NOTFOUND))
            break;
        if (err == SF_ERR_NOTFOUND) {
            t->have = 0;
        } else if (sf_znode_topic_decode(data, (size_t)len, &dec) == SF_OK) {
            if (apply_topic(cl, t, &dec) == SF_OK) {
                t->have = 1;
                t->version = stat ? stat->version : -1;
                /* Heal: (re)read the partition states and the config nobody watches. */
                for (p = 0; p < t->nparts; p++)
                    if (!t->parts[p].node.armed)
                        read_pstate(cl, t, p);
                if (!t->cfg.armed)
                    read_config(cl, t);
            } else {
                cl->load_error = 1;
            }
            sf_cluster_topic_clear(&dec);
        } else {
            sf_log(SF_LOG_WARNING, "ZK", "ignoring malformed /brokers/topics/%s", t->name);
            t->have = 0;
        }
        t->changed = 1;
        cl_schedule_rebuild(cl);
        break;
    }
    case K_PSTATE: {
        struct cl_topic *t = find_topic(cl, k->topic);
        struct cl_part *part;
        if (!t || k->id < 0 || k->id >= t->nparts)
            break;
        part = &t->parts[k->id];
        if (part->node.inc != k->inc || (err != SF_OK && err != SF_ERR_NOTFOUND))
            break;
        if (err == SF_OK && sf_znode_pstate_decode(data, (size_t)len, &part->p) == SF_OK) {
            part->p.state_version = stat ? stat->version : -1;
            part->have = 1;
        } else {
            if (err == SF_OK)
                sf_log(SF_LOG_WARNING, "ZK", "ignoring malformed state of %s-%d", t->name,
                       (int)k->id);
            part->have = 0;
        }
        t->changed = 1;
        cl_schedule_rebuild(cl);
        break;
    }
    case K_CONFIG: {
        struct cl_topic *t = find_topic(cl, k->topic);
        sf_cluster_config_entry_t *cfg = NULL;
        int n = 0;
        if (!t || t->cfg.inc != k->inc || (err != SF_OK && err != SF_ERR_NOTFOUND))
            break;
        if (err == SF_OK && sf_znode_config_decode(data, (size_t)len, &cfg, &n) != SF_OK) {
            sf_log(SF_LOG_WARNING, "ZK", "ignoring malformed /config/topics/%s", t->name);
            cfg = NULL;
            n = 0;
        }
        sf_cluster_configs_free(t->configs, t->nconfigs);
        t->configs = cfg;
        t->nconfigs = n;
        t->changed = 1;
        cl_schedule_rebuild(cl);
        break;
    }
    case K_BCONFIG: {
        struct cl_bconfig *bc;
        sf_cluster_config_entry_t *cfg = NULL;
        char path[64];
        int n = 0;
        if (k->id < 0 || k->id >= CL_BCFG_N || (err != SF_OK && err != SF_ERR_NOTFOUND))
            break;
        bc = &cl->bconfigs[k->id];
        path_bconfig(cl, path, sizeof(path), k->id);
        if (err == SF_OK && sf_znode_config_decode(data, (size_t)len, &cfg, &n) != SF_OK) {
            sf_log(SF_LOG_WARNING, "ZK", "ignoring malformed %s", path);
            cfg = NULL;
            n = 0;
        }
        if (!configs_equal(bc->configs, bc->nconfigs, cfg, n))
            sf_log(SF_LOG_INFO, "ZK", "dynamic broker config %s: %d entr%s", path, n,
                   n == 1 ? "y" : "ies");
        sf_cluster_configs_free(bc->configs, bc->nconfigs);
        bc->configs = cfg;
        bc->nconfigs = n;
        cl_schedule_rebuild(cl);
        break;
    }
    case K_CONTROLLER: {
        int32_t id = -1;
        if (err != SF_OK && err != SF_ERR_NOTFOUND)
            break;
        if (err == SF_OK && sf_znode_controller_decode(data, (size_t)len, &id) != SF_OK) {
            sf_log(SF_LOG_WARNING, "ZK", "malformed /controller");
            id = -1;
        }
        if (id != cl->controller_id) {
            cl->controller_id = id;
            cl_schedule_rebuild(cl);
        }
        if (err == SF_ERR_NOTFOUND) {
            cl_ctrl_set(cl, 0);
            cl_elect(cl);
        } else if (id == cl->broker_id && stat &&
                   stat->ephemeral_owner == sf_zk_session_id(cl->zk)) {
            /* Ours: the election's answer was lost with a connection; adopt it once the
             * epoch (read right after this) is known. */
            if (!cl->is_controller)
                cl->ctrl_adopt = 1;
        } else {
            cl_ctrl_set(cl, 0);
        }
        break;
    }
    case K_PREFERRED:
    case K_REASSIGN: {
        int pref = k->kind == K_PREFERRED;
        sf_znode_tp_t *v = NULL, **list = pref ? &cl->pref : &cl->reassign;
        int n = 0, *count = pref ? &cl->npref : &cl->nreassign;
        if (err != SF_OK && err != SF_ERR_NOTFOUND)
            break;
        if (err == SF_OK && (pref ? sf_znode_preferred_decode(data, (size_t)len, &v, &n)
                                  : sf_znode_reassign_decode(data, (size_t)len, &v, &n)) != SF_OK)
            sf_log(SF_LOG_WARNING, "ZK", "ignoring malformed %s",
                   pref ? PREFERRED_PATH : REASSIGN_PATH);
        sf_znode_tps_free(*list, *count);
        *list = v;
        *count = n;
        if (n)
            cl_schedule_rebuild(cl); /* the controller acts on it */
        break;
    }
    case K_BUCKETS: {
        sf_cluster_bucket_t *v = NULL;
        int n = 0;
        if (err != SF_OK && err != SF_ERR_NOTFOUND)
            break;
        if (err == SF_OK && sf_znode_buckets_decode(data, (size_t)len, &v, &n) != SF_OK)
            sf_log(SF_LOG_WARNING, "ZK", "ignoring malformed %s", BUCKETS_PATH);
        free(cl->gbuckets);
        cl->gbuckets = v;
        cl->ngbuckets = n;
        cl->gbuckets_version = err == SF_OK && stat ? stat->version : -1;
        cl_schedule_rebuild(cl);
        break;
    }
    case K_CEPOCH: {
        int32_t e;
        if (err == SF_OK && sf_znode_epoch_decode(data, (size_t)len, &e) == SF_OK) {
            if (e != cl->controller_epoch && !cl->is_controller) {
                cl->controller_epoch = e;
                cl_schedule_rebuild(cl);
            }
        }
        if (cl->ctrl_adopt && err == SF_OK && stat) {
            /* Our election won after all: its writes are fenced by the version read now. */
            cl->ctrl_adopt = 0;
            cl->ctrl_epoch_version = stat->version;
            cl_ctrl_set(cl, 1);
        }
        break;
    }
    default:
        break;
    }
    free(k);
    read_done(cl);
}

static void model_watch_cb(sf_zk_t *zk, int event, const char *path, void *arg) {
    struct cl_key *k = arg;
    sf_cluster_t *cl = k->cl;
    struct cl_node *node = NULL;
    struct cl_broker *b = NULL;
    struct cl_topic *t = NULL;
    (void)zk;
    (void)path;
    if (!cl_alive(cl)) {
        free(k);
        return;
    }
    switch (k->kind) {
    case K_IDS: node = &cl->ids_node; break;
    case K_TOPICS: node = &cl->topics_node; break;
    case K_DELETES: node = &cl->deletes_node; break;
    case K_CONTROLLER: node = &cl->ctrl_node; break;
    case K_PREFERRED: node = &cl->pref_node; break;
    case K_REASSIGN: node = &cl->reassign_node; break;
    case K_BUCKETS: node = &cl->gbuckets_node; break;
    case K_BROKER:
        if ((b = find_broker(cl, k->id)))
            node = &b->node;
        break;
    case K_TOPIC:
        if ((t = find_topic(cl, k->topic)))
            node = &t->node;
        break;
    case K_CONFIG:
        if ((t = find_topic(cl, k->topic)))
            node = &t->cfg;
        break;
    case K_BCONFIG:
        if (k->id >= 0 && k->id < CL_BCFG_N)
            node = &cl->bconfigs[k->id].node;
        break;
    case K_PSTATE:
        if ((t = find_topic(cl, k->topic)) && k->id >= 0 && k->id < t->nparts)
            node = &t->parts[k->id].node;
        break;
    default: break;
    }
    if (!node || !node->armed || node->watch_id != k->inc) {
        free(k);
        return;
    }
    node->armed = 0;
    if (event == SF_ZK_EV_DROPPED) {
        /* Lost with the session or never set: the next sync sets it again. */
        free(k);
        return;
    }
    switch (k->kind) {
    case K_IDS:
    case K_TOPICS:
    case K_DELETES: read_children(cl, k->kind); break;
    case K_CONTROLLER: cl_read_controller(cl); break;
    case K_PREFERRED: cl_read_preferred(cl); break;
    case K_REASSIGN: cl_read_reassign(cl); break;
    case K_BUCKETS: cl_read_buckets(cl); break;
    /* Created, changed or deleted: read it again (which also watches it again, for creation
     * when it is gone). */
    case K_BCONFIG: read_bconfig(cl, k->id); break;
    case K_BROKER:
        if (event == SF_ZK_EV_DELETED) {
            b->have = 0; /* the children watch drops it */
            cl_schedule_rebuild(cl);
        } else {
            read_broker(cl, b);
        }
        break;
    case K_TOPIC:
        if (event == SF_ZK_EV_DELETED) {
            t->have = 0;
            t->changed = 1;
            cl_schedule_rebuild(cl);
        } else {
            read_topic(cl, t, 1);
        }
        break;
    case K_PSTATE:
    case K_CONFIG:
        if (event == SF_ZK_EV_DELETED) {
            if (k->kind == K_PSTATE) {
                t->parts[k->id].have = 0;
            } else {
                sf_cluster_configs_free(t->configs, t->nconfigs);
                t->configs = NULL;
                t->nconfigs = 0;
            }
            t->changed = 1;
            cl_schedule_rebuild(cl);
            /* Re-read the topic: if it still exists, that re-arms what is missing; if it is
             * being deleted, nothing is left watching the deleted nodes. */
            read_topic(cl, t, 0);
        } else if (k->kind == K_PSTATE) {
            read_pstate(cl, t, k->id);
        } else {
            read_config(cl, t);
        }
        break;
    default: break;
    }
    free(k);
}
