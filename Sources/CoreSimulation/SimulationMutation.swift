import Pipeline

/// A fix the simulation's self-test puts back (`CoreMutations`), to show the simulation finds
/// the defect it closed.
public enum SimulationMutation: String, Sendable, CaseIterable {
    /// The catch-up gate removed: records reach intake while their assignment still catches up.
    case gate
    /// Zombie-owner fencing removed: a call follows its `started` marker whatever fences precede it.
    case fencing
    /// "A final is decided once" removed (named `f1` on the command line): finals are not decided once; a hand-over reconciles without looking for the
    /// previous owner's answer.
    case f1
    /// The issuer's state read by time alone: an earlier call's token is not `already_provisioned`.
    case reconcileByTime = "reconcile-by-time"
    /// "No trace of the call" trusted before the issuer's apply horizon.
    case notAppliedAtOnce = "not-applied-at-once"
    /// A zombie's decision without a call judged by the fences after the look-up's start only.
    case fencesFromPosition = "fences-from-position"
    /// A zombie's expiry for want of a fencing read decided as if it had called.
    case unconfirmedAsCall = "unconfirmed-as-call"
    /// A rewind trusted once asked for: records past the offset rewound to are taken when the seek failed.
    case rewindUnchecked = "rewind-unchecked"
    /// Fences compared by generation whatever their group: after a rename, assignments go stale.
    case fencesAcrossGroups = "fences-across-groups"
    /// Another group's fence fences an owner out by generation: a late one stops a renamed group's calls.
    case lateFenceAcrossGroups = "late-fence-across-groups"
    /// A Legacy Google Pay token of the request's recurring reference read as this call's.
    case recurringHandshakeAsOurs = "recurring-handshake-as-ours"
    /// A dead letter carries the route as intake checked it, not the message's reply headers.
    case deadLetterCheckedRoute = "dead-letter-checked-route"
    /// An exhausted reconciliation's dead letter sent with its final, not once the final is acknowledged.
    case exhaustedLetterWithFinal = "exhausted-letter-with-final"
    /// A payment action's reconciliation reads an `authorized` payment as "not done" before the apply horizon.
    case actionReadAtOnce = "action-read-at-once"
    /// An answer without a call published undecided after its partition was given up.
    case answerAfterGiveUp = "answer-after-give-up"
    /// Answers without a call kept out of the duplicate horizon.
    case withoutCallOutOfHorizon = "without-call-out-of-horizon"
    /// Fences judged by their offsets alone (no generations): an older owner's late fence fences a newer one out.
    case fencesByOffset = "fences-by-offset"
    /// No stale check at catch-up: an owner whose fence landed after a newer owner's runs beside it.
    case staleUnchecked = "stale-unchecked"

    /// How many schedules the self-test may run before this mutation must have been caught: the
    /// zombie's withdrawn expiry needs a zombie, a hand-over and a late decision in one schedule
    /// (about 1 in 2,000 schedules); an unconfirmed zombie's expiry needs besides a zombie cut off
    /// from the markers past its call's last start while the new owner's call stays undecided
    /// (about 1 in 3,000); a rewind trusted once asked for needs a record refused before catch-up
    /// whose seek fails and no fetch watchdog restart before the run ends (about 1 in 450); a dead
    /// letter's lost route needs an early rejection whose answer could not be published and a
    /// replay of its letter (about 1 in 3,000); a replay's final before the exhausted one needs an
    /// exhausted reconciliation whose final is held up by produce faults while an operator replays
    /// its letter promptly (about 1 in 2,000); another group's late fence needs a rename through a
    /// slow broker whose old fence lands after the new group's (about 1 in 600); an owner running
    /// beside a newer one needs its fence to land after that owner's and a call of both on one
    /// request (about 1 in 5,000); the others are
    /// caught within the first few hundred. Nil: too rare for random schedules (an answer given up
    /// between a failed marker write and its decision, about 1 in 40,000); its pinned scenario
    /// (`SimulationScenario`) guards it instead.
    public var seedBudget: Int? {
        switch self {
        case .answerAfterGiveUp: nil
        case .fencesFromPosition, .deadLetterCheckedRoute, .exhaustedLetterWithFinal: 10_000
        case .unconfirmedAsCall, .staleUnchecked: 6_000
        case .rewindUnchecked, .lateFenceAcrossGroups: 3_000
        default: 2_000
        }
    }

