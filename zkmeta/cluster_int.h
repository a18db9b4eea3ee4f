/* The cluster module's private state, shared by its files (cluster.c: lifecycle, callbacks and
 * sessions; model.c: the watched metadata model and snapshots; registration.c: base znodes,
 * cluster id and broker registration; election.c: the controller election; zkwrite.c: the
 * admin writes). Loop thread only. */
#ifndef SF_CLUSTER_INT_H
#define SF_CLUSTER_INT_H

#include <stdint.h>

#include <event2/event.h>

#include "cluster.h"
#include "zk.h"
#include "znode.h"

#define CL_RETRY_MS 1000          /* setup retry while connected */
#define CL_REBUILD_DELAY_MS 10    /* coalescing window for snapshot rebuilds */
#define CL_REBUILD_MAX_WAIT_MS 500 /* rebuild even with reads in flight after this long */
#define CL_REG_GRACE_MS 2000      /* added to the session timeout when waiting for an old node */
#define CL_ADMIN_RETRIES 5

/* What a watch or a read is about. */
enum { K_IDS = 1, K_TOPICS, K_BROKER, K_TOPIC, K_PSTATE, K_CONFIG, K_CONTROLLER, K_CEPOCH, K_REG,
       K_DELETES, K_BCONFIG, K_PREFERRED, K_REASSIGN, K_BUCKETS };

/* The dynamic broker config znodes the model watches (the id of a K_BCONFIG key). */
enum { CL_BCFG_BROKER = 0, /* /config/brokers/<this broker's id> */
       CL_BCFG_DEFAULT,    /* /config/brokers/<default> */
       CL_BCFG_N };

/* The argument of a model watch or read: the entity is looked up again by (kind, id, topic)
 * and must still carry @inc (its incarnation for reads, its current watch id for watches). */
struct cl_key {
    sf_cluster_t *cl;
    int kind;
    uint64_t inc;
    int32_t id;
    char topic[];
};

/* A watched znode of the model. */
struct cl_node {
    uint64_t inc;      /* identity of the entity */
    uint64_t watch_id; /* identity of its current watch */
    int armed;
};

struct cl_broker {
    struct cl_node node;
    int have;
    sf_cluster_broker_t b;
};

struct cl_part {
    struct cl_node node;
    int have;
    sf_cluster_partition_t p;
};

struct cl_topic {
    struct cl_topic *hnext;
    char *name;
    struct cl_node node, cfg;
    int have, seen;
    uint8_t topic_id[16];
    int32_t version; /* of the topic znode */
    struct cl_part *parts;
    int nparts;
    sf_cluster_config_entry_t *configs;
    int nconfigs;
    sf_cluster_topic_t *built; /* the last snapshot's copy (a reference), reused until changed */
    int changed;               /* the model differs from built */
};

/* A dynamic broker config znode of the model. */
struct cl_bconfig {
    struct cl_node node;
    sf_cluster_config_entry_t *configs; /* sorted by name; NULL when the znode is absent */
    int nconfigs;
};

enum { N_DONE = 1, N_READY, N_CONTROLLER };
struct cl_notify {
    struct cl_notify *next;
    int kind;
    sf_cluster_done_cb done;
    void *arg;
    int err;
    int32_t epoch;
    char msg[256];
};

struct sf_cluster {
    struct event_base *base;
    sf_zk_t *zk;
    sf_cluster_callbacks_t cb;
    void *arg;
    int session_timeout_ms, connection_timeout_ms;
    int32_t broker_id;
    char *host;
    int32_t port;
    char **endpoints;
    int nendpoints;
    char *rack;

    int started, ready, failed, closing, free_pending, user_depth;
    uint64_t next_inc;

    /* per-session setup and registration */
    int setup_busy, setup_outstanding, setup_error;
    int registered, reg_busy, reg_waiting;
    int64_t broker_epoch;
    struct cl_node reg_node;
    struct event *retry_timer, *reg_timer;

