/* What a request sees: one metadata snapshot, the partitions this broker holds a replica of
 * in it (partition.h), and the topic config defaults in force (the broker configuration with
 * the snapshot's dynamic broker configs).
 *
 * A view is immutable and reference counted (atomically). The metadata thread builds one for
 * every change and publishes it to each network worker through the worker's mailbox; the
 * dispatcher references its worker's current view for each request until the request is
 * answered. So everything a request reads is consistent, stays valid wherever the request
 * goes (an I/O thread, the metadata thread), and is found without a lock. */
#ifndef SF_VIEW_H
#define SF_VIEW_H

#include <stdatomic.h>
#include <stdint.h>

#include "cluster.h"
#include "partition.h"
#include "topiccfg.h"

struct sf_brokercfg;

typedef struct sf_view {
    atomic_int refcnt;
    sf_cluster_snapshot_t *snap; /* referenced */
    sf_topiccfg_ctx_t topiccfg;  /* borrows from the configuration and @snap */
    sf_partition_t ***parts;     /* parts[t][i]: partition i of snap->topics[t], NULL if not
                                    held here; referenced */
} sf_view_t;

/* The partition (@topic, @index) as the registry holds it (borrowed), or NULL. */
typedef sf_partition_t *(*sf_view_lookup_fn)(void *arg, const char *topic, int32_t index);

/* A view of @snap (referenced here) and the partitions @lookup finds for it, one reference.
 * @cfg is borrowed for the view's life. NULL on no memory. */
sf_view_t *sf_view_new(sf_cluster_snapshot_t *snap, const struct sf_brokercfg *cfg,
                       sf_view_lookup_fn lookup, void *arg);

/* Take / drop a reference (NULL ok). Any thread. */
sf_view_t *sf_view_ref(sf_view_t *v);
void sf_view_unref(sf_view_t *v);

/* The partition @index of @topic held here, or NULL (borrowed from @v). */
sf_partition_t *sf_view_partition(const sf_view_t *v, const char *topic, int32_t index);

#endif
