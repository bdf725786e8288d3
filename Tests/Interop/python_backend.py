#!/usr/bin/env python3
"""An independent backend for interop tests: confluent-kafka produces a Legacy Google Pay request
with a reply key made by jwcrypto, reads the result from provisioning.results, decrypts the JWE
payload with jwcrypto and prints one JSON line: {"status", "next_action", "payload"}.

usage: python_backend.py BOOTSTRAP PROGRAM CARD_ID REQUEST_ID
"""
import json
import sys
import time
import uuid
from datetime import datetime, timezone

from confluent_kafka import Consumer, Producer, TopicPartition
from jwcrypto import jwe, jwk

bootstrap, program, card_id, request_id = sys.argv[1:5]
key = jwk.JWK.generate(kty="EC", crv="P-256")
public = json.loads(key.export_public())
request = {
    "version": 1, "request_id": request_id, "program": program, "wallet": "google_pay",
    "card": {"id": card_id, "last4": "4242", "user_id": "u_python"},
    "google": {"wallet_id": uuid.uuid4().hex[:16], "device_id": uuid.uuid4().hex[:12]},
    "started_at": datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    "reply": {"jwk": {"kty": "EC", "crv": "P-256", "x": public["x"], "y": public["y"]}},
}

consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "python-" + request_id,
                     "enable.auto.commit": False, "fetch.wait.max.ms": 10})
metadata = consumer.list_topics("provisioning.results", timeout=10)
partitions = [TopicPartition("provisioning.results", p, -2) for p in metadata.topics["provisioning.results"].partitions]
consumer.assign(partitions)

producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
producer.produce("provisioning.requests", key=card_id.encode(), value=json.dumps(request).encode(),
                 headers=[("traceparent", b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")])
producer.flush(10)

deadline = time.time() + 60
while time.time() < deadline:
    message = consumer.poll(0.5)
    if message is None or message.error():
        continue
    result = json.loads(message.value())
    if result.get("request_id") != request_id or not result.get("final"):
        continue
    token = jwe.JWE()
    token.deserialize(result["payload"], key=key)
    headers = dict(message.headers() or [])
    print(json.dumps({"status": result["status"], "next_action": result["next_action"],
                      "protected": json.loads(token.objects["protected"]),
                      "payload": json.loads(token.payload),
                      "traceparent": headers.get("traceparent", b"").decode()}))
    sys.exit(0)
print(json.dumps({"error": "no final result within 60 s"}))
sys.exit(1)
