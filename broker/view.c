/* Published views (see view.h). */
#include "config.h"

#include "view.h"

#include <stdlib.h>

#include "brokercfg.h"

static void view_free(sf_view_t *v) {
    int t, i;
    for (t = 0; v->parts && t < v->snap->ntopics; t++) {
        const sf_cluster_topic_t *topic = v->snap->topics[t];
        for (i = 0; v->parts[t] && i < topic->npartitions; i++)
            sf_partition_unref(v->parts[t][i]);
        free(v->parts[t]);
    }
    free(v->parts);
    sf_cluster_snapshot_unref(v->snap);
    free(v);
}

sf_view_t *sf_view_new(sf_cluster_snapshot_t *snap, const sf_brokercfg_t *cfg,
                       sf_view_lookup_fn lookup, void *arg) {
    sf_view_t *v = calloc(1, sizeof(*v));
    int t, i;
    if (!v)
        return NULL;
    atomic_init(&v->refcnt, 1);
    v->snap = sf_cluster_snapshot_ref(snap);
    v->topiccfg.cfg = cfg;
    v->topiccfg.broker_dyn = snap->broker_configs;
    v->topiccfg.nbroker_dyn = snap->nbroker_configs;
    v->topiccfg.default_dyn = snap->default_configs;
    v->topiccfg.ndefault_dyn = snap->ndefault_configs;
    if (!(v->parts = calloc((size_t)snap->ntopics + 1, sizeof(*v->parts))))
        goto nomem;
    for (t = 0; t < snap->ntopics; t++) {
        const sf_cluster_topic_t *topic = snap->topics[t];
        sf_partition_t **row = NULL;
        for (i = 0; i < topic->npartitions; i++) {
            sf_partition_t *p = lookup(arg, topic->name, i);
            if (!p)
                continue;
            /* Rows only for topics with a partition here: most of a big cluster is not. */
            if (!row && !(row = v->parts[t] = calloc((size_t)topic->npartitions, sizeof(*row))))
                goto nomem;
            row[i] = sf_partition_ref(p);
        }
    }
    return v;
nomem:
    view_free(v);
    return NULL;
}

sf_view_t *sf_view_ref(sf_view_t *v) {
    if (v)
        atomic_fetch_add_explicit(&v->refcnt, 1, memory_order_relaxed);
    return v;
}

void sf_view_unref(sf_view_t *v) {
    if (v && atomic_fetch_sub_explicit(&v->refcnt, 1, memory_order_acq_rel) == 1)
        view_free(v);
}

sf_partition_t *sf_view_partition(const sf_view_t *v, const char *topic, int32_t index) {
    int t = v ? sf_cluster_snapshot_topic_index(v->snap, topic) : -1;
    if (t < 0 || index < 0 || index >= v->snap->topics[t]->npartitions || !v->parts[t])
        return NULL;
    return v->parts[t][index];
}
