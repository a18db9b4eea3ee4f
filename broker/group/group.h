/* Consumer groups: the coordinator of the groups whose id hashes to a bucket this broker owns
 * (the controller places the buckets, /coordinators/groups), Kafka's classic group protocol
 * (members, generations, the join and sync phases, heartbeats and session timeouts) and the
 * committed offsets, kept in memory and written to ZooKeeper (cluster.h, offsets.c) before a
 * commit is acknowledged; a transaction's offsets stay pending until its marker
 * (txnoffsets.c).
 *
 * A group is loaded from ZooKeeper the first time a request names it on this coordinator
 * (requests arriving meanwhile wait), and forgotten when its bucket moves elsewhere (the
 * requests waiting in it are answered NOT_COORDINATOR).
 *
 * Errors are Kafka error codes. Every callback runs on the metadata thread, which owns the
 * whole module; a pending join or sync holds its callback until the group answers it, the
 * member leaves, the phase times out or the module is closed. Strings handed in are copied;
 * strings handed to callbacks are borrowed for the call. */
#ifndef SF_GROUP_H
#define SF_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "cluster.h"

struct event_base;

typedef struct sf_coord sf_coord_t;
typedef struct sf_group sf_group_t;

typedef struct sf_coord_config {
    int32_t broker_id;
    int32_t min_session_ms, max_session_ms; /* group.min/max.session.timeout.ms */
    int32_t initial_delay_ms;               /* group.initial.rebalance.delay.ms */
    int32_t max_size;                       /* group.max.size */
    int32_t metadata_max_bytes;             /* offset.metadata.max.bytes */
    int64_t retention_ms;                   /* offsets.retention.minutes */
    int32_t retention_check_ms;             /* offsets.retention.check.interval.ms; 0: off */
} sf_coord_config_t;

/* @cl NULL (unit tests): groups start empty and commits fail with COORDINATOR_NOT_AVAILABLE. */
sf_coord_t *sf_coord_new(struct event_base *base, sf_cluster_t *cl, const sf_coord_config_t *cfg);
/* Answer everything pending (COORDINATOR_NOT_AVAILABLE) and free. NULL is ignored. */
void sf_coord_free(sf_coord_t *c);
/* A new metadata snapshot: groups of buckets no longer ours are dropped. */
void sf_coord_update(sf_coord_t *c, const sf_cluster_snapshot_t *snap);

/* Kafka's partition of __consumer_offsets for @group: abs(Java String.hashCode) % @nbuckets,
 * the id decoded from UTF-8 as Java does (malformed bytes replaced as its decoder does). */
int sf_coord_bucket_of(const char *group, size_t len, int nbuckets);

/* Run @fn(@arg, group, NONE) with @group loaded here, now or once loaded; or @fn(@arg, NULL,
 * err): INVALID_GROUP_ID (empty id), NOT_COORDINATOR (not ours), COORDINATOR_NOT_AVAILABLE
 * (no buckets yet, ZooKeeper failing, closing). */
typedef void (*sf_group_fn)(void *arg, sf_group_t *g, int16_t err);
void sf_coord_with_group(sf_coord_t *c, const char *group, sf_group_fn fn, void *arg);

/* ---- the classic protocol ---- */

typedef struct sf_gprotocol {
    const char *name;
    const uint8_t *meta;
    size_t len;
} sf_gprotocol_t;

typedef struct sf_gjoin {
    const char *member_id;   /* "" for a new member */
    const char *instance_id; /* NULL: dynamic member */
    const char *client_id, *client_host, *protocol_type;
    int32_t session_ms, rebalance_ms;
    const sf_gprotocol_t *protocols;
    int nprotocols;
    int require_known_id; /* JoinGroup v4+: a new member gets MEMBER_ID_REQUIRED first */
} sf_gjoin_t;

/* One member as the leader's JoinGroup answer lists it. */
typedef struct sf_gmember_info {
    const char *member_id, *instance_id;
    const uint8_t *meta;
    size_t len;
} sf_gmember_info_t;

