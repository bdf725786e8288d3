extension Dictionary {
    /// Runs `body` on the value stored for `key` in place, nil when there is none.
    ///
    /// `var entry = dictionary[key]; mutate(&entry); dictionary[key] = entry` copies every set,
    /// array or dictionary inside the value on its first mutation (the dictionary still holds a
    /// reference to the storage): an allocation and a copy as large as the collection, per call.
    /// Mutating through the values' `_modify` accessor keeps the storage unique.
    @inline(__always) @discardableResult
    mutating func mutate<Result>(_ key: Key, _ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard let index = index(forKey: key) else { return nil }
        return try body(&values[index])
    }
}
