/* The consumer protocol of Kafka's classic groups (protocol type "consumer"): the
 * subscription each member sends in JoinGroup, the assignment the leader hands out in
 * SyncGroup, and the partition assignors that compute it (range, roundrobin,
 * cooperative-sticky), after Kafka's RangeAssignor, RoundRobinAssignor and
 * CooperativeStickyAssignor.
 *
 * Both encodings are an int16 version followed by the message of that version
 * (ConsumerProtocolSubscription.json, ConsumerProtocolAssignment.json); a newer version than
 * the codec knows is read as the newest it knows, whose fields it starts with.
 *
 * Everything here is pure: no client, no lock, no I/O. */
#ifndef SF_ASSIGNOR_H
#define SF_ASSIGNOR_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "buf.h"
#include "proto.h"

/* The assignors, by partition.assignment.strategy name. */
typedef enum sf_assignor_kind {
    SF_ASSIGNOR_RANGE = 0,          /* "range" (eager) */
    SF_ASSIGNOR_ROUNDROBIN = 1,     /* "roundrobin" (eager) */
    SF_ASSIGNOR_COOPERATIVE_STICKY = 2 /* "cooperative-sticky" (incremental) */
} sf_assignor_kind_t;

#define SF_ASSIGNOR_COUNT 3

/* The newest versions written (and read) of the two encodings. */
#define SF_ASSIGNOR_SUBSCRIPTION_VERSION 3
#define SF_ASSIGNOR_ASSIGNMENT_VERSION 3

/* The protocol name of @kind in JoinGroup ("range", ...; static). */
const char *sf_assignor_name(sf_assignor_kind_t kind);

/* The assignor named @name: a protocol name, or the Java class name of the same assignor
 * (org.apache.kafka.clients.consumer.RangeAssignor, ...). Returns SF_OK or SF_ERR_NOTFOUND. */
int sf_assignor_parse(const char *name, sf_assignor_kind_t *kind);

/* 1 if @kind uses the incremental (cooperative) rebalance protocol. */
int sf_assignor_cooperative(sf_assignor_kind_t kind);

/* A partition of a topic. @topic is borrowed. */
typedef struct sf_assignor_tp {
    const char *topic;
    int32_t partition;
} sf_assignor_tp_t;

/* A topic the members subscribe to and its partition count (0: unknown, nothing to assign). */
typedef struct sf_assignor_topic {
    const char *name;
    int32_t partitions;
} sf_assignor_topic_t;

/* One member as the assignors see it. Input fields are borrowed; @assigned is the output. */
typedef struct sf_assignor_member {
    const char *member_id;
    const char *instance_id;          /* NULL: a dynamic member */
    const char *const *topics;        /* its subscription */
    size_t ntopics;
    const sf_assignor_tp_t *owned;    /* what it owns now (cooperative-sticky) */
    size_t nowned;
    int32_t generation;               /* the generation @owned belongs to; -1 unknown */
    sf_assignor_tp_t *assigned;       /* malloc'd by sf_assignor_assign, sorted by topic then
                                       * partition; each topic points at a name of the
                                       * @topics table passed to it */
    size_t nassigned;
} sf_assignor_member_t;

/* Compute the assignment of every partition of @topics (@ntopics, names unique) to the
 * @nmembers @members with assignor @kind, filling each member's @assigned (freed first when
 * set). A member subscribed to a topic missing from @topics gets nothing of it.
 * cooperative-sticky keeps what members own where the result stays balanced and leaves a
 * partition that changes owner unassigned for this generation, so that its old owner revokes it
 * first. Returns SF_OK or SF_ERR_NOMEM (then every @assigned is NULL). */
int sf_assignor_assign(sf_assignor_kind_t kind, const sf_assignor_topic_t *topics, size_t ntopics,
                       sf_assignor_member_t *members, size_t nmembers);

/* Free what sf_assignor_assign put into @members. */
void sf_assignor_members_clear(sf_assignor_member_t *members, size_t nmembers);

/* ---- encodings ---- */

/* Append a subscription of version @version (0..3): @topics, @userdata (len -1: null), and
 * for v1+ the @nowned partitions @owned (in any order; grouped by topic on the wire) and for
 * v2+ @generation; no rack (v3). Returns SF_OK, SF_ERR_NOMEM or SF_ERR_UNSUPPORTED. */
int sf_assignor_subscription_encode(sf_wbuf_t *wb, int16_t version, const char *const *topics,
                                    size_t ntopics, const sf_assignor_tp_t *owned,
                                    size_t nowned, int32_t generation, sf_slice_t userdata);

/* Decode the subscription at @p (@len bytes, borrowed: the result's slices point into it;
 * arrays come from @arena). *@version receives the version written (which may be newer than
 * the one decoded). Returns SF_OK, SF_ERR_MALFORMED or SF_ERR_NOMEM. */
int sf_assignor_subscription_decode(const uint8_t *p, size_t len, sf_arena_t *arena,
                                    int16_t *version,
                                    sf_proto_ConsumerProtocolSubscription_t *sub);

/* Append an assignment of version @version (0..3) of the @n partitions @tps (in any order),
 * with null user data. Returns SF_OK, SF_ERR_NOMEM or SF_ERR_UNSUPPORTED. */
int sf_assignor_assignment_encode(sf_wbuf_t *wb, int16_t version, const sf_assignor_tp_t *tps,
                                  size_t n);

/* Decode the assignment at @p (@len bytes, borrowed; arrays from @arena). Zero bytes are an
 * empty assignment (what a coordinator sends a member the leader gave nothing). Returns SF_OK,
 * SF_ERR_MALFORMED or SF_ERR_NOMEM. */
int sf_assignor_assignment_decode(const uint8_t *p, size_t len, sf_arena_t *arena,
                                  int16_t *version, sf_proto_ConsumerProtocolAssignment_t *asg);

/* The generation cooperative-sticky members put in their subscription's user data (a
 * big-endian int32, as Kafka's CooperativeStickyAssignor writes it for members of old
 * versions), or -1 when @userdata does not hold one. */
int32_t sf_assignor_userdata_generation(sf_slice_t userdata);

#endif
