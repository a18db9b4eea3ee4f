/* The cluster metadata kept in ZooKeeper: the typed znode layout (DESIGN.md section 4), broker
 * registration, controller election, the admin writes behind CreateTopics / DeleteTopics /
 * CreatePartitions / AlterConfigs, and an immutable metadata snapshot rebuilt from watches.
 *
 * Layout (relative to the chroot):
 *   /cluster/id                              {"version":1,"id":"<base64url uuid>"}
 *   /brokers/ids/<id>            EPHEMERAL   {"version":1,"host":..,"port":..,"endpoints":[..],
 *                                             "rack":null,"timestamp":"<ms>"}; czxid = epoch
 *   /controller                  EPHEMERAL   {"version":1,"brokerid":N,"timestamp":"<ms>"}
 *   /controller_epoch                        "N"
 *   /brokers/topics/<t>                      {"version":1,"topic_id":"..","partitions":{"0":[1,2]}}
 *   /brokers/topics/<t>/partitions/<p>/state {"version":1,"leader":1,"leader_epoch":0,
 *                                             "isr":[1],"controller_epoch":N}
 *   /config/topics/<t>                       {"version":1,"config":{"k":"v"}}
 *   /config/brokers/<id>                     the same JSON: dynamic configs of broker <id>
 *   /config/brokers/<default>                the same JSON: the cluster-wide dynamic default
 *   /config/changes/config_change_<seq>      {"version":2,"entity_path":"brokers/<id>"}:
 *                                             Kafka's change notifications (PERSISTENT_SEQUENTIAL)
 *   /admin/delete_topics/<t>
 *   /admin/preferred_replica_election, /admin/reassign_partitions   Kafka's admin requests,
 *                                             carried out by the controller
 *   /coordinators/groups                     {"version":1,"buckets":[{"broker":1,"epoch":0},..]}:
 *                                             the group coordinator of each hash bucket
 *   /coordinators/groups/<b>                 {"version":1,"broker":N}; its version is the
 *                                             bucket's epoch (offset writes check it)
 *   /coordinators/groups/<b>/<pid>-<g>       the offsets producer <pid>'s open transaction
 *                                             committed for group <g>, until its marker
 *   /consumers/<g>/offsets/<t>/<p>           the committed offset in decimal (Kafka's
 *                                             ZooKeeper-era layout), written by the coordinator
 *   /consumers/<g>/meta/<t>/<p>              {"version":1,"leader_epoch":..,"metadata":..,
 *                                             "commit_timestamp":..} beside it
 *   /transactions/<id>                       a transactional id's state, as its transaction
 *                                             coordinator (the owner of the id's group
 *                                             coordinator bucket) writes it
 * The topic znode also holds "adding_replicas" / "removing_replicas" while a reassignment is
 * under way (Kafka's layout; see sf_cluster_reassign).
 *
 * Threading: everything runs on the event loop thread, except that snapshots are immutable and
 * reference counted (atomically), so they may be handed to and read from any thread.
 *
 * Sessions: the first snapshot is built from a complete load after registering. Watches (on
 * /brokers/ids and /brokers/topics children, every broker, topic, partition state and topic
 * config znode, this broker's and the default dynamic broker config znodes, and /controller)
 * keep the model current; after a reconnect everything is read
 * again, and after a session expiry the broker re-registers, re-elects and reloads. Meanwhile
 * the last snapshot stays current.
 * User callbacks are always called from this module's own events, never from inside a
 * ZooKeeper completion; sf_cluster_free may be called from inside any of them. */
#ifndef SF_CLUSTER_H
#define SF_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct sf_zk;

#include "snapshot.h"

/* ---- The running module ---- */

typedef struct sf_cluster sf_cluster_t;

