/* The group module's private state, shared by coordinator.c (buckets, the table of groups,
 * loading, offsets) and membership.c (the classic protocol). Metadata thread only. */
#ifndef SF_GROUP_INT_H
#define SF_GROUP_INT_H

#include <event2/event.h>

#include "group.h"

enum { GS_EMPTY, GS_PREPARING, GS_COMPLETING, GS_STABLE, GS_DEAD };

typedef struct gmember gmember_t;
struct gmember {
    gmember_t *next;
    sf_group_t *g;
    char *id, *instance_id, *client_id, *client_host;
    int32_t session_ms, rebalance_ms;
    sf_gprotocol_t *protocols; /* names and metadata owned */
    int nprotocols;
    uint8_t *assignment;
    size_t assignment_len;
    sf_gjoin_cb join_cb; /* a join waiting for the phase to complete */
    void *join_arg;
    sf_gsync_cb sync_cb; /* a sync waiting for the leader's assignment */
    void *sync_arg;
    struct event *session_timer;
    int skip_assignment; /* its join answer tells the leader not to assign (KIP-814) */
};

/* A committed offset (owned strings). */
typedef struct goffset {
    char *topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch;
    char *metadata;
    int64_t commit_ms;
} gofs_t;

/* A request waiting for its group to load. */
typedef struct gdefer gdefer_t;
struct gdefer {
    gdefer_t *next;
    sf_group_fn fn;
    void *arg;
};

struct sf_group {
    sf_group_t *hnext;
    sf_coord_t *c;
    char *id;
    int bucket;
    int32_t epoch; /* the bucket's, when loaded */
    int loaded;
    gdefer_t *waiting; /* until loaded */
    int state;
    int32_t generation;
    char *protocol_type, *protocol_name, *leader;
    gmember_t *members;
    int nmembers;
    struct gpending {
        char *id;
        int64_t expires_ms;
    } *pending; /* member ids handed out, not joined yet (KIP-394) */
    int npending;
    struct event *join_timer; /* the join phase's deadline */
    int64_t join_deadline_ms; /* during the initial delay: its end at the latest, else 0 */
    int64_t phase_end_ms;     /* while preparing: when the join phase ends at the latest */
    int initial_joined;       /* members joined during the current initial delay */
    gofs_t *offsets; /* sorted by (topic, partition) */
    int noffsets, capoffsets;
    struct gcommit *commits; /* in flight */
    struct gdel *deletes;    /* in flight */
    int saving, save_again;  /* its state's write to ZooKeeper (groupstate.c) */
    int busy; /* commits and loads in flight: the group is not freed meanwhile */
    int dropped; /* its bucket moved on while busy: freed when idle */
};

struct sf_coord {
    struct event_base *base;
    sf_cluster_t *cl;
    sf_coord_config_t cfg;
    sf_cluster_bucket_t *buckets; /* the snapshot's */
    int nbuckets;
    sf_group_t **table;
    size_t ntable, ngroups;
    struct glist *lists; /* listings of /consumers in flight (groupadmin.c) */
    struct event *retention_timer;
    struct gtxn *txns;         /* pending transactional offsets (txnoffsets.c) */
    struct gtbucket *tbuckets; /* per bucket: are they loaded */
    int ntbuckets;
    unsigned tgen;             /* numbers their loads */
    struct gtload *tloads;     /* in flight */
    struct event *treload;     /* a failed load's retry */
    int closing;
};

/* coordinator.c */
/* Offsets sorted by (topic, partition): the order, and the index of one in @v, or
 * -(insertion point) - 1. */
int gofs_cmp(const char *t1, int32_t p1, const char *t2, int32_t p2);
int gofs_find(const gofs_t *v, int n, const char *topic, int32_t partition);
int coord_owns(const sf_coord_t *c, int bucket, int32_t epoch);
void group_maybe_free(sf_group_t *g);
sf_group_t *coord_find(const sf_coord_t *c, const char *id);
void group_offsets_forget(sf_group_t *g, const sf_cluster_offset_t *w, int n);

void coord_expire(sf_coord_t *c, char *const *ids, int n); /* the retention pass */
int16_t group_commit_check(const sf_group_t *g, const char *member_id, const char *instance_id,
                           int32_t generation, int txn);
/* 1 while a commit of @topic/@partition is being written (OffsetFetch's RequireStable). */
int group_commit_inflight(const sf_group_t *g, const char *topic, int32_t partition);
/* Write @v (copied) as the group's committed offsets, unchecked: sf_group_commit's @done. */
void group_commit_write(sf_group_t *g, const sf_goffset_t *v, int n, sf_gcommit_cb done,
                        void *arg);

/* txnoffsets.c */
void coord_txn_update(sf_coord_t *c); /* load the pending offsets of buckets new here */
void coord_txn_free(sf_coord_t *c);

/* groupadmin.c */
int coord_list_start(sf_coord_t *c, sf_glist_cb cb, void *arg);
void coord_lists_abandon(sf_coord_t *c);
void group_deletes_abandon(sf_group_t *g);
void group_offsets_delete(sf_group_t *g, const sf_goffset_t *v, int n, const int16_t *skip,
                          int whole, sf_gdone_cb done, void *arg);

/* groupstate.c: the generation and members in ZooKeeper */
void group_state_save(sf_group_t *g);
int group_state_restore(sf_group_t *g, const char *data);

/* membership.c */
/* A member of a restored generation (its session timer started). */
int group_member_restore(sf_group_t *g, const char *id, const sf_gjoin_t *req, gmember_t **out);
int group_timer_new(sf_group_t *g); /* g->join_timer */
void group_members_drop(sf_group_t *g, int16_t err); /* answer every waiter, free members */
int group_has_members(const sf_group_t *g);
gmember_t *group_member(const sf_group_t *g, const char *id);
/* FENCED_INSTANCE_ID when @instance_id belongs to a static member other than @member_id. */
int16_t group_fenced(const sf_group_t *g, const char *member_id, const char *instance_id);

#endif
