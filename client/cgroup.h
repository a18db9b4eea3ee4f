/* A consumer's membership in a consumer group (Kafka's classic group protocol): finding the
 * coordinator, JoinGroup / SyncGroup (the leader runs the assignor), heartbeats, LeaveGroup,
 * committed offsets (OffsetCommit, OffsetFetch, auto-commit) and the rebalance events for
 * the application. The group's assignment drives the consumer's own assign/unassign
 * (consumer.h); the public functions are in streamflow.h (sf_consumer_subscribe, ...).
 *
 * (The module is "cgroup", not "group": broker/group/group.h is the coordinator's side.)
 *
 * Threads. The membership is a role of the consumer's client (client.h): its state lives
 * under the client lock, its state machine and requests run in the I/O thread, and the
 * application's threads change the subscription, queue commits and serve the events (the
 * rebalance and commit callbacks) from sf_consumer_poll, with the lock released around each
 * callback. A revocation waits for its callback: the next JoinGroup is sent once the
 * application has served it (the Java consumer, which rebalances inside poll, behaves alike).
 *
 * The codec helpers at the end are shared with the admin client (admingroups.c). */
#ifndef SF_CGROUP_H
#define SF_CGROUP_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "client.h"
#include "consumer.h"
#include "streamflow.h"

typedef struct sf_cgroup sf_cgroup_t;

/* A membership for consumer @c (borrowed; it owns the membership) whose client does not exist
 * yet: fills @role (the hooks, to register with sf_client_new). NULL when out of memory. */
sf_cgroup_t *sf_cgroup_new(sf_consumer_t *c, sf_client_role_t *role);

/* Start it on client @cl (created with the role): reads the configuration. Returns SF_OK, or
 * SF_ERROR_INVALID with @errstr set for a bad group configuration. */
int sf_cgroup_start(sf_cgroup_t *g, sf_client_t *cl, char *errstr, size_t errstr_size);

/* Free it after the client is destroyed (the commit callbacks ran in sf_cgroup_close: no
 * callback runs here). NULL is ignored. */
void sf_cgroup_free(sf_cgroup_t *g);

/* 1 while sf_consumer_subscribe is in force (lock held). */
int sf_cgroup_subscribed(const sf_cgroup_t *g);

/* sf_consumer_poll's hook (application thread, lock held): counts the poll, serves the
 * pending events (callbacks run with the lock released) and returns a group error for the
 * application (a message with partition -1 and err set; the caller owns it) or NULL. */
sf_message_t *sf_cgroup_poll(sf_cgroup_t *g);

/* sf_consumer_destroy's first step (application thread, lock NOT held): serve the pending
 * events, revoke the partitions, commit them (enable.auto.commit) and leave the group, each
 * step bounded by request.timeout.ms; then run the callbacks of the asynchronous commits
 * (SF_ERROR_DESTROYED for those not finished by then). */
void sf_cgroup_close(sf_cgroup_t *g);

/* ---- partition lists ---- */

/* By topic, then partition (qsort comparator for sf_topic_partition_t). */
int sf_cgroup_tp_cmp(const void *a, const void *b);

/* A copy of the @n partitions @tps in one allocation (entries, then the topic strings), freed
 * with free() (sf_topic_partitions_destroy). NULL when out of memory or @n is 0. */
sf_topic_partition_t *sf_cgroup_tps_pack(const sf_topic_partition_t *tps, size_t n);

/* ---- codec helpers (shared with admingroups.c) ---- */

/* Highest versions spoken. */
#define SF_CGROUP_FINDCOORD_MAX 4
#define SF_CGROUP_OFFSETCOMMIT_MAX 8
#define SF_CGROUP_OFFSETFETCH_MAX 8

/* FindCoordinator for @id: a group (@key_type 0) or a transactional id (1, v1+). */
int sf_cgroup_findcoord_encode(sf_wbuf_t *wb, int16_t version, const char *id, int8_t key_type);
/* The answer: *@node (-1 when none) and *@kerr. Returns SF_OK or SF_ERROR_MALFORMED /
 * SF_ERROR_NOMEM. */
int sf_cgroup_findcoord_decode(sf_rbuf_t *body, int16_t version, int32_t *node, int16_t *kerr);

/* OffsetCommit of the @n partitions @tps (offsets in them) for @group as member @member_id
 * (NULL: "") of @generation, @instance_id NULL for a dynamic member. */
int sf_cgroup_commit_encode(sf_wbuf_t *wb, int16_t version, const char *group,
                            int32_t generation, const char *member_id, const char *instance_id,
                            const sf_topic_partition_t *tps, size_t n);
/* Set the err of each of @tps from the answer (SF_ERROR_MALFORMED for a partition it does not
 * list). Returns SF_OK, SF_ERROR_MALFORMED or SF_ERROR_NOMEM. */
int sf_cgroup_commit_decode(sf_rbuf_t *body, int16_t version, sf_topic_partition_t *tps,
                            size_t n);

/* OffsetFetch of the @n partitions @tps for @group, or (@n 0) of every partition the group has
 * an offset for (v2+); with @require_stable (v7+), UNSTABLE_OFFSET_COMMIT for a partition an
 * open transaction has an offset for. */
int sf_cgroup_fetch_encode(sf_wbuf_t *wb, int16_t version, const char *group,
                           const sf_topic_partition_t *tps, size_t n, int require_stable);
/* Each partition of the answer, for @fn: its topic (borrowed for the call), partition,
 * committed offset (-1: none) and error. *@kerr receives the group's error (v2+). Returns
 * SF_OK, SF_ERROR_MALFORMED or SF_ERROR_NOMEM. */
typedef void (*sf_cgroup_offset_fn)(void *arg, sf_slice_t topic, int32_t partition,
                                    int64_t offset, int16_t err);
int sf_cgroup_fetch_decode(sf_rbuf_t *body, int16_t version, int16_t *kerr,
                           sf_cgroup_offset_fn fn, void *arg);

/* 1 for the errors that mean "ask again, maybe elsewhere": the coordinator moved or is not
 * ready (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS), or the
 * request did not get through (TRANSPORT, TIMED_OUT, REQUEST_TIMED_OUT). */
int sf_cgroup_coord_retriable(int err);

#endif
