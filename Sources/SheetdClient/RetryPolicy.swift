public import Foundation

/// When and how long the client waits before retrying a request.
///
/// Retried, as Alamofire's `RetryPolicy` retries: the statuses in ``retryableStatuses`` (408, 429,
/// 500, 502, 503, 504) and the transport failures in ``retryableURLErrorCodes`` (the connection lost,
/// refused or timed out, DNS, offline; not a cancellation, a bad URL or an untrusted certificate).
/// Never another 4xx. A 401 is not retried by the policy: the client asks its token provider for a
/// fresh token once (``SheetdTokenProvider/refreshToken(rejecting:)``) and retries with it.
///
/// The delay before retry `n` (1-based) is `baseDelay * 2^(n-1)`, capped at `maxDelay`, with "equal
/// jitter" (a random point in its upper half), so many clients that failed together do not retry
/// together. A `Retry-After` from the server (seconds or an HTTP-date) is the lower bound, itself
/// capped at ``maxRetryAfter`` so a server (or a proxy) cannot park the app for an hour.
/// Event bodies keep their `eventId` across retries, so a retry of an event the server already applied
/// is answered with the first outcome and applied once.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included (1: never retry).
    public var maxAttempts: Int
    /// Seconds before the first retry.
    public var baseDelay: Double
    /// Seconds the growing delay is capped at.
    public var maxDelay: Double
    /// The longest `Retry-After` honoured, in seconds: a longer one waits this long.
    public var maxRetryAfter: Double
    /// The HTTP statuses retried.
    public var retryableStatuses: Set<Int>
    /// The `URLError` codes retried.
    public var retryableURLErrorCodes: Set<URLError.Code>

    /// Alamofire's `RetryPolicy.defaultRetryableHTTPStatusCodes`.
    public static let defaultRetryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// Alamofire's `RetryPolicy.defaultRetryableURLErrorCodes` (those Foundation has on every platform):
    /// failures a later attempt may not meet. Not `cancelled`, `badURL`, `unsupportedURL`,
    /// `userAuthenticationRequired`, `serverCertificateUntrusted` and the like.
    public static let defaultRetryableURLErrorCodes: Set<URLError.Code> = [
        .backgroundSessionInUseByAnotherProcess, .backgroundSessionWasDisconnected, .badServerResponse, .callIsActive,
        .cannotConnectToHost, .cannotFindHost, .cannotLoadFromNetwork, .dataNotAllowed, .dnsLookupFailed,
        .downloadDecodingFailedMidStream, .downloadDecodingFailedToComplete, .internationalRoamingOff, .networkConnectionLost,
        .notConnectedToInternet, .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateNotYetValid, .timedOut,
    ]

    /// A policy; the default tries 4 times, waiting about 0.2, 0.4 and 0.8 s, and honours a
    /// `Retry-After` of up to 10 s.
    public init(
        maxAttempts: Int = 4, baseDelay: Double = 0.2, maxDelay: Double = 5, maxRetryAfter: Double = 10,
        retryableStatuses: Set<Int> = RetryPolicy.defaultRetryableStatuses,
        retryableURLErrorCodes: Set<URLError.Code> = RetryPolicy.defaultRetryableURLErrorCodes
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = max(0, baseDelay)
        self.maxDelay = max(0, maxDelay)
        self.maxRetryAfter = max(0, maxRetryAfter)
        self.retryableStatuses = retryableStatuses
        self.retryableURLErrorCodes = retryableURLErrorCodes
    }

    /// Never retries.
    public static let none = RetryPolicy(maxAttempts: 1)

    /// The default policy (what ``SheetdError/isRetryable`` asks).
    static let standard = RetryPolicy()

    /// Whether this policy retries `error` (attempts aside): a status in ``retryableStatuses``, or a
    /// transport failure whose `URLError` code is in ``retryableURLErrorCodes`` (one without a
    /// `URLError`, e.g. a stream cut mid-way, is retried).
    public func retries(_ error: SheetdError) -> Bool {
        switch error.kind {
        case .transport: error.urlError.map { retryableURLErrorCodes.contains($0.code) } ?? true
        case .server: error.status.map(retryableStatuses.contains) ?? false
        default: false
        }
    }

    /// Seconds to wait before retry `retry` (1-based). `unit` is a random number in 0..<1 (injected, so
    /// the function is pure); `retryAfter` is the server's `Retry-After` in seconds, honoured up to
    /// ``maxRetryAfter``.
    public func delay(beforeRetry retry: Int, retryAfter: Double? = nil, unit: Double) -> Double {
        let exponent = min(max(retry - 1, 0), 30)
        let capped = min(maxDelay, baseDelay * Double(1 << exponent))
        let jittered = capped / 2 + capped / 2 * min(max(unit, 0), 1)
        return max(jittered, min(retryAfter ?? 0, maxRetryAfter))
    }
}

/// `Retry-After` (RFC 9110, section 10.2.3): delay-seconds or an HTTP-date.
public enum RetryAfter {
    /// The seconds to wait from `now`: a non-negative integer as is, an HTTP-date (IMF-fixdate, or
    /// the obsolete RFC 850 and asctime forms recipients must accept) as its distance from `now`
    /// (0 when it is past); nil for anything else.
    public static func seconds(_ value: String, now: Date = Date()) -> Double? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return Double(text)
        }
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text.replacingOccurrences(of: "  ", with: " ")) {
                return max(0, date.timeIntervalSince(now))
            }
        }
        return nil
    }

    /// The IMF-fixdate of `date` (`Sun, 06 Nov 1994 08:49:37 GMT`), as servers send it.
    public static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
