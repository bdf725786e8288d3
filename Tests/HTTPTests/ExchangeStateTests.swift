@testable import HTTP
import Testing

extension HTTPTests {
    /// The suspend/resume race, one interleaving at a time.
    @Suite(.timeLimit(.minutes(5))) struct ExchangeStateMachine {
        private let first = HTTPServerResponse.text(200, "first")
        private let second = HTTPServerResponse.text(500, "second")

        @Test func answerInsideTheHandlerIsQueuedWithoutSuspending() {
            var state = ExchangeState()
            let firstAnswer = state.answer(first)
            let secondAnswer = state.answer(second)
            #expect(firstAnswer == .none)
            #expect(secondAnswer == .drop)
            guard case .queue(let response) = state.handlerReturned() else { Issue.record("expected queue"); return }
            #expect(response.body == first.body)
            #expect(state.phase == .answered)
            let lateAnswer = state.answer(second)
            #expect(lateAnswer == .drop)
        }

        @Test func answerWhileSuspendingIsResumedByThePollingThread() {
            var state = ExchangeState()
            guard case .suspend = state.handlerReturned() else { Issue.record("expected suspend"); return }
            let answer = state.answer(first)
            #expect(answer == .none)
            let resumeAtOnce = state.suspendCompleted()
            #expect(resumeAtOnce)
            #expect(state.phase == .resuming)
            let delivered = state.takeResumedResponse()
            #expect(delivered?.body == first.body)
            #expect(state.phase == .answered)
        }

        @Test func answerAfterSuspendResumesFromTheAnsweringThread() {
            var state = ExchangeState()
            guard case .suspend = state.handlerReturned() else { Issue.record("expected suspend"); return }
            let resumeAtOnce = state.suspendCompleted()
            #expect(!resumeAtOnce)
            #expect(state.phase == .suspended)
            let spurious = state.takeResumedResponse()
            #expect(spurious == nil)
            let answer = state.answer(first)
            let duplicate = state.answer(second)
            #expect(answer == .resume)
            #expect(duplicate == .drop)
            let delivered = state.takeResumedResponse()
            let again = state.takeResumedResponse()
            #expect(delivered?.body == first.body)
            #expect(again == nil)
        }

        @Test func answerAfterTheConnectionIsGoneIsDropped() {
            var state = ExchangeState()
            guard case .suspend = state.handlerReturned() else { Issue.record("expected suspend"); return }
            let resumeAtOnce = state.suspendCompleted()
            #expect(!resumeAtOnce)
            state.finish()
            let answer = state.answer(first)
            #expect(answer == .drop)
            #expect(state.phase == .finished)
        }
    }
}
