@testable import Pipeline
import Testing

/// How an answer was reached decides everything its exit depends on: a table of every route.
@Suite("Answer routes: claim, started marker, issuer reach and exit from the route alone")
struct AnswerRouteTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let route: Answer.Route
        let claimed: Bool
        let afterStartedMarker: Bool
        let issuerMayHaveBeenCalled: Bool
        let undecidedExit: RecordExit
        let decidedExit: RecordExit
        var testDescription: String { "\(route)" }
    }

    static let rows: [Row] = [
        Row(route: .early, claimed: false, afterStartedMarker: false, issuerMayHaveBeenCalled: false,
            undecidedExit: .answered(recovered: false, afterCall: false), decidedExit: .decided(afterCall: false)),
        Row(route: .withoutCall, claimed: true, afterStartedMarker: false, issuerMayHaveBeenCalled: false,
            undecidedExit: .answered(recovered: false, afterCall: false), decidedExit: .decided(afterCall: false)),
        Row(route: .afterCall(mayHaveReachedIssuer: true), claimed: true, afterStartedMarker: true, issuerMayHaveBeenCalled: true,
            undecidedExit: .answered(recovered: false, afterCall: true), decidedExit: .decided(afterCall: true)),
        Row(route: .afterCall(mayHaveReachedIssuer: false), claimed: true, afterStartedMarker: true, issuerMayHaveBeenCalled: false,
            undecidedExit: .answered(recovered: false, afterCall: true), decidedExit: .decided(afterCall: true)),
        Row(route: .recovered, claimed: true, afterStartedMarker: true, issuerMayHaveBeenCalled: true,
            undecidedExit: .answered(recovered: true, afterCall: true), decidedExit: .decided(afterCall: true)),
        Row(route: .republished, claimed: true, afterStartedMarker: true, issuerMayHaveBeenCalled: false,
            undecidedExit: .answered(recovered: false, afterCall: true), decidedExit: .decided(afterCall: true)),
    ]

    @Test("each route's claim, marker, issuer reach and exits", arguments: rows)
    func route(_ row: Row) {
        #expect(row.route.claimed == row.claimed)
        #expect(row.route.afterStartedMarker == row.afterStartedMarker)
        #expect(row.route.issuerMayHaveBeenCalled == row.issuerMayHaveBeenCalled)
        #expect(row.route.exit(decided: false) == row.undecidedExit)
        #expect(row.route.exit(decided: true) == row.decidedExit)
    }

    @Test("an answer after a call that was never sent completes like any call's, and its dead letter is replayable")
    func budgetRanOutBeforeSending() {
        let route = Answer.Route.afterCall(mayHaveReachedIssuer: false)
        #expect(Settlement(route.exit(decided: false), claimed: route.claimed) == Settlement(Answer.Route.afterCall(mayHaveReachedIssuer: true).exit(decided: false), claimed: true))
        #expect(!route.issuerMayHaveBeenCalled)
    }
}
