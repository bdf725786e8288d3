import CRdKafka
let probeKafka = rd_kafka_version()
