/* The cluster metadata as brokers see it: brokers, the controller, topics with their
 * partitions (replicas, leader, leader epoch, ISR) and configs, and the dynamic broker configs
 * of this broker and of the cluster default, as read from ZooKeeper (DESIGN.md section 4). A
 * snapshot is immutable and reference counted (atomically), so it may be handed to and read
 * from any thread; the topics it holds are shared with the snapshots before and after it where
 * they did not change. */
#ifndef SF_SNAPSHOT_H
#define SF_SNAPSHOT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Decoder limits: larger arrays / objects in a znode are rejected as malformed. */
#define SF_CLUSTER_MAX_PARTITIONS 100000 /* partitions of one topic */
#define SF_CLUSTER_MAX_REPLICAS 256      /* replicas (and ISR) of one partition */
#define SF_CLUSTER_MAX_ENDPOINTS 64      /* endpoints of one broker */
#define SF_CLUSTER_MAX_CONFIGS 1024      /* config entries of one topic */
#define SF_CLUSTER_MAX_TOPIC_NAME 249    /* Kafka's limit */

typedef struct sf_cluster_broker {
    int32_t id;
    char *host;       /* may be NULL (no PLAINTEXT listener) */
    int32_t port;     /* -1 with a NULL host */
    char **endpoints; /* "PLAINTEXT://h:p", "SSL://h:p" */
    int nendpoints;
    char *rack; /* NULL if none */
    int64_t epoch; /* czxid of /brokers/ids/<id> */
} sf_cluster_broker_t;

typedef struct sf_cluster_partition {
    int32_t partition;
    int32_t leader;           /* -1: none (or state not known) */
    int32_t leader_epoch;     /* -1 if the state znode is missing */
    int32_t controller_epoch; /* -1 if the state znode is missing */
    int32_t state_version;    /* ZooKeeper version of the state znode (Kafka's partition
                               * epoch), -1 if it is missing */
    int32_t *replicas;
    int nreplicas;
    int32_t *isr;
    int nisr;
    /* An ongoing reassignment (KIP-455, in the topic znode): the replicas being added and
     * those being removed (both within @replicas); NULL/0 when none. The target is @replicas
     * without @removing. */
    int32_t *adding;
    int nadding;
    int32_t *removing;
    int nremoving;
} sf_cluster_partition_t;

/* 1 if a reassignment of the partition is under way. */
static inline int sf_cluster_partition_reassigning(const sf_cluster_partition_t *p) {
    return p->nadding > 0 || p->nremoving > 0;
}

typedef struct sf_cluster_config_entry {
    char *name, *value;
} sf_cluster_config_entry_t;

typedef struct sf_cluster_topic {
    atomic_int refcnt; /* held by each snapshot that shares it (sf_cluster_topic_ref) */
    char *name;
    uint8_t topic_id[16]; /* all zero if the znode has none */
    sf_cluster_partition_t *partitions; /* indexed by partition id: partitions[i].partition == i */
    int npartitions;
    int32_t znode_version; /* ZooKeeper version of /brokers/topics/<t>, -1 if unknown */
    sf_cluster_config_entry_t *configs; /* sorted by name */
    int nconfigs;
} sf_cluster_topic_t;

/* A coordinator bucket of consumer groups (/coordinators/groups): the broker that coordinates
 * the groups whose id hashes to it, and its epoch (the version of /coordinators/groups/<b>,
 * which every offset write checks, so a deposed coordinator cannot write). */
typedef struct sf_cluster_bucket {
    int32_t broker; /* -1: none yet */
    int32_t epoch;
} sf_cluster_bucket_t;

#define SF_CLUSTER_MAX_BUCKETS 1000 /* offsets.topic.num.partitions */

typedef struct sf_cluster_snapshot {
    atomic_int refcnt;
    char *cluster_id;
    int32_t controller_id;    /* -1 if no controller */
    int32_t controller_epoch; /* last known value of /controller_epoch, -1 if unknown */
    sf_cluster_broker_t *brokers; /* sorted by id */
    int nbrokers;
    sf_cluster_topic_t **topics; /* sorted by name (strcmp); shared between snapshots */
    int ntopics;
    sf_cluster_topic_t **by_id;  /* the same, sorted by topic id (zero ids left out) */
    int nby_id;
    char **deleting; /* topics whose deletion was requested (/admin/delete_topics), sorted */
    int ndeleting;
    /* Dynamic broker configs, with Kafka's broker key names ("log.retention.ms"): those of the
     * broker this snapshot was built for (/config/brokers/<id>) and the cluster-wide default
     * (/config/brokers/<default>), each sorted by name; NULL/0 when the znode is absent. */
    sf_cluster_config_entry_t *broker_configs;
    int nbroker_configs;
    sf_cluster_config_entry_t *default_configs;
    int ndefault_configs;
    /* The group coordinator buckets, bucket b at index b; NULL/0 before the controller first
     * wrote them. */
    sf_cluster_bucket_t *group_buckets;
    int ngroup_buckets;
} sf_cluster_snapshot_t;

