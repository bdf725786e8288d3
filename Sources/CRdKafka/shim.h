#ifndef PROVISIONER_CRDKAFKA_SHIM_H
#define PROVISIONER_CRDKAFKA_SHIM_H
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <pthread.h>

/* rd_kafka_mock_broker_push_request_error_rtts is variadic, which Swift cannot call: push one
   error (answered without extra delay) onto one broker's stack for ApiKey. */
static inline rd_kafka_resp_err_t provisioner_mock_broker_push_request_error(rd_kafka_mock_cluster_t *mcluster,
                                                                             int32_t broker_id, int16_t api_key,
                                                                             rd_kafka_resp_err_t err) {
    return rd_kafka_mock_broker_push_request_error_rtts(mcluster, broker_id, api_key, 1, err, 0);
}
#endif
