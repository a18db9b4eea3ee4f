/* Immutable cluster metadata snapshots (see snapshot.h). */
#include "snapshot.h"

#include <stdlib.h>
#include <string.h>

/* ---- element cleanup ---- */

void sf_cluster_broker_clear(sf_cluster_broker_t *b) {
    int i;
    if (!b)
        return;
    free(b->host);
    for (i = 0; i < b->nendpoints; i++)
        free(b->endpoints[i]);
    free(b->endpoints);
    free(b->rack);
    memset(b, 0, sizeof(*b));
    b->port = -1;
}

void sf_cluster_partition_clear(sf_cluster_partition_t *p) {
    if (!p)
        return;
    free(p->replicas);
    free(p->isr);
    free(p->adding);
    free(p->removing);
    p->replicas = p->isr = p->adding = p->removing = NULL;
    p->nreplicas = p->nisr = p->nadding = p->nremoving = 0;
}

void sf_cluster_configs_free(sf_cluster_config_entry_t *configs, int n) {
    int i;
    if (!configs)
        return;
    for (i = 0; i < n; i++) {
        free(configs[i].name);
        free(configs[i].value);
    }
    free(configs);
}

void sf_cluster_topic_clear(sf_cluster_topic_t *t) {
    int i;
    if (!t)
        return;
    free(t->name);
    for (i = 0; t->partitions && i < t->npartitions; i++)
        sf_cluster_partition_clear(&t->partitions[i]);
    free(t->partitions);
    sf_cluster_configs_free(t->configs, t->nconfigs);
    memset(t, 0, sizeof(*t));
}


sf_cluster_snapshot_t *sf_cluster_snapshot_ref(sf_cluster_snapshot_t *snap) {
    if (snap)
        atomic_fetch_add_explicit(&snap->refcnt, 1, memory_order_relaxed);
    return snap;
}

sf_cluster_topic_t *sf_cluster_topic_new(sf_cluster_topic_t *src) {
    sf_cluster_topic_t *t = malloc(sizeof(*t));
    if (!t)
        return NULL;
    *t = *src;
    atomic_init(&t->refcnt, 1);
    memset(src, 0, sizeof(*src));
    return t;
}

sf_cluster_topic_t *sf_cluster_topic_ref(sf_cluster_topic_t *t) {
    if (t)
        atomic_fetch_add_explicit(&t->refcnt, 1, memory_order_relaxed);
    return t;
}

void sf_cluster_topic_unref(sf_cluster_topic_t *t) {
    if (t && atomic_fetch_sub_explicit(&t->refcnt, 1, memory_order_acq_rel) == 1) {
        sf_cluster_topic_clear(t);
        free(t);
    }
}

static void snapshot_destroy(sf_cluster_snapshot_t *snap) {
    int i;
    free(snap->cluster_id);
    for (i = 0; snap->brokers && i < snap->nbrokers; i++)
        sf_cluster_broker_clear(&snap->brokers[i]);
    free(snap->brokers);
    for (i = 0; snap->topics && i < snap->ntopics; i++)
        sf_cluster_topic_unref(snap->topics[i]);
    free(snap->topics);
    free(snap->by_id);
    for (i = 0; i < snap->ndeleting; i++)
        free(snap->deleting[i]);
    free(snap->deleting);
    sf_cluster_configs_free(snap->broker_configs, snap->nbroker_configs);
    sf_cluster_configs_free(snap->default_configs, snap->ndefault_configs);
    free(snap->group_buckets);
    free(snap);
}

void sf_cluster_snapshot_unref(sf_cluster_snapshot_t *snap) {
    if (snap && atomic_fetch_sub_explicit(&snap->refcnt, 1, memory_order_acq_rel) == 1)
        snapshot_destroy(snap);
}

static int broker_cmp(const void *a, const void *b) {
    int32_t x = ((const sf_cluster_broker_t *)a)->id, y = ((const sf_cluster_broker_t *)b)->id;
    return x < y ? -1 : x > y;
}

static int topic_cmp(const void *a, const void *b) {
    return strcmp((*(sf_cluster_topic_t *const *)a)->name, (*(sf_cluster_topic_t *const *)b)->name);
}

static int id_cmp(const void *a, const void *b) {
    return memcmp((*(sf_cluster_topic_t *const *)a)->topic_id,
                  (*(sf_cluster_topic_t *const *)b)->topic_id, 16);
}

static const uint8_t zero_id[16];