    /* controller */
    int is_controller, elect_busy, ctrl_adopt;
    int32_t controller_epoch, controller_id, elect_epoch;
    int32_t elect_version;      /* the version /controller_epoch gets if our election wins */
    int32_t ctrl_epoch_version; /* while controller: that version, which fences every write */
    struct cl_ctrl_busy *ctrl_busy; /* topics with a controller write in flight */
    int unclean_default;            /* unclean.leader.election.enable of the configuration */
    int rebalance_interval_s;       /* leader.imbalance.check.interval.seconds; 0: no rebalance */
    int imbalance_percentage;       /* leader.imbalance.per.broker.percentage */
    struct event *rebalance_timer;
    struct cl_node ctrl_node;

    char *cluster_id;

    /* the model */
    struct cl_node ids_node, topics_node, deletes_node;
    char **deleting; /* /admin/delete_topics children, sorted */
    int ndeleting;
    struct cl_node pref_node;
    sf_znode_tp_t *pref; /* /admin/preferred_replica_election, for the controller */
    int npref;
    int pref_busy;       /* the controller's elections for it are being written */
    struct cl_node reassign_node;
    sf_znode_tp_t *reassign; /* /admin/reassign_partitions, for the controller */
    int nreassign;
    int reassign_busy;       /* the controller is starting or pruning them */
    struct cl_node gbuckets_node;
    sf_cluster_bucket_t *gbuckets; /* /coordinators/groups */
    int ngbuckets;
    int32_t gbuckets_version; /* of that znode; -1 while it is absent or unread */
    int gbuckets_busy;        /* the controller is writing them, or waits to try again */
    struct event *gbuckets_timer; /* that wait */
    int offsets_buckets;      /* offsets.topic.num.partitions: the count when creating them */
    struct cl_evac {
        int32_t id;
        int64_t epoch; /* of the registration that asked */
    } *evac;           /* brokers shutting down: no buckets for them */
    int nevac;
    struct cl_broker **brokers;
    int nbrokers, capbrokers;
    struct cl_topic **buckets;
    size_t nbuckets, ntopics;
    struct cl_bconfig bconfigs[CL_BCFG_N];
    int pending_reads, load_error, synced;
    int dirty;
    int64_t dirty_since;
    struct event *rebuild_timer;
    sf_cluster_snapshot_t *current;

    struct cl_notify *nhead, *ntail;
    struct event *notify_ev;

    /* producer_ids.c: the block of producer ids being handed out */
    int64_t pid_next;
    int pid_left, pid_busy, pid_retries;
    struct cl_pid_waiter *pid_waiters;
};

/* cluster.c: user callbacks run from the module's own events only (cl_user_leave returns 1
 * when the module was freed inside the callback: stop touching it). */
