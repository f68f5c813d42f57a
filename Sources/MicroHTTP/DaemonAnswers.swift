internal import CMHDErrorAnswers
internal import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The answers libmicrohttpd builds itself for requests it refuses before (or beside) the access
/// handler, as problem+json like every other answer: 505 for an HTTP version other than 1.x, 400 for
/// a malformed request line, header, chunked encoding or Content-Length, 413 for a chunk size or
/// Content-Length beyond 64 bits, 431 or 414 for a head beyond the connection's memory, 500 when it
/// has no memory left to read a body. MHD builds them with a fixed HTML body; `CMHDErrorAnswers`
/// swaps each for the one `problem(status:mhdText:)` makes, keeping MHD's status and its
/// `Connection: close`. What stays MHD's own is listed in SECURITY.md ("Answers libmicrohttpd writes").
///
/// MHD 0.9.75 sends the header section of the answers it decides while parsing the header section
/// (a malformed or oversized Content-Length, a missing Host) twice: `transmit_error_response` builds it,
/// then the HEADERS_RECEIVED step overwrites the state it set and the header section is built again
/// before anything is sent, so the body a client reads starts with the second copy. Those answers are
/// written to the socket here instead, complete and once, and the socket is shut down for writing:
/// what MHD tries to send after them fails, and it closes the connection.
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

    /// Whether MHD decided this answer while parsing the header section (see above).
    static func decidedInHeaderSection(_ said: String) -> Bool {
        said.contains("Content-Length") || said.contains("\"Host:\"")
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
private let daemonAnswerBuilder: cmhd_error_answer_builder = { status, detail, length, socket in
    let text = detail.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""
    let problem = DaemonAnswers.problem(status: Int(status), mhdText: text)
    let requestId = RequestID.next()
    if socket >= 0 && DaemonAnswers.decidedInHeaderSection(DaemonAnswers.plainText(text)) {
        writeProblem(problem, requestId: requestId, to: socket)
        _ = shutdown(socket, Int32(SHUT_WR))
    }
    let body = problem.body
    guard let response = body.withUnsafeBytes({ cmhd_response_copying($0.baseAddress, $0.count) }) else { return nil }
    for (name, value) in [("Content-Type", "application/problem+json"), ("X-Request-Id", requestId)] {
        _ = name.withCString { n in value.withCString { v in MHD_add_response_header(response, n, v) } }
    }
    return response
}

/// Writes `problem` as a complete answer that closes the connection straight to `fd` (past MHD, which
/// has sent nothing of another answer); whether all of it was sent.
@discardableResult
func writeProblem(_ problem: Problem, requestId: String, to fd: Int32) -> Bool {
    let body = problem.body
    var bytes = Array(
        ("HTTP/1.1 \(problem.status) \(problem.title)\r\nContent-Type: application/problem+json\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\nX-Request-Id: \(requestId)\r\n\r\n").utf8)
    bytes += body
    return bytes.withUnsafeBytes { cmhd_send_raw(fd, $0.baseAddress, $0.count) } == bytes.count
}