typedef struct sf_cluster_options {
    const char *zk_connect;    /* zookeeper.connect: "h:p,h:p" with an optional "/chroot" */
    const char *zk_chroot;     /* if not NULL, the chroot to use (overrides one in zk_connect) */
    int session_timeout_ms;    /* zookeeper.session.timeout.ms (18000 if <= 0) */
    int connection_timeout_ms; /* zookeeper.connection.timeout.ms (session timeout if <= 0) */
    int32_t broker_id;
    const char *host;                /* registered host (may be NULL) */
    int32_t port;                    /* registered port (-1 with a NULL host) */
    const char *const *endpoints;    /* "PLAINTEXT://h:p", ... */
    int nendpoints;
    const char *rack; /* NULL for none */
    /* unclean.leader.election.enable of the broker's configuration: the controller's default
     * when neither the topic nor a dynamic broker config sets it */
    int unclean_leader_election;
    /* auto.leader.rebalance.enable, leader.imbalance.check.interval.seconds and
     * leader.imbalance.per.broker.percentage: the controller's preferred leader rebalance */
    int auto_leader_rebalance;
    int leader_imbalance_check_interval_s;
    int leader_imbalance_percentage;
    /* offsets.topic.num.partitions: the number of group coordinator buckets, used when the
     * first controller creates them (50 if <= 0 or above SF_CLUSTER_MAX_BUCKETS) */
    int offsets_buckets;
} sf_cluster_options_t;

typedef struct sf_cluster_callbacks {
    /* Called once: with SF_OK after connecting, creating the base paths and /cluster/id,
     * registering the broker and loading the first snapshot (delivered through on_snapshot just
     * before); or with an error and a sentence for the operator (ZooKeeper unreachable within
     * the connection timeout, broker id held by a live broker). After an error the module does
     * nothing more; free it. */
    void (*on_ready)(void *arg, int err, const char *errmsg);
    /* A new snapshot (borrowed: take a reference to keep it) after brokers, topics, partition
     * states, topic configs, dynamic broker configs or the controller changed; bursts are
     * coalesced. */
    void (*on_snapshot)(void *arg, sf_cluster_snapshot_t *snap);
    /* Optional (may be NULL): this broker became (1) or stopped being (0) the controller. */
    void (*on_controller)(void *arg, int is_controller, int32_t controller_epoch);
} sf_cluster_callbacks_t;

/* Completion of an admin write: SF_OK, SF_ERR_EXISTS (topic exists), SF_ERR_NOTFOUND (no such
 * topic), SF_ERR_INVALID (see each function), SF_ERR_IO (ZooKeeper failed or the module is
 * being freed; during sf_cluster_free the callback must only release @arg). */
typedef void (*sf_cluster_done_cb)(void *arg, int err);

/* Create the module (not started). @opt is copied; @cb is copied; @arg is passed to the
 * callbacks. Returns NULL on bad options (errno EINVAL) or no memory. */
sf_cluster_t *sf_cluster_new(struct event_base *base, const sf_cluster_options_t *opt,
                             const sf_cluster_callbacks_t *cb, void *arg);
/* Start connecting; on_ready follows. Returns SF_OK, SF_ERR_STATE (already started) or
 * SF_ERR_IO. */
int sf_cluster_start(sf_cluster_t *cl);
/* Close the ZooKeeper session (the registration and, if held, /controller vanish at once) and
 * free everything. Pending admin writes complete with SF_ERR_IO first. NULL is ignored. */
void sf_cluster_free(sf_cluster_t *cl);

/* The current snapshot (borrowed; take a reference to keep it), NULL before the first one. */
sf_cluster_snapshot_t *sf_cluster_current(sf_cluster_t *cl);
/* 1 if this broker holds /controller in the current session. */
int sf_cluster_is_controller(const sf_cluster_t *cl);
/* The controller epoch this broker won with (if controller), else the last one seen; -1 if
 * unknown. */
int32_t sf_cluster_controller_epoch(const sf_cluster_t *cl);
/* This broker's epoch (czxid of its registration), -1 while not registered. */
int64_t sf_cluster_broker_epoch(const sf_cluster_t *cl);
/* The underlying session (borrowed), e.g. for other ZooKeeper users and tests. */
struct sf_zk *sf_cluster_zk(sf_cluster_t *cl);

/* A new producer id (InitProducerId), from the block of 1000 this broker reserved in
 * /latest_producer_id_block (Kafka's layout), so that no two brokers hand out the same id.
 * @return SF_OK with *@out set now; SF_AGAIN when a block is being reserved: @done(@arg, err)
 * follows on the loop, with *@out set when err is SF_OK (SF_ERR_IO: ZooKeeper failed or the
 * module is being freed, SF_ERR_RANGE: ids exhausted); SF_ERR_STATE (not registered) or
 * SF_ERR_NOMEM, without a callback. */
