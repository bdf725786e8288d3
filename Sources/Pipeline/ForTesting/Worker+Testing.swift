import Kafka

/// Faults only tests inject (`@testable import Pipeline`); nothing in the worker calls them.
extension Worker {
    /// Raises a fabricated fatal error in the worker's producer.
    func raiseFatalProducerErrorForTesting() {
        _ = (producer as? KafkaProducer)?.raiseFatalErrorForTesting(reason: "injected by a test")
    }

    /// Pauses a requests partition in the consumer without the poll loop knowing, as a stuck
    /// fetcher looks to it (the fetch watchdog must notice and restart it).
    func stallFetchingForTesting(_ partition: TopicPartition) {
        requests.consumer.pause([partition])
    }
}
