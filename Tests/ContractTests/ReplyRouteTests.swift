import Contract
import Testing

/// `ReplyRoute`: Spring's request-reply headers read with their bounds, and their JSON form.
@Suite("Reply route (kafka_replyTopic, kafka_replyPartition, kafka_correlationId)", .timeLimit(.minutes(1)))
struct ReplyRouteTests {
    private func read(_ headers: [String: [UInt8]?]) -> Result<ReplyRoute?, ReplyRoute.Problem> {
        ReplyRoute.read { headers[$0] }
    }

    @Test func absentHeadersAreNoRoute() {
        #expect(read([:]) == .success(nil))
    }

    @Test func springHeadersRead() {
        let route = read([ReplyRoute.topicHeader: Array("backend.replies".utf8), ReplyRoute.partitionHeader: [0, 0, 1, 2],
                          ReplyRoute.correlationHeader: [0xDE, 0xAD, 0x00]])
        #expect(route == .success(ReplyRoute(topic: "backend.replies", partition: 258, correlationID: [0xDE, 0xAD, 0x00])))
        #expect(read([ReplyRoute.correlationHeader: []]) == .success(ReplyRoute(topic: nil, correlationID: [])), "a correlation id alone is echoed")
        #expect(ReplyRoute.partitionBytes(258) == [0, 0, 1, 2])
    }

    @Test(arguments: [
        ["kafka_replyTopic": [0x61, 0xFF]],
        ["kafka_replyTopic": Array("bad topic".utf8)],
        ["kafka_replyTopic": []],
        ["kafka_replyTopic": Array("t".utf8), "kafka_replyPartition": [0, 1]],
        ["kafka_replyTopic": Array("t".utf8), "kafka_replyPartition": [0, 0, 0, 0, 1]],
        ["kafka_replyTopic": Array("t".utf8), "kafka_replyPartition": [0x80, 0, 0, 0]],
        ["kafka_replyPartition": [0, 0, 0, 1]],
        ["kafka_replyTopic": Array("t".utf8), "kafka_correlationId": [UInt8](repeating: 1, count: 257)],
    ] as [[String: [UInt8]]])
    func malformedHeadersAreProblems(_ headers: [String: [UInt8]]) {
        guard case .failure = read(headers.mapValues { Optional($0) }) else {
            Issue.record("accepted \(headers.keys.sorted())")
            return
        }
    }

    @Test func nullHeadersAreProblems() {
        for name in ReplyRoute.headerNames {
            var headers: [String: [UInt8]?] = [ReplyRoute.topicHeader: Array("t".utf8)]
            headers[name] = .some(nil)
            guard case .failure = read(headers) else {
                Issue.record("a null \(name) was accepted")
                continue
            }
        }
    }

    @Test func jsonFormRoundTripsAndIsBounded() throws {
        let route = ReplyRoute(topic: "backend.replies", partition: 7, correlationID: Array(0..<255))
        var writer = JSONWriter()
        route.write(to: &writer)
        #expect(ReplyRoute.read(json: try JSONParser().parse(writer.bytes)) == .success(route))
        for bad in [#"{"topic": "a b"}"#, #"{"partition": 1}"#, #"{"topic": "t", "partition": -1}"#, #"{"correlation_id": "!!"}"#, "[]"] {
            guard case .failure = ReplyRoute.read(json: try JSONParser().parse(bad)) else {
                Issue.record("accepted \(bad)")
                continue
            }
        }
    }
}