int sf_cluster_producer_id(sf_cluster_t *cl, int64_t *out, sf_cluster_done_cb done, void *arg);

/* The entity name of the cluster-wide dynamic broker config (Kafka's ConfigEntityName.Default). */
#define SF_CLUSTER_DEFAULT_ENTITY "<default>"

/* Admin writes (any broker) touch only topic assignments, configs and deletion requests; the
 * controller (the broker holding /controller) alone writes partition states: it creates the
 * state of every partition that has none (leader = the first live replica, leader epoch 0,
 * ISR = the live replicas), moves leadership off brokers that are no longer registered to a
 * live ISR member and drops them from ISRs (election_rules.h; versioned rewrites, a bumped
 * leader epoch), and carries out deletion requests, each write a multi-op fenced by the
 * version of /controller_epoch it won with. A deposed controller writes nothing more.
 *
 * Create a topic in one multi-op: /brokers/topics/<t> (the assignment, a new topic id) and
 * /config/topics/<t>; its partitions get leaders once the controller wrote their states.
 * @assignment: npartitions * replication_factor broker ids (partition-major), or NULL for
 * Kafka's placement over the live brokers (random start index), rack-aware when every one of
 * them has a rack (placement.h).
 * @configs: borrowed; entries with a NULL value are left out. Synchronous errors (callback
 * not called): SF_ERR_INVALID (bad name,
 * a partition count or replication factor sf_cluster_partitions_check refuses, duplicate or
 * negative ids in @assignment, or replication_factor > live brokers when @assignment is
 * NULL), SF_ERR_TOOLARGE (the assignment would not fit in a znode, see
 * sf_cluster_partitions_check, or the multi-op would exceed ZooKeeper's 1 MB request limit), SF_ERR_STATE (not ready: before on_ready or after a startup error).
 * Asynchronous: SF_OK, SF_ERR_EXISTS, SF_ERR_IO. A config left by an earlier topic of the
 * same name is overwritten. */
/* 1 while the ZooKeeper session is connected (a write could go through now), else 0. */
int sf_cluster_connected(const sf_cluster_t *cl);

/* Whether a topic of @npartitions partitions with @rf replicas each can be written: 1 to
 * SF_CLUSTER_MAX_PARTITIONS partitions, 1 to SF_CLUSTER_MAX_REPLICAS replicas, and an
 * assignment znode within ZooKeeper's 1 MB limit (about 80,000 partitions with one replica,
 * 50,000 with three). sf_cluster_topic_create and sf_cluster_partitions_add check the same,
 * so a validate-only request can ask first. @cl (may be NULL) gives the broker ids. Returns
 * SF_OK, SF_ERR_INVALID or SF_ERR_TOOLARGE, with a sentence in @errstr. */
int sf_cluster_partitions_check(const sf_cluster_t *cl, int32_t npartitions, int rf,
                                char *errstr, size_t errstr_size);

int sf_cluster_topic_create(sf_cluster_t *cl, const char *topic, int32_t npartitions,
                            int16_t replication_factor, const int32_t *assignment,
                            const sf_cluster_config_entry_t *configs, int nconfigs,
                            sf_cluster_done_cb done, void *arg);
/* Request a topic's deletion: /admin/delete_topics/<t>, checked against the topic in the same
 * multi-op (as Kafka); the controller then deletes the topic's znodes, and the snapshot shows
 * the topic in `deleting` until it is gone. Synchronous: SF_ERR_INVALID (bad name),
 * SF_ERR_STATE (not ready). Asynchronous: SF_OK (also when already requested),
 * SF_ERR_NOTFOUND, SF_ERR_IO. */
int sf_cluster_topic_delete(sf_cluster_t *cl, const char *topic, sf_cluster_done_cb done,
                            void *arg);
