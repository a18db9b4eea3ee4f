/* The table of partitions held here (see replicas.h). */
#include "config.h"

#include "replicas.h"

#include <stdlib.h>
#include <string.h>

#include "brokercfg.h"
#include "clock.h"
#include "err.h"
#include "leader.h"
#include "log.h"
#include "logging.h"
#include "partition.h"
#include "topiccfg.h"

typedef enum entry_state {
    HELD,     /* p is the partition */
    CREATING, /* queued on the log-manager thread */
    FAILED,   /* its creation failed: tried again with the next snapshot */
    DELETING, /* retired: its log is deleted once unused (then the entry goes) */
} entry_state_t;

typedef struct entry {
    struct entry *next; /* hash chain */
    char *topic;
    int32_t index;
    uint8_t topic_id[16];
    entry_state_t state;
    sf_partition_t *p; /* HELD: the table's reference */
} entry_t;

struct sf_replicas {
    const sf_brokercfg_t *cfg;
    sf_logdir_t *const *logdirs;
    size_t nlogdirs;
    sf_iopool_t *manager;
    sf_mailbox_t *mb;
    sf_replicas_publish_fn publish;
    void *publish_arg;
    entry_t **buckets;
    size_t nbuckets, count;
    sf_cluster_snapshot_t *latest; /* referenced */
    int creating;                  /* a creation job is queued */
    int stopped;
};

/* One partition to open or create on the log-manager thread. */
typedef struct create_item {
    entry_t *e; /* read on the metadata thread only */
    sf_log_config_t lc;
    sf_log_t *log; /* results */
    sf_logdir_t *ld;
    int rc;
} create_item_t;

typedef struct create_job {
    sf_mail_t mail;
    sf_replicas_t *r;
    size_t n;
    create_item_t items[];
} create_job_t;

/* A deleted partition's name, on its way back to the metadata thread. */
typedef struct deleted_mail {
    sf_mail_t mail;
    sf_replicas_t *r;
    int32_t index;
    char topic[];
} deleted_mail_t;

/* ---- the table ---- */

static entry_t **entry_slot(sf_replicas_t *r, const char *topic, int32_t index) {
    entry_t **pp = &r->buckets[sf_log_key_hash(topic, index) % r->nbuckets];
    for (; *pp; pp = &(*pp)->next)
        if ((*pp)->index == index && !strcmp((*pp)->topic, topic))
            break;
    return pp;
}

static entry_t *entry_find(sf_replicas_t *r, const char *topic, int32_t index) {
    return *entry_slot(r, topic, index);
}

static void table_grow(sf_replicas_t *r) {
    size_t n = r->nbuckets * 2, i;
    entry_t **b = calloc(n, sizeof(*b));
    if (!b)
        return; /* longer chains, still correct */
    for (i = 0; i < r->nbuckets; i++) {
        entry_t *e, *next;
        for (e = r->buckets[i]; e; e = next) {
            next = e->next;
            e->next = b[sf_log_key_hash(e->topic, e->index) % n];
            b[sf_log_key_hash(e->topic, e->index) % n] = e;
        }
    }
    free(r->buckets);
    r->buckets = b;
    r->nbuckets = n;
}

static entry_t *entry_add(sf_replicas_t *r, const sf_cluster_topic_t *t, int32_t index) {
    entry_t *e = calloc(1, sizeof(*e)), **pp;
    if (!e || !(e->topic = strdup(t->name))) {
        free(e);
        return NULL;
    }
    e->index = index;
    memcpy(e->topic_id, t->topic_id, sizeof(e->topic_id));
    if (r->count >= r->nbuckets)
        table_grow(r);
    pp = &r->buckets[sf_log_key_hash(e->topic, index) % r->nbuckets];
    e->next = *pp;
    *pp = e;
    r->count++;
    return e;
}

static void entry_remove(sf_replicas_t *r, entry_t *e) {
    entry_t **pp = entry_slot(r, e->topic, e->index);
    *pp = e->next;
    r->count--;
    sf_partition_unref(e->p);
    free(e->topic);
    free(e);
}

static void foreach_entry(sf_replicas_t *r, void (*fn)(sf_replicas_t *, entry_t *, void *),
                          void *arg) {
    size_t i;
    for (i = 0; i < r->nbuckets; i++) {
        entry_t *e, *next;
        for (e = r->buckets[i]; e; e = next) {
            next = e->next; /* @fn may remove @e */
            fn(r, e, arg);
        }
    }
}

/* ---- deletion ---- */

