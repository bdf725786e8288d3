/// The embedded defaults `provisioner demo` runs on: the same document as `Config/demo.json`
/// (a test holds them equal). Base URLs and bootstrap servers are replaced at run time by the
/// embedded simulator's and broker's addresses, through the ordinary environment overrides.
public enum DemoConfiguration {
    /// The JSON text.
    public static let json = #"""
{
  "kafka": { "bootstrap.servers": "127.0.0.1:9092" },
  "kafka_consumer": { "fetch.wait.max.ms": "10", "session.timeout.ms": "4500", "heartbeat.interval.ms": "1000" },
  "kafka_producer": { "linger.ms": "1" },
  "group_id": "provisioner-demo",
  "topics": {
    "requests": "provisioning.requests",
    "results": "provisioning.results",
    "audit": "provisioning.audit",
    "reconcile": "provisioning.reconcile",
    "dlq": "provisioning.dlq",
    "dlq_parked": "provisioning.dlq.parked",
    "markers": "provisioning.markers"
  },
  "programs": {
    "demo-imprint": {
      "issuer": "imprint",
      "base_url": "http://127.0.0.1:8081/imprint",
      "api_key_env": "DEMO_IMPRINT_API_KEY"
    },
    "demo-dcs": {
      "issuer": "dcs",
      "base_url": "http://127.0.0.1:8081/dcs",
      "api_key_env": "DEMO_DCS_API_KEY",
      "api_secret_env": "DEMO_DCS_API_SECRET"
    },
    "demo-gnosis": {
      "issuer": "gnosis",
      "base_url": "http://127.0.0.1:8081/gnosis",
      "api_key_env": "DEMO_GNOSIS_TOKEN"
    },
    "demo-worldpay": {
      "issuer": "worldpay",
      "base_url": "http://127.0.0.1:8081/worldpay",
      "api_key_env": "DEMO_WORLDPAY_API_KEY"
    }
  },
  "results": { "require_encryption": true },
  "audit": { "pseudonym_key_env": "PROVISIONER_AUDIT_KEY" },
  "http": { "listen": "127.0.0.1:9464" },
  "reconcile": { "tiers_ms": [500, 1000, 2000, 5000], "apply_horizon_ms": 0 },
  "log": { "level": "notice" }
}
"""#

    /// The simulator's demo credentials (CONTRACT section 10), by the variable names the config uses.
    public static let secrets: [String: String] = [
        "DEMO_IMPRINT_API_KEY": "sim-imprint-key",
        "DEMO_DCS_API_KEY": "sim-dcs-key",
        "DEMO_DCS_API_SECRET": "sim-dcs-secret",
        "DEMO_GNOSIS_TOKEN": "sim-gnosis-token",
        "DEMO_WORLDPAY_API_KEY": "sim-worldpay-key",
    ]

    /// The program names the demo configuration defines.
    public static let programs = ["demo-imprint", "demo-dcs", "demo-gnosis", "demo-worldpay"]
}