void cl_user_enter(sf_cluster_t *cl);
int cl_user_leave(sf_cluster_t *cl);
/* Queue an admin completion / a controller change for the owner. */
void cl_notify_done(sf_cluster_t *cl, sf_cluster_done_cb done, void *arg, int err);
void cl_notify_controller(sf_cluster_t *cl);
/* Startup failed: report once to on_ready, then stay quiet. */
void cl_fail(sf_cluster_t *cl, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Neither closing nor failed. */
int cl_alive(const sf_cluster_t *cl);
/* The argument of a watch or read (NULL on no memory). */
struct cl_key *cl_key_new(sf_cluster_t *cl, int kind, uint64_t inc, int32_t id, const char *topic);
void cl_destroy(sf_cluster_t *cl);

/* offsets_delete.c: the children of @path as decoded names (sf_cluster_group_znode undone),
 * as sf_cluster_groups_list reports them. */
int cl_list_names(sf_cluster_t *cl, const char *path, sf_cluster_groups_cb cb, void *arg);

/* model.c */
void cl_sync_all(sf_cluster_t *cl);
void cl_schedule_rebuild(sf_cluster_t *cl);
void cl_model_wrote_states(sf_cluster_t *cl, const sf_cluster_state_write_t *w, const int *idx,
                           int n);
void cl_rebuild_cb(evutil_socket_t fd, short what, void *arg);
void cl_read_controller(sf_cluster_t *cl);
void cl_read_preferred(sf_cluster_t *cl);
void cl_read_reassign(sf_cluster_t *cl);
void cl_read_buckets(sf_cluster_t *cl);
void cl_broker_free(struct cl_broker *b);
void cl_topic_free(struct cl_topic *t);
void cl_path_broker(char *buf, size_t n, int32_t id);
void cl_path_topic(char *buf, size_t n, const char *t);

/* producer_ids.c: fail the requests waiting for producer ids (the module is closing). */
void cl_pids_free(sf_cluster_t *cl);

/* buckets.c: place the group coordinator buckets (the controller, on each snapshot). */
void cl_coordinators_run(sf_cluster_t *cl, const sf_cluster_snapshot_t *snap);
void cl_buckets_retry_cb(evutil_socket_t fd, short what, void *arg);

/* election.c */
void cl_elect(sf_cluster_t *cl);
void cl_ctrl_set(sf_cluster_t *cl, int is_ctrl);

/* zkwrite.c: the controller's writes, fenced by ctrl_epoch_version (SF_ERR_STATE when not
 * the controller). cl_ctrl_create_states takes @states (malloc'd array of @n, owned).
 * Completions: SF_OK, SF_ERR_EXISTS (written meanwhile), SF_ERR_STATE (deposed), SF_ERR_IO. */
int cl_ctrl_create_states(sf_cluster_t *cl, const char *topic, sf_cluster_partition_t *states,
                          int n, sf_cluster_done_cb done, void *arg);
int cl_ctrl_purge_topic(sf_cluster_t *cl, const char *topic, sf_cluster_done_cb done, void *arg);

/* ctrlwrite.c: rewrite existing partition states (versioned setData ops behind the fence,
 * batched; see sf_cluster_alter_isr for @w). @done is called straight from the ZooKeeper
 * completion (not through the notify queue) with SF_OK once every item has its result,
 * SF_ERR_STATE (deposed) or SF_ERR_IO. Synchronous errors (no completion): SF_ERR_STATE (not
 * the controller), SF_ERR_INVALID (@n < 1), SF_ERR_NOMEM, or sf_zk_multi's. */
typedef void (*cl_states_done_cb)(void *arg, int err);
int cl_ctrl_write_states(sf_cluster_t *cl, sf_cluster_state_write_t *w, int n,
                         cl_states_done_cb done, void *arg);

/* controller.c: what the controller does with a new snapshot (while it is the controller):
 * create the states of partitions that have none, elect new leaders for partitions whose
 * leader is gone and drop dead brokers from ISRs, purge topics requested for deletion. */
void cl_controller_run(sf_cluster_t *cl, const sf_cluster_snapshot_t *snap);
void cl_rebalance_cb(evutil_socket_t fd, short what, void *arg);
/* Forget the writes in flight (no longer the controller, or freeing). */
void cl_controller_stop(sf_cluster_t *cl);

/* reassign.c: the controller's reassignment writes. cl_reassign_finish_topic writes @t's
 * finished reassignments (@st: the new states from sf_reassign_finish, @n of them, owned)
 * with the topic znode in one multi-op; @done as for cl_ctrl_write_states (straight from the
 * completion). cl_reassign_listed starts what /admin/reassign_partitions asks for and prunes
 * the entries that are done or cannot be done. */
int cl_reassign_finish_topic(sf_cluster_t *cl, const sf_cluster_topic_t *t,
                             sf_cluster_partition_t *st, int n, cl_states_done_cb done,
                             void *arg);
void cl_reassign_listed(sf_cluster_t *cl, const sf_cluster_snapshot_t *snap);

/* registration.c */
void cl_setup_start(sf_cluster_t *cl);
void cl_retry_timer_cb(evutil_socket_t fd, short what, void *arg);
void cl_reg_timer_cb(evutil_socket_t fd, short what, void *arg);

#endif