static void deleted_cb(void *arg) {
    deleted_mail_t *dm = arg;
    sf_replicas_t *r = dm->r;
    entry_t *e;
    if (!r->stopped && (e = entry_find(r, dm->topic, dm->index)) && e->state == DELETING) {
        entry_remove(r, e);
        sf_replicas_update(r, r->latest); /* a namesake may wait to be created */
    }
}

/* On the log-manager thread, after a retired partition's log was deleted. */
static void partition_deleted(void *arg, const char *topic, int32_t index) {
    sf_replicas_t *r = arg;
    size_t n = strlen(topic) + 1;
    deleted_mail_t *dm = malloc(sizeof(*dm) + n);
    if (!dm)
        return; /* the entry stays DELETING: its namesake waits for the next start */
    dm->r = r;
    dm->index = index;
    memcpy(dm->topic, topic, n);
    dm->mail.fn = deleted_cb;
    dm->mail.arg = dm;
    dm->mail.heap = 1;
    sf_mailbox_put(r->mb, &dm->mail);
}

static int is_replica(const sf_cluster_partition_t *part, int32_t id);

/* A held partition whose topic is gone from @snap, or is there under another id, or that was
 * reassigned away from this broker (Kafka's StopReplica with deletion). */
static void retire_if_gone(sf_replicas_t *r, entry_t *e, void *arg) {
    const sf_cluster_topic_t *t = sf_cluster_snapshot_topic(arg, e->topic);
    if (e->state == FAILED) {
        entry_remove(r, e); /* tried again below */
        return;
    }
    if (e->state != HELD || (t && !memcmp(t->topic_id, e->topic_id, sizeof(e->topic_id)) &&
                             (e->index >= t->npartitions ||
                              is_replica(&t->partitions[e->index], r->cfg->broker_id))))
        return;
    if (t && e->index < t->npartitions)
        sf_log(SF_LOG_INFO, "BROKER", "%s-%d was moved to other brokers: deleting it here",
               e->topic, (int)e->index);
    sf_partition_retire(e->p);
    sf_partition_unref(e->p);
    e->p = NULL;
    e->state = DELETING;
}

/* ---- creation ---- */

/* The log directory holding @topic-@index, or the one holding the fewest logs, where new
 * partitions go (Kafka's rule). Log-manager thread. */
static sf_logdir_t *logdir_for(const sf_replicas_t *r, const char *topic, int32_t index,
                               sf_log_t **found) {
    sf_logdir_t *best = r->logdirs[0];
    size_t i;
    for (i = 0; i < r->nlogdirs; i++) {
        if ((*found = sf_logdir_get(r->logdirs[i], topic, index)))
            return r->logdirs[i];
        if (sf_logdir_count(r->logdirs[i]) < sf_logdir_count(best))
            best = r->logdirs[i];
    }
    return best;
}

static void created_cb(void *arg);

/* Log-manager thread: open or create each log. */
static void create_job_run(void *arg) {
    create_job_t *job = arg;
    sf_replicas_t *r = job->r;
    size_t i;
    for (i = 0; i < job->n; i++) {
        create_item_t *it = &job->items[i];
        const char *topic = it->e->topic;
        int32_t index = it->e->index;
        it->ld = logdir_for(r, topic, index, &it->log);
        it->rc = it->log ? SF_OK : sf_logdir_create(it->ld, topic, index, &it->lc, &it->log);
        if (it->rc != SF_OK)
            sf_log(SF_LOG_ERR, "STORAGE", "cannot create the log of %s-%d: %s", topic, index,
                   sf_err_str(it->rc));
    }
    job->mail.fn = created_cb;
    sf_mailbox_put(r->mb, &job->mail);
}

/* Metadata thread: the created logs join the table. */
static void created_cb(void *arg) {
    create_job_t *job = arg;
    sf_replicas_t *r = job->r;
    size_t i;
    for (i = 0; i < job->n && !r->stopped; i++) {
        create_item_t *it = &job->items[i];
        it->e->state = FAILED;
        if (it->rc == SF_OK &&
            (it->e->p = sf_partition_new(it->log, it->ld, r->manager, partition_deleted, r)))
            it->e->state = HELD;
    }
    r->creating = 0;
    free(job);
    if (!r->stopped)
        sf_replicas_update(r, r->latest);
}

static int is_replica(const sf_cluster_partition_t *part, int32_t id) {
    int i;
    for (i = 0; i < part->nreplicas; i++)
        if (part->replicas[i] == id)
            return 1;
    return 0;
}

/* Apply topic configs and leader epochs to the held logs; queue the creation of the missing
 * ones (one job at a time: its completion looks again). */