/* Grow a topic to @new_total partitions: a versioned rewrite of the topic znode's assignment,
 * retried on a concurrent change of it; the controller creates the new partitions' states.
 * @assignment: NULL for Kafka's placement over the live brokers, continuing from partition 0's
 * first replica; or (new_total - current) * rf broker ids for the new partitions
 * (partition-major), where current and rf (the replica count of partition 0) are taken from
 * the current snapshot when the call is made (borrowed, copied before returning).
 * Synchronous errors (callback not called): SF_ERR_INVALID (bad name, new_total < 2, bad
 * @assignment), SF_ERR_NOTFOUND (@assignment given and the snapshot has no such topic),
 * SF_ERR_STATE (not ready). Asynchronous: SF_OK, SF_ERR_NOTFOUND, SF_ERR_INVALID (new_total not
 * above the current count, fewer live brokers than rf, or the count changed under an explicit
 * @assignment), SF_ERR_IO. */
int sf_cluster_partitions_add(sf_cluster_t *cl, const char *topic, int32_t new_total,
                              const int32_t *assignment, sf_cluster_done_cb done, void *arg);
/* Replace a topic's whole config (AlterConfigs semantics) with @configs (borrowed; entries
 * with a NULL value are left out), checking in the same multi-op that the topic exists.
 * Synchronous: SF_ERR_INVALID (bad name or entry), SF_ERR_STATE (not ready).
 * Asynchronous: SF_OK, SF_ERR_NOTFOUND, SF_ERR_IO. */
int sf_cluster_topic_config_set(sf_cluster_t *cl, const char *topic,
                                const sf_cluster_config_entry_t *configs, int n,
                                sf_cluster_done_cb done, void *arg);

/* Replace the whole dynamic broker config of @entity (a broker id in decimal, "1", or
 * SF_CLUSTER_DEFAULT_ENTITY for the cluster-wide default) with @configs (borrowed; Kafka's
 * broker key names; entries with a NULL value are left out; values are not validated here),
 * in one multi-op that creates or sets /config/brokers/<entity> and adds Kafka's change
 * notification /config/changes/config_change_<seq> ({"version":2,"entity_path":
 * "brokers/<entity>"}), so that Kafka brokers and tools that follow the notifications see the
 * change too. Each broker's snapshot then shows its own entity's and the default's configs.
 * Synchronous: SF_ERR_INVALID (bad entity or entry), SF_ERR_STATE (not ready).
 * Asynchronous: SF_OK, SF_ERR_IO. */
int sf_cluster_broker_config_set(sf_cluster_t *cl, const char *entity,
                                 const sf_cluster_config_entry_t *configs, int n,
                                 sf_cluster_done_cb done, void *arg);

/* ---- Partition state rewrites (the controller only) ---- */

/* One partition's new state for sf_cluster_alter_isr. */
typedef struct sf_cluster_state_write {
    const char *topic;         /* borrowed until the completion */
    sf_cluster_partition_t st; /* partition, leader, leader_epoch, isr, nisr (borrowed); the
                                * controller epoch is filled in */
    int32_t version;           /* the state znode's version it replaces (state_version) */
    /* results: SF_OK with the znode's new version, SF_ERR_STATE (the znode changed since
     * @version: someone else wrote), SF_ERR_NOTFOUND (the state is gone) or SF_ERR_IO */
    int err;
    int32_t new_version;
} sf_cluster_state_write_t;

/* Write the new states @w (@n of them, borrowed until @done) as versioned setData ops, all
 * of them in one multi-op fenced by /controller_epoch (several when there are too many for
 * one request); one partition's failure does not keep the others from being written. Only
 * on the controller. Synchronous errors (@done not called): SF_ERR_STATE (not the controller),
 * SF_ERR_INVALID (@n < 1), SF_ERR_NOMEM, SF_ERR_IO. Asynchronous: SF_OK (each item has its
 * result), SF_ERR_STATE (deposed meanwhile: nothing more was written), SF_ERR_IO. */
int sf_cluster_alter_isr(sf_cluster_t *cl, sf_cluster_state_write_t *w, int n,
                         sf_cluster_done_cb done, void *arg);

/* ---- Partition reassignments (the controller only; KIP-455) ---- */

/* One partition to move for sf_cluster_reassign. */
typedef struct sf_cluster_reassignment {
    const char *topic;       /* borrowed until the completion */
    int32_t partition;
    const int32_t *replicas; /* the target (borrowed until the completion); NULL: cancel */
    int nreplicas;
    /* result: SF_OK (the reassignment is under way, or cancelled, or there was none to
     * cancel), SF_ERR_NOTFOUND (no such partition), SF_ERR_INVALID (a target
     * sf_reassign_start refuses), SF_ERR_STATE (deposed) or SF_ERR_IO */
    int err;
} sf_cluster_reassignment_t;

