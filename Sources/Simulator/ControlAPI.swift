import Contract
import HTTP

/// The test control plane (`/_sim`): the call log, the trace headers received, the wallet state, reset, and the load profile. No credentials:
/// serve the simulator on loopback only.
struct ControlAPI {
    let engine: SimulatorEngine

    func route(_ request: HTTPServerRequest, _ path: [String], _ responder: HTTPResponder) {
        guard path.count == 1 else { return SimulatorEngine.notFound(responder) }
        switch (path[0], request.method) {
        case ("calls", "GET"):
            let calls = engine.state.withLock { $0.calls }
            responder.respond(SimulatorEngine.json(200, .object(["calls": .array(calls.map(\.jsonValue))])))
        case ("traces", "GET"):
            let traces = engine.state.withLock { $0.traces.all }
            responder.respond(SimulatorEngine.json(200, .object(["traces": .array(traces.map(\.jsonValue))])))
        case ("wallet", "GET"):
            let tokens = engine.state.withLock { $0.allWalletTokens }
            responder.respond(SimulatorEngine.json(200, .object(["tokens": .array(tokens.map { token in
                .object(["issuer": .string(token.issuer), "card_id": .string(token.cardID), "wallet": .string(token.wallet),
                         "device_ref": .string(token.deviceRef), "handshake": .string(token.handshake),
                         "created_at_ms": .integer(token.createdAtMs)])
            })])))
        case ("reset", "POST"):
            engine.state.withLock { $0.reset() }
            responder.respond(HTTPServerResponse(status: 204))
        case ("profile", "GET"):
            let profile = engine.state.withLock { $0.profile }
            responder.respond(SimulatorEngine.json(200, profile.jsonValue()))
        case ("profile", "POST"):
            do {
                let profile = try SimulatorProfile(json: request.body)
                engine.state.withLock { $0.replaceProfile(profile) }
                responder.respond(SimulatorEngine.json(200, profile.jsonValue()))
            } catch {
                responder.respond(SimulatorEngine.json(400, .object(["error": .object([
                    "code": .string(error.code.rawValue), "message": .string(error.message),
                ])])))
            }
        case ("calls", _), ("traces", _), ("wallet", _), ("profile", _):
            SimulatorEngine.methodNotAllowed(path[0] == "profile" ? "GET, POST" : "GET", responder)
        case ("reset", _):
            SimulatorEngine.methodNotAllowed("POST", responder)
        default:
            SimulatorEngine.notFound(responder)
        }
    }
}