typedef struct sf_gjoin_result {
    int16_t error;
    int32_t generation;
    const char *protocol_type, *protocol_name, *leader, *member_id;
    const sf_gmember_info_t *members; /* the leader only */
    int nmembers;
    int skip_assignment; /* the leader: the group keeps its assignment (JoinGroup v9+) */
} sf_gjoin_result_t;

typedef void (*sf_gjoin_cb)(void *arg, const sf_gjoin_result_t *r);
void sf_group_join(sf_group_t *g, const sf_gjoin_t *req, sf_gjoin_cb cb, void *arg);

typedef struct sf_gassignment {
    const char *member_id;
    const uint8_t *data;
    size_t len;
} sf_gassignment_t;

/* SyncGroup: @protocol_type / @protocol_name may be NULL (before v5). @cb(@arg, error,
 * protocol_type, protocol_name, assignment, len). */
typedef void (*sf_gsync_cb)(void *arg, int16_t error, const char *protocol_type,
                            const char *protocol_name, const uint8_t *data, size_t len);
void sf_group_sync(sf_group_t *g, const char *member_id, const char *instance_id,
                   int32_t generation, const char *protocol_type, const char *protocol_name,
                   const sf_gassignment_t *assignments, int n, sf_gsync_cb cb, void *arg);

int16_t sf_group_heartbeat(sf_group_t *g, const char *member_id, const char *instance_id,
                           int32_t generation);
int16_t sf_group_leave(sf_group_t *g, const char *member_id, const char *instance_id);

/* ---- offsets ---- */

typedef struct sf_goffset {
    const char *topic;
    int32_t partition;
    int64_t offset; /* -1: none committed */
    int32_t leader_epoch;
    const char *metadata;
} sf_goffset_t;

/* OffsetCommit: checks the member and generation (generation -1: a commit outside group
 * management, allowed while the group has no members), then writes. @done(@arg, error, errs)
 * runs once: error is the request's (the member check; errs NULL), else NONE with @n errors
 * (borrowed), one per item: NONE, OFFSET_METADATA_TOO_LARGE, NOT_COORDINATOR (the bucket
 * moved on), COORDINATOR_NOT_AVAILABLE (ZooKeeper failed, or the module is closing). @v is
 * copied. */
typedef void (*sf_gcommit_cb)(void *arg, int16_t error, const int16_t *errs);
void sf_group_commit(sf_group_t *g, const char *member_id, const char *instance_id,
                     int32_t generation, const sf_goffset_t *v, int n, sf_gcommit_cb done,
                     void *arg);

/* Every group loaded here (those requests named since this broker became their coordinator):
 * @fn(@arg, group). */
void sf_coord_each_group(sf_coord_t *c, void (*fn)(void *arg, sf_group_t *g), void *arg);

/* The group's id. */
const char *sf_group_id(const sf_group_t *g);

/* The committed offset of one partition (offset -1 and leader epoch -1 when none). */
sf_goffset_t sf_group_offset(const sf_group_t *g, const char *topic, int32_t partition);
/* Every committed offset, in (topic, partition) order: @fn(@arg, offset). */
void sf_group_offsets(const sf_group_t *g, void (*fn)(void *arg, const sf_goffset_t *o),
                      void *arg);

/* ---- transactional offsets (txnoffsets.c) ---- */

typedef void (*sf_gdone_cb)(void *arg, int16_t error);

/* Who commits: TxnOffsetCommit's member fields (member_id "" and generation -1 outside group
 * management, instance_id NULL) and its transactional producer. */
typedef struct sf_gtxn {
    const char *member_id, *instance_id;
    int32_t generation;
    int64_t producer_id;
    int16_t producer_epoch;
} sf_gtxn_t;

