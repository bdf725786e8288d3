#!/usr/bin/env python3
"""A Spring-style requester for interop tests (what Spring Kafka's ReplyingKafkaTemplate does, with
independent libraries: confluent-kafka and jwcrypto). It owns one partition of a reply topic:
assigns it by hand (no consumer group), positioned at its high watermark before the first send;
sends COUNT Legacy Google Pay requests, each with kafka_replyTopic, kafka_replyPartition (4 bytes,
big-endian) and a random 16-byte kafka_correlationId; reads its partition until every request has
a final answer, decrypts each payload with its own reply key, and prints one JSON line:
{"answered", "finals", "foreign", "wrong_partition", "decrypted", "statuses", "duplicates"}.

usage: spring_requester.py BOOTSTRAP PROGRAM REPLY_TOPIC PARTITION COUNT PREFIX
"""
import json
import os
import struct
import sys
import time
import uuid
from datetime import datetime, timezone

from confluent_kafka import Consumer, Producer, TopicPartition
from jwcrypto import jwe, jwk

bootstrap, program, reply_topic, partition, count, prefix = sys.argv[1:7]
partition, count = int(partition), int(count)

consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused-" + prefix, "enable.auto.commit": False,
                     "fetch.wait.max.ms": 10})
low, high = consumer.get_watermark_offsets(TopicPartition(reply_topic, partition), timeout=10)
consumer.assign([TopicPartition(reply_topic, partition, high)])
producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})

pending = {}  # correlation id -> (request id, key)
for index in range(count):
    request_id = f"{prefix}-{index}"
    key = jwk.JWK.generate(kty="EC", crv="P-256")
    public = json.loads(key.export_public())
    card_id = f"pm_{prefix}_{index}"
    request = {
        "version": 1, "request_id": request_id, "program": program, "wallet": "google_pay",
        "card": {"id": card_id, "last4": "4242", "user_id": "u_spring"},
        "google": {"wallet_id": uuid.uuid4().hex[:16], "device_id": uuid.uuid4().hex[:12]},
        "started_at": datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "reply": {"jwk": {"kty": "EC", "crv": "P-256", "x": public["x"], "y": public["y"]}},
    }
    correlation = os.urandom(16)
    pending[correlation] = (request_id, key)
    producer.produce("provisioning.requests", key=card_id.encode(), value=json.dumps(request).encode(),
                     headers=[("kafka_replyTopic", reply_topic.encode()),
                              ("kafka_replyPartition", struct.pack(">i", partition)),
                              ("kafka_correlationId", correlation)])
producer.flush(10)

summary = {"answered": 0, "finals": 0, "foreign": 0, "wrong_partition": 0, "decrypted": 0, "statuses": {}, "duplicates": 0}
done = set()
deadline = time.time() + 90
while len(done) < count and time.time() < deadline:
    message = consumer.poll(0.5)
    if message is None or message.error():
        continue
    if message.partition() != partition:
        summary["wrong_partition"] += 1
    correlation = dict(message.headers() or []).get("kafka_correlationId")
    entry = pending.get(correlation)
    result = json.loads(message.value())
    if entry is None or result.get("request_id") != entry[0]:
        summary["foreign"] += 1
        continue
    summary["answered"] += 1
    if not result.get("final"):
        continue
    if correlation in done:
        summary["duplicates"] += 1
        continue
    done.add(correlation)
    summary["finals"] += 1
    summary["statuses"][result["status"]] = summary["statuses"].get(result["status"], 0) + 1
    if result.get("payload"):
        token = jwe.JWE()
        token.deserialize(result["payload"], key=entry[1])
        if json.loads(token.payload).get("opaque_payment_card"):
            summary["decrypted"] += 1
consumer.close()
print(json.dumps(summary))
sys.exit(0 if len(done) == count else 1)
