/// Which DCS Google wallet binding API a program uses.
public enum DCSGoogleAPI: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `POST /card/v2/google-bind-wallet`, card identified by `cardId` (the guide's recommendation).
    case v2
    /// `POST /card/v1/google-bind-wallet`, card identified by `cardMantissa` (last four digits).
    case v1

    /// The configuration name (`v2` or `v1`).
    public var description: String { rawValue }
}