sf_cluster_snapshot_t *sf_cluster_snapshot_build(char *cluster_id, int32_t controller_id,
                                                 int32_t controller_epoch,
                                                 sf_cluster_broker_t *brokers, int nbrokers,
                                                 sf_cluster_topic_t **topics, int ntopics) {
    sf_cluster_snapshot_t *snap = calloc(1, sizeof(*snap));
    int i;
    if (snap && ntopics > 0 && !(snap->by_id = malloc((size_t)ntopics * sizeof(*snap->by_id)))) {
        free(snap);
        snap = NULL;
    }
    if (!snap) {
        free(cluster_id);
        for (i = 0; brokers && i < nbrokers; i++)
            sf_cluster_broker_clear(&brokers[i]);
        free(brokers);
        for (i = 0; topics && i < ntopics; i++)
            sf_cluster_topic_unref(topics[i]);
        free(topics);
        return NULL;
    }
    atomic_init(&snap->refcnt, 1);
    snap->cluster_id = cluster_id;
    snap->controller_id = controller_id;
    snap->controller_epoch = controller_epoch;
    snap->brokers = brokers;
    snap->nbrokers = nbrokers;
    snap->topics = topics;
    snap->ntopics = ntopics;
    if (nbrokers > 1)
        qsort(brokers, (size_t)nbrokers, sizeof(*brokers), broker_cmp);
    if (ntopics > 1)
        qsort(topics, (size_t)ntopics, sizeof(*topics), topic_cmp);
    for (i = 0; i < ntopics; i++)
        if (memcmp(topics[i]->topic_id, zero_id, 16))
            snap->by_id[snap->nby_id++] = topics[i];
    if (snap->nby_id > 1)
        qsort(snap->by_id, (size_t)snap->nby_id, sizeof(*snap->by_id), id_cmp);
    return snap;
}

sf_cluster_snapshot_t *sf_cluster_snapshot_build_copy(char *cluster_id, int32_t controller_id,
                                                      int32_t controller_epoch,
                                                      sf_cluster_broker_t *brokers, int nbrokers,
                                                      sf_cluster_topic_t *topics, int ntopics) {
    sf_cluster_topic_t **v = ntopics > 0 ? calloc((size_t)ntopics, sizeof(*v)) : NULL;
    int i, n = 0;
    for (i = 0; v && i < ntopics; i++)
        if ((v[n] = sf_cluster_topic_new(&topics[i])))
            n++;
    for (i = 0; topics && i < ntopics; i++)
        sf_cluster_topic_clear(&topics[i]); /* what could not be moved */
    free(topics);
    if (ntopics > 0 && (!v || n < ntopics)) {
        for (i = 0; i < n; i++)
            sf_cluster_topic_unref(v[i]);
        free(v);
        v = NULL;
        n = 0;
        free(cluster_id);
        for (i = 0; brokers && i < nbrokers; i++)
            sf_cluster_broker_clear(&brokers[i]);
        free(brokers);
        return NULL;
    }
    return sf_cluster_snapshot_build(cluster_id, controller_id, controller_epoch, brokers,
                                     nbrokers, v, n);
}

int sf_cluster_snapshot_topic_index(const sf_cluster_snapshot_t *snap, const char *name) {
    int lo = 0, hi;
    if (!snap || !name)
        return -1;
    hi = snap->ntopics - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(snap->topics[mid]->name, name);
        if (!c)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

const sf_cluster_topic_t *sf_cluster_snapshot_topic(const sf_cluster_snapshot_t *snap,
                                                    const char *name) {
    int i = sf_cluster_snapshot_topic_index(snap, name);
    return i < 0 ? NULL : snap->topics[i];
}

const sf_cluster_topic_t *sf_cluster_snapshot_topic_by_id(const sf_cluster_snapshot_t *snap,
                                                          const uint8_t id[16]) {
    int lo = 0, hi;
    if (!snap || !memcmp(id, zero_id, 16))
        return NULL;
    hi = snap->nby_id - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = memcmp(snap->by_id[mid]->topic_id, id, 16);
        if (!c)
            return snap->by_id[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

const sf_cluster_broker_t *sf_cluster_snapshot_broker(const sf_cluster_snapshot_t *snap,
                                                      int32_t id) {
    int lo = 0, hi;
    if (!snap)
        return NULL;
    hi = snap->nbrokers - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int32_t x = snap->brokers[mid].id;
        if (x == id)
            return &snap->brokers[mid];
        if (x < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

int sf_cluster_snapshot_deleting(const sf_cluster_snapshot_t *snap, const char *name) {
    int lo = 0, hi;
    if (!snap || !name)
        return 0;
    hi = snap->ndeleting - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(snap->deleting[mid], name);
        if (!c)
            return 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return 0;
}

const char *sf_cluster_configs_find(const sf_cluster_config_entry_t *configs, int n,
                                    const char *name) {
    int lo = 0, hi = n - 1;
    if (!configs || !name)
        return NULL;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(configs[mid].name, name);
        if (!c)
            return configs[mid].value;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

const char *sf_cluster_topic_config(const sf_cluster_topic_t *topic, const char *name) {
    return topic ? sf_cluster_configs_find(topic->configs, topic->nconfigs, name) : NULL;
}

const char *sf_cluster_snapshot_broker_config(const sf_cluster_snapshot_t *snap,
                                              int cluster_default, const char *name) {
    if (!snap)
        return NULL;
    if (cluster_default)
        return sf_cluster_configs_find(snap->default_configs, snap->ndefault_configs, name);
    return sf_cluster_configs_find(snap->broker_configs, snap->nbroker_configs, name);
}