/* Start (or cancel) the reassignments @r (@n of them, borrowed until @done): each topic's
 * znode is read, its partitions' replica sets and "adding_replicas" / "removing_replicas"
 * rewritten (reassign_rules.h), and written back versioned behind the /controller_epoch
 * fence. The controller then finishes each one once its target replicas are in the ISR: the
 * leadership moves if the leader is not in the target, and the state and the topic znode are
 * written together; brokers no longer among a partition's replicas delete their copy.
 * Synchronous errors (@done not called): SF_ERR_STATE (not the controller), SF_ERR_INVALID
 * (@n < 1), SF_ERR_NOMEM. Asynchronous: SF_OK (each item has its result), SF_ERR_STATE
 * (deposed meanwhile), SF_ERR_IO. */
int sf_cluster_reassign(sf_cluster_t *cl, sf_cluster_reassignment_t *r, int n,
                        sf_cluster_done_cb done, void *arg);

/* ---- Group coordinator buckets (the controller; buckets.c) ---- */

/* Broker @broker is shutting down (ControlledShutdown): move its coordinator buckets to the
 * other live brokers now, and give it none while its current registration lasts. Only on the
 * controller (ignored elsewhere). */
void sf_cluster_coordinators_evacuate(sf_cluster_t *cl, int32_t broker);

/* 1 if broker @broker asked the controller for a controlled shutdown under its current
 * registration (Kafka's shuttingDownBrokerIds): it is not added to an ISR nor elected leader
 * while another replica can be. The controller's metadata thread. */
int sf_cluster_broker_shutting_down(sf_cluster_t *cl, int32_t broker);

/* ---- Committed offsets (the group coordinators; offsets.c) ---- */

/* One committed offset. Strings are borrowed (by the callee until its completion when given,
 * by the callback during its call when reported). */
typedef struct sf_cluster_offset {
    const char *topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch; /* -1: none */
    const char *metadata; /* never NULL */
    int64_t commit_ms;
    int exists;           /* a commit: 1 if the group has an offset for it already (a hint:
                           * a wrong one costs a retry) */
    int err;              /* a commit's result for it */
} sf_cluster_offset_t;

/* The znode name of a group id: the id with every byte outside [A-Za-z0-9._-] and a leading
 * '.' written as %XX (so any id is one valid znode name, and plain ids stay as they are).
 * @out has room for 3 * strlen(@group) + 1 bytes. */
void sf_cluster_group_znode(const char *group, char *out);

/* Read every committed offset of @group from /consumers/<group>/offsets (with the metadata
 * beside them) and the group's own state, /consumers/<group>/group (its coordinator's, see
 * sf_cluster_group_state_write): @cb(@arg, err, offsets, n, state) once, on the loop thread;
 * err SF_OK (n may be 0; state NULL when there is none) or SF_ERR_IO. Synchronous:
 * SF_ERR_STATE (not ready), SF_ERR_NOMEM. */
typedef void (*sf_cluster_offsets_cb)(void *arg, int err, const sf_cluster_offset_t *v, int n,
                                      const char *state);
int sf_cluster_offsets_load(sf_cluster_t *cl, const char *group, sf_cluster_offsets_cb cb,
                            void *arg);

/* Write the offsets @v (@n, borrowed until @done) of @group: one multi-op per ZooKeeper
 * request's worth, each checking that /coordinators/groups/<bucket> still has version @epoch
 * (so a coordinator that lost the bucket writes nothing). @done(@arg, err) once every item has
 * its err: SF_OK, SF_ERR_STATE (the bucket moved on), SF_ERR_IO. */
int sf_cluster_offsets_commit(sf_cluster_t *cl, const char *group, int bucket, int32_t epoch,
                              sf_cluster_offset_t *v, int n, sf_cluster_done_cb done, void *arg);

/* Write @data (the coordinator's description of @group's generation and members) to
 * /consumers/<group>/group, created with its parents when missing, checked against the
 * bucket's epoch. @done(@arg, err): SF_OK, SF_ERR_STATE (the bucket moved on), SF_ERR_IO.
 * @data is copied. */
