// Tests reach the harness (embedded stack, request factory, result collector, child processes)
// through TestSupport.
@_exported import Harness