    /// What the defect is, in words.
    public var summary: String {
        switch self {
        case .gate: "the catch-up gate removed"
        case .fencing: "zombie-owner fencing removed"
        case .f1: "finals not decided once (no look for the previous owner's answer)"
        case .reconcileByTime: "reconciliation reads wallet tokens by time alone (an earlier call's token is not already_provisioned)"
        case .notAppliedAtOnce: "reconciliation answers not_provisioned before the issuer's apply horizon"
        case .fencesFromPosition: "a decision's look-up misses the fences before its start (a zombie's expiry counts)"
        case .unconfirmedAsCall: "an expiry for want of a fencing read decided as a caller's (a zombie's expiry beats the new owner's call)"
        case .rewindUnchecked: "a rewind trusted once asked for (a failed seek skips the records refused before it)"
        case .fencesAcrossGroups: "another group's fences of higher generations make a renamed group's assignments stale"
        case .lateFenceAcrossGroups: "another group's fence of a higher generation that lands late fences a renamed group's owner out (its requests never answered)"
        case .recurringHandshakeAsOurs: "a Legacy Google Pay token of the request's recurring handshake read as this call's (another attempt's token answered provisioned)"
        case .deadLetterCheckedRoute: "a dead letter keeps the route as intake checked it, not the message's reply headers (an early rejection's replay answered instead of refused)"
        case .exhaustedLetterWithFinal: "an exhausted reconciliation's dead letter sent with its final (its replay's final may land first)"
        case .actionReadAtOnce: "a payment action reconciled from an authorized payment before the apply horizon (a late settle answered as not done)"
        case .answerAfterGiveUp: "an answer without a call published undecided after its partition was given up (the next owner reconciles the request to another final)"
        case .withoutCallOutOfHorizon: "answers without a call kept out of the duplicate horizon (a copy produced again past the commit is answered afresh)"
        case .fencesByOffset: "fences judged by offsets alone (an older generation's late fence fences the new owner out of every call)"
        case .staleUnchecked: "no stale check at catch-up (an owner whose fence landed after a newer owner's runs the partition beside it)"
        }
    }

    var coreMutations: CoreMutations {
        var mutations = CoreMutations()
        switch self {
        case .gate: mutations.admitBeforeCatchUp = true
        case .fencing: mutations.callWithoutFencing = true
        case .f1: mutations.finalsUndecided = true
        case .reconcileByTime: mutations.reconcileByTimeOnly = true
        case .notAppliedAtOnce: mutations.notAppliedAtOnce = true
        case .fencesFromPosition: mutations.fencesFromPositionOnly = true
        case .unconfirmedAsCall: mutations.unconfirmedDecidedAsCall = true
        case .rewindUnchecked: mutations.rewindUnchecked = true
        case .fencesAcrossGroups: mutations.fencesAcrossGroups = true
        case .lateFenceAcrossGroups: mutations.lateFenceAcrossGroups = true
        case .recurringHandshakeAsOurs: mutations.recurringHandshakeAsOurs = true
        case .deadLetterCheckedRoute: mutations.deadLetterCheckedRoute = true
        case .exhaustedLetterWithFinal: mutations.exhaustedLetterWithFinal = true
        case .actionReadAtOnce: mutations.actionReadAtOnce = true
        case .answerAfterGiveUp: mutations.answerAfterGiveUp = true
        case .withoutCallOutOfHorizon: mutations.answersWithoutCallOutOfHorizon = true
        case .fencesByOffset: mutations.fencesByOffset = true
        case .staleUnchecked: mutations.staleUnchecked = true
        }
        return mutations
    }
}
