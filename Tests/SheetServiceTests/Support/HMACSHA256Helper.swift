import Crypto

enum HMACSHA256Helper {
    static func mac(_ message: [UInt8], key: [UInt8]) -> [UInt8] { HMACSHA256.authenticationCode(for: message, key: key) }
}
