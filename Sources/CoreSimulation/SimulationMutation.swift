import Pipeline

/// A fix the simulation's self-test puts back (`CoreMutations`), to show the simulation finds
/// the defect it closed.
public enum SimulationMutation: String, Sendable, CaseIterable {
    /// The catch-up gate removed: records reach intake while their assignment still catches up.
    case gate
    /// Zombie-owner fencing removed: a call follows its `started` marker whatever fences precede it.
    case fencing
    /// F1 reverted: finals are not decided once; a hand-over reconciles without looking for the
    /// previous owner's answer.
    case f1

    /// What the defect is, in words.
    public var summary: String {
        switch self {
        case .gate: "the catch-up gate removed"
        case .fencing: "zombie-owner fencing removed"
        case .f1: "F1 reverted: finals not decided once (no look for the previous owner's answer)"
        }
    }

    var coreMutations: CoreMutations {
        var mutations = CoreMutations()
        switch self {
        case .gate: mutations.admitBeforeCatchUp = true
        case .fencing: mutations.callWithoutFencing = true
        case .f1: mutations.finalsUndecided = true
        }
        return mutations
    }
}
