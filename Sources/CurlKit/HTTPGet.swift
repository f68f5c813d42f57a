internal import CCurl

/// A document fetched over HTTP(S): the final status code and the body.
public struct FetchedDocument: Sendable, Equatable {
    public let status: Int
    public let body: [UInt8]
}

/// Why a fetch gave no document: libcurl's own message (connection refused, certificate problem,
/// timeout, a body over the limit...). Never contains the body.
public struct FetchError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// One blocking HTTPS (or HTTP) GET through libcurl, Debian's TLS client: certificates are verified
/// against the system's CA store, redirects are followed (at most 3; from https only to https), and
/// the body is capped. For background work only: it blocks its thread for up to
/// `timeoutSeconds`. C pointers stay in this file.
public enum HTTPGet {
    /// libcurl's global set-up runs once, before the first handle (it is not safe to race on older releases).
    private static let globalInitialization: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    public static func fetch(
        _ url: String, timeoutSeconds: Int = 10, maximumBytes: Int = 1 << 20, accept: String = "application/json"
    ) throws(FetchError) -> FetchedDocument {
        guard globalInitialization else { throw FetchError("libcurl could not be initialised") }
        guard let handle = curl_easy_init() else { throw FetchError("libcurl could not create a handle") }
        defer { curl_easy_cleanup(handle) }
        let body = BodyBuffer(limit: maximumBytes)
        var errorText = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let headers = curl_slist_append(nil, "Accept: \(accept)")
        defer { curl_slist_free_all(headers) }
        let code: CURLcode = errorText.withUnsafeMutableBufferPointer { errorBuffer in
            let context = Unmanaged.passUnretained(body).toOpaque()
            let settings: [CURLcode] = [
                ccurl_setopt_string(handle, CURLOPT_URL, url),
                ccurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
                // An https URL never follows a redirect to plain http (a downgrade anyone on the path could answer).
                ccurl_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, url.lowercased().hasPrefix("https:") ? "https" : "http,https"),
                ccurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 1),
                ccurl_setopt_long(handle, CURLOPT_MAXREDIRS, 3),
                // No signals from libcurl in a threaded server (it would use SIGALRM for DNS timeouts).
                ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
                ccurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeoutSeconds * 1000),
                ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, min(timeoutSeconds, 5) * 1000),
                ccurl_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maximumBytes)),
                ccurl_setopt_string(handle, CURLOPT_USERAGENT, "sheetd"),
                ccurl_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headers)),
                ccurl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorBuffer.baseAddress)),
                ccurl_setopt_pointer(handle, CURLOPT_WRITEDATA, context),
                ccurl_setopt_write_function(handle) { bytes, size, count, context in
                    let buffer = Unmanaged<BodyBuffer>.fromOpaque(context!).takeUnretainedValue()
                    let total = size * count
                    guard buffer.bytes.count + total <= buffer.limit else { return 0 }  // makes libcurl stop: CURLE_WRITE_ERROR
                    if let bytes { buffer.bytes.append(contentsOf: UnsafeRawBufferPointer(start: bytes, count: total)) }
                    return total
                },
            ]
            if let failed = settings.first(where: { $0 != CURLE_OK }) { return failed }
            return curl_easy_perform(handle)
        }
        guard code == CURLE_OK else {
            if code == CURLE_WRITE_ERROR || code == CURLE_FILESIZE_EXCEEDED {
                throw FetchError("the document is larger than \(maximumBytes) bytes")
            }
            let detail = String(decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw FetchError(detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail)
        }
        var status = 0
        _ = ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return FetchedDocument(status: status, body: body.bytes)
    }
}

/// The body as libcurl delivers it, for its write callback (reached through `Unmanaged`).
private final class BodyBuffer {
    var bytes: [UInt8] = []
    let limit: Int
    init(limit: Int) { self.limit = limit }
}

@available(*, unavailable) extension BodyBuffer: Sendable {}
