/* Partitions held here (see partition.h). */
#include "config.h"

#include "partition.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "logging.h"

sf_partition_t *sf_partition_new(sf_log_t *log, sf_logdir_t *ld, sf_iopool_t *manager,
                                 sf_partition_deleted_fn deleted, void *arg) {
    sf_partition_t *p = calloc(1, sizeof(*p));
    int i;
    if (!p || !(p->topic = strdup(sf_log_topic(log)))) {
        free(p);
        return NULL;
    }
    atomic_init(&p->refcnt, 1);
    atomic_init(&p->retired, 0);
    atomic_init(&p->lead_epoch, -1);
    atomic_init(&p->lead_start_offset, 0);
    p->isr_asked_version = -1;
    p->traffic_leo = -1;
    for (i = 0; i < SF_PARTITION_MAX_FOLLOWERS; i++)
        atomic_init(&p->followers[i].id, -1);
    p->index = sf_log_partition(log);
    p->log = log;
    p->ld = ld;
    p->manager = manager;
    p->deleted = deleted;
    p->deleted_arg = arg;
    return p;
}

sf_partition_t *sf_partition_ref(sf_partition_t *p) {
    if (p)
        atomic_fetch_add_explicit(&p->refcnt, 1, memory_order_relaxed);
    return p;
}

static void partition_free(sf_partition_t *p) {
    free(p->topic);
    free(p);
}

/* On the log-manager thread: nothing refers to the log any more. */
static void delete_job(void *arg) {
    sf_partition_t *p = arg;
    int rc = sf_logdir_remove(p->ld, p->topic, p->index);
    if (rc == SF_OK)
        sf_log(SF_LOG_INFO, "STORAGE", "deleted the log of %s-%d", p->topic, p->index);
    else
        sf_log(SF_LOG_ERR, "STORAGE", "cannot delete the log of %s-%d: %s", p->topic, p->index,
               sf_err_str(rc));
    if (p->deleted)
        p->deleted(p->deleted_arg, p->topic, p->index);
    partition_free(p);
}

void sf_partition_unref(sf_partition_t *p) {
    if (!p || atomic_fetch_sub_explicit(&p->refcnt, 1, memory_order_acq_rel) != 1)
        return;
    if (!atomic_load(&p->retired)) {
        partition_free(p);
        return;
    }
    p->job.fn = delete_job;
    p->job.arg = p;
    p->job.heap = 0;
    sf_iopool_submit(p->manager, 0, &p->job);
}

void sf_partition_retire(sf_partition_t *p) {
    atomic_store(&p->retired, 1);
}