/* 1 if the partition has a state znode (leader, epochs and ISR are known). */
static inline int sf_cluster_partition_has_state(const sf_cluster_partition_t *p) {
    return p->leader_epoch >= 0;
}

/* Take a reference (returns @snap; NULL is passed through). Thread-safe. */
sf_cluster_snapshot_t *sf_cluster_snapshot_ref(sf_cluster_snapshot_t *snap);
/* Drop a reference; the last one frees the snapshot. NULL is ignored. Thread-safe. */
void sf_cluster_snapshot_unref(sf_cluster_snapshot_t *snap);
/* Look up a topic by name / a broker by id (binary search); NULL if absent. The result is
 * borrowed from @snap. */
const sf_cluster_topic_t *sf_cluster_snapshot_topic(const sf_cluster_snapshot_t *snap,
                                                    const char *name);
const sf_cluster_broker_t *sf_cluster_snapshot_broker(const sf_cluster_snapshot_t *snap,
                                                      int32_t id);
/* The index of topic @name in snap->topics, or -1. */
int sf_cluster_snapshot_topic_index(const sf_cluster_snapshot_t *snap, const char *name);
/* The topic with id @id (binary search), or NULL (also for the zero id). */
const sf_cluster_topic_t *sf_cluster_snapshot_topic_by_id(const sf_cluster_snapshot_t *snap,
                                                          const uint8_t id[16]);
/* 1 if the deletion of @name was requested and the controller has not carried it out yet. */
int sf_cluster_snapshot_deleting(const sf_cluster_snapshot_t *snap, const char *name);
/* A config value of a topic, or NULL if not set (borrowed). */
const char *sf_cluster_topic_config(const sf_cluster_topic_t *topic, const char *name);
/* The value of @name in @configs, an array of @n entries sorted by name (binary search), or
 * NULL if absent (borrowed). */
const char *sf_cluster_configs_find(const sf_cluster_config_entry_t *configs, int n,
                                    const char *name);
/* A dynamic broker config of @snap: this broker's (@cluster_default 0) or the cluster-wide
 * default (@cluster_default 1); NULL if not set (borrowed). */
const char *sf_cluster_snapshot_broker_config(const sf_cluster_snapshot_t *snap,
                                              int cluster_default, const char *name);

/* Build a snapshot from parts (takes ownership of all of them, also on failure): @brokers
 * and @topics are sorted here; the deletion list and dynamic broker configs start empty (the
 * caller may fill them in before publishing the snapshot: it frees them). @topics holds one
 * reference to each topic (from sf_cluster_topic_new or sf_cluster_topic_ref), so unchanged
 * topics are shared with older snapshots. Returns NULL on no memory. */
sf_cluster_snapshot_t *sf_cluster_snapshot_build(char *cluster_id, int32_t controller_id,
                                                 int32_t controller_epoch,
                                                 sf_cluster_broker_t *brokers, int nbrokers,
                                                 sf_cluster_topic_t **topics, int ntopics);
/* The same from topics given by value (tests): each is moved into a new shared topic and
 * @topics freed. */
sf_cluster_snapshot_t *sf_cluster_snapshot_build_copy(char *cluster_id, int32_t controller_id,
                                                      int32_t controller_epoch,
                                                      sf_cluster_broker_t *brokers, int nbrokers,
                                                      sf_cluster_topic_t *topics, int ntopics);

/* A shared topic holding what @src owned (moved: @src is left empty), one reference; NULL on
 * no memory (then @src keeps its contents). */
sf_cluster_topic_t *sf_cluster_topic_new(sf_cluster_topic_t *src);
/* Take / drop a reference (the last one frees the topic). NULL ok. Thread-safe. */
sf_cluster_topic_t *sf_cluster_topic_ref(sf_cluster_topic_t *t);
void sf_cluster_topic_unref(sf_cluster_topic_t *t);

/* Free what an element owns (not the element itself). */
void sf_cluster_broker_clear(sf_cluster_broker_t *b);
void sf_cluster_partition_clear(sf_cluster_partition_t *p);
void sf_cluster_topic_clear(sf_cluster_topic_t *t);
void sf_cluster_configs_free(sf_cluster_config_entry_t *configs, int n);

#endif
