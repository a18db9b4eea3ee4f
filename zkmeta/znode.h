/* The znode layout (DESIGN.md section 4, relative to the chroot):
 *   /cluster/id                              {"version":1,"id":"<base64url uuid>"}
 *   /brokers/ids/<id>            EPHEMERAL   {"version":1,"host":..,"port":..,"endpoints":[..],
 *                                             "rack":null,"timestamp":"<ms>"}; czxid = epoch
 *   /controller                  EPHEMERAL   {"version":1,"brokerid":N,"timestamp":"<ms>"}
 *   /controller_epoch                        "N"
 *   /brokers/topics/<t>                      {"version":1,"topic_id":"..","partitions":{"0":[1,2]}}
 *   /brokers/topics/<t>/partitions/<p>/state {"version":1,"leader":1,"leader_epoch":0,
 *                                             "isr":[1],"controller_epoch":N}
 *   /config/topics/<t>                       {"version":1,"config":{"k":"v"}}
 *   /config/brokers/<id>, /config/brokers/<default>   the same JSON (dynamic broker configs)
 *   /config/changes/config_change_<seq>      {"version":2,"entity_path":"brokers/<default>"}
 *   /admin/delete_topics/<t>
 *   /admin/preferred_replica_election, /admin/reassign_partitions   Kafka's admin requests
 * The topic znode carries "adding_replicas" / "removing_replicas" maps while partitions are
 * being reassigned (Kafka's version 2 layout).
 * and the JSON codecs of those znodes, topic names and Kafka's uuids. Pure functions. */
#ifndef SF_ZNODE_H
#define SF_ZNODE_H

#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"

/* 1 if @name is a legal Kafka topic name: 1..249 chars of [a-zA-Z0-9._-], not "." or "..". */
int sf_znode_topic_name_valid(const char *name);

/* Kafka's Uuid text form: 22 chars of unpadded base64url. @out has room for 23 bytes. */
void sf_znode_uuid_to_str(const uint8_t uuid[16], char out[23]);
/* Parse that form; SF_OK or SF_ERR_MALFORMED. */
int sf_znode_uuid_from_str(const char *s, uint8_t uuid[16]);
/* A random version-4 uuid that is not zero and whose text form does not start with '-'.
 * SF_OK or SF_ERR_IO. */
int sf_znode_uuid_random(uint8_t uuid[16]);

/* JSON codecs for each znode. Encoders return a malloc'd NUL-terminated string (NULL on no
 * memory). Decoders take @len bytes of @json (no NUL needed), allocate what they fill in
 * (free with the matching _clear function), and return SF_OK or SF_ERR_MALFORMED (bad JSON,
 * wrong types, missing fields, out-of-range values, arrays over the limits above) without
 * leaking anything; SF_ERR_NOMEM on no memory. */

/* /brokers/ids/<id>: uses host, port, endpoints, rack; @timestamp_ms is written as a string. */
char *sf_znode_broker_encode(const sf_cluster_broker_t *b, int64_t timestamp_ms);
/* Fills host, port, endpoints, rack (id = -1 and epoch = -1: they come from the path and stat). */
int sf_znode_broker_decode(const char *json, size_t len, sf_cluster_broker_t *out);

/* /brokers/topics/<t>: topic_id and each partition's replicas (partitions[i].partition == i). */
char *sf_znode_topic_encode(const uint8_t topic_id[16], const sf_cluster_partition_t *parts,
                              int nparts);
/* Fills topic_id (zero if absent), partitions (replicas; leader and epochs -1, no isr) and
 * npartitions; name and configs are left NULL. Partition keys must be exactly 0..n-1. */
int sf_znode_topic_decode(const char *json, size_t len, sf_cluster_topic_t *out);

/* /brokers/topics/<t>/partitions/<p>/state: leader, leader_epoch, isr, controller_epoch. */
char *sf_znode_pstate_encode(const sf_cluster_partition_t *p);
/* Fills leader, leader_epoch, isr/nisr, controller_epoch of @p (other fields untouched; a
 * previous isr is freed). */
int sf_znode_pstate_decode(const char *json, size_t len, sf_cluster_partition_t *p);

/* /config/topics/<t> and /config/brokers/<entity> */
char *sf_znode_config_encode(const sf_cluster_config_entry_t *configs, int n);
/* @out: a malloc'd array sorted by name (free with sf_cluster_configs_free), NULL when empty. */
int sf_znode_config_decode(const char *json, size_t len, sf_cluster_config_entry_t **out,
                             int *n);

/* /config/changes/config_change_<seq>: Kafka's change notification for the config of
 * @entity_path ("brokers/1", "brokers/<default>", "topics/t"). */
char *sf_znode_config_change_encode(const char *entity_path);

/* /controller */
char *sf_znode_controller_encode(int32_t broker_id, int64_t timestamp_ms);
int sf_znode_controller_decode(const char *json, size_t len, int32_t *broker_id);

/* /admin/preferred_replica_election: {"version":1,"partitions":[{"topic":..,"partition":..}]},
 * as Kafka's tools write it. @out: malloc'd (free with sf_znode_tps_free), NULL when empty. */
typedef struct sf_znode_tp {
    char *topic;
    int32_t partition;
    int32_t *replicas; /* /admin/reassign_partitions only */
    int nreplicas;
} sf_znode_tp_t;
int sf_znode_preferred_decode(const char *json, size_t len, sf_znode_tp_t **out, int *n);
void sf_znode_tps_free(sf_znode_tp_t *v, int n);

/* /admin/reassign_partitions: {"version":1,"partitions":[{"topic":..,"partition":..,
 * "replicas":[..]}]}, as Kafka's kafka-reassign-partitions.sh wrote it in ZooKeeper mode. */
int sf_znode_reassign_decode(const char *json, size_t len, sf_znode_tp_t **out, int *n);
char *sf_znode_reassign_encode(const sf_znode_tp_t *v, int n);

/* /coordinators/groups: {"version":1,"buckets":[{"broker":1,"epoch":0},..]}, bucket b at
 * index b (1 to SF_CLUSTER_MAX_BUCKETS of them; broker -1 for none). @out: malloc'd. */
char *sf_znode_buckets_encode(const sf_cluster_bucket_t *v, int n);
int sf_znode_buckets_decode(const char *json, size_t len, sf_cluster_bucket_t **out, int *n);

/* /controller_epoch: a decimal integer >= 0. */
int sf_znode_epoch_decode(const char *data, size_t len, int32_t *epoch);

/* /cluster/id */
char *sf_znode_cluster_id_encode(const char *id);
/* @id: malloc'd. */
int sf_znode_cluster_id_decode(const char *json, size_t len, char **id);

/* A partition key or broker id znode name: decimal in [0, INT32_MAX], no sign, no leading
 * zero. SF_OK or SF_ERR_MALFORMED. */
int sf_znode_parse_id(const char *name, int32_t *out);

#endif