static void sync_partitions(sf_replicas_t *r, const sf_view_t *v) {
    const sf_cluster_snapshot_t *snap = v->snap;
    create_job_t *job = NULL;
    size_t cap = 0;
    int t, i;
    for (t = 0; t < snap->ntopics; t++) {
        const sf_cluster_topic_t *topic = snap->topics[t];
        sf_log_config_t lc;
        sf_topiccfg_log_config(&v->topiccfg, topic, &lc);
        for (i = 0; i < topic->npartitions; i++) {
            const sf_cluster_partition_t *part = &topic->partitions[i];
            entry_t *e;
            if (!is_replica(part, r->cfg->broker_id))
                continue;
            e = entry_find(r, topic->name, i);
            if (e && e->state == HELD) {
                sf_log_set_config(e->p->log, &lc);
                if (!sf_cluster_partition_has_state(part))
                    continue;
                /* Led here: a new epoch starts at the LEO, recorded before any write so that
                 * OffsetForLeaderEpoch answers for it. */
                if (part->leader == r->cfg->broker_id &&
                    part->leader_epoch > sf_log_latest_epoch(e->p->log))
                    sf_log_epoch_assign(e->p->log, part->leader_epoch,
                                        sf_log_end_offset(e->p->log));
                else
                    sf_log_set_leader_epoch(e->p->log, part->leader_epoch);
                sf_leader_apply(e->p, part, r->cfg->broker_id, sf_clock_wall_ms());
                continue;
            }
            if (e || r->creating) /* on its way, or waiting for a namesake's deletion */
                continue;
            if (!job || job->n == cap) {
                size_t ncap = cap ? cap * 2 : 16;
                create_job_t *nj = realloc(job, sizeof(*job) + ncap * sizeof(job->items[0]));
                if (!nj)
                    break;
                if (!job)
                    nj->n = 0;
                job = nj;
                cap = ncap;
            }
            if (!(e = entry_add(r, topic, i)))
                break;
            e->state = CREATING;
            job->items[job->n].e = e;
            job->items[job->n].lc = lc;
            job->items[job->n].log = NULL;
            job->n++;
        }
    }
    if (!job)
        return;
    if (job->n == 0) {
        free(job);
        return;
    }
    job->r = r;
    job->mail.fn = create_job_run;
    job->mail.arg = job;
    job->mail.heap = 0;
    r->creating = 1;
    sf_iopool_submit(r->manager, 0, &job->mail);
}

/* ---- the views ---- */

static sf_partition_t *lookup_held(void *arg, const char *topic, int32_t index) {
    entry_t *e = entry_find(arg, topic, index);
    return e && e->state == HELD ? e->p : NULL;
}

void sf_replicas_update(sf_replicas_t *r, sf_cluster_snapshot_t *snap) {
    sf_view_t *v;
    if (r->stopped || !snap)
        return;
    if (snap != r->latest) {
        sf_cluster_snapshot_ref(snap);
        sf_cluster_snapshot_unref(r->latest);
        r->latest = snap;
    }
    foreach_entry(r, retire_if_gone, snap);
    if (!(v = sf_view_new(snap, r->cfg, lookup_held, r))) {
        sf_log(SF_LOG_ERR, "BROKER", "out of memory for the metadata view; keeping the last one");
        return;
    }
    sync_partitions(r, v);
    r->publish(r->publish_arg, v);
}

sf_replicas_t *sf_replicas_new(const sf_brokercfg_t *cfg, sf_logdir_t *const *logdirs,
                               size_t nlogdirs, sf_iopool_t *manager, sf_mailbox_t *mb,
                               sf_replicas_publish_fn publish, void *arg) {
    sf_replicas_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->nbuckets = 64;
    if (!(r->buckets = calloc(r->nbuckets, sizeof(*r->buckets)))) {
        free(r);
        return NULL;
    }
    r->cfg = cfg;
    r->logdirs = logdirs;
    r->nlogdirs = nlogdirs;
    r->manager = manager;
    r->mb = mb;
    r->publish = publish;
    r->publish_arg = arg;
    return r;
}

void sf_replicas_stop(sf_replicas_t *r) {
    if (r)
        r->stopped = 1;
}

static void drop_entry(sf_replicas_t *r, entry_t *e, void *arg) {
    (void)arg;
    entry_remove(r, e);
}

void sf_replicas_free(sf_replicas_t *r) {
    if (!r)
        return;
    foreach_entry(r, drop_entry, NULL);
    free(r->buckets);
    sf_cluster_snapshot_unref(r->latest);
    free(r);
}