/* TxnOffsetCommit: checks the member as Kafka does for a transactional commit, then keeps @v
 * as the producer's pending offsets for the group, written to ZooKeeper before @done. They
 * become the group's committed offsets when the transaction's marker commits
 * (sf_coord_txn_complete) and are dropped when it aborts. @done as sf_group_commit's, with
 * request errors also COORDINATOR_LOAD_IN_PROGRESS (the bucket's pending offsets are still
 * loading), CONCURRENT_TRANSACTIONS (the producer's previous write or marker is in flight)
 * and INVALID_PRODUCER_EPOCH (older than the pending offsets'). */
void sf_group_txn_commit(sf_group_t *g, const sf_gtxn_t *who, const sf_goffset_t *v, int n,
                         sf_gcommit_cb done, void *arg);

/* 1 when a transaction holds an offset of (@topic, @partition) not settled yet, a commit of
 * it is being written, or the bucket's pending offsets are not loaded yet (OffsetFetch's
 * RequireStable). */
int sf_group_offset_unstable(const sf_group_t *g, const char *topic, int32_t partition);

/* A transaction marker of producer @pid for __consumer_offsets partition @bucket: the
 * producer's pending offsets for the groups of the bucket are committed (@commit) or dropped,
 * then @done(@arg, error): NONE (also when there were none), NOT_COORDINATOR,
 * COORDINATOR_LOAD_IN_PROGRESS or CONCURRENT_TRANSACTIONS (try again),
 * COORDINATOR_NOT_AVAILABLE. @done may run before this returns. */
void sf_coord_txn_complete(sf_coord_t *c, int bucket, int64_t pid, int commit, sf_gdone_cb done,
                           void *arg);

/* ---- describing and deleting (groupadmin.c) ---- */

/* Kafka's state names: "Empty", "PreparingRebalance", "CompletingRebalance", "Stable", and
 * "Dead" for a group that has neither members nor committed offsets (does not exist). */
const char *sf_group_state(const sf_group_t *g);

/* The groups of the buckets this broker coordinates: those in memory and those that have
 * only committed offsets in ZooKeeper ("Empty", protocol type ""). @cb(@arg, error, v, n)
 * once (v borrowed for the call); error NONE or COORDINATOR_NOT_AVAILABLE. */
typedef struct sf_glisting {
    const char *id, *protocol_type, *state;
} sf_glisting_t;
typedef void (*sf_glist_cb)(void *arg, int16_t error, const sf_glisting_t *v, int n);
void sf_coord_list(sf_coord_t *c, sf_glist_cb cb, void *arg);

typedef struct sf_gdescribed_member {
    const char *member_id, *instance_id, *client_id, *client_host;
    const uint8_t *meta, *assignment; /* the chosen protocol's metadata; the assignment */
    size_t meta_len, assignment_len;
} sf_gdescribed_member_t;

typedef struct sf_gdescription {
    const char *state, *protocol_type, *protocol; /* "" when none */
    const sf_gdescribed_member_t *members;
    int nmembers;
} sf_gdescription_t;

/* @fn(@arg, description) (borrowed for the call). Returns SF_OK or SF_ERR_NOMEM. */
int sf_group_describe(const sf_group_t *g, void (*fn)(void *arg, const sf_gdescription_t *d),
                      void *arg);

/* DeleteGroups: NON_EMPTY_GROUP while it has members, GROUP_ID_NOT_FOUND when it does not
 * exist; else its offsets and znodes are deleted and @done(@arg, NONE) follows (or
 * NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE). @done may run before this returns. */
void sf_group_delete(sf_group_t *g, sf_gdone_cb done, void *arg);

/* OffsetDelete: @errs (@n, the caller's) gets GROUP_SUBSCRIBED_TO_TOPIC for a topic a member
 * subscribes to, else NONE; the other offsets are deleted, then @done(@arg, error) with error
 * GROUP_ID_NOT_FOUND (no such group), NON_EMPTY_GROUP (members of a protocol other than
 * "consumer"), NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE (nothing deleted), else NONE. @v and @errs are borrowed until @done, which may run before this
 * returns. */
void sf_group_delete_offsets(sf_group_t *g, const sf_goffset_t *v, int n, int16_t *errs,
                             sf_gdone_cb done, void *arg);

#endif
