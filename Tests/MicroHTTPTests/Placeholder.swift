import Testing
@testable import MicroHTTP
