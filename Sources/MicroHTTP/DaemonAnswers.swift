internal import CMHDErrorAnswers
internal import CMicroHTTPD
import Synchronization

/// The answers libmicrohttpd builds itself for requests it refuses before (or beside) the access
/// handler, as problem+json like every other answer: 505 for an HTTP version other than 1.x, 400 for
/// a malformed request line, header, chunked encoding or Content-Length, 413 for a chunk size or
/// Content-Length beyond 64 bits, 431 or 414 for a head beyond the connection's memory, 500 when it
/// has no memory left to read a body. MHD builds them with a fixed HTML body; `CMHDErrorAnswers`
/// swaps each for the one `problem(status:mhdText:)` makes, keeping MHD's status and its
/// `Connection: close`. What stays MHD's own is listed in SECURITY.md ("Answers libmicrohttpd writes").
enum DaemonAnswers {
    private static let installed = Atomic<Bool>(false)

    /// Installs the builder for the process (idempotent; `HTTPServer.start` calls it).
    static func install() {
        guard !installed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        cmhd_set_error_answer_builder(daemonAnswerBuilder)
    }

    /// MHD's answers replaced so far in this process.
    static var replaced: Int { Int(cmhd_error_answers_replaced()) }

    /// The problem for MHD's answer with `status`; `mhdText` is the text of MHD's HTML body.
    static func problem(status: Int, mhdText: String) -> Problem {
        let said = plainText(mhdText)
        switch status {
        case 505:
            return ProblemType.httpVersionNotSupported.problem("Only HTTP/1.0 and HTTP/1.1 are served. " + said)
        case 400:
            return ProblemType.badRequest.problem(said)
        case 413:
            return ProblemType.payloadTooLarge.problem(said)
        case 414:
            return ProblemType.uriTooLong.problem("The request line does not fit in the connection's memory.")
        case 431:
            return ProblemType.headerTooLarge.problem("The request line and header fields do not fit in the connection's memory.")
        case 500:
            return ProblemType.internalError.problem("The connection has no memory left to read the request body.")
        default:
            return Problem(status: status, slug: "http-\(status)", title: "HTTP \(status)", detail: said)
        }
    }

    /// MHD's HTML fragment as plain text: tags dropped, its entities decoded.
    static func plainText(_ html: String) -> String {
        var out = ""
        var inTag = false
        for character in html {
            if character == "<" {
                inTag = true
            } else if character == ">" {
                inTag = false
            } else if !inTag {
                out.append(character)
            }
        }
        return out.replacing("&quot;", with: "\"").replacing("&lt;", with: "<").replacing("&gt;", with: ">").replacing("&amp;", with: "&")
    }
}

/// Called by `CMHDErrorAnswers` on the connection's loop thread, as MHD queues its own answer.
private let daemonAnswerBuilder: cmhd_error_answer_builder = { status, detail, length in
    let text = detail.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""
    let problem = DaemonAnswers.problem(status: Int(status), mhdText: text)
    let body = problem.body
    guard let response = body.withUnsafeBytes({ cmhd_response_copying($0.baseAddress, $0.count) }) else { return nil }
    for (name, value) in [("Content-Type", "application/problem+json"), ("X-Request-Id", RequestID.next())] {
        _ = name.withCString { n in value.withCString { v in MHD_add_response_header(response, n, v) } }
    }
    return response
}