int sf_cluster_group_state_write(sf_cluster_t *cl, const char *group, int bucket, int32_t epoch,
                                 const char *data, sf_cluster_done_cb done, void *arg);

/* The ids of the groups with a znode under /consumers (decoded znode names, see
 * sf_cluster_group_znode): @cb(@arg, err, ids, n) once; SF_OK or SF_ERR_IO. Synchronous:
 * SF_ERR_STATE, SF_ERR_NOMEM. */
typedef void (*sf_cluster_groups_cb)(void *arg, int err, char *const *ids, int n);
int sf_cluster_groups_list(sf_cluster_t *cl, sf_cluster_groups_cb cb, void *arg);

/* Delete the committed offsets of @v (@n of them: topic and partition are used; borrowed until
 * @done) of @group, in multi-ops checked against the bucket's epoch as commits are; with
 * @whole, then the group's topic znodes and the group's own znodes as far as nothing else is
 * left in them (znodes other tools keep there stay). @done(@arg, err): SF_OK, SF_ERR_STATE
 * (the bucket moved on), SF_ERR_IO. */
int sf_cluster_offsets_delete(sf_cluster_t *cl, const char *group, int bucket, int32_t epoch,
                              const sf_cluster_offset_t *v, int n, int whole,
                              sf_cluster_done_cb done, void *arg);

/* ---- Transaction state (the transaction coordinators; transactions.c) ---- */

#define SF_CLUSTER_TXN_ID_MAX 255 /* bytes of a transactional id kept in ZooKeeper */

/* /transactions/<id> (the id written as sf_cluster_group_znode does; ids up to 255 bytes)
 * holds a transactional id's state, opaque here. A read or write completes with
 * @cb(@arg, err, data, version) once, on the loop thread. */
typedef void (*sf_cluster_txn_cb)(void *arg, int err, const char *data, int32_t version);

/* Read: SF_OK with the data and its znode version, or data NULL and version -1 when there is
 * none; SF_ERR_IO. Synchronous: SF_ERR_INVALID (empty or too long id), SF_ERR_STATE (not
 * ready), SF_ERR_NOMEM. */
int sf_cluster_txn_read(sf_cluster_t *cl, const char *id, sf_cluster_txn_cb cb, void *arg);

/* Write @data (copied): created when @version is -1, else replacing version @version; with
 * @data NULL, delete version @version. Checked in the same multi-op against
 * /coordinators/groups/<bucket> having version @epoch. Completes with SF_OK and the znode's
 * new version, SF_ERR_STATE (the bucket moved on, or the znode is not at @version: nothing
 * written) or SF_ERR_IO (maybe not written). Synchronous: SF_ERR_INVALID, SF_ERR_TOOLARGE,
 * SF_ERR_STATE, SF_ERR_NOMEM. */
int sf_cluster_txn_write(sf_cluster_t *cl, const char *id, int bucket, int32_t epoch,
                         int32_t version, const char *data, sf_cluster_txn_cb cb, void *arg);

/* The transactional ids with a znode under /transactions, as sf_cluster_groups_list. */
int sf_cluster_txn_list(sf_cluster_t *cl, sf_cluster_groups_cb cb, void *arg);

/* Pending transactional offsets (the group coordinators): /coordinators/groups/<bucket>/<name>
 * (@name written as sf_cluster_group_znode does, up to 1000 bytes) holds what a transaction
 * committed for a group of @bucket until its marker settles it. Listing the names, as
 * sf_cluster_groups_list; reading and writing as sf_cluster_txn_read / sf_cluster_txn_write
 * (deleting a znode that is gone completes with SF_OK). */
int sf_cluster_pending_list(sf_cluster_t *cl, int bucket, sf_cluster_groups_cb cb, void *arg);
int sf_cluster_pending_read(sf_cluster_t *cl, int bucket, const char *name, sf_cluster_txn_cb cb,
                            void *arg);
int sf_cluster_pending_write(sf_cluster_t *cl, int bucket, int32_t epoch, const char *name,
                             int32_t version, const char *data, sf_cluster_txn_cb cb,
                             void *arg);

#endif
