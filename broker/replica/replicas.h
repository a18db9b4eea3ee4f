/* The partitions this broker holds a replica of: a table on the metadata thread, kept in
 * step with each metadata snapshot, and the views (view.h) published from it to the request
 * handlers.
 *
 * For each snapshot: the partitions of deleted topics (or of a topic recreated under a new
 * id) are retired, so their logs go once no request uses them (partition.h); the partitions
 * assigned here that the table lacks are opened or created on the log-manager thread, which
 * owns the tables of the log directories (logdir.h), and join the table when that is done;
 * topic configs and leader epochs are applied to the logs; and a view is published. A
 * partition whose retired namesake is still being deleted is created once that is done.
 * Logs of topics no snapshot named are left alone: their loss must not follow from a missing
 * znode.
 *
 * Threading: the metadata thread, but for the jobs queued on the log-manager thread, which
 * report back through the metadata thread's mailbox. */
#ifndef SF_REPLICAS_H
#define SF_REPLICAS_H

#include <stddef.h>

#include "cluster.h"
#include "iopool.h"
#include "logdir.h"
#include "mailbox.h"
#include "view.h"

struct sf_brokercfg;

typedef struct sf_replicas sf_replicas_t;

/* A new view for the handlers; the callee takes the reference. */
typedef void (*sf_replicas_publish_fn)(void *arg, sf_view_t *view);

/* The table for the broker with @cfg (borrowed) and its @nlogdirs log directories (borrowed;
 * their tables are used only on @manager's thread from now on), reporting to @mb (the
 * metadata thread's mailbox) and publishing through @publish(@arg). NULL on no memory. */
sf_replicas_t *sf_replicas_new(const struct sf_brokercfg *cfg, sf_logdir_t *const *logdirs,
                               size_t nlogdirs, sf_iopool_t *manager, sf_mailbox_t *mb,
                               sf_replicas_publish_fn publish, void *arg);

/* Apply the snapshot @snap (referenced while needed). */
void sf_replicas_update(sf_replicas_t *r, sf_cluster_snapshot_t *snap);

/* Shutdown: stop creating and publishing (jobs still queued report back to nothing). */
void sf_replicas_stop(sf_replicas_t *r);

/* Free the table (NULL ok), dropping its references. Call after sf_replicas_stop, once the
 * log-manager thread stopped and @mb ran what it held. */
void sf_replicas_free(sf_replicas_t *r);

#endif
