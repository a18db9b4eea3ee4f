/* Consumer internals shared by client/consumer.c, client/reqrep.c, the group membership and
 * the unit tests: access to the client core and the group's hooks. The decoding of fetched
 * records into messages is in records.h. */
#ifndef SF_CONSUMER_H
#define SF_CONSUMER_H

#include <stddef.h>
#include <stdint.h>

#include "client.h"
#include "records.h"
#include "streamflow.h"

/* ---- for the group membership (cgroup.c); all with the client lock held ---- */

/* The membership of @c, or NULL when it has no group.id. */
struct sf_cgroup *sf_consumer_cgroup(sf_consumer_t *c);

/* Assign / unassign a partition for the group (as sf_consumer_assign / unassign do).
 * @offset is an offset, SF_OFFSET_BEGINNING or SF_OFFSET_END; with @err != 0 the partition is
 * assigned paused, with an error event @err for the application (no offset to start from). */
int sf_consumer_group_add(sf_consumer_t *c, const char *topic, int32_t partition, int64_t offset,
                          int err);
int sf_consumer_group_remove(sf_consumer_t *c, const char *topic, int32_t partition);

/* The position of an assigned partition: the offset after the last message handed out (-1
 * while it is being resolved, or when not assigned). With @pending, the last message poll
 * returned counts as not processed until the next poll. */
int64_t sf_consumer_group_position(sf_consumer_t *c, const char *topic, int32_t partition,
                                   int pending);

/* The assigned partitions with their positions (topics borrowed, valid while the lock is
 * held), at most @cap of them into @out; returns how many there are. */
size_t sf_consumer_group_parts(sf_consumer_t *c, sf_topic_partition_t *out, size_t cap);

/* 1 while an application thread waits in sf_consumer_poll. */
int sf_consumer_polling(sf_consumer_t *c);

/* The client core under @c (for reqrep.c: metadata and admin calls). */
sf_client_t *sf_consumer_client(sf_consumer_t *c);

/* The milliseconds from now until @deadline (sf_clock_mono_ms time), at least 1, as a
 * timeout argument; -1 when @deadline is -1 (none). */
int sf_consumer_ms_left(int64_t deadline);

/* Mark the metadata stale and wait (application thread, lock held) @backoff_ms for it, no
 * longer than until @deadline (-1: none). Returns SF_ERROR_TIMED_OUT once @deadline has
 * passed, else SF_OK. */
int sf_consumer_metadata_backoff(sf_client_t *cl, int64_t backoff_ms, int64_t deadline);

#endif
